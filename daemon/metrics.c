/* Prometheus metrics (wiped(8) "METRICS"): the exposition text of the jobs and the daemon, served
 * at http://metrics-listen/metrics by libmicrohttpd and written to node_exporter's textfile
 * (metrics-textfile), or both.
 *
 * Threads. The job table is the main thread's, so the text is made there (metrics_tick(), from
 * the main loop's 0.1 s timer: at least once a second, and at once when a job's state changed)
 * into a new buffer that replaces the snapshot under snap_lock. libmicrohttpd's own thread
 * answers a scrape with a copy of the snapshot taken under that lock, and never looks at a job:
 * a scrape is at most about a second old and costs the main loop nothing. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#if HAVE_MHD
#include <microhttpd.h>
#endif

#include "atomicfile.h"
#include "cleanup.h"
#include "clock.h"
#include "daemon-config.h"
#include "daemon.h"
#include "deliver.h"

#define METRICS_RENDER_S 1.0            /* the snapshot is never older than this (and a tick) */
#define METRICS_HTTP_CONNECTIONS 16     /* scrapes served at once; more are refused */
#define METRICS_HTTP_PER_IP 4           /* of those from one address: one client (a slowloris that
                                         * trickles bytes) cannot take every slot from Prometheus */
#define METRICS_HTTP_TIMEOUT_S 10       /* an idle or slow connection is closed after this */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

static struct {
        bool enabled;                   /* an endpoint or a textfile is configured */
#if HAVE_MHD
        struct MHD_Daemon *httpd;
#endif
        char *listen;                   /* metrics-listen as configured, for messages */
        char *textfile;                 /* metrics-textfile */
        int text_dirfd;                 /* its directory */
        char *text_name;                /* its name there */
        bool text_failed;               /* the last write failed (logged once until one works) */
        double start_time;              /* CLOCK_REALTIME of metrics_start() */
        unsigned threads, buffers;      /* the pool's, which is freed before metrics_stop() */
        uint64_t io_size, buffer_bytes;
        double next_render, next_write; /* CLOCK_MONOTONIC */
        uint64_t state_sig;             /* of the jobs' ids and states at the last render */
        pthread_mutex_t snap_lock;      /* snap, snap_len: the HTTP thread reads them */
        char *snap;
        size_t snap_len;
} metrics = { .text_dirfd = -1, .snap_lock = PTHREAD_MUTEX_INITIALIZER };

static atomic_uint_fast64_t metrics_io_errors;

void metrics_count_io_error(void) {
        atomic_fetch_add_explicit(&metrics_io_errors, 1, memory_order_relaxed);
}

void metrics_put_label(FILE *f, const char *v) {
        for (; v && *v; v++) {
                if (*v == '\\')
                        fputs("\\\\", f);
                else if (*v == '"')
                        fputs("\\\"", f);
                else if (*v == '\n')
                        fputs("\\n", f);
                else
                        fputc(*v, f);
        }
}

