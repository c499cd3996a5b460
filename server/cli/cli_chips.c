/*
 * cli_chips.c - `tpuplan chips` (placeholder until the owning module lands).
 */
#include <stdio.h>

#include "cli/cli.h"

int cli_chips(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fputs("tpuplan: chips is not implemented yet\n", stderr);
    return 2;
}
