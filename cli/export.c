/* wipectl report --all: the selection paged through the "reports" request, and its JSON lines and
 * CSV writers. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "export.h"
#include "sign.h"
#include "wipectl.h"

/* What export_select() gathers. */
struct export_acc {
        struct json_object **reports;
        char **ids;
        size_t n, size;
        char **unreadable;              /* names the daemon could not read, each once */
        size_t n_unreadable;
};

void export_free(struct json_object **reports, char **ids, size_t n) {
        for (size_t i = 0; i < n; i++) {
                if (reports)
                        json_object_put(reports[i]);
                if (ids)
                        free(ids[i]);
        }
        free(reports);
        free(ids);
}

static void acc_done(struct export_acc *a) {
        export_free(a->reports, a->ids, a->n);
        for (size_t i = 0; i < a->n_unreadable; i++)
                free(a->unreadable[i]);
        free(a->unreadable);
        *a = (struct export_acc) {};
}

/* Take report and its id (references and copies of their own). 0 or -ENOMEM. */
static int acc_add(struct export_acc *a, struct json_object *report, const char *id) {
        char *copy;

        if (a->n == a->size) {
                size_t size = a->size ? 2 * a->size : 256;
                struct json_object **r = reallocarray(a->reports, size, sizeof(*r));
                char **i;

                if (!r)
                        return -ENOMEM;
                a->reports = r;
                i = reallocarray(a->ids, size, sizeof(*i));
                if (!i)
                        return -ENOMEM;
                a->ids = i;
                a->size = size;
        }
        copy = strdup(id);
        if (!copy)
                return -ENOMEM;
        a->reports[a->n] = json_object_get(report);
        a->ids[a->n++] = copy;
        return 0;
}