static void put_head(FILE *f, const char *name, const char *type, const char *help) {
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* What a job's series are labelled with (job_id, device, serial: small and stable). */
struct job_labels {
        uint64_t id;
        const char *node, *serial;
};

static void put_job_labels(FILE *f, const struct job_labels *l) {
        fprintf(f, "job_id=\"%" PRIu64 "\",device=\"", l->id);
        metrics_put_label(f, l->node);
        fputs("\",serial=\"", f);
        metrics_put_label(f, l->serial);
        fputc('"', f);
}

static void put_value(FILE *f, double v) {
        if (isnan(v))
                fputs("NaN", f);
        else if (v == floor(v) && fabs(v) < 9.007199254740992e15)
                fprintf(f, "%.0f", v);
        else
                fprintf(f, "%.17g", v);
}

/* One sample of a per-job metric, extra (may be NULL) a further label name="value". */
static void put_job_sample(FILE *f, const char *name, const struct job_labels *l, const char *extra_name,
                           const char *extra_value, double v) {
        fprintf(f, "%s{", name);
        put_job_labels(f, l);
        if (extra_name) {
                fprintf(f, ",%s=\"", extra_name);
                metrics_put_label(f, extra_value);
                fputc('"', f);
        }
        fputs("} ", f);
        put_value(f, v);
        fputc('\n', f);
}

/* What a job shows, read once per render (job_to_json's values and a few of its own). */
struct job_sample {
        struct job_labels l;
        char *model, *method, *policy;  /* policy: "" for a client's job */
        enum job_state state;
        double size, work_done, work_total, written, rate, eta, bad, mismatched;
        double started, ended, progress;
        double pass, passes;
};

static double json_num(struct json_object *o, const char *key) {
        struct json_object *v = json_object_object_get(o, key);

        return v ? json_object_get_double(v) : NAN;
}

static void job_sample_done(struct job_sample *s) {
        free((char *) s->l.node);
        free((char *) s->l.serial);
        free(s->model);
        free(s->method);
        free(s->policy);
}

/* Fill s from job (main thread). 0 or -ENOMEM. */
static int job_sample_read(struct job *job, struct job_sample *s) {
        _cleanup_json_ struct json_object *o = job_to_json(job);
        uint64_t last_ns, now_ns = mono_ns();
        double now = real_s();
        const char *state;

        *s = (struct job_sample) {};
        if (!o)
                return -ENOMEM;
        state = json_object_get_string(json_object_object_get(o, "state"));
        if (!state || job_state_from_name(state, &s->state) < 0)
                return -EINVAL;
        s->l.id = job->id;
        s->l.node = strdup(job->info.node ? job->info.node : "");
        s->l.serial = strdup(job->info.serial ? job->info.serial : "");
        s->model = strdup(job->info.model ? job->info.model : "");
        s->method = strdup(job->method ? job->method : "");
        s->policy = strdup(job->policy ? job->policy : "");
        if (!s->l.node || !s->l.serial || !s->model || !s->method || !s->policy) {
                job_sample_done(s);
                return -ENOMEM;
        }
        s->size = json_num(o, "size_bytes");
        s->work_done = json_num(o, "work_done_bytes");
        s->work_total = json_num(o, "work_total_bytes");
        s->rate = json_num(o, "rate_bps");
        s->eta = json_num(o, "eta_s");
        s->bad = json_num(o, "bad_bytes");
        s->started = json_num(o, "started_at");
        s->ended = json_num(o, "ended_at");
        s->pass = json_num(o, "pass");
        s->passes = json_num(o, "passes");
        s->written = (double) atomic_load(&job->bytes_written);
        /* The mismatches of the verification in progress, else of the latest one. */
        pthread_mutex_lock(&job->lock);
        if (job->current.coverage > 0 || job->current.mismatched > 0 || job->n_runs == 0)
                s->mismatched = (double) job->current.mismatched;
        else
                s->mismatched = (double) job->runs[job->n_runs - 1].mismatched;
        pthread_mutex_unlock(&job->lock);
        /* The last I/O that succeeded, as wall-clock time; before the first, the run's start. */
        last_ns = atomic_load(&job->last_ok_ns);
        if (last_ns > 0 && last_ns <= now_ns)
                s->progress = now - (double) (now_ns - last_ns) / 1e9;
        else
                s->progress = s->started;
        if (!isnan(s->started) && s->progress < s->started)
                s->progress = s->started;
        return 0;
}

/* Whether the job is shown (a cheap look, under its lock, for every job of the table): one that
 * has not ended, or ended within metrics-ended-max-age. Its state in *state. */
static bool job_shown(struct job *job, double now, enum job_state *state) {
        double ended;

        pthread_mutex_lock(&job->lock);
        *state = job->state;
        ended = job->ended_at;
        pthread_mutex_unlock(&job->lock);
        return !job_state_is_final(*state) || ended <= 0 || now - ended <= config_settings()->metrics_ended_max_age;
}

char *metrics_render(bool up, size_t *len) {
        struct job_sample *js = NULL;
        size_t n = 0, cap = 0, skip = 0, ended = 0;
        unsigned by_state[_JOB_STATE_MAX] = {};
        double now = real_s();
        char *text = NULL;
        enum job_state st;
        FILE *f;

        /* Every job is counted by state; only the shown ones are sampled (job_to_json() is not
         * free, and the table may hold years of history): those not ended, and the latest
         * METRICS_ENDED_MAX of those that ended within the age (the table is oldest first). */
        for (struct job *job = job_first(); job; job = job->next) {
                bool shown = job_shown(job, now, &st);

                by_state[st]++;
                ended += shown && job_state_is_final(st);
        }
        if (ended > METRICS_ENDED_MAX)
                skip = ended - METRICS_ENDED_MAX;
        for (struct job *job = job_first(); job; job = job->next) {
                if (!job_shown(job, now, &st))
                        continue;
                if (job_state_is_final(st) && skip > 0) {
                        skip--;
                        continue;
                }
                if (n == cap) {
                        struct job_sample *t = realloc(js, (cap ? cap * 2 : 16) * sizeof(*js));

                        if (!t)
                                goto fail;
                        js = t;
                        cap = cap ? cap * 2 : 16;
                }
                if (job_sample_read(job, &js[n]) == 0)
                        n++;
        }

        f = open_memstream(&text, len);
        if (!f)
                goto fail;
        put_head(f, "wiped_up", "gauge", "1 while the daemon serves; 0 in the textfile it leaves at a clean stop.");
        fprintf(f, "wiped_up %d\n", up ? 1 : 0);
        put_head(f, "wiped_build_info", "gauge", "The daemon's version, as a label; always 1.");
        fputs("wiped_build_info{version=\"" PACKAGE_VERSION "\"} 1\n", f);
        put_head(f, "wiped_start_time_seconds", "gauge", "When the daemon started, seconds since the epoch.");
        fprintf(f, "wiped_start_time_seconds %.3f\n", metrics.start_time);
        put_head(f, "wiped_worker_threads", "gauge", "Worker threads that write and read the devices.");
        fprintf(f, "wiped_worker_threads %u\n", metrics.threads);
        put_head(f, "wiped_io_buffers", "gauge", "I/O buffers over all worker threads (I/Os in flight at most).");
        fprintf(f, "wiped_io_buffers %" PRIu64 "\n", (uint64_t) metrics.threads * metrics.buffers);
        put_head(f, "wiped_io_buffer_size_bytes", "gauge", "Bytes of one I/O buffer: the largest I/O.");
        fprintf(f, "wiped_io_buffer_size_bytes %" PRIu64 "\n", metrics.io_size);
        put_head(f, "wiped_io_buffer_memory_bytes", "gauge", "Bytes of memory of the I/O buffers and verification scratch.");
        fprintf(f, "wiped_io_buffer_memory_bytes %" PRIu64 "\n", metrics.buffer_bytes);
        put_head(f, "wiped_jobs", "gauge", "Jobs in the daemon's table, by state.");
        for (unsigned s = 0; s < _JOB_STATE_MAX; s++)
                fprintf(f, "wiped_jobs{state=\"%s\"} %u\n", job_state_name((enum job_state) s), by_state[s]);
        put_head(f, "wiped_jobs_started_total", "counter", "Jobs started (submitted, resumed or verified again).");
        fprintf(f, "wiped_jobs_started_total %" PRIu64 "\n",
                log_event_count(LOG_EVENT_JOB_STARTED) + log_event_count(LOG_EVENT_JOB_RESUMED));
        put_head(f, "wiped_jobs_ended_total", "counter",
                 "Job runs that ended, by outcome (done counts done with errors too).");
        fprintf(f, "wiped_jobs_ended_total{outcome=\"done\"} %" PRIu64 "\n", log_event_count(LOG_EVENT_JOB_DONE));
        fprintf(f, "wiped_jobs_ended_total{outcome=\"failed\"} %" PRIu64 "\n", log_event_count(LOG_EVENT_JOB_FAILED));
        fprintf(f, "wiped_jobs_ended_total{outcome=\"cancelled\"} %" PRIu64 "\n",
                log_event_count(LOG_EVENT_JOB_CANCELLED));
        fprintf(f, "wiped_jobs_ended_total{outcome=\"interrupted\"} %" PRIu64 "\n",
                log_event_count(LOG_EVENT_JOB_INTERRUPTED));
        fprintf(f, "wiped_jobs_ended_total{outcome=\"paused\"} %" PRIu64 "\n", log_event_count(LOG_EVENT_JOB_PAUSED));
        put_head(f, "wiped_verifications_failed_total", "counter", "Verifications that found a mismatch or could not read.");
        fprintf(f, "wiped_verifications_failed_total %" PRIu64 "\n", log_event_count(LOG_EVENT_VERIFY_FAILED));
        put_head(f, "wiped_reports_written_total", "counter", "Signed reports written to the state directory.");
        fprintf(f, "wiped_reports_written_total %" PRIu64 "\n", log_event_count(LOG_EVENT_REPORT_WRITTEN));
        {
                unsigned running, queued;

                hook_counts(&running, &queued);
                put_head(f, "wiped_hooks_running", "gauge", "End-of-job hooks running now.");
                fprintf(f, "wiped_hooks_running %u\n", running);
                put_head(f, "wiped_hooks_queued", "gauge", "End-of-job hooks waiting for a free slot (hook-max-running).");
                fprintf(f, "wiped_hooks_queued %u\n", queued);
        }
        {
                struct deliver_stats ds;

                deliver_stats(&ds);
                if (ds.enabled) {
                        put_head(f, "wiped_reports_pending_delivery", "gauge",
                                 "Signed reports in the outbox, not yet accepted by the collector (report-url).");
                        fprintf(f, "wiped_reports_pending_delivery %u\n", ds.pending);
                        put_head(f, "wiped_report_deliveries_total", "counter",
                                 "Attempts to deliver a report, by outcome (failed_attempt: it is tried again).");
                        fprintf(f, "wiped_report_deliveries_total{outcome=\"delivered\"} %" PRIu64 "\n", ds.delivered);
                        fprintf(f, "wiped_report_deliveries_total{outcome=\"failed_attempt\"} %" PRIu64 "\n",
                                ds.failed_attempts);
                        put_head(f, "wiped_report_oldest_pending_seconds", "gauge",
                                 "Age of the oldest report not yet delivered; 0 when none is pending.");
                        fprintf(f, "wiped_report_oldest_pending_seconds %.0f\n", ds.oldest_pending_s);
                }
        }
        put_head(f, "wiped_io_errors_total", "counter",
                 "I/Os that failed (a media error's retries, by halves down to single sectors, count too).");
        fprintf(f, "wiped_io_errors_total %" PRIu64 "\n", (uint64_t) atomic_load(&metrics_io_errors));

#define EACH_JOB for (size_t i = 0; i < n; i++)
        if (n > 0) {
                put_head(f, "wiped_job_info", "gauge",
                         "A job's device model, method and bay policy (empty: submitted), as labels; always 1.");
                EACH_JOB {
                        fputs("wiped_job_info{", f);
                        put_job_labels(f, &js[i].l);
                        fputs(",model=\"", f);
                        metrics_put_label(f, js[i].model);
                        fputs("\",method=\"", f);
                        metrics_put_label(f, js[i].method);
                        fputs("\",policy=\"", f);
                        metrics_put_label(f, js[i].policy);
                        fputs("\"} 1\n", f);
                }
                put_head(f, "wiped_job_state", "gauge", "1 for the state the job is in, 0 for every other state.");
                EACH_JOB
                        for (unsigned s = 0; s < _JOB_STATE_MAX; s++)
                                put_job_sample(f, "wiped_job_state", &js[i].l, "state", job_state_name((enum job_state) s),
                                               js[i].state == s);
#define PER_JOB(name, type, help, field)                                        \
                do {                                                            \
                        put_head(f, name, type, help);                          \
                        EACH_JOB                                                \
                                if (!isnan(js[i].field))                        \
                                        put_job_sample(f, name, &js[i].l, NULL, NULL, js[i].field); \
                } while (0)
                PER_JOB("wiped_job_size_bytes", "gauge", "Bytes of the job's device.", size);
                PER_JOB("wiped_job_work_done_bytes", "gauge",
                        "Bytes written and read back of the job's run so far (over all passes and verifications).",
                        work_done);
                PER_JOB("wiped_job_work_total_bytes", "gauge", "Bytes the job's run writes and reads in all.", work_total);
                PER_JOB("wiped_job_written_bytes", "gauge", "Bytes the job wrote, over all passes and runs.", written);
                PER_JOB("wiped_job_rate_bytes_per_second", "gauge",
                        "The job's rate of work: smoothed while it runs, 0 while stopped, the average once ended.", rate);
                PER_JOB("wiped_job_eta_seconds", "gauge",
                        "Seconds the job is expected to take still (absent while unknown: stopped, or no rate yet).",
                        eta);
                PER_JOB("wiped_job_bad_bytes", "gauge", "Bytes of bad sectors the job skipped.", bad);
                PER_JOB("wiped_job_verify_mismatched_sectors", "gauge",
                        "Sectors that differ from what the pass wrote: of the verification in progress, else the last.",
                        mismatched);
                PER_JOB("wiped_job_pass", "gauge", "The pass the job is at (1-based).", pass);
                PER_JOB("wiped_job_passes", "gauge", "Passes the job writes.", passes);
                PER_JOB("wiped_job_started_timestamp_seconds", "gauge",
                        "When the job's latest run started, seconds since the epoch.", started);
                PER_JOB("wiped_job_ended_timestamp_seconds", "gauge",
                        "When the job ended, seconds since the epoch (absent while it has not).", ended);
                PER_JOB("wiped_job_last_progress_timestamp_seconds", "gauge",
                        "When an I/O of the job last succeeded, seconds since the epoch (its start before the first).",
                        progress);
#undef PER_JOB
        }
#undef EACH_JOB
        if (fclose(f) != 0) {
                free(text);
                text = NULL;
        }
        for (size_t i = 0; i < n; i++)
                job_sample_done(&js[i]);
        free(js);
        return text;

fail:
        for (size_t i = 0; i < n; i++)
                job_sample_done(&js[i]);
        free(js);
        return NULL;
}

/* A signature of the jobs' ids and states: when it changes, the snapshot and the textfile are
 * made at once, so that a short job's end is seen. */
static uint64_t metrics_state_sig(void) {
        uint64_t h = 1469598103934665603ull;

        for (struct job *job = job_first(); job; job = job->next) {
                h = (h ^ job->id) * 1099511628211ull;
                h = (h ^ (uint64_t) job_get_state(job)) * 1099511628211ull;
        }
        return h;
}

static void metrics_write_textfile(const char *text, size_t len) {
        int r = atomic_write_at(metrics.text_dirfd, metrics.text_name, text, len, 0644, false);

        if (r < 0 && !metrics.text_failed)
                log_error("%s: cannot write the metrics: %s", metrics.textfile, strerror(-r));
        else if (r >= 0 && metrics.text_failed)
                log_info("%s: metrics written again", metrics.textfile);
        metrics.text_failed = r < 0;
}

/* Make the snapshot now; write the textfile too when write_text. */
static void metrics_refresh(bool up, bool write_text) {
        size_t len = 0;
        char *text = metrics_render(up, &len), *old;

        if (!text) {
                log_error("metrics: out of memory");
                return;
        }
        if (write_text && metrics.textfile)
                metrics_write_textfile(text, len);
        pthread_mutex_lock(&metrics.snap_lock);
        old = metrics.snap;
        metrics.snap = text;
        metrics.snap_len = len;
        pthread_mutex_unlock(&metrics.snap_lock);
        free(old);
}

void metrics_tick(void) {
        double now;
        uint64_t sig;
        bool changed;

        if (!metrics.enabled)
                return;
        now = mono_s();
        sig = metrics_state_sig();
        changed = sig != metrics.state_sig;
        if (!changed && now < metrics.next_render && now < metrics.next_write)
                return;
        metrics.state_sig = sig;
        metrics.next_render = now + METRICS_RENDER_S;
        if (changed || now >= metrics.next_write) {
                metrics.next_write = now + config_settings()->metrics_interval;
                metrics_refresh(true, true);
        } else
                metrics_refresh(true, false);
}

#if HAVE_MHD
static struct MHD_Response *metrics_text_response(const char *text) {
        struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(text), (void *) text, MHD_RESPMEM_PERSISTENT);

        if (resp)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
        return resp;
}

