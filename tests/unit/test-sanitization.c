/* The sanitization record's logic (daemon/job-record.c): the media type and manufacturer of an
 * identity, the checks of a submit's record fields, the record's JSON read back, and the overall
 * status an auditor reads, derived from a report object. Links the daemon's library; no device. */
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
#include <json-c/json.h>

#include "daemon/daemon.h"

static void test_media_type(void **state) {
        struct device_identity id = {};

        (void) state;
        assert_string_equal(job_media_type(&id), "unknown");
        id.name = "loop3";
        id.transport = "loop";
        id.is_loop = true;
        assert_string_equal(job_media_type(&id), "virtual disk");
        id = (struct device_identity) { .name = "nvme0n1", .transport = "nvme" };
        assert_string_equal(job_media_type(&id), "NVMe SSD");
        id = (struct device_identity) { .name = "sda", .transport = "sata", .rotational = true };
        assert_string_equal(job_media_type(&id), "HDD");
        id.rotational = false;
        assert_string_equal(job_media_type(&id), "SSD");
        id = (struct device_identity) { .name = "sdb", .transport = "usb", .rotational = true };
        assert_string_equal(job_media_type(&id), "USB drive");
        id = (struct device_identity) { .name = "mmcblk0", .transport = "mmc" };
        assert_string_equal(job_media_type(&id), "SD/MMC card");
        id = (struct device_identity) { .name = "vda", .transport = "virtio" };
        assert_string_equal(job_media_type(&id), "virtual disk");
        /* Stacked and memory disks, whatever their transport says. */
        id = (struct device_identity) { .name = "dm-0" };
        assert_string_equal(job_media_type(&id), "virtual disk");
        id = (struct device_identity) { .name = "md127" };
        assert_string_equal(job_media_type(&id), "virtual disk");
        id = (struct device_identity) { .name = "zram0" };
        assert_string_equal(job_media_type(&id), "virtual disk");
        id = (struct device_identity) { .name = "nbd2" };
        assert_string_equal(job_media_type(&id), "virtual disk");
        id = (struct device_identity) { .name = "sdc", .transport = "scsi", .rotational = true };
        assert_string_equal(job_media_type(&id), "HDD");
}

static void test_manufacturer(void **state) {
        struct device_identity id = {};

        (void) state;
        assert_null(job_manufacturer(&id));
        id.vendor = "SEAGATE";
        assert_string_equal(job_manufacturer(&id), "SEAGATE");
        /* The SATA translation's vendor: the model names the maker. */
        id.vendor = "ATA";
        id.model = "ST4000DM004-2CV104";
        assert_string_equal(job_manufacturer(&id), "Seagate");
        id.model = "Samsung SSD 860 EVO 500GB";
        assert_string_equal(job_manufacturer(&id), "Samsung");
        id.model = "WDC WD40EFRX-68N32N0";
        assert_string_equal(job_manufacturer(&id), "Western Digital");
        id.model = "CT500MX500SSD1";
        assert_string_equal(job_manufacturer(&id), "Crucial");
        /* A prefix that is only the start of a word names nobody. */
        id.model = "STORAGE DEVICE";
        assert_null(job_manufacturer(&id));
        id.model = "QEMU HARDDISK";
        assert_null(job_manufacturer(&id));
        id.vendor = NULL;
        id.model = "INTEL SSDPEKNW512G8";
        assert_string_equal(job_manufacturer(&id), "Intel");
}

/* job_record_parse_request() of the JSON text req for n devices over an empty record: its result,
 * the message in err (the per-device tags are dropped). */
static int parse_request(const char *req, size_t n, struct job_record *r, const char ***tags, char *err, size_t len) {
        struct json_object *o = json_tokener_parse(req);
        int k;

        assert_non_null(o);
        *r = (struct job_record) {};
        err[0] = '\0';
        k = job_record_parse_request(o, n, r, tags, err, len);
        free(*tags);
        *tags = NULL;
        json_object_put(o);
        return k;
}

