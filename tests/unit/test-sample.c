/* sample: the NIST SP 800-88 verification planner. For many (size, sector, percent, seed) the plan
 * covers at least the percentage, the first and last sectors, is sorted, sector-aligned,
 * non-overlapping and inside the device; the device is cut into 1000 subsections (fewer only when
 * it has fewer than 2000 sectors) and every subsection holds at least two sectors' worth of samples
 * (its whole self when smaller) and at least the percentage of itself; a seed reproduces its plan
 * and different seeds give different plans.
 *
 * Subsection i of n spans sectors [S*i/n, S*(i+1)/n) (S sectors, integer division): the even cut
 * the header describes. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "sample.h"

static const uint32_t sectors_sizes[] = { 512, 4096 };
static const double percents[] = { 0.1, 2.5, 10.0, 33.3, 50.0, 99.9, 100.0 };
static const uint64_t seeds[] = { 0, 1, 2, 42, 0x123456789abcdefULL, UINT64_MAX };
/* Device sizes in sectors: tiny, around the 2000-sector threshold, odd, big. */
static const uint64_t sector_counts[] = {
        1, 2, 3, 4, 5, 7, 8, 100, 101, 1998, 1999, 2000, 2001, 2002, 2999, 3001, 4095, 10007,
        65536, 1000003, 1ULL << 31, (1ULL << 41) + 12345,
};

/* Whether the extents of the plan cover the byte range [off, off + len) completely. */
static bool covered(const struct sample_plan *p, uint64_t off, uint64_t len) {
        for (size_t i = 0; i < p->n_extents; i++)
                if (p->extents[i].offset <= off && off + len <= p->extents[i].offset + p->extents[i].length)
                        return true;
        return false;
}

