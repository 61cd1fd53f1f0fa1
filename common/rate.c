/* A lock-free rate limit: see rate.h. */
#include "config.h"

#include "rate.h"

void rate_init(struct rate_limit *r, uint64_t bps) {
        r->bps = bps;
        atomic_init(&r->next_ns, 0);
}

uint64_t rate_wait(struct rate_limit *r, uint64_t now_ns) {
        uint64_t next;

        if (r->bps == 0)
                return 0;
        next = atomic_load_explicit(&r->next_ns, memory_order_relaxed);
        return next <= now_ns + RATE_BURST_NS ? 0 : next - RATE_BURST_NS - now_ns;
}

void rate_take(struct rate_limit *r, uint64_t now_ns, uint64_t bytes) {
        uint64_t next, base, cost;

        if (r->bps == 0)
                return;
        cost = (uint64_t) ((unsigned __int128) bytes * 1000000000u / r->bps);
        next = atomic_load_explicit(&r->next_ns, memory_order_relaxed);
        do
                base = next > now_ns ? next : now_ns;
        while (!atomic_compare_exchange_weak_explicit(&r->next_ns, &next, base + cost, memory_order_relaxed,
                                                      memory_order_relaxed));
}
