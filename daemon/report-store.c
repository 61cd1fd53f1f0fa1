/* The "reports" request (wiped(8) PROTOCOL "reports"): the signed reports kept in
 * STATE_DIR/reports/ID.json, those of forgotten jobs included, selected by when they ended, their
 * batch or their job, oldest first, in pages.
 *
 * Runs on the main thread, so it must not read every file on every request: an index remembers
 * each file's job, end, batch and report id by the file's inode, size and modification time (a
 * report is replaced by rename, so a new version is a new inode) and only new or changed files
 * are read. A first request after a start reads them all once (about 1000 files in a second or
 * less, see report_store_query()); every request then reads only the files it sends. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/evp.h>

#include "cleanup.h"
#include "daemon.h"
#include "sign.h"
#include "job-private.h"
#include "protocol.h"

/* A larger file is no report the daemon wrote (they are a few KiB; a job with very many bad
 * ranges a few hundred KiB): it is left out, named in "unreadable", and never read into memory.
 * Half of the reply cap, so that one report always fits in a page. */
#define REPORT_STORE_FILE_MAX (4 * 1024 * 1024)
#define REPORT_STORE_ID_BYTES 70        /* a report id in the reply: 64 hex digits, quotes, comma */

/* What the index knows of one report file. */
struct report_entry {
        uint64_t job;                   /* from the name ID.json, equal to the report's "job" */
        dev_t dev;                      /* the version indexed: a change of any is a new one */
        ino_t ino;
        off_t size;
        struct timespec mtime;
        int64_t ended;                  /* "ended_at" */
        char *batch;                    /* "batch" (RECORD's); NULL when the report has none */
        char *why;                      /* not NULL: the file is unreadable, and why (logged once) */
        char id[65];                    /* the report id: SHA-256 of the file's bytes, hex */
};

static struct report_entry *store;      /* sorted by job */
static size_t n_store;

static void entry_done(struct report_entry *e) {
        free(e->batch);
        free(e->why);
        e->batch = e->why = NULL;
}

static int entry_cmp_job(const void *a, const void *b) {
        const struct report_entry *x = a, *y = b;

        return x->job < y->job ? -1 : x->job > y->job;
}

/* The order of the reply: oldest first by end, then by job (unique: the name is the job). */
static int entry_cmp_end(const void *a, const void *b) {
        const struct report_entry *x = *(const struct report_entry *const *) a;
        const struct report_entry *y = *(const struct report_entry *const *) b;

        if (x->ended != y->ended)
                return x->ended < y->ended ? -1 : 1;
        return entry_cmp_job(x, y);
}

/* The job of a report file's name: "ID.json" exactly as the daemon writes it (no sign, no leading
 * zero). Else false: temporary files (".ID.json.tmp") and others are not reports. */
static bool name_job(const char *name, uint64_t *job) {
        char buf[32];
        char *end;

        if (name[0] < '0' || name[0] > '9')
                return false;
        errno = 0;
        *job = strtoull(name, &end, 10);
        if (errno || strcmp(end, ".json") != 0)
                return false;
        snprintf(buf, sizeof(buf), "%" PRIu64 ".json", *job);
        return strcmp(buf, name) == 0;
}


/* Read the regular file name of dirfd (never through a symlink) whole, at most
 * REPORT_STORE_FILE_MAX bytes. 0 with *text (malloc'd, '\0'-terminated) and *st; -EFBIG without
 * reading it; -EBADMSG when it is no regular file; else -errno. */
