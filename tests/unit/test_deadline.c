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

static void test_deadline(void **state)
{
    struct deadline *d = deadline_start(1, 0); /* no body deadline */
    int slow[2], fast[2], gone[2];

    (void)state;
    assert_non_null(d);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, slow), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fast), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, gone), 0);
    struct deadline_conn *cs = deadline_open(d, slow[0]);
    struct deadline_conn *cf = deadline_open(d, fast[0]);
    struct deadline_conn *cg = deadline_open(d, gone[0]);
    assert_non_null(cs);
    deadline_headers(d, cf);
    deadline_close(d, cg);
    usleep(2500000); /* the deadline (1 s) plus two sweeps */
    assert_true(shut_down(slow[1]));
    assert_false(shut_down(fast[1]));
    assert_false(shut_down(gone[1]));
    assert_int_equal(deadline_reaped(d), 1);
    /* The request on "fast" ends; its next headers are late too. */
    deadline_idle(d, cf);
    usleep(2500000);
    assert_true(shut_down(fast[1]));
    assert_int_equal(deadline_reaped(d), 2);
    deadline_close(d, cs);
    deadline_close(d, cf);
    deadline_stop(d);
    for (int i = 0; i < 2; i++) {
        close(slow[i]);
        close(fast[i]);
        close(gone[i]);
    }
}

static void test_body_rate(void **state)
{
    struct deadline *d = deadline_start(1, 100); /* 1 s, then 1 s more a 100 bytes */
    int slow[2], fast[2], done[2];

    (void)state;
    assert_non_null(d);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, slow), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fast), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, done), 0);
    struct deadline_conn *cs = deadline_open(d, slow[0]);
    struct deadline_conn *cf = deadline_open(d, fast[0]);
    struct deadline_conn *cd = deadline_open(d, done[0]);
    deadline_headers(d, cs);
    deadline_headers(d, cf);
    deadline_headers(d, cd);
    deadline_body(d, cs, 50);   /* 1.5 s allowed */
    deadline_body(d, cf, 1000); /* 11 s allowed */
    deadline_body(d, cd, 0);    /* received: no clock until the next request */
    usleep(2700000);            /* past 1.5 s plus two sweeps */
    assert_true(shut_down(slow[1]));
    assert_false(shut_down(fast[1]));
    assert_false(shut_down(done[1]));
    assert_int_equal(deadline_reaped(d), 1);
    deadline_body(d, cf, 0); /* the rest arrived: it stays open however long the answer takes */
    deadline_close(d, cs);
    deadline_close(d, cf);
    deadline_close(d, cd);
    deadline_stop(d);
    for (int i = 0; i < 2; i++) {
        close(slow[i]);
        close(fast[i]);
        close(done[i]);
    }
}

static void test_off(void **state)
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
        cmocka_unit_test(test_deadline),
        cmocka_unit_test(test_body_rate),
        cmocka_unit_test(test_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