/* The HTTP thread: GET (or HEAD) /metrics gets the snapshot; another path 404, another method 405. */
static enum MHD_Result metrics_answer(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                      const char *version, const char *upload_data, size_t *upload_size,
                                      void **req_cls) {
        struct MHD_Response *resp;
        enum MHD_Result ret;
        unsigned status;

        if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
                status = MHD_HTTP_METHOD_NOT_ALLOWED;
                resp = metrics_text_response("Method not allowed: only GET /metrics is served.\n");
                if (resp)
                        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
        } else if (strcmp(url, "/metrics") != 0) {
                status = MHD_HTTP_NOT_FOUND;
                resp = metrics_text_response("Not found: the metrics are at /metrics.\n");
        } else {
                status = MHD_HTTP_OK;
                pthread_mutex_lock(&metrics.snap_lock);
                resp = metrics.snap ? MHD_create_response_from_buffer(metrics.snap_len, metrics.snap, MHD_RESPMEM_MUST_COPY)
                                    : NULL;
                pthread_mutex_unlock(&metrics.snap_lock);
                if (resp)
                        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, METRICS_CONTENT_TYPE);
        }
        if (!resp)
                return MHD_NO;
        ret = MHD_queue_response(conn, status, resp);
        MHD_destroy_response(resp);
        return ret;
}

