/*
 * hlo_attrs.c - the HLO attribute values hlo_parse keeps as facts of the module (hlo_int.h):
 * the module header's (hlo_parser.cc ParseHloModule), input_output_alias (ParseAliasing),
 * buffer_donor (ParseBufferDonor), entry_computation_layout (ParseComputationLayout), the
 * stack-frame index (ParseStackFrameIndex, current XLA) and an instruction's metadata
 * (ParseMetadata). Values of other attributes are read past.
 */
#include <stdio.h>
#include <string.h>

#include "planner/import/hlo_int.h"
#include "planner/text.h"

/* ---- sub-attributes: "{k=v k2=v2}", commas optional (ParseSubAttributes) ------------- */

struct sub {
    struct hlo_span key, val;
    struct cursor at; /* at the value, for its errors */
};

/* The next k=v inside a block whose '{' the cursor is past: false in *more at its '}',
 * which it steps past. */
static int sub_next(struct cursor *c, struct sub *s, bool *more)
{
    int rc;

    hlo_skip(c);
    (void)cursor_accept(c, ',');
    hlo_skip(c);
    *more = !cursor_accept(c, '}');
    if (!*more)
        return ERR_OK;
    if ((rc = hlo_attr_key(c, &s->key)) != ERR_OK)
        return rc;
    return hlo_attr_value(c, &s->at, &s->val);
}

/* A sub-attribute's value as a non-negative integer. */
static int sub_int(const struct sub *s, int64_t *out)
{
    size_t i = s->val.off, end = (size_t)s->val.off + s->val.len;

    if (!text_uint(s->at.s, end, &i, out) || i != end)
        return cursor_fail(&s->at, "expected a non-negative integer for %.*s", (int)s->key.len,
                           s->at.s + s->key.off);
    return ERR_OK;
}

/* A sub-attribute's value as a 1-based index into a list of n (0 when zero_ok). */
static int sub_index(const struct sub *s, uint32_t n, bool zero_ok, const char *list, uint32_t *out)
{
    int64_t v;
    int rc;

    if ((rc = sub_int(s, &v)) != ERR_OK)
        return rc;
    if ((v == 0 && !zero_ok) || v > (int64_t)n)
        return cursor_fail(&s->at, "%.*s=%lld names no entry of %s (%u entries)", (int)s->key.len,
                           s->at.s + s->key.off, (long long)v, list, n);
    *out = (uint32_t)v;
    return ERR_OK;
}

/* A sub-attribute's value as a quoted string, *out its contents. */
static int sub_string(const struct sub *s, struct hlo_span *out)
{
    struct cursor k = s->at;
    int rc = hlo_string(&k, out);

    if (rc == ERR_OK && k.i != (size_t)s->val.off + s->val.len)
        return cursor_fail(&s->at, "expected a quoted string for %.*s", (int)s->key.len,
                           s->at.s + s->key.off);
    return rc;
}

/* ---- metadata ------------------------------------------------------------------------ */

int hlo_metadata(const struct cursor *at, struct hlo_span v, struct hlo_metadata *out)
{
    static const struct hlo_span_attr strings[] = {
        {"op_type", offsetof(struct hlo_metadata, op_type)},
        {"op_name", offsetof(struct hlo_metadata, op_name)},
        {"source_file", offsetof(struct hlo_metadata, source_file)},
    };
    struct cursor c = *at;
    struct sub s;
    bool more = true;
    int64_t n;
    int rc;

    c.len = (size_t)v.off + v.len;
    if (!cursor_accept(&c, '{'))
        return hlo_expected(&c, "'{' to open the metadata");
    memset(out, 0, sizeof(*out));
    while ((rc = sub_next(&c, &s, &more)) == ERR_OK && more) {
        struct hlo_span str;
        if (hlo_put_span(c.s, s.key, strings, sizeof(strings) / sizeof(strings[0]), out, s.val)) {
            if ((rc = sub_string(&s, &str)) != ERR_OK)
                return rc;
            (void)hlo_put_span(c.s, s.key, strings, sizeof(strings) / sizeof(strings[0]), out, str);
        } else if (hlo_span_eq(c.s, s.key, "source_line")) {
            if ((rc = sub_int(&s, &out->source_line)) != ERR_OK)
                return rc;
        } else if (hlo_span_eq(c.s, s.key, "stack_frame_id")) {
            if ((rc = sub_int(&s, &n)) != ERR_OK)
                return rc;
            if (n > (int64_t)UINT32_MAX - 1)
                return cursor_fail(&s.at, "stack_frame_id %lld is out of range", (long long)n);
            out->stack_frame = (uint32_t)n;
        }
    }
    return rc;
}

