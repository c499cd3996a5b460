/*
 * budget.c - a plan's memory budget: parsed from text, resolved against the capacity
 * (budget.h). Decimal arithmetic throughout, so "0.9" of a capacity is exact.
 */
#include "planner/budget.h"

#include <string.h>

#define BUDGET_MAX_DECIMALS 6

static const char hint[] = "a byte count (14000000000, 14G, 14GiB: K/M/G/T are powers of 1024) "
                           "or a fraction of the capacity in (0, 1] (0.9)";

/* The multiplier a suffix names (K, M, G, T with an optional "iB" or "B"; none: 1), or 0
 * when the suffix is not one of these. */
static uint64_t suffix_multiplier(const char *s)
{
    static const char units[] = "KMGT";
    const char *u = *s != '\0' ? strchr(units, *s) : NULL;

    if (*s == '\0')
        return 1;
    if (u == NULL ||
        !(strcmp(s + 1, "") == 0 || strcmp(s + 1, "B") == 0 || strcmp(s + 1, "iB") == 0))
        return 0;
    return (uint64_t)1 << (10 * (1 + (u - units)));
}

/* Digits of s from *i into *v (at most max of them when max > 0); how many were read, or
 * -1 on overflow. */
static int read_digits(const char *s, size_t *i, uint64_t *v, int max)
{
    int n = 0;

    for (*v = 0; s[*i] >= '0' && s[*i] <= '9'; (*i)++, n++) {
        if ((max > 0 && n == max) || __builtin_mul_overflow(*v, 10, v) ||
            __builtin_add_overflow(*v, (uint64_t)(s[*i] - '0'), v))
            return -1;
    }
    return n;
}

int budget_parse(const char *s, struct budget *b, struct err *e)
{
    uint64_t whole = 0, frac = 0, den = 1, mul;
    size_t i = 0;
    int nw, nf = 0;
    bool point = false;

    memset(b, 0, sizeof(*b));
    if (s == NULL || strlen(s) > BUDGET_MAX_TEXT)
        return err_set(e, ERR_INVALID, "budget", "budget: expected %s", hint);
    nw = read_digits(s, &i, &whole, 0);
    if (nw >= 0 && s[i] == '.') {
        point = true;
        i++;
        nf = read_digits(s, &i, &frac, BUDGET_MAX_DECIMALS);
        for (int k = 0; k < nf; k++)
            den *= 10;
    }
    mul = suffix_multiplier(s + i);
    if (nw < 0 || nf < 0 || nw + nf == 0 || (point && nf == 0) || mul == 0)
        return err_set(e, ERR_INVALID, "budget", "budget: \"%.64s\" is not %s", s, hint);
    if (mul == 1 && (nf > 0 || whole <= 1)) { /* a fraction: 0.9, .5, 1, 1.0 */
        b->fraction = true;
        b->num = whole * den + frac;
        b->den = den;
        if (b->num == 0 || b->num > b->den)
            return err_set(e, ERR_INVALID, "budget",
                           "budget: a fraction of the capacity must be above 0 and at most 1, "
                           "got \"%.64s\"",
                           s);
        return ERR_OK;
    }
    /* whole x mul + frac x mul / den: frac < 10^6 and mul <= 2^40 keep the product in range */
    if (__builtin_mul_overflow(whole, mul, &b->bytes) ||
        __builtin_add_overflow(b->bytes, frac * mul / den, &b->bytes))
        return err_set(e, ERR_OVERFLOW, "budget", "budget: \"%.64s\" passes 2^64-1 bytes", s);
    if (b->bytes == 0)
        return err_set(e, ERR_INVALID, "budget", "budget: must be above 0 bytes, got \"%.64s\"", s);
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