static int read_report(int dirfd, const char *name, char **text, size_t *len, struct stat *st) {
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
        _cleanup_free_ char *buf = NULL;
        size_t n = 0;

        if (fd < 0)
                return errno == ELOOP ? -EBADMSG : -errno;
        if (fstat(fd, st) < 0)
                return -errno;
        if (!S_ISREG(st->st_mode))
                return -EBADMSG;
        if (st->st_size > REPORT_STORE_FILE_MAX)
                return -EFBIG;
        buf = malloc((size_t) st->st_size + 1);
        if (!buf)
                return -ENOMEM;
        /* Read to the end, but never more than was there: a file growing meanwhile is too large. */
        for (;;) {
                ssize_t k = read(fd, buf + n, (size_t) st->st_size + 1 - n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                n += (size_t) k;
                if (n > (size_t) st->st_size)
                        return -EFBIG;
        }
        buf[n] = '\0';
        *text = TAKE_PTR(buf);
        *len = n;
        return 0;
}

/* Parse text as the report of job: a JSON object whose "job" is job and whose "ended_at" is a
 * time. NULL with why (static) when it is not. */
static struct json_object *parse_report(const char *text, size_t len, uint64_t job, const char **why) {
        _cleanup_json_ struct json_object *o = NULL;
        struct json_tokener *tok = json_tokener_new();
        struct json_object *v;

        if (!tok) {
                *why = "out of memory";
                return NULL;
        }
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        o = len <= INT32_MAX ? json_tokener_parse_ex(tok, text, (int) len) : NULL;
        if (!o || json_tokener_get_error(tok) != json_tokener_success || json_tokener_get_parse_end(tok) != len)
                *why = "not JSON";
        json_tokener_free(tok);
        if (!o || *why)
                return NULL;
        if (!json_object_is_type(o, json_type_object))
                *why = "not a JSON object";
        else if (!json_object_object_get_ex(o, "job", &v) || !json_object_is_type(v, json_type_int) ||
                 json_object_get_uint64(v) != job)
                *why = "its \"job\" is not the number of its name";
        else if (!json_object_object_get_ex(o, "ended_at", &v) || !json_object_is_type(v, json_type_int) ||
                 json_object_get_int64(v) < 0)
                *why = "no \"ended_at\"";
        return *why ? NULL : TAKE_PTR(o);
}

/* Fill e (job set) from the file name of dirfd, whose lstat() is st: the version it stands for,
 * also when it cannot be read, so that such a file is logged once, not at every request. 0; 1
 * when the file went meanwhile (no entry); or -ENOMEM. An unreadable file is an entry with why
 * set, and logged. */
static int entry_index(int dirfd, const char *name, const struct stat *lst, struct report_entry *e) {
        _cleanup_free_ char *text = NULL;
        _cleanup_json_ struct json_object *o = NULL;
        const char *why = NULL, *batch;
        struct json_object *v;
        struct stat st;
        size_t len = 0;
        int r;

        r = read_report(dirfd, name, &text, &len, &st);
        if (r == -ENOMEM)
                return r;
        if (r == -ENOENT)
                return 1;
        e->dev = lst->st_dev;
        e->ino = lst->st_ino;
        e->size = lst->st_size;
        e->mtime = lst->st_mtim;
        if (r == 0) {
                o = parse_report(text, len, e->job, &why);
                if (!o && strcmp(why, "out of memory") == 0)
                        return -ENOMEM;
                if (o && report_id(text, len, e->id) < 0)
                        why = "cannot compute its SHA-256";
        } else if (r == -EFBIG)
                why = "larger than 4 MiB: not a report";
        else if (r == -EBADMSG)
                why = "not a regular file";
        else
                why = strerror(-r);
        if (why) {
                log_warning("%s/%s: left out of report listings: %s", reports_dir, name, why);
                e->why = strdup(why);
                return e->why ? 0 : -ENOMEM;
        }
        e->ended = json_object_get_int64(json_object_object_get(o, "ended_at"));
        if (json_object_object_get_ex(o, "batch", &v) && (batch = json_object_get_string(v)) &&
            json_object_is_type(v, json_type_string) && !(e->batch = strdup(batch)))
                return -ENOMEM;
        return 0;
}

/* Bring the index up to date with the directory: files new or changed since are read, those gone
 * dropped. 0 or -errno (the index is then dropped, to be made anew by the next request: entries
 * may have moved out of it). */
static int store_refresh(void) {
        struct report_entry *cur = NULL;
        DIR *d;
        size_t n = 0, cap = 0;
        struct dirent *de;
        int r = 0;

        d = opendir(reports_dir);
        if (!d)
                return -errno;
        while ((errno = 0, de = readdir(d))) {
                struct report_entry key, *old, *e;
                struct stat st;

                if (!name_job(de->d_name, &key.job))
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;       /* gone meanwhile (forgotten) */
                if (n == cap) {
                        size_t c = cap ? 2 * cap : 64;
                        struct report_entry *p = reallocarray(cur, c, sizeof(*cur));

                        if (!p) {
                                r = -ENOMEM;
                                break;
                        }
                        cur = p;
                        cap = c;
                }
                e = &cur[n];
                *e = (struct report_entry) { .job = key.job, .ended = -1 };
                old = store ? bsearch(&key, store, n_store, sizeof(*store), entry_cmp_job) : NULL;
                if (old && old->dev == st.st_dev && old->ino == st.st_ino && old->size == st.st_size &&
                    old->mtime.tv_sec == st.st_mtim.tv_sec && old->mtime.tv_nsec == st.st_mtim.tv_nsec) {
                        /* Unchanged: its entry moves over. */
                        *e = *old;
                        old->batch = old->why = NULL;
                } else {
                        r = entry_index(dirfd(d), de->d_name, &st, e);
                        if (r < 0) {
                                entry_done(e);
                                break;
                        }
                        if (r > 0) {
                                r = 0;
                                continue;
                        }
                }
                n++;
        }
        if (r == 0 && errno)
                r = -errno;
        closedir(d);
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        entry_done(&cur[i]);
                free(cur);
                report_store_free();
                return r;
        }
        for (size_t i = 0; i < n_store; i++)
                entry_done(&store[i]);
        free(store);
        if (n > 0)
                qsort(cur, n, sizeof(*cur), entry_cmp_job);
        store = cur;
        n_store = n;
        return 0;
}

