/*
 * fuzz_stablehlo.c - libFuzzer target: StableHLO text through the translation to HLO and
 * the HLO buffer rules.
 *
 * Every input must either fail with an error code (ERR_INVALID naming "line L:C") or
 * translate to HLO text that hlo_parse accepts (the translation never writes what the HLO
 * parser rejects), and whose model has lifetimes inside the program.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hlo.h"
#include "planner/hlo_model.h"
#include "planner/stablehlo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct model_limits l = {1u << 20, 32, 10000, 10000, 0};
    struct hlo_module h;
    struct model m;
    struct err e;
    char *hlo;
    size_t n;
    int rc;

    if (size > 65536)
        return 0;
    rc = stablehlo_to_hlo((const char *)data, size, &hlo, &n, &e);
    if (rc != ERR_OK) {
        if (rc == ERR_INVALID && strncmp(e.msg, "line ", 5) != 0)
            abort();
        return 0;
    }
    rc = hlo_parse(hlo, n, l.max_tensors, &h, &e);
    if (rc == ERR_OK) {
        if (hlo_model_build(&h, NULL, &l, &m, &e) == ERR_OK) {
            for (size_t i = 0; i < m.n; i++)
                if (m.tensors[i].live_start >= m.tensors[i].live_end)
                    abort();
            model_free(&m);
        }
        hlo_free(&h);
    }
    free(hlo);
    return 0;
}
