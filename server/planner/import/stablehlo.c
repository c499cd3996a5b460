/*
 * stablehlo.c - StableHLO / MHLO text to HLO text (see stablehlo.h): a cursor over the MLIR
 * text, one output buffer per computation being written (a function body or an op's
 * region: while, case, if), a name table of the SSA values defined so far. Location names are read
 * by stablehlo_loc.c and Shardy shardings by stablehlo_sdy.c (stablehlo_int.h).
 */
#include "planner/stablehlo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hlo_model.h"
#include "planner/import/hlo_program_int.h"
#include "planner/import/stablehlo_int.h"
#include "planner/text.h"

/* ---- statements -------------------------------------------------------------------- */

/* The rest of a named result list "%a, %b, .. =" after its first name (the cursor at the
 * ','): the names into st->names (malloc'd; the statement frees them). */
static int named_results(struct sh_translator *t, struct sh_stmt *st)
{
    struct cursor *c = &t->c;
    uint32_t cap = 8;

    if ((st->names = malloc(2 * cap * sizeof(*st->names))) == NULL)
        return err_set(c->e, ERR_NOMEM, "", "out of memory translating StableHLO");
    st->names[0] = st->res_off;
    st->names[1] = st->res_len;
    while (cursor_accept(c, ',')) {
        cursor_skip_blanks(c);
        if (cursor_peek(c) != '%' || st->nres == SH_MAX_RESULTS)
            return cursor_fail(c, "expected %%name in the results (at most %d)", SH_MAX_RESULTS);
        if (st->nres == cap) {
            uint32_t *p = realloc(st->names, 4 * cap * sizeof(*p));
            if (p == NULL)
                return err_set(c->e, ERR_NOMEM, "", "out of memory translating StableHLO");
            st->names = p;
            cap *= 2;
        }
        c->i++;
        st->names[2 * st->nres] = (uint32_t)c->i;
        st->names[2 * st->nres + 1] = (uint32_t)cursor_span(c, ident_ch);
        if (st->names[2 * st->nres + 1] == 0)
            return cursor_fail(c, "expected a result name after '%%'");
        st->nres++;
        cursor_skip_blanks(c);
    }
    return ERR_OK;
}

/* A statement's results: %r, %r:N, or %a, %b, .. (named); then '='. */
static int results(struct sh_translator *t, struct sh_stmt *st)
{
    struct cursor *c = &t->c;
    int rc;

    c->i++;
    st->res_off = (uint32_t)c->i;
    st->res_len = (uint32_t)cursor_span(c, ident_ch);
    st->nres = 1;
    if (cursor_peek(c) == ':') {
        int64_t n;
        c->i++;
        if (!cursor_uint(c, &n) || n < 1 || n > SH_MAX_RESULTS)
            return cursor_fail(c, "expected a result count after ':'");
        st->nres = (uint32_t)n;
    }
    cursor_skip_blanks(c);
    if (st->nres == 1 && cursor_peek(c) == ',' && (rc = named_results(t, st)) != ERR_OK)
        return rc;
    if (!cursor_accept(c, '='))
        return cursor_fail(c, "expected '=' after the results (%%name, %%name:N or %%a, %%b)");
    cursor_skip_blanks(c);
    return ERR_OK;
}