static int acc_unreadable(struct export_acc *a, const char *name) {
        char **p, *copy;

        for (size_t i = 0; i < a->n_unreadable; i++)
                if (strcmp(a->unreadable[i], name) == 0)
                        return 0;
        p = reallocarray(a->unreadable, a->n_unreadable + 1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        a->unreadable = p;
        copy = strdup(name);
        if (!copy)
                return -ENOMEM;
        a->unreadable[a->n_unreadable++] = copy;
        return 0;
}

/* Indexes into the ids (arg) by id, then by index. */
static int index_cmp(const void *x, const void *y, void *arg) {
        char *const *ids = arg;
        size_t i = *(const size_t *) x, j = *(const size_t *) y;
        int c = strcmp(ids[i], ids[j]);

        return c ? c : (i < j ? -1 : i > j);
}

/* Leave out every report whose id came before (a page overlapping the one before it, should the
 * daemon's order change meanwhile), keeping the order. 0 or -ENOMEM. */
static int export_dedup(struct export_acc *a) {
        _cleanup_free_ size_t *idx = NULL;
        _cleanup_free_ bool *drop = NULL;
        size_t k = 0;

        if (a->n < 2)
                return 0;
        idx = calloc(a->n, sizeof(*idx));
        drop = calloc(a->n, sizeof(*drop));
        if (!idx || !drop)
                return -ENOMEM;
        for (size_t i = 0; i < a->n; i++)
                idx[i] = i;
        qsort_r(idx, a->n, sizeof(*idx), index_cmp, a->ids);
        for (size_t i = 1; i < a->n; i++)
                if (strcmp(a->ids[idx[i]], a->ids[idx[i - 1]]) == 0)
                        drop[idx[i]] = true;
        for (size_t i = 0; i < a->n; i++) {
                if (drop[i]) {
                        json_object_put(a->reports[i]);
                        free(a->ids[i]);
                        continue;
                }
                a->reports[k] = a->reports[i];
                a->ids[k++] = a->ids[i];
        }
        a->n = k;
        return 0;
}

/* The request for one page: the selection, from (since, after_job) when after_job >= 0. NULL on
 * ENOMEM. */
static struct json_object *export_request(const struct export_selection *sel, int64_t since, int64_t after_job) {
        _cleanup_json_ struct json_object *req = protocol_request_new(0, PROTOCOL_OP_REPORTS);
        struct json_object *jobs;

        if (!req)
                return NULL;
        if (since >= 0 && json_object_object_add(req, "since", json_object_new_int64(since)) < 0)
                return NULL;
        if (after_job >= 0 && json_object_object_add(req, "after_job", json_object_new_int64(after_job)) < 0)
                return NULL;
        if (sel->until >= 0 && json_object_object_add(req, "until", json_object_new_int64(sel->until)) < 0)
                return NULL;
        if (sel->batch && json_object_object_add(req, "batch", json_object_new_string(sel->batch)) < 0)
                return NULL;
        if (sel->limit && json_object_object_add(req, "limit", json_object_new_uint64(sel->limit)) < 0)
                return NULL;
        if (sel->jobs) {
                jobs = json_object_new_array();
                if (!jobs || json_object_object_add(req, "jobs", jobs) < 0) {
                        json_object_put(jobs);
                        return NULL;
                }
                for (size_t i = 0; i < sel->n_jobs; i++)
                        if (json_object_array_add(jobs, json_object_new_int64(sel->jobs[i])) < 0)
                                return NULL;
        }
        return TAKE_PTR(req);
}

/* Take one reply page into a. Returns 1 when another page follows, with *since and *after_job
 * the place to go on from; 0 when it was the last; -EBADMSG (reported) when the reply is not one
 * of "reports"; -ENOMEM. */
static int export_page(const char *path, struct json_object *reply, struct export_acc *a, int64_t *since,
                       int64_t *after_job) {
        struct json_object *reports, *ids, *unreadable, *last;
        int64_t ended, job;
        size_t n;
        int r;

        if (!json_object_object_get_ex(reply, "reports", &reports) || !json_object_is_type(reports, json_type_array) ||
            !json_object_object_get_ex(reply, "report_ids", &ids) || !json_object_is_type(ids, json_type_array) ||
            json_object_array_length(ids) != json_object_array_length(reports)) {
                wipectl_error("%s: reply without \"reports\" and as many \"report_ids\"", path);
                return -EBADMSG;
        }
        n = json_object_array_length(reports);
        for (size_t i = 0; i < n; i++) {
                struct json_object *report = json_object_array_get_idx(reports, i);
                const char *id = json_object_get_string(json_object_array_get_idx(ids, i));

                if (!json_object_is_type(report, json_type_object) || !id || strlen(id) != 64) {
                        wipectl_error("%s: reply with a report that is no object, or without its report id", path);
                        return -EBADMSG;
                }
                r = acc_add(a, report, id);
                if (r < 0)
                        return r;
        }
        if (json_object_object_get_ex(reply, "unreadable", &unreadable) &&
            json_object_is_type(unreadable, json_type_array))
                for (size_t i = 0; i < json_object_array_length(unreadable); i++) {
                        const char *name = json_object_get_string(json_object_array_get_idx(unreadable, i));

                        if (name && (r = acc_unreadable(a, name)) < 0)
                                return r;
                }
        if (!json_object_get_boolean(json_object_object_get(reply, "truncated")))
                return 0;
        if (n == 0) {
                wipectl_error("%s: reply truncated without a report: cannot go on", path);
                return -EBADMSG;
        }
        last = json_object_array_get_idx(reports, n - 1);
        ended = output_get_int(last, "ended_at", -1);
        job = output_get_int(last, "job", -1);
        /* Each page must start after the last: else the daemon would send the same again. */
        if (ended < 0 || job < 0 || ended < *since || (ended == *since && job <= *after_job)) {
                wipectl_error("%s: reply truncated at a report that does not follow the page before", path);
                return -EBADMSG;
        }
        *since = ended;
        *after_job = job;
        return 1;
}

/* How long a job that has ended may go without its report file: the daemon writes it on a tick
 * once the drive's health after the wipe is read (smartctl, smart-timeout: 30 s by default). */
#define EXPORT_REPORT_WAIT_S 65

/* The number of jobs in the status reply that have ended but whose report the daemon has not
 * written yet: "report_pending" (false again when writing it failed: nothing to wait for), or,
 * from a daemon without it, "report_id" null (one without report ids has none to wait for). */
static size_t export_unwritten(struct json_object *reply, int64_t *first) {
        static const char *const ended[] = { "done", "done-with-errors", "failed", "cancelled" };
        struct json_object *jobs = NULL;
        size_t count = 0;

        if (!json_object_object_get_ex(reply, "jobs", &jobs) || !json_object_is_type(jobs, json_type_array))
                return 0;
        for (size_t i = 0; i < json_object_array_length(jobs); i++) {
                struct json_object *job = json_object_array_get_idx(jobs, i), *id = NULL, *pending = NULL;
                const char *state = output_get_string(job, "state", "");
                bool is_ended = false;

                for (size_t k = 0; k < sizeof(ended) / sizeof(ended[0]); k++)
                        is_ended |= strcmp(state, ended[k]) == 0;
                if (json_object_object_get_ex(job, "report_pending", &pending) ?
                    json_object_get_boolean(pending) :
                    is_ended && json_object_object_get_ex(job, "report_id", &id) && !id) {
                        if (count++ == 0)
                                *first = output_job_id(job);
                }
        }
        return count;
}

/* Before the export: wait, a while, for the reports of jobs that have just ended ("wipectl wipe A
 * B && wipectl report --all --batch ID"), which the daemon writes a moment after. Then what is
 * written is exported; a job still without its report is named on stderr. Errors of the status
 * request are left to the export's own requests. */
static void export_settle(struct client *c) {
        time_t deadline = time(NULL) + EXPORT_REPORT_WAIT_S;

        for (;;) {
                _cleanup_json_ struct json_object *req = client_request_jobs(PROTOCOL_OP_STATUS, NULL, 0);
                _cleanup_json_ struct json_object *reply = NULL;
                int64_t first = -1;
                size_t left;

                if (!req || client_call(c, req, &reply) < 0)
                        return;
                left = export_unwritten(reply, &first);
                if (left == 0)
                        return;
                if (time(NULL) >= deadline) {
                        wipectl_error("job %" PRId64 "%s ended but the daemon has not written %s report after %d s: "
                                      "not in the export", first, left > 1 ? " and others" : "",
                                      left > 1 ? "their" : "its", EXPORT_REPORT_WAIT_S);
                        return;
                }
                (void) nanosleep(&(struct timespec) { .tv_nsec = 200 * 1000 * 1000 }, NULL);
        }
}

int export_select(const struct wipectl_options *opts, const struct export_selection *sel,
                  struct json_object ***reports, char ***ids, size_t *n) {
        struct export_acc a = {};
        struct client c = CLIENT_INIT;
        int64_t since = sel->since, after_job = -1;
        int r, status = WIPECTL_EXIT_OK;

        *reports = NULL;
        *ids = NULL;
        *n = 0;
        r = client_connect(&c, opts->socket_path);
        if (r < 0) {
                status = client_translate_errno(&c, r);
                client_close(&c);
                return status;
        }
        export_settle(&c);
        do {
                _cleanup_json_ struct json_object *req = export_request(sel, since, after_job);
                _cleanup_json_ struct json_object *reply = NULL;

                if (!req) {
                        r = -ENOMEM;
                        break;
                }
                r = client_call(&c, req, &reply);
                if (r < 0) {
                        status = client_translate_errno(&c, r);
                        break;
                }
                r = export_page(c.path, reply, &a, &since, &after_job);
        } while (r > 0);
        client_close(&c);
        if (r == 0)
                r = export_dedup(&a);
        if (r == -ENOMEM)
                wipectl_error("report: out of memory");
        if (r < 0) {
                acc_done(&a);
                return status != WIPECTL_EXIT_OK ? status : WIPECTL_EXIT_FAILURE;
        }
        for (size_t i = 0; i < a.n_unreadable; i++) {
                char shown[256];

                wipectl_error("%s: the daemon's report file %s cannot be read (its log says why): left out",
                              opts->socket_path, output_escape(a.unreadable[i], false, shown, sizeof(shown)));
                status = WIPECTL_EXIT_FAILURE;
        }
        /* Callers may count on arrays, also when empty. */
        if (!a.reports && (!(a.reports = calloc(1, sizeof(*a.reports))) || !(a.ids = calloc(1, sizeof(*a.ids))))) {
                wipectl_error("report: out of memory");
                acc_done(&a);
                return WIPECTL_EXIT_FAILURE;
        }
        *reports = TAKE_PTR(a.reports);
        *ids = TAKE_PTR(a.ids);
        *n = a.n;
        a.n = 0;
        acc_done(&a);
        return status;
}

/* ---- writers ---- */

static int export_jsonl(FILE *f, struct json_object *report) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0;

        text = report_render_line(report, &len);
        if (!text)
                return -ENOMEM;
        return fwrite(text, 1, len, f) == len ? 0 : -EIO;
}