/* libmicrohttpd's messages (a failed bind, a refused connection) into the daemon's log. */
static void metrics_http_log(void *cls, const char *fmt, va_list ap) {
        char buf[512];
        size_t n;

        vsnprintf(buf, sizeof(buf), fmt, ap);
        n = strlen(buf);
        while (n > 0 && buf[n - 1] == '\n')
                buf[--n] = 0;
        log_warning("metrics-listen %s: %s", metrics.listen, buf);
}

static int metrics_http_start(const char *listen) {
        struct sockaddr_storage ss;
        unsigned ss_len = 0;
        unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG;

        if (conffile_listen_parse(listen, &ss, &ss_len) < 0) {
                log_error("metrics-listen %s: not a numeric ADDRESS:PORT", listen);
                return -EINVAL;
        }
        if (ss.ss_family == AF_INET6)
                flags |= MHD_USE_IPv6;
        errno = 0;
        /* The logger first: libmicrohttpd logs with its own until it reads that option. */
        metrics.httpd = MHD_start_daemon(flags, 0, NULL, NULL, metrics_answer, NULL,
                                         MHD_OPTION_EXTERNAL_LOGGER, metrics_http_log, NULL,
                                         MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &ss,
                                         MHD_OPTION_CONNECTION_LIMIT, (unsigned) METRICS_HTTP_CONNECTIONS,
                                         MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned) METRICS_HTTP_PER_IP,
                                         MHD_OPTION_CONNECTION_TIMEOUT, (unsigned) METRICS_HTTP_TIMEOUT_S,
                                         MHD_OPTION_END);
        if (!metrics.httpd) {
                int e = errno ? errno : EADDRNOTAVAIL;

                log_error("metrics-listen %s: cannot serve the metrics: %s", listen, strerror(e));
                return -e;
        }
        log_info("metrics at http://%s/metrics", listen);
        return 0;
}
#else
static int metrics_http_start(const char *listen) {
        log_error("metrics-listen %s: this wiped was built without libmicrohttpd (--disable-metrics-http): "
                  "use metrics-textfile", listen);
        return -EOPNOTSUPP;
}
#endif

