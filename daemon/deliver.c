/* wiped: the reports' way to a collector (wiped(8) "DELIVERY"; deliver.h says what it promises).
 *
 * State: one table of the reports this daemon knows about (pending ones from the outbox, delivered
 * ones from outbox/delivered/), under one lock. The main thread adds to it (deliver_enqueue) and
 * reads it (status, metrics); the thread wiped-deliver picks the pending report due first, sends it
 * without holding the lock, and records the outcome. It sleeps on a condition variable that the
 * main thread signals when a report is queued or the daemon stops; a transfer under way sees the
 * stop through libcurl's progress callback and is aborted, its report left in the outbox.
 *
 * Order on disk, so that a crash loses nothing: outbox/ID.json is written (fsync'd) before the
 * job's record says reported; after a 2xx, outbox/delivered/ID is written before outbox/ID.json is
 * unlinked. A crash between the 2xx and the first of these sends the report again, with the same
 * Idempotency-Key. */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <openssl/evp.h>
#ifdef HAVE_CURL
#include <curl/curl.h>
#endif

#include "cleanup.h"
#include "clock.h"
#include "collector.h"
#include "strutil.h"
#include "daemon-config.h"
#include "daemon.h"
#include "sign.h"
#include "deliver.h"
#include "job-private.h"

#define ID_HEX 64
#define ID_CACHE_MAX 4096               /* report ids of report files remembered, by job id modulo */

struct item {
        char id[ID_HEX + 1];
        uint64_t job;
        bool pending;                   /* else delivered */
        unsigned attempts;              /* POSTs that got an answer or failed (not those a stop aborted) */
        char *last_error;               /* of the last failed attempt; NULL after a delivery */
        double queued_at;               /* CLOCK_REALTIME: written to the outbox */
        double delivered_at;            /* CLOCK_REALTIME, 0: not */
        double next_try;                /* CLOCK_MONOTONIC: not before */
        uint64_t seq;                   /* queue order: oldest first */
};

/* The hash of a report file, by job, as long as the file is the same (main thread). */
struct id_cache {
        uint64_t job;
        dev_t dev;
        ino_t ino;
        struct timespec mtime;
        off_t size;
        char id[ID_HEX + 1];
};

static struct {
        bool enabled;                   /* a report-url and a running thread */
        char *outbox, *bad, *delivered; /* directories */
        char *url, host[256];           /* host: for messages, without credentials */
        char machine_id[64];
        char **headers;                 /* report-header lines (copies) */
        char *ca_file, *client_cert, *client_key;
        double timeout, retry_max;
        pthread_t thread;
        bool thread_started;

        pthread_mutex_t lock;           /* guards what follows */
        pthread_cond_t wake;
        bool stop;
        struct item *items;
        size_t n_items, cap_items;
        uint64_t next_seq;
        unsigned failures;              /* attempts that failed in a row, over all reports */
        double gate;                    /* CLOCK_MONOTONIC: no attempt before (the collector's backoff) */
        char *last_error;               /* the collector's last failure, NULL after a delivery */
        double last_attempt_at;         /* CLOCK_REALTIME */
        uint64_t n_delivered, n_failed;

        struct id_cache *cache;         /* main thread only: ID_CACHE_MAX, direct-mapped by job id */
} dl = {
        .lock = PTHREAD_MUTEX_INITIALIZER,
};

static _Atomic bool dl_stop;            /* read by the progress callback without the lock */

int deliver_global_init(void) {
#ifdef HAVE_CURL
        CURLcode c = curl_global_init(CURL_GLOBAL_DEFAULT);

        if (c != CURLE_OK) {
                log_error("cannot initialise libcurl: %s", curl_easy_strerror(c));
                return -EIO;
        }
#endif
        return 0;
}

void deliver_global_cleanup(void) {
        /* Status may be rendered until the very end (the metrics' last textfile). */
        free(dl.cache);
        dl.cache = NULL;
#ifdef HAVE_CURL
        curl_global_cleanup();
#endif
}

static bool id_valid(const char *s) {
        return strlen(s) == ID_HEX && strspn(s, "0123456789abcdef") == ID_HEX;
}

