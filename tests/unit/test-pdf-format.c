/* The PDF certificate's text helpers (cli/pdf-format.c): times in UTC, durations, and the key file
 * that the printed check command names. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "pdf.h"

static void test_time(void **state) {
        char b[32];

        (void) state;
        assert_string_equal(pdf_format_time(0, b, sizeof(b)), "1970-01-01T00:00:00Z");
        assert_string_equal(pdf_format_time(1796211409, b, sizeof(b)), "2026-12-02T11:36:49Z");
        /* UTC whatever the local zone. */
        setenv("TZ", "Asia/Kolkata", 1);
        assert_string_equal(pdf_format_time(1796211409, b, sizeof(b)), "2026-12-02T11:36:49Z");
        unsetenv("TZ");
        /* Too small a buffer: a placeholder, never a cut date. */
        assert_string_equal(pdf_format_time(0, b, 8), "?");
}

static void test_duration(void **state) {
        char b[64];

        (void) state;
        assert_string_equal(pdf_format_duration(0, b, sizeof(b)), "0.0 s");
        assert_string_equal(pdf_format_duration(12.5, b, sizeof(b)), "12.5 s");
        assert_string_equal(pdf_format_duration(245, b, sizeof(b)), "4 min 05 s (245.0 s)");
        assert_string_equal(pdf_format_duration(7384, b, sizeof(b)), "2 h 03 min 04 s (7384.0 s)");
        assert_string_equal(pdf_format_duration(90061, b, sizeof(b)), "25 h 01 min 01 s (90061.0 s)");
        assert_string_equal(pdf_format_duration(-1, b, sizeof(b)), "?");
}

static void test_key_path(void **state) {
        struct pdf_options o = { .key_path = "/media/usb/host-key.pub" };
        char b[256];

        (void) state;
        assert_string_equal(pdf_format_key_path(NULL, "/var/lib/wiped/reports/3.json", b, sizeof(b)),
                            "/var/lib/wiped/host-key.pub");
        assert_string_equal(pdf_format_key_path(NULL, "/srv/w/reports/12.json", b, sizeof(b)), "/srv/w/host-key.pub");
        /* The last directory counts, not the first "reports" in the path. */
        assert_string_equal(pdf_format_key_path(NULL, "/reports/x/reports/1.json", b, sizeof(b)),
                            "/reports/x/host-key.pub");
        /* Not in a reports/ directory (a copy elsewhere): wiped's default. */
        assert_string_equal(pdf_format_key_path(NULL, "/tmp/12.json", b, sizeof(b)), "/var/lib/wiped/host-key.pub");
        assert_string_equal(pdf_format_key_path(NULL, "/tmp/myreports/12.json", b, sizeof(b)),
                            "/var/lib/wiped/host-key.pub");
        assert_string_equal(pdf_format_key_path(NULL, "12.json", b, sizeof(b)), "/var/lib/wiped/host-key.pub");
        assert_string_equal(pdf_format_key_path(NULL, "/reports/1.json", b, sizeof(b)), "/var/lib/wiped/host-key.pub");
        /* --key wins. */
        assert_string_equal(pdf_format_key_path(&o, "/srv/w/reports/12.json", b, sizeof(b)), "/media/usb/host-key.pub");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_time),
                cmocka_unit_test(test_duration),
                cmocka_unit_test(test_key_path),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
