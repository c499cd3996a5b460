/*
 * cli_plan.c - `tpuplan plan` (placeholder until the owning module lands).
 */
#include <stdio.h>

#include "cli/cli.h"

int cli_plan(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fputs("tpuplan: plan is not implemented yet\n", stderr);
    return 2;
}
