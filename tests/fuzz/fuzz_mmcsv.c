/*
 * fuzz_mmcsv.c - libFuzzer target: MiniMalloc CSV instances.
 *
 * Whatever parses must format back (with an offset column) to CSV that parses again to the
 * same ids, lifetimes and sizes: format . parse is the identity on what parse accepts.
 * Every accepted buffer has size > 0 and lower < upper, as mmcsv.h promises.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner/mmcsv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must_equal(const struct mmcsv *a, const struct mmcsv *b)
{
    if (a->n != b->n)
        abort();
    for (size_t i = 0; i < a->n; i++) {
        const struct pack_buffer *x = &a->bufs[i], *y = &b->bufs[i];
        if (x->size != y->size || x->lower != y->lower || x->upper != y->upper ||
            strcmp(a->ids[i], b->ids[i]) != 0)
            abort();
        if (x->size == 0 || x->lower >= x->upper)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mmcsv a = {0}, b = {0};
    struct err e;
    uint64_t *offsets = NULL;
    char *text = NULL;
    size_t len = 0;

    if (mmcsv_parse((const char *)data, size, 1000, &a, &e) != 0)
        return 0;
    offsets = calloc(a.n ? a.n : 1, sizeof(*offsets));
    if (offsets == NULL)
        goto out;
    for (size_t i = 0; i < a.n; i++)
        offsets[i] = (uint64_t)i * 4096u; /* any values: the column is read past */
    if (mmcsv_format(&a, offsets, &text, &len, &e) != 0)
        goto out;
    if (strlen(text) != len)
        abort();
    if (mmcsv_parse(text, len, 1000, &b, &e) != 0)
        abort();
    must_equal(&a, &b);
out:
    free(offsets);
    free(text);
    mmcsv_free(&a);
    mmcsv_free(&b);
    return 0;
}
