/* Formatting and parsing of sizes, rates and durations. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "units.h"

static void test_size(void **state) {
        char b[32];

        (void) state;
        assert_string_equal(units_size(b, sizeof(b), 0), "0 B");
        assert_string_equal(units_size(b, sizeof(b), 1023), "1023 B");
        assert_string_equal(units_size(b, sizeof(b), 1024), "1.00 KiB");
        assert_string_equal(units_size(b, sizeof(b), 1ULL << 30), "1.00 GiB");
        assert_string_equal(units_size(b, sizeof(b), (256ULL << 20) + 4096), "256 MiB");
        assert_string_equal(units_size(b, sizeof(b), 15ULL << 40), "15.0 TiB");
}

static void test_rate(void **state) {
        char b[32];

        (void) state;
        assert_string_equal(units_rate(b, sizeof(b), 1234.5e6), "1234.5 MB/s");
        assert_string_equal(units_rate(b, sizeof(b), -1), "0.0 MB/s");
}

static void test_duration(void **state) {
        char b[32];

        (void) state;
        assert_string_equal(units_duration(b, sizeof(b), -1), "-");
        assert_string_equal(units_duration(b, sizeof(b), 45), "45s");
        assert_string_equal(units_duration(b, sizeof(b), 245), "4m05s");
        assert_string_equal(units_duration(b, sizeof(b), 2 * 3600 + 13 * 60 + 5), "2h13m");
        assert_string_equal(units_duration(b, sizeof(b), 5 * 86400 + 3 * 3600), "5d03h");
}

static void test_parse(void **state) {
        uint64_t v;

        (void) state;
        assert_int_equal(units_parse_size("4096", &v), 0);
        assert_int_equal(v, 4096);
        assert_int_equal(units_parse_size("1M", &v), 0);
        assert_int_equal(v, 1 << 20);
        assert_int_equal(units_parse_size("2GiB", &v), 0);
        assert_int_equal(v, 2ULL << 30);
        assert_int_equal(units_parse_size("64k", &v), 0);
        assert_int_equal(v, 64 << 10);
        assert_int_equal(units_parse_size("", &v), -EINVAL);
        assert_int_equal(units_parse_size("-1", &v), -EINVAL);
        assert_int_equal(units_parse_size("1X", &v), -EINVAL);
        assert_int_equal(units_parse_size("1Mfoo", &v), -EINVAL);
        assert_int_equal(units_parse_size("4096 ", &v), -EINVAL);
        assert_int_equal(units_parse_size("4096@", &v), -EINVAL);
        assert_int_equal(units_parse_size("99999999999999999999", &v), -ERANGE);
        assert_int_equal(units_parse_size("17179869184E", &v), -ERANGE);
}

static void test_parse_rate(void **state) {
        uint64_t v = 7;

        (void) state;
        assert_int_equal(units_parse_rate("0", &v), 0);
        assert_int_equal(v, 0);
        assert_int_equal(units_parse_rate("200M", &v), 0);
        assert_int_equal(v, 200000000);
        assert_int_equal(units_parse_rate("200MB/s", &v), 0);
        assert_int_equal(v, 200000000);
        assert_int_equal(units_parse_rate("1.5G", &v), 0);
        assert_int_equal(v, 1500000000);
        assert_int_equal(units_parse_rate("64MiB", &v), 0);
        assert_int_equal(v, 64ull << 20);
        assert_int_equal(units_parse_rate("10k", &v), 0);
        assert_int_equal(v, 10000);
        assert_int_equal(units_parse_rate("4096", &v), 0);
        assert_int_equal(v, 4096);
        v = 7;
        assert_int_equal(units_parse_rate("abc", &v), -EINVAL);
        assert_int_equal(units_parse_rate("", &v), -EINVAL);
        assert_int_equal(units_parse_rate("-5M", &v), -EINVAL);
        assert_int_equal(units_parse_rate("5X", &v), -EINVAL);
        assert_int_equal(units_parse_rate("5M/h", &v), -EINVAL);
        assert_int_equal(units_parse_rate("0.5", &v), -EINVAL);
        assert_int_equal(units_parse_rate("nan", &v), -EINVAL);
        assert_int_equal(units_parse_rate("0x10", &v), -EINVAL);
        assert_int_equal(units_parse_rate("1e9", &v), -EINVAL);
        assert_int_equal(units_parse_rate("1.2.3M", &v), -EINVAL);
        assert_int_equal(units_parse_rate("99999999999T", &v), -ERANGE);
        assert_int_equal(v, 7);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_size),
                cmocka_unit_test(test_rate),
                cmocka_unit_test(test_duration),
                cmocka_unit_test(test_parse),
                cmocka_unit_test(test_parse_rate),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
