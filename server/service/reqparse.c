/*
 * reqparse.c - request header and parameter parsers.
 */
#include "service/reqparse.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Compares the media type (up to ';' or whitespace) of ct with type, case-insensitively. */
static bool media_is(const char *ct, size_t n, const char *type)
{
    return strlen(type) == n && strncasecmp(ct, type, n) == 0;
}

enum body_kind reqparse_media_type(const char *ct)
{
    size_t n;

    if (ct == NULL)
        return BODY_NONE;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    for (n = 0; ct[n] != '\0' && ct[n] != ';' && ct[n] != ' ' && ct[n] != '\t'; n++)
        ;
    if (n == 0)
        return BODY_NONE;
    if (media_is(ct, n, "application/json"))
        return BODY_JSON;
    if (n > 17 && strncasecmp(ct, "application/", 12) == 0 &&
        strncasecmp(ct + n - 5, "+json", 5) == 0)
        return BODY_JSON;
    if (media_is(ct, n, "application/octet-stream"))
        return BODY_SAFETENSORS;
    if (media_is(ct, n, "text/csv"))
        return BODY_CSV;
    if (media_is(ct, n, "multipart/form-data"))
        return BODY_MULTIPART;
    if (media_is(ct, n, "text/plain"))
        return BODY_TEXT;
    return BODY_UNSUPPORTED;
}

int reqparse_prefer_wait(const char *prefer, unsigned max)
{
    const char *p = prefer;
    int found = -1;

    if (p == NULL)
        return -1;
    while (*p != '\0') {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (strncasecmp(p, "wait", 4) == 0) {
            const char *q = p + 4;
            while (*q == ' ' || *q == '\t')
                q++;
            if (*q == '=') {
                q++;
                while (*q == ' ' || *q == '\t')
                    q++;
                if (*q == '"')
                    q++;
                if (isdigit((unsigned char)*q)) {
                    unsigned long v = 0;
                    while (isdigit((unsigned char)*q)) {
                        if (v < 100000)
                            v = v * 10 + (unsigned long)(*q - '0');
                        q++;
                    }
                    if (*q == '"')
                        q++;
                    if (*q == '\0' || *q == ',' || *q == ';' || *q == ' ' || *q == '\t')
                        found = v > max ? (int)max : (int)v;
                }
            }
        }
        /* Skip to the next preference. */
        while (*p != '\0' && *p != ',')
            p++;
    }
    return found;
}

int reqparse_u64(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (s == NULL || !isdigit((unsigned char)s[0]))
        return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

long reqparse_urlencode(const char *s, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;

    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            if (n + 1 >= cap)
                return -1;
            out[n++] = (char)c;
        } else {
            if (n + 3 >= cap)
                return -1;
            out[n++] = '%';
            out[n++] = hex[c >> 4];
            out[n++] = hex[c & 15];
        }
    }
    if (n >= cap)
        return -1;
    out[n] = '\0';
    return (long)n;
}

bool reqparse_etag_match(const char *inm, const char *etag)
{
    size_t el;

    if (inm == NULL || etag == NULL)
        return false;
    if (strncmp(etag, "W/", 2) == 0)
        etag += 2;
    el = strlen(etag);
    while (*inm != '\0') {
        while (*inm == ' ' || *inm == '\t' || *inm == ',')
            inm++;
        if (*inm == '*')
            return true;
        if (strncmp(inm, "W/", 2) == 0)
            inm += 2;
        if (strncmp(inm, etag, el) == 0 &&
            (inm[el] == '\0' || inm[el] == ',' || inm[el] == ' ' || inm[el] == '\t'))
            return true;
        while (*inm != '\0' && *inm != ',')
            inm++;
    }
    return false;
}

const char *reqparse_bearer(const char *auth)
{
    if (auth == NULL)
        return NULL;
    while (*auth == ' ')
        auth++;
    if (strncasecmp(auth, "Bearer", 6) != 0 || (auth[6] != ' ' && auth[6] != '\t'))
        return NULL;
    auth += 6;
    while (*auth == ' ' || *auth == '\t')
        auth++;
    return *auth != '\0' ? auth : NULL;
}

/* True when s is min to max characters, each a letter, a digit or one of extra. */
static bool token_of(const char *s, size_t min, size_t max, const char *extra)
{
    size_t n = 0;

    if (s == NULL)
        return false;
    for (; s[n] != '\0'; n++)
        if (n >= max || !(isalnum((unsigned char)s[n]) || strchr(extra, s[n]) != NULL))
            return false;
    return n >= min;
}

bool reqparse_request_id(const char *s)
{
    return token_of(s, 1, 64, "-_.:");
}

bool reqparse_client_token(const char *s)
{
    return token_of(s, REQPARSE_CLIENT_MIN, REQPARSE_CLIENT_MAX, "-_");
}
