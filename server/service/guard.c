/*
 * guard.c - the cross-site submission rule and the Host check (guard.h).
 */
#include "service/guard.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "service/apikey.h"

bool guard_submission_ok(enum body_kind kind, const char *client, const char *authorization)
{
    char prefix[APIKEY_PREFIX_LEN + 1];

    if (kind != BODY_TEXT && kind != BODY_MULTIPART)
        return true;
    return client != NULL || apikey_parse(reqparse_bearer(authorization), prefix);
}

/* The host of an authority "host[:port]" or "[v6][:port]" (n bytes at a) into out
 * (GUARD_HOST_MAX): lower case, without brackets, port or a trailing dot; *literal says
 * whether it is an address. 0, or -1 when empty, malformed or too long. */
static int authority_host(const char *a, size_t n, char *out, bool *literal)
{
    const char *end = a + n, *colon;
    unsigned char buf[16];
    size_t hl;

    *literal = false;
    if (n > 0 && a[0] == '[') {
        const char *close = memchr(a, ']', n);
        if (close == NULL || (close + 1 != end && close[1] != ':'))
            return -1;
        a++;
        hl = (size_t)(close - a);
        *literal = true;
    } else {
        colon = memchr(a, ':', n);
        hl = colon != NULL ? (size_t)(colon - a) : n;
    }
    if (hl == 0 || hl >= GUARD_HOST_MAX)
        return -1;
    for (size_t i = 0; i < hl; i++)
        out[i] = (char)tolower((unsigned char)a[i]);
    out[hl] = '\0';
    if (*literal)
        return inet_pton(AF_INET6, out, buf) == 1 ? 0 : -1;
    if (hl > 1 && out[hl - 1] == '.')
        out[hl - 1] = '\0';
    *literal = inet_pton(AF_INET, out, buf) == 1;
    return 0;
}

int guard_url_host(const char *url, char *out)
{
    size_t skip, n;
    const char *at;
    bool literal;

    if (url == NULL)
        return -1;
    if (strncasecmp(url, "http://", 7) == 0)
        skip = 7;
    else if (strncasecmp(url, "https://", 8) == 0)
        skip = 8;
    else
        return -1;
    url += skip;
    n = strcspn(url, "/?#");
    at = memchr(url, '@', n); /* user info, if any, is no part of the host */
    if (at != NULL) {
        n -= (size_t)(at + 1 - url);
        url = at + 1;
    }
    return authority_host(url, n, out, &literal);
}

/* localhost and its subdomains always name the loopback interface (RFC 6761 6.3; browsers
 * resolve them so without asking DNS), so no attacker's page can be served under them. */
static bool localhost_name(const char *h)
{
    size_t n = strlen(h);
    return strcmp(h, "localhost") == 0 || (n > 10 && strcmp(h + n - 10, ".localhost") == 0);
}

bool guard_loopback(const char *host)
{
    unsigned char a[16];

    if (host == NULL)
        return false;
    if (localhost_name(host))
        return true;
    if (inet_pton(AF_INET, host, a) == 1)
        return a[0] == 127;
    return inet_pton(AF_INET6, host, a) == 1 && memcmp(a, &in6addr_loopback, sizeof(a)) == 0;
}

bool guard_host_ok(const char *public_host, bool loopback_listen, const char *host, bool via_proxy)
{
    char name[GUARD_HOST_MAX];
    bool literal;

    if (host == NULL)
        return true; /* HTTP/1.0 without Host: no browser sends that */
    if (authority_host(host, strlen(host), name, &literal) != 0)
        return false;
    if (literal || localhost_name(name))
        return true;
    if (public_host != NULL && public_host[0] != '\0')
        return strcmp(name, public_host) == 0;
    return !loopback_listen || via_proxy;
}
