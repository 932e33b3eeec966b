/* cw_cmd.h - entry point of `heapscope core` (src/cli/main.c's command table). */
#ifndef CW_CMD_H
#define CW_CMD_H
int cw_main(int argc, char **argv);
#endif
