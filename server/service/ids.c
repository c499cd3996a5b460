/*
 * ids.c - random identifiers in URL-safe base64 (RFC 4648 section 5, no padding).
 */
#include "service/ids.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* getrandom() may return early on a signal; small requests never return short otherwise,
 * but the loop costs nothing. */
static int random_fill(unsigned char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(buf + got, n - got, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        got += (size_t)r;
    }
    return 0;
}

int ids_new_request_id(char *out)
{
    unsigned char raw[IDS_REQUEST_LEN * 6 / 8];

    if (random_fill(raw, sizeof(raw)) != 0)
        return -1;
    ids_b64url_encode(raw, sizeof(raw), out);
    return 0;
}

size_t ids_b64url_encode(const unsigned char *in, size_t n, char *out)
{
    size_t o = 0;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 | in[i + 2];
        out[o++] = b64url[v >> 18 & 63];
        out[o++] = b64url[v >> 12 & 63];
        out[o++] = b64url[v >> 6 & 63];
        out[o++] = b64url[v & 63];
    }
    if (n - i == 1) {
        unsigned v = (unsigned)in[i] << 16;
        out[o++] = b64url[v >> 18 & 63];
        out[o++] = b64url[v >> 12 & 63];
    } else if (n - i == 2) {
        unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8;
        out[o++] = b64url[v >> 18 & 63];
        out[o++] = b64url[v >> 12 & 63];
        out[o++] = b64url[v >> 6 & 63];
    }
    out[o] = '\0';
    return o;
}

static int b64url_value(char c)
{
    const char *p = c ? strchr(b64url, c) : NULL;
    return p ? (int)(p - b64url) : -1;
}

long ids_b64url_decode(const char *in, size_t len, unsigned char *out, size_t cap)
{
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    if (len % 4 == 1)
        return -1;
    for (size_t i = 0; i < len; i++) {
        int v = b64url_value(in[i]);
        if (v < 0)
            return -1;
        acc = (acc << 6 | (unsigned)v) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o == cap)
                return -1;
            out[o++] = (unsigned char)(acc >> bits & 0xff);
        }
    }
    /* Leftover bits must be zero, so every byte string has exactly one encoding. */
    if (bits > 0 && (acc & ((1u << bits) - 1)) != 0)
        return -1;
    return (long)o;
}

/* bits random bits (a multiple of 8, at most IDS_TOKEN_BITS) in base64url into out. */
static int new_random(char *out, size_t bits)
{
    unsigned char raw[IDS_TOKEN_BITS / 8];
    if (random_fill(raw, bits / 8) < 0)
        return -1;
    ids_b64url_encode(raw, bits / 8, out);
    return 0;
}

int ids_new_id(char *out)
{
    return new_random(out, IDS_ID_BITS);
}

int ids_new_token(char *out)
{
    return new_random(out, IDS_TOKEN_BITS);
}

bool ids_valid_id(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (n >= IDS_ID_LEN || b64url_value(s[n]) < 0)
            return false;
    return n == IDS_ID_LEN;
}
