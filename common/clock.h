/* The clocks every part reads: monotonic for intervals and deadlines, realtime for what is shown
 * and recorded. Both never fail on Linux. */
#pragma once

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t c) {
        struct timespec ts;

        clock_gettime(c, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static inline double clock_s(clockid_t c) {
        struct timespec ts;

        clock_gettime(c, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* CLOCK_MONOTONIC in nanoseconds, milliseconds and seconds; CLOCK_REALTIME in seconds. */
static inline uint64_t mono_ns(void) {
        return clock_ns(CLOCK_MONOTONIC);
}

static inline int64_t mono_ms(void) {
        return (int64_t) (clock_ns(CLOCK_MONOTONIC) / 1000000u);
}

static inline double mono_s(void) {
        return clock_s(CLOCK_MONOTONIC);
}

static inline double real_s(void) {
        return clock_s(CLOCK_REALTIME);
}
