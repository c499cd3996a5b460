/*
 * fuzz_plan.c - libFuzzer target: whole inputs (JSON models, safetensors headers, CSV).
 *
 * plan_validate must return an error or a summary for any byte string, within the limits,
 * without a crash, a leak or a sanitizer report.
 */
#include <stdint.h>

#include "planner/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct plan_limits lim;
    struct plan_opts opts = {0};
    struct plan_summary s;
    struct err e;

    plan_limits_default(&lim);
    lim.max_input_bytes = 1u << 16;
    lim.max_tensors = 1000;
    lim.max_ops = 1000;
    (void)plan_validate((const char *)data, size, &opts, &lim, &s, &e);
    return 0;
}
