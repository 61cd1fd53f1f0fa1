/* Verification sampling after NIST SP 800-88: the device is cut into at least 1000 subsections
 * (fewer only when it has too few sectors), at least two non-overlapping pseudo-random samples are
 * taken in each, and the first and last sectors always; together they cover at least the asked
 * percentage. The plan is a pure function of (size, sector, percent, seed), so a recorded seed
 * reproduces it exactly. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define SAMPLE_SUBSECTIONS_MIN 1000
#define SAMPLE_PERCENT_DEFAULT 10.0

struct extent {
        uint64_t offset, length;        /* bytes, sector-aligned */
};

struct sample_plan {
        uint64_t seed;
        double percent;                 /* asked for */
        uint64_t subsections;
        struct extent *extents;         /* sorted, merged, non-overlapping */
        size_t n_extents;
        uint64_t bytes;                 /* sum of extent lengths */
};

/* Plan the samples. percent in (0, 100]. Returns 0, -EINVAL or -ENOMEM. */
int sample_plan_make(struct sample_plan *p, uint64_t total, uint32_t sector, double percent, uint64_t seed);
void sample_plan_done(struct sample_plan *p);
