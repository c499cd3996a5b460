/*
 * hlo_program_int.h - what an HLO module is (private to import/; hlo_model.c and
 * stablehlo.c use it): its stage (before or after XLA's optimization passes), whether SPMD
 * partitioning has run (its shapes are per device), and the memory space of every array
 * leaf (HBM, VMEM, host). The rules, with their sources in openxla/xla, are in
 * hlo_program.c; the result's "program" section (server/planner/RESULT.md#the-program-section)
 * shows them with their evidence.
 */
#ifndef TPUPLAN_IMPORT_HLO_PROGRAM_INT_H
#define TPUPLAN_IMPORT_HLO_PROGRAM_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "planner/err.h"
#include "planner/hlo.h"
#include "planner/model.h"

#define HLO_WHY_LEN 240 /* bytes in one evidence sentence */

/* XLA's memory spaces in a layout's S(n) (xla/layout.h). */
#define HLO_SPACE_HBM  0 /* kDefaultMemorySpace */
#define HLO_SPACE_VMEM 1 /* kGenericFastMemorySpace */
#define HLO_SPACE_HOST 5 /* kHostMemorySpace */

struct hlo_program {
    enum model_stage stage;
    bool partitioned;
    char stage_why[MODEL_MAX_EVIDENCE][HLO_WHY_LEN];
    char part_why[MODEL_MAX_EVIDENCE][HLO_WHY_LEN];
    unsigned nstage, npart;
};

/* The stage and partitioning of h, with the evidence for each. */
void hlo_program_detect(const struct hlo_module *h, struct hlo_program *p);

/* Marks a program StableHLO: before optimization, with that as its stage's evidence. */
void hlo_program_stablehlo(struct model_program *mp);

/* The memory space (S(n)) of each of h's array leaves, space[0 .. h->nleaves): its layout's;
 * for the entry computation's parameters and ROOT, else the entry_computation_layout's; the
 * results of the offloading custom calls (MoveToHost, annotate_device_placement to
 * pinned_host or unpinned_host) host memory, MoveToDevice's HBM. */
void hlo_leaf_spaces(const struct hlo_module *h, int8_t *space);

/* The model's space for an S(n): host, VMEM or other; n must not be 0. */
enum model_space hlo_space_of(int8_t s);

/* Copies p's stage, partitioning and evidence into m->program (m's arena). ERR_NOMEM. */
ERR_MUST_CHECK int hlo_program_put(const struct hlo_program *p, struct model *m, struct err *e);

#endif
