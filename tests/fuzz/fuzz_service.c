/*
 * fuzz_service.c - libFuzzer target: the service's pure parsers of request headers, query
 * values and settings (reqparse.h, config.h) and of a plan's stored options (planopts.h).
 *
 * The input is split at NUL bytes into fields, and each field is given to every parser.
 * Properties: Prefer wait lies in [-1, max]; an accepted u64 is all digits; a value every
 * plan option accepts lies in its range (plan_opts_check) and a refusal says why; a
 * percent-encoding holds only unreserved characters and
 * %XX and decodes back to the field; an accepted request id is 1 to 64 characters of its
 * alphabet; a bearer token is a non-empty tail of its header;
 * "*" matches every entity tag; listen's host is NUL-terminated within its buffer; and
 * planopts' JSON is a fixed point after one parse (json . parse . json . parse =
 * json . parse).
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner/bytes.h"
#include "planner/plan_options.h"
#include "service/config.h"
#include "service/planopts.h"
#include "service/reqparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static void check_urlencode(const char *s)
{
    static char out[8192];
    size_t sl = strlen(s), j = 0;
    long n = reqparse_urlencode(s, out, sizeof(out));

    if (n < 0) {
        if (sl * 3 < sizeof(out))
            abort(); /* it always fits in three bytes a character */
        return;
    }
    if ((size_t)n >= sizeof(out) || out[n] != '\0')
        abort();
    for (long i = 0; i < n; i++, j++) {
        char c = out[i];
        if (c == '%') {
            if (i + 2 >= n)
                abort();
            int hi = hexval(out[i + 1]), lo = hexval(out[i + 2]);
            if (hi < 0 || lo < 0 || (unsigned char)s[j] != (unsigned)(hi << 4 | lo))
                abort();
            i += 2;
        } else if (!(isalnum((unsigned char)c) || strchr("-_.~", c) != NULL) || c != s[j]) {
            abort();
        }
    }
    if (j != sl)
        abort();
}

static void check_planopts(const char *s)
{
    static char buf1[4096], buf2[4096];
    struct plan_opts a, b;
    char *ja, *jb;

    if (planopts_parse(s, &a, buf1, sizeof(buf1), NULL) != 0)
        return;
    if ((ja = planopts_json(&a)) == NULL)
        return;
    if (planopts_parse(ja, &b, buf2, sizeof(buf2), NULL) != 0)
        abort();
    jb = planopts_json(&b);
    if (jb != NULL && strcmp(ja, jb) != 0)
        abort();
    free(ja);
    free(jb);
}

/* s as the value of every plan option (planner/plan_options.h), as a parameter would be. */
static void check_plan_options(const char *s)
{
    for (size_t i = 0; i < plan_opt_count(); i++) {
        struct plan_opts o = {0};
        struct err e;
        err_clear(&e);
        if (plan_opt_set(&o, plan_opt_at(i), plan_opt_at(i)->name, s, &e) != ERR_OK) {
            if (e.msg[0] == '\0')
                abort(); /* every refusal says why */
        } else if (plan_opts_check(&o, &e) != ERR_OK) {
            abort(); /* accepted, yet out of its own range */
        }
    }
}

static void check_field(const char *s)
{
    struct err e;
    uint64_t u;
    const char *t;
    char host[64];
    unsigned port;

    (void)reqparse_media_type(s);
    int w = reqparse_prefer_wait(s, 60);
    if (w < -1 || w > 60)
        abort();
    if (reqparse_u64(s, &u) == 0)
        for (const char *p = s; *p != '\0'; p++)
            if (!isdigit((unsigned char)*p))
                abort();
    check_plan_options(s);
    check_urlencode(s);
    (void)reqparse_etag_match(s, "\"abc\"");
    if (!reqparse_etag_match("*", s))
        abort();
    t = reqparse_bearer(s);
    if (t != NULL && (t < s || t >= s + strlen(s) || *t == '\0'))
        abort();
    if (reqparse_request_id(s)) {
        size_t n = strlen(s);
        if (n == 0 || n > 64 ||
            strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                      "0123456789-_.:") != n)
            abort();
    }
    err_clear(&e);
    if (bytes_parse("bytes", s, &u, &e) != ERR_OK && e.msg[0] == '\0')
        abort(); /* every refusal says why */
    if (config_listen_split(s, host, sizeof(host), &port) == 0 &&
        memchr(host, '\0', sizeof(host)) == NULL)
        abort();
    check_planopts(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy;

    if (size > 4096)
        return 0;
    copy = malloc(size + 1);
    if (copy == NULL)
        return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    for (size_t i = 0; i <= size;) {
        check_field(copy + i);
        i += strlen(copy + i) + 1;
    }
    free(copy);
    return 0;
}
