/* cli.h - entry points of the `heapscope` subcommands.
 *
 * Each takes the arguments after the subcommand name (argv[0] is the
 * subcommand) and returns the process exit status. */
#ifndef CLI_H
#define CLI_H

int cli_run_main(int argc, char **argv);

#endif