/* The statement's op (after its results) to its end. */
static int operation(struct sh_translator *t, struct sh_stmt *st)
{
    struct cursor *c = &t->c;
    bool quoted = false;

    if (cursor_peek(c) == '"') {
        c->i++;
        st->op_off = (uint32_t)c->i;
        st->op_len = (uint32_t)cursor_span(c, ident_ch);
        if (!cursor_accept(c, '"'))
            return cursor_fail(c, "expected '\"' after the operation name");
        quoted = true;
    } else {
        st->op_off = (uint32_t)c->i;
        st->op_len = (uint32_t)cursor_span(c, ident_ch);
    }
    if (st->op_len == 0)
        return cursor_fail(c, "expected an operation");
    if (sh_op_is(t, st, "return") && st->nres == 0)
        return sh_terminator(t, st);
    cursor_skip_blanks(c);
    if (st->nres > 0 && sh_op_is(t, st, "while") && cursor_peek(c) == '(')
        return quoted ? sh_region_op(t, st, "while") : sh_while_op(t, st);
    if (st->nres > 0 && sh_op_is(t, st, "case"))
        return sh_region_op(t, st, "case");
    if (st->nres > 0 && sh_op_is(t, st, "if"))
        return sh_region_op(t, st, "if");
    if (st->nres > 0 && sh_op_is(t, st, "manual_computation"))
        return sh_manual_op(t, st);
    return sh_generic_op(t, st);
}

/* One statement of a region. */
static int statement(struct sh_translator *t)
{
    struct cursor *c = &t->c;
    struct sh_stmt st = {0};
    int rc = ERR_OK;

    st.line = t->at_line = c->line;
    st.col = t->at_col = cursor_col(c);
    if (cursor_peek(c) == '%')
        rc = results(t, &st);
    if (rc == ERR_OK)
        rc = operation(t, &st);
    free(st.names);
    return rc;
}

/* Statements up to the region's closing '}' (left at the cursor): sh_translator.statements. */
static int statements(struct sh_translator *t)
{
    struct cursor *c = &t->c;
    for (;;) {
        int rc;
        sh_skip_nl(c);
        if (cursor_peek(c) == '}' || cursor_peek(c) == '\0')
            return cursor_peek(c) == '}' ? ERR_OK
                                         : cursor_fail(c, "expected '}' to close the region");
        if ((rc = statement(t)) != ERR_OK)
            return rc;
    }
}

/* ---- functions and the module ------------------------------------------------------ */

/* One argument's attributes (a result's when arg is UINT32_MAX): mhlo.sharding or
 * sdy.sharding (", sharding=.." into sharding), tf.aliasing_output (the module's aliases),
 * mhlo.memory_kind (*host: "pinned_host" or "unpinned_host", host memory; JAX's memory
 * kinds, jax/_src/interpreters/mlir.py). */
static int arg_attrs(struct sh_translator *t, uint32_t arg, uint32_t rank, struct sh_buf *sharding,
                     bool *host)
{
    struct cursor *c = &t->c;
    size_t end = c->i;
    unsigned d = 0;
    for (; end < c->len && c->s[end] != '\n'; end++) {
        if (c->s[end] == '"')
            for (end++; end < c->len && c->s[end] != '"' && c->s[end] != '\n'; end++)
                end += c->s[end] == '\\';
        if (end >= c->len)
            break;
        d += c->s[end] == '{';
        if (c->s[end] == '}' && --d == 0)
            break;
    }
    for (size_t q = c->i; q < end; q++) {
        static const char sh[] = "mhlo.sharding = \"",
                          al[] = "tf.aliasing_output = ", sdy[] = "sdy.sharding = #sdy.sharding",
                          mk[] = "mhlo.memory_kind = \"";
        if (end - q > sizeof(mk) && memcmp(c->s + q, mk, sizeof(mk) - 1) == 0) {
            size_t v = q + sizeof(mk) - 1;
            *host = (end - v >= 12 && memcmp(c->s + v, "pinned_host\"", 12) == 0) ||
                    (end - v >= 14 && memcmp(c->s + v, "unpinned_host\"", 14) == 0);
        } else if (end - q > sizeof(sh) && memcmp(c->s + q, sh, sizeof(sh) - 1) == 0) {
            size_t v = q + sizeof(sh) - 1, n = 0;
            while (v + n < end && c->s[v + n] != '"')
                n++;
            int rc = sh_buf_add(t, sharding, ", sharding=", 11);
            if (rc != ERR_OK || (rc = sh_buf_add(t, sharding, c->s + v, n)) != ERR_OK)
                return rc;
        } else if (end - q > sizeof(sdy) && memcmp(c->s + q, sdy, sizeof(sdy) - 1) == 0) {
            size_t at = c->i;
            c->i = q + sizeof(sdy) - 1; /* on this line: errors name its column */
            int rc = sh_buf_add(t, sharding, ", sharding=", 11);
            if (rc == ERR_OK)
                rc = sh_sdy_sharding(t, rank, sharding);
            q = c->i - 1;
            c->i = at;
            if (rc != ERR_OK)
                return rc;
        } else if (end - q > sizeof(al) && memcmp(c->s + q, al, sizeof(al) - 1) == 0) {
            size_t at = q + sizeof(al) - 1;
            int64_t o = 0;
            if (!text_uint(c->s, end, &at, &o))
                return cursor_fail(c, "expected an output number after tf.aliasing_output");
            if (arg == UINT32_MAX)
                continue; /* a result's */
            int rc = sh_buf_printf(t, &t->aliases, "%s{%lld}: (%u, {}, may-alias)",
                                   t->aliases.n > 0 ? ", " : "", (long long)o, arg);
            if (rc != ERR_OK)
                return rc;
        }
    }
    c->i = end + (end < c->len);
    return ERR_OK;
}

