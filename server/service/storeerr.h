/*
 * storeerr.h - a store error (store.h STORE_*) answered as its problem: the one mapping
 * every handler that reads the database uses (api.c, api_diff.c).
 */
#ifndef TPUPLAN_STOREERR_H
#define TPUPLAN_STOREERR_H

struct request;

/* 503 database-unavailable, 400 for a malformed cursor or limit, 404 no-such-plan, 410
 * plan-expired, else 500. */
void storeerr_reply(struct request *r, int rc);

#endif
