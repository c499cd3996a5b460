/*
 * jobs_whatif.c - a what-if's overrides applied on the worker (jobs_whatif.h).
 */
#include "service/jobs_whatif.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "service/planopts.h"

void jobs_whatif_free(struct jobs_whatif *w)
{
    free(w->wr.model);
    free(w->options_json);
    memset(w, 0, sizeof(*w));
}

/* The overrides of the stored {"parent", "overrides"} as JSON text (malloc'd), or NULL with
 * *e filled. */
static char *overrides_of(const char *doc, struct err *e)
{
    json_object *d = json_tokener_parse(doc), *ov = NULL;
    const char *t;
    char *text = NULL;

    if (!json_object_is_type(d, json_type_object) ||
        !json_object_object_get_ex(d, "overrides", &ov)) {
        err_set(e, ERR_INVALID, "whatif", "whatif: the stored what-if is malformed");
        goto out;
    }
    t = json_object_to_json_string_ext(ov, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    if (t == NULL || (text = strdup(t)) == NULL)
        err_set(e, ERR_NOMEM, "", "out of memory reading the overrides");
out:
    json_object_put(d);
    return text;
}

int jobs_whatif_apply(const struct store_job *job, const struct plan_limits *lim,
                      struct plan_opts *o, struct jobs_whatif *w, struct err *e)
{
    char *ov = NULL;
    int rc;

    memset(w, 0, sizeof(*w));
    if ((ov = overrides_of(job->whatif_json, e)) == NULL)
        return e->code;
    if ((rc = whatif_apply(job->input, job->input_len, ov, strlen(ov), lim, &w->wr, e)) != ERR_OK)
        goto out;
    /* what the overrides set in the model must not be overridden by the parent's options */
    if (w->wr.chip_set)
        o->chip = NULL;
    if (w->wr.strategies_set)
        o->strategies = NULL;
    if (w->wr.budget[0] != '\0')
        o->budget = w->wr.budget;
    o->name = job->name; /* named when it was stored: the override's, or "<parent> (what-if)" */
    o->format = w->wr.recipe ? "recipe" : "json";
    if ((w->options_json = planopts_json(o)) == NULL)
        rc = err_set(e, ERR_NOMEM, "", "out of memory writing the options");
out:
    free(ov);
    return rc;
}
