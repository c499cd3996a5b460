/*
 * conninfo.c - a database URL or conninfo with its passwords masked (conninfo.h).
 */
#include "service/conninfo.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MASK "***"

/* The output: every input byte is written at most once and each secret value becomes MASK
 * once, so 2 * n + sizeof MASK bytes always hold it (a secret has at least "password=" or
 * ":" and "@" around it, more bytes than MASK). */
struct out {
    char *p;
    size_t len, cap;
};

static void put(struct out *o, const char *s, size_t n)
{
    if (o->len + n >= o->cap) /* never, by the bound above; kept safe regardless */
        n = o->cap - 1 - o->len;
    memcpy(o->p + o->len, s, n);
    o->len += n;
    o->p[o->len] = '\0';
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Whether key (n bytes; percent-decoded first when pct, as libpq decodes a URI's
 * parameters) names a secret. */
static bool secret_key(const char *key, size_t n, bool pct)
{
    static const char *const secrets[] = {"password", "sslpassword"};
    char k[16];
    size_t kl = 0;

    for (size_t i = 0; i < n; i++) {
        char c = key[i];
        if (pct && c == '%' && i + 2 < n && hexval(key[i + 1]) >= 0 && hexval(key[i + 2]) >= 0) {
            c = (char)(hexval(key[i + 1]) * 16 + hexval(key[i + 2]));
            i += 2;
        }
        if (kl == sizeof(k) - 1)
            return false;
        k[kl++] = c;
    }
    k[kl] = '\0';
    for (size_t i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++)
        if (strcmp(k, secrets[i]) == 0)
            return true;
    return false;
}

/* A URI's text from s on: its "?" and "&" separated pieces, a secret's value masked. */
static void uri_params(struct out *o, const char *s)
{
    while (*s != '\0') {
        size_t n = strcspn(s + 1, "?&") + 1; /* the piece, with its leading separator */
        const char *eq = memchr(s, '=', n);
        size_t ks = (*s == '?' || *s == '&') ? 1 : 0;

        if (eq != NULL && secret_key(s + ks, (size_t)(eq - s) - ks, true)) {
            put(o, s, (size_t)(eq - s) + 1);
            put(o, MASK, strlen(MASK));
        } else {
            put(o, s, n);
        }
        s += n;
    }
}

/* scheme:// (already written) then rest: the user information's password, then any
 * secret parameter. */
static void uri_masked(struct out *o, const char *rest)
{
    const char *at = strrchr(rest, '@');
    const char *colon = strchr(rest, ':');

    if (at != NULL && colon != NULL && colon < at) {
        put(o, rest, (size_t)(colon - rest) + 1);
        put(o, MASK, strlen(MASK));
        rest = at;
    }
    uri_params(o, rest);
}

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* The end of the value at s (libpq's conninfo_parse: bare up to a blank, or in single
 * quotes; a backslash escapes the next byte in both), or NULL when a quote is not closed. */
static const char *value_end(const char *s)
{
    bool quoted = *s == '\'';

    if (quoted)
        s++;
    while (*s != '\0') {
        if (*s == '\\' && s[1] != '\0') {
            s += 2;
            continue;
        }
        if (quoted && *s == '\'')
            return s + 1;
        if (!quoted && blank(*s))
            return s;
        s++;
    }
    return quoted ? NULL : s;
}

/* key = value pairs: each written as it is, a secret's value masked; from where the text
 * stops parsing, masked. */
static void pairs_masked(struct out *o, const char *s)
{
    const char *k = s;

    for (;;) {
        const char *eq, *v, *end;
        size_t kl;

        k = s;
        while (blank(*s))
            s++;
        if (*s == '\0') {
            put(o, k, (size_t)(s - k));
            return;
        }
        kl = strcspn(s, "= \t\n\r\f\v");
        eq = s + kl;
        while (blank(*eq))
            eq++;
        if (kl == 0 || *eq != '=')
            break;
        v = eq + 1;
        while (blank(*v))
            v++;
        end = value_end(v);
        if (end == NULL)
            break;
        put(o, k, (size_t)(v - k));
        if (secret_key(s, kl, false))
            put(o, MASK, strlen(MASK));
        else
            put(o, v, (size_t)(end - v));
        s = end;
    }
    put(o, k, (size_t)(s - k));
    put(o, MASK, strlen(MASK));
}

char *conninfo_masked(const char *conninfo)
{
    static const char *const schemes[] = {"postgresql://", "postgres://"};
    size_t n = strlen(conninfo);
    struct out o = {malloc(2 * n + sizeof(MASK)), 0, 2 * n + sizeof(MASK)};

    if (o.p == NULL)
        return NULL;
    o.p[0] = '\0';
    for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
        size_t sl = strlen(schemes[i]);
        if (strncmp(conninfo, schemes[i], sl) == 0) {
            put(&o, conninfo, sl);
            uri_masked(&o, conninfo + sl);
            return o.p;
        }
    }
    if (strchr(conninfo, '=') != NULL)
        pairs_masked(&o, conninfo);
    else
        put(&o, conninfo, n); /* a database name */
    return o.p;
}