void report_store_free(void) {
        for (size_t i = 0; i < n_store; i++)
                entry_done(&store[i]);
        free(store);
        store = NULL;
        n_store = 0;
}

/* The selection of a request. */
struct query {
        uint64_t since, until;          /* ended_at in [since, until) */
        bool has_since, has_until;
        uint64_t after_job;             /* with since: leave out those ended at since with a job <= it */
        bool has_after;
        const char *batch;
        uint64_t *jobs;                 /* sorted */
        size_t n_jobs;
        uint64_t limit;
};

static int u64_cmp(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return x < y ? -1 : x > y;
}

static bool query_matches(const struct query *q, const struct report_entry *e) {
        uint64_t ended = (uint64_t) e->ended;

        if (e->why)
                return false;
        if (q->has_since && (ended < q->since || (q->has_after && ended == q->since && e->job <= q->after_job)))
                return false;
        if (q->has_until && ended >= q->until)
                return false;
        if (q->batch && (!e->batch || strcmp(q->batch, e->batch) != 0))
                return false;
        if (q->jobs && !bsearch(&e->job, q->jobs, q->n_jobs, sizeof(*q->jobs), u64_cmp))
                return false;
        return true;
}

/* Read the request's fields into q. NULL, or the error reply. */
static struct json_object *query_parse(int64_t id, struct json_object *req, struct query *q) {
        int r;

        *q = (struct query) { .limit = PROTOCOL_REPORTS_MAX };
        r = protocol_get_u64(req, "since", &q->since);
        if (r == -EINVAL)
                return protocol_reply_error(id, r, "reports: \"since\" must be unix seconds");
        q->has_since = r == 0;
        r = protocol_get_u64(req, "until", &q->until);
        if (r == -EINVAL)
                return protocol_reply_error(id, r, "reports: \"until\" must be unix seconds");
        q->has_until = r == 0;
        r = protocol_get_u64(req, "after_job", &q->after_job);
        if (r == -EINVAL)
                return protocol_reply_error(id, r, "reports: \"after_job\" must be a job number");
        if (r == 0 && !q->has_since)
                return protocol_reply_error(id, -EINVAL, "reports: \"after_job\" needs \"since\"");
        q->has_after = r == 0;
        r = protocol_get_string(req, "batch", &q->batch);
        if (r == -EINVAL)
                return protocol_reply_error(id, r, "reports: \"batch\" must be a string");
        r = protocol_get_u64(req, "limit", &q->limit);
        if (r == -EINVAL || (r == 0 && (q->limit == 0 || q->limit > PROTOCOL_REPORTS_MAX)))
                return protocol_reply_error(id, -EINVAL, "reports: \"limit\" must be from 1 to %d",
                                            PROTOCOL_REPORTS_MAX);
        r = protocol_get_u64_array(req, "jobs", PROTOCOL_REPORTS_JOBS_MAX, &q->jobs, &q->n_jobs);
        if (r == -ENOMEM)
                return protocol_reply_error(id, r, "out of memory");
        if (r == -EINVAL)
                return protocol_reply_error(id, r, "reports: \"jobs\" must be 1 to %d job numbers",
                                            PROTOCOL_REPORTS_JOBS_MAX);
        if (q->jobs)
                qsort(q->jobs, q->n_jobs, sizeof(*q->jobs), u64_cmp);
        return NULL;
}

/* Add the report of e to reports and its id to ids, as read now. 0; -ENOENT when it went or
 * changed into something else meanwhile (it is then left out of this page: the next request
 * indexes it again); -ENOMEM. *bytes gets its size. */
