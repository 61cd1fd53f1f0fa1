/* The sanitization record of a job (wiped(8) "REPORTS"): the fields NIST SP 800-88's sample
 * certificate and IEEE 2883 ask for beyond what the wipe itself knows (asset tag, customer, note,
 * destination, who performed and who verified it, the batch of the submit), their checks, their
 * JSON in the job record and the report, and what the report derives for an auditor: the media
 * type, the manufacturer, the host's DMI identity and the overall status. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "cleanup.h"
#include "daemon-config.h"
#include "daemon.h"
#include "protocol.h"
#include "strutil.h"
#include "utf8.h"

const char *const job_person_keys[JOB_PERSON_KEYS] = { "name", "title", "organization", "location", "contact" };

static void person_done(struct job_person *p) {
        for (unsigned i = 0; i < JOB_PERSON_KEYS; i++) {
                free(p->f[i]);
                p->f[i] = NULL;
        }
}

void job_record_done(struct job_record *r) {
        if (!r)
                return;
        free(r->asset_tag);
        free(r->customer);
        free(r->note);
        free(r->destination);
        person_done(&r->operator);
        person_done(&r->verifier);
        *r = (struct job_record) {};
}

/* *dst = a copy of src (NULL stays NULL): false on ENOMEM. */
static bool dup_or_null(char **dst, const char *src) {
        *dst = src ? strdup(src) : NULL;
        return !src || *dst;
}

int job_record_copy(struct job_record *dst, const struct job_record *src, const char *asset_tag) {
        bool ok;

        *dst = (struct job_record) {};
        memcpy(dst->batch, src->batch, sizeof(dst->batch));
        ok = dup_or_null(&dst->asset_tag, asset_tag ? asset_tag : src->asset_tag) &&
             dup_or_null(&dst->customer, src->customer) && dup_or_null(&dst->note, src->note) &&
             dup_or_null(&dst->destination, src->destination);
        for (unsigned i = 0; ok && i < JOB_PERSON_KEYS; i++)
                ok = dup_or_null(&dst->operator.f[i], src->operator.f[i]) &&
                     dup_or_null(&dst->verifier.f[i], src->verifier.f[i]);
        if (!ok) {
                job_record_done(dst);
                return -ENOMEM;
        }
        return 0;
}

int job_record_defaults(struct job_record *r) {
        const struct conffile *c = config_settings();
        uint8_t raw[JOB_BATCH_LEN / 2];
        struct job_record d = {};

        *r = (struct job_record) {};
        /* Borrowed from the settings for the copy: a reload frees them, the job keeps its own. */
        d.destination = c->destination;
        for (unsigned i = 0; i < JOB_PERSON_KEYS; i++) {
                d.operator.f[i] = c->operator_person[i];
                d.verifier.f[i] = c->verifier_person[i];
        }
        if (getrandom(raw, sizeof(raw), 0) != (ssize_t) sizeof(raw))
                return errno ? -errno : -EIO;
        hex_encode(d.batch, raw, sizeof(raw));
        return job_record_copy(r, &d, NULL);
}

bool job_record_text_valid(const char *s, size_t max) {
        size_t n = s ? strlen(s) : 0;

        return n > 0 && n <= max && utf8_text_valid(s, n);
}

/* The string field key of req into *dst (replacing what was there): 0 when absent, 1 when set, or
 * -EINVAL/-ENOMEM with the message in err. null clears it (a default the job is not to carry). */
static int request_text(struct json_object *o, const char *what, const char *key, size_t max, char **dst,
                        char *err, size_t err_len) {
        struct json_object *v;
        char *s = NULL;

        if (!json_object_object_get_ex(o, key, &v))
                return 0;
        if (v && (!json_object_is_type(v, json_type_string) || !job_record_text_valid(json_object_get_string(v), max))) {
                snprintf(err, err_len, "submit: \"%s%s\" must be text of 1 to %zu bytes without control characters%s",
                         what, key, max, v && json_object_is_type(v, json_type_string) ? "" : " (or null)");
                return -EINVAL;
        }
        if (v && !(s = strdup(json_object_get_string(v))))
                return -ENOMEM;
        free(*dst);
        *dst = s;
        return 1;
}

