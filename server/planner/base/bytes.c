/*
 * bytes.c - a byte count in text (bytes.h): exact decimal arithmetic, checked against
 * 2^64-1 (arith.h).
 */
#include "planner/bytes.h"

#include <string.h>

#include "planner/arith.h"

static const char grammar[] = "a byte count (12, 64M, 1.5GiB: K/M/G/T are powers of 1024)";

/* The multiplier of the unit at s (bytes.h's grammar; "" is 1), or 0 when s is not one. */
static uint64_t unit_multiplier(const char *s)
{
    static const char units[] = "KMGT";
    const char *u;

    if (*s == '\0' || strcmp(s, "B") == 0)
        return 1;
    u = strchr(units, *s >= 'a' && *s <= 'z' ? *s - 'a' + 'A' : *s);
    if (u == NULL || *u == '\0')
        return 0;
    s++;
    if (*s == 'i')
        s++;
    if (*s == 'B')
        s++;
    return *s == '\0' ? (uint64_t)1 << (10 * (1 + (u - units))) : 0;
}

/* Digits of s from *i into *v (at most max of them when max > 0); how many were read, -1
 * past max digits, -2 past 2^64-1. */
static int read_digits(const char *s, size_t *i, uint64_t *v, int max)
{
    int n = 0;

    for (*v = 0; s[*i] >= '0' && s[*i] <= '9'; (*i)++, n++) {
        if (max > 0 && n == max)
            return -1;
        if (arith_mul(*v, 10, v) || arith_add(*v, (uint64_t)(s[*i] - '0'), v))
            return -2;
    }
    return n;
}

int bytes_scan(const char *field, const char *s, struct bytes_text *t, struct err *e)
{
    size_t i = 0;
    int nw, nf = 0;

    memset(t, 0, sizeof(*t));
    t->den = 1;
    if (s == NULL)
        return err_set(e, ERR_INVALID, field, "%s: expected %s", field, grammar);
    nw = read_digits(s, &i, &t->whole, 0);
    if (nw >= 0 && s[i] == '.') {
        t->point = true;
        i++;
        nf = read_digits(s, &i, &t->frac, BYTES_MAX_DECIMALS);
        for (int k = 0; k < nf; k++)
            t->den *= 10;
    }
    if (nw == -2)
        return err_set(e, ERR_OVERFLOW, field, "%s: \"%.64s\" passes 2^64-1 bytes", field, s);
    if (nf == -1)
        return err_set(e, ERR_INVALID, field, "%s: \"%.64s\" has more than %d decimals", field, s,
                       BYTES_MAX_DECIMALS);
    t->mul = unit_multiplier(s + i);
    t->unit = s[i] != '\0';
    if (nw + nf == 0 || (t->point && nf == 0) || t->mul == 0)
        return err_set(e, ERR_INVALID, field, "%s: \"%.64s\" is not %s", field, s, grammar);
    return ERR_OK;
}

int bytes_value(const char *field, const char *s, const struct bytes_text *t, uint64_t *out,
                struct err *e)
{
    uint64_t part;

    /* frac < 10^6 and mul <= 2^40 keep frac x mul below 2^60 */
    part = t->frac * t->mul;
    if (part % t->den != 0)
        return err_set(e, ERR_INVALID, field,
                       "%s: \"%.64s\" is not a whole number of bytes (fractions of a byte are "
                       "refused, not rounded)",
                       field, s);
    if (arith_mul(t->whole, t->mul, out) || arith_add(*out, part / t->den, out))
        return err_set(e, ERR_OVERFLOW, field, "%s: \"%.64s\" passes 2^64-1 bytes", field, s);
    return ERR_OK;
}

int bytes_parse(const char *field, const char *s, uint64_t *out, struct err *e)
{
    struct bytes_text t;
    int rc = bytes_scan(field, s, &t, e);

    return rc != ERR_OK ? rc : bytes_value(field, s, &t, out, e);
}

int bytes_check_slip(const char *field, const char *s, const struct bytes_text *t, uint64_t v,
                     struct err *e)
{
    if (t->unit || v == 0 || v >= BYTES_SLIP_BELOW)
        return ERR_OK;
    return err_set(e, ERR_INVALID, field,
                   "%s: \"%.64s\" has no unit, so it is %llu bytes, below 1 MiB: likely a slip "
                   "(write %.64sB if you mean bytes, or give a unit: 16G, 512M)",
                   field, s, (unsigned long long)v, s);
}
