/*
 * cli_pack.c - `tpuplan pack` (placeholder until the owning module lands).
 */
#include <stdio.h>

#include "cli/cli.h"

int cli_pack(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fputs("tpuplan: pack is not implemented yet\n", stderr);
    return 2;
}
