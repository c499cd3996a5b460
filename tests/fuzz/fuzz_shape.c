/*
 * fuzz_shape.c - libFuzzer target: XLA shape strings.
 *
 * Every input must either fail with an error code or parse into shapes that print back to
 * text which parses again to the same shapes (print . parse . print = print), and whose
 * layout sizes compute without a crash or a sanitizer report; a default layout never
 * stores fewer bytes than the logical size.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner/layout.h"
#include "planner/shape.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct shape_list a, b; /* large: keep off the fuzzer's stack */
    static char text[SHAPE_MAX_TEXT * SHAPE_LIST_MAX], again[SHAPE_MAX_TEXT * SHAPE_LIST_MAX];
    struct err e;
    int n;

    if (size > 4096)
        return 0;
    if (shape_list_parse((const char *)data, size, &a, &e) != 0)
        return 0;
    n = shape_list_print(&a, text, sizeof(text));
    if (n < 0)
        abort();
    if (shape_list_parse(text, (size_t)n, &b, &e) != 0)
        abort();
    /* Structs have padding: compare what they print, which covers every field. */
    if (shape_list_print(&b, again, sizeof(again)) != n || memcmp(text, again, (size_t)n) != 0)
        abort();
    for (size_t i = 0; i < a.n; i++) {
        struct shape r;
        struct layout_info li;
        if (layout_resolve(&a.elems[i], NULL, &r, &li, &e) == 0 &&
            li.padded_bytes < li.logical_bytes)
            abort();
    }
    return 0;
}