/* Under the lock. */
static struct item *item_find(const char *id) {
        for (size_t i = 0; i < dl.n_items; i++)
                if (strcmp(dl.items[i].id, id) == 0)
                        return &dl.items[i];
        return NULL;
}

/* Under the lock: a new item, zeroed but for id and job; NULL on ENOMEM. */
static struct item *item_add(const char *id, uint64_t job) {
        struct item *it;

        if (dl.n_items == dl.cap_items) {
                size_t cap = dl.cap_items ? dl.cap_items * 2 : 64;
                struct item *n = realloc(dl.items, cap * sizeof(*n));

                if (!n)
                        return NULL;
                dl.items = n;
                dl.cap_items = cap;
        }
        it = &dl.items[dl.n_items++];
        *it = (struct item) { .job = job };
        memcpy(it->id, id, ID_HEX + 1);
        return it;
}

/* The whole of a report file in the outbox into *ret (NUL-terminated), its size in *len. 0 or
 * -errno (-EINVAL: not a regular file, -EFBIG: over REPORT_FILE_MAX). */
static int read_file_at(int dfd, const char *name, char **ret, size_t *len) {
        _cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        struct stat st;

        if (fd < 0 || fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        return report_read_fd(fd, ret, len);
}

/* The "job" member of a report's text, 0 when it has none. */
static uint64_t report_job(const char *text) {
        _cleanup_json_ struct json_object *o = json_tokener_parse(text);
        struct json_object *v;

        return o && json_object_object_get_ex(o, "job", &v) ? (uint64_t) json_object_get_uint64(v) : 0;
}

/* ---- start-up: what the outbox holds ---- */

/* Every outbox/delivered/ID marker into the table. */
static void load_delivered(void) {
        _cleanup_close_ int dfd = open(dl.delivered, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = dfd >= 0 ? fdopendir(dup(dfd)) : NULL;
        struct dirent *e;

        if (!d)
                return;
        while ((e = readdir(d))) {
                _cleanup_free_ char *text = NULL;
                _cleanup_json_ struct json_object *o = NULL;
                struct json_object *v;
                struct item *it;
                size_t len;

                if (!id_valid(e->d_name) || read_file_at(dfd, e->d_name, &text, &len) < 0)
                        continue;
                o = json_tokener_parse(text);
                it = item_add(e->d_name, 0);
                if (!it)
                        break;
                if (o && json_object_object_get_ex(o, "job", &v))
                        it->job = json_object_get_uint64(v);
                if (o && json_object_object_get_ex(o, "delivered_at", &v))
                        it->delivered_at = json_object_get_double(v);
        }
        closedir(d);
}

static int item_order(const void *a, const void *b) {
        const struct item *x = a, *y = b;

        if (x->queued_at != y->queued_at)
                return x->queued_at < y->queued_at ? -1 : 1;
        return strcmp(x->id, y->id);
}

/* Move outbox/name aside to outbox/bad/, logged. */
static void move_bad(int dfd, const char *name, const char *why) {
        _cleanup_close_ int bfd = open(dl.bad, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char dest[NAME_MAX + 32];

        snprintf(dest, sizeof(dest), "%s.%lld", name, (long long) time(NULL));
        if (bfd < 0 || renameat(dfd, name, bfd, dest) < 0) {
                log_error("%s/%s: %s, and it cannot be moved to %s: %s", dl.outbox, name, why, dl.bad, strerror(errno));
                return;
        }
        (void) fsync(bfd);
        log_error("%s/%s: %s: moved to %s/%s, not delivered", dl.outbox, name, why, dl.bad, dest);
}

/* Every outbox/ID.json into the table, oldest first. 0 or -errno. */
static int load_outbox(void) {
        _cleanup_close_ int dfd = open(dl.outbox, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = dfd >= 0 ? fdopendir(dup(dfd)) : NULL;
        struct dirent *e;
        size_t first = dl.n_items, found = 0;
        bool unlinked = false;

        if (!d)
                return -errno;
        while ((e = readdir(d))) {
                _cleanup_free_ char *text = NULL;
                char id[ID_HEX + 1], hash[ID_HEX + 1];
                size_t n = strlen(e->d_name), len;
                struct item *it;
                struct stat st;
                int r;

                /* A temporary file of a write a crash interrupted: its report was not yet queued. */
                if (e->d_name[0] == '.' && n > 4 && strcmp(e->d_name + n - 4, ".tmp") == 0) {
                        (void) unlinkat(dfd, e->d_name, 0);
                        continue;
                }
                if (n != ID_HEX + 5 || strcmp(e->d_name + ID_HEX, ".json") != 0 ||
                    fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
                        continue;
                memcpy(id, e->d_name, ID_HEX);
                id[ID_HEX] = 0;
                if (!id_valid(id))
                        continue;
                r = read_file_at(dfd, e->d_name, &text, &len);
                if (r < 0) {
                        log_error("%s/%s: cannot read it: %s (left there)", dl.outbox, e->d_name, strerror(-r));
                        continue;
                }
                if (report_id(text, len, hash) < 0) {
                        closedir(d);
                        return -ENOMEM;
                }
                if (strcmp(hash, id) != 0) {
                        move_bad(dfd, e->d_name, "its SHA-256 is not its name (changed or torn)");
                        continue;
                }
                it = item_find(id);
                if (it && !it->pending) {
                        /* Answered 2xx before the daemon stopped, not yet unlinked. */
                        (void) unlinkat(dfd, e->d_name, 0);
                        unlinked = true;
                        continue;
                }
                if (it)
                        continue;
                it = item_add(id, report_job(text));
                if (!it) {
                        closedir(d);
                        return -ENOMEM;
                }
                it->pending = true;
                it->queued_at = (double) st.st_mtim.tv_sec + st.st_mtim.tv_nsec * 1e-9;
                found++;
        }
        closedir(d);
        if (unlinked)
                (void) fsync(dfd);
        /* Pending items sit after the delivered ones; oldest first among them. */
        if (dl.n_items > first)
                qsort(dl.items + first, dl.n_items - first, sizeof(*dl.items), item_order);
        for (size_t i = first; i < dl.n_items; i++)
                dl.items[i].seq = dl.next_seq++;
        if (found)
                log_info("%zu report%s in %s to deliver to %s", found, found == 1 ? "" : "s", dl.outbox, dl.host);
        return 0;
}

/* ---- the thread ---- */

#ifdef HAVE_CURL
struct body {
        char buf[160];                  /* the start of the collector's answer */
        size_t len;
};

static size_t on_body(char *data, size_t size, size_t n, void *arg) {
        struct body *b = arg;
        size_t k = size * n, room = sizeof(b->buf) - 1 - b->len;

        memcpy(b->buf + b->len, data, k < room ? k : room);
        b->len += k < room ? k : room;
        b->buf[b->len] = 0;
        return k;
}

/* Called by libcurl at least once a second while it waits: a non-zero return aborts the transfer. */
static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un) {
        (void) arg, (void) dt, (void) dn, (void) ut, (void) un;
        return atomic_load(&dl_stop) ? 1 : 0;
}

/* POST the outbox file of id (job) once. Returns the HTTP status (> 0), 0 when the daemon is
 * stopping, or -errno with what happened in err. */
static long post_report(CURL *curl, const char *id, uint64_t job, char *err, size_t err_len) {
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int dfd = open(dl.outbox, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char name[ID_HEX + 8], line[128], cerr[CURL_ERROR_SIZE] = "";
        struct curl_slist *h = NULL, *t;
        struct body body = {};
        long status = 0;
        size_t len;
        CURLcode c;
        int r;

        snprintf(name, sizeof(name), "%s.json", id);
        r = dfd < 0 ? -errno : read_file_at(dfd, name, &text, &len);
        if (r < 0) {
                snprintf(err, err_len, "cannot read %s/%s: %s", dl.outbox, name, strerror(-r));
                return r;
        }
        /* Ours first; the configured ones cannot name these (collector_header_valid). */
        t = curl_slist_append(h, "Content-Type: application/json");
        h = t ? t : h;
        snprintf(line, sizeof(line), "Idempotency-Key: %s", id);
        t = t ? curl_slist_append(h, line) : NULL;
        snprintf(line, sizeof(line), "X-Wiped-Report-Id: %s", id);
        t = t ? curl_slist_append(h, line) : NULL;
        snprintf(line, sizeof(line), "X-Wiped-Job: %" PRIu64, job);
        t = t ? curl_slist_append(h, line) : NULL;
        snprintf(line, sizeof(line), "X-Wiped-Host: %s", dl.machine_id[0] ? dl.machine_id : "unknown");
        t = t ? curl_slist_append(h, line) : NULL;
        /* No "Expect: 100-continue" round trip for a large report. */
        t = t ? curl_slist_append(h, "Expect:") : NULL;
        for (size_t i = 0; t && dl.headers && dl.headers[i]; i++)
                t = curl_slist_append(h, dl.headers[i]);
        if (!t) {
                curl_slist_free_all(h);
                snprintf(err, err_len, "out of memory");
                return -ENOMEM;
        }
        curl_easy_setopt(curl, CURLOPT_URL, dl.url);
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(curl, CURLOPT_POST, 1L);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, text);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) len);
        curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
        curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, cerr);
        c = curl_easy_perform(curl);
        curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, NULL);
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, NULL);
        curl_slist_free_all(h);
        if (c == CURLE_ABORTED_BY_CALLBACK && atomic_load(&dl_stop))
                return 0;
        if (c != CURLE_OK) {
                snprintf(err, err_len, "%s", cerr[0] ? cerr : curl_easy_strerror(c));
                return c == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : c == CURLE_COULDNT_CONNECT ? -ECONNREFUSED : -EIO;
        }
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
        /* The answer's first line, for the log and the status. */
        body.buf[strcspn(body.buf, "\r\n")] = 0;
        for (char *p = body.buf; *p; p++)
                if ((unsigned char) *p < ' ' || (unsigned char) *p >= 0x7f)
                        *p = '?';
        snprintf(err, err_len, "HTTP %ld%s%s", status, body.buf[0] ? ": " : "", body.buf);
        return status > 0 ? status : -EPROTO;
}

