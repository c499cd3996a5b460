/*
 * test_deadline.c - the request deadlines (deadline.h) on socket pairs: a connection that
 * never completes its headers is shut down after the deadline (the peer reads end of
 * stream); one whose headers arrived is left alone until its request is done and the next
 * headers are late; a closed connection is forgotten. With a body rate, a body is cut off
 * once it falls behind the grace plus its bytes' credit, one keeping up is not, and a
 * request fully received is not timed at all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "service/deadline.h"

/* True when the peer of sv[1] shut its end down: a read returns end of stream at once. */
static int shut_down(int fd)
{
    char c;
    return recv(fd, &c, 1, MSG_DONTWAIT) == 0;
}

/* Three connections on socket pairs: the deadline watches end 0 of each, the test reads
 * end 1. */
struct conns {
    int sv[3][2];
    struct deadline_conn *c[3]; /* NULL once closed */
};

static void conns_open(struct deadline *d, struct conns *k)
{
    for (int i = 0; i < 3; i++) {
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, k->sv[i]), 0);
        k->c[i] = deadline_open(d, k->sv[i][0]);
        assert_non_null(k->c[i]);
    }
}

static void conns_close(struct deadline *d, struct conns *k)
{
    for (int i = 0; i < 3; i++) {
        deadline_close(d, k->c[i]);
        close(k->sv[i][0]);
        close(k->sv[i][1]);
    }
    deadline_stop(d);
}

enum { SLOW, FAST, THIRD };

static void test_connections_past_the_header_deadline_are_shut(void **state)
{
    struct deadline *d = deadline_start(1, 0); /* no body deadline */
    struct conns k;

    (void)state;
    assert_non_null(d);
    conns_open(d, &k);
    deadline_headers(d, k.c[FAST]);
    deadline_close(d, k.c[THIRD]); /* gone: forgotten */
    k.c[THIRD] = NULL;
    usleep(2500000); /* the deadline (1 s) plus two sweeps */
    assert_true(shut_down(k.sv[SLOW][1]));
    assert_false(shut_down(k.sv[FAST][1]));
    assert_false(shut_down(k.sv[THIRD][1]));
    assert_int_equal(deadline_reaped(d), 1);
    /* The request on FAST ends; its next headers are late too. */
    deadline_idle(d, k.c[FAST]);
    usleep(2500000);
    assert_true(shut_down(k.sv[FAST][1]));
    assert_int_equal(deadline_reaped(d), 2);
    conns_close(d, &k);
}

static void test_slow_bodies_are_shut_at_their_byte_rate(void **state)
{
    struct deadline *d = deadline_start(1, 100); /* 1 s, then 1 s more a 100 bytes */
    struct conns k;

    (void)state;
    assert_non_null(d);
    conns_open(d, &k);
    for (int i = 0; i < 3; i++)
        deadline_headers(d, k.c[i]);
    deadline_body(d, k.c[SLOW], 50);   /* 1.5 s allowed */
    deadline_body(d, k.c[FAST], 1000); /* 11 s allowed */
    deadline_body(d, k.c[THIRD], 0);   /* received: no clock until the next request */
    usleep(2700000);                   /* past 1.5 s plus two sweeps */
    assert_true(shut_down(k.sv[SLOW][1]));
    assert_false(shut_down(k.sv[FAST][1]));
    assert_false(shut_down(k.sv[THIRD][1]));
    assert_int_equal(deadline_reaped(d), 1);
    conns_close(d, &k);
}

static void test_zero_timeout_turns_deadlines_off(void **state)
{
    (void)state;
    assert_null(deadline_start(0, 100));
    assert_null(deadline_open(NULL, 3));
    deadline_headers(NULL, NULL);
    deadline_body(NULL, NULL, 1);
    deadline_idle(NULL, NULL);
    deadline_close(NULL, NULL);
    assert_int_equal(deadline_reaped(NULL), 0);
    deadline_stop(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_connections_past_the_header_deadline_are_shut),
        cmocka_unit_test(test_slow_bodies_are_shut_at_their_byte_rate),
        cmocka_unit_test(test_zero_timeout_turns_deadlines_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
