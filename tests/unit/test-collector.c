/* The collector's pure parts (common/collector.c): report-url and report-header as the
 * configuration checks them, the backoff between delivery attempts, and what an HTTP status means
 * for a report. With the configuration's keys (conffile) that use them. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "collector.h"
#include "conffile.h"

static void test_url(void **state) {
        char host[64];
        bool creds = true;

        (void) state;
        assert_int_equal(collector_url_parse("http://127.0.0.1:8080/reports", host, sizeof(host), &creds), 0);
        assert_string_equal(host, "127.0.0.1:8080");
        assert_false(creds);
        assert_int_equal(collector_url_parse("HTTPS://user:pw@collector.example/x?y#z", host, sizeof(host), &creds), 0);
        assert_string_equal(host, "collector.example");
        assert_true(creds);
        assert_int_equal(collector_url_parse("https://[::1]:443", host, sizeof(host), NULL), 0);
        assert_string_equal(host, "[::1]:443");
        /* Cut to the buffer, never past it. */
        assert_int_equal(collector_url_parse("http://abcdefgh/", host, 4, NULL), 0);
        assert_string_equal(host, "abc");
        assert_true(collector_url_valid("http://h"));
        assert_false(collector_url_valid("ftp://h/"));
        assert_false(collector_url_valid("file:///etc/passwd"));
        assert_false(collector_url_valid("http://"));
        assert_false(collector_url_valid("http:///path"));
        assert_false(collector_url_valid("http://user@/path"));
        assert_false(collector_url_valid("http://:80/"));
        assert_false(collector_url_valid("http://h/a b"));
        assert_false(collector_url_valid("http://h/\r\nX: y"));
        assert_false(collector_url_valid("h/reports"));
        assert_false(collector_url_valid(""));
        assert_false(collector_url_valid(NULL));
}

static void test_header(void **state) {
        (void) state;
        assert_true(collector_header_valid("Authorization: Bearer abc.def"));
        assert_true(collector_header_valid("X-Tenant:lab-3"));
        assert_true(collector_header_valid("X-A: value\twith tab"));
        assert_false(collector_header_valid("Authorization:"));
        assert_false(collector_header_valid("Authorization:   "));
        assert_false(collector_header_valid(": value"));
        assert_false(collector_header_valid("No colon"));
        assert_false(collector_header_valid("Bad Name: v"));
        assert_false(collector_header_valid("X-A: v\r\nX-B: w"));
        /* The ones wiped sets itself, in any case. */
        assert_false(collector_header_valid("Idempotency-Key: 1"));
        assert_false(collector_header_valid("idempotency-key: 1"));
        assert_false(collector_header_valid("Content-Type: text/plain"));
        assert_false(collector_header_valid("content-length: 3"));
        assert_false(collector_header_valid("Host: elsewhere"));
        assert_false(collector_header_valid("Transfer-Encoding: chunked"));
        assert_false(collector_header_valid("X-Wiped-Job: 1"));
        assert_false(collector_header_valid("x-wiped-anything: 1"));
        assert_true(collector_header_valid("X-Wipe: 1"));
        assert_false(collector_header_valid(NULL));
}

static void test_backoff(void **state) {
        (void) state;
        /* 5 s doubling, capped, without jitter (r = 0). */
        assert_true(collector_backoff(1, 300, 0) == 5.0);
        assert_true(collector_backoff(2, 300, 0) == 10.0);
        assert_true(collector_backoff(3, 300, 0) == 20.0);
        assert_true(collector_backoff(7, 300, 0) == 300.0);
        assert_true(collector_backoff(1000, 300, 0) == 300.0);
        assert_true(collector_backoff(1, 2, 0) == 2.0);
        assert_true(collector_backoff(0, 300, 0) == 5.0);
        /* Jitter takes off at most a quarter, never adds. */
        for (double r = 0; r < 1; r += 0.125) {
                double d = collector_backoff(4, 300, r);

                assert_true(d <= 40.0 && d > 30.0);
        }
        assert_true(collector_backoff(2, 300, 5) == 10.0);
}

static void test_outcome(void **state) {
        (void) state;
        assert_int_equal(collector_outcome_of(200), COLLECTOR_DELIVERED);
        assert_int_equal(collector_outcome_of(201), COLLECTOR_DELIVERED);
        assert_int_equal(collector_outcome_of(204), COLLECTOR_DELIVERED);
        assert_int_equal(collector_outcome_of(409), COLLECTOR_DELIVERED);
        assert_int_equal(collector_outcome_of(408), COLLECTOR_RETRY);
        assert_int_equal(collector_outcome_of(429), COLLECTOR_RETRY);
        assert_int_equal(collector_outcome_of(500), COLLECTOR_RETRY);
        assert_int_equal(collector_outcome_of(503), COLLECTOR_RETRY);
        assert_int_equal(collector_outcome_of(301), COLLECTOR_RETRY);
        assert_int_equal(collector_outcome_of(100), COLLECTOR_RETRY);
        assert_int_equal(collector_outcome_of(0), COLLECTOR_RETRY);
        assert_int_equal(collector_outcome_of(400), COLLECTOR_REJECTED);
        assert_int_equal(collector_outcome_of(401), COLLECTOR_REJECTED);
        assert_int_equal(collector_outcome_of(413), COLLECTOR_REJECTED);
}

/* The keys as a file gives them. */
static void test_conffile(void **state) {
        static const char text[] = "report-url = https://c.example/r\n"
                                   "report-header = Authorization: Bearer x\n"
                                   "report-header = X-Site: 3\n"
                                   "report-timeout = 2.5\n"
                                   "report-retry-max-interval = 60\n"
                                   "report-ca-file = /etc/wiped/ca.pem\n";
        struct conffile c;
        char err[1024] = "";

        (void) state;
        assert_int_equal(conffile_parse(&c, "t.conf", text, strlen(text), NULL, err, sizeof(err)), 0);
        assert_string_equal(c.report_url, "https://c.example/r");
        assert_int_equal(c.n_report_header, 2);
        assert_string_equal(c.report_header[1], "X-Site: 3");
        assert_null(c.report_header[2]);
        assert_true(c.report_timeout == 2.5);
        assert_true(c.report_retry_max_interval == 60);
        assert_string_equal(c.report_ca_file, "/etc/wiped/ca.pem");
        assert_false(conffile_key_reloads(CONFFILE_REPORT_URL));
        assert_true(conffile_key_is_list(CONFFILE_REPORT_HEADER));
        conffile_done(&c);

        static const char bad[] = "report-url = gopher://x/\nreport-header = Host: x\nreport-timeout = 0\n"
                                  "report-ca-file = relative.pem\n";
        assert_int_equal(conffile_parse(&c, "b.conf", bad, strlen(bad), NULL, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "b.conf:1:"));
        assert_non_null(strstr(err, "b.conf:2:"));
        assert_non_null(strstr(err, "b.conf:3:"));
        assert_non_null(strstr(err, "b.conf:4:"));
        conffile_done(&c);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_url),
                cmocka_unit_test(test_header),
                cmocka_unit_test(test_backoff),
                cmocka_unit_test(test_outcome),
                cmocka_unit_test(test_conffile),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