/* The options that stay the same for every request. 0 or -ENOMEM. */
static int curl_setup(CURL *curl) {
        curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
        /* http and https only, also for a redirect (which is not followed anyway: following one
         * would send the report, and any Authorization header, where the configuration did not
         * say; the configured URL must be the collector's own). */
#if LIBCURL_VERSION_NUM >= 0x075500
        curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
        curl_easy_setopt(curl, CURLOPT_PROTOCOLS, (long) (CURLPROTO_HTTP | CURLPROTO_HTTPS));
        curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS, (long) (CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
        curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
        /* No proxy from the environment: a daemon started from a shell must not send reports
         * through whatever http_proxy that shell had. */
        curl_easy_setopt(curl, CURLOPT_PROXY, "");
        curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long) (dl.timeout * 1000));
        curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(curl, CURLOPT_USERAGENT, "wiped/" PACKAGE_VERSION);
        if (dl.ca_file)
                curl_easy_setopt(curl, CURLOPT_CAINFO, dl.ca_file);
        if (dl.client_cert)
                curl_easy_setopt(curl, CURLOPT_SSLCERT, dl.client_cert);
        if (dl.client_key)
                curl_easy_setopt(curl, CURLOPT_SSLKEY, dl.client_key);
        return 0;
}

