/* Output: every command builds one json-c object; this file prints it either as JSON (--json)
 * or as text for people. The text is a rendering of the same object, never other data. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "keystream.h"
#include "units.h"
#include "wipectl.h"

#define OUTPUT_JOB_COLUMNS 9

const char *output_get_string(struct json_object *o, const char *key, const char *def) {
        struct json_object *v = NULL;

        if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return def;
        return json_object_get_string(v);
}

int64_t output_get_int(struct json_object *o, const char *key, int64_t def) {
        struct json_object *v = NULL;

        if (!o || !json_object_object_get_ex(o, key, &v))
                return def;
        if (json_object_is_type(v, json_type_int))
                return json_object_get_int64(v);
        if (json_object_is_type(v, json_type_double))
                return (int64_t) json_object_get_double(v);
        return def;
}

double output_get_double(struct json_object *o, const char *key, double def) {
        struct json_object *v = NULL;

        if (!o || !json_object_object_get_ex(o, key, &v))
                return def;
        if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double))
                return json_object_get_double(v);
        return def;
}

bool output_state_ended(const char *state) {
        return state && (strcmp(state, "done") == 0 || strcmp(state, "failed") == 0 ||
                         strcmp(state, "cancelled") == 0);
}

void output_job_text(struct json_object *job, struct output_job_text *t) {
        int64_t done = output_get_int(job, "bytes_done", 0);
        int64_t total = output_get_int(job, "bytes_total", 0);
        double elapsed = output_get_double(job, "elapsed_s", 0);
        int64_t eta = output_get_int(job, "eta_s", -1);
        double rate = output_get_double(job, "rate_bps", 0);
        bool ended = output_state_ended(output_get_string(job, "state", NULL));

        if (done < 0)
                done = 0;
        if (total > 0)
                snprintf(t->percent, sizeof(t->percent), "%.1f%%", 100.0 * (double) done / (double) total);
        else
                snprintf(t->percent, sizeof(t->percent), "-");
        units_size(t->done, sizeof(t->done), (uint64_t) done);
        if (total > 0)
                units_size(t->total, sizeof(t->total), (uint64_t) total);
        else
                snprintf(t->total, sizeof(t->total), "-");
        /* Once a job has ended its current rate means nothing; its average does. */
        if (ended && elapsed > 0)
                rate = (double) done / elapsed;
        units_rate(t->rate, sizeof(t->rate), rate);
        units_duration(t->eta, sizeof(t->eta), ended ? -1 : eta);
        snprintf(t->pass, sizeof(t->pass), "%" PRId64 "/%" PRId64,
                 output_get_int(job, "pass", 0), output_get_int(job, "passes", 0));
}

/* The cells of one table row, or of the header. */
static void output_job_cells(struct json_object *job, bool header, char cells[OUTPUT_JOB_COLUMNS][64]) {
        static const char *const names[OUTPUT_JOB_COLUMNS] = {
                "ID", "DEVICE", "STATE", "PASS", "PROGRESS", "DONE", "SIZE", "RATE", "ETA",
        };
        struct output_job_text t;

        if (header) {
                for (int i = 0; i < OUTPUT_JOB_COLUMNS; i++)
                        snprintf(cells[i], 64, "%s", names[i]);
                return;
        }
        output_job_text(job, &t);
        snprintf(cells[0], 64, "%" PRId64, output_get_int(job, "id", -1));
        snprintf(cells[1], 64, "%s", output_get_string(job, "device", "?"));
        snprintf(cells[2], 64, "%s", output_get_string(job, "state", "?"));
        snprintf(cells[3], 64, "%s", t.pass);
        snprintf(cells[4], 64, "%s", t.percent);
        snprintf(cells[5], 64, "%s", t.done);
        snprintf(cells[6], 64, "%s", t.total);
        snprintf(cells[7], 64, "%s", t.rate);
        snprintf(cells[8], 64, "%s", t.eta);
}

const char *output_error_line(struct json_object *o, char *buf, size_t n) {
        const char *device = output_get_string(o, "device", "?"), *message, *code;
        struct json_object *e = NULL;
        size_t l = strlen(device);

        if (!o || !json_object_object_get_ex(o, "error", &e) || !json_object_is_type(e, json_type_object))
                return NULL;
        code = output_get_string(e, "code", "EUNKNOWN");
        message = output_get_string(e, "message", "");
        if (!*message)
                snprintf(buf, n, "%s: %s", device, code);
        /* The daemon's messages name their object first; add the device only when it does not. */
        else if (strncmp(message, device, l) == 0 && message[l] == ':')
                snprintf(buf, n, "%s (%s)", message, code);
        else
                snprintf(buf, n, "%s: %s (%s)", device, message, code);
        return buf;
}

/* A table of jobs: columns sized to their widest cell, numbers right-aligned, then one line for
 * each job that failed. */