static int add_report(int dirfd, const struct report_entry *e, struct json_object *reports, struct json_object *ids,
                      size_t *bytes) {
        _cleanup_free_ char *text = NULL;
        _cleanup_json_ struct json_object *o = NULL;
        const char *why = NULL;
        char name[32], id[65];
        struct stat st;
        size_t len = 0;
        int r;

        snprintf(name, sizeof(name), "%" PRIu64 ".json", e->job);
        r = read_report(dirfd, name, &text, &len, &st);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return -ENOENT;
        o = parse_report(text, len, e->job, &why);
        if (!o)
                return why && strcmp(why, "out of memory") == 0 ? -ENOMEM : -ENOENT;
        if (report_id(text, len, id) < 0)
                return -ENOENT;
        if (json_object_array_add(reports, o) < 0)
                return -ENOMEM;
        o = NULL;
        if (json_object_array_add(ids, json_object_new_string(id)) < 0)
                return -ENOMEM;
        *bytes = len + REPORT_STORE_ID_BYTES;
        return 0;
}

struct json_object *report_store_query(int64_t id, struct json_object *req, size_t bytes_max) {
        _cleanup_json_ struct json_object *reply = NULL;
        _cleanup_free_ struct report_entry **sel = NULL;
        _cleanup_close_ int dfd = -EBADF;
        struct json_object *err, *reports, *ids, *unreadable;
        size_t n_sel = 0, bytes = 0, sent = 0, i;
        struct query q;
        int r;

        err = query_parse(id, req, &q);
        if (err)
                return err;
        reply = protocol_reply_new(id);
        reports = json_object_new_array();
        ids = json_object_new_array();
        unreadable = json_object_new_array();
        if (!reply || json_object_object_add(reply, "reports", reports) < 0) {
                json_object_put(reports);
                reports = NULL;
        }
        if (!reply || json_object_object_add(reply, "report_ids", ids) < 0) {
                json_object_put(ids);
                ids = NULL;
        }
        if (!reply || json_object_object_add(reply, "unreadable", unreadable) < 0) {
                json_object_put(unreadable);
                unreadable = NULL;
        }
        if (!reports || !ids || !unreadable) {
                free(q.jobs);
                return protocol_reply_error(id, -ENOMEM, "out of memory");
        }
        /* Without a state directory nothing is kept: there is nothing to list. */
        if (!reports_dir) {
                free(q.jobs);
                json_object_object_add(reply, "truncated", json_object_new_boolean(false));
                return TAKE_PTR(reply);
        }
        r = store_refresh();
        if (r < 0) {
                free(q.jobs);
                log_error("%s: cannot list the reports: %s", reports_dir, strerror(-r));
                return protocol_reply_error(id, r, "reports: cannot list %s: %s", reports_dir, strerror(-r));
        }
        sel = n_store ? calloc(n_store, sizeof(*sel)) : NULL;
        if (n_store && !sel) {
                free(q.jobs);
                return protocol_reply_error(id, -ENOMEM, "out of memory");
        }
        for (i = 0; i < n_store; i++) {
                if (store[i].why && (!q.jobs || bsearch(&store[i].job, q.jobs, q.n_jobs, sizeof(*q.jobs), u64_cmp))) {
                        char name[32];

                        snprintf(name, sizeof(name), "%" PRIu64 ".json", store[i].job);
                        if (json_object_array_add(unreadable, json_object_new_string(name)) < 0) {
                                free(q.jobs);
                                return protocol_reply_error(id, -ENOMEM, "out of memory");
                        }
                }
                if (query_matches(&q, &store[i]))
                        sel[n_sel++] = &store[i];
        }
        free(q.jobs);
        if (n_sel > 0)
                qsort(sel, n_sel, sizeof(*sel), entry_cmp_end);
        dfd = open(reports_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0) {
                r = -errno;
                return protocol_reply_error(id, r, "reports: cannot open %s: %s", reports_dir, strerror(-r));
        }
        for (i = 0; i < n_sel && sent < q.limit; i++) {
                size_t b = 0;

                /* The reply stays below its cap with the sizes as indexed; at least one is sent. */
                if (sent > 0 && bytes + (size_t) sel[i]->size + REPORT_STORE_ID_BYTES > bytes_max)
                        break;
                r = add_report(dfd, sel[i], reports, ids, &b);
                if (r == -ENOMEM)
                        return protocol_reply_error(id, r, "out of memory");
                if (r < 0)
                        continue;
                bytes += b;
                sent++;
        }
        json_object_object_add(reply, "truncated", json_object_new_boolean(i < n_sel));
        return TAKE_PTR(reply);
}
