/* Jobs on disk, on the main thread: the state directory, a job's history and record (written
 * when it changed), loading the records at start (corrupt ones moved aside, unfinished ones
 * resumed), forgetting jobs and pruning old ones. The record's format is state.c's. */
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
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "cleanup.h"
#include "clock.h"
#include "daemon-config.h"
#include "daemon.h"
#include "job-private.h"
#include "sign.h"

static char *jobs_state_dir;    /* the state directory; NULL: nothing is kept */
static char *jobs_dir;
char *reports_dir;
EVP_PKEY *host_key;             /* signs reports */
static struct job *graveyard;   /* forgotten jobs, freed once nothing can look at them */
static double prune_next;       /* CLOCK_MONOTONIC of the next look at old history */

int job_event_add(struct job *job, enum job_event_kind kind, const char *reason, uint64_t bytes_done) {
        unsigned si = atomic_load(&job->stage_index);
        const struct stage *st = si < job->n_stages ? &job->stages[si] : NULL;
        struct job_event *h;

        /* A job that keeps being interrupted keeps its first events and its counters. */
        if (job->n_history >= JOB_HISTORY_MAX)
                return 0;
        h = realloc(job->history, (job->n_history + 1) * sizeof(*h));
        if (!h)
                return -ENOMEM;
        job->history = h;
        h[job->n_history] = (struct job_event) {
                .kind = kind,
                .at = real_s(),
                .node = job->info.node ? strdup(job->info.node) : NULL,
                .reason = reason ? strdup(reason) : NULL,
                .pass = st ? st->pass + 1 : job->n_passes,
                .phase = kind == JOB_EVENT_ENDED || !st ? -1 : (int) st->kind,
                .bytes_done = bytes_done,
        };
        job->n_history++;
        return 0;
}

/* The highest job id named by a file in dir (ID.json, ID.json.corrupt...), so that no new job reuses it. */
static void ids_above(const char *dir) {
        DIR *d = opendir(dir);
        struct dirent *e;

        if (!d)
                return;
        while ((e = readdir(d))) {
                char *end;
                unsigned long long id;

                if (e->d_name[0] < '0' || e->d_name[0] > '9')
                        continue;
                id = strtoull(e->d_name, &end, 10);
                if (strncmp(end, ".json", 5) == 0 && id >= jobs_next_id && id < UINT64_MAX - 1)
                        jobs_next_id = id + 1;
        }
        closedir(d);
}

int job_set_state_dir(const char *dir) {
        bool created = false;
        char id[33];
        int r;

        free(jobs_state_dir);
        free(jobs_dir);
        free(reports_dir);
        jobs_state_dir = jobs_dir = reports_dir = NULL;
        EVP_PKEY_free(host_key);
        host_key = NULL;
        if (!dir)
                return 0;
        if (!(jobs_state_dir = strdup(dir)) || asprintf(&jobs_dir, "%s/jobs", dir) < 0 ||
            asprintf(&reports_dir, "%s/reports", dir) < 0) {
                jobs_dir = reports_dir = NULL;
                return -ENOMEM;
        }
        if ((mkdir(jobs_dir, 0700) < 0 && errno != EEXIST) || (mkdir(reports_dir, 0700) < 0 && errno != EEXIST)) {
                r = -errno;
                log_error("%s: cannot create its jobs/ and reports/: %s", dir, strerror(-r));
                return r;
        }
        r = sign_key_load_or_create(dir, &host_key, &created);
        if (r < 0) {
                log_error("%s/host-key.pem: cannot load or create the key that signs reports: %s", dir, strerror(-r));
                return r;
        }
        if (sign_key_id(host_key, id) == 0)
                log_info("%s host key %s/host-key.pem: ed25519 %s", created ? "created" : "loaded", dir, id);
        /* New ids follow the saved ones, so that a record or report is never another job's. */
        ids_above(jobs_dir);
        ids_above(reports_dir);
        return 0;
}

