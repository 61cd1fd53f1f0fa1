/* Parsing of WHEN arguments (common/when.c): every form, the time zone rules, what is refused. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <cmocka.h>

#include "when.h"

#define NOW ((time_t) 1764672000)       /* 2025-12-02T10:40:00Z */

static int64_t ok(const char *s) {
        int64_t v = -1;

        assert_int_equal(when_parse(s, NOW, &v), 0);
        return v;
}

static void test_unix(void **state) {
        int64_t v;

        (void) state;
        assert_int_equal(ok("@0"), 0);
        assert_int_equal(ok("@1764672000"), 1764672000);
        assert_int_equal(ok("now"), NOW);
        assert_int_equal(when_parse("@", NOW, &v), -EINVAL);
        assert_int_equal(when_parse("@-1", NOW, &v), -EINVAL);
        assert_int_equal(when_parse("@12x", NOW, &v), -EINVAL);
        assert_int_equal(when_parse("@99999999999999999999", NOW, &v), -ERANGE);
}

static void test_relative(void **state) {
        int64_t v;

        (void) state;
        assert_int_equal(ok("7d"), NOW - 7 * 86400);
        assert_int_equal(ok("24h"), NOW - 24 * 3600);
        assert_int_equal(ok("30m"), NOW - 30 * 60);
        assert_int_equal(ok("90s"), NOW - 90);
        assert_int_equal(ok("2w"), NOW - 14 * 86400);
        assert_int_equal(ok("0d"), NOW);
        assert_int_equal(when_parse("7", NOW, &v), -EINVAL);
        assert_int_equal(when_parse("7y", NOW, &v), -EINVAL);
        assert_int_equal(when_parse("d", NOW, &v), -EINVAL);
        assert_int_equal(when_parse("-7d", NOW, &v), -EINVAL);
        assert_int_equal(when_parse("7d ago", NOW, &v), -EINVAL);
        assert_int_equal(when_parse("100000w", NOW, &v), -ERANGE);
        assert_int_equal(when_parse("", NOW, &v), -EINVAL);
}

static void test_zoned(void **state) {
        (void) state;
        assert_int_equal(ok("2025-12-02T10:40:00Z"), 1764672000);
        assert_int_equal(ok("2025-12-02T10:40Z"), 1764672000);
        assert_int_equal(ok("2025-12-02 10:40:00Z"), 1764672000);
        assert_int_equal(ok("2025-12-02T11:40:00+01:00"), 1764672000);
        assert_int_equal(ok("2025-12-02T05:40:00-0500"), 1764672000);
        assert_int_equal(ok("2025-12-02T12:40+02"), 1764672000);
        assert_int_equal(ok("1970-01-01T00:00:00Z"), 0);
        assert_int_equal(ok("2024-02-29T00:00:00Z"), 1709164800);
        assert_int_equal(ok("2000-03-01T00:00:00Z"), 951868800);
}

static void test_local(void **state) {
        (void) state;
        /* The zone of the environment, daylight saving included. */
        setenv("TZ", "UTC", 1);
        tzset();
        assert_int_equal(ok("2025-12-02"), 1764633600);
        assert_int_equal(ok("2025-12-02 10:40"), 1764672000);
        setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1);
        tzset();
        assert_int_equal(ok("2025-12-02T11:40:00"), 1764672000);     /* winter: UTC+1 */
        assert_int_equal(ok("2025-07-01T02:00"), 1751328000);        /* summer: UTC+2 */
        assert_int_equal(ok("2025-12-02"), 1764633600 - 3600);
        setenv("TZ", "UTC", 1);
        tzset();
}

static void test_refused(void **state) {
        static const char *const bad[] = {
                "2025-13-01", "2025-00-10", "2025-02-29", "2024-02-30", "2025-04-31", "2025-12-02T24:00",
                "2025-12-02T10:60", "2025-12-02T10:40:60", "2025-12-02T10", "2025-12-02T10:40:0",
                "2025-12-02X", "2025-12-02T10:40+24:00", "2025-12-02T10:40+01:60", "2025-12-02T10:40UTC",
                "2025-12-02T10:40Z ", "2025-12-02T10:40+01:", "25-12-02", "2025/12/02", "2025-1-2", "yesterday",
        };
        int64_t v;

        (void) state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                if (when_parse(bad[i], NOW, &v) != -EINVAL)
                        fail_msg("\"%s\" was accepted or gave another error", bad[i]);
        }
        assert_int_equal(when_parse("1969-12-31T23:59:59Z", NOW, &v), -ERANGE);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_unix),
                cmocka_unit_test(test_relative),
                cmocka_unit_test(test_zoned),
                cmocka_unit_test(test_local),
                cmocka_unit_test(test_refused),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