/* Under the lock: the pending item to send next (due first, then oldest), or NULL. */
static struct item *item_next(void) {
        struct item *best = NULL;

        for (size_t i = 0; i < dl.n_items; i++) {
                struct item *it = &dl.items[i];

                if (!it->pending)
                        continue;
                if (!best || it->next_try < best->next_try || (it->next_try == best->next_try && it->seq < best->seq))
                        best = it;
        }
        return best;
}

static int fsync_dir(const char *dir) {
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        return fd < 0 || fsync(fd) < 0 ? -errno : 0;
}

/* After a 2xx: the marker, then the unlink (deliver.c's head says why in this order). */
static void mark_delivered(const char *id, uint64_t job, long status, double at) {
        _cleanup_free_ char *path = NULL;
        char text[256];
        int r;

        snprintf(text, sizeof(text), "{\"report_id\":\"%s\",\"job\":%" PRIu64 ",\"delivered_at\":%.3f,\"http_status\":%ld}\n",
                 id, job, at, status);
        r = state_write_atomic(dl.delivered, id, text, strlen(text));
        if (r < 0)
                log_warning("%s/%s: cannot record the delivery: %s", dl.delivered, id, strerror(-r));
        if (asprintf(&path, "%s/%s.json", dl.outbox, id) < 0) {
                path = NULL;
                return;
        }
        if (unlink(path) < 0 && errno != ENOENT)
                log_error("%s: delivered, but cannot be removed: %s (it will be sent again, with the same "
                          "Idempotency-Key)", path, strerror(errno));
        (void) fsync_dir(dl.outbox);
}

