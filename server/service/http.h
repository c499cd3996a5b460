/*
 * http.h - the libmicrohttpd daemon and its access handler: the service's transport.
 *
 * Threading: MHD runs an epoll thread pool (config.http_threads). Its threads never block
 * on the database or the planner. The access handler matches each request to a row of the
 * route table (route.h) and answers it there with the row's fast handler (files, /healthz,
 * the chip table, cached finished plans: local files and memory only), or suspends it
 * (MHD_suspend_connection) and hands it to the request-executor pool (exec.h), where the
 * row's exec handler runs. Either answers with request_reply(), which stores the response
 * in the request (phase REQ_READY); an executor's answer also resumes the connection. Only
 * the access handler ever queues responses.
 *
 * A struct request (request.h) lives from the first access-handler call to MHD's
 * completion callback, which frees it; while suspended it belongs to the executor.
 */
#ifndef TPUPLAN_HTTP_H
#define TPUPLAN_HTTP_H

#include "planner/err.h"
#include "service/server.h"

/* Starts the daemon (binds, spawns threads). 0, or -1 with a message logged. srv must
 * outlive http_stop(); what main.c set up in it (server.h) is borrowed. */
ERR_MUST_CHECK int http_start(struct server *srv);

/* The bound port (useful with port 0). */
unsigned http_port(const struct server *srv);

/* Stops accepting new connections (MHD_quiesce_daemon) and makes every new request a 503. */
void http_quiesce(struct server *srv);

/* Waits up to timeout_s for in-flight requests to complete, then stops the daemon. */
void http_stop(struct server *srv, double timeout_s);

#endif
