/*
 * sha256.h - SHA-256 (FIPS 180-4): idempotency-key body fingerprints, and the hashes by
 * which manage tokens and API keys are stored and checked (sha256_equal_ct).
 *
 * Written from the FIPS 180-4 specification. Pure: the caller owns the context.
 */
#ifndef TPUPLAN_SHA256_H
#define TPUPLAN_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32 /* bytes of a digest */

struct sha256 {
    uint32_t h[8];
    uint64_t len; /* bytes hashed so far */
    unsigned char buf[64];
    size_t nbuf;
};

void sha256_init(struct sha256 *c);
void sha256_update(struct sha256 *c, const void *data, size_t n);
/* Writes the 32-byte digest. */
void sha256_final(struct sha256 *c, unsigned char out[SHA256_LEN]);
/* Writes the digest as 64 lower-case hex characters plus a NUL. */
void sha256_hex(struct sha256 *c, char out[65]);

/* The digest of the n bytes at data, in one call. */
void sha256_of(const void *data, size_t n, unsigned char out[SHA256_LEN]);

/* True when the n bytes at a and b are equal. Takes the same time whatever they hold and
 * wherever they differ, so comparing a secret's digest leaks nothing through timing. */
bool sha256_equal_ct(const void *a, const void *b, size_t n);

#endif