static void *deliver_main(void *arg) {
        CURL *curl = curl_easy_init();
        unsigned seed = (unsigned) getpid() ^ (unsigned) time(NULL);

        (void) arg;
        pthread_setname_np(pthread_self(), DELIVER_THREAD_NAME);
        if (!curl || curl_setup(curl) < 0) {
                log_error("%s: cannot set up libcurl: reports stay in %s", dl.host, dl.outbox);
                if (curl)
                        curl_easy_cleanup(curl);
                return NULL;
        }
        pthread_mutex_lock(&dl.lock);
        while (!dl.stop) {
                struct item *it = item_next();
                char id[ID_HEX + 1], err[DELIVER_ERROR_MAX] = "";
                double due, now = mono_s(), at;
                enum collector_outcome out;
                uint64_t job;
                long status;

                if (!it) {
                        pthread_cond_wait(&dl.wake, &dl.lock);
                        continue;
                }
                due = it->next_try > dl.gate ? it->next_try : dl.gate;
                if (now < due) {
                        struct timespec ts;

                        clock_gettime(CLOCK_MONOTONIC, &ts);
                        ts.tv_sec += (time_t) (due - now);
                        ts.tv_nsec += (long) ((due - now - (double) (time_t) (due - now)) * 1e9);
                        if (ts.tv_nsec >= 1000000000L) {
                                ts.tv_sec++;
                                ts.tv_nsec -= 1000000000L;
                        }
                        pthread_cond_timedwait(&dl.wake, &dl.lock, &ts);
                        continue;
                }
                memcpy(id, it->id, sizeof(id));
                job = it->job;
                pthread_mutex_unlock(&dl.lock);

                status = post_report(curl, id, job, err, sizeof(err));
                at = real_s();
                if (status == 0) {
                        pthread_mutex_lock(&dl.lock);
                        break;          /* stopping: the report stays in the outbox */
                }
                if (status == -ENOENT) {
                        /* Removed by hand: nothing left to send, and no record of it to keep. */
                        pthread_mutex_lock(&dl.lock);
                        it = item_find(id);
                        if (it) {
                                free(it->last_error);
                                *it = dl.items[--dl.n_items];
                        }
                        log_error("job %" PRIu64 ": report %s: %s/%s.json is gone: not delivered", job, id, dl.outbox, id);
                        continue;
                }
                out = status > 0 ? collector_outcome_of(status) : COLLECTOR_RETRY;
                if (out == COLLECTOR_DELIVERED)
                        mark_delivered(id, job, status, at);

                pthread_mutex_lock(&dl.lock);
                dl.last_attempt_at = at;
                it = item_find(id);
                if (it)
                        it->attempts++;
                if (out == COLLECTOR_DELIVERED) {
                        dl.failures = 0;
                        dl.gate = 0;
                        free(dl.last_error);
                        dl.last_error = NULL;
                        dl.n_delivered++;
                        if (it) {
                                it->pending = false;
                                it->delivered_at = at;
                                free(it->last_error);
                                it->last_error = NULL;
                        }
                        log_info("job %" PRIu64 ": report %s delivered to %s (HTTP %ld)", job, id, dl.host, status);
                        continue;
                }
                /* A report is never dropped: whatever the answer, it is tried again later. */
                dl.n_failed++;
                dl.failures++;
                now = mono_s();
                dl.gate = now + collector_backoff(dl.failures, dl.retry_max, (double) rand_r(&seed) / ((double) RAND_MAX + 1));
                if (it) {
                        it->next_try = now + collector_backoff(it->attempts, dl.retry_max,
                                                               (double) rand_r(&seed) / ((double) RAND_MAX + 1));
                        free(it->last_error);
                        it->last_error = strdup(err);
                }
                free(dl.last_error);
                dl.last_error = strdup(err);
                if (out == COLLECTOR_REJECTED)
                        log_error("job %" PRIu64 ": report %s refused by %s: %s (kept in the outbox, tried again)", job,
                                  id, dl.host, err);
                else
                        log_warning("job %" PRIu64 ": report %s not delivered to %s: %s (attempt %u, tried again in %.0f s)",
                                    job, id, dl.host, err, it ? it->attempts : 0, dl.gate - now);
        }
        pthread_mutex_unlock(&dl.lock);
        curl_easy_cleanup(curl);
        return NULL;
}
#else
/* Never started: deliver_start() refuses a report-url without libcurl. */
static void *deliver_main(void *arg) {
        return arg;
}
#endif

