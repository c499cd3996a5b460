/*
 * fuzz_hlo.c - libFuzzer target: XLA HLO text through the parser and the buffer rules.
 *
 * Every input must either fail with an error code (and, for ERR_INVALID, a message naming
 * "line L:C") or give a model whose tensors all have a lifetime inside the program
 * (0 <= start < end <= steps) and a name; no crash, leak or sanitizer report.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hlo_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct model_limits l = {1u << 20, 32, 10000, 10000, 0};
    struct model m;
    struct err e;
    int rc;

    if (size > 65536)
        return 0;
    rc = hlo_import((const char *)data, size, NULL, &l, &m, &e);
    if (rc != ERR_OK) {
        if (rc == ERR_INVALID && strncmp(e.msg, "line ", 5) != 0 &&
            strstr(e.msg, "HLO buffer") == NULL)
            abort();
        return 0;
    }
    for (size_t i = 0; i < m.n; i++) {
        const struct model_tensor *t = &m.tensors[i];
        if (t->name == NULL || t->live_start < 0 || t->live_start >= t->live_end)
            abort();
    }
    model_free(&m);
    return 0;
}
