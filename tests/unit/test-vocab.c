/* The words shared by the daemon, its records, its configuration and the CLI: every name maps
 * back to its value, and the one verify parser takes exactly the documented syntax. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sample.h"
#include "vocab.h"

static void test_states(void **state) {
        enum job_state s;

        (void) state;
        for (int i = 0; i < _JOB_STATE_MAX; i++) {
                assert_int_equal(job_state_from_name(job_state_name((enum job_state) i), &s), 0);
                assert_int_equal(s, i);
                assert_int_equal(job_state_name_is_final(job_state_name((enum job_state) i)),
                                 job_state_is_final((enum job_state) i));
        }
        assert_string_equal(job_state_name(JOB_DONE_ERRORS), "done-with-errors");
        assert_string_equal(job_state_name(_JOB_STATE_MAX), "unknown");
        assert_int_equal(job_state_from_name("unknown", &s), -EINVAL);
        assert_int_equal(job_state_from_name("Done", &s), -EINVAL);
        assert_int_equal(job_state_from_name("", &s), -EINVAL);
        assert_int_equal(job_state_from_name(NULL, &s), -EINVAL);
        /* Final: it no longer works. Paused waits for a resume; running and flushing work. */
        assert_true(job_state_name_is_final("interrupted"));
        assert_true(job_state_name_is_final("done-with-errors"));
        assert_false(job_state_name_is_final("paused"));
        assert_false(job_state_name_is_final("flushing"));
        assert_false(job_state_name_is_final(NULL));
        assert_false(job_state_name_is_final("stopping"));
}

static void test_events_and_ends(void **state) {
        enum job_event_kind k;
        enum verify_end e;

        (void) state;
        for (int i = 0; i < _JOB_EVENT_MAX; i++) {
                assert_int_equal(job_event_from_name(job_event_name((enum job_event_kind) i), &k), 0);
                assert_int_equal(k, i);
        }
        assert_int_equal(job_event_from_name("unknown", &k), -EINVAL);
        assert_string_equal(verify_result_word(VERIFY_END_COMPLETE, false), "passed");
        assert_string_equal(verify_result_word(VERIFY_END_COMPLETE, true), "failed");
        for (int i = VERIFY_END_CANCELLED; i < _VERIFY_END_MAX; i++) {
                assert_int_equal(verify_end_from_name(verify_result_word((enum verify_end) i, true), &e), 0);
                assert_int_equal(e, i);
        }
        /* A complete run's words are results, not ends: a record never names them as its end. */
        assert_int_equal(verify_end_from_name("passed", &e), -EINVAL);
        assert_int_equal(verify_end_from_name("failed", &e), -EINVAL);
        assert_int_equal(verify_end_from_name(NULL, &e), -EINVAL);
}

static void verify_ok(const char *s, enum verify_mode want, double pct) {
        enum verify_mode m = _VERIFY_MODE_MAX;
        double p = -1;

        assert_int_equal(verify_mode_parse(s, &m, &p), 0);
        assert_int_equal(m, want);
        assert_true(p == pct);
        /* Either pointer may be left out. */
        assert_int_equal(verify_mode_parse(s, NULL, NULL), 0);
}

static void test_verify_syntax(void **state) {
        static const char *const bad[] = {
                "", "Sample", "LAST", " last", "last ", "sample=", "sample=0", "sample=0.0", "sample=100.1",
                "sample=101", "sample=-5", "sample=+5", "sample= 5", "sample=5 ", "sample=5%", "sample=1e1",
                "sample=1E1", "sample=0x10", "sample=inf", "sample=nan", "sample=.", "sample=1.2.3",
                "sample=1,5", "sample==5", "sample:5", "samples", "none=5", "all=100",
        };
        enum verify_mode m;
        double p;

        (void) state;
        verify_ok("none", VERIFY_NONE, 0);
        verify_ok("sample", VERIFY_SAMPLE, SAMPLE_PERCENT_DEFAULT);
        verify_ok("last", VERIFY_LAST, 0);
        verify_ok("all", VERIFY_ALL, 0);
        verify_ok("sample=10", VERIFY_SAMPLE, 10);
        verify_ok("sample=2.5", VERIFY_SAMPLE, 2.5);
        verify_ok("sample=100", VERIFY_SAMPLE, 100);
        verify_ok("sample=0.001", VERIFY_SAMPLE, 0.001);
        verify_ok("sample=.5", VERIFY_SAMPLE, 0.5);
        verify_ok("sample=5.", VERIFY_SAMPLE, 5);
        verify_ok("sample=010", VERIFY_SAMPLE, 10);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                m = VERIFY_LAST;
                p = 42;
                assert_int_equal(verify_mode_parse(bad[i], &m, &p), -EINVAL);
                /* Refused: nothing changed. */
                assert_int_equal(m, VERIFY_LAST);
                assert_true(p == 42);
        }
        assert_int_equal(verify_mode_parse(NULL, &m, &p), -EINVAL);
        for (int i = 0; i < _VERIFY_MODE_MAX; i++) {
                assert_int_equal(verify_mode_parse(verify_mode_name((enum verify_mode) i), &m, NULL), 0);
                assert_int_equal(m, i);
        }
        assert_string_equal(verify_mode_name(_VERIFY_MODE_MAX), "unknown");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_states),
                cmocka_unit_test(test_events_and_ends),
                cmocka_unit_test(test_verify_syntax),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
