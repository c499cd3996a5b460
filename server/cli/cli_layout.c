/*
 * cli_layout.c - `tpuplan layout` (placeholder until the owning module lands).
 */
#include <stdio.h>

#include "cli/cli.h"

int cli_layout(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fputs("tpuplan: layout is not implemented yet\n", stderr);
    return 2;
}
