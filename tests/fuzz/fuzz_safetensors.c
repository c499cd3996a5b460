/*
 * fuzz_safetensors.c - libFuzzer target: a safetensors file (8-byte length, JSON header,
 * maybe tensor data), fed to the importer directly rather than through format detection.
 *
 * A parsed header must describe tensors whose data ranges tile [0, total) in order, and
 * resolve on the default chip or fail with an error naming a tensor; never a crash, a leak
 * or a sanitizer report, whatever the length field says.
 */
#include <stdint.h>
#include <stdlib.h>

#include "planner/chip.h"
#include "planner/model.h"
#include "planner/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct model_limits lim = {1u << 16, 32, 200, 200, 0};
    struct model m;
    struct err e;

    if (safetensors_parse((const char *)data, size, &lim, &m, &e) != 0)
        return 0;
    if (m.n > lim.max_tensors)
        abort();
    (void)model_resolve(&m, chip_default(), 0, &e);
    model_free(&m);
    return 0;
}