/* Write the job's record if it changed: main thread. Failures keep the job as it is in memory and
 * are retried; what was saved before stays. */
void job_persist(struct job *job, double now) {
        _cleanup_json_ struct json_object *rec = NULL;
        _cleanup_free_ char *text = NULL;
        char name[32];
        uint64_t gen;
        size_t len;
        int r;

        if (!jobs_dir || job->forgotten_at > 0 || now < job->persist_retry)
                return;
        pthread_mutex_lock(&job->lock);
        if (!job->dirty) {
                pthread_mutex_unlock(&job->lock);
                return;
        }
        job->dirty = false;
        gen = ++job->persist_started;
        pthread_mutex_unlock(&job->lock);
        rec = state_record_json(job);
        text = rec ? state_record_text(rec, &len) : NULL;
        state_record_cleanse(rec);
        if (text) {
                snprintf(name, sizeof(name), "%" PRIu64 ".json", job->id);
                r = state_write_atomic(jobs_dir, name, text, len);
                OPENSSL_cleanse(text, len);
        } else
                r = -ENOMEM;
        if (r == 0) {
                pthread_mutex_lock(&job->lock);
                if (gen > job->persist_done)
                        job->persist_done = gen;
                pthread_mutex_unlock(&job->lock);
                if (job->persist_retry > 0)
                        log_info("job %" PRIu64 ": %s/%s: saved again", job->id, jobs_dir, name);
                job->persist_retry = 0;
                return;
        }
        /* Once per failure streak; the next try in 5 s. */
        if (job->persist_retry == 0)
                log_error("job %" PRIu64 ": %s: cannot save its record in %s: %s (the job goes on; its last saved "
                          "record stays)", job->id, job->info.node, jobs_dir, strerror(-r));
        job->persist_retry = now + JOB_WRITE_RETRY;
        pthread_mutex_lock(&job->lock);
        job->dirty = true;
        pthread_mutex_unlock(&job->lock);
}

int job_record_wait(struct job *job, double timeout_s) {
        double until = mono_s() + timeout_s;
        uint64_t target;

        /* jobs_dir is set once at start-up, before any job runs. */
        if (!jobs_dir)
                return 0;
        pthread_mutex_lock(&job->lock);
        job->dirty = true;
        /* A write that starts from now on takes the state as it is now. */
        target = job->persist_started + 1;
        pthread_mutex_unlock(&job->lock);
        for (;;) {
                bool done;

                pthread_mutex_lock(&job->lock);
                done = job->persist_done >= target;
                pthread_mutex_unlock(&job->lock);
                if (done)
                        return 0;
                /* Stopping: the main thread waits for us and writes nothing meanwhile. */
                if (atomic_load(&job->abort))
                        return -EINTR;
                if (mono_s() > until)
                        return -ETIMEDOUT;
                usleep(20000);
        }
}

/* Whether the job's signed report is to be written (again): it ended, and its report is older
 * than its end or than its latest verification run. */
bool job_report_due(struct job *j) {
        enum job_state s;
        size_t runs;

        pthread_mutex_lock(&j->lock);
        s = j->state;
        runs = j->n_runs;
        pthread_mutex_unlock(&j->lock);
        return state_ended(s) && atomic_load(&j->settled) &&
               (!j->reported || j->reported_end != j->ended_at || j->reported_runs != runs);
}

void job_persist_all(void) {
        for (struct job *j = jobs_head; j; j = j->next) {
                j->persist_retry = 0;
                if (job_report_due(j))
                        job_write_report(j, NULL);
                job_persist(j, mono_s());
        }
}

