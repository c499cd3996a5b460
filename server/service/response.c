/*
 * response.c - response constructors with the security headers.
 */
#include "service/response.h"

#include <stdlib.h>

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
