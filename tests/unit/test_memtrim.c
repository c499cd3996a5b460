/*
 * test_memtrim.c - freed memory goes back (memtrim.h): a thread frees 200 MB of small
 * blocks, which the allocator keeps (RSS stays), and memtrim_release gives it back (RSS
 * within MEMTRIM_THRESHOLD of where it began). The RSS figures are glibc's allocator's:
 * under ASan the sanitizer's allocator stands in for it, so there the test only runs the
 * same work through memtrim_release (for the sanitizer's eyes).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "service/memtrim.h"

#define BLOCKS     (2u << 20) /* 2 Mi blocks of 100 bytes: 200 MB and more with headers */
#define BLOCK_SIZE 100u

/* This process's resident set in kB. */
static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;

    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL)
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = strtol(line + 6, NULL, 10);
    fclose(f);
    return kb;
}

/* What the worker saw: RSS before, at the peak, after freeing, after memtrim_release. */
struct seen {
    long before, peak, freed, released;
};

static void *work(void *arg)
{
    struct seen *s = arg;
    char **v = malloc(BLOCKS * sizeof(*v));

    if (v == NULL)
        return NULL;
    s->before = rss_kb();
    for (size_t i = 0; i < BLOCKS; i++) {
        v[i] = malloc(BLOCK_SIZE);
        if (v[i] != NULL)
            memset(v[i], 'x', BLOCK_SIZE); /* resident */
    }
    s->peak = rss_kb();
    for (size_t i = 0; i < BLOCKS; i++)
        free(v[i]);
    free(v);
    s->freed = rss_kb();
    memtrim_release();
    s->released = rss_kb();
    return NULL;
}

static void test_a_thread_gives_back_what_it_freed(void **state)
{
    struct seen s = {0};
    pthread_t t;

    (void)state;
    memtrim_init();
    assert_int_equal(pthread_create(&t, NULL, work, &s), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    print_message("# RSS kB: before %ld, peak %ld, freed %ld, released %ld\n", s.before, s.peak,
                  s.freed, s.released);
    assert_true(s.before > 0 && s.released > 0);
#if !defined(__SANITIZE_ADDRESS__)
    /* 2 Mi blocks of 100 bytes (112 with the header) are 224 MiB: at least 200 MB grew. */
    assert_true(s.peak - s.before > 200 * 1000);
    /* Freed block by block, none of it goes back by itself: the allocator keeps it. */
    assert_true(s.freed - s.before > 100 * 1000);
    /* memtrim_release gives back all but MEMTRIM_THRESHOLD (8 MiB) at most. */
    assert_true(s.released - s.before < (long)(MEMTRIM_THRESHOLD / 1024));
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_thread_gives_back_what_it_freed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
