/* an_diff.h - `heapscope diff A B`: what changed per allocation stack
 * between two profiles.  Stacks are matched by their symbolised frames
 * (function, file, line of every frame), because stack ids differ between
 * runs. */
#ifndef AN_DIFF_H
#define AN_DIFF_H

/* `heapscope diff [--sort allocations|bytes|leaked|peak] [--top N] [--json]
 * A B`; argv[0] is "diff".  Prints on stdout.  Returns the exit status: 0
 * success, 1 a profile cannot be read, 2 bad usage. */
int an_diff_main(int argc, char **argv);

#endif
