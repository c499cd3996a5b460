/*
 * dtype.c - placeholder implementation of dtype.h until the owning module lands.
 */
#include "planner/dtype.h"

const char *dtype_name(enum dtype t)
{
    (void)t;
    return "invalid";
}

enum dtype dtype_parse(const char *s, size_t len)
{
    (void)s;
    (void)len;
    return DT_INVALID;
}

unsigned dtype_bits(enum dtype t)
{
    (void)t;
    return 0;
}

unsigned dtype_bytes(enum dtype t)
{
    (void)t;
    return 0;
}
