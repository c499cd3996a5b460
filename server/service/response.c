/*
 * response.c - response constructors with the security headers.
 */
#include "service/response.h"

#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

void response_secure(struct MHD_Response *resp)
{
    MHD_add_response_header(resp, "Content-Security-Policy", RESPONSE_CSP);
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(resp, "X-Frame-Options", "DENY");
}

static struct MHD_Response *response_finish(struct MHD_Response *resp, const char *ctype)
{
    if (resp == NULL)
        return NULL;
    if (ctype != NULL)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    response_secure(resp);
    return resp;
}

struct MHD_Response *response_take(char *body, size_t len, const char *ctype)
{
    struct MHD_Response *resp;

    if (body == NULL)
        return response_finish(MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT),
                               ctype);
    resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (resp == NULL)
        free(body);
    return response_finish(resp, ctype);
}

/* What a parts response reads from (response_parts). */
struct parts {
    struct response_part part[RESPONSE_PARTS_MAX];
    size_t n;
    void (*release)(void *owner);
    void *owner;
};

/* MHD's content reader: up to max bytes from offset pos of the parts' concatenation. */
static ssize_t parts_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    const struct parts *ps = cls;
    size_t i = 0, done = 0;

    for (; i < ps->n && pos >= ps->part[i].len; i++)
        pos -= ps->part[i].len;
    for (; i < ps->n && done < max; i++, pos = 0) {
        size_t k = ps->part[i].len - (size_t)pos;
        if (k > max - done)
            k = max - done;
        memcpy(buf + done, ps->part[i].p + pos, k);
        done += k;
    }
    return done > 0 ? (ssize_t)done : MHD_CONTENT_READER_END_OF_STREAM;
}

static void parts_free(void *cls)
{
    struct parts *ps = cls;

    ps->release(ps->owner);
    free(ps);
}

struct MHD_Response *response_parts(const struct response_part *parts, size_t n, const char *ctype,
                                    void (*release)(void *owner), void *owner)
{
    struct parts *ps = n <= RESPONSE_PARTS_MAX ? calloc(1, sizeof(*ps)) : NULL;
    struct MHD_Response *resp;
    uint64_t total = 0;

    if (ps == NULL) {
        release(owner);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        ps->part[i] = parts[i];
        total += parts[i].len;
    }
    ps->n = n;
    ps->release = release;
    ps->owner = owner;
    /* 256 KiB a read: few calls for a large body, little memory per connection */
    resp = MHD_create_response_from_callback(total, 256 * 1024, parts_read, ps, parts_free);
    if (resp == NULL)
        parts_free(ps);
    return response_finish(resp, ctype);
}

struct MHD_Response *response_copy(const char *body, size_t len, const char *ctype)
{
    return response_finish(
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY), ctype);
}

struct MHD_Response *response_not_modified(const char *etag)
{
    struct MHD_Response *resp = response_copy("", 0, NULL);

    if (resp != NULL)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag);
    return resp;
}

struct MHD_Response *response_problem(enum problem_id id, const char *base, const char *detail,
                                      const char *where, const char *instance)
{
    size_t len = 0;
    char *p = problem_json(id, base, detail, where, instance, &len);
    struct MHD_Response *resp;

    if (p == NULL)
        return NULL;
    resp = response_take(p, len, PROBLEM_MEDIA_TYPE);
    if (resp != NULL && problem_types[id].retry_after != NULL)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, problem_types[id].retry_after);
    return resp;
}
