/* The Prometheus exposition text (daemon/metrics.c): label values escaped as the format says, and
 * the daemon's metrics with an empty job table, each with its HELP and TYPE, every state listed,
 * no per-job series. Links the daemon's library. (The real scrape, by Prometheus and node_exporter
 * while jobs run, is tests/integration/metrics.sh.) */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "daemon/daemon.h"

static char *escaped(const char *v) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);

        assert_non_null(f);
        metrics_put_label(f, v);
        assert_int_equal(fclose(f), 0);
        return text;
}

static void test_label_escape(void **state) {
        static const struct { const char *in, *out; } cases[] = {
                { "", "" },
                { "/dev/sda", "/dev/sda" },
                { "a\\b", "a\\\\b" },
                { "say \"hi\"", "say \\\"hi\\\"" },
                { "two\nlines", "two\\nlines" },
                { "\\\"\n", "\\\\\\\"\\n" },
                { "tab\there", "tab\there" },           /* only these three are escaped */
                { "Samsung SSD 870 ∞", "Samsung SSD 870 ∞" },
        };

        (void) state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *got = escaped(cases[i].in);

                assert_string_equal(got, cases[i].out);
                free(got);
        }
        free(escaped(NULL));
}

/* Every "# TYPE name" is preceded by its HELP and followed by samples of that name only. */
static void test_render_empty(void **state) {
        size_t len = 0, types = 0;
        char *text = metrics_render(true, &len), *line, *save = NULL, cur[128] = "";

        (void) state;
        assert_non_null(text);
        assert_int_equal(strlen(text), len);
        assert_non_null(strstr(text, "\nwiped_up 1\n"));
        assert_non_null(strstr(text, "wiped_build_info{version=\"" PACKAGE_VERSION "\"} 1\n"));
        for (unsigned s = 0; s < _JOB_STATE_MAX; s++) {
                char want[128];

                snprintf(want, sizeof(want), "\nwiped_jobs{state=\"%s\"} 0\n", job_state_name((enum job_state) s));
                assert_non_null(strstr(text, want));
        }
        assert_null(strstr(text, "wiped_job_"));
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                if (strncmp(line, "# HELP ", 7) == 0)
                        continue;
                if (strncmp(line, "# TYPE ", 7) == 0) {
                        char *sp = strchr(line + 7, ' ');

                        assert_non_null(sp);
                        assert_true(strcmp(sp + 1, "gauge") == 0 || strcmp(sp + 1, "counter") == 0);
                        snprintf(cur, sizeof(cur), "%.*s", (int) (sp - line - 7), line + 7);
                        if (strcmp(sp + 1, "counter") == 0)
                                assert_non_null(strstr(cur, "_total"));
                        types++;
                        continue;
                }
                assert_true(cur[0]);
                assert_int_equal(strncmp(line, cur, strlen(cur)), 0);
                assert_true(line[strlen(cur)] == ' ' || line[strlen(cur)] == '{');
        }
        assert_true(types >= 10);
        free(text);
        text = metrics_render(false, &len);
        assert_non_null(text);
        assert_non_null(strstr(text, "\nwiped_up 0\n"));
        free(text);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_label_escape),
                cmocka_unit_test(test_render_empty),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
