/*
 * ratelimit.c - see ratelimit.h.
 */
#include "service/ratelimit.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 8 /* slots probed per address */

struct slot {
    char addr[RATELIMIT_ADDR_MAX + 1]; /* "" when free */
    double tokens;                     /* at time `at` */
    double at;                         /* last refill, clock_now() seconds */
};

struct ratelimit {
    pthread_mutex_t mu;
    double rate; /* tokens a second */
    double burst;
    struct slot slots[RATELIMIT_SLOTS];
};

_Static_assert((RATELIMIT_SLOTS & (RATELIMIT_SLOTS - 1)) == 0, "slots: a power of two");

struct ratelimit *ratelimit_new(unsigned per_minute, unsigned burst)
{
    struct ratelimit *rl;

    if (per_minute == 0)
        return NULL;
    rl = calloc(1, sizeof(*rl));
    if (rl == NULL)
        return NULL;
    if (pthread_mutex_init(&rl->mu, NULL) != 0) {
        free(rl);
        return NULL;
    }
    rl->rate = per_minute / 60.0;
    rl->burst = burst > 0 ? burst : 1;
    return rl;
}

void ratelimit_free(struct ratelimit *rl)
{
    if (rl == NULL)
        return;
    pthread_mutex_destroy(&rl->mu);
    free(rl);
}

/* FNV-1a: cheap and good enough to spread addresses over the slots. */
static size_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;

    for (; *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)h;
}

/* The slot of key: its own, else a free one, else the one idle longest in the window. */
static struct slot *slot_for(struct ratelimit *rl, const char *key, double now)
{
    size_t h = hash(key);
    struct slot *victim = NULL;

    for (size_t i = 0; i < WINDOW; i++) {
        struct slot *s = &rl->slots[(h + i) & (RATELIMIT_SLOTS - 1)];
        if (strcmp(s->addr, key) == 0)
            return s;
        if (victim == NULL ||
            (victim->addr[0] != '\0' && (s->addr[0] == '\0' || s->at < victim->at)))
            victim = s;
    }
    snprintf(victim->addr, sizeof(victim->addr), "%s", key);
    victim->tokens = rl->burst;
    victim->at = now;
    return victim;
}

unsigned ratelimit_take(struct ratelimit *rl, const char *addr, double now)
{
    char key[RATELIMIT_ADDR_MAX + 1];
    struct slot *s;
    unsigned wait = 0;

    if (rl == NULL)
        return 0;
    snprintf(key, sizeof(key), "%s", addr != NULL ? addr : "");
    pthread_mutex_lock(&rl->mu);
    s = slot_for(rl, key, now);
    if (now > s->at) {
        s->tokens = fmin(rl->burst, s->tokens + (now - s->at) * rl->rate);
        s->at = now;
    }
    if (s->tokens >= 1) {
        s->tokens -= 1;
    } else {
        double secs = ceil((1 - s->tokens) / rl->rate);
        wait = secs < 1 ? 1 : secs > 86400 ? 86400 : (unsigned)secs;
    }
    pthread_mutex_unlock(&rl->mu);
    return wait;
}
