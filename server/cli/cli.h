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
#include <stdio.h>

#include "planner/plan.h"

int cli_layout(int argc, char **argv); /* cli_layout.c */
int cli_chips(int argc, char **argv);  /* cli_chips.c */
int cli_plan(int argc, char **argv);   /* cli_plan.c */
int cli_pack(int argc, char **argv);   /* cli_pack.c */
int cli_diff(int argc, char **argv);   /* cli_diff.c */
int cli_fit(int argc, char **argv);    /* cli_fit.c */

/*
 * Reads the whole file at path ("-" = stdin) into a malloc'd, NUL-terminated buffer that
 * the caller frees. Fails (returns -1 after printing "tpuplan: PATH: reason" to stderr)
 * when the file cannot be read or is larger than max bytes; the size check happens before
 * reading the data, so a huge file is never loaded.
 */
int cli_read_file(const char *path, size_t max, char **buf, size_t *len);

/* Flag `flag` with value val, when it is an option of the plan options' table on surface
 * (planner/plan_options.h: PLAN_OPT_PLAN, _DIFF, _PACK), into *o; val is borrowed. 0 set, 1
 * not such an option (the caller's own, or unknown), -1 after printing "tpuplan CMD: why". */
int cli_plan_opt(const char *cmd, unsigned surface, const char *flag, const char *val,
                 struct plan_opts *o);

/* The table's options on surface, for a usage text: each flag and value, then what it does,
 * its range and its default, wrapped. */
void cli_print_opts(FILE *f, unsigned surface);

/* The text report's "peak" section (cli_peak.c), from result document r; nothing when r has
 * no peak. */
void cli_print_peak(json_object *r);

/* The text report's "advice" section (cli_advice.c), from result document r; nothing when
 * r has no advice. */
void cli_print_advice(json_object *r);

/* The widest of the strings member key of each element of arr, and at least min: a name
 * column wide enough that no name is cut. */
int cli_name_width(json_object *arr, const char *key, int min);

/* Reading a result document: o's member key (NULL when o is not an object or lacks it), and
 * its string ("-" when it is missing or not a string). Borrowed from o. */
json_object *cli_json_get(json_object *o, const char *key);
const char *cli_json_str(json_object *o, const char *key);

/* The text report's "XLA's report" section (cli_report.c), from the result's packing
 * object pk; nothing without packing.xla_report. */
void cli_print_xla_report(json_object *pk);

#endif
