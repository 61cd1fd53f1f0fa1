/* Drive health as text: the SMART snapshot of a probe ("smart") and of a report ("smart_before",
 * "smart_after"; wiped(8) "DRIVE HEALTH") on one line each. The reason is smartctl's or the
 * daemon's words; it goes through output_escape() like everything else that came from outside. */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "wipectl.h"

/* A count of the snapshot: ", N what" when it says one. */
static void smart_count(char *buf, size_t n, size_t *l, struct json_object *o, const char *key, const char *what) {
        struct json_object *v;

        if (json_object_object_get_ex(o, key, &v) && v && json_object_is_type(v, json_type_int))
                output_append(buf, n, l, ", %" PRId64 " %s", json_object_get_int64(v), what);
}

const char *output_smart_summary(struct json_object *smart, char *buf, size_t n) {
        struct json_object *v;
        char esc[512];
        size_t l = 0;

        buf[0] = '\0';
        if (!smart || !json_object_is_type(smart, json_type_object)) {
                output_append(buf, n, &l, "not recorded");
                return buf;
        }
        if (!json_object_object_get_ex(smart, "available", &v) || !json_object_get_boolean(v)) {
                const char *reason = output_escape(output_get_string(smart, "reason", "unknown"), false, esc, sizeof(esc));

                /* "no SMART: loop device" reads "no SMART (loop device)". */
                if (strncmp(reason, "no SMART: ", 10) == 0)
                        output_append(buf, n, &l, "no SMART (%s)", reason + 10);
                else
                        output_append(buf, n, &l, "not available (%s)", reason);
                return buf;
        }
        if (!json_object_object_get_ex(smart, "passed", &v) || !v || !json_object_is_type(v, json_type_boolean))
                output_append(buf, n, &l, "overall health not reported");
        else if (json_object_get_boolean(v))
                output_append(buf, n, &l, "PASSED");
        else
                output_append(buf, n, &l, "FAILED (SMART overall-health)");
        smart_count(buf, n, &l, smart, "power_on_hours", "power-on hours");
        smart_count(buf, n, &l, smart, "reallocated_sectors", "reallocated");
        smart_count(buf, n, &l, smart, "pending_sectors", "pending");
        smart_count(buf, n, &l, smart, "offline_uncorrectable", "offline uncorrectable");
        if (json_object_object_get_ex(smart, "nvme_percentage_used", &v) && v)
                output_append(buf, n, &l, ", %" PRId64 "%% used", json_object_get_int64(v));
        smart_count(buf, n, &l, smart, "nvme_media_errors", "media errors");
        if (json_object_object_get_ex(smart, "nvme_critical_warning", &v) && v && json_object_get_int64(v) != 0)
                output_append(buf, n, &l, ", critical warning 0x%02" PRIx64, (uint64_t) json_object_get_int64(v));
        if (json_object_object_get_ex(smart, "temperature_c", &v) && v)
                output_append(buf, n, &l, ", %" PRId64 " C", json_object_get_int64(v));
        return buf;
}

void output_smart_probe(struct json_object *probe, const char *indent, int width) {
        struct json_object *smart = NULL;
        int pad = width - (int) strlen(indent) - (int) strlen("Health:");
        char buf[1024];

        /* A daemon from before drive health sends none: say nothing. */
        if (!json_object_object_get_ex(probe, "smart", &smart))
                return;
        printf("%sHealth:%*s%s\n", indent, pad > 1 ? pad : 1, "", output_smart_summary(smart, buf, sizeof(buf)));
}

void output_smart_report(struct json_object *rep) {
        struct json_object *before = NULL, *after = NULL;
        char buf[1024];

        json_object_object_get_ex(rep, "smart_before", &before);
        json_object_object_get_ex(rep, "smart_after", &after);
        printf("  Health before: %s\n", output_smart_summary(before, buf, sizeof(buf)));
        printf("  Health after:  %s\n", output_smart_summary(after, buf, sizeof(buf)));
        if (output_get_string(rep, "smart_policy", NULL))
                printf("  Health policy: %s\n", output_get_string(rep, "smart_policy", "?"));
}