/* ---- the main thread's side ---- */

static char *dup_or_null(const char *s, bool *oom) {
        char *d = s ? strdup(s) : NULL;

        if (s && !d)
                *oom = true;
        return d;
}

int deliver_start(const char *state_dir) {
        const struct conffile *s = config_settings();
        pthread_condattr_t ca;
        bool creds = false, oom = false;
        int r;

        if (!s->report_url)
                return 0;
#ifndef HAVE_CURL
        log_error("report-url = %s: this wiped was built without libcurl (--disable-delivery)", s->report_url);
        return -EOPNOTSUPP;
#endif
        if (!state_dir) {
                log_error("report-url needs a state directory (the outbox)");
                return -EINVAL;
        }
        if (collector_url_parse(s->report_url, dl.host, sizeof(dl.host), &creds) < 0) {
                log_error("report-url = %s: not an http:// or https:// URL", s->report_url);
                return -EINVAL;
        }
        if (creds)
                log_warning("report-url: it holds credentials; a report-header (Authorization: ...) keeps them out "
                            "of the URL, which libcurl may show in its errors");
        dl.url = dup_or_null(s->report_url, &oom);
        dl.ca_file = dup_or_null(s->report_ca_file, &oom);
        dl.client_cert = dup_or_null(s->report_client_cert, &oom);
        dl.client_key = dup_or_null(s->report_client_key, &oom);
        for (size_t i = 0, n = 0; i < s->n_report_header && !oom; i++)
                oom = strv_append(&dl.headers, &n, s->report_header[i]) < 0;
        if (oom || asprintf(&dl.outbox, "%s/" DELIVER_OUTBOX, state_dir) < 0 ||
            asprintf(&dl.bad, "%s/bad", dl.outbox) < 0 || asprintf(&dl.delivered, "%s/delivered", dl.outbox) < 0) {
                log_error("out of memory");
                return -ENOMEM;
        }
        /* wiped.conf is read whatever its mode; a header may hold a secret (Authorization). */
        if (s->n_report_header > 0 && config_path()) {
                struct stat cst;

                if (stat(config_path(), &cst) == 0 && (cst.st_mode & 0044))
                        log_warning("%s: others may read it (mode %04o), and it holds report-header values: "
                                    "chmod 0600 %s", config_path(), (unsigned) (cst.st_mode & 07777), config_path());
        }
        dl.timeout = s->report_timeout;
        dl.retry_max = s->report_retry_max_interval;
        for (const char *const *f = (const char *const[]) { dl.ca_file, dl.client_cert, dl.client_key }, *const *e = f + 3;
             f < e; f++)
                if (*f && access(*f, R_OK) < 0)
                        log_warning("%s: cannot be read (%s): deliveries to %s will fail until it can", *f, strerror(errno),
                                    dl.host);
        {
                FILE *m = fopen("/etc/machine-id", "re");

                if (m) {
                        if (fgets(dl.machine_id, sizeof(dl.machine_id), m))
                                dl.machine_id[strcspn(dl.machine_id, "\n")] = 0;
                        fclose(m);
                }
        }
        if ((mkdir(dl.outbox, 0700) < 0 && errno != EEXIST) || (mkdir(dl.bad, 0700) < 0 && errno != EEXIST) ||
            (mkdir(dl.delivered, 0700) < 0 && errno != EEXIST)) {
                r = -errno;
                log_error("%s: cannot create it with bad/ and delivered/: %s", dl.outbox, strerror(-r));
                return r;
        }
        pthread_mutex_lock(&dl.lock);
        load_delivered();
        r = load_outbox();
        pthread_mutex_unlock(&dl.lock);
        if (r < 0) {
                log_error("%s: cannot read it: %s", dl.outbox, strerror(-r));
                return r;
        }
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&dl.wake, &ca);
        pthread_condattr_destroy(&ca);
        atomic_store(&dl_stop, false);
        r = -pthread_create(&dl.thread, NULL, deliver_main, NULL);
        if (r < 0) {
                log_error("cannot start the thread " DELIVER_THREAD_NAME ": %s", strerror(-r));
                return r;
        }
        dl.thread_started = true;
        dl.enabled = true;
        log_info("delivering reports to %s (timeout %.0f s, retries at most every %.0f s)", dl.host, dl.timeout,
                 dl.retry_max);
        return 0;
}

