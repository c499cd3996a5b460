/*
 * layout.c - placeholder implementation of layout.h until the owning module lands.
 */
#include "planner/layout.h"

const char *confidence_name(enum confidence c)
{
    (void)c;
    return "assumed";
}

int layout_default(struct shape *sh, const struct chip *chip, const char **rule,
                   enum confidence *conf, struct err *e)
{
    (void)sh;
    (void)chip;
    (void)rule;
    (void)conf;
    return err_set(e, ERR_INTERNAL, NULL, "layout_default: not implemented");
}

int layout_size(const struct shape *sh, struct layout_info *out, struct err *e)
{
    (void)sh;
    (void)out;
    return err_set(e, ERR_INTERNAL, NULL, "layout_size: not implemented");
}

int layout_resolve(const struct shape *sh, const struct chip *chip, struct shape *resolved,
                   struct layout_info *out, struct err *e)
{
    (void)sh;
    (void)chip;
    (void)resolved;
    (void)out;
    return err_set(e, ERR_INTERNAL, NULL, "layout_resolve: not implemented");
}

char *layout_format_bytes(uint64_t bytes, char *buf, size_t cap)
{
    (void)bytes;
    if (cap > 0)
        buf[0] = '\0';
    return buf;
}
