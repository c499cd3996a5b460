/*
 * trace.c - the Chrome / Perfetto trace export (trace.h): one sweep over time assigns the
 * tracks and writes the counter samples; the metadata and the slices follow, once the
 * tracks are numbered by offset. Streams through jsonw; the free tracks and the live
 * buffers are ordered sets (otree.h), so each event costs O(log n).
 */
#include "planner/trace.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/jsonw.h"
#include "planner/layout.h"
#include "planner/otree.h"

struct tev {
    int64_t t;
    uint64_t off;
    uint32_t idx;
};

static int tev_cmp(const void *x, const void *y)
{
    const struct tev *a = x, *b = y;

    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    if (a->off != b->off)
        return a->off < b->off ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

/* Scratch of one export. */
struct tr {
    const struct trace_cols *c;
    size_t m;                 /* buffers with bytes */
    struct tev *st, *en;      /* starts by (step, offset), ends by step */
    uint32_t *track;          /* per buffer */
    uint32_t *rank;           /* per track: its number in offset order */
    uint64_t *track_min;      /* per track: the lowest offset it holds */
    struct otree_node *tfree; /* per track: key (last offset, track) while free */
    struct otree_node *live;  /* per buffer: key (end offset, buffer) while live */
    uint32_t free_root, live_root;
    size_t ntracks;
    uint64_t kind_live[TRACE_MAX_KINDS];
    bool kind_used[TRACE_MAX_KINDS];
};

static int check_cols(const struct trace_cols *c, struct err *e)
{
    if (c->nkinds > TRACE_MAX_KINDS)
        return err_set(e, ERR_LIMIT, "layout.kind", "layout.kind: %zu kinds; the limit is %d",
                       c->nkinds, TRACE_MAX_KINDS);
    if (c->n >= UINT32_MAX)
        return err_set(e, ERR_LIMIT, "layout.tensors", "layout.tensors: %zu is too many", c->n);
    for (size_t i = 0; i < c->n; i++) {
        char where[48];
        const char *bad = NULL;
        if (c->name[i] == NULL)
            bad = "name";
        else if (c->kind[i] >= c->nkinds)
            bad = "kind";
        else if (c->shape != NULL && c->shape[i] >= c->nshapes)
            bad = "shape";
        else if (c->bytes[i] > 0 &&
                 (c->start[i] >= c->end[i] || c->offset[i] > UINT64_MAX - c->bytes[i]))
            bad = c->start[i] >= c->end[i] ? "end" : "offset";
        if (bad == NULL)
            continue;
        snprintf(where, sizeof(where), "layout.%s[%zu]", bad, i);
        return err_set(e, ERR_INVALID, where, "%s: out of range for buffer %zu", where, i);
    }
    return ERR_OK;
}

/* Opens a counter event at step t; its values go in the open "args" object. */
static void counter_begin(struct jsonw *w, const char *name, int64_t t)
{
    jsonw_obj_begin(w, NULL);
    jsonw_str(w, "name", name);
    jsonw_str(w, "ph", "C");
    jsonw_i64(w, "ts", t);
    jsonw_i64(w, "pid", 1);
    jsonw_obj_begin(w, "args");
}

static void counter_end(struct jsonw *w)
{
    jsonw_obj_end(w);
    jsonw_obj_end(w);
}

/* The counter samples after the events at step t. */
static void write_counters(struct jsonw *w, const struct tr *s, int64_t t)
{
    uint32_t top = otree_max(s->live, s->live_root);

    counter_begin(w, "live bytes", t);
    for (size_t k = 0; k < s->c->nkinds; k++)
        if (s->kind_used[k])
            jsonw_u64(w, s->c->kinds[k], s->kind_live[k]);
    counter_end(w);
    counter_begin(w, "heap height", t);
    jsonw_u64(w, "bytes", top != OTREE_NONE ? s->live[top].k1 : 0);
    counter_end(w);
}

/* A starting buffer's track: the free one whose last buffer sat nearest below its
 * offset, else nearest above, else a new one. */
static uint32_t take_track(struct tr *s, uint64_t off)
{
    uint32_t t = otree_floor(s->tfree, s->free_root, off, UINT64_MAX);

    if (t == OTREE_NONE)
        t = otree_ceil(s->tfree, s->free_root, off, 0);
    if (t == OTREE_NONE) {
        t = (uint32_t)s->ntracks++;
        s->track_min[t] = off;
        return t;
    }
    otree_erase(s->tfree, &s->free_root, t);
    if (off < s->track_min[t])
        s->track_min[t] = off;
    return t;
}

/* The sweep: ends, then starts, at each step; the counters after each. */
static size_t sweep(struct jsonw *w, struct tr *s)
{
    const struct trace_cols *c = s->c;
    size_t i = 0, j = 0, samples = 0;

    while (i < s->m || j < s->m) {
        int64_t t = (j >= s->m || (i < s->m && s->en[i].t <= s->st[j].t)) ? s->en[i].t : s->st[j].t;
        for (; i < s->m && s->en[i].t == t; i++) {
            uint32_t b = s->en[i].idx, tr = s->track[b];
            otree_erase(s->live, &s->live_root, b);
            s->kind_live[c->kind[b]] -= c->bytes[b];
            s->tfree[tr].k1 = c->offset[b];
            s->tfree[tr].k2 = tr;
            otree_insert(s->tfree, &s->free_root, tr);
        }
        for (; j < s->m && s->st[j].t == t; j++) {
            uint32_t b = s->st[j].idx;
            s->track[b] = take_track(s, c->offset[b]);
            s->live[b].k1 = c->offset[b] + c->bytes[b];
            s->live[b].k2 = b;
            otree_insert(s->live, &s->live_root, b);
            s->kind_live[c->kind[b]] += c->bytes[b];
        }
        write_counters(w, s, t);
        samples += 2;
    }
    return samples;
}

static int rank_cmp(const void *x, const void *y)
{
    const uint64_t *a = x, *b = y; /* pairs (lowest offset, track) */

    if (a[0] != b[0])
        return a[0] < b[0] ? -1 : 1;
    return (a[1] > b[1]) - (a[1] < b[1]);
}

/* Numbers the tracks by their lowest offset: s->rank[track]. */
static int rank_tracks(struct tr *s)
{
    uint64_t *pairs = malloc((s->ntracks ? s->ntracks : 1) * 2 * sizeof(*pairs));

    if (pairs == NULL)
        return ERR_NOMEM;
    for (size_t t = 0; t < s->ntracks; t++) {
        pairs[2 * t] = s->track_min[t];
        pairs[2 * t + 1] = t;
    }
    qsort(pairs, s->ntracks, 2 * sizeof(*pairs), rank_cmp);
    for (size_t r = 0; r < s->ntracks; r++)
        s->rank[pairs[2 * r + 1]] = (uint32_t)r;
    free(pairs);
    return ERR_OK;
}

static void write_meta(struct jsonw *w, const struct tr *s, const char *title)
{
    char name[160], off[32];
    int width = snprintf(NULL, 0, "%zu", s->ntracks);

    snprintf(name, sizeof(name), "tpuplan: %.100s (per-device HBM, 1 us = 1 step)", title);
    jsonw_obj_begin(w, NULL);
    jsonw_str(w, "name", "process_name");
    jsonw_str(w, "ph", "M");
    jsonw_i64(w, "pid", 1);
    jsonw_obj_begin(w, "args");
    jsonw_str(w, "name", name);
    jsonw_obj_end(w);
    jsonw_obj_end(w);
    for (size_t t = 0; t < s->ntracks; t++) {
        uint32_t r = s->rank[t];
        snprintf(name, sizeof(name), "track %0*u: offsets from %s", width, r,
                 layout_format_bytes(s->track_min[t], off, sizeof(off)));
        for (int k = 0; k < 2; k++) {
            jsonw_obj_begin(w, NULL);
            jsonw_str(w, "name", k == 0 ? "thread_name" : "thread_sort_index");
            jsonw_str(w, "ph", "M");
            jsonw_i64(w, "pid", 1);
            jsonw_u64(w, "tid", (uint64_t)r + 1);
            jsonw_obj_begin(w, "args");
            if (k == 0)
                jsonw_str(w, "name", name);
            else
                jsonw_u64(w, "sort_index", r);
            jsonw_obj_end(w);
            jsonw_obj_end(w);
        }
    }
}

static void write_slices(struct jsonw *w, const struct tr *s)
{
    const struct trace_cols *c = s->c;

    for (size_t j = 0; j < s->m; j++) {
        uint32_t b = s->st[j].idx;
        jsonw_obj_begin(w, NULL);
        jsonw_str(w, "name", c->name[b]);
        jsonw_str(w, "cat", c->kinds[c->kind[b]]);
        jsonw_str(w, "ph", "X");
        jsonw_i64(w, "ts", c->start[b]);
        jsonw_i64(w, "dur", c->end[b] - c->start[b]);
        jsonw_i64(w, "pid", 1);
        jsonw_u64(w, "tid", (uint64_t)s->rank[s->track[b]] + 1);
        jsonw_obj_begin(w, "args");
        jsonw_u64(w, "offset", c->offset[b]);
        jsonw_u64(w, "bytes", c->bytes[b]);
        jsonw_u64(w, "end_offset", c->offset[b] + c->bytes[b]);
        jsonw_str(w, "kind", c->kinds[c->kind[b]]);
        if (c->shape != NULL && c->shapes[c->shape[b]] != NULL)
            jsonw_str(w, "shape", c->shapes[c->shape[b]]);
        jsonw_obj_end(w);
        jsonw_obj_end(w);
    }
}

static void tr_free(struct tr *s)
{
    free(s->st);
    free(s->en);
    free(s->track);
    free(s->rank);
    free(s->track_min);
    free(s->tfree);
    free(s->live);
}

/* The events of the buffers with bytes, sorted; scratch sized for them. */
static int tr_init(struct tr *s, const struct trace_cols *c)
{
    size_t m = 0, cap = c->n ? c->n : 1;

    memset(s, 0, sizeof(*s));
    s->c = c;
    s->free_root = s->live_root = OTREE_NONE;
    s->st = malloc(cap * sizeof(*s->st));
    s->en = malloc(cap * sizeof(*s->en));
    s->track = malloc(cap * sizeof(*s->track));
    s->rank = malloc(cap * sizeof(*s->rank));
    s->track_min = malloc(cap * sizeof(*s->track_min));
    s->tfree = malloc(cap * sizeof(*s->tfree));
    s->live = malloc(cap * sizeof(*s->live));
    if (s->st == NULL || s->en == NULL || s->track == NULL || s->rank == NULL ||
        s->track_min == NULL || s->tfree == NULL || s->live == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < c->n; i++) {
        if (c->bytes[i] == 0)
            continue;
        s->st[m] = (struct tev){c->start[i], c->offset[i], (uint32_t)i};
        s->en[m++] = (struct tev){c->end[i], 0, (uint32_t)i};
        s->kind_used[c->kind[i]] = true;
    }
    s->m = m;
    qsort(s->st, m, sizeof(*s->st), tev_cmp);
    qsort(s->en, m, sizeof(*s->en), tev_cmp);
    return ERR_OK;
}

int trace_write(const struct trace_cols *c, const char *title, size_t max_bytes, char **out,
                size_t *out_len, struct trace_counts *counts, struct err *e)
{
    struct trace_counts k = {0};
    struct jsonw w;
    struct tr s;
    int rc;

    *out = NULL;
    *out_len = 0;
    if ((rc = check_cols(c, e)) != ERR_OK)
        return rc;
    jsonw_init(&w, max_bytes);
    if (tr_init(&s, c) != ERR_OK) {
        rc = err_set(e, ERR_NOMEM, "", "out of memory for %zu buffers", c->n);
        goto out;
    }
    jsonw_obj_begin(&w, NULL);
    jsonw_arr_begin(&w, "traceEvents");
    k.counters = sweep(&w, &s);
    if (rank_tracks(&s) != ERR_OK) {
        rc = err_set(e, ERR_NOMEM, "", "out of memory for %zu tracks", s.ntracks);
        goto out;
    }
    write_meta(&w, &s, title);
    write_slices(&w, &s);
    jsonw_arr_end(&w);
    jsonw_obj_begin(&w, "otherData");
    jsonw_str(&w, "source", "tpuplan");
    jsonw_str(&w, "plan", title);
    jsonw_str(&w, "time", "1 us = 1 program step");
    jsonw_str(&w, "bytes", "per device, padded; offsets of the chosen static packing");
    jsonw_obj_end(&w);
    jsonw_obj_end(&w);
    k.slices = s.m;
    k.tracks = s.ntracks;
    k.metadata = 1 + 2 * s.ntracks;
    if ((rc = jsonw_finish(&w, out, out_len)) != ERR_OK)
        rc = err_set(e, rc, "",
                     rc == ERR_LIMIT ? "the trace is larger than %zu bytes"
                                     : "out of memory writing the trace (%zu)",
                     max_bytes);
    else if (counts != NULL)
        *counts = k;
out:
    jsonw_discard(&w);
    tr_free(&s);
    return rc;
}
