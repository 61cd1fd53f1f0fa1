/* Drive health (daemon/smart.c) without a drive: smart_parse() on smartctl 7.3's JSON output of an
 * ATA hard disk, a SATA SSD, an NVMe drive, a SCSI drive, a failing ATA drive and a loop device
 * (tests/unit/smart/, read from $top_srcdir, which make check sets), and on output that is not
 * smartctl's, and smart_run() with a program that is not there. Linked with the daemon's library. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cleanup.h"
#include "daemon.h"
#include "smart.h"

#define NUL INT64_MIN           /* a member that must be null */

static char *read_sample(const char *name, size_t *len) {
        const char *top = getenv("top_srcdir");
        char path[4096];
        char *buf;
        FILE *f;
        long n;

        snprintf(path, sizeof(path), "%s/tests/unit/smart/%s", top ? top : ".", name);
        f = fopen(path, "re");
        if (!f)
                fail_msg("%s: %s", path, strerror(errno));
        assert_int_equal(fseek(f, 0, SEEK_END), 0);
        n = ftell(f);
        assert_true(n > 0);
        rewind(f);
        buf = malloc((size_t) n);
        assert_non_null(buf);
        assert_int_equal(fread(buf, 1, (size_t) n, f), (size_t) n);
        fclose(f);
        *len = (size_t) n;
        return buf;
}

static struct json_object *parse_sample(const char *name, int exit_status) {
        size_t len;
        _cleanup_free_ char *buf = read_sample(name, &len);
        struct json_object *o = smart_parse(buf, len, exit_status, 1796211457);

        assert_non_null(o);
        return o;
}

static void check_int(struct json_object *o, const char *key, int64_t want) {
        struct json_object *v;

        if (!json_object_object_get_ex(o, key, &v))
                fail_msg("no member %s in %s", key, json_object_to_json_string(o));
        if (want == NUL) {
                if (v)
                        fail_msg("%s: %s, not null", key, json_object_to_json_string(v));
                return;
        }
        if (!v || !json_object_is_type(v, json_type_int))
                fail_msg("%s is not a number in %s", key, json_object_to_json_string(o));
        assert_int_equal(json_object_get_int64(v), want);
}

/* -1: null, 0: false, 1: true */
static void check_passed(struct json_object *o, int want) {
        struct json_object *v;

        assert_true(json_object_object_get_ex(o, "passed", &v));
        if (want < 0) {
                assert_null(v);
                return;
        }
        assert_non_null(v);
        assert_true(json_object_is_type(v, json_type_boolean));
        assert_int_equal(json_object_get_boolean(v), want);
}

static void check_str(struct json_object *o, const char *key, const char *want) {
        struct json_object *v;

        assert_true(json_object_object_get_ex(o, key, &v));
        assert_non_null(v);
        assert_string_equal(json_object_get_string(v), want);
}

static void check_available(struct json_object *o, bool want) {
        struct json_object *v;

        assert_true(json_object_object_get_ex(o, "available", &v));
        assert_int_equal(json_object_get_boolean(v), want);
        /* A reason only when not available. */
        assert_int_equal(json_object_object_get_ex(o, "reason", NULL), !want);
        check_int(o, "checked_at", 1796211457);
}

static void test_ata_hdd(void **state) {
        _cleanup_json_ struct json_object *o = parse_sample("ata-hdd.json", 0);

        (void) state;
        check_available(o, true);
        check_str(o, "tool", "smartctl 7.3");
        check_passed(o, 1);
        check_int(o, "power_on_hours", 19402);
        check_int(o, "reallocated_sectors", 8);
        check_int(o, "pending_sectors", 0);
        check_int(o, "offline_uncorrectable", 0);
        check_int(o, "nvme_percentage_used", NUL);
        check_int(o, "nvme_media_errors", NUL);
        check_int(o, "nvme_critical_warning", NUL);
        check_int(o, "temperature_c", 34);
        assert_false(smart_failed(o));
}

static void test_sata_ssd(void **state) {
        _cleanup_json_ struct json_object *o = parse_sample("sata-ssd.json", 0);

        (void) state;
        check_available(o, true);
        check_passed(o, 1);
        check_int(o, "power_on_hours", 21877);
        check_int(o, "reallocated_sectors", 0);
        /* This SSD has neither attribute 197 nor 198. */
        check_int(o, "pending_sectors", NUL);
        check_int(o, "offline_uncorrectable", NUL);
        check_int(o, "temperature_c", 36);
}

static void test_nvme(void **state) {
        _cleanup_json_ struct json_object *o = parse_sample("nvme.json", 0);

        (void) state;
        check_available(o, true);
        check_passed(o, 1);
        check_int(o, "power_on_hours", 7321);
        check_int(o, "reallocated_sectors", NUL);
        check_int(o, "pending_sectors", NUL);
        check_int(o, "nvme_percentage_used", 3);
        check_int(o, "nvme_media_errors", 0);
        check_int(o, "nvme_critical_warning", 0);
        check_int(o, "temperature_c", 41);
}