/* The results "T" or "(T {attrs}, ..)" after "->": their shardings (mhlo.sharding or
 * sdy.sharding) as the ROOT's tuple sharding in t->ret_sharding, "{replicated}" for a result
 * without one; none when no result has one. */
static int func_results(struct sh_translator *t)
{
    struct cursor *c = &t->c;
    struct sh_buf list = {0};
    bool any = false, paren;
    int rc = ERR_OK;

    sh_buf_free(&t->ret_sharding);
    cursor_skip_blanks(c);
    paren = cursor_accept(c, '(');
    for (uint32_t k = 0; rc == ERR_OK && !(paren && cursor_peek(c) == ')'); k++) {
        struct sh_buf shape = {0}, sharding = {0};
        bool host = false; /* a result's memory kind is its producer's (not planned here) */
        if (k == SH_MAX_RESULTS) {
            rc = cursor_fail(c, "more than %d results", SH_MAX_RESULTS);
            break;
        }
        rc = sh_type(t, &shape);
        /* attributes only inside the parentheses: after a lone type '{' opens the body */
        if (rc == ERR_OK && paren && (cursor_skip_blanks(c), cursor_peek(c) == '{'))
            rc = arg_attrs(t, UINT32_MAX, sh_rank_of(shape.p), &sharding, &host);
        any |= sharding.n > 0;
        if (rc == ERR_OK)
            rc = sh_buf_printf(t, &list, "%s%s", k > 0 ? ", " : "",
                               sharding.n > 11 ? sharding.p + 11 : "{replicated}");
        sh_buf_free(&shape);
        sh_buf_free(&sharding);
        cursor_skip_blanks(c);
        if (!paren || !cursor_accept(c, ','))
            break;
        cursor_skip_blanks(c);
    }
    if (rc == ERR_OK && paren && !cursor_accept(c, ')'))
        rc = cursor_fail(c, "expected ')' to close the results");
    if (rc == ERR_OK && any && list.p != NULL)
        rc = sh_buf_printf(t, &t->ret_sharding, ", sharding={%s}", list.p);
    sh_buf_free(&list);
    return rc;
}

