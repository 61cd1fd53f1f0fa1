/* The lock-free rate limit: how long a request waits, and that the clock moves by bytes/rate. */
#include "config.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rate.h"

#define MS (1000ull * 1000)
#define S (1000ull * MS)

static void test_unlimited(void **state) {
        struct rate_limit r;

        (void) state;
        rate_init(&r, 0);
        for (int i = 0; i < 1000; i++) {
                assert_int_equal(rate_wait(&r, 5 * S), 0);
                rate_take(&r, 5 * S, 1u << 30);
        }
}

static void test_clock(void **state) {
        struct rate_limit r;
        uint64_t now = 10 * S;

        (void) state;
        rate_init(&r, 100 * 1000 * 1000);       /* 100 MB/s: 1 MB costs 10 ms */
        assert_int_equal(rate_wait(&r, now), 0);
        rate_take(&r, now, 1000 * 1000);
        assert_int_equal(atomic_load(&r.next_ns), now + 10 * MS);
        /* 10 ms ahead: within the 20 ms burst. */
        assert_int_equal(rate_wait(&r, now), 0);
        rate_take(&r, now, 1000 * 1000);
        rate_take(&r, now, 1000 * 1000);
        /* 30 ms ahead: wait 10 ms until it is 20 ms ahead. */
        assert_int_equal(rate_wait(&r, now), 10 * MS);
        assert_int_equal(rate_wait(&r, now + 4 * MS), 6 * MS);
        assert_int_equal(rate_wait(&r, now + 10 * MS), 0);
        /* Idle time earns no credit: after a long pause the clock restarts from now. */
        rate_take(&r, now + 5 * S, 1000 * 1000);
        assert_int_equal(atomic_load(&r.next_ns), now + 5 * S + 10 * MS);
}

/* A client that sends whenever allowed, over a simulated second: what it sends is within one
 * burst of the limit. */
static void test_long_run(void **state) {
        struct rate_limit r;
        uint64_t sent = 0, now = 0;

        (void) state;
        rate_init(&r, 32 * 1000 * 1000);
        while (now < S) {
                uint64_t w = rate_wait(&r, now);

                if (w) {
                        now += w;
                        continue;
                }
                rate_take(&r, now, 1 << 20);
                sent += 1 << 20;
        }
        assert_true(sent <= 32 * 1000 * 1000 + (32 * 1000 * 1000) / 50 + (1 << 20));
        assert_true(sent >= 32 * 1000 * 1000 - (1 << 20));
}

struct racer {
        struct rate_limit *r;
        uint64_t taken;
};

static void *race(void *arg) {
        struct racer *x = arg;

        for (int i = 0; i < 100000; i++) {
                rate_take(x->r, 0, 1000);
                x->taken += 1000;
        }
        return NULL;
}

/* Concurrent takers lose no bytes: the clock ends exactly at the sum of their costs. */
static void test_concurrent(void **state) {
        struct rate_limit r;
        struct racer x[4];
        pthread_t t[4];

        (void) state;
        rate_init(&r, 1000 * 1000 * 1000);      /* 1 GB/s: 1000 bytes cost 1000 ns */
        for (int i = 0; i < 4; i++) {
                x[i] = (struct racer) { .r = &r };
                assert_int_equal(pthread_create(&t[i], NULL, race, &x[i]), 0);
        }
        for (int i = 0; i < 4; i++)
                pthread_join(t[i], NULL);
        assert_int_equal(atomic_load(&r.next_ns), 4ull * 100000 * 1000);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_unlimited),
                cmocka_unit_test(test_clock),
                cmocka_unit_test(test_long_run),
                cmocka_unit_test(test_concurrent),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
