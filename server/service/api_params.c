/*
 * api_params.c - a plan-creating request's parameters (api_params.h): each one set through
 * the plan options' table or read as ?retain=, the refusals collected and answered at once.
 */
#include "service/api_params.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "planner/plan_options.h"
#include "planner/recipe.h"
#include "service/config.h"
#include "service/problem.h"
#include "service/response.h"
#include "service/server.h"

#define PARAMS_LISTED 16 /* bad parameters listed in one problem; past them, counted */

/* The refusals of one request, in the order of its parameters. */
struct refusals {
    size_t n, more;
    struct problem_param list[PARAMS_LISTED];
    char detail[PARAMS_LISTED][ERR_MSG_MAX];
};

/* Adds parameter name's refusal (a printf format and its arguments). */
static void refuse(struct refusals *f, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void refuse(struct refusals *f, const char *name, const char *fmt, ...)
{
    va_list ap;

    if (f->n == PARAMS_LISTED) {
        f->more++;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(f->detail[f->n], sizeof(f->detail[0]), fmt, ap);
    va_end(ap);
    f->list[f->n].name = name;
    f->list[f->n].detail = f->detail[f->n];
    f->n++;
}

/* ?retain=DURATION: at most --retain when that is set; else any up to 3650d, 0 forever. */
static void read_retain(const struct request *r, const char *v, struct api_params *p,
                        struct refusals *f)
{
    uint64_t max = r->srv->cfg->retain_s, s = 0;

    if (v != NULL && config_parse_duration(v, &s) == 0 && (max == 0 || (s > 0 && s <= max))) {
        p->retain_s = s;
        return;
    }
    if (max > 0)
        refuse(f, "retain",
               "retain: must be a duration (30d, 12h, 90m, 3600s) from 1 s up to this server's "
               "--retain of %llu s.",
               (unsigned long long)max);
    else
        refuse(f, "retain",
               "retain: must be a duration (30d, 12h, 90m, 3600s; 0: forever) of at most 3650d.");
}

/* The input format a body's media type names (import.h); NULL for text/plain, whose
 * formats are told apart by content. A JSON body is a model description or a recipe, told
 * apart by its top-level keys (recipe.h). */
static const char *format_of(enum body_kind k, const struct body *b)
{
    switch (k) {
    case BODY_JSON:
        return b->p != NULL && recipe_detect(b->p, b->len) ? "recipe" : "json";
    case BODY_SAFETENSORS:
        return "safetensors";
    case BODY_CSV:
        return "minimalloc-csv";
    default:
        return NULL;
    }
}

/* The format the body says (multipart: its file part) and XLA's dumps of the form. */
static void from_body(const struct request *r, struct plan_opts *o)
{
    o->format = format_of(r->kind == BODY_MULTIPART ? r->file_kind : r->kind, &r->body);
    if (r->attach_seen[0]) {
        o->xla_assignment = r->attach.p != NULL ? r->attach.p + r->attach_at[0] : "";
        o->xla_assignment_len = r->attach_len[0];
    }
    if (r->attach_seen[1]) {
        o->xla_report = r->attach.p != NULL ? r->attach.p + r->attach_at[1] : "";
        o->xla_report_len = r->attach_len[1];
    }
}

/* Whether opt, just set in *o, is the time limit above this server's --max-time-limit. */
static bool above_max_time(const struct request *r, const struct plan_opt *opt,
                           const struct plan_opts *o)
{
    uint64_t max = r->srv->cfg->max_time_limit_s;

    return strcmp(opt->name, "time_limit") == 0 && max > 0 && o->time_limit_s > (double)max;
}

/* The parameters an endpoint knows, for an unknown one's refusal. */
static void known_params(bool options, char *buf, size_t cap)
{
    size_t n;

    buf[0] = '\0';
    if (options)
        plan_opt_names(PLAN_OPT_API, buf, cap);
    n = strlen(buf);
    snprintf(buf + n, cap - n, "%sretain", n > 0 ? ", " : "");
}

/* One parameter: an option of the table (when options), retain, else unknown. */
static void read_one(const struct request *r, const struct req_arg *a, bool options,
                     struct api_params *p, struct refusals *f)
{
    const struct plan_opt *opt = options ? plan_opt_find(PLAN_OPT_API, a->name) : NULL;
    char known[512];
    struct err e;

    if (opt != NULL) {
        err_clear(&e);
        if (plan_opt_set_typed(&p->opts, opt, PLAN_OPT_API, a->name, a->value, &e) != ERR_OK)
            refuse(f, a->name, "%s", e.msg);
        else if (above_max_time(r, opt, &p->opts))
            refuse(f, a->name, "%s: must be at most %llu s on this server (--max-time-limit)",
                   a->name, (unsigned long long)r->srv->cfg->max_time_limit_s);
    } else if (strcmp(a->name, "retain") == 0) {
        read_retain(r, a->value, p, f);
    } else {
        known_params(options, known, sizeof(known));
        refuse(f, a->name, "%.64s: unknown parameter (known: %s)%s", a->name, known,
               options ? "" : "; a what-if's changes are its body");
    }
}

/* 400 with every refusal: the first one's detail (or how many there are) and where. */
static void answer(struct request *r, const struct refusals *f)
{
    char detail[ERR_MSG_MAX], *json;
    size_t len = 0, n = 0;

    if (f->n == 1) {
        snprintf(detail, sizeof(detail), "%s", f->list[0].detail);
    } else {
        n = (size_t)snprintf(detail, sizeof(detail), "%zu parameters are invalid:", f->n + f->more);
        for (size_t i = 0; i < f->n && n < sizeof(detail); i++)
            n += (size_t)snprintf(detail + n, sizeof(detail) - n, "%s %.64s", i > 0 ? "," : "",
                                  f->list[i].name);
        if (n < sizeof(detail))
            snprintf(detail + n, sizeof(detail) - n, "%s.", f->more > 0 ? ", ..." : "");
    }
    json = problem_json_errors(PROBLEM_INVALID_PARAMETER, r->srv->cfg->base_path, detail,
                               f->list[0].name, NULL, f->list, f->n, &len);
    request_reply(r, problem_types[PROBLEM_INVALID_PARAMETER].status,
                  json != NULL ? response_take(json, len, PROBLEM_MEDIA_TYPE) : NULL);
}

int api_params_read(struct request *r, bool options, struct api_params *p)
{
    struct refusals f;

    memset(p, 0, sizeof(*p));
    f.n = f.more = 0;
    p->retain_s = r->srv->cfg->retain_s;
    if (r->args_lost) {
        request_reply_problem(r, PROBLEM_OUT_OF_MEMORY, "Out of memory reading the parameters.");
        return -1;
    }
    if (r->args_over) {
        char d[64];
        snprintf(d, sizeof(d), "More than %d parameters.", REQ_ARGS_MAX);
        request_reply_problem(r, PROBLEM_INVALID_PARAMETER, d);
        return -1;
    }
    if (options)
        from_body(r, &p->opts);
    for (size_t i = 0; i < r->nargs; i++) {
        bool again = false;
        for (size_t k = 0; k < i && !again; k++)
            again = strcmp(r->args[k].name, r->args[i].name) == 0;
        if (again)
            refuse(&f, r->args[i].name, "%.64s: given more than once", r->args[i].name);
        else
            read_one(r, &r->args[i], options, p, &f);
    }
    if (f.n == 0)
        return 0;
    answer(r, &f);
    return -1;
}