/* Check one plan against every property; ctx names the case in messages. */
static void check_plan(const struct sample_plan *p, uint64_t total, uint32_t sector, double percent,
                       uint64_t seed) {
        uint64_t sectors = total / sector, bytes = 0, want_sub, upper = 0;
        char ctx[160];

        snprintf(ctx, sizeof(ctx), "size %llu (%llu sectors of %u), %g %%, seed %llu",
                 (unsigned long long) total, (unsigned long long) sectors, sector, percent,
                 (unsigned long long) seed);
        if (p->seed != seed || p->percent != percent)
                fail_msg("%s: the plan records seed %llu, percent %g", ctx, (unsigned long long) p->seed, p->percent);
        if (p->n_extents == 0 || !p->extents)
                fail_msg("%s: no extents", ctx);

        /* Subsections: 1000, fewer only when there are not two sectors for each. */
        want_sub = sectors / 2 >= SAMPLE_SUBSECTIONS_MIN ? SAMPLE_SUBSECTIONS_MIN : (sectors / 2 ? sectors / 2 : 1);
        if (sectors >= 2 * SAMPLE_SUBSECTIONS_MIN && p->subsections != SAMPLE_SUBSECTIONS_MIN)
                fail_msg("%s: %llu subsections, expected %d", ctx, (unsigned long long) p->subsections,
                         SAMPLE_SUBSECTIONS_MIN);
        if (p->subsections < want_sub)
                fail_msg("%s: only %llu subsections, %llu possible", ctx, (unsigned long long) p->subsections,
                         (unsigned long long) want_sub);
        if (sectors >= 2 && p->subsections * 2 > sectors)
                fail_msg("%s: %llu subsections cannot hold two sectors each", ctx, (unsigned long long) p->subsections);

        /* Extents: sector-aligned, non-empty, inside, sorted, apart (merged when touching). */
        for (size_t i = 0; i < p->n_extents; i++) {
                const struct extent *e = &p->extents[i];

                if (e->offset % sector || e->length % sector || e->length == 0)
                        fail_msg("%s: extent %zu (%llu, %llu) not whole sectors", ctx, i,
                                 (unsigned long long) e->offset, (unsigned long long) e->length);
                if (e->offset >= total || e->length > total - e->offset)
                        fail_msg("%s: extent %zu (%llu, %llu) outside the device", ctx, i,
                                 (unsigned long long) e->offset, (unsigned long long) e->length);
                if (i > 0 && e->offset <= p->extents[i - 1].offset + p->extents[i - 1].length)
                        fail_msg("%s: extent %zu (%llu) overlaps, touches or precedes extent %zu (%llu + %llu)", ctx, i,
                                 (unsigned long long) e->offset, i - 1, (unsigned long long) p->extents[i - 1].offset,
                                 (unsigned long long) p->extents[i - 1].length);
                bytes += e->length;
        }
        if (bytes != p->bytes)
                fail_msg("%s: bytes %llu, the extents sum to %llu", ctx, (unsigned long long) p->bytes,
                         (unsigned long long) bytes);
        if ((double) bytes * 100.0 < percent * (double) total * (1 - 1e-12))
                fail_msg("%s: %llu bytes are less than %g %% of %llu", ctx, (unsigned long long) bytes, percent,
                         (unsigned long long) total);
        if (bytes > total)
                fail_msg("%s: %llu bytes, more than the device", ctx, (unsigned long long) bytes);
        if (!covered(p, 0, sector) || !covered(p, total - sector, sector))
                fail_msg("%s: the first or last sector is not covered", ctx);

        /* Each subsection: at least min(2 sectors, itself) and at least the percentage of itself; and
         * not much more than that (two samples of the larger of one sector and half the share, plus
         * the first and last sectors). Two pointers: extents and subsections are both sorted. */
        {
                size_t e = 0;
                uint64_t n = p->subsections;

                for (uint64_t i = 0; i < n; i++) {
                        uint64_t a = sectors * i / n, b = sectors * (i + 1) / n, c = 0, need;
                        double share = (double) (b - a) * percent / 100.0;

                        while (e < p->n_extents && (p->extents[e].offset + p->extents[e].length) / sector <= a)
                                e++;
                        for (size_t j = e; j < p->n_extents && p->extents[j].offset / sector < b; j++) {
                                uint64_t s = p->extents[j].offset / sector, t = s + p->extents[j].length / sector;

                                s = s > a ? s : a;
                                t = t < b ? t : b;
                                if (t > s)
                                        c += t - s;
                        }
                        need = b - a < 2 ? b - a : 2;
                        if (c < need || (double) c < share * (1 - 1e-12))
                                fail_msg("%s: subsection %llu [%llu, %llu) has %llu sectors sampled, expected at least %llu and %g",
                                         ctx, (unsigned long long) i, (unsigned long long) a, (unsigned long long) b,
                                         (unsigned long long) c, (unsigned long long) need, share);
                        upper += (uint64_t) fmax(2.0, ceil(share) + 1.0);
                }
        }
        if (bytes / sector > upper + 2)
                fail_msg("%s: %llu sectors sampled, more than the %llu the percentage and the two samples need", ctx,
                         (unsigned long long) (bytes / sector), (unsigned long long) upper + 2);
}

static void test_properties(void **state) {
        (void) state;
        for (size_t si = 0; si < sizeof(sectors_sizes) / sizeof(sectors_sizes[0]); si++)
                for (size_t ci = 0; ci < sizeof(sector_counts) / sizeof(sector_counts[0]); ci++)
                        for (size_t pi = 0; pi < sizeof(percents) / sizeof(percents[0]); pi++)
                                for (size_t ki = 0; ki < sizeof(seeds) / sizeof(seeds[0]); ki++) {
                                        uint32_t sector = sectors_sizes[si];
                                        uint64_t total = sector_counts[ci] * sector;
                                        struct sample_plan p;
                                        int r = sample_plan_make(&p, total, sector, percents[pi], seeds[ki]);

                                        if (r != 0)
                                                fail_msg("sample_plan_make(%llu, %u, %g, %llu) = %d",
                                                         (unsigned long long) total, sector, percents[pi],
                                                         (unsigned long long) seeds[ki], r);
                                        check_plan(&p, total, sector, percents[pi], seeds[ki]);
                                        sample_plan_done(&p);
                                        assert_null(p.extents);
                                }
}

/* The largest a block device can be (2^63 - 1 bytes, whole sectors), and odd sizes of 4096-byte
 * sectors; a 100 % plan is the whole device in one extent. */
