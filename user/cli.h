/* The command line (docs/contract/cli.md): parsing and usage. */
#ifndef PT_CLI_H
#define PT_CLI_H
#include "options.h"

/* Parses argv. Returns 0 to run, 1 after printing help or the version (exit
 * 0), -1 after printing a one-line error (exit 1). */
int options_parse(int argc, char **argv, struct pt_options *o);

#endif