/* "  NAME = SHAPE parameter(N)[, sharding=..][, metadata={op_name=..}]" for an argument. */
static int param_line(struct sh_translator *t, struct sh_buf *b, uint32_t off, uint32_t len,
                      const char *shape, uint32_t n, const char *sharding, uint32_t loc_off,
                      uint32_t loc_len)
{
    struct cursor *c = &t->c;
    int rc;
    if ((rc = sh_buf_add(t, b, "  ", 2)) != ERR_OK ||
        (rc = sh_buf_add(t, b, c->s + off, len)) != ERR_OK ||
        (rc = sh_buf_add(t, b, " = ", 3)) != ERR_OK || (rc = sh_buf_str(t, b, shape)) != ERR_OK ||
        (rc = sh_buf_printf(t, b, " parameter(%u)", n)) != ERR_OK ||
        (rc = sh_buf_str(t, b, sharding)) != ERR_OK ||
        (rc = sh_put_op_name(t, b, loc_off, loc_len)) != ERR_OK)
        return rc;
    return sh_buf_add(t, b, "\n", 1);
}

/* One argument "%NAME: T {ATTRS} loc(..)" at the cursor, number narg: its parameter line
 * into text, its value defined. */
static int one_argument(struct sh_translator *t, struct sh_buf *text, uint32_t narg)
{
    struct cursor *c = &t->c;
    struct sh_buf shape = {0}, sharding = {0};
    uint32_t off, len, loc_off = 0, loc_len = 0, bound = UINT32_MAX;
    bool host = false;
    int rc;

    if (cursor_peek(c) != '%')
        return cursor_fail(c, "expected an argument %%name");
    t->at_line = c->line;
    t->at_col = cursor_col(c);
    c->i++;
    off = (uint32_t)c->i;
    len = (uint32_t)cursor_span(c, ident_ch);
    cursor_skip_blanks(c);
    if (cursor_peek(c) != ':')
        return cursor_fail(c, "expected ':' after the argument name");
    c->i++;
    cursor_skip_blanks(c);
    /* the entry's arguments take the bindings; another function's ? is refused */
    t->arg_off = off;
    t->arg_len = len;
    t->arg_entry = strcmp(t->fname, t->entry_name) == 0;
    if (t->arg_entry && (rc = sh_bind_arg(t, off, len, &bound)) != ERR_OK)
        return rc;
    if (!t->arg_entry)
        sh_refine_param(t, narg); /* what its calls pass */
    rc = sh_type(t, &shape);
    t->hint = NULL;
    t->arg_len = 0;
    if (rc == ERR_OK && (cursor_skip_blanks(c), cursor_peek(c) == '{'))
        rc = arg_attrs(t, narg, sh_rank_of(shape.p), &sharding, &host);
    if (rc == ERR_OK && host) /* XLA's entry layout puts it in S(5), the host's space */
        rc = sh_host_layout(t, &shape);
    if (rc == ERR_OK && (cursor_skip_blanks(c), cursor_starts(c, "loc("))) { /* its op_name */
        sh_loc_name(t, c->i, &loc_off, &loc_len);
        c->i += 3;
        rc = sh_skip_group(c);
    }
    if (rc == ERR_OK)
        rc = param_line(t, text, off, len, shape.p, narg, sharding.p, loc_off, loc_len);
    if (rc == ERR_OK)
        rc = sh_define_value(t, off, len, shape.p, shape.n);
    if (rc == ERR_OK)
        rc = t->arg_entry ? sh_bind_arg_done(t, bound, shape.p) : sh_refine_param_done(t, narg);
    free(sharding.p);
    free(shape.p);
    return rc;
}

/* A function definition, func.func [public|private|nested] @NAME(%ARG: T {ATTRS} loc(..),
 * ..) -> RESULTS {BODY}, as one HLO computation: the entry one when NAME is the entry
 * function (pick_entry), else appended to the finished ones. */
