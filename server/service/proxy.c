/*
 * proxy.c - trusted proxy networks and the forwarded client address (proxy.h).
 */
#include "service/proxy.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

/* Parses address text s (NUL-terminated) into family and bytes; IPv4-mapped IPv6 becomes
 * IPv4, so a dual-stack listener's peers match IPv4 nets. 0, or -1 if s is no address. */
static int addr_parse(const char *s, int *family, uint8_t b[16])
{
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

    if (inet_pton(AF_INET, s, b) == 1) {
        *family = AF_INET;
        return 0;
    }
    if (inet_pton(AF_INET6, s, b) != 1)
        return -1;
    *family = AF_INET6;
    if (memcmp(b, mapped, sizeof(mapped)) == 0) {
        memmove(b, b + 12, 4);
        *family = AF_INET;
    }
    return 0;
}

static void addr_text(int family, const uint8_t b[16], char *out, size_t cap)
{
    if (inet_ntop(family, b, out, (socklen_t)cap) == NULL && cap > 0)
        out[0] = '\0';
}

static bool net_contains(const struct proxy_net *n, int family, const uint8_t b[16])
{
    unsigned full = n->prefix / 8, rest = n->prefix % 8;
    uint8_t mask;

    if (n->family != family || memcmp(n->addr, b, full) != 0)
        return false;
    if (rest == 0)
        return true;
    mask = (uint8_t)(0xffu << (8 - rest));
    return (n->addr[full] & mask) == (b[full] & mask);
}

static bool trusted_bytes(const struct proxy_nets *p, int family, const uint8_t b[16])
{
    for (size_t i = 0; i < p->n; i++)
        if (net_contains(&p->net[i], family, b))
            return true;
    return false;
}

/* One CIDR or bare address of n bytes at s (trimmed). */
static int net_parse(const char *s, size_t n, struct proxy_net *out)
{
    char buf[PROXY_ADDR_LEN + 8];
    char *slash;
    unsigned max, prefix;

    if (n == 0 || n >= sizeof(buf))
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    slash = strchr(buf, '/');
    if (slash != NULL)
        *slash = '\0';
    memset(out, 0, sizeof(*out));
    if (addr_parse(buf, &out->family, out->addr) != 0)
        return -1;
    max = out->family == AF_INET ? 32 : 128;
    prefix = max;
    if (slash != NULL) {
        const char *d = slash + 1;
        if (*d == '\0' || strlen(d) > 3)
            return -1;
        prefix = 0;
        for (; *d != '\0'; d++) {
            if (!isdigit((unsigned char)*d))
                return -1;
            prefix = prefix * 10 + (unsigned)(*d - '0');
        }
        if (prefix > max)
            return -1;
    }
    out->prefix = prefix;
    return 0;
}

int proxy_nets_add(struct proxy_nets *p, const char *list)
{
    const char *s = list;

    while (*s != '\0') {
        size_t n = strcspn(s, ",");
        const char *e = s + n;
        while (s < e && isspace((unsigned char)*s))
            s++;
        while (e > s && isspace((unsigned char)e[-1]))
            e--;
        if (p->n >= PROXY_MAX_NETS || net_parse(s, (size_t)(e - s), &p->net[p->n]) != 0)
            return -1;
        p->n++;
        s += strcspn(s, ",");
        if (*s == ',')
            s++;
    }
    return 0;
}

bool proxy_trusted(const struct proxy_nets *p, const char *addr)
{
    uint8_t b[16];
    int family;

    return addr != NULL && addr_parse(addr, &family, b) == 0 && trusted_bytes(p, family, b);
}

void proxy_sockaddr_text(const struct sockaddr *sa, char *out, size_t cap)
{
    uint8_t b[16];
    int family;

    if (cap == 0)
        return;
    out[0] = '\0';
    if (sa == NULL)
        return;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
        memcpy(b, &in->sin_addr, 4);
        family = AF_INET;
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
        char t[PROXY_ADDR_LEN];
        if (inet_ntop(AF_INET6, &in6->sin6_addr, t, sizeof(t)) == NULL ||
            addr_parse(t, &family, b) != 0)
            return;
    } else {
        return;
    }
    addr_text(family, b, out, cap);
}

/* The value of the for= parameter of one Forwarded element (s, n bytes), or NULL. */
static const char *forwarded_for(const char *s, size_t n, size_t *len)
{
    const char *end = s + n;

    while (s < end) {
        const char *pe = memchr(s, ';', (size_t)(end - s));
        if (pe == NULL)
            pe = end;
        while (s < pe && isspace((unsigned char)*s))
            s++;
        if (pe - s >= 4 && strncasecmp(s, "for=", 4) == 0) {
            *len = (size_t)(pe - s - 4);
            return s + 4;
        }
        s = pe + 1;
    }
    return NULL;
}

/* The address of one hop (s, n bytes): an X-Forwarded-For entry, or a Forwarded element's
 * for= value. Quotes, brackets and a port are stripped. 0, or -1 if it is no address. */
static int hop_addr(const char *s, size_t n, bool forwarded, int *family, uint8_t b[16])
{
    char buf[PROXY_ADDR_LEN];
    const char *e;

    if (forwarded && (s = forwarded_for(s, n, &n)) == NULL)
        return -1;
    e = s + n;
    while (s < e && isspace((unsigned char)*s))
        s++;
    while (e > s && isspace((unsigned char)e[-1]))
        e--;
    if (e - s >= 2 && *s == '"' && e[-1] == '"') {
        s++;
        e--;
    }
    if (s < e && *s == '[') {
        const char *close = memchr(s, ']', (size_t)(e - s));
        if (close == NULL)
            return -1;
        s++;
        e = close;
    } else {
        const char *colon = memchr(s, ':', (size_t)(e - s));
        /* One colon is IPv4 with a port; more is bare IPv6. */
        if (colon != NULL && memchr(colon + 1, ':', (size_t)(e - colon - 1)) == NULL)
            e = colon;
    }
    if (e <= s || (size_t)(e - s) >= sizeof(buf))
        return -1;
    memcpy(buf, s, (size_t)(e - s));
    buf[e - s] = '\0';
    return addr_parse(buf, family, b);
}

static bool blank(const char *s)
{
    if (s == NULL)
        return true;
    while (isspace((unsigned char)*s))
        s++;
    return *s == '\0';
}

void proxy_client_addr(const struct proxy_nets *p, const char *peer, const char *xff,
                       const char *forwarded, char *out, size_t cap)
{
    bool fwd = blank(xff);
    const char *list = fwd ? forwarded : xff;
    size_t end;

    if (cap == 0)
        return;
    snprintf(out, cap, "%s", peer != NULL ? peer : "");
    if (blank(list) || !proxy_trusted(p, peer))
        return;
    end = strlen(list);
    for (;;) {
        size_t start = end;
        uint8_t b[16];
        int family;
        while (start > 0 && list[start - 1] != ',')
            start--;
        if (hop_addr(list + start, end - start, fwd, &family, b) != 0)
            return; /* out keeps the last trusted hop */
        addr_text(family, b, out, cap);
        if (!trusted_bytes(p, family, b) || start == 0)
            return;
        end = start - 1;
    }
}
