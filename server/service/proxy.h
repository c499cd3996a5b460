/*
 * proxy.h - trusted reverse proxies and the client address of a request.
 *
 * Behind a reverse proxy every connection comes from the proxy, so per-client limits and
 * logs must use the address the proxy forwards instead. That is only safe for peers the
 * operator trusts (--trusted-proxy CIDR): anyone else could send a made-up header. For a
 * trusted peer the client is the right-most address in X-Forwarded-For (or, when that
 * header is absent, in Forwarded's for= parameters) that is not itself a trusted proxy:
 * every proxy appends the address it received the request from, so the hops to the right
 * of it were written by proxies we trust and the ones to the left could be spoofed.
 *
 * Pure and allocation-free (unit-tested directly); the tables are filled once at start and
 * read concurrently afterwards.
 */
#ifndef TPUPLAN_PROXY_H
#define TPUPLAN_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"

struct sockaddr;

#define PROXY_MAX_NETS 32
#define PROXY_ADDR_LEN 46 /* INET6_ADDRSTRLEN: the longest address text, with its NUL */

struct proxy_net {
    int family;       /* AF_INET or AF_INET6 */
    uint8_t addr[16]; /* network byte order; 4 bytes used for AF_INET */
    unsigned prefix;  /* bits */
};

struct proxy_nets {
    struct proxy_net net[PROXY_MAX_NETS];
    size_t n;
};

/* Adds the comma-separated CIDRs (or bare addresses: a /32 or /128) in list to *p.
 * 0, or -1 when one is malformed or there are more than PROXY_MAX_NETS (then *p may hold
 * the ones before it). */
ERR_MUST_CHECK int proxy_nets_add(struct proxy_nets *p, const char *list);

/* True when the address text addr (IPv4, IPv6, or IPv4-mapped IPv6) is in one of p's nets. */
bool proxy_trusted(const struct proxy_nets *p, const char *addr);

/* The address of sa (AF_INET or AF_INET6; IPv4-mapped IPv6 is written as IPv4) as text
 * into out (cap >= PROXY_ADDR_LEN). "" for other families or a NULL sa. */
void proxy_sockaddr_text(const struct sockaddr *sa, char *out, size_t cap);

/*
 * The client address of a request from peer (address text, as proxy_sockaddr_text()
 * writes it) into out (cap >= PROXY_ADDR_LEN). xff and forwarded are the X-Forwarded-For
 * and Forwarded header values (all occurrences joined with ", "; NULL when absent),
 * borrowed. The peer itself unless it is trusted; then the right-most untrusted hop, or
 * the left-most hop when all are trusted. A hop that is not an address ("unknown", an
 * obfuscated identifier, garbage) stops the walk: the last trusted hop is the client.
 */
void proxy_client_addr(const struct proxy_nets *p, const char *peer, const char *xff,
                       const char *forwarded, char *out, size_t cap);

#endif