static void test_scsi(void **state) {
        _cleanup_json_ struct json_object *o = parse_sample("scsi.json", 0);

        (void) state;
        check_available(o, true);
        check_passed(o, 1);
        check_int(o, "power_on_hours", 40213);
        /* Its grown defect list. */
        check_int(o, "reallocated_sectors", 12);
        check_int(o, "pending_sectors", NUL);
        check_int(o, "temperature_c", 29);
}

static void test_failing(void **state) {
        _cleanup_json_ struct json_object *o = parse_sample("ata-failing.json", 24);

        (void) state;
        check_available(o, true);
        check_passed(o, 0);
        assert_true(smart_failed(o));
        check_int(o, "power_on_hours", 43482);
        check_int(o, "reallocated_sectors", 3016);
        check_int(o, "pending_sectors", 128);
        check_int(o, "offline_uncorrectable", 96);
        check_int(o, "temperature_c", 39);
}

/* Without smart_status in the JSON, exit status bit 3 (DISK FAILING) says it. */
static void test_failing_exit_status(void **state) {
        const char *text = "{\"smartctl\":{\"version\":[7,3],\"exit_status\":8},"
                           "\"ata_smart_attributes\":{\"table\":[]}}";
        _cleanup_json_ struct json_object *o = smart_parse(text, strlen(text), 8, 1796211457);

        (void) state;
        assert_non_null(o);
        check_available(o, true);
        check_passed(o, 0);
        _cleanup_json_ struct json_object *ok = smart_parse(text, strlen(text), 0, 1796211457);
        check_passed(ok, -1);
        assert_false(smart_failed(ok));
}

static void test_loop(void **state) {
        _cleanup_json_ struct json_object *o = parse_sample("loop.json", 1);

        (void) state;
        check_available(o, false);
        check_str(o, "reason", "no SMART: Unable to detect device type");
        check_str(o, "tool", "smartctl 7.3");
        check_passed(o, -1);
        check_int(o, "power_on_hours", NUL);
        check_int(o, "temperature_c", NUL);
        assert_false(smart_failed(o));
}

static void test_unreadable(void **state) {
        static const char *const bad[] = {
                "", "garbage\n", "{\"smartctl\":", "[1,2]", "{\"no\":\"smartctl\"}",
                "{\"smartctl\":{\"version\":[7,3]}} trailing garbage",
        };

        (void) state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                _cleanup_json_ struct json_object *o = smart_parse(bad[i], strlen(bad[i]), 0, 1796211457);

                assert_non_null(o);
                check_available(o, false);
                check_str(o, "reason", "smartctl output unreadable");
                check_passed(o, -1);
        }
        /* The length counts, not a terminating NUL: a sample cut short is unreadable. */
        {
                size_t len;
                _cleanup_free_ char *buf = read_sample("ata-hdd.json", &len);
                _cleanup_json_ struct json_object *o = smart_parse(buf, len / 2, 0, 1796211457);

                check_str(o, "reason", "smartctl output unreadable");
        }
}

/* A program that is not there: nothing runs (the node is never opened by anything). */
static void test_not_installed(void **state) {
        const char *nodes[] = { "/dev/null", "/dev/null" }, *kinds[] = { NULL, "loop device" };
        struct json_object *out[2] = {};

        (void) state;
        smart_run("wiped-test-no-such-smartctl", 5, nodes, kinds, 2, out);
        for (int i = 0; i < 2; i++) {
                assert_non_null(out[i]);
                check_str(out[i], "reason", "wiped-test-no-such-smartctl not installed");
                check_passed(out[i], -1);
                json_object_put(out[i]);
        }
        smart_run("/nonexistent/smartctl", 5, nodes, kinds, 1, out);
        assert_non_null(out[0]);
        check_str(out[0], "reason", "cannot run /nonexistent/smartctl: No such file or directory");
        json_object_put(out[0]);
}

static void test_policy_names(void **state) {
        enum smart_policy p;

        (void) state;
        assert_int_equal(smart_policy_from_name("refuse", &p), 0);
        assert_int_equal(p, SMART_POLICY_REFUSE);
        assert_string_equal(smart_policy_name(SMART_POLICY_FLAG), "flag");
        assert_int_equal(smart_policy_from_name("Refuse", &p), -EINVAL);
        assert_string_equal(smart_kind("loop3", "loop"), "loop device");
        assert_string_equal(smart_kind("zram0", NULL), "zram device");
        assert_null(smart_kind("sda", "sata"));
        assert_null(smart_kind("nvme0n1", "nvme"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_ata_hdd),
                cmocka_unit_test(test_sata_ssd),
                cmocka_unit_test(test_nvme),
                cmocka_unit_test(test_scsi),
                cmocka_unit_test(test_failing),
                cmocka_unit_test(test_failing_exit_status),
                cmocka_unit_test(test_loop),
                cmocka_unit_test(test_unreadable),
                cmocka_unit_test(test_not_installed),
                cmocka_unit_test(test_policy_names),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