/* A person object of a submit (operator, verifier): only the keys it gives override. */
static int request_person(struct json_object *req, const char *key, struct job_person *p, char *err, size_t err_len) {
        struct json_object *o;
        char what[32];
        int r;

        if (!json_object_object_get_ex(req, key, &o))
                return 0;
        if (!o || !json_object_is_type(o, json_type_object)) {
                snprintf(err, err_len, "submit: \"%s\" must be an object of name, title, organization, location, "
                         "contact", key);
                return -EINVAL;
        }
        json_object_object_foreach(o, k, v) {
                unsigned i;

                (void) v;
                for (i = 0; i < JOB_PERSON_KEYS && strcmp(k, job_person_keys[i]) != 0; i++)
                        ;
                if (i == JOB_PERSON_KEYS) {
                        snprintf(err, err_len, "submit: \"%s\": unknown member \"%.64s\" (name, title, organization, "
                                 "location, contact)", key, k);
                        return -EINVAL;
                }
        }
        snprintf(what, sizeof(what), "%s.", key);
        for (unsigned i = 0; i < JOB_PERSON_KEYS; i++) {
                r = request_text(o, what, job_person_keys[i], JOB_RECORD_TEXT_MAX, &p->f[i], err, err_len);
                if (r < 0)
                        return r;
        }
        return 0;
}

int job_record_parse_request(struct json_object *req, size_t n, struct job_record *r, const char ***asset_tags,
                             char *err, size_t err_len) {
        struct json_object *a;
        int k;

        *asset_tags = NULL;
        if ((k = request_text(req, "", "asset_tag", JOB_RECORD_TEXT_MAX, &r->asset_tag, err, err_len)) < 0 ||
            (k = request_text(req, "", "customer", JOB_RECORD_TEXT_MAX, &r->customer, err, err_len)) < 0 ||
            (k = request_text(req, "", "note", JOB_RECORD_NOTE_MAX, &r->note, err, err_len)) < 0 ||
            (k = request_text(req, "", "destination", JOB_RECORD_TEXT_MAX, &r->destination, err, err_len)) < 0 ||
            (k = request_person(req, "operator", &r->operator, err, err_len)) < 0 ||
            (k = request_person(req, "verifier", &r->verifier, err, err_len)) < 0)
                return k;
        if (!json_object_object_get_ex(req, "asset_tags", &a)) {
                /* One tag names one drive: a batch of several needs one each. */
                if (r->asset_tag && n > 1) {
                        snprintf(err, err_len, "submit: \"asset_tag\" names one drive: give \"asset_tags\", one per "
                                 "device, for %zu devices", n);
                        return -EINVAL;
                }
                return 0;
        }
        if (r->asset_tag) {
                snprintf(err, err_len, "submit: give \"asset_tag\" or \"asset_tags\", not both");
                return -EINVAL;
        }
        if (!a || !json_object_is_type(a, json_type_array) || json_object_array_length(a) != n) {
                snprintf(err, err_len, "submit: \"asset_tags\" must be an array of one asset tag per device (%zu)", n);
                return -EINVAL;
        }
        for (size_t i = 0; i < n; i++) {
                struct json_object *e = json_object_array_get_idx(a, i);

                if (!e || !json_object_is_type(e, json_type_string) ||
                    !job_record_text_valid(json_object_get_string(e), JOB_RECORD_TEXT_MAX)) {
                        snprintf(err, err_len, "submit: \"asset_tags\" entry %zu must be text of 1 to %d bytes "
                                 "without control characters", i + 1, JOB_RECORD_TEXT_MAX);
                        return -EINVAL;
                }
        }
        *asset_tags = calloc(n, sizeof(**asset_tags));
        if (!*asset_tags)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                (*asset_tags)[i] = json_object_get_string(json_object_array_get_idx(a, i));
        return 0;
}

static struct json_object *str_or_null(const char *s) {
        return s ? json_object_new_string(s) : NULL;
}

/* A person as JSON: null when nothing of it is recorded. */
static struct json_object *person_json(const struct job_person *p) {
        struct json_object *o;
        unsigned i;

        for (i = 0; i < JOB_PERSON_KEYS && !p->f[i]; i++)
                ;
        if (i == JOB_PERSON_KEYS)
                return NULL;
        o = json_object_new_object();
        for (i = 0; o && i < JOB_PERSON_KEYS; i++)
                json_object_object_add(o, job_person_keys[i], str_or_null(p->f[i]));
        return o;
}