static int output_jobs_text(struct json_object *jobs) {
        static const bool right[OUTPUT_JOB_COLUMNS] = { true, false, false, true, true, true, true, true, false };
        size_t n = jobs && json_object_is_type(jobs, json_type_array) ? json_object_array_length(jobs) : 0;
        int width[OUTPUT_JOB_COLUMNS] = { 0 };
        char cells[OUTPUT_JOB_COLUMNS][64];
        char err[1024];

        if (n == 0) {
                printf("No jobs.\n");
                return 0;
        }
        for (size_t r = 0; r <= n; r++) {
                output_job_cells(r ? json_object_array_get_idx(jobs, r - 1) : NULL, r == 0, cells);
                for (int i = 0; i < OUTPUT_JOB_COLUMNS; i++) {
                        int l = (int) strlen(cells[i]);

                        if (l > width[i])
                                width[i] = l;
                }
        }
        for (size_t r = 0; r <= n; r++) {
                output_job_cells(r ? json_object_array_get_idx(jobs, r - 1) : NULL, r == 0, cells);
                for (int i = 0; i < OUTPUT_JOB_COLUMNS; i++) {
                        const char *sep = i + 1 < OUTPUT_JOB_COLUMNS ? "  " : "\n";

                        if (i + 1 == OUTPUT_JOB_COLUMNS && !right[i])
                                printf("%s%s", cells[i], sep);
                        else
                                printf("%*s%s", right[i] ? width[i] : -width[i], cells[i], sep);
                }
        }
        for (size_t r = 0; r < n; r++) {
                struct json_object *job = json_object_array_get_idx(jobs, r);

                if (output_error_line(job, err, sizeof(err)))
                        printf("job %" PRId64 ": %s\n", output_get_int(job, "id", -1), err);
        }
        return 0;
}

static int output_submitted_text(struct json_object *jobs) {
        size_t n = jobs && json_object_is_type(jobs, json_type_array) ? json_object_array_length(jobs) : 0;

        for (size_t i = 0; i < n; i++) {
                struct json_object *job = json_object_array_get_idx(jobs, i);

                printf("job %" PRId64 ": %s\n", output_get_int(job, "id", -1), output_get_string(job, "device", "?"));
        }
        return 0;
}

static int output_job_one_text(struct json_object *job) {
        char err[1024];

        printf("job %" PRId64 ": %s: %s\n", output_get_int(job, "id", -1), output_get_string(job, "device", "?"),
               output_get_string(job, "state", "?"));
        if (output_error_line(job, err, sizeof(err)))
                printf("job %" PRId64 ": %s\n", output_get_int(job, "id", -1), err);
        return 0;
}

/* UNIX seconds as local time, "-" when absent. */
static const char *output_time(struct json_object *o, const char *key, char *buf, size_t n) {
        int64_t s = output_get_int(o, key, -1);
        time_t t = (time_t) s;
        struct tm tm;

        if (s < 0 || !localtime_r(&t, &tm) || strftime(buf, n, "%Y-%m-%d %H:%M:%S %z", &tm) == 0)
                snprintf(buf, n, "-");
        return buf;
}

/* Print s for a POSIX shell: as it is when it holds only safe characters, else single-quoted. */
static void output_shell_word(const char *s) {
        if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._-+:@,=") == strlen(s)) {
                fputs(s, stdout);
                return;
        }
        putchar('\'');
        for (; *s; s++)
                if (*s == '\'')
                        fputs("'\\''", stdout);
                else
                        putchar(*s);
        putchar('\'');
}

/* The openssl command that reproduces a random pass: the keystream contract (DESIGN.md section 3).
 * Only for a cipher and key the contract covers; returns whether it printed. */
static bool output_check_command(const char *cipher, const char *key, int64_t bytes, const char *device) {
        enum keystream_cipher c;

        if (!cipher || !key || bytes <= 0 || keystream_cipher_from_name(cipher, &c) < 0 || c == KEYSTREAM_AUTO ||
            strlen(key) != 2 * keystream_key_size(c) || strspn(key, "0123456789abcdefABCDEF") != strlen(key))
                return false;
        printf("openssl enc -%s -K %s -iv 00000000000000000000000000000000 -in /dev/zero | head -c %" PRId64
               " | cmp - ", keystream_cipher_name(c), key, bytes);
        output_shell_word(device);
        putchar('\n');
        return true;
}

