/* Output: every command builds one json-c object; this file prints it either as JSON (--json)
 * or as text for people. The text is a rendering of the same object, never other data. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "units.h"
#include "vocab.h"
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

uint64_t output_get_u64(struct json_object *o, const char *key, uint64_t def) {
        struct json_object *v = NULL;

        if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
                return def;
        /* json-c holds integers above INT64_MAX as uint64; get_int64 would clamp them. */
        if (json_object_get_int64(v) < 0)
                return def;
        return json_object_get_uint64(v);
}

double output_get_double(struct json_object *o, const char *key, double def) {
        struct json_object *v = NULL;

        if (!o || !json_object_object_get_ex(o, key, &v))
                return def;
        if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double))
                return json_object_get_double(v);
        return def;
}

bool output_raw_bytes;

const char *output_size(char *buf, size_t n, uint64_t bytes) {
        if (output_raw_bytes)
                snprintf(buf, n, "%" PRIu64, bytes);
        else
                units_size(buf, n, bytes);
        return buf;
}

const char *output_size_exact(char *buf, size_t n, uint64_t bytes) {
        char a[32];

        if (output_raw_bytes)
                snprintf(buf, n, "%" PRIu64 " bytes", bytes);
        else
                snprintf(buf, n, "%s (%" PRIu64 " bytes)", units_size(a, sizeof(a), bytes), bytes);
        return buf;
}

enum job_state output_state_of(const char *state) {
        enum job_state s;

        return job_state_from_name(state, &s) == 0 ? s : _JOB_STATE_MAX;
}

enum verify_mode output_mode_of(const char *mode) {
        enum verify_mode m;

        /* Only the bare names: a report says sample and its percentage apart. */
        return mode && !strchr(mode, '=') && verify_mode_parse(mode, &m, NULL) == 0 ? m : _VERIFY_MODE_MAX;
}

/* Field name of o, else its deprecated name old (a daemon or a stored report of the release before,
 * wiped(8) NAMES AND UNITS), else def. */
int64_t output_get_int_or(struct json_object *o, const char *name, const char *old, int64_t def) {
        return json_object_object_get_ex(o, name, NULL) ? output_get_int(o, name, def) : output_get_int(o, old, def);
}

/* A job's id: "job", or "id" from a daemon before NAMES AND UNITS. */
int64_t output_job_id(struct json_object *job) {
        return output_get_int_or(job, "job", "id", -1);
}

int64_t output_device_size(struct json_object *o) {
        struct json_object *identity = NULL;
        int64_t size = output_get_int_or(o, "size_bytes", "size", -1);

        if (size < 0 && o && json_object_object_get_ex(o, "identity", &identity))
                size = output_get_int_or(identity, "size_bytes", "size", -1);
        return size;
}