static int metrics_textfile_open(const char *path) {
        _cleanup_free_ char *dir = strdup(path), *base = strdup(path);

        if (!dir || !base)
                return -ENOMEM;
        metrics.text_dirfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (metrics.text_dirfd < 0) {
                int e = errno;

                log_error("metrics-textfile %s: cannot open its directory: %s", path, strerror(e));
                return -e;
        }
        metrics.text_name = strdup(basename(base));
        metrics.textfile = strdup(path);
        if (!metrics.text_name || !metrics.textfile)
                return -ENOMEM;
        log_info("metrics in %s", path);
        return 0;
}

int metrics_start(struct pool *pool) {
        const struct conffile *s = config_settings();
        int r;

        if (!s->metrics_listen && !s->metrics_textfile)
                return 0;
        metrics.start_time = real_s();
        metrics.threads = pool_threads(pool);
        metrics.buffers = pool_buffers(pool);
        metrics.io_size = pool_io_size(pool);
        metrics.buffer_bytes = pool_memory(pool);
        metrics.enabled = true;
        if (s->metrics_textfile) {
                r = metrics_textfile_open(s->metrics_textfile);
                if (r < 0)
                        goto fail;
        }
        /* The first snapshot (and textfile) before the first scrape can come. */
        metrics.state_sig = metrics_state_sig();
        metrics.next_render = mono_s() + METRICS_RENDER_S;
        metrics.next_write = mono_s() + s->metrics_interval;
        metrics_refresh(true, true);
        if (s->metrics_listen) {
                metrics.listen = strdup(s->metrics_listen);
                if (!metrics.listen) {
                        r = -ENOMEM;
                        goto fail;
                }
                r = metrics_http_start(s->metrics_listen);
                if (r < 0)
                        goto fail;
        }
        return 0;

fail:
        if (r == -ENOMEM)
                log_error("metrics: out of memory");
        metrics_stop();
        return r;
}

void metrics_stop(void) {
        if (!metrics.enabled)
                return;
#if HAVE_MHD
        if (metrics.httpd)
                MHD_stop_daemon(metrics.httpd);
        metrics.httpd = NULL;
#endif
        /* node_exporter exports a textfile for as long as it is there: leave the jobs as they were
         * left, and wiped_up 0, which says the daemon is not running (rather than a last 1 that
         * would say it is, or no file, which says nothing). */
        if (metrics.textfile && metrics.text_dirfd >= 0)
                metrics_refresh(false, true);
        if (metrics.text_dirfd >= 0)
                close(metrics.text_dirfd);
        metrics.text_dirfd = -1;
        free(metrics.textfile);
        free(metrics.text_name);
        free(metrics.listen);
        metrics.textfile = metrics.text_name = metrics.listen = NULL;
        pthread_mutex_lock(&metrics.snap_lock);
        free(metrics.snap);
        metrics.snap = NULL;
        metrics.snap_len = 0;
        pthread_mutex_unlock(&metrics.snap_lock);
        metrics.enabled = false;
}
