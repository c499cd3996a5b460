/*
 * static_files.c - static file serving.
 */
#include "service/static_files.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "service/reqparse.h"
#include "service/response.h"

#define STATIC_PATH_MAX 1024

void static_root_open(struct static_root *r, const char *dir)
{
    r->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

void static_root_close(struct static_root *r)
{
    if (r->dirfd >= 0)
        close(r->dirfd);
    r->dirfd = -1;
}

bool static_path_ok(const char *path)
{
    const char *seg = path;
    size_t n = 0;

    if (path[0] == '\0' || path[0] == '/')
        return false;
    for (const char *p = path;; p++, n++) {
        unsigned char c = (unsigned char)*p;
        if (n >= STATIC_PATH_MAX || c == '\\' || (c != '\0' && c < 0x20) || c == 0x7f)
            return false;
        if (c == '/' || c == '\0') {
            /* Empty segments and dot-segments ("..", ".", hidden files) are refused. */
            if (p == seg || seg[0] == '.')
                return false;
            if (c == '\0')
                return true;
            seg = p + 1;
        }
    }
}

const char *static_mime(const char *path)
{
    static const struct {
        const char *ext, *type;
    } types[] = {
        {"html", "text/html; charset=utf-8"},
        {"js", "text/javascript; charset=utf-8"},
        {"mjs", "text/javascript; charset=utf-8"},
        {"css", "text/css; charset=utf-8"},
        {"json", "application/json"},
        {"svg", "image/svg+xml"},
        {"png", "image/png"},
        {"ico", "image/x-icon"},
        {"woff2", "font/woff2"},
        {"map", "application/json"},
        {"txt", "text/plain; charset=utf-8"},
        {"csv", "text/csv; charset=utf-8"},
        {"safetensors", "application/octet-stream"},
    };
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash != NULL ? slash : path, '.');
    size_t i;

    if (dot != NULL)
        for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
            if (strcasecmp(dot + 1, types[i].ext) == 0)
                return types[i].type;
    return "application/octet-stream";
}

static bool is_html(const char *path)
{
    size_t n = strlen(path);
    return n >= 5 && strcasecmp(path + n - 5, ".html") == 0;
}

struct MHD_Response *static_serve(const struct static_root *r, const char *path,
                                  const char *if_none_match, int *status)
{
    struct MHD_Response *resp = NULL;
    struct stat st;
    char etag[64], lm[64];
    struct tm tm;
    int fd = -1;

    *status = 404;
    if (r->dirfd < 0 || !static_path_ok(path))
        goto out;
    fd = openat(r->dirfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        goto out;
    /* Size and nanosecond mtime identify a version of a file well enough for a cache. */
    snprintf(etag, sizeof(etag), "\"%llx-%llx%09lx\"", (unsigned long long)st.st_size,
             (unsigned long long)st.st_mtim.tv_sec, (unsigned long)st.st_mtim.tv_nsec);
    gmtime_r(&st.st_mtim.tv_sec, &tm);
    strftime(lm, sizeof(lm), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    if (reqparse_etag_match(if_none_match, etag)) {
        /* not request_reply_not_modified(): this 304 also repeats the file's Last-Modified
         * and Cache-Control below, as the 200 sends them */
        *status = 304;
        resp = response_not_modified(etag);
    } else {
        *status = 200;
        resp = MHD_create_response_from_fd((uint64_t)st.st_size, fd);
        if (resp == NULL)
            goto out;
        fd = -1; /* the response owns it now */
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, static_mime(path));
        response_secure(resp);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag);
    }
    if (resp == NULL)
        goto out;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_LAST_MODIFIED, lm);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
                            is_html(path) ? "no-cache" : "public, max-age=300");
out:
    if (fd >= 0)
        close(fd);
    return resp;
}