/* The member at path ("host.dmi.serial") of o; NULL when absent or null on the way. */
static struct json_object *export_path(struct json_object *o, const char *path) {
        char key[64];

        while (o && *path) {
                size_t k = strcspn(path, ".");

                if (k >= sizeof(key) || !json_object_is_type(o, json_type_object))
                        return NULL;
                memcpy(key, path, k);
                key[k] = '\0';
                if (!json_object_object_get_ex(o, key, &o))
                        return NULL;
                path += k + (path[k] == '.');
        }
        return o;
}

/* How a CSV column takes its value from a report. */
enum export_kind {
        EXPORT_VALUE,                   /* a string as it is; a number as the report writes it; true/false */
        EXPORT_TIME,                    /* unix seconds as ISO 8601 UTC, "2026-12-01T10:00:00Z" */
        EXPORT_LIST,                    /* an array of strings joined with "; " */
        EXPORT_ID,                      /* the report id */
};

struct export_column {
        const char *name;
        const char *path;               /* where in the report */
        const char *fallback;           /* where else (an older report, the value before this issue) */
        enum export_kind kind;
};

/* The columns of EXPORT_CSV_COLUMNS, in its order (wipectl(1) "EXPORT"). */
static const struct export_column export_columns[] = {
        { "report_id", NULL, NULL, EXPORT_ID },
        { "job", "job", NULL, EXPORT_VALUE },
        { "batch", "batch", NULL, EXPORT_VALUE },
        { "host", "host.hostname", NULL, EXPORT_VALUE },
        { "machine_id", "host.machine_id", NULL, EXPORT_VALUE },
        { "dmi_serial", "host.dmi.serial", NULL, EXPORT_VALUE },
        { "device", "device", "node", EXPORT_VALUE },
        { "model", "identity.model", NULL, EXPORT_VALUE },
        { "serial", "identity.serial", NULL, EXPORT_VALUE },
        { "wwn", "identity.wwn", NULL, EXPORT_VALUE },
        { "media_type", "media_type", NULL, EXPORT_VALUE },
        { "manufacturer", "manufacturer", NULL, EXPORT_VALUE },
        { "size_bytes", "size_bytes", "identity.size_bytes", EXPORT_VALUE },
        { "asset_tag", "asset_tag", NULL, EXPORT_VALUE },
        { "customer", "customer", NULL, EXPORT_VALUE },
        { "destination", "destination", NULL, EXPORT_VALUE },
        { "method", "sanitization.method", "method", EXPORT_VALUE },
        { "category", "sanitization.category", "nist_category", EXPORT_VALUE },
        { "technique", "sanitization.technique", NULL, EXPORT_VALUE },
        { "state", "state", NULL, EXPORT_VALUE },
        { "overall_status", "overall_status", NULL, EXPORT_VALUE },
        { "exceptions", "exceptions", NULL, EXPORT_LIST },
        { "verification_method", "sanitization.verification_method", NULL, EXPORT_VALUE },
        { "verification_result", "sanitization.verification_result", NULL, EXPORT_VALUE },
        { "started_at", "started_at", NULL, EXPORT_TIME },
        { "ended_at", "ended_at", NULL, EXPORT_TIME },
        { "duration_s", "duration_s", NULL, EXPORT_VALUE },
        { "operator_name", "operator.name", NULL, EXPORT_VALUE },
        { "operator_organization", "operator.organization", NULL, EXPORT_VALUE },
        { "verifier_name", "verifier.name", NULL, EXPORT_VALUE },
        { "smart_before_passed", "smart_before.passed", NULL, EXPORT_VALUE },
        { "smart_after_passed", "smart_after.passed", NULL, EXPORT_VALUE },
        /* The last reading: after the wipe, else before it. */
        { "power_on_hours", "smart_after.power_on_hours", "smart_before.power_on_hours", EXPORT_VALUE },
        { "signature_key_id", "signature.key_id", NULL, EXPORT_VALUE },
        { "tool", "sanitization.tool", "tool", EXPORT_VALUE },
};

