/* Verification sample planner. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sample.h"

/* splitmix64: small, fast, and the same everywhere; the plan must be reproducible from the seed. */
static uint64_t next_random(uint64_t *state) {
        uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. */
static uint64_t random_below(uint64_t *state, uint64_t n) {
        uint64_t limit = UINT64_MAX - UINT64_MAX % n, r;

        do
                r = next_random(state);
        while (r >= limit);
        return r % n;
}

static int extent_cmp(const void *a, const void *b) {
        const struct extent *x = a, *y = b;

        return x->offset < y->offset ? -1 : x->offset > y->offset;
}

int sample_plan_make(struct sample_plan *p, uint64_t total, uint32_t sector, double percent, uint64_t seed) {
        uint64_t sectors, n_sub, state = seed;
        struct extent *v;
        size_t n = 0;

        *p = (struct sample_plan) { .seed = seed, .percent = percent };
        if (sector == 0 || total == 0 || total % sector != 0 || !(percent > 0.0 && percent <= 100.0))
                return -EINVAL;
        sectors = total / sector;
        /* Two samples of at least one sector in each subsection: at least two sectors each. */
        n_sub = sectors / 2 < SAMPLE_SUBSECTIONS_MIN ? (sectors / 2 ? sectors / 2 : 1) : SAMPLE_SUBSECTIONS_MIN;
        v = calloc(2 * n_sub + 2, sizeof(*v));
        if (!v)
                return -ENOMEM;

        for (uint64_t i = 0; i < n_sub; i++) {
                /* Subsection i: sectors [a, b); halves [a, m) and [m, b) hold one sample each. */
                uint64_t a = sectors * i / n_sub, b = sectors * (i + 1) / n_sub, m = a + (b - a) / 2;
                uint64_t want = (uint64_t) ((double) (b - a) * percent / 100.0);
                uint64_t s1, s2;

                if ((double) want < (double) (b - a) * percent / 100.0)
                        want++;         /* round up: coverage is at least the percentage */
                s1 = (want + 1) / 2;
                s2 = want - s1;
                if (s1 == 0)
                        s1 = 1;
                if (s2 == 0)
                        s2 = 1;
                if (m == a) {           /* a one-sector subsection: the sector itself */
                        v[n++] = (struct extent) { a * sector, (b - a) * sector };
                        continue;
                }
                if (s1 > m - a)
                        s1 = m - a;
                if (s2 > b - m)
                        s2 = b - m;
                /* Shift the spare sectors between the halves so that the sum stays want. */
                if (s1 + s2 < want) {
                        uint64_t more = want - s1 - s2;

                        s1 += more < m - a - s1 ? more : m - a - s1;
                        more = want > s1 + s2 ? want - s1 - s2 : 0;
                        s2 += more < b - m - s2 ? more : b - m - s2;
                }
                v[n++] = (struct extent) { (a + random_below(&state, m - a - s1 + 1)) * sector, s1 * sector };
                v[n++] = (struct extent) { (m + random_below(&state, b - m - s2 + 1)) * sector, s2 * sector };
        }
        v[n++] = (struct extent) { 0, sector };
        v[n++] = (struct extent) { total - sector, sector };

        /* Sort and merge overlapping or touching extents. */
        qsort(v, n, sizeof(*v), extent_cmp);
        {
                size_t w = 0;

                for (size_t i = 1; i < n; i++) {
                        if (v[i].offset <= v[w].offset + v[w].length) {
                                uint64_t end = v[i].offset + v[i].length;

                                if (end > v[w].offset + v[w].length)
                                        v[w].length = end - v[w].offset;
                        } else
                                v[++w] = v[i];
                }
                n = w + 1;
        }
        p->subsections = n_sub;
        p->extents = v;
        p->n_extents = n;
        for (size_t i = 0; i < n; i++)
                p->bytes += v[i].length;
        return 0;
}

void sample_plan_done(struct sample_plan *p) {
        if (!p)
                return;
        free(p->extents);
        p->extents = NULL;
        p->n_extents = 0;
}
