/*
 * fuzz_body.c - libFuzzer target: bounded request-body accumulation (body.h), fed in the
 * chunk sizes the input chooses, in both modes.
 *
 * Input: byte 0 picks the mode (bit 0: safetensors), byte 1 the limit (x 16 bytes), byte 2
 * the chunk size; the rest is the body. Properties: every byte is counted in seen; what is
 * kept never exceeds the limit, is NUL-terminated, and is a prefix of the body; a plain
 * body that stays under the limit is kept whole; a safetensors body keeps at most its 8-byte
 * length plus the header that length announces, and a lying length never keeps more.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "service/body.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct body b;
    bool st;
    uint64_t limit;
    size_t chunk, fed = 0;

    if (size < 3)
        return 0;
    st = data[0] & 1;
    limit = (uint64_t)data[1] * 16u;
    chunk = data[2] ? data[2] : 1;
    data += 3;
    size -= 3;
    body_init(&b, limit, st);
    while (fed < size) {
        size_t n = size - fed < chunk ? size - fed : chunk;
        if (body_append(&b, (const char *)data + fed, n) != 0)
            break;
        fed += n;
    }
    if (b.nomem)
        goto out;
    if (b.len > limit || b.len > size || (b.len > 0 && b.p[b.len] != '\0') ||
        (b.len > 0 && memcmp(b.p, data, b.len) != 0))
        abort();
    if (!b.over && b.seen != fed)
        abort();
    if (!st && !b.over && b.len != size)
        abort();
    if (st && b.want > 0 && b.len > b.want)
        abort();
    if (st && body_header_complete(&b) && b.len != b.want)
        abort();
out:
    body_free(&b);
    return 0;
}