static int output_report_text(struct json_object *rep) {
        const char *device = output_get_string(rep, "device", "?");
        const char *state = output_get_string(rep, "state", "?");
        int64_t total = output_get_int(rep, "bytes_total", -1);
        int64_t written = output_get_int(rep, "bytes_written", -1);
        struct json_object *passes = NULL;
        bool any_cipher = false, any_key = false;
        double duration;
        char a[64], b[64], err[1024];
        size_t n = 0;

        if (json_object_object_get_ex(rep, "passes", &passes) && json_object_is_type(passes, json_type_array))
                n = json_object_array_length(passes);

        printf("Wipe report for job %" PRId64 "\n", output_get_int(rep, "job", -1));
        printf("  Device:        %s\n", device);
        printf("  State:         %s\n", state);
        printf("  Method:        %s (%zu pass%s)\n", output_get_string(rep, "method", "?"), n, n == 1 ? "" : "es");
        if (total >= 0)
                printf("  Size:          %s (%" PRId64 " bytes, %" PRId64 "-byte sectors)\n",
                       units_size(a, sizeof(a), (uint64_t) total), total, output_get_int(rep, "sector_size", 0));
        if (written >= 0)
                printf("  Written:       %s (%" PRId64 " bytes)\n", units_size(a, sizeof(a), (uint64_t) written), written);
        printf("  Started:       %s\n", output_time(rep, "started_at", a, sizeof(a)));
        printf("  Ended:         %s\n", output_time(rep, "ended_at", a, sizeof(a)));
        duration = output_get_double(rep, "duration_s", -1);
        /* Short wipes happen (small devices): keep their fraction of a second. */
        if (duration >= 0 && duration < 60)
                printf("  Duration:      %.2fs\n", duration);
        else
                printf("  Duration:      %s\n", units_duration(a, sizeof(a), (int64_t) duration));
        printf("  Average rate:  %s\n", units_rate(b, sizeof(b), output_get_double(rep, "avg_rate_bps", 0)));
        printf("  Tool:          %s\n", output_get_string(rep, "tool", "?"));

        for (size_t i = 0; i < n; i++) {
                struct json_object *p = json_object_array_get_idx(passes, i);
                const char *cipher = output_get_string(p, "cipher", NULL);
                const char *fpr = output_get_string(p, "key_fingerprint", NULL);
                const char *key = output_get_string(p, "key", NULL);

                snprintf(a, sizeof(a), "Pass %" PRId64 ":", output_get_int(p, "pass", (int64_t) i + 1));
                printf("  %-15s%s", a, output_get_string(p, "pattern", "?"));
                if (cipher)
                        printf(", %s", cipher);
                if (fpr)
                        printf(", key fingerprint %s", fpr);
                putchar('\n');
                any_cipher |= cipher != NULL;
                if (!key)
                        continue;
                any_key = true;
                printf("    Key:         %s\n", key);
                /* Only the last pass of a finished job is on the device as a whole. */
                if (i + 1 < n)
                        continue;
                printf("    Check:       ");
                if (strcmp(state, "done") != 0)
                        printf("none: the job ended %s before the pass was complete\n", state);
                else if (!output_check_command(cipher, key, total, device))
                        printf("none: no openssl equivalent for cipher %s\n", cipher ? cipher : "-");
        }
        if (output_error_line(rep, err, sizeof(err)))
                printf("  Error:         %s\n", err);
        if (any_cipher && !any_key)
                printf("Keys are not shown; \"wipectl report --keys %" PRId64 "\" (as root) prints them and the\n"
                       "openssl command that checks the device.\n", output_get_int(rep, "job", -1));
        return 0;
}

static int output_version_text(struct json_object *o) {
        struct json_object *d = NULL, *ciphers = NULL;

        printf("wipectl %s\n", output_get_string(o, "client", "?"));
        if (!json_object_object_get_ex(o, "daemon", &d) || !json_object_is_type(d, json_type_object))
                return 0;
        printf("wiped %s (protocol %" PRId64 ", %" PRId64 " threads", output_get_string(d, "version", "?"),
               output_get_int(d, "protocol", -1), output_get_int(d, "threads", -1));
        if (json_object_object_get_ex(d, "ciphers", &ciphers) && json_object_is_type(ciphers, json_type_array)) {
                printf(", ciphers");
                for (size_t i = 0; i < json_object_array_length(ciphers); i++)
                        printf(" %s", json_object_get_string(json_object_array_get_idx(ciphers, i)));
        }
        printf(", auto = %s)\n", output_get_string(d, "cipher_auto", "?"));
        return 0;
}

int output_render(enum output_kind kind, struct json_object *o, bool json) {
        struct json_object *v = NULL;

        if (json) {
                const char *s = json_object_to_json_string_ext(
                        o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);

                if (!s)
                        return -ENOMEM;
                puts(s);
        } else
                switch (kind) {
                case OUTPUT_JOBS:
                        json_object_object_get_ex(o, "jobs", &v);
                        output_jobs_text(v);
                        break;
                case OUTPUT_SUBMITTED:
                        json_object_object_get_ex(o, "jobs", &v);
                        output_submitted_text(v);
                        break;
                case OUTPUT_JOB:
                        json_object_object_get_ex(o, "job", &v);
                        output_job_one_text(v);
                        break;
                case OUTPUT_REPORT:
                        output_report_text(o);
                        break;
                case OUTPUT_VERSION:
                        output_version_text(o);
                        break;
                }
        if (fflush(stdout) == EOF || ferror(stdout))
                return -EIO;
        return 0;
}

struct json_object *output_from_reply(struct json_object *reply) {
        struct json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_foreach(reply, key, val) {
                if (strcmp(key, "id") == 0 || strcmp(key, "ok") == 0)
                        continue;
                if (json_object_object_add(o, key, json_object_get(val)) < 0) {
                        json_object_put(val);
                        json_object_put(o);
                        return NULL;
                }
        }
        return o;
}