int job_forget(struct job *job) {
        enum job_state s = job_get_state(job);
        _cleanup_free_ char *path = NULL;
        bool queued;

        int r;

        pthread_mutex_lock(&job->lock);
        queued = job->ckpt_queued;
        pthread_mutex_unlock(&job->lock);
        if (!(job_state_is_final(s) || s == JOB_PAUSED) || !atomic_load(&job->settled) || queued ||
            atomic_load(&job->active_chunks) > 0)
                return -EBUSY;
        /* A stopped job is given up: it ends cancelled, so that its partly wiped device has a signed
         * record of how far it got. */
        if (s == JOB_PAUSED || s == JOB_INTERRUPTED) {
                job_end_stopped(job, JOB_CANCELLED, 0, s == JOB_PAUSED ? "forgotten while paused" :
                                "forgotten while interrupted");
                s = JOB_CANCELLED;
        }
        /* Its report outlives it: written now if the next tick was to write it. */
        if (job_report_due(job)) {
                r = job_write_report(job, NULL);
                if (r < 0)
                        return r;
        }
        if (jobs_dir && asprintf(&path, "%s/%" PRIu64 ".json", jobs_dir, job->id) >= 0 && unlink(path) < 0 &&
            errno != ENOENT)
                return -errno;
        /* Out of the table; freed a little later, once no thread can still be looking at it. */
        for (struct job **p = &jobs_head; *p; p = &(*p)->next)
                if (*p == job) {
                        *p = job->next;
                        break;
                }
        jobs_tail = NULL;
        for (struct job *j = jobs_head; j; j = j->next)
                jobs_tail = j;
        pool_remove_job(job->pool, job);
        hook_job_forgotten(job->id);
        job->forgotten_at = mono_s();
        job->next = graveyard;
        graveyard = job;
        log_info("job %" PRIu64 ": %s: forgotten (%s)%s%s", job->id, job->info.node, job_state_name(s),
                 job->reported ? "; its report stays in " : "", job->reported ? job->report_file : "");
        return 0;
}

void graveyard_sweep(double now, bool all) {
        for (struct job **p = &graveyard; *p;) {
                struct job *j = *p;

                /* Workers and the flusher let go of a job microseconds after it settled. */
                if (all || (now - j->forgotten_at > JOB_FORGOTTEN_GRACE && atomic_load(&j->active_chunks) == 0)) {
                        *p = j->next;
                        /* After every thread's last touch (see job_unit_put()). */
                        pthread_mutex_lock(&j->lock);
                        pthread_mutex_unlock(&j->lock);
                        log_debug("job %" PRIu64 ": freed", j->id);
                        job_free(j);
                } else
                        p = &j->next;
        }
}

/* Forget ended jobs older than history-max-age (their reports stay). */
void job_prune(double mono) {
        unsigned days = config_settings()->history_max_age_days;
        double limit = real_s() - (double) days * 86400.0;

        if (days == 0 || mono < prune_next)
                return;
        prune_next = mono + JOB_PRUNE_INTERVAL;
        for (struct job *j = jobs_head, *next; j; j = next) {
                enum job_state s = job_get_state(j);

                next = j->next;
                if (state_ended(s) && j->ended_at > 0 && j->ended_at < limit &&
                    j->reported && job_forget(j) == 0)
                        log_info("job %" PRIu64 ": older than history-max-age (%u days)", j->id, days);
        }
}

/* Move a record that cannot be used out of the way: NAME.corrupt (or .corrupt.N). */
static void record_move_aside(int dfd, const char *name, const char *why) {
        char to[256];

        for (int i = 0; i < 100; i++) {
                if (i == 0)
                        snprintf(to, sizeof(to), "%s.corrupt", name);
                else
                        snprintf(to, sizeof(to), "%s.corrupt.%d", name, i);
                if (renameat2(dfd, name, dfd, to, RENAME_NOREPLACE) == 0) {
                        (void) fsync(dfd);
                        log_job(LOG_ERR, LOG_EVENT_STATE_CORRUPT, 0, NULL, NULL,
                                "%s/%s: corrupt job record (%s): moved aside to %s/%s", jobs_dir, name, why, jobs_dir, to);
                        return;
                }
                if (errno != EEXIST)
                        break;
        }
        log_error("%s/%s: corrupt job record (%s), and it cannot be moved aside: %s: ignored", jobs_dir, name, why,
                  strerror(errno));
}

