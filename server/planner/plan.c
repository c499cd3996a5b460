/*
 * plan.c - placeholder implementation of plan.h until the owning module lands.
 */
#include "planner/plan.h"

const char *plan_format_name(enum plan_format f)
{
    (void)f;
    return "auto";
}

void plan_limits_default(struct plan_limits *l)
{
    l->max_input_bytes = 64u << 20;
    l->max_json_depth = 32;
    l->max_tensors = 1000000;
    l->max_ops = 1000000;
}

int plan_validate(const char *input, size_t len, const struct plan_opts *o,
                  const struct plan_limits *l, struct plan_summary *s, struct err *e)
{
    (void)input;
    (void)len;
    (void)o;
    (void)l;
    (void)s;
    return err_set(e, ERR_INTERNAL, NULL, "plan_validate: not implemented");
}

int plan_run(const char *input, size_t len, const struct plan_opts *o, const struct plan_limits *l,
             char **json, size_t *json_len, struct plan_summary *s, struct err *e)
{
    (void)input;
    (void)len;
    (void)o;
    (void)l;
    (void)json;
    (void)json_len;
    (void)s;
    return err_set(e, ERR_INTERNAL, NULL, "plan_run: not implemented");
}

int plan_buffers(const char *input, size_t len, const struct plan_opts *o,
                 const struct plan_limits *l, struct plan_buffers *out, struct err *e)
{
    (void)input;
    (void)len;
    (void)o;
    (void)l;
    (void)out;
    return err_set(e, ERR_INTERNAL, NULL, "plan_buffers: not implemented");
}

void plan_buffers_free(struct plan_buffers *b)
{
    (void)b;
}