int job_record_json_add(const struct job_record *r, struct json_object *o) {
        if (json_object_object_add(o, "batch", r->batch[0] ? json_object_new_string(r->batch) : NULL) < 0 ||
            json_object_object_add(o, "asset_tag", str_or_null(r->asset_tag)) < 0 ||
            json_object_object_add(o, "customer", str_or_null(r->customer)) < 0 ||
            json_object_object_add(o, "note", str_or_null(r->note)) < 0 ||
            json_object_object_add(o, "destination", str_or_null(r->destination)) < 0 ||
            json_object_object_add(o, "operator", person_json(&r->operator)) < 0 ||
            json_object_object_add(o, "verifier", person_json(&r->verifier)) < 0)
                return -ENOMEM;
        return 0;
}

/* A string member (null or absent: NULL) into *dst: false when of another type or not record text. */
static bool from_json_text(struct json_object *o, const char *key, size_t max, char **dst) {
        struct json_object *v = NULL;

        *dst = NULL;
        if (!json_object_object_get_ex(o, key, &v) || !v)
                return true;
        if (!json_object_is_type(v, json_type_string) || !job_record_text_valid(json_object_get_string(v), max))
                return false;
        *dst = strdup(json_object_get_string(v));
        return *dst != NULL;
}

static bool from_json_person(struct json_object *o, const char *key, struct job_person *p) {
        struct json_object *v = NULL;

        if (!json_object_object_get_ex(o, key, &v) || !v)
                return true;
        if (!json_object_is_type(v, json_type_object))
                return false;
        for (unsigned i = 0; i < JOB_PERSON_KEYS; i++)
                if (!from_json_text(v, job_person_keys[i], JOB_RECORD_TEXT_MAX, &p->f[i]))
                        return false;
        return true;
}

int job_record_from_json(struct json_object *o, struct job_record *r, const char **bad) {
        struct json_object *v = NULL;

        *r = (struct job_record) {};
        *bad = NULL;
        if (json_object_object_get_ex(o, "batch", &v) && v) {
                const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";

                if (strlen(s) != JOB_BATCH_LEN || strspn(s, "0123456789abcdef") != JOB_BATCH_LEN)
                        *bad = "batch";
                else
                        memcpy(r->batch, s, JOB_BATCH_LEN + 1);
        }
        if (!*bad && !from_json_text(o, "asset_tag", JOB_RECORD_TEXT_MAX, &r->asset_tag))
                *bad = "asset_tag";
        if (!*bad && !from_json_text(o, "customer", JOB_RECORD_TEXT_MAX, &r->customer))
                *bad = "customer";
        if (!*bad && !from_json_text(o, "note", JOB_RECORD_NOTE_MAX, &r->note))
                *bad = "note";
        if (!*bad && !from_json_text(o, "destination", JOB_RECORD_TEXT_MAX, &r->destination))
                *bad = "destination";
        if (!*bad && !from_json_person(o, "operator", &r->operator))
                *bad = "operator";
        if (!*bad && !from_json_person(o, "verifier", &r->verifier))
                *bad = "verifier";
        if (*bad) {
                job_record_done(r);
                return -EBADMSG;
        }
        return 0;
}

const char *job_media_type(const struct device_identity *id) {
        static const char *const virtual_names[] = { "loop", "nbd", "zram", "dm-", "md", "ram", "vd" };
        const char *t = id->transport;

        if (id->is_loop || (t && (strcmp(t, "loop") == 0 || strcmp(t, "virtio") == 0)))
                return "virtual disk";
        for (size_t i = 0; id->name && i < sizeof(virtual_names) / sizeof(virtual_names[0]); i++)
                if (strncmp(id->name, virtual_names[i], strlen(virtual_names[i])) == 0)
                        return "virtual disk";
        if (!t)
                return "unknown";
        if (strcmp(t, "nvme") == 0)
                return "NVMe SSD";
        if (strcmp(t, "usb") == 0)
                return "USB drive";
        if (strcmp(t, "mmc") == 0)
                return "SD/MMC card";
        if (strcmp(t, "sata") == 0 || strcmp(t, "scsi") == 0)
                return id->rotational ? "HDD" : "SSD";
        return "unknown";
}

