/*
 * deadline.h - deadlines for each connection's request headers and body, against slowloris.
 *
 * MHD's --timeout is an idle timeout: a client that sends one more header byte every few
 * seconds keeps its connection forever. The soak showed it: 256 connections from one
 * address (the --max-per-ip cap) held for as long as the client kept trickling, and four
 * addresses would hold all 1024 (--max-connections). Here a connection has `seconds` from
 * its start, and again from the end of each request on it, to deliver complete request
 * headers. A body trickled a byte at a time is the same attack one step later, so a request
 * body then has the same `seconds` again plus one second for every `min_rate` bytes
 * received (Apache's mod_reqtimeout "body=...,MinRate=..." rule): an upload of any size
 * passes at min_rate or faster, a trickle is cut off. Past a deadline a reaper thread
 * shuts the socket down (shutdown(2), never close(2): MHD sees the end of the stream, then
 * closes and frees the connection itself). The body's clock stops once the request is
 * fully received: a client reading a large response slowly is not cut off.
 *
 * Hooks (http.c): deadline_open and deadline_close from MHD's connection notifications
 * (open's result is the connection's socket context), deadline_headers from the access
 * handler's first call of a request, deadline_body from each later call (with the bytes it
 * carries; 0 marks the body complete), deadline_idle from the request's completion.
 * Thread-safe (one mutex). MHD notifies a connection's close before it closes the socket,
 * so under the mutex an open entry's fd is always still that connection's socket.
 */
#ifndef TPUPLAN_DEADLINE_H
#define TPUPLAN_DEADLINE_H

#include <stddef.h>
#include <stdint.h>

struct deadline;
struct deadline_conn;

/* Starts the reaper for a deadline of seconds (> 0) and a body rate of min_rate bytes a
 * second (0: bodies have no deadline). NULL when seconds is 0 (no deadline at all) or the
 * thread cannot start. Caller owns it: deadline_stop() after the daemon stopped. */
struct deadline *deadline_start(unsigned seconds, uint64_t min_rate);
void deadline_stop(struct deadline *d);

/* A new connection on socket fd: its clock starts. NULL when d is NULL or out of memory
 * (that connection then has no deadline). */
struct deadline_conn *deadline_open(struct deadline *d, int fd);

/* The connection's request headers are complete: the body's clock starts. */
void deadline_headers(struct deadline *d, struct deadline_conn *c);

/* bytes more of the body arrived (its deadline moves on by bytes / min_rate seconds); 0: the
 * request is fully received and its clock stops until deadline_idle. */
void deadline_body(struct deadline *d, struct deadline_conn *c, size_t bytes);

/* A request on the connection is done: the clock starts again for the next one's headers. */
void deadline_idle(struct deadline *d, struct deadline_conn *c);

/* The connection is closing (before MHD closes its socket): forgets and frees c. */
void deadline_close(struct deadline *d, struct deadline_conn *c);

/* Connections shut down for missing a deadline (headers or body), so far. */
unsigned long deadline_reaped(struct deadline *d);

#endif
