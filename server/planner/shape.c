/*
 * shape.c - placeholder implementation of shape.h until the owning module lands.
 */
#include "planner/shape.h"

int shape_parse(const char *s, size_t len, struct shape *out, struct err *e)
{
    (void)s;
    (void)len;
    (void)out;
    return err_set(e, ERR_INTERNAL, NULL, "shape_parse: not implemented");
}

int shape_print(const struct shape *sh, char *buf, size_t cap)
{
    (void)sh;
    (void)buf;
    (void)cap;
    return ERR_INTERNAL;
}

int shape_list_parse(const char *s, size_t len, struct shape_list *out, struct err *e)
{
    (void)s;
    (void)len;
    (void)out;
    return err_set(e, ERR_INTERNAL, NULL, "shape_list_parse: not implemented");
}

int shape_list_print(const struct shape_list *l, char *buf, size_t cap)
{
    (void)l;
    (void)buf;
    (void)cap;
    return ERR_INTERNAL;
}

int shape_elements(const struct shape *sh, uint64_t *out, struct err *e)
{
    (void)sh;
    (void)out;
    return err_set(e, ERR_INTERNAL, NULL, "shape_elements: not implemented");
}
