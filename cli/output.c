/* Output: every command builds one json-c object; this file prints it either as JSON (--json)
 * or as text for people. The text is a rendering of the same object, never other data. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "keystream.h"
#include "units.h"
#include "wipectl.h"

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

const char *output_escape(const char *s, bool quote, char *buf, size_t n) {
        bool q = quote && s && n >= 3;
        size_t l = 0;

        if (n == 0)
                return buf;
        if (!s)
                s = "-";
        if (q)
                buf[l++] = '"';
        for (; *s; s++) {
                unsigned char ch = (unsigned char) *s;
                char esc[8];
                size_t k;

                if (ch < 0x20 || ch == 0x7f)
                        k = (size_t) snprintf(esc, sizeof(esc), "\\x%02x", ch);
                else if (q && (ch == '"' || ch == '\\'))
                        k = (size_t) snprintf(esc, sizeof(esc), "\\%c", ch);
                else {
                        esc[0] = (char) ch;
                        k = 1;
                }
                /* Keep room for the closing quote and the '\0'. */
                if (l + k + (q ? 1 : 0) >= n)
                        break;
                memcpy(buf + l, esc, k);
                l += k;
        }
        if (q)
                buf[l++] = '"';
        buf[l] = '\0';
        return buf;
}

int output_table_init(struct output_table *t, const char *const *header, const bool *right, size_t columns,
                      size_t rows) {
        *t = (struct output_table) { .columns = columns, .rows = rows, .right = right };
        t->cells = calloc((rows + 1) * columns, sizeof(*t->cells));
        if (!t->cells)
                return -ENOMEM;
        for (size_t i = 0; i < columns; i++)
                snprintf(t->cells[i], OUTPUT_CELL, "%s", header[i]);
        return 0;
}

char *output_table_cell(struct output_table *t, size_t row, size_t column) {
        return t->cells[row * t->columns + column];
}

/* Characters of a UTF-8 string as a terminal counts them, near enough: bytes that do not continue
 * a sequence. */
static size_t output_width(const char *s) {
        size_t w = 0;

        for (; *s; s++)
                if (((unsigned char) *s & 0xc0) != 0x80)
                        w++;
        return w;
}

void output_table_print(const struct output_table *t, const char *indent) {
        _cleanup_free_ size_t *width = calloc(t->columns, sizeof(size_t));

        if (!width || !t->cells)
                return;
        for (size_t r = 0; r <= t->rows; r++)
                for (size_t i = 0; i < t->columns; i++) {
                        size_t w = output_width(t->cells[r * t->columns + i]);

                        if (w > width[i])
                                width[i] = w;
                }
        for (size_t r = 0; r <= t->rows; r++) {
                fputs(indent, stdout);
                for (size_t i = 0; i < t->columns; i++) {
                        const char *cell = t->cells[r * t->columns + i];
                        size_t pad = width[i] - output_width(cell);
                        bool right = t->right && t->right[i], last = i + 1 == t->columns;

                        if (right)
                                printf("%*s", (int) pad, "");
                        fputs(cell, stdout);
                        if (!right && !last)
                                printf("%*s", (int) pad, "");
                        fputs(last ? "\n" : "  ", stdout);
                }
        }
}

void output_table_done(struct output_table *t) {
        free(t->cells);
        t->cells = NULL;
}

/* Fill row r of the jobs table from job. */
static void output_job_cells(struct output_table *t, size_t r, struct json_object *job) {
        struct json_object *identity = NULL;
        struct output_job_text x;
        char id[OUTPUT_CELL];

        json_object_object_get_ex(job, "identity", &identity);
        output_job_text(job, &x);
        snprintf(output_table_cell(t, r, 0), OUTPUT_CELL, "%" PRId64, output_get_int(job, "id", -1));
        output_escape(output_get_string(job, "device", "?"), false, output_table_cell(t, r, 1), OUTPUT_CELL);
        snprintf(output_table_cell(t, r, 2), OUTPUT_CELL, "%s", output_get_string(job, "state", "?"));
        snprintf(output_table_cell(t, r, 3), OUTPUT_CELL, "%s", x.pass);
        snprintf(output_table_cell(t, r, 4), OUTPUT_CELL, "%s", x.percent);
        snprintf(output_table_cell(t, r, 5), OUTPUT_CELL, "%s", x.done);
        snprintf(output_table_cell(t, r, 6), OUTPUT_CELL, "%s", x.total);
        snprintf(output_table_cell(t, r, 7), OUTPUT_CELL, "%s", x.rate);
        snprintf(output_table_cell(t, r, 8), OUTPUT_CELL, "%s", x.eta);
        snprintf(output_table_cell(t, r, 9), OUTPUT_CELL, "%s", output_identity_short(identity, id, sizeof(id)));
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

/* A table of jobs: columns sized to their widest cell, numbers right-aligned, the device's
 * identity last; then one line for each job that failed. */
static int output_jobs_text(struct json_object *jobs) {
        static const char *const header[] = {
                "ID", "DEVICE", "STATE", "PASS", "PROGRESS", "DONE", "SIZE", "RATE", "ETA", "IDENTITY",
        };
        static const bool right[] = { true, false, false, true, true, true, true, true, false, false };
        size_t n = jobs && json_object_is_type(jobs, json_type_array) ? json_object_array_length(jobs) : 0;
        struct output_table t = {};
        char err[1024];

        if (n == 0) {
                printf("No jobs.\n");
                return 0;
        }
        if (output_table_init(&t, header, right, sizeof(header) / sizeof(header[0]), n) < 0) {
                output_table_done(&t);
                return -ENOMEM;
        }
        for (size_t r = 0; r < n; r++)
                output_job_cells(&t, r + 1, json_object_array_get_idx(jobs, r));
        output_table_print(&t, "");
        output_table_done(&t);
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

/* The report's view of the device: its identity when the job started, the signatures found on it
 * then, and those a fresh probe found after the wipe. */
static void output_report_device(struct json_object *rep) {
        struct json_object *identity = NULL, *before = NULL, *after = NULL;

        if (json_object_object_get_ex(rep, "identity", &identity) && json_object_is_type(identity, json_type_object)) {
                printf("  Identity at submission:\n");
                output_identity_text(identity, "    ", 13);
        }
        if (json_object_object_get_ex(rep, "signatures_before", &before) && json_object_is_type(before, json_type_array)) {
                if (json_object_array_length(before) == 0)
                        printf("  Signatures before: none found\n");
                else {
                        printf("  Signatures before:\n");
                        output_signatures_text(before, "    ");
                }
        }
        /* Reports written before the daemon probed have neither field: say nothing. */
        if (!json_object_object_get_ex(rep, "signatures_after", &after))
                return;
        if (!after)
                printf("  Signatures after:  not checked (the job did not end done)\n");
        else if (!json_object_is_type(after, json_type_array))
                printf("  Signatures after:  not checked\n");
        else if (json_object_array_length(after) == 0)
                printf("  Signatures after:  none found (fresh libblkid probe after the wipe)\n");
        else {
                printf("  Signatures after (fresh libblkid probe after the wipe):\n");
                output_signatures_text(after, "    ");
        }
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
        printf("  Device:        %s\n", output_escape(device, false, err, sizeof(err)));
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
        output_report_device(rep);
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
                case OUTPUT_PROBE:
                        json_object_object_get_ex(o, "devices", &v);
                        output_probe_text(v);
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