/* Write s as one CSV field (RFC 4180): in double quotes, '"' doubled, when it holds a comma, a
 * quote or a line break; a leading = + - @ (or a tab or CR) gets a "'" before it, so that a
 * spreadsheet shows it as text instead of running it as a formula. */
static void export_csv_field(FILE *f, const char *s) {
        bool quote = strpbrk(s, ",\"\r\n") != NULL;

        if (quote)
                fputc('"', f);
        if (strchr("=+-@\t\r", *s) && *s)
                fputc('\'', f);
        for (; *s; s++) {
                if (*s == '"')
                        fputc('"', f);
                fputc(*s, f);
        }
        if (quote)
                fputc('"', f);
}

/* The text of column col of report into buf (n bytes) or *big (malloc'd, for a long value); ""
 * when absent. Returns the text, or NULL on ENOMEM. */
static const char *export_cell(const struct export_column *col, struct json_object *report, const char *id,
                               char *buf, size_t n, char **big) {
        struct json_object *v;

        buf[0] = '\0';
        if (col->kind == EXPORT_ID)
                return id;
        v = export_path(report, col->path);
        if (!v && col->fallback)
                v = export_path(report, col->fallback);
        if (!v)
                return buf;
        switch (col->kind) {
        case EXPORT_TIME: {
                time_t t = (time_t) json_object_get_int64(v);
                struct tm tm;

                if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0 || !gmtime_r(&t, &tm))
                        return buf;
                strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
                return buf;
        }
        case EXPORT_LIST: {
                size_t len = 0, m;

                if (!json_object_is_type(v, json_type_array))
                        return buf;
                m = json_object_array_length(v);
                for (size_t i = 0; i < m; i++)
                        len += strlen(json_object_get_string(json_object_array_get_idx(v, i)) ?: "") + 2;
                *big = calloc(1, len + 1);
                if (!*big)
                        return NULL;
                for (size_t i = 0; i < m; i++) {
                        if (i > 0)
                                strcat(*big, "; ");
                        strcat(*big, json_object_get_string(json_object_array_get_idx(v, i)) ?: "");
                }
                return *big;
        }
        default:
                break;
        }
        switch (json_object_get_type(v)) {
        case json_type_string:
        case json_type_int:
        case json_type_double:
                /* A number as the report writes it (json-c keeps the text it parsed). */
                return json_object_get_string(v);
        case json_type_boolean:
                return json_object_get_boolean(v) ? "true" : "false";
        default:
                return buf;     /* null, or an object where a value belongs: empty */
        }
}