const char *job_manufacturer(const struct device_identity *id) {
        /* What a model string starts with, for drives behind the SATA translation (vendor "ATA"),
         * and NVMe drives (no vendor attribute). Case is ignored; a prefix must end the word or be
         * followed by a digit where the brand writes its model numbers so (ST4000DM004). */
        static const struct { const char *prefix; const char *name; bool digit; } brands[] = {
                { "samsung", "Samsung", false }, { "wdc", "Western Digital", false },
                { "wd", "Western Digital", true }, { "western digital", "Western Digital", false },
                { "st", "Seagate", true }, { "seagate", "Seagate", false }, { "toshiba", "Toshiba", false },
                { "hgst", "HGST", false }, { "hitachi", "Hitachi", false }, { "intel", "Intel", false },
                { "crucial", "Crucial", false }, { "ct", "Crucial", true }, { "micron", "Micron", false },
                { "kingston", "Kingston", false }, { "sandisk", "SanDisk", false }, { "kioxia", "Kioxia", false },
                { "sk hynix", "SK hynix", false }, { "hynix", "SK hynix", false }, { "lexar", "Lexar", false },
                { "adata", "ADATA", false }, { "transcend", "Transcend", false }, { "corsair", "Corsair", false },
                { "maxtor", "Maxtor", false }, { "fujitsu", "Fujitsu", false }, { "plextor", "Plextor", false },
        };
        const char *v = id->vendor, *m = id->model;

        if (v && *v && strcasecmp(v, "ATA") != 0)
                return v;
        if (!m)
                return NULL;
        for (size_t i = 0; i < sizeof(brands) / sizeof(brands[0]); i++) {
                size_t l = strlen(brands[i].prefix);
                char next;

                if (strlen(m) < l || strncasecmp(m, brands[i].prefix, l) != 0)
                        continue;
                next = m[l];
                if (brands[i].digit ? next >= '0' && next <= '9' : next == '\0' || next == ' ' || next == '_' || next == '-')
                        return brands[i].name;
        }
        return NULL;
}

/* A line of a sysfs file, trimmed; NULL when unreadable, empty or a placeholder firmware writers
 * leave ("To be filled by O.E.M.", "Default string", "None"). */
static char *dmi_read(const char *name) {
        static const char *const placeholders[] = { "To be filled by O.E.M.", "Default string", "None",
                                                    "Not Specified", "System Serial Number" };
        char path[128], buf[256], *t;
        FILE *f;
        size_t n;

        snprintf(path, sizeof(path), "/sys/class/dmi/id/%s", name);
        f = fopen(path, "re");
        if (!f)
                return NULL;
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        t = strip_blanks(buf);
        for (size_t i = 0; i < sizeof(placeholders) / sizeof(placeholders[0]); i++)
                if (strcasecmp(t, placeholders[i]) == 0)
                        return NULL;
        return t[0] && utf8_text_valid(t, strlen(t)) ? strdup(t) : NULL;
}

struct json_object *job_host_dmi_json(void) {
        /* Read once: the host does not change under a running daemon. */
        static const char *const files[] = { "sys_vendor", "product_name", "product_serial", "product_uuid" };
        static const char *const keys[] = { "vendor", "product", "serial", "uuid" };
        static char *values[4];
        static bool read;
        struct json_object *o = json_object_new_object();

        if (!read) {
                for (unsigned i = 0; i < 4; i++)
                        values[i] = dmi_read(files[i]);
                read = true;
        }
        for (unsigned i = 0; o && i < 4; i++)
                json_object_object_add(o, keys[i], str_or_null(values[i]));
        return o;
}

/* o's member key when it is a string, else NULL. */
static const char *member_str(struct json_object *o, const char *key) {
        struct json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
               json_object_get_string(v) : NULL;
}