/* ---- the stack-frame index ------------------------------------------------------------ */

/* The next entry's number, when the next token is one (the numbers are read past: the
 * entries are numbered 1, 2, ... in order). */
static bool next_entry(struct cursor *c)
{
    int64_t n;

    hlo_skip(c);
    return cursor_uint(c, &n);
}

/* "N \"string\"" entries: FileNames, FunctionNames. */
static int string_list(struct hlo_parser *p, struct vec *v)
{
    struct cursor *c = &p->c;
    struct hlo_span s;
    int rc;

    while (next_entry(c)) {
        hlo_skip(c);
        if ((rc = hlo_string(c, &s)) != ERR_OK || (rc = hlo_push(p, v, &s)) != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

/* The section heading w, required next. */
static int heading(struct cursor *c, const char *w)
{
    char what[40];

    hlo_skip(c);
    if (hlo_at_keyword(c, w)) {
        c->i += strlen(w);
        return ERR_OK;
    }
    snprintf(what, sizeof(what), "the heading %s", w);
    return hlo_expected(c, what);
}

/* "N {file_name_id=F function_name_id=G line=L end_line=.. column=.. end_column=..}" */
static int location(struct hlo_parser *p)
{
    struct cursor *c = &p->c;
    struct hlo_location loc = {0, 0, 0};
    struct sub s;
    bool more = true, have_file = false, have_line = false;
    int rc;

    if ((rc = hlo_expect(c, '{', "'{' to open a file location")) != ERR_OK)
        return rc;
    size_t line = c->line, col = cursor_col(c);
    while ((rc = sub_next(c, &s, &more)) == ERR_OK && more) {
        if (hlo_span_eq(c->s, s.key, "file_name_id")) {
            rc = sub_index(&s, (uint32_t)p->files.n, false, "FileNames", &loc.file);
            have_file = true;
        } else if (hlo_span_eq(c->s, s.key, "function_name_id")) {
            rc = sub_index(&s, (uint32_t)p->functions.n, true, "FunctionNames", &loc.function);
        } else if (hlo_span_eq(c->s, s.key, "line")) {
            rc = sub_int(&s, &loc.line);
            have_line = true;
        }
        if (rc != ERR_OK)
            return rc;
    }
    if (rc != ERR_OK)
        return rc;
    if (!have_file || !have_line)
        return cursor_fail_at(c->e, line, col, "a file location needs file_name_id and line");
    return hlo_push(p, &p->locations, &loc);
}

/* "N {file_location_id=L parent_frame_id=P}", P printed as the proto's value + 1. */
static int frame(struct hlo_parser *p)
{
    struct cursor *c = &p->c;
    struct hlo_frame f = {0, 0};
    struct sub s;
    bool more = true;
    uint32_t parent = 0;
    int rc;

    if ((rc = hlo_expect(c, '{', "'{' to open a stack frame")) != ERR_OK)
        return rc;
    size_t line = c->line, col = cursor_col(c);
    while ((rc = sub_next(c, &s, &more)) == ERR_OK && more) {
        if (hlo_span_eq(c->s, s.key, "file_location_id"))
            rc = sub_index(&s, (uint32_t)p->locations.n, false, "FileLocations", &f.location);
        else if (hlo_span_eq(c->s, s.key, "parent_frame_id")) /* its parent comes before it */
            rc = sub_index(&s, (uint32_t)p->frames.n + 1, true, "StackFrames", &parent);
        if (rc != ERR_OK)
            return rc;
    }
    if (rc != ERR_OK)
        return rc;
    if (f.location == 0)
        return cursor_fail_at(c->e, line, col, "a stack frame needs file_location_id");
    f.parent = parent > 0 ? parent - 1 : 0;
    return hlo_push(p, &p->frames, &f);
}

int hlo_stack_frames(struct hlo_parser *p)
{
    struct cursor *c = &p->c;
    int rc;

    if (p->frames_seen)
        return cursor_fail(c, "a second stack-frame index (FileNames)");
    p->frames_seen = true;
    c->i += strlen("FileNames");
    if ((rc = string_list(p, &p->files)) != ERR_OK ||
        (rc = heading(c, "FunctionNames")) != ERR_OK ||
        (rc = string_list(p, &p->functions)) != ERR_OK ||
        (rc = heading(c, "FileLocations")) != ERR_OK)
        return rc;
    while (next_entry(c))
        if ((rc = location(p)) != ERR_OK)
            return rc;
    if ((rc = heading(c, "StackFrames")) != ERR_OK)
        return rc;
    while (next_entry(c))
        if ((rc = frame(p)) != ERR_OK)
            return rc;
    return ERR_OK;
}

int hlo_check_frames(struct hlo_parser *p)
{
    for (size_t k = 0; k < p->instrs.n; k++) {
        const struct hlo_instr *in = vec_at(&p->instrs, k);
        if (in->meta.stack_frame > p->frames.n)
            return cursor_fail_at(p->c.e, in->line, in->col,
                                  "%.*s: stack_frame_id=%u names no frame of the module's "
                                  "StackFrames (%zu)",
                                  (int)(in->name.len > 200 ? 200 : in->name.len),
                                  p->c.s + in->name.off, in->meta.stack_frame, p->frames.n);
    }
    return ERR_OK;
}

/* ---- the module header ---------------------------------------------------------------- */

/* A shape index {a, b, ...}. */
static int shape_index(struct cursor *c, uint32_t *path, uint8_t *depth)
{
    int rc;

    *depth = 0;
    if ((rc = hlo_expect(c, '{', "'{' to open a shape index")) != ERR_OK)
        return rc;
    for (;;) {
        int64_t v;
        hlo_skip(c);
        if (cursor_accept(c, '}'))
            return ERR_OK;
        if (cursor_accept(c, ','))
            continue;
        if (!cursor_uint(c, &v) || v > INT32_MAX)
            return hlo_expected(c, "a shape index");
        if (*depth == HLO_MAX_TUPLE_DEPTH)
            return hlo_expected(c, "'}' (shape index too deep)");
        path[(*depth)++] = (uint32_t)v;
    }
}

/* "(P, {index}" of an alias or a donor: the parameter and its index. */
static int param_index(struct cursor *c, int64_t *param, uint32_t *path, uint8_t *depth)
{
    int rc;

    if ((rc = hlo_expect(c, '(', "'(' before the parameter number")) != ERR_OK)
        return rc;
    hlo_skip(c);
    if (!cursor_uint(c, param))
        return hlo_expected(c, "a parameter number");
    if ((rc = hlo_expect(c, ',', "',' after the parameter number")) != ERR_OK)
        return rc;
    return shape_index(c, path, depth);
}

/* "{ entry, entry, ... }" (a comma after the last one allowed), each entry read by one(p),
 * at most HLO_MAX_ALIASES of them into v; what names the list in messages. */
static int entry_list(struct hlo_parser *p, struct vec *v, const char *what,
                      int (*one)(struct hlo_parser *p))
{
    struct cursor *c = &p->c;
    int rc;

    if ((rc = hlo_expect(c, '{', "'{' to open the list")) != ERR_OK)
        return rc;
    for (;;) {
        hlo_skip(c);
        if (cursor_accept(c, '}'))
            return ERR_OK;
        if (v->n == HLO_MAX_ALIASES)
            return err_set(c->e, ERR_LIMIT, "", "line %zu: more than %d %s entries", c->line,
                           HLO_MAX_ALIASES, what);
        if ((rc = one(p)) != ERR_OK)
            return rc;
        hlo_skip(c);
        (void)cursor_accept(c, ',');
    }
}

/* One input_output_alias entry: {0}: (1, {}, may-alias) */
static int io_alias(struct hlo_parser *p)
{
    struct cursor *c = &p->c;
    struct hlo_alias a;
    int rc;

    memset(&a, 0, sizeof(a));
    a.line = (uint32_t)c->line;
    a.col = (uint32_t)cursor_col(c);
    if ((rc = shape_index(c, a.out_path, &a.out_depth)) != ERR_OK ||
        (rc = hlo_expect(c, ':', "':' after the output index")) != ERR_OK ||
        (rc = param_index(c, &a.param, a.param_path, &a.param_depth)) != ERR_OK)
        return rc;
    hlo_skip(c);
    if (cursor_accept(c, ',')) { /* may-alias (the default) or must-alias */
        hlo_skip(c);
        struct hlo_span kind = hlo_word(c);
        a.must = hlo_span_eq(c->s, kind, "must-alias");
        if (!a.must && !hlo_span_eq(c->s, kind, "may-alias"))
            return hlo_expected(c, "may-alias or must-alias");
    }
    if ((rc = hlo_expect(c, ')', "')' after the parameter index")) != ERR_OK)
        return rc;
    return hlo_push(p, &p->aliases, &a);
}

/* One buffer_donor entry: (0, {}) */
static int buffer_donor(struct hlo_parser *p)
{
    struct cursor *c = &p->c;
    struct hlo_donor d;
    int rc;

    memset(&d, 0, sizeof(d));
    if ((rc = param_index(c, &d.param, d.path, &d.depth)) != ERR_OK ||
        (rc = hlo_expect(c, ')', "')' after the parameter index")) != ERR_OK)
        return rc;
    return hlo_push(p, &p->donors, &d);
}

/* entry_computation_layout={(P0, P1, ...)->RESULT}: each shape checked, their texts kept. */
static int entry_layout(struct hlo_parser *p)
{
    struct cursor *c = &p->c;
    struct hlo_module *m = p->m;
    uint32_t path[HLO_MAX_TUPLE_DEPTH];
    int rc;

    if ((rc = hlo_expect(c, '{', "'{' to open entry_computation_layout")) != ERR_OK)
        return rc;
    hlo_skip(c);
    if (cursor_peek(c) != '(')
        return hlo_expected(c, "'(' to open the parameters' layouts");
    m->entry_params.off = (uint32_t)c->i;
    if ((rc = hlo_any_shape(p, false, path, 0)) != ERR_OK)
        return rc;
    m->entry_params.len = (uint32_t)c->i - m->entry_params.off;
    hlo_skip(c);
    if (!cursor_lit(c, "->"))
        return hlo_expected(c, "'->' before the result's layout");
    hlo_skip(c);
    m->entry_result.off = (uint32_t)c->i;
    if ((rc = hlo_any_shape(p, false, path, 0)) != ERR_OK)
        return rc;
    m->entry_result.len = (uint32_t)c->i - m->entry_result.off;
    return hlo_expect(c, '}', "'}' to close entry_computation_layout");
}

/* A header attribute whose value is a plain token or group, at *at spanning v. */
static int plain_attr(struct hlo_parser *p, struct hlo_span key, const struct cursor *at,
                      struct hlo_span v)
{
    struct hlo_module *m = p->m;
    const char *s = p->c.s;
    struct sub sv = {key, v, *at};

    if (hlo_span_eq(s, key, "is_scheduled")) {
        m->scheduled = hlo_span_eq(s, v, "true");
        if (!m->scheduled && !hlo_span_eq(s, v, "false"))
            return cursor_fail(at, "expected true or false for is_scheduled");
    } else if (hlo_span_eq(s, key, "replica_count")) {
        return sub_int(&sv, &m->replica_count);
    } else if (hlo_span_eq(s, key, "num_partitions")) {
        return sub_int(&sv, &m->num_partitions);
    } else if (hlo_span_eq(s, key, "frontend_attributes")) {
        m->frontend_attributes = v;
    }
    return ERR_OK;
}

int hlo_header(struct hlo_parser *p)
{
    struct cursor *c = &p->c;
    struct hlo_module *m = p->m;
    int rc;

    hlo_skip(c);
    m->header = true;
    (void)cursor_accept(c, '%');
    m->name = hlo_word(c);
    if (m->name.len == 0)
        return hlo_expected(c, "the module name");
    for (;;) {
        struct hlo_span key, val;
        struct cursor at;
        bool more = true;
        if ((rc = hlo_attr_next(c, &key, &more)) != ERR_OK || !more)
            return rc;
        if (hlo_span_eq(c->s, key, "input_output_alias"))
            rc = entry_list(p, &p->aliases, "input_output_alias", io_alias);
        else if (hlo_span_eq(c->s, key, "buffer_donor"))
            rc = entry_list(p, &p->donors, "buffer_donor", buffer_donor);
        else if (hlo_span_eq(c->s, key, "entry_computation_layout"))
            rc = entry_layout(p);
        else if ((rc = hlo_attr_value(c, &at, &val)) == ERR_OK)
            rc = plain_attr(p, key, &at, val);
        if (rc != ERR_OK)
            return rc;
    }
}