static void test_request(void **state) {
        static const struct { const char *req; size_t n; const char *field; } bad[] = {
                { "{\"customer\":\"a\\u0001b\"}", 1, "\"customer\"" },
                { "{\"customer\":\"\\u009b[31m\"}", 1, "\"customer\"" },
                { "{\"note\":\"two\\nlines\"}", 1, "\"note\"" },
                { "{\"destination\":\"\"}", 1, "\"destination\"" },
                { "{\"destination\":5}", 1, "\"destination\"" },
                { "{\"operator\":\"Ana\"}", 1, "\"operator\"" },
                { "{\"operator\":{\"shoe\":\"44\"}}", 1, "\"shoe\"" },
                { "{\"verifier\":{\"name\":7}}", 1, "\"verifier.name\"" },
                { "{\"asset_tag\":\"A\"}", 2, "\"asset_tag\"" },
                { "{\"asset_tags\":[\"A\"]}", 2, "\"asset_tags\"" },
                { "{\"asset_tags\":[\"A\",7]}", 2, "\"asset_tags\" entry 2" },
                { "{\"asset_tags\":[\"A\"],\"asset_tag\":\"A\"}", 1, "\"asset_tag\" or \"asset_tags\"" },
        };
        struct job_record r;
        const char **tags = NULL;
        char err[256], big[1100], req[1200];

        (void) state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                print_message("%s\n", bad[i].req);
                tags = NULL;
                assert_int_equal(parse_request(bad[i].req, bad[i].n, &r, &tags, err, sizeof(err)), -EINVAL);
                if (!strstr(err, bad[i].field))
                        fail_msg("%s: \"%s\" does not name %s", bad[i].req, err, bad[i].field);
                job_record_done(&r);
        }
        /* 256 bytes of a tag, 1024 of a note, not one more. */
        memset(big, 'x', sizeof(big));
        big[256] = '\0';
        snprintf(req, sizeof(req), "{\"asset_tag\":\"%s\"}", big);
        tags = NULL;
        assert_int_equal(parse_request(req, 1, &r, &tags, err, sizeof(err)), 0);
        job_record_done(&r);
        big[256] = 'x';
        big[257] = '\0';
        snprintf(req, sizeof(req), "{\"asset_tag\":\"%s\"}", big);
        assert_int_equal(parse_request(req, 1, &r, &tags, err, sizeof(err)), -EINVAL);
        job_record_done(&r);
        memset(big, 'x', sizeof(big));
        big[1024] = '\0';
        snprintf(req, sizeof(req), "{\"note\":\"%s\"}", big);
        assert_int_equal(parse_request(req, 1, &r, &tags, err, sizeof(err)), 0);
        job_record_done(&r);
        big[1024] = 'x';
        big[1025] = '\0';
        snprintf(req, sizeof(req), "{\"note\":\"%s\"}", big);
        assert_int_equal(parse_request(req, 1, &r, &tags, err, sizeof(err)), -EINVAL);
        job_record_done(&r);

        /* Good: only the keys given override what was there; null clears a default. */
        r = (struct job_record) {};
        r.destination = strdup("reuse");
        r.operator.f[0] = strdup("Conf");
        r.operator.f[2] = strdup("Org");
        {
                struct json_object *o = json_tokener_parse("{\"customer\":\"ACME ✓\",\"operator\":{\"title\":\"Lead\","
                                                           "\"organization\":null},\"asset_tags\":[\"T1\",\"T2\"]}");

                assert_int_equal(job_record_parse_request(o, 2, &r, &tags, err, sizeof(err)), 0);
                assert_non_null(tags);
                assert_string_equal(tags[0], "T1");
                assert_string_equal(tags[1], "T2");
                free(tags);
                json_object_put(o);
        }
        assert_string_equal(r.customer, "ACME ✓");
        assert_string_equal(r.destination, "reuse");
        assert_string_equal(r.operator.f[0], "Conf");
        assert_string_equal(r.operator.f[1], "Lead");
        assert_null(r.operator.f[2]);
        assert_null(r.asset_tag);
        job_record_done(&r);
}

static void test_json(void **state) {
        struct job_record r = {}, back, copy;
        struct json_object *o = json_object_new_object(), *v;
        const char *bad;

        (void) state;
        memcpy(r.batch, "0123456789abcdef0123456789abcdef", JOB_BATCH_LEN + 1);
        r.customer = strdup("ACME");
        r.verifier.f[4] = strdup("+49 30 1234");
        assert_int_equal(job_record_copy(&copy, &r, "TAG-9"), 0);
        assert_int_equal(job_record_json_add(&copy, o), 0);
        assert_string_equal(json_object_get_string(json_object_object_get(o, "asset_tag")), "TAG-9");
        assert_true(json_object_object_get_ex(o, "operator", &v));
        assert_null(v);         /* nothing of the operator recorded: null, not an object of nulls */
        assert_true(json_object_object_get_ex(o, "note", &v));
        assert_null(v);
        assert_int_equal(job_record_from_json(o, &back, &bad), 0);
        assert_string_equal(back.batch, r.batch);
        assert_string_equal(back.asset_tag, "TAG-9");
        assert_string_equal(back.customer, "ACME");
        assert_string_equal(back.verifier.f[4], "+49 30 1234");
        assert_null(back.verifier.f[0]);
        job_record_done(&back);
        json_object_object_add(o, "batch", json_object_new_string("not hex"));
        assert_int_equal(job_record_from_json(o, &back, &bad), -EBADMSG);
        assert_string_equal(bad, "batch");
        json_object_put(o);
        job_record_done(&copy);
        job_record_done(&r);
        job_record_done(NULL);
}

/* The overall status of the report text: status and exceptions joined by "|". */
static void overall(const char *report, const char *want_status, const char *want_exceptions) {
        struct json_object *o = json_tokener_parse(report), *ex;
        char got[1024] = "";
        size_t used = 0;

        assert_non_null(o);
        assert_int_equal(job_record_overall(o), 0);
        assert_string_equal(json_object_get_string(json_object_object_get(o, "overall_status")), want_status);
        ex = json_object_object_get(o, "exceptions");
        assert_true(json_object_is_type(ex, json_type_array));
        for (size_t i = 0; i < json_object_array_length(ex); i++)
                used += (size_t) snprintf(got + used, sizeof(got) - used, "%s%s", i ? "|" : "",
                                          json_object_get_string(json_object_array_get_idx(ex, i)));
        assert_string_equal(got, want_exceptions);
        json_object_put(o);
}

