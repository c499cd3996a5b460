/*
 * duration.c - a duration in text (duration.h): the number read by bytes.h's scanner (the
 * same digits, decimal point and six decimals), the unit split off first, since "m" is a
 * minute here and a mebibyte there.
 */
#include "planner/duration.h"

#include <string.h>

#include "planner/bytes.h"

#define DURATION_MAX_TEXT 64

static const char grammar[] = "a duration (2, 2s, 500ms, 1.5m: seconds unless ms, s, m or h "
                              "follows; at most 6 decimals)";

static const struct {
    const char *name;
    double seconds;
} units[] = {{"", 1}, {"ms", 0.001}, {"s", 1}, {"m", 60}, {"h", 3600}};

int duration_parse(const char *field, const char *s, double *seconds, struct err *e)
{
    char num[DURATION_MAX_TEXT + 1];
    struct bytes_text t;
    struct err scan;
    size_t n;

    if (s == NULL)
        return err_set(e, ERR_INVALID, field, "%s: expected %s", field, grammar);
    n = strspn(s, "0123456789.");
    if (n <= DURATION_MAX_TEXT) {
        memcpy(num, s, n);
        num[n] = '\0';
        for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
            if (strcmp(s + n, units[u].name) != 0)
                continue;
            /* the digits alone: bytes_scan refuses what is not a number here */
            if (bytes_scan(field, num, &t, &scan) != ERR_OK || t.unit)
                break;
            *seconds = ((double)t.whole + (double)t.frac / (double)t.den) * units[u].seconds;
            return ERR_OK;
        }
    }
    return err_set(e, ERR_INVALID, field, "%s: \"%.64s\" is not %s", field, s, grammar);
}
