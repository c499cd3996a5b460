/*
 * static_files.h - the dashboard's files (and /vendor/ libraries) from a directory.
 *
 * A root is a directory file descriptor opened at start; each request opens the file
 * relative to it with openat(O_NOFOLLOW) after static_path_ok() rejected traversal
 * (".." or any dot-segment, backslashes, empty segments, control characters). The url MHD
 * passes is already percent-decoded, so "%2e%2e%2f" arrives here as "../" and is refused.
 * Only regular files are served; MHD sends them with sendfile().
 */
#ifndef TPUPLAN_STATIC_FILES_H
#define TPUPLAN_STATIC_FILES_H

#include <stdbool.h>

#include <microhttpd.h>

struct static_root {
    int dirfd; /* -1 when the directory does not exist (every file is then 404) */
};

/* Opens dir; a missing directory is not an error (dirfd = -1). */
void static_root_open(struct static_root *r, const char *dir);
void static_root_close(struct static_root *r);

/* True when path (relative, no leading '/') is safe to open under a root. */
bool static_path_ok(const char *path);

/* Content-Type for a file name by extension; "application/octet-stream" when unknown. */
const char *static_mime(const char *path);

/*
 * Builds the response for path under r: 200 with the file, 304 when if_none_match matches
 * its ETag, or 404 (*status says which; resp is NULL for 404 so the caller answers with a
 * problem). The caller owns the returned response.
 */
struct MHD_Response *static_serve(const struct static_root *r, const char *path,
                                  const char *if_none_match, int *status);

#endif
