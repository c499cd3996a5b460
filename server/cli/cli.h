/*
 * cli.h - the `tpuplan` command-line tool: one entry point per subcommand.
 *
 * Each subcommand gets argv after the subcommand name (argv[0] is the subcommand) and
 * returns the process exit status. Exit statuses: 0 success, 1 "the answer is no"
 * (does not fit, infeasible, out of time), 2 bad input or usage.
 */
#ifndef TPUPLAN_CLI_H
#define TPUPLAN_CLI_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

int cli_layout(int argc, char **argv); /* cli_layout.c */
int cli_chips(int argc, char **argv);  /* cli_chips.c */
int cli_plan(int argc, char **argv);   /* cli_plan.c */
int cli_pack(int argc, char **argv);   /* cli_pack.c */
int cli_diff(int argc, char **argv);   /* cli_diff.c */

/*
 * Reads the whole file at path ("-" = stdin) into a malloc'd, NUL-terminated buffer that
 * the caller frees. Fails (returns -1 after printing "tpuplan: PATH: reason" to stderr)
 * when the file cannot be read or is larger than max bytes; the size check happens before
 * reading the data, so a huge file is never loaded.
 */
int cli_read_file(const char *path, size_t max, char **buf, size_t *len);

/* The value s of option flag (of subcommand cmd) as a byte count above 0 into *out, in the
 * planner's one grammar (planner/bytes.h: "17179869184", "16G", "15.75GiB"). 0, or -1 after
 * printing "tpuplan CMD: FLAG: reason" to stderr. */
int cli_parse_bytes(const char *cmd, const char *flag, const char *s, uint64_t *out);

/* Reading a result document: o's member key (NULL when o is not an object or lacks it), and
 * its string ("-" when it is missing or not a string). Borrowed from o. */
json_object *cli_json_get(json_object *o, const char *key);
const char *cli_json_str(json_object *o, const char *key);

#endif
