/*
 * budget.c - a plan's memory budget: parsed from text, resolved against the capacity
 * (budget.h). Decimal arithmetic throughout, so "0.9" of a capacity is exact; the byte form
 * is bytes.h's one grammar.
 */
#include "planner/budget.h"

#include <string.h>

#include "planner/bytes.h"

static const char hint[] = "a byte count (14000000000, 14G, 14GiB: K/M/G/T are powers of 1024) "
                           "or a fraction of the capacity (90%, 0.9)";

/* "N%": N a decimal in (0, 100] (bytes.h's number, at most 6 decimals), as num / den of the
 * capacity. ERR_NOTFOUND when s does not end in "%". */
static int parse_percent(const char *field, const char *s, struct budget *b, struct err *e)
{
    size_t n = strlen(s);
    char num[BUDGET_MAX_TEXT + 1];
    struct bytes_text t;
    struct err scan;

    if (n == 0 || s[n - 1] != '%')
        return ERR_NOTFOUND;
    memcpy(num, s, n - 1);
    num[n - 1] = '\0';
    if (bytes_scan(field, num, &t, &scan) != ERR_OK || t.unit)
        return err_set(e, ERR_INVALID, field, "%s: \"%.64s\" is not %s", field, s, hint);
    b->fraction = true;
    b->den = t.den * 100; /* at most 10^8 */
    b->num = t.whole <= 100 ? t.whole * t.den + t.frac : 0;
    if (b->num == 0 || b->num > b->den)
        return err_set(e, ERR_INVALID, field,
                       "%s: a share of the capacity must be above 0%% and at most 100%%, got "
                       "\"%.64s\"",
                       field, s);
    return ERR_OK;
}

int budget_parse(const char *field, const char *s, struct budget *b, struct err *e)
{
    struct bytes_text t;
    int rc;

    memset(b, 0, sizeof(*b));
    if (s == NULL || strlen(s) > BUDGET_MAX_TEXT)
        return err_set(e, ERR_INVALID, field, "%s: expected %s", field, hint);
    if ((rc = parse_percent(field, s, b, e)) != ERR_NOTFOUND)
        return rc;
    rc = bytes_scan(field, s, &t, e);
    if (rc == ERR_INVALID)
        return err_set(e, ERR_INVALID, field, "%s: \"%.64s\" is not %s", field, s, hint);
    if (rc != ERR_OK)
        return rc;
    if (!t.unit && !t.point && t.whole == 1) /* all of it, or one byte? */
        return err_set(e, ERR_INVALID, field,
                       "%s: \"1\" is ambiguous: write 100%% (or 1.0) for all of the capacity, "
                       "or 1B for one byte",
                       field);
    if (!t.unit && t.point) { /* a fraction: 0.9, .5, 1.0 */
        b->fraction = true;
        b->den = t.den;
        b->num = t.whole <= 1 ? t.whole * t.den + t.frac : 0; /* 0: refused next */
        if (b->num == 0 || b->num > b->den)
            return err_set(e, ERR_INVALID, field,
                           "%s: a fraction of the capacity must be above 0 and at most 1, "
                           "got \"%.64s\"",
                           field, s);
        return ERR_OK;
    }
    if ((rc = bytes_value(field, s, &t, &b->bytes, e)) != ERR_OK ||
        (rc = bytes_check_slip(field, s, &t, b->bytes, e)) != ERR_OK)
        return rc;
    if (b->bytes == 0)
        return err_set(e, ERR_INVALID, field, "%s: must be above 0 bytes, got \"%.64s\"", field, s);
    return ERR_OK;
}

int budget_bytes(const struct budget *b, uint64_t capacity, uint64_t *out, struct err *e)
{
    if (!b->fraction) {
        *out = b->bytes;
        return ERR_OK;
    }
    if (capacity == 0)
        return err_set(e, ERR_INVALID, "budget",
                       "budget: a fraction needs a capacity to take it of (give a chip or a "
                       "capacity, or a budget in bytes)");
    /* floor(capacity x num / den) without overflow: num <= den <= 10^6 */
    *out = capacity / b->den * b->num + capacity % b->den * b->num / b->den;
    return ERR_OK;
}