void output_job_text(struct json_object *job, struct output_job_text *t) {
        int64_t done = output_get_int_or(job, "work_done_bytes", "bytes_done", 0);
        int64_t total = output_get_int_or(job, "work_total_bytes", "bytes_total", 0);
        int64_t size = output_device_size(job);
        /* The current phase in device bytes; a daemon without them: the work's. */
        int64_t phase_done = output_get_int(job, "phase_done_bytes", done);
        int64_t phase_total = output_get_int(job, "phase_total_bytes", total);
        double elapsed = output_get_double(job, "elapsed_s", 0);
        int64_t eta = output_get_int(job, "eta_s", -1);
        double rate = output_get_double(job, "rate_bps", 0);
        bool ended = job_state_name_is_final(output_get_string(job, "state", NULL));
        const char *phase = output_get_string(job, "phase", NULL);
        int64_t pass = output_get_int(job, "pass", 0), passes = output_get_int(job, "passes", 0);

        if (done < 0)
                done = 0;
        if (total > 0)
                snprintf(t->percent, sizeof(t->percent), "%.1f%%", 100.0 * (double) done / (double) total);
        else
                snprintf(t->percent, sizeof(t->percent), "-");
        output_size(t->done, sizeof(t->done), (uint64_t) (phase_done < 0 ? 0 : phase_done));
        if (phase_total > 0)
                output_size(t->total, sizeof(t->total), (uint64_t) phase_total);
        else
                snprintf(t->total, sizeof(t->total), "-");
        if (size >= 0)
                output_size(t->size, sizeof(t->size), (uint64_t) size);
        else
                snprintf(t->size, sizeof(t->size), "-");
        /* Once a job has ended its current rate means nothing; its average does (the daemon's
         * rate_bps of an ended job; a daemon before it sent 0). */
        if (ended && rate <= 0 && elapsed > 0)
                rate = (double) done / elapsed;
        units_rate(t->rate, sizeof(t->rate), rate);
        units_duration(t->eta, sizeof(t->eta), ended ? -1 : eta);
        /* "pass" is the pass being written, or, in the verify phase, the pass being read back. */
        if (passes <= 0)
                snprintf(t->phase, sizeof(t->phase), "-");
        else
                snprintf(t->phase, sizeof(t->phase), "%s %" PRId64 "/%" PRId64,
                         phase && strcmp(phase, "verify") == 0  ? "verify"
                         : phase && strcmp(phase, "flush") == 0 ? "flush"
                         : phase && strcmp(phase, "firmware") == 0 ? "firmware"
                                                                 : "pass",
                         pass, passes);
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

size_t output_width(const char *s) {
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
        struct json_object *identity = NULL, *v = NULL;
        bool stopping;
        struct output_job_text x;
        char id[OUTPUT_CELL];

        json_object_object_get_ex(job, "identity", &identity);
        output_job_text(job, &x);
        snprintf(output_table_cell(t, r, 0), OUTPUT_CELL, "%" PRId64, output_job_id(job));
        output_escape(output_get_string(job, "device", "?"), false, output_table_cell(t, r, 1), OUTPUT_CELL);
        /* Asked to stop, its device not closed yet. */
        stopping = json_object_object_get_ex(job, "stopping", &v) && json_object_is_type(v, json_type_boolean) &&
                   json_object_get_boolean(v);
        snprintf(output_table_cell(t, r, 2), OUTPUT_CELL, "%s", stopping ? "stopping" : output_get_string(job, "state", "?"));
        output_escape(output_get_string(job, "method", "-"), false, output_table_cell(t, r, 3), OUTPUT_CELL);
        snprintf(output_table_cell(t, r, 4), OUTPUT_CELL, "%s", x.phase);
        snprintf(output_table_cell(t, r, 5), OUTPUT_CELL, "%s", x.percent);
        snprintf(output_table_cell(t, r, 6), OUTPUT_CELL, "%s", x.size);
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
 * identity last; then one line for each job that failed. PROGRESS is the share of all the job's
 * work (passes and verification), SIZE the device's. */
/* "job 4: hook exited 3 after 0.2 s" (wiped(8) HOOKS): for a job shown alone (all), else only
 * when its hook did not succeed. */
static void output_hook_line(struct json_object *job, bool all) {
        struct json_object *h = json_object_object_get(job, "hook");
        const char *state;

        if (!h || !json_object_is_type(h, json_type_object))
                return;
        state = output_get_string(h, "state", "?");
        if (!all && (strcmp(state, "pending") == 0 || strcmp(state, "running") == 0 ||
                     (strcmp(state, "exited") == 0 && output_get_int(h, "exit_status", -1) == 0)))
                return;
        printf("job %" PRId64 ": hook (%s) %s", output_job_id(job), output_get_string(h, "event", "?"), state);
        if (strcmp(state, "exited") == 0)
                printf(" %" PRId64, output_get_int(h, "exit_status", -1));
        if (output_get_int(h, "signal", 0) > 0)
                printf(" (signal %" PRId64 ")", output_get_int(h, "signal", 0));
        if (json_object_is_type(json_object_object_get(h, "duration_s"), json_type_double))
                printf(" after %.1f s", json_object_get_double(json_object_object_get(h, "duration_s")));
        printf("\n");
}

/* "job 4: report delivery pending (attempt 3: Connection refused)" (wiped(8) DELIVERY): only for
 * a report the collector does not have yet. */
static void output_delivery_line(struct json_object *job) {
        struct json_object *d = json_object_object_get(job, "delivery");
        char err[OUTPUT_CELL];

        if (!d || !json_object_is_type(d, json_type_object) || strcmp(output_get_string(d, "state", ""), "pending") != 0)
                return;
        printf("job %" PRId64 ": report delivery pending", output_job_id(job));
        if (output_get_int(d, "attempts", 0) > 0)
                printf(" (attempt %" PRId64 "%s%s)", output_get_int(d, "attempts", 0),
                       output_get_string(d, "last_error", NULL) ? ": " : "",
                       output_get_string(d, "last_error", NULL) ?
                               output_escape(output_get_string(d, "last_error", NULL), false, err, sizeof(err)) : "");
        printf("\n");
}

/* "Reports pending delivery: 2 (collector 127.0.0.1:8080; last error: HTTP 500)" when some are. */
static void output_pending_line(struct json_object *o) {
        struct json_object *c = json_object_object_get(o, "collector");
        int64_t n = output_get_int(o, "reports_pending_delivery", 0);
        char host[OUTPUT_CELL], err[OUTPUT_CELL];

        if (n <= 0)
                return;
        printf("Reports pending delivery: %" PRId64, n);
        if (c && json_object_is_type(c, json_type_object)) {
                printf(" (collector %s", output_escape(output_get_string(c, "host", "?"), false, host, sizeof(host)));
                if (output_get_string(c, "last_error", NULL))
                        printf("; last error: %s", output_escape(output_get_string(c, "last_error", NULL), false, err,
                                                                  sizeof(err)));
                printf(")");
        }
        printf("\n");
}

static int output_jobs_text(struct json_object *jobs) {
        static const char *const header[] = {
                "JOB", "DEVICE", "STATE", "METHOD", "PHASE", "PROGRESS", "SIZE", "RATE", "ETA", "IDENTITY",
        };
        static const bool right[] = { true, false, false, false, false, true, true, true, false, false };
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
        /* A job a bay policy started: a note under the table (no column most jobs would leave empty). */
        for (size_t r = 0; r < n; r++) {
                struct json_object *job = json_object_array_get_idx(jobs, r);

                if (output_get_string(job, "policy", NULL))
                        printf("job %" PRId64 ": started by policy %s\n", output_job_id(job),
                               output_escape(output_get_string(job, "policy", NULL), false, err, sizeof(err)));
        }
        /* The asset tag given at submission (the sanitization record): what a technician reads
         * off the drive's label. */
        for (size_t r = 0; r < n; r++) {
                struct json_object *job = json_object_array_get_idx(jobs, r);

                if (output_get_string(job, "asset_tag", NULL))
                        printf("job %" PRId64 ": asset tag %s\n", output_job_id(job),
                               output_escape(output_get_string(job, "asset_tag", NULL), false, err, sizeof(err)));
        }
        for (size_t r = 0; r < n; r++) {
                struct json_object *job = json_object_array_get_idx(jobs, r);

                if (output_error_line(job, err, sizeof(err)))
                        printf("job %" PRId64 ": %s\n", output_job_id(job), err);
                /* Why a job waits (paused, interrupted): what a resume needs, and where it goes on. */
                else if (json_object_is_type(json_object_object_get(job, "reason"), json_type_string)) {
                        struct json_object *ck = json_object_object_get(job, "checkpoint");

                        printf("job %" PRId64 ": %s: %s: %s", output_job_id(job),
                               output_get_string(job, "device", "?"), output_get_string(job, "state", "?"),
                               output_get_string(job, "reason", ""));
                        if (ck && json_object_is_type(ck, json_type_object)) {
                                char at[32], redo[32];
                                int64_t again = output_get_int(ck, "redo_bytes", 0);

                                output_size(at, sizeof(at), (uint64_t) output_get_int_or(ck, "work_done_bytes", "bytes_done", 0));
                                printf("; goes on from its checkpoint at %s of the work", at);
                                if (again > 0)
                                        printf(" (%s written after it are written again)",
                                               output_size(redo, sizeof(redo), (uint64_t) again));
                        }
                        printf("\n");
                }
                output_hook_line(job, n == 1);
                output_delivery_line(job);
        }
        return 0;
}

static int output_submitted_text(struct json_object *jobs) {
        size_t n = jobs && json_object_is_type(jobs, json_type_array) ? json_object_array_length(jobs) : 0;

        for (size_t i = 0; i < n; i++) {
                struct json_object *job = json_object_array_get_idx(jobs, i);

                printf("job %" PRId64 ": %s\n", output_job_id(job), output_get_string(job, "device", "?"));
        }
        return 0;
}

/* One job on a line, "job 4: /dev/loop3: running (verify 3/3)": the job a cancel stopped or a
 * verify restarted. */
static int output_job_one_text(struct json_object *job) {
        struct output_job_text t;
        char err[1024];

        output_job_text(job, &t);
        printf("job %" PRId64 ": %s: %s (%s)\n", output_job_id(job), output_get_string(job, "device", "?"),
               output_get_string(job, "state", "?"), t.phase);
        if (output_error_line(job, err, sizeof(err)))
                printf("job %" PRId64 ": %s\n", output_job_id(job), err);
        return 0;
}

/* One line per job with the state it ended in, "job 4: /dev/loop3: done" (errors go to stderr,
 * from the caller). */
static int output_ended_text(struct json_object *jobs) {
        size_t n = jobs && json_object_is_type(jobs, json_type_array) ? json_object_array_length(jobs) : 0;
        char device[OUTPUT_CELL];

        for (size_t i = 0; i < n; i++) {
                struct json_object *job = json_object_array_get_idx(jobs, i);

                printf("job %" PRId64 ": %s: %s\n", output_job_id(job),
                       output_escape(output_get_string(job, "device", "?"), false, device, sizeof(device)),
                       output_get_string(job, "state", "?"));
        }
        return 0;
}

/* "wiped: 2 threads x 32 buffers x 1.00 MiB = 64.1 MiB of I/O buffers (registered), 8 I/Os in
 * flight per device (rotational 4), no rate limit; workers at nice 10 (other)" from the daemon
 * object of version or status. */
static void output_daemon_line(struct json_object *d) {
        char mem[32], io[32], rate[32];
        int64_t qd = output_get_int(d, "queue_depth", 0), max_rate = output_get_int_or(d, "max_rate_bps", "max_rate", 0);
        struct json_object *reg = NULL;
        bool registered = json_object_object_get_ex(d, "registered_buffers", &reg) && json_object_get_boolean(reg);

        int64_t threads = output_get_int(d, "threads", -1), buffers = output_get_int(d, "buffers", -1);

        output_size(mem, sizeof(mem), (uint64_t) output_get_int_or(d, "buffer_memory_bytes", "buffer_memory", 0));
        output_size(io, sizeof(io), (uint64_t) output_get_int(d, "io_size", 0));
        printf("wiped: %" PRId64 " %s x %" PRId64 " %s x %s = %s of I/O buffers (%s), ", threads,
               units_plural(threads, "thread", "threads"), buffers, units_plural(buffers, "buffer", "buffers"), io, mem,
               registered ? "registered" : "not registered");
        if (qd > 0)
                printf("%" PRId64 " %s in flight per device, ", qd, units_plural(qd, "I/O", "I/Os"));
        else
                printf("%" PRId64 " I/Os in flight per device (rotational %" PRId64 "), ",
                       output_get_int(d, "queue_depth_nonrotational", -1), output_get_int(d, "queue_depth_rotational", -1));
        if (max_rate > 0)
                printf("all I/O at most %s", units_rate(rate, sizeof(rate), (double) max_rate));
        else
                printf("no rate limit");
        if (json_object_object_get_ex(d, "worker_nice", NULL)) {
                struct json_object *applied = NULL;

                printf("; workers at nice %" PRId64 " (%s)%s", output_get_int(d, "worker_nice", -1),
                       output_get_string(d, "worker_policy", "?"),
                       json_object_object_get_ex(d, "worker_priority_applied", &applied) &&
                       !json_object_get_boolean(applied) ? ", not applied: see the daemon's log" : "");
        }
        printf("\n");
}

/* "keystream: aes-128-ctr by gcrypt (the fastest: gcrypt 21.2 GB/s, openssl 10.4 GB/s); ..." */
static void output_keystream_line(struct json_object *d) {
        struct json_object *ks = NULL;
        const char *sep = "keystream: ";

        if (!json_object_object_get_ex(d, "keystream", &ks) || !json_object_is_type(ks, json_type_object))
                return;
        json_object_object_foreach(ks, cipher, c) {
                struct json_object *mbps = NULL;
                const char *by = output_get_string(c, "chosen_by", "?"), *sep2 = "";

                printf("%s%s by %s (%s", sep, cipher, output_get_string(c, "backend", "?"),
                       strcmp(by, "measured") == 0 ? "the fastest" : by);
                if (json_object_object_get_ex(c, "mbps", &mbps) && json_object_is_type(mbps, json_type_object)) {
                        printf(": ");
                        json_object_object_foreach(mbps, backend, v) {
                                printf("%s%s %.1f GB/s", sep2, backend, json_object_get_double(v) / 1000);
                                sep2 = ", ";
                        }
                }
                printf(")");
                sep = "; ";
        }
        if (strcmp(sep, "; ") == 0)
                printf("\n");
}

static int output_version_text(struct json_object *o) {
        struct json_object *d = NULL, *ciphers = NULL;

        printf("wipectl %s\n", output_get_string(o, "client", "?"));
        if (!json_object_object_get_ex(o, "daemon", &d) || !json_object_is_type(d, json_type_object))
                return 0;
        printf("wiped %s (protocol %" PRId64 ", %" PRId64 " %s", output_get_string(d, "version", "?"),
               output_get_int(d, "protocol", -1), output_get_int(d, "threads", -1),
               units_plural(output_get_int(d, "threads", -1), "thread", "threads"));
        if (json_object_object_get_ex(d, "ciphers", &ciphers) && json_object_is_type(ciphers, json_type_array)) {
                printf(", ciphers");
                for (size_t i = 0; i < json_object_array_length(ciphers); i++)
                        printf(" %s", json_object_get_string(json_object_array_get_idx(ciphers, i)));
        }
        printf(", auto = %s)\n", output_get_string(d, "cipher_auto", "?"));
        output_keystream_line(d);
        output_daemon_line(d);
        return 0;
}

int output_render(enum output_kind kind, struct json_object *o, bool json) {
        struct json_object *v = NULL;

        if (json) {
                /* The format version first, o's members, and the error that came before, if any
                 * (wipectl(1) "JSON OUTPUT"). A shallow copy: o stays the caller's as it was. */
                _cleanup_json_ struct json_object *doc = json_object_new_object();
                struct json_object *error = NULL;
                const char *s;

                if (!doc || json_object_object_add(doc, "format_version", json_object_new_int(WIPECTL_JSON_FORMAT)) < 0)
                        return -ENOMEM;
                json_object_object_foreach(o, key, val)
                        if (strcmp(key, "format_version") != 0 &&
                            json_object_object_add(doc, key, json_object_get(val)) < 0)
                                return -ENOMEM;
                error = wipectl_error_json(0);
                if (error && json_object_object_add(doc, "error", error) < 0) {
                        json_object_put(error);
                        return -ENOMEM;
                }
                s = json_object_to_json_string_ext(
                        doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
                if (!s)
                        return -ENOMEM;
                puts(s);
                wipectl_json_printed();
        } else
                switch (kind) {
                case OUTPUT_JOBS:
                        if (json_object_object_get_ex(o, "daemon", &v) && json_object_is_type(v, json_type_object))
                                output_daemon_line(v);
                        json_object_object_get_ex(o, "jobs", &v);
                        output_jobs_text(v);
                        output_pending_line(o);
                        break;
                case OUTPUT_SUBMITTED:
                        json_object_object_get_ex(o, "jobs", &v);
                        output_submitted_text(v);
                        break;
                case OUTPUT_JOB:
                        json_object_object_get_ex(o, "job", &v);
                        output_job_one_text(v);
                        break;
                case OUTPUT_ENDED:
                        json_object_object_get_ex(o, "jobs", &v);
                        output_ended_text(v);
                        break;
                case OUTPUT_REPORT:
                        output_report_text(o);
                        break;
                case OUTPUT_METHODS:
                        json_object_object_get_ex(o, "methods", &v);
                        output_methods_text(v);
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

int output_print(enum output_kind kind, struct json_object *o, bool json) {
        if (!o || output_render(kind, o, json) < 0) {
                wipectl_error("stdout: write error");
                return WIPECTL_EXIT_FAILURE;
        }
        return WIPECTL_EXIT_OK;
}

int output_flush(void) {
        if (fflush(stdout) == EOF || ferror(stdout)) {
                wipectl_error("stdout: write error");
                return WIPECTL_EXIT_FAILURE;
        }
        return WIPECTL_EXIT_OK;
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