static int add_str(struct json_object *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int add_str(struct json_object *a, const char *fmt, ...) {
        char buf[400];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        return json_object_array_add(a, json_object_new_string(buf));
}

/* Whether the report's snapshot key (smart_before, smart_after) says the drive failed its overall
 * health check (smart.c reads the snapshot). */
static bool report_smart_failed(struct json_object *o, const char *key) {
        struct json_object *s;

        return json_object_object_get_ex(o, key, &s) && json_object_is_type(s, json_type_object) && smart_failed(s);
}

int job_record_overall(struct json_object *o) {
        _cleanup_json_ struct json_object *ex = json_object_new_array();
        struct json_object *v, *ver = NULL, *passes;
        const char *state = member_str(o, "state"), *result = NULL, *mode = NULL, *s;
        bool not_erased = false, written = false, firmware_written = false;
        uint64_t bad = 0;

        if (!ex)
                return -ENOMEM;
        /* What makes the drive not erased: a job that did not complete, a verification that found
         * the pattern missing, nothing written at all. */
        if (!state || (strcmp(state, "done") != 0 && strcmp(state, "done-with-errors") != 0)) {
                not_erased = true;
                add_str(ex, "job %s", state ? state : "in an unknown state");
        }
        if (json_object_object_get_ex(o, "verification", &ver) && json_object_is_type(ver, json_type_object)) {
                result = member_str(ver, "result");
                mode = member_str(ver, "mode");
        }
        if (result && strcmp(result, "failed") == 0) {
                not_erased = true;
                add_str(ex, "verification failed");
        }
        if (json_object_object_get_ex(o, "passes", &passes) && json_object_is_type(passes, json_type_array))
                for (size_t i = 0; i < json_object_array_length(passes); i++) {
                        struct json_object *p = json_object_array_get_idx(passes, i), *w;

                        if (json_object_object_get_ex(p, "written", &w) && json_object_get_boolean(w)) {
                                written = true;
                                if (json_object_object_get_ex(p, "firmware", NULL))
                                        firmware_written = true;
                        }
                }
        if (!written) {
                not_erased = true;
                add_str(ex, "nothing written");
        }

        /* Exceptions: erased, with something an auditor must know. */
        if (json_object_object_get_ex(o, "bad_bytes", &v) && json_object_is_type(v, json_type_int))
                bad = json_object_get_uint64(v);
        if (bad > 0)
                add_str(ex, "bad sectors skipped: %" PRIu64 " bytes", bad);
        if (json_object_object_get_ex(o, "hidden_area", &v) && json_object_is_type(v, json_type_object)) {
                if (!((s = member_str(v, "action")) && strcmp(s, "restored") == 0))
                        add_str(ex, "hidden area present (HPA/DCO)");
                /* Restored, but the kernel did not see the drive grow (its "note"): the restored
                 * sectors were not overwritten, unless a firmware erase covered the whole drive. */
                else if ((s = member_str(v, "note")) && !firmware_written)
                        add_str(ex, "hidden area restored but not overwritten: %s", s);
        }
        /* A sample that passed says nothing of the rest of the device; a firmware erase is
         * checked by its own proof instead ("by"), whatever the mode planned. */
        if (mode && strcmp(mode, "sample") == 0 && result && strcmp(result, "passed") == 0 &&
            !json_object_object_get_ex(ver, "by", NULL)) {
                struct json_object *pct;

                if (json_object_object_get_ex(ver, "percent", &pct) && pct)
                        add_str(ex, "verification sampled only (%g%%)", json_object_get_double(pct));
                else
                        add_str(ex, "verification sampled only");
        }
        if (written && (!result || strcmp(result, "not run") == 0))
                add_str(ex, "verification not run");
        if ((s = member_str(o, "purge_fallback")))
                add_str(ex, "purge fell back to Clear: %s", s);
        if (state && strcmp(state, "done-with-errors") == 0)
                add_str(ex, "completed with errors");
        if (json_object_object_get_ex(o, "errors", &v) && json_object_is_type(v, json_type_array))
                for (size_t i = 0; i < json_object_array_length(v); i++) {
                        struct json_object *e = json_object_array_get_idx(v, i);
                        const char *msg = member_str(e, "message");

                        add_str(ex, "error: %s", msg ? msg : "(no message)");
                }
        if (report_smart_failed(o, "smart_before") || report_smart_failed(o, "smart_after"))
                add_str(ex, "drive health: SMART overall-health FAILED");

        if (json_object_object_add(o, "overall_status", json_object_new_string(
                        not_erased ? "not erased" : json_object_array_length(ex) ? "erased with exceptions" : "erased")) < 0 ||
            json_object_object_add(o, "exceptions", ex) < 0)
                return -ENOMEM;
        TAKE_PTR(ex);
        return 0;
}