static void test_edges(void **state) {
        struct sample_plan p;
        uint64_t big = ((1ULL << 63) - 1) / 4096 * 4096;

        (void) state;
        assert_int_equal(sample_plan_make(&p, big, 4096, 0.1, 7), 0);
        check_plan(&p, big, 4096, 0.1, 7);
        sample_plan_done(&p);
        big = ((1ULL << 63) - 1) / 512 * 512;
        assert_int_equal(sample_plan_make(&p, big, 512, 10, 7), 0);
        check_plan(&p, big, 512, 10, 7);
        sample_plan_done(&p);

        for (uint64_t s = 1; s < 4100; s += s < 64 ? 1 : 97) {
                assert_int_equal(sample_plan_make(&p, s * 4096, 4096, 100.0, s), 0);
                check_plan(&p, s * 4096, 4096, 100.0, s);
                assert_int_equal(p.n_extents, 1);
                assert_int_equal(p.extents[0].offset, 0);
                assert_int_equal(p.extents[0].length, s * 4096);
                assert_int_equal(p.bytes, s * 4096);
                sample_plan_done(&p);
        }
        /* Every small device, every sector count up to 2100, at a few percentages. */
        for (uint64_t s = 1; s <= 2100; s++)
                for (size_t pi = 0; pi < 3; pi++) {
                        static const double pc[] = { 0.1, 10.0, 60.0 };

                        assert_int_equal(sample_plan_make(&p, s * 512, 512, pc[pi], s * 31 + pi), 0);
                        check_plan(&p, s * 512, 512, pc[pi], s * 31 + pi);
                        sample_plan_done(&p);
                }
        /* The default percentage, on a 1 GiB device: about 10 % read. */
        assert_int_equal(sample_plan_make(&p, 1ULL << 30, 512, SAMPLE_PERCENT_DEFAULT, 99), 0);
        assert_true(p.bytes >= (1ULL << 30) / 10);
        assert_true(p.bytes <= (1ULL << 30) / 10 + 2000 * 512 + 1024);
        sample_plan_done(&p);
}

static bool plans_equal(const struct sample_plan *a, const struct sample_plan *b) {
        return a->n_extents == b->n_extents && a->bytes == b->bytes && a->subsections == b->subsections &&
               memcmp(a->extents, b->extents, a->n_extents * sizeof(*a->extents)) == 0;
}

static void test_seeds(void **state) {
        static const struct {
                uint64_t total;
                uint32_t sector;
                double percent;
        } cases[] = {
                { 1ULL << 30, 512, 10.0 },
                { 1ULL << 30, 4096, 0.1 },
                { 1ULL << 30, 512, 50.0 },
                { 1ULL << 30, 512, 99.0 },
                { 8ULL << 20, 512, 10.0 },
                { 8ULL << 20, 4096, 2.5 },
                { 1ULL << 40, 4096, 10.0 },
                { 4096 * 512, 512, 10.0 },
        };
        enum { N = 16 };

        (void) state;
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
                struct sample_plan p[N], again;

                for (unsigned s = 0; s < N; s++) {
                        assert_int_equal(sample_plan_make(&p[s], cases[c].total, cases[c].sector, cases[c].percent, s), 0);
                        /* Same seed, same plan. */
                        assert_int_equal(sample_plan_make(&again, cases[c].total, cases[c].sector, cases[c].percent, s), 0);
                        assert_true(plans_equal(&p[s], &again));
                        sample_plan_done(&again);
                        /* Different seeds, different plans (where there is a choice: not with
                         * 100 %, nor below 2000 sectors, where every subsection is two sectors,
                         * both read). */
                        for (unsigned t = 0; t < s; t++)
                                if (plans_equal(&p[s], &p[t]))
                                        fail_msg("size %llu, sector %u, %g %%: seeds %u and %u give the same plan",
                                                 (unsigned long long) cases[c].total, cases[c].sector, cases[c].percent, t, s);
                }
                for (unsigned s = 0; s < N; s++)
                        sample_plan_done(&p[s]);
        }
}

/* FNV-1a over the extents: a fingerprint of a plan. */
static uint64_t plan_hash(const struct sample_plan *p) {
        uint64_t h = 0xcbf29ce484222325ULL;

        for (size_t i = 0; i < p->n_extents; i++) {
                uint64_t v[2] = { p->extents[i].offset, p->extents[i].length };

                for (unsigned j = 0; j < 2; j++)
                        for (unsigned b = 0; b < 8; b++) {
                                h ^= (v[j] >> (8 * b)) & 0xff;
                                h *= 0x100000001b3ULL;
                        }
        }
        return h;
}