static int function_def(struct sh_translator *t)
{
    struct cursor *c = &t->c;
    uint32_t narg = 0;
    struct sh_sym name;
    int rc = ERR_OK;

    c->i += 9; /* func.func */
    sh_buf_free(&t->ret_sharding);
    cursor_skip_blanks(c);
    if (cursor_starts(c, "public") || cursor_starts(c, "private") || cursor_starts(c, "nested")) {
        (void)cursor_span(c, ident_ch);
        cursor_skip_blanks(c);
    }
    if (cursor_peek(c) != '@')
        return cursor_fail(c, "expected @name after func.func");
    if ((rc = sh_symbol(t, &name)) != ERR_OK)
        return rc;
    if (!sh_sym_name(t, &name, t->fname, sizeof(t->fname)))
        return cursor_fail(c, "a function name of more than %zu bytes", sizeof(t->fname) - 8);
    t->depth = 0;
    struct sh_region *r = &t->regions[t->depth++];
    memset(r, 0, sizeof(*r));
    r->id = ++t->next_region;
    if (!cursor_accept(c, '('))
        return cursor_fail(c, "expected '(' after the function name");
    if ((rc = sh_buf_printf(t, &r->text, "%s {\n", t->fname)) != ERR_OK)
        goto out;
    for (;;) {
        sh_skip_nl(c);
        if (cursor_peek(c) == ')')
            break;
        if ((rc = one_argument(t, &r->text, narg++)) != ERR_OK)
            goto out;
        cursor_skip_blanks(c);
        (void)cursor_accept(c, ',');
    }
    c->i++; /* ')' */
    if (strcmp(t->fname, t->entry_name) == 0 && (rc = sh_bind_check(t)) != ERR_OK)
        goto out;
    cursor_skip_blanks(c);
    t->dyn_ok = t->bind != NULL; /* the results' types: only their shardings are kept */
    rc = cursor_lit(c, "->") ? func_results(t) : ERR_OK;
    t->dyn_ok = false;
    if (rc != ERR_OK)
        goto out;
    /* "attributes {...} {": the body opens with the last '{' of the line */
    size_t open = 0;
    for (; c->i < c->len && c->s[c->i] != '\n'; c->i++)
        if (c->s[c->i] == '{')
            open = c->i;
    if (open == 0) {
        rc = cursor_fail(c, "expected '{' to open the function body");
        goto out;
    }
    if ((rc = statements(t)) != ERR_OK)
        goto out;
    c->i++; /* '}' */
    rc = sh_buf_add(t, &r->text, "}\n\n", 3);
    if (rc == ERR_OK && strcmp(t->fname, t->entry_name) == 0) {
        free(t->entry.p);
        t->entry = r->text;
        r->text = (struct sh_buf){0};
    } else if (rc == ERR_OK) {
        rc = sh_buf_add(t, &t->out, r->text.p, r->text.n);
    }
out:
    free(r->text.p);
    r->text = (struct sh_buf){0};
    t->depth = 0;
    return rc;
}

/* Skips blank, comment and #loc lines. */
static void skip_preamble(struct cursor *c)
{
    for (;;) {
        cursor_skip_space(c);
        if (cursor_peek(c) != '#' && !cursor_starts(c, "//"))
            return;
        cursor_to_eol(c);
    }
}

bool stablehlo_detect(const char *s, size_t len)
{
    struct cursor c = cursor_make(s, len, NULL);
    skip_preamble(&c);
    return cursor_starts(&c, "module ") || cursor_starts(&c, "module{") ||
           cursor_starts(&c, "func.func ");
}

/* The entry function: @main, else the first public one, else the first. */
static void pick_entry(struct sh_translator *t)
{
    struct cursor *c = &t->c, at = *c;
    static const char key[] = "func.func ";
    bool pub_found = false;

    t->entry_name[0] = '\0';
    c->e = NULL; /* a symbol that does not read is the definition's error, not this one's */
    for (size_t q = 0; q + sizeof(key) < at.len; q++) {
        struct sh_sym sym;
        char name[sizeof(t->entry_name)];
        if (memcmp(at.s + q, key, sizeof(key) - 1) != 0 ||
            (q > 0 && at.s[q - 1] != ' ' && at.s[q - 1] != '\n'))
            continue;
        size_t p = q + sizeof(key) - 1;
        bool pub = at.len - p > 7 && memcmp(at.s + p, "public ", 7) == 0;
        while (p < at.len && at.s[p] != '@' && at.s[p] != '\n')
            p++;
        c->i = p; /* the definition reads it again, errors and all */
        if (p >= at.len || at.s[p] != '@' || sh_symbol(t, &sym) != ERR_OK ||
            !sh_sym_name(t, &sym, name, sizeof(name)))
            continue;
        if (strcmp(name, "main") == 0 || t->entry_name[0] == '\0' || (pub && !pub_found)) {
            snprintf(t->entry_name, sizeof(t->entry_name), "%s", name);
            pub_found |= pub;
            if (strcmp(t->entry_name, "main") == 0)
                break;
        }
    }
    *c = at;
}

