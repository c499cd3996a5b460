/*
 * guard.h - what another site can make a visitor's browser send, and the two checks that
 * refuse it.
 *
 * Cross-site submissions (CSRF). A page on another site can make a browser send a request
 * here without asking first (no CORS preflight) only if it is "simple" (Fetch standard):
 * its body text/plain, multipart/form-data or application/x-www-form-urlencoded, and no
 * header of its own. This server answers no preflight, so a request with any other media
 * type or header comes from the dashboard, a program or a page of this origin.
 * guard_submission_ok() lets a plan-creating body of one of those types through only with
 * the dashboard's TPUplan-Client header (auth.h) or an API key (Authorization: Bearer
 * tpk_..., which no browser attaches by itself). JSON, CSV and octet-stream bodies need
 * neither: a browser would preflight them, and the preflight fails. (A urlencoded body is
 * 415 in any case.)
 *
 * DNS rebinding. A page on attacker.example whose name is made to resolve to this server's
 * address becomes, to the browser, the same origin as the server, and may then read and send
 * anything; its requests carry Host: attacker.example. guard_host_ok() refuses a Host that
 * names no name of this server: with --public-url, any name but its host; without it, on a
 * server that listens on a loopback address (`make run`), any name but localhost. An
 * address literal (127.0.0.1:8080, [::1]) names no attacker and always passes, as does
 * localhost; so do requests without a Host (HTTP/1.0). A server listening on every address
 * without --public-url cannot know its names and checks none.
 *
 * Behind a reverse proxy the Host is what the proxy sends: without --public-url, requests
 * from a --trusted-proxy peer are not held to the loopback rule (the proxy chose to route
 * them here); with it, they are held to it like any other.
 *
 * Pure (no I/O, no state): unit-tested directly.
 */
#ifndef TPUPLAN_GUARD_H
#define TPUPLAN_GUARD_H

#include <stdbool.h>
#include <stddef.h>

#include "planner/err.h"
#include "service/reqparse.h"

/* Whether a plan-creating request with a body of kind may go on: any kind but text/plain
 * and multipart, or one of those with a TPUplan-Client header (client: its value, NULL
 * when absent) or an API key in authorization (the Authorization header, NULL when absent). */
bool guard_submission_ok(enum body_kind kind, const char *client, const char *authorization);

#define GUARD_HOST_MAX 256 /* bytes of a host name, with its NUL */

/* The host of an absolute http(s) URL (--public-url: "https://plans.example.org/tpuplan"),
 * lower case, without port, brackets or a trailing dot, into out (GUARD_HOST_MAX bytes).
 * 0, or -1 when url is not http:// or https:// followed by a host. */
ERR_MUST_CHECK int guard_url_host(const char *url, char *out);

/* True when host (without port) names a loopback address: localhost, *.localhost,
 * 127.0.0.0/8, ::1. For --listen's host. */
bool guard_loopback(const char *host);

/* The Host check (above). public_host: guard_url_host() of --public-url, "" when unset;
 * loopback_listen: guard_loopback() of --listen's host; host: the Host header (NULL:
 * none); via_proxy: the peer is a --trusted-proxy. */
bool guard_host_ok(const char *public_host, bool loopback_listen, const char *host, bool via_proxy);

#endif