/* A report records (size, sector, percent, seed); `wipectl verify` of that job, by a later build,
 * must read the same samples. These fingerprints pin the plans: a change to the planner that
 * changes them breaks re-verification of recorded seeds (update them only on purpose). */
static void test_stable(void **state) {
        static const struct {
                uint64_t total;
                uint32_t sector;
                double percent;
                uint64_t seed;
                size_t n_extents;
                uint64_t bytes, hash;
        } golden[] = {
                { 1073741824ULL, 512, 10, 1ULL, 2002, 107521024ULL, 0xfd111d53d26a01d4ULL },
                { 1073741824ULL, 4096, 0.1, 42ULL, 2000, 8200192ULL, 0x269f8022a3d4a393ULL },
                { 8388608ULL, 512, 2.5, 7ULL, 1973, 1025024ULL, 0x87a0d75aa7690c72ULL },
                { 1099511627776ULL, 4096, 10, 18446744073709551615ULL, 2002, 109953032192ULL, 0xd28ea81ba6c82f22ULL },
                { 51200ULL, 512, 10, 3ULL, 1, 51200ULL, 0x08ed60d25d6c16cdULL },
        };
        struct sample_plan p;

        (void) state;
        for (size_t i = 0; i < sizeof(golden) / sizeof(golden[0]); i++) {
                assert_int_equal(sample_plan_make(&p, golden[i].total, golden[i].sector, golden[i].percent, golden[i].seed), 0);
                if (getenv("SAMPLE_PRINT_GOLDEN"))
                        printf("{ %lluULL, %u, %g, %lluULL, %zu, %lluULL, 0x%016llxULL },\n",
                               (unsigned long long) golden[i].total, golden[i].sector, golden[i].percent,
                               (unsigned long long) golden[i].seed, p.n_extents, (unsigned long long) p.bytes,
                               (unsigned long long) plan_hash(&p));
                else {
                        assert_int_equal(p.n_extents, golden[i].n_extents);
                        assert_int_equal(p.bytes, golden[i].bytes);
                        assert_int_equal(plan_hash(&p), golden[i].hash);
                }
                sample_plan_done(&p);
        }
}

static void test_invalid(void **state) {
        static const struct {
                uint64_t total;
                uint32_t sector;
                double percent;
        } bad[] = {
                { 0, 512, 10 },
                { 4096, 0, 10 },
                { 4096 + 512, 4096, 10 },
                { 1000, 512, 10 },
                { 511, 512, 10 },
                { 1ULL << 20, 512, 0 },
                { 1ULL << 20, 512, -0.0 },
                { 1ULL << 20, 512, -1 },
                { 1ULL << 20, 512, 100.0001 },
                { 1ULL << 20, 512, 1000 },
                { 1ULL << 20, 512, NAN },
                { 1ULL << 20, 512, INFINITY },
                { 1ULL << 20, 512, -INFINITY },
        };
        struct sample_plan p;

        (void) state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                memset(&p, 0x5a, sizeof(p));
                if (sample_plan_make(&p, bad[i].total, bad[i].sector, bad[i].percent, 1) != -EINVAL)
                        fail_msg("sample_plan_make(%llu, %u, %g) did not fail with -EINVAL",
                                 (unsigned long long) bad[i].total, bad[i].sector, bad[i].percent);
                /* A failed plan owns nothing and may be passed to sample_plan_done. */
                assert_null(p.extents);
                assert_int_equal(p.n_extents, 0);
                sample_plan_done(&p);
        }
        sample_plan_done(NULL);
        /* The smallest valid percentage and device. */
        assert_int_equal(sample_plan_make(&p, 512, 512, 1e-9, 1), 0);
        check_plan(&p, 512, 512, 1e-9, 1);
        sample_plan_done(&p);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_properties),
                cmocka_unit_test(test_edges),
                cmocka_unit_test(test_seeds),
                cmocka_unit_test(test_stable),
                cmocka_unit_test(test_invalid),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
