/*
 * fuzz_stablehlo.c - libFuzzer target: StableHLO text through the translation to HLO and
 * the HLO buffer rules.
 *
 * Every input must either fail with an error code (ERR_INVALID naming "line L:C", or the
 * field "bind") or translate to HLO text that hlo_parse accepts (the translation never writes
 * what the HLO parser rejects), and whose model has lifetimes inside the program. Each input
 * is translated twice: as it is, and with its dynamic dims bound (stablehlo_to_hlo_bound) by
 * its first line when that is "//bind NAME=VALUE,..", else by "arg0=3,arg1=2x3".
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hlo.h"
#include "planner/hlo_model.h"
#include "planner/stablehlo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One translation of the input (bind NULL: none) and the HLO rules over it. */
static void one(const uint8_t *data, size_t size, const char *bind)
{
    static const struct model_limits l = {1u << 20, 32, 10000, 10000, 0};
    struct hlo_module h;
    struct model m;
    struct err e;
    char *hlo;
    size_t n;
    int rc;

    rc = stablehlo_to_hlo_bound((const char *)data, size, bind, &hlo, &n, &e);
    if (rc != ERR_OK) {
        if (rc == ERR_INVALID && strncmp(e.msg, "line ", 5) != 0 && strcmp(e.where, "bind") != 0)
            abort();
        return;
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
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char bind[256] = "arg0=3,arg1=2x3";

    if (size > 65536)
        return 0;
    one(data, size, NULL);
    if (size > 7 && memcmp(data, "//bind ", 7) == 0) {
        size_t k = 0;
        for (; k + 1 < sizeof(bind) && 7 + k < size && data[7 + k] != '\n'; k++)
            bind[k] = data[7 + k] != '\0' ? (char)data[7 + k] : ' ';
        bind[k] = '\0';
    }
    one(data, size, bind);
    return 0;
}
