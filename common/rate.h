/* A rate limit that threads share without a lock (wiped --max-rate, submit "max_rate").
 *
 * The limit keeps a virtual clock: the time at which every byte granted so far will have been
 * sent at the allowed rate. A request may start while that clock is less than RATE_BURST_NS
 * ahead of now; taking bytes moves the clock on by bytes/rate. Idle time earns no credit, so the
 * rate over any interval longer than the burst is at most the limit. Pure logic: the caller
 * passes the time. */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define RATE_BURST_NS (20ull * 1000 * 1000)    /* how far ahead of now the clock may run */

struct rate_limit {
        uint64_t bps;                   /* bytes per second; 0 = no limit */
        atomic_uint_fast64_t next_ns;   /* virtual clock, in the caller's nanoseconds */
};

void rate_init(struct rate_limit *r, uint64_t bps);
/* 0 when a request may start at now_ns, else the nanoseconds to wait first. */
uint64_t rate_wait(struct rate_limit *r, uint64_t now_ns);
/* Account bytes sent at now_ns (after rate_wait() said 0; concurrent takers may overshoot the
 * burst by one request each). */
void rate_take(struct rate_limit *r, uint64_t now_ns, uint64_t bytes);
