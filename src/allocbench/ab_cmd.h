/* ab_cmd.h - entry point of `heapscope bench` (called by src/cli/main.c). */
#ifndef AB_CMD_H
#define AB_CMD_H

/* `heapscope bench [OPTIONS] [WORKLOAD...] [-- COMMAND ARGS...]`; argv[0] is
 * "bench".  Returns the exit status: 0, 1 (a run failed or used another
 * allocator than it claims) or 2 (bad usage, unknown allocator). */
int ab_main(int argc, char **argv);

#endif