void deliver_stop(void) {
        if (dl.thread_started) {
                pthread_mutex_lock(&dl.lock);
                dl.stop = true;
                atomic_store(&dl_stop, true);
                pthread_cond_broadcast(&dl.wake);
                pthread_mutex_unlock(&dl.lock);
                pthread_join(dl.thread, NULL);
                dl.thread_started = false;
                pthread_cond_destroy(&dl.wake);
        }
        pthread_mutex_lock(&dl.lock);
        for (size_t i = 0; i < dl.n_items; i++)
                free(dl.items[i].last_error);
        free(dl.items);
        dl.items = NULL;
        dl.n_items = dl.cap_items = 0;
        free(dl.last_error);
        dl.last_error = NULL;
        dl.enabled = false;
        pthread_mutex_unlock(&dl.lock);
        free(dl.url);
        free(dl.ca_file);
        free(dl.client_cert);
        free(dl.client_key);
        free(dl.outbox);
        free(dl.bad);
        free(dl.delivered);
        strv_free(dl.headers);
        dl.url = dl.ca_file = dl.client_cert = dl.client_key = dl.outbox = dl.bad = dl.delivered = NULL;
        dl.headers = NULL;
}

int deliver_enqueue(struct job *job, const char *text, size_t len) {
        char id[ID_HEX + 1], name[ID_HEX + 8];
        struct item *it;
        int r;

        if (!dl.enabled)
                return 0;
        r = report_id(text, len, id);
        if (r < 0)
                return r;
        pthread_mutex_lock(&dl.lock);
        it = item_find(id);
        pthread_mutex_unlock(&dl.lock);
        /* The same bytes again: already queued, or the collector has them. */
        if (it)
                return 0;
        snprintf(name, sizeof(name), "%s.json", id);
        r = state_write_atomic(dl.outbox, name, text, len);
        if (r < 0) {
                log_error("job %" PRIu64 ": %s: cannot write its report to %s/%s for delivery: %s", job->id,
                          job->info.node, dl.outbox, name, strerror(-r));
                return r;
        }
        pthread_mutex_lock(&dl.lock);
        it = item_add(id, job->id);
        if (it) {
                it->pending = true;
                it->queued_at = real_s();
                it->seq = dl.next_seq++;
                pthread_cond_signal(&dl.wake);
        }
        pthread_mutex_unlock(&dl.lock);
        /* Out of memory: the file is in the outbox, and the next start sends it. */
        if (!it)
                log_error("job %" PRIu64 ": report %s: out of memory: delivered after the next start", job->id, id);
        else
                log_info("job %" PRIu64 ": report %s queued for delivery to %s", job->id, id, dl.host);
        return 0;
}