#define WRITTEN "\"passes\":[{\"pass\":1,\"written\":true}]"

static void test_overall(void **state) {
        (void) state;
        overall("{\"state\":\"done\"," WRITTEN ",\"verification\":{\"mode\":\"last\",\"result\":\"passed\"},\"bad_bytes\":0,"
                "\"hidden_area\":null,\"purge_fallback\":null,\"errors\":[]}", "erased", "");
        overall("{\"state\":\"done\"," WRITTEN ",\"verification\":{\"mode\":\"sample\",\"percent\":2.5,\"result\":\"passed\"}}",
                "erased with exceptions", "verification sampled only (2.5%)");
        overall("{\"state\":\"done\"," WRITTEN ",\"verification\":{\"mode\":\"none\",\"result\":\"not run\"}}",
                "erased with exceptions", "verification not run");
        overall("{\"state\":\"done-with-errors\"," WRITTEN ",\"verification\":{\"mode\":\"all\",\"result\":\"passed\"},"
                "\"bad_bytes\":4096}", "erased with exceptions", "bad sectors skipped: 4096 bytes|completed with errors");
        overall("{\"state\":\"done\"," WRITTEN ",\"verification\":{\"mode\":\"all\",\"result\":\"passed\"},"
                "\"hidden_area\":{\"action\":\"ignored\"}}", "erased with exceptions", "hidden area present (HPA/DCO)");
        overall("{\"state\":\"done\"," WRITTEN ",\"verification\":{\"mode\":\"all\",\"result\":\"passed\"},"
                "\"hidden_area\":{\"action\":\"restored\"}}", "erased", "");
        /* Restored, but the kernel still sees the old size: those sectors were not overwritten,
         * unless a firmware erase covered them. */
        overall("{\"state\":\"done\"," WRITTEN ",\"verification\":{\"mode\":\"all\",\"result\":\"passed\"},"
                "\"hidden_area\":{\"action\":\"restored\",\"note\":\"not overwritten\"}}", "erased with exceptions",
                "hidden area restored but not overwritten: not overwritten");
        overall("{\"state\":\"done\",\"passes\":[{\"pass\":1,\"written\":true,\"firmware\":{}}],"
                "\"verification\":{\"mode\":\"last\",\"by\":\"firmware erase proof\",\"result\":\"passed\"},"
                "\"hidden_area\":{\"action\":\"restored\",\"note\":\"not overwritten\"}}", "erased", "");
        overall("{\"state\":\"done\"," WRITTEN ",\"verification\":{\"mode\":\"last\",\"result\":\"passed\"},"
                "\"purge_fallback\":\"no sanitize: random written\"}", "erased with exceptions",
                "purge fell back to Clear: no sanitize: random written");
        /* SMART's fields, read when present: a failed health check under "flag". */
        overall("{\"state\":\"done\"," WRITTEN ",\"verification\":{\"mode\":\"last\",\"result\":\"passed\"},"
                "\"smart_before\":{\"available\":true,\"passed\":true},\"smart_after\":{\"available\":true,\"passed\":false}}",
                "erased with exceptions", "drive health: SMART overall-health FAILED");
        overall("{\"state\":\"done\"," WRITTEN ",\"verification\":{\"mode\":\"last\",\"result\":\"passed\"},"
                "\"smart_before\":{\"available\":false,\"passed\":null}}", "erased", "");
        /* A firmware erase's proof is its verification, whatever the mode planned. */
        overall("{\"state\":\"done\"," WRITTEN ",\"verification\":{\"mode\":\"sample\",\"percent\":10,"
                "\"by\":\"firmware erase proof\",\"result\":\"passed\"}}", "erased", "");
        /* A sample cut short was not a sample that passed. */
        overall("{\"state\":\"done\"," WRITTEN ",\"verification\":{\"mode\":\"sample\",\"percent\":10,\"result\":\"not run\"}}",
                "erased with exceptions", "verification not run");
        /* Not erased. */
        overall("{\"state\":\"cancelled\"," WRITTEN ",\"verification\":{\"mode\":\"last\",\"result\":\"not run\"}}",
                "not erased", "job cancelled|verification not run");
        overall("{\"state\":\"failed\",\"passes\":[{\"written\":false}],\"verification\":{\"mode\":\"last\",\"result\":\"not run\"},"
                "\"errors\":[{\"errno\":\"EIO\",\"message\":\"write failed\"}]}", "not erased",
                "job failed|nothing written|error: write failed");
        overall("{\"state\":\"done\"," WRITTEN ",\"verification\":{\"mode\":\"all\",\"result\":\"failed\"}}",
                "not erased", "verification failed");
        overall("{}", "not erased", "job in an unknown state|nothing written");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_media_type),
                cmocka_unit_test(test_manufacturer),
                cmocka_unit_test(test_request),
                cmocka_unit_test(test_json),
                cmocka_unit_test(test_overall),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
