/* Chunk plan: every byte of the device in exactly one chunk, aligned pieces, odd sizes. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "chunk.h"

/* Walk the plan and check coverage: contiguous, no overlap, sector-aligned, ends at total. */
static void check_cover(const struct chunk_plan *p) {
        uint64_t expect = 0;

        for (uint64_t i = 0; i < p->n_chunks; i++) {
                uint64_t off, len;

                chunk_range(p, i, &off, &len);
                assert_int_equal(off, expect);
                assert_true(len > 0);
                assert_true(len <= p->chunk_size);
                assert_int_equal(off % p->sector, 0);
                assert_int_equal(len % p->sector, 0);
                if (i + 1 < p->n_chunks)
                        assert_int_equal(len, p->chunk_size);
                expect += len;
        }
        assert_int_equal(expect, p->total);
}

static void test_defaults(void **state) {
        struct chunk_plan p;

        (void) state;
        assert_int_equal(chunk_plan_init(&p, 256ULL << 20, 512, 0, 0), 0);
        assert_int_equal(p.chunk_size, CHUNK_SIZE_DEFAULT);
        assert_int_equal(p.io_size, CHUNK_IO_DEFAULT);
        assert_int_equal(p.n_chunks, 4);
        check_cover(&p);
}

static void test_not_multiple(void **state) {
        struct chunk_plan p;
        uint64_t off, len;

        (void) state;
        /* 256 MiB + 4 KiB: five chunks, the last one 4 KiB. */
        assert_int_equal(chunk_plan_init(&p, (256ULL << 20) + 4096, 512, 0, 0), 0);
        assert_int_equal(p.n_chunks, 5);
        chunk_range(&p, 4, &off, &len);
        assert_int_equal(off, 256ULL << 20);
        assert_int_equal(len, 4096);
        check_cover(&p);

        /* One sector more than a chunk, 512-byte sectors. */
        assert_int_equal(chunk_plan_init(&p, CHUNK_SIZE_DEFAULT + 512, 512, 0, 0), 0);
        assert_int_equal(p.n_chunks, 2);
        chunk_range(&p, 1, &off, &len);
        assert_int_equal(len, 512);
        check_cover(&p);

        /* Smaller than one write. */
        assert_int_equal(chunk_plan_init(&p, 8192, 4096, 0, 0), 0);
        assert_int_equal(p.n_chunks, 1);
        check_cover(&p);
}

static void test_4k_sectors(void **state) {
        struct chunk_plan p;

        (void) state;
        assert_int_equal(chunk_plan_init(&p, 1000ULL * 4096, 4096, 3 * 4096 + 100, 4096 + 1), 0);
        /* io_size rounds up to a sector multiple, chunk_size to an io_size multiple. */
        assert_int_equal(p.io_size, 8192);
        assert_int_equal(p.chunk_size % p.io_size, 0);
        assert_true(p.chunk_size >= 3 * 4096 + 100);
        check_cover(&p);
        /* Device not a multiple of a 4 KiB sector: refused. */
        assert_int_equal(chunk_plan_init(&p, 1000ULL * 4096 + 512, 4096, 0, 0), -EINVAL);
}

static void test_large_and_odd(void **state) {
        struct chunk_plan p;
        uint64_t off, len;

        (void) state;
        /* 16 TiB + 7 sectors: arithmetic stays exact far past 2^32 chunks of bytes. */
        assert_int_equal(chunk_plan_init(&p, (16ULL << 40) + 7 * 512, 512, 0, 0), 0);
        assert_int_equal(p.n_chunks, (16ULL << 40) / CHUNK_SIZE_DEFAULT + 1);
        chunk_range(&p, p.n_chunks - 1, &off, &len);
        assert_int_equal(off + len, p.total);
        assert_int_equal(len, 7 * 512);
        /* Out of range index: empty. */
        chunk_range(&p, p.n_chunks, &off, &len);
        assert_int_equal(len, 0);
}

static void test_invalid(void **state) {
        struct chunk_plan p;

        (void) state;
        assert_int_equal(chunk_plan_init(&p, 0, 512, 0, 0), -EINVAL);
        assert_int_equal(chunk_plan_init(&p, 1000, 512, 0, 0), -EINVAL);
        assert_int_equal(chunk_plan_init(&p, 4096, 256, 0, 0), -EINVAL);
        assert_int_equal(chunk_plan_init(&p, 4096, 1000, 0, 0), -EINVAL);
        assert_int_equal(chunk_plan_init(&p, 4096, 131072, 0, 0), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_defaults),
                cmocka_unit_test(test_not_multiple),
                cmocka_unit_test(test_4k_sectors),
                cmocka_unit_test(test_large_and_odd),
                cmocka_unit_test(test_invalid),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
