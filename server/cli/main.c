/*
 * main.c - `tpuplan` command dispatcher. The subcommands live in cli_*.c and call the
 * planner library (server/planner) exactly as the service does.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "planner/plan.h"

static const char usage[] =
    "usage: tpuplan COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  layout SHAPE... [--chip CHIP] [--text]   tiled layout and padding of XLA shapes\n"
    "                                           (one per argument, or one per line on stdin)\n"
    "  chips [--json]                           the TPU chip table with sources\n"
    "  plan FILE [--chip CHIP] [--format json|text] [--strategies S] [--capacity BYTES]\n"
    "       [--time-limit S] [--alignment BYTES] [--input json|safetensors|csv]\n"
    "                                           plan a model description, safetensors\n"
    "                                           header or MiniMalloc CSV\n"
    "  pack FILE [--capacity N] [--algo NAME|all|exact|best] [--time-limit S] [--out F.csv]\n"
    "                                           static buffer assignment with lifetimes\n"
    "  diff A B [--format text|json] [plan options]\n"
    "                                           what changed from plan A to plan B (model\n"
    "                                           files or stored plan results)\n"
    "  fit RECIPE --maximize batch|seq|context|... [--sweep PATH=A,B] [plan options]\n"
    "                                           the largest value of a recipe field that\n"
    "                                           fits, each candidate planned in full\n"
    "\n"
    "  --version                                the version, and the result's schema_version\n"
    "\n"
    "exit status: 0 ok, 1 does not fit / infeasible / out of time, 2 bad input\n";

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("tpuplan %s (result schema_version %d)\n", TPUPLAN_VERSION, TPUPLAN_SCHEMA_VERSION);
        return 0;
    }
    if (strcmp(argv[1], "layout") == 0)
        return cli_layout(argc - 1, argv + 1);
    if (strcmp(argv[1], "chips") == 0)
        return cli_chips(argc - 1, argv + 1);
    if (strcmp(argv[1], "plan") == 0)
        return cli_plan(argc - 1, argv + 1);
    if (strcmp(argv[1], "pack") == 0)
        return cli_pack(argc - 1, argv + 1);
    if (strcmp(argv[1], "diff") == 0)
        return cli_diff(argc - 1, argv + 1);
    if (strcmp(argv[1], "fit") == 0)
        return cli_fit(argc - 1, argv + 1);
    fprintf(stderr, "tpuplan: unknown command '%s'\n%s", argv[1], usage);
    return 2;
}