/* A job from a checked record: everything is planned again from what it says, and must agree. */
void job_destroy(struct job *job) {
        job_free(job);
}

struct job *job_from_record(struct json_object *rec, struct pool *pool, char *err, size_t err_len) {
        struct job *job = calloc(1, sizeof(*job));
        struct chunk_plan plan;
        int r;

        if (!job) {
                snprintf(err, err_len, "out of memory");
                return NULL;
        }
        job->fd = -1;
        job->pool = pool;
        pthread_mutex_init(&job->lock, NULL);
        r = state_record_parse(rec, job, err, err_len);
        for (unsigned i = 0; r == 0 && i < job->n_passes; i++)
                if (job->passes[i].key_len)
                        job->passes[i].key_serial = job_key_serial_next();
        if (r == 0 && (job->id == 0 || job_find(job->id))) {
                snprintf(err, err_len, "job id %" PRIu64 " is not new", job->id);
                r = -EBADMSG;
        }
        if (r == 0 && (chunk_plan_init(&plan, job->info.size, job->plan.sector, job->plan.chunk_size, job->plan.io_size) < 0 ||
                       plan.chunk_size != job->plan.chunk_size || job->info.size == 0)) {
                snprintf(err, err_len, "its chunk plan does not fit its device");
                r = -EBADMSG;
        }
        if (r == 0) {
                job->plan = plan;
                /* The buffers may be smaller now: I/Os shrink to fit, in whole sectors. */
                if (job->piece > pool_io_size(pool))
                        job->piece = pool_io_size(pool) / plan.sector * plan.sector;
                if (job->piece == 0 || job->piece % plan.sector) {
                        snprintf(err, err_len, "field \"io_size\" is wrong");
                        r = -EBADMSG;
                }
        }
        if (r == 0 && job->verify == VERIFY_SAMPLE && (r = job_plan_sample(job, job->sample.percent, true, job->sample.seed)) < 0)
                snprintf(err, err_len, "its sample cannot be planned again: %s", strerror(-r));
        if (r == 0 && (r = job_plan_stages(job)) == 0 && (r = job_alloc_bits(job)) == 0) {
                if (job->ckpt.stage > job->n_stages) {
                        snprintf(err, err_len, "its checkpoint's stage does not exist");
                        r = -EBADMSG;
                } else if (job->ckpt.stage < job->n_stages &&
                           state_record_bits(rec, job->ckpt.bits, stage_units(job, &job->stages[job->ckpt.stage])) < 0) {
                        snprintf(err, err_len, "its checkpoint's units are out of range");
                        r = -EBADMSG;
                }
        } else if (r == -ENOMEM)
                snprintf(err, err_len, "out of memory");
        if (r < 0) {
                job_free(job);
                return NULL;
        }
        if (job->queue_depth == 0)
                job->queue_depth = pool_device_queue_depth(pool, &job->info);
        job->max_holders = job->info.rotational ? 1 : WIPED_THREADS_MAX;
        job->run_verify = job->verify;
        job->run_percent = job->verify_percent;
        job->abort_state = JOB_CANCELLED;
        atomic_store(&job->stage_index, job->ckpt.stage < job->n_stages ? job->ckpt.stage : job->n_stages - 1);
        atomic_store(&job->bytes_done, job->ckpt.bytes_done);
        atomic_store(&job->bytes_written, job->ckpt.bytes_written);
        atomic_store(&job->finished, true);
        atomic_store(&job->settled, true);
        job->started_mono = job->sample_mono = mono_s();
        job->reported_end = job->reported ? job->ended_at : -1;
        job->reported_runs = job->n_runs;
        if (job->state == JOB_RUNNING || job->state == JOB_FLUSHING) {
                char when[64] = "never";
                time_t t = (time_t) job->ckpt.at;
                struct tm tm;
                char reason[192];

                /* It never saw the end of its run: killed, crashed or the power went. */
                if (job->ckpt.at > 0 && localtime_r(&t, &tm))
                        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
                snprintf(reason, sizeof(reason), "the daemon stopped without saving (killed, crashed or power lost); "
                         "last checkpoint %s", when);
                job->state = JOB_INTERRUPTED;
                job->ended_at = job->ckpt.at;
                free(job->reason);
                job->reason = strdup(reason);
                job->interruptions++;
                (void) job_event_add(job, JOB_EVENT_INTERRUPTED, reason, job->ckpt.bytes_done);
                job->dirty = true;
        }
        job->wipe_state = job->state;
        return job;
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return x < y ? -1 : x > y;
}

