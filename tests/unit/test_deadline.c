/*
 * test_deadline.c - the request-header deadline (deadline.h) on socket pairs: a connection
 * that never completes its headers is shut down after the deadline (the peer reads end of
 * stream); one whose headers arrived is left alone until its request is done and the next
 * headers are late; a closed connection is forgotten.
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
    struct deadline *d = deadline_start(1);
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

static void test_off(void **state)
{
    (void)state;
    assert_null(deadline_start(0));
    assert_null(deadline_open(NULL, 3));
    deadline_headers(NULL, NULL);
    deadline_idle(NULL, NULL);
    deadline_close(NULL, NULL);
    assert_int_equal(deadline_reaped(NULL), 0);
    deadline_stop(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deadline),
        cmocka_unit_test(test_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
