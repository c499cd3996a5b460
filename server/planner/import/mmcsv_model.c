/*
 * mmcsv_model.c - a MiniMalloc CSV as a model (import_int.h): the rows mmcsv.c parses, each
 * a raw buffer whose size and lifetime are taken as given.
 */
#include "planner/import/import_int.h"

#include <string.h>

#include "planner/mmcsv.h"
#include "planner/model/model_build.h"

int mmcsv_import(const char *s, size_t len, struct import_ctx *c, struct model *m, struct err *e)
{
    struct mmcsv mm;
    int rc;

    memset(m, 0, sizeof(*m));
    if ((rc = mmcsv_parse(s, len, c->limits->max_tensors, &mm, e)) != ERR_OK)
        return rc;
    if ((rc = model_init(m, "minimalloc-csv", mm.n)) != ERR_OK) {
        rc = err_set(e, ERR_NOMEM, "", "out of memory for %zu buffers", mm.n);
        goto out;
    }
    m->name = "minimalloc";
    for (size_t i = 0; i < mm.n; i++) {
        struct model_tensor *t = &m->tensors[i];
        if ((t->name = model_strdup(m, mm.ids[i], strlen(mm.ids[i]))) == NULL) {
            rc = err_set(e, ERR_NOMEM, "", "out of memory");
            goto out;
        }
        t->raw = true;
        t->kind = TENSOR_TEMP;
        t->live_given = true;
        t->live_start = mm.bufs[i].lower;
        t->live_end = mm.bufs[i].upper;
        t->logical_bytes = t->padded_bytes = mm.bufs[i].size;
    }
    if (mm.ignored[0] != '\0')
        model_warn(m, "MiniMalloc columns read past and not used: %s", mm.ignored);
out:
    mmcsv_free(&mm);
    if (rc != ERR_OK)
        model_free(m);
    return rc;
}