/* The id of the job's report file (cached while the file is the same). NULL when it cannot be read. */
static const char *report_id_of(uint64_t job, const char *path) {
        _cleanup_free_ char *text = NULL;
        struct id_cache *c;
        struct stat st;
        size_t len = 0;
        int r;

        if (!path || stat(path, &st) < 0)
                return NULL;
        if (!dl.cache && !(dl.cache = calloc(ID_CACHE_MAX, sizeof(*dl.cache))))
                return NULL;
        c = &dl.cache[job % ID_CACHE_MAX];
        if (c->job == job && c->dev == st.st_dev && c->ino == st.st_ino && c->size == st.st_size &&
            c->mtime.tv_sec == st.st_mtim.tv_sec && c->mtime.tv_nsec == st.st_mtim.tv_nsec)
                return c->id;
        r = read_file_at(AT_FDCWD, path, &text, &len);
        if (r < 0)
                return NULL;
        if (report_id(text, len, c->id) < 0) {
                c->job = 0;
                return NULL;
        }
        c->job = job;
        c->dev = st.st_dev;
        c->ino = st.st_ino;
        c->size = st.st_size;
        c->mtime = st.st_mtim;
        return c->id;
}

void deliver_job_json(struct json_object *o, uint64_t job, const char *report_file) {
        const char *id = report_id_of(job, report_file);
        struct json_object *d = NULL;
        struct item *it;

        json_add(o, "report_id", id ? json_object_new_string(id) : NULL);
        if (!id) {
                json_add(o, "delivery", NULL);
                return;
        }
        pthread_mutex_lock(&dl.lock);
        it = dl.enabled ? item_find(id) : NULL;
        /* Delivery on, but this report was written before it was configured: not queued (null). */
        if (!dl.enabled || it) {
                d = json_object_new_object();
                json_add(d, "state", json_object_new_string(!dl.enabled ? "disabled" : it->pending ? "pending" : "delivered"));
                json_add(d, "attempts", json_object_new_int(it ? (int) it->attempts : 0));
                json_add(d, "last_error", it && it->last_error ? json_object_new_string(it->last_error) : NULL);
                json_add(d, "delivered_at", it && it->delivered_at > 0 ?
                         json_object_new_int64((int64_t) it->delivered_at) : NULL);
        }
        pthread_mutex_unlock(&dl.lock);
        json_add(o, "delivery", d);
}

void deliver_reply_json(struct json_object *reply) {
        struct deliver_stats st;
        struct json_object *c = NULL;

        deliver_stats(&st);
        json_add(reply, "reports_pending_delivery", json_object_new_int64(st.pending));
        pthread_mutex_lock(&dl.lock);
        if (dl.enabled) {
                c = json_object_new_object();
                json_add(c, "host", json_object_new_string(dl.host));
                json_add(c, "last_error", dl.last_error ? json_object_new_string(dl.last_error) : NULL);
                json_add(c, "last_attempt_at", dl.last_attempt_at > 0 ?
                         json_object_new_int64((int64_t) dl.last_attempt_at) : NULL);
        }
        pthread_mutex_unlock(&dl.lock);
        json_add(reply, "collector", c);
}

void deliver_stats(struct deliver_stats *st) {
        double now = real_s(), oldest = 0;

        *st = (struct deliver_stats) {};
        pthread_mutex_lock(&dl.lock);
        st->enabled = dl.enabled;
        for (size_t i = 0; i < dl.n_items; i++)
                if (dl.items[i].pending) {
                        st->pending++;
                        if (oldest == 0 || dl.items[i].queued_at < oldest)
                                oldest = dl.items[i].queued_at;
                }
        st->delivered = dl.n_delivered;
        st->failed_attempts = dl.n_failed;
        pthread_mutex_unlock(&dl.lock);
        st->oldest_pending_s = oldest > 0 && now > oldest ? now - oldest : 0;
}
