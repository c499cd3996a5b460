/*
 * cli_chips.c - `tpuplan chips`: the TPU generation table, text or JSON.
 *
 * Every figure comes from server/planner/xla/chip.c, where each one cites its source. Figures
 * the sources mark uncertain (or disagree on) are starred in the text table and listed
 * under "uncertain" in JSON, with the chip's notes saying why.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "planner/chip.h"
#include "planner/jsonw.h"
#include "planner/layout.h"

static const char chips_usage[] = "usage: tpuplan chips [--json]\n"
                                  "\n"
                                  "Prints the TPU chip table (v2 ... v7) with the figures the "
                                  "planner uses. Starred figures are\n"
                                  "uncertain: the sources conflict or do not confirm them; the "
                                  "notes say why.\n";

static const char *star(const struct chip *c, unsigned bit)
{
    return (c->uncertain & bit) ? " *" : "";
}

static void text_chip(const struct chip *c)
{
    char a[32], b[32];

    printf("%s  (%s; aliases: %s; generation %d)\n", c->name, c->device_kind, c->aliases,
           c->generation);
    printf("  HBM per chip / device   %s / %s%s\n",
           layout_format_bytes(c->hbm_bytes_per_chip, a, sizeof(a)),
           layout_format_bytes(c->hbm_bytes_per_device, b, sizeof(b)), star(c, CHIP_F_HBM));
    printf("  usable HBM per device   %s (as the runtime reports it)%s\n",
           layout_format_bytes(c->usable_hbm_bytes, a, sizeof(a)), star(c, CHIP_F_USABLE_HBM));
    printf("  HBM bandwidth           %.0f GB/s per chip%s\n", (double)c->hbm_bw_bytes_per_s / 1e9,
           star(c, CHIP_F_HBM_BW));
    printf("  VMEM / SMEM per core    %s%s / %s%s\n",
           layout_format_bytes(c->vmem_bytes, a, sizeof(a)), star(c, CHIP_F_VMEM),
           layout_format_bytes(c->smem_bytes, b, sizeof(b)), star(c, CHIP_F_SMEM));
    if (c->cmem_bytes != 0)
        printf("  CMEM per chip           %s%s\n", layout_format_bytes(c->cmem_bytes, a, sizeof(a)),
               star(c, CHIP_F_CMEM));
    else
        printf("  CMEM per chip           none%s\n", star(c, CHIP_F_CMEM));
    printf("  TensorCores chip/device %u / %u%s\n", c->tensorcores_per_chip,
           c->tensorcores_per_device, star(c, CHIP_F_CORES));
    printf("  MXU                     %u x %ux%u per core%s\n", c->mxus_per_core, c->mxu_dim,
           c->mxu_dim, star(c, CHIP_F_MXU));
    printf("  peak bf16               %.3g FLOP/s per chip%s\n", c->peak_bf16_flops,
           star(c, CHIP_F_BF16));
    if (c->peak_int8_ops > 0)
        printf("  peak int8               %.3g OP/s per chip%s\n", c->peak_int8_ops,
               star(c, CHIP_F_INT8));
    else
        printf("  peak int8               not published%s\n", star(c, CHIP_F_INT8));
    printf("  ICI topology            %s%s\n", c->ici_topology, star(c, CHIP_F_ICI));
    if (c->scoped_vmem_default != 0)
        printf("  scoped VMEM default     %s%s\n",
               layout_format_bytes(c->scoped_vmem_default, a, sizeof(a)),
               star(c, CHIP_F_SCOPED_VMEM));
    else
        printf("  scoped VMEM default     unknown\n");
    printf("  default tiles           %s%s\n",
           (c->uncertain & CHIP_F_LAYOUT) ? "assumed (no memory report from this generation)"
                                          : "confirmed by real XLA:TPU reports",
           star(c, CHIP_F_LAYOUT));
    if (c->notes != NULL && c->notes[0] != '\0')
        printf("  notes: %s\n", c->notes);
}

int cli_chips(int argc, char **argv)
{
    int json = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--text") == 0) {
            json = 0;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(chips_usage, stdout);
            return 0;
        } else {
            fprintf(stderr, "tpuplan chips: unknown argument '%s'\n%s", argv[i], chips_usage);
            return 2;
        }
    }
    if (json) {
        struct jsonw w;
        char *text = NULL;
        size_t len = 0;
        jsonw_init(&w, (size_t)1 << 20);
        jsonw_arr_begin(&w, NULL);
        for (size_t i = 0; i < chip_count(); i++) {
            jsonw_obj_begin(&w, NULL);
            chip_json_write(&w, chip_at(i));
            jsonw_obj_end(&w);
        }
        jsonw_arr_end(&w);
        if (jsonw_finish(&w, &text, &len) != ERR_OK) {
            fprintf(stderr, "tpuplan chips: out of memory\n");
            return 2;
        }
        puts(text);
        free(text);
    } else {
        printf("TPU chips (sizes in XLA's units: G = GiB). * = uncertain, see notes. "
               "Default chip: %s.\n",
               chip_default()->name);
        for (size_t i = 0; i < chip_count(); i++) {
            putchar('\n');
            text_chip(chip_at(i));
        }
    }
    return fflush(stdout) == 0 ? 0 : 2;
}