void job_load_all(struct pool *pool) {
        _cleanup_free_ uint64_t *ids = NULL;
        _cleanup_close_ int dfd = -1;
        size_t n = 0, cap = 0;
        unsigned loaded = 0, resuming = 0;
        struct dirent *e;
        DIR *d;

        if (!jobs_dir)
                return;
        dfd = open(jobs_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
                int dup = fcntl(dfd, F_DUPFD_CLOEXEC, 0);

                d = dup >= 0 ? fdopendir(dup) : NULL;
                if (!d && dup >= 0)
                        close(dup);
        } else
                d = NULL;
        if (!d) {
                log_error("%s: cannot read: %s: no saved job is loaded", jobs_dir, strerror(errno));
                return;
        }
        while ((e = readdir(d))) {
                char *end;
                unsigned long long id;

                if (e->d_name[0] == '.' && strstr(e->d_name, ".tmp")) {
                        /* A write that a crash cut short: the record before it is the one in force. */
                        (void) unlinkat(dfd, e->d_name, 0);
                        continue;
                }
                if (e->d_name[0] < '1' || e->d_name[0] > '9')
                        continue;
                id = strtoull(e->d_name, &end, 10);
                if (strcmp(end, ".json") != 0)
                        continue;
                if (n == cap) {
                        uint64_t *a = realloc(ids, (cap = cap ? 2 * cap : 64) * sizeof(*a));

                        if (!a)
                                break;
                        ids = a;
                }
                ids[n++] = id;
        }
        closedir(d);
        if (n > 1)
                qsort(ids, n, sizeof(*ids), cmp_u64);
        for (size_t i = 0; i < n; i++) {
                _cleanup_json_ struct json_object *rec = NULL;
                struct job *job;
                char name[32], err[256];
                int r;

                snprintf(name, sizeof(name), "%" PRIu64 ".json", ids[i]);
                r = state_record_read(dfd, name, &rec, err, sizeof(err));
                if (r == -ENOMEM || r == -EIO || r == -EACCES || r == -EMFILE) {
                        log_error("%s/%s: cannot read: %s: skipped", jobs_dir, name, err);
                        continue;
                }
                job = r == 0 ? job_from_record(rec, pool, err, sizeof(err)) : NULL;
                if (job && job->id != ids[i]) {
                        snprintf(err, sizeof(err), "it names job %" PRIu64, job->id);
                        job_free(job);
                        job = NULL;
                }
                if (!job) {
                        record_move_aside(dfd, name, err);
                        continue;
                }
                if (job->id >= jobs_next_id)
                        jobs_next_id = job->id + 1;
                if (jobs_tail)
                        jobs_tail->next = job;
                else
                        jobs_head = job;
                jobs_tail = job;
                loaded++;
                if (job->state == JOB_INTERRUPTED && !config_settings()->resume_manual) {
                        /* Tried at the first tick, and again for a while if the device is busy. */
                        job->resume_until = job->started_mono + 10.0;
                        resuming++;
                }
        }
        if (loaded)
                log_info("%u saved job%s loaded from %s; %u to resume", loaded, loaded == 1 ? "" : "s", jobs_dir, resuming);
}