static int module(struct sh_translator *t, char *name, size_t cap)
{
    struct cursor *c = &t->c;
    int rc;

    pick_entry(t);
    skip_preamble(c);
    snprintf(name, cap, "module");
    if (cursor_starts(c, "module")) {
        c->i += 6;
        cursor_skip_blanks(c);
        if (cursor_peek(c) == '@') {
            size_t off = ++c->i, n = cursor_span(c, ident_ch);
            snprintf(name, cap, "%.*s", (int)(n < cap - 1 ? n : cap - 1), c->s + off);
        }
        while (c->i < c->len && c->s[c->i] != '\n') /* attributes {...} { */
            c->i++;
    }
    for (;;) {
        sh_skip_nl(c);
        if (c->i >= c->len || cursor_peek(c) == '}')
            break;
        if (cursor_starts(c, "func.func ")) {
            if ((rc = function_def(t)) != ERR_OK)
                return rc;
        } else if (cursor_starts(c, "sdy.mesh ")) {
            if ((rc = sh_sdy_mesh_def(t)) != ERR_OK)
                return rc;
        } else { /* other module-level ops */
            cursor_to_eol(c);
        }
    }
    if (t->entry.n == 0)
        return cursor_fail(c, "expected a func.func in the module");
    return ERR_OK;
}

int stablehlo_to_hlo(const char *s, size_t len, char **out, size_t *out_len, struct err *e)
{
    return stablehlo_to_hlo_bound(s, len, NULL, out, out_len, e);
}

/* One pass of the translation (rs: the refinement's state across passes, NULL without
 * bindings). */
static int translate(const char *s, size_t len, const char *bind, struct sh_refine_state *rs,
                     char **out, size_t *out_len, struct err *e)
{
    struct sh_translator t = {
        .c = cursor_make(s, len, e), .statements = statements, .bind = bind, .rs = rs};
    char name[256];
    struct sh_buf all = {0};
    int rc;

    *out = NULL;
    *out_len = 0;
    if (len > UINT32_MAX / 16)
        return err_set(e, ERR_LIMIT, "", "StableHLO text of %zu bytes is too large", len);
    t.max_out = 8 * len + 65536;
    /* Every value defined writes its instruction (at least a line) to the output, and a mesh
     * definition takes more than ten bytes of the text. */
    vec_init(&t.values, sizeof(struct sh_value), t.max_out);
    vec_init(&t.meshes, sizeof(struct sdy_mesh), len);
    vec_init(&t.folds, sizeof(struct sh_fold), t.max_out / 64); /* one per value at most */
    vec_init(&t.uses, sizeof(uint32_t), len / 2 + 1);           /* a use is "%x" at least */
    if ((rc = names_init(&t.names, 512, sh_value_name, &t)) != ERR_OK)
        return err_set(e, rc, "", "out of memory translating StableHLO");
    if ((rc = sh_bind_parse(&t)) != ERR_OK || (rc = sh_loc_table(&t)) != ERR_OK ||
        (rc = module(&t, name, sizeof(name))) != ERR_OK)
        goto out;
    if ((rc = sh_buf_printf(&t, &all, "HloModule %s", name)) != ERR_OK ||
        (t.aliases.n > 0 &&
         (rc = sh_buf_printf(&t, &all, ", input_output_alias={ %s }", t.aliases.p)) != ERR_OK) ||
        (rc = sh_buf_add(&t, &all, "\n\n", 2)) != ERR_OK ||
        (t.out.n > 0 && (rc = sh_buf_add(&t, &all, t.out.p, t.out.n)) != ERR_OK) ||
        (rc = sh_buf_add(&t, &all, "ENTRY ", 6)) != ERR_OK ||
        (rc = sh_buf_add(&t, &all, t.entry.p, t.entry.n)) != ERR_OK)
        goto out;
    *out = all.p;
    *out_len = all.n;
    all.p = NULL;
out:
    for (unsigned d = 0; d < SH_MAX_REGIONS; d++) {
        free(t.regions[d].text.p);
        free(t.regions[d].params.p);
        vec_free(&t.regions[d].caps);
    }
    free(t.shapes.p);
    free(t.locs);
    names_free(&t.loc_names);
    vec_free(&t.meshes);
    vec_free(&t.folds);
    vec_free(&t.uses);
    free(all.p);
    free(t.out.p);
    free(t.entry.p);
    free(t.aliases.p);
    free(t.ret_sharding.p);
    vec_free(&t.values);
    names_free(&t.names);
    return rc;
}