static int export_csv_row(FILE *f, struct json_object *report, const char *id) {
        for (size_t i = 0; i < sizeof(export_columns) / sizeof(export_columns[0]); i++) {
                _cleanup_free_ char *big = NULL;
                char buf[64];
                const char *s = export_cell(&export_columns[i], report, id, buf, sizeof(buf), &big);

                if (!s)
                        return -ENOMEM;
                if (i > 0)
                        fputc(',', f);
                export_csv_field(f, s);
        }
        fputc('\n', f);
        return ferror(f) ? -EIO : 0;
}

int export_write(FILE *f, enum export_format format, struct json_object *const *reports, char *const *ids, size_t n) {
        int r = 0;

        if (format == EXPORT_CSV && fputs(EXPORT_CSV_COLUMNS "\n", f) == EOF)
                return -EIO;
        for (size_t i = 0; i < n && r == 0; i++)
                r = format == EXPORT_CSV ? export_csv_row(f, reports[i], ids[i]) : export_jsonl(f, reports[i]);
        if (r == 0 && (fflush(f) == EOF || ferror(f)))
                r = -EIO;
        return r;
}

int export_run(const struct wipectl_options *opts, const struct export_selection *sel, enum export_format format) {
        struct json_object **reports = NULL;
        char **ids = NULL;
        size_t n = 0;
        int status, r;

        status = export_select(opts, sel, &reports, &ids, &n);
        if (!reports)
                return status;
        r = export_write(stdout, format, reports, ids, n);
        export_free(reports, ids, n);
        if (n > 0 || format == EXPORT_CSV)
                wipectl_json_printed();
        if (r < 0) {
                wipectl_error("stdout: %s", r == -ENOMEM ? "out of memory" : "write error");
                return WIPECTL_EXIT_FAILURE;
        }
        return status;
}