/* With bindings, a module that calls functions is read in lenient passes first (a ? nothing
 * gives yet stays ?), each learning more of what its calls pass and its functions return,
 * until a pass learns nothing new (at most SH_MAX_PASSES); then the strict pass, whose
 * errors are the translation's. */
int stablehlo_to_hlo_bound(const char *s, size_t len, const char *bind, char **out, size_t *out_len,
                           struct err *e)
{
    struct sh_refine_state rs = {0};
    int rc;

    if (bind == NULL || bind[0] == '\0')
        return translate(s, len, NULL, NULL, out, out_len, e);
    vec_init(&rs.fns, sizeof(struct sh_fn), len / 16 + 1); /* "func.func @f() {" at least */
    vec_init(&rs.dims, sizeof(struct sh_dims), SH_MAX_CALL_VALUES);
    vec_init(&rs.vals, sizeof(struct sh_fnval), SH_MAX_CALL_VALUES);
    for (; memmem(s, len, "call @", 6) != NULL && rs.pass < SH_MAX_PASSES; rs.pass++) {
        struct err scratch;
        char *o = NULL;
        size_t n;
        rs.lenient = true;
        rs.changed = false;
        err_clear(&scratch);
        rc = translate(s, len, bind, &rs, &o, &n, &scratch);
        free(o);
        if (rc != ERR_OK || !rs.changed)
            break;
    }
    rs.lenient = false;
    rs.pass = SH_MAX_PASSES + 1; /* a pass of its own */
    rc = translate(s, len, bind, &rs, out, out_len, e);
    vec_free(&rs.fns);
    vec_free(&rs.dims);
    vec_free(&rs.vals);
    return rc;
}

int stablehlo_import(const char *s, size_t len, const struct chip *chip,
                     const struct model_limits *l, struct model *m, struct err *e)
{
    return stablehlo_import_opts(s, len, chip, l, NULL, m, e);
}

int stablehlo_import_opts(const char *s, size_t len, const struct chip *chip,
                          const struct model_limits *l, const struct hlo_model_opts *o,
                          struct model *m, struct err *e)
{
    char *hlo;
    size_t n;
    int rc;

    memset(m, 0, sizeof(*m));
    if ((rc = stablehlo_to_hlo_bound(s, len, o != NULL ? o->bind : NULL, &hlo, &n, e)) != ERR_OK)
        return rc;
    if ((rc = hlo_import_opts(hlo, n, chip, l, o, m, e)) != ERR_OK) {
        err_prefix(e, "", "StableHLO translated to HLO: ");
    } else {
        m->source_format = "stablehlo";
        hlo_program_stablehlo(&m->program);
    }
    free(hlo);
    return rc;
}
