/* The job table and a job's life: submit, stages (write each pass, flush, verify), progress,
 * cancel, failure and end, and a later re-verification.
 *
 * The table and the rate fields belong to the main thread. Workers touch a job through its
 * atomics, job_claim_unit() (under the pool lock), job_verify_mismatch(), job_fail() and
 * job_release_chunk(); the state fields are under job->lock. A job's stage changes only when no
 * unit of it is held: the worker that completes the last unit of a stage flushes or judges it
 * and then moves the job on, under the pool lock. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <linux/fs.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "cleanup.h"
#include "daemon.h"
#include "protocol.h"
#include "units.h"

#define SAMPLE_EXTENTS_PER_UNIT 16      /* sample extents one worker claims at a time */

static struct job *jobs_head, *jobs_tail;  /* oldest first */
static uint64_t jobs_next_id = 1;

static const char *const state_names[_JOB_STATE_MAX] = {
        [JOB_RUNNING] = "running",
        [JOB_FLUSHING] = "flushing",
        [JOB_DONE] = "done",
        [JOB_FAILED] = "failed",
        [JOB_CANCELLED] = "cancelled",
        [JOB_INTERRUPTED] = "interrupted",
};

static const char *const verify_names[_VERIFY_MODE_MAX] = {
        [VERIFY_NONE] = "none",
        [VERIFY_SAMPLE] = "sample",
        [VERIFY_LAST] = "last",
        [VERIFY_ALL] = "all",
};

const char *job_state_name(enum job_state s) {
        return s < _JOB_STATE_MAX ? state_names[s] : "unknown";
}

bool job_state_is_final(enum job_state s) {
        return s == JOB_DONE || s == JOB_FAILED || s == JOB_CANCELLED || s == JOB_INTERRUPTED;
}

const char *verify_mode_name(enum verify_mode m) {
        return m < _VERIFY_MODE_MAX ? verify_names[m] : "unknown";
}

int verify_mode_parse(const char *s, enum verify_mode *mode, double *percent) {
        char *end;
        double p;

        if (!s)
                return -EINVAL;
        *percent = 0;
        if (strncmp(s, "sample=", 7) == 0) {
                errno = 0;
                p = strtod(s + 7, &end);
                if (errno || end == s + 7 || *end || !(p > 0.0 && p <= 100.0))
                        return -EINVAL;
                *mode = VERIFY_SAMPLE;
                *percent = p;
                return 0;
        }
        for (int m = 0; m < _VERIFY_MODE_MAX; m++)
                if (strcmp(s, verify_names[m]) == 0) {
                        *mode = m;
                        if (m == VERIFY_SAMPLE)
                                *percent = SAMPLE_PERCENT_DEFAULT;
                        return 0;
                }
        return -EINVAL;
}

static double now_realtime(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now_monotonic(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

struct job *job_find(uint64_t id) {
        for (struct job *j = jobs_head; j; j = j->next)
                if (j->id == id)
                        return j;
        return NULL;
}

struct job *job_first(void) {
        return jobs_head;
}

enum job_state job_get_state(struct job *job) {
        enum job_state s;

        pthread_mutex_lock(&job->lock);
        s = job->state;
        pthread_mutex_unlock(&job->lock);
        return s;
}

struct job *job_find_active_rdev(dev_t rdev) {
        for (struct job *j = jobs_head; j; j = j->next)
                if (j->info.rdev == rdev && !job_state_is_final(job_get_state(j)))
                        return j;
        return NULL;
}

static void job_free(struct job *job) {
        if (!job)
                return;
        if (job->fd >= 0)
                close(job->fd);
        for (unsigned i = 0; job->passes && i < job->n_passes; i++)
                OPENSSL_cleanse(job->passes[i].key, sizeof(job->passes[i].key));
        free(job->passes);
        free(job->stages);
        free(job->runs);
        free(job->method);
        sample_plan_done(&job->sample);
        device_identity_done(&job->info);
        device_signatures_free(job->sigs_before, job->n_sigs_before);
        device_signatures_free(job->sigs_after, job->n_sigs_after);
        pthread_mutex_destroy(&job->lock);
        free(job->device);
        free(job->error_msg);
        free(job);
}

void job_free_all(void) {
        while (jobs_head) {
                struct job *j = jobs_head;

                jobs_head = j->next;
                job_free(j);
        }
        jobs_tail = NULL;
        job_set_state_dir(NULL);
}

/* Bytes a stage writes or reads. */
static uint64_t stage_bytes(const struct job *job, const struct stage *st) {
        return st->kind == STAGE_VERIFY && st->sampled ? job->sample.bytes : job->info.size;
}

/* Plan the sample for a verification; a random seed unless one is given. 0 or -errno. */
static int job_plan_sample(struct job *job, double percent, bool have_seed, uint64_t seed) {
        struct sample_plan p;
        int r;

        if (!have_seed) {
                if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
                        return errno ? -errno : -EIO;
                /* Below 2^53, so that JSON readers that hold numbers as doubles (jq) keep it exact. */
                seed &= (1ULL << 53) - 1;
        }
        /* Sample whole physical sectors where the device has them larger than logical ones. */
        r = sample_plan_make(&p, job->info.size, job->plan.sector, percent, seed);
        if (r < 0)
                return r;
        sample_plan_done(&job->sample);
        job->sample = p;
        return 0;
}

/* The steps of a wipe: write every pass; read back every pass (all), the last pass (last), or a
 * sample of the last pass (sample). Sets stages and work_total. 0 or -ENOMEM. */
static int job_plan_stages(struct job *job) {
        unsigned n = 0;

        free(job->stages);
        job->stages = calloc(2 * job->n_passes + 1, sizeof(*job->stages));
        if (!job->stages)
                return -ENOMEM;
        for (unsigned p = 0; p < job->n_passes; p++) {
                job->stages[n++] = (struct stage) { .kind = STAGE_WRITE, .pass = p };
                if (job->verify == VERIFY_ALL ||
                    (p + 1 == job->n_passes && (job->verify == VERIFY_LAST || job->verify == VERIFY_SAMPLE)))
                        job->stages[n++] = (struct stage) { .kind = STAGE_VERIFY, .pass = p,
                                                            .sampled = job->verify == VERIFY_SAMPLE, .mode = job->verify };
        }
        job->n_stages = n;
        job->work_total = 0;
        for (unsigned i = 0; i < n; i++)
                job->work_total += stage_bytes(job, &job->stages[i]);
        return 0;
}

/* Make stage i the current one (no unit of the job is held). */
static void job_stage_enter(struct job *job, unsigned i) {
        const struct stage *st = &job->stages[i];

        atomic_store(&job->stage_index, i);
        atomic_store(&job->stage_units, st->kind == STAGE_VERIFY && st->sampled ?
                     (job->sample.n_extents + SAMPLE_EXTENTS_PER_UNIT - 1) / SAMPLE_EXTENTS_PER_UNIT :
                     job->plan.n_chunks);
        atomic_store(&job->next_unit, 0);
        atomic_store(&job->units_done, 0);
        if (st->kind == STAGE_VERIFY) {
                pthread_mutex_lock(&job->lock);
                job->current = (struct verify_result) {
                        .mode = st->mode,
                        .percent = st->sampled ? job->sample.percent : 100.0,
                        .seed = st->sampled ? job->sample.seed : 0,
                        .subsections = st->sampled ? job->sample.subsections : 0,
                        .coverage = stage_bytes(job, st),
                        .started = now_realtime(),
                };
                pthread_mutex_unlock(&job->lock);
        }
}

static void job_stage_next(struct job *job) {
        job_stage_enter(job, atomic_load(&job->stage_index) + 1);
}

bool job_claim_unit(struct job *job, struct job_unit *u) {
        const struct stage *st;
        uint64_t c, off, len;

        if (atomic_load(&job->abort))
                return false;
        c = atomic_fetch_add(&job->next_unit, 1);
        if (c >= atomic_load(&job->stage_units))
                return false;
        st = &job->stages[atomic_load(&job->stage_index)];
        *u = (struct job_unit) {
                .job = job,
                .run = atomic_load(&job->run),
                .kind = st->kind,
                .pass = &job->passes[st->pass],
                .pass_index = st->pass,
        };
        if (st->kind == STAGE_VERIFY && st->sampled) {
                size_t first = c * SAMPLE_EXTENTS_PER_UNIT;

                u->extents = job->sample.extents + first;
                u->n_extents = job->sample.n_extents - first < SAMPLE_EXTENTS_PER_UNIT ?
                        job->sample.n_extents - first : SAMPLE_EXTENTS_PER_UNIT;
        } else {
                chunk_range(&job->plan, c, &off, &len);
                u->one = (struct extent) { off, len };
                u->extents = &u->one;
                u->n_extents = 1;
        }
        return true;
}

/* Create a job for a probed device (takes the identity and signatures of the probe). Returns
 * NULL with *r on ENOMEM or when keys or plans cannot be had. */
static struct job *job_new(const char *device, struct device_probe *probe, const struct job_request *rq,
                           uint32_t io_size, struct pool *pool, int *r) {
        struct job *job = calloc(1, sizeof(*job));
        uint32_t unit;

        if (!job) {
                *r = -ENOMEM;
                return NULL;
        }
        job->fd = -1;
        job->pool = pool;
        job->info = probe->id;
        probe->id = (struct device_identity) {};
        job->sigs_before = TAKE_PTR(probe->sigs);
        job->n_sigs_before = probe->n_sigs;
        probe->n_sigs = 0;
        pthread_mutex_init(&job->lock, NULL);
        job->device = strdup(device);
        job->method = strdup(rq->method);
        job->cipher = keystream_cipher_resolve(rq->cipher);
        job->verify = job->run_verify = rq->verify;
        job->verify_percent = job->run_percent = rq->verify_percent;
        job->n_passes = (unsigned) rq->n_passes;
        job->passes = calloc(rq->n_passes, sizeof(*job->passes));
        if (!job->device || !job->method || !job->passes) {
                *r = -ENOMEM;
                job_free(job);
                return NULL;
        }
        for (unsigned i = 0; i < job->n_passes; i++) {
                struct job_pass *p = &job->passes[i];

                p->pass = rq->passes[i];
                if (p->pass.kind != PASS_RANDOM)
                        continue;
                /* Every random pass has its own key. */
                p->key_len = keystream_key_size(job->cipher);
                if (getrandom(p->key, p->key_len, 0) != (ssize_t) p->key_len) {
                        *r = errno ? -errno : -EIO;
                        job_free(job);
                        return NULL;
                }
        }
        /* Writes are whole physical sectors where the device has larger ones than logical. */
        unit = job->info.logical_sector;
        if (job->info.physical_sector > unit && job->info.physical_sector <= 65536 &&
            io_size % job->info.physical_sector == 0 && job->info.size % job->info.physical_sector == 0)
                unit = job->info.physical_sector;
        *r = chunk_plan_init(&job->plan, job->info.size, unit, 0, io_size);
        /* Every I/O is whole sectors of the plan and fits the pool's buffers; where the device
         * names an optimal I/O size (a RAID stripe) that fits, a whole number of those. */
        job->piece = (rq->io_size ? rq->io_size : io_size) / unit * unit;
        if (!rq->io_size && job->info.optimal_io > unit && job->info.optimal_io <= job->piece &&
            job->info.optimal_io % unit == 0)
                job->piece = job->piece / job->info.optimal_io * job->info.optimal_io;
        if (*r == 0 && job->piece == 0)
                *r = -EINVAL;
        job->queue_depth = rq->queue_depth ? rq->queue_depth : pool_device_queue_depth(pool, &job->info);
        /* A disk with heads is written in order: one region at a time. */
        job->max_holders = job->info.rotational ? 1 : WIPED_THREADS_MAX;
        rate_init(&job->rate, rq->max_rate);
        if (*r == 0 && job->verify == VERIFY_SAMPLE)
                *r = job_plan_sample(job, rq->verify_percent, rq->have_seed, rq->seed);
        if (*r == 0)
                *r = job_plan_stages(job);
        if (*r < 0) {
                job_free(job);
                return NULL;
        }
        job->state = JOB_RUNNING;
        job->abort_state = JOB_CANCELLED;
        job_stage_enter(job, 0);
        return job;
}

int job_submit(struct pool *pool, const char *const *devices, size_t n, const struct job_request *rq,
               struct job **ret, char *err, size_t err_len) {
        _cleanup_free_ struct job **made = calloc(n, sizeof(*made));
        double rt = now_realtime(), mono = now_monotonic();
        size_t i;
        int r = 0;

        if (!made)
                return -ENOMEM;

        /* The same device twice (perhaps under two names) is a mistake in the request. */
        for (i = 0; i < n; i++) {
                struct stat a, b;

                if (stat(devices[i], &a) < 0 || !S_ISBLK(a.st_mode))
                        continue;
                for (size_t k = 0; k < i; k++)
                        if (stat(devices[k], &b) == 0 && S_ISBLK(b.st_mode) && a.st_rdev == b.st_rdev) {
                                snprintf(err, err_len, "%s: refusing: named twice in one request (also as %s)",
                                         devices[i], devices[k]);
                                return -EINVAL;
                        }
        }

        for (i = 0; i < n; i++) {
                struct device_probe probe;
                int fd = device_open(devices[i], &probe, err, err_len);

                if (fd < 0) {
                        r = fd;
                        device_probe_done(&probe);
                        break;
                }
                made[i] = job_new(devices[i], &probe, rq, pool_io_size(pool), pool, &r);
                device_probe_done(&probe);
                if (!made[i]) {
                        snprintf(err, err_len, "%s: cannot create job: %s", devices[i], strerror(-r));
                        close(fd);
                        break;
                }
                made[i]->fd = fd;
        }
        if (r < 0) {
                /* All or nothing: nothing was written; release what was opened. */
                for (size_t k = 0; k < i; k++)
                        job_free(made[k]);
                return r;
        }

        for (i = 0; i < n; i++) {
                struct job *job = made[i];

                job->id = jobs_next_id++;
                job->started_at = job->wipe_started = rt;
                job->started_mono = job->sample_mono = mono;
                if (jobs_tail)
                        jobs_tail->next = job;
                else
                        jobs_head = job;
                jobs_tail = job;
                ret[i] = job;
                log_job_event(LOG_INFO, LOG_EVENT_JOB_STARTED, job,
                         "job %" PRIu64 ": %s: started: method %s (%u passes), %s, verify %s, %" PRIu64 " bytes, "
                         "sector %u, %" PRIu64 " chunks of %" PRIu64 " bytes, %u I/Os of %" PRIu32 " bytes in flight%s, "
                         "max rate %" PRIu64 " B/s",
                         job->id, job->info.node, job->method, job->n_passes, keystream_cipher_name(job->cipher),
                         verify_mode_name(job->verify), job->info.size, job->info.logical_sector, job->plan.n_chunks,
                         job->plan.chunk_size, job->queue_depth, job->piece,
                         job->info.rotational ? " (rotational: in order)" : "", job->rate.bps);
                pool_add_job(pool, job);
        }
        return 0;
}

/* End run `run` of the job in state s (once per run; later calls, and calls for an older run,
 * do nothing). Closes the device. */
static void job_finish(struct job *job, enum job_state s, unsigned run) {
        enum verify_mode run_verify;
        bool reverify;
        int fd;
        char b[64];

        pthread_mutex_lock(&job->lock);
        /* Checked under the lock: a later verify bumps the run and clears finished under it too. */
        if (atomic_load(&job->run) != run || atomic_load(&job->finished)) {
                pthread_mutex_unlock(&job->lock);
                return;
        }
        atomic_store(&job->finished, true);
        reverify = job->reverify;
        run_verify = job->run_verify;
        job->state = s;
        job->ended_at = now_realtime();
        if (!reverify) {
                job->wipe_ended = job->ended_at;
                job->wipe_work = atomic_load(&job->bytes_done);
        }
        fd = job->fd;
        job->fd = -1;
        pthread_mutex_unlock(&job->lock);

        /* The old partitions are gone from the disk: let the kernel forget them too (best effort;
         * it fails harmlessly on devices without partitions or with one in use). Outside the
         * lock: status requests must not wait for the device. */
        if (fd >= 0 && s == JOB_DONE && !reverify)
                (void) ioctl(fd, BLKRRPART, 0);
        if (fd >= 0)
                close(fd);
        if (s == JOB_DONE && reverify)
                log_job_event(LOG_INFO, LOG_EVENT_JOB_DONE, job, "job %" PRIu64 ": %s: verified again (%s): passed",
                              job->id, job->info.node, verify_mode_name(run_verify));
        else if (s == JOB_DONE)
                log_job_event(LOG_NOTICE, LOG_EVENT_JOB_DONE, job,
                              "job %" PRIu64 ": %s: done: %s, %u passes written and flushed, verification %s", job->id,
                              job->info.node, units_size(b, sizeof(b), job->info.size), job->n_passes,
                              verify_mode_name(job->verify));
        else
                log_job_event(s == JOB_FAILED ? LOG_ERR : LOG_WARNING,
                              s == JOB_FAILED ? LOG_EVENT_JOB_FAILED :
                              s == JOB_CANCELLED ? LOG_EVENT_JOB_CANCELLED : LOG_EVENT_JOB_INTERRUPTED,
                              job, "job %" PRIu64 ": %s: %s", job->id, job->info.node, job_state_name(s));
}

void job_fail(struct job *job, int error, const char *fmt, ...) {
        char msg[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);

        pthread_mutex_lock(&job->lock);
        if (job->error == 0) {
                job->error = error < 0 ? error : -EIO;
                job->error_msg = strdup(msg);
                job->abort_state = JOB_FAILED;
        }
        pthread_mutex_unlock(&job->lock);
        log_error("job %" PRIu64 ": %s", job->id, msg);
        atomic_store(&job->abort, true);
        if (job->pool)
                pool_wake(job->pool);
}

static void job_end_aborted(struct job *job, unsigned run) {
        enum job_state s;

        pthread_mutex_lock(&job->lock);
        s = job->abort_state;
        pthread_mutex_unlock(&job->lock);
        job_finish(job, s, run);
}

void job_verify_mismatch(struct job *job, uint64_t offset) {
        struct verify_result *r = &job->current;

        pthread_mutex_lock(&job->lock);
        r->mismatched++;
        /* Keep the lowest offsets, ascending: workers report out of order. */
        if (r->n_first < VERIFY_FIRST_MAX || offset < r->first[r->n_first - 1]) {
                unsigned i = r->n_first < VERIFY_FIRST_MAX ? r->n_first++ : VERIFY_FIRST_MAX - 1;

                while (i > 0 && r->first[i - 1] > offset) {
                        r->first[i] = r->first[i - 1];
                        i--;
                }
                r->first[i] = offset;
        }
        pthread_mutex_unlock(&job->lock);
}

/* After the last flush: what a fresh libblkid probe finds on the device now (nothing, we hope). */
static void job_probe_after(struct job *job) {
        struct device_signature *sigs = NULL;
        size_t n = 0;
        char path[64];
        int r;

        /* Through the job's own descriptor: the same device, even if its name moved meanwhile. */
        snprintf(path, sizeof(path), "/proc/self/fd/%d", job->fd);
        r = device_signatures_read(path, &sigs, &n);

        if (r < 0) {
                log_warning("job %" PRIu64 ": %s: cannot probe after the wipe: %s", job->id, job->info.node, strerror(-r));
                return;
        }
        if (n > 0)
                log_warning("job %" PRIu64 ": %s: a probe after the wipe still finds %s", job->id, job->info.node, sigs[0].type);
        pthread_mutex_lock(&job->lock);
        device_signatures_free(job->sigs_after, job->n_sigs_after);
        job->sigs_after = sigs;
        job->n_sigs_after = n;
        job->sigs_checked = true;
        pthread_mutex_unlock(&job->lock);
}

/* The current stage is complete (its last unit is still held): flush a write stage, judge a
 * verify stage. Failures go through job_fail(). */
static void job_stage_end(struct job *job) {
        const struct stage *st = &job->stages[atomic_load(&job->stage_index)];
        struct job_pass *p = &job->passes[st->pass];
        char name[2 * METHOD_PATTERN_MAX + 8];

        if (st->kind == STAGE_WRITE) {
                /* A pass counts only after a flush that followed every write. */
                pthread_mutex_lock(&job->lock);
                job->state = JOB_FLUSHING;
                pthread_mutex_unlock(&job->lock);
                if (fdatasync(job->fd) < 0) {
                        job_fail(job, -errno, "%s: flush after pass %u failed: %s", job->info.node, st->pass + 1,
                                 strerror(errno));
                        return;
                }
                pthread_mutex_lock(&job->lock);
                p->written = true;
                job->state = JOB_RUNNING;
                pthread_mutex_unlock(&job->lock);
                log_job_event(LOG_INFO, LOG_EVENT_PASS_DONE, job,
                              "job %" PRIu64 ": %s: pass %u of %u (%s) written and flushed", job->id, job->info.node,
                         st->pass + 1, job->n_passes, pass_name(&p->pass, name, sizeof(name)));
                return;
        }

        pthread_mutex_lock(&job->lock);
        job->current.ran = true;
        job->current.at = now_realtime();
        p->verified = job->current;
        if (st->pass + 1 == job->n_passes) {
                struct verify_result *v = realloc(job->runs, (job->n_runs + 1) * sizeof(*v));

                if (v) {
                        job->runs = v;
                        job->runs[job->n_runs++] = job->current;
                }
        }
        pthread_mutex_unlock(&job->lock);
        if (p->verified.mismatched > 0) {
                log_job_event(LOG_ERR, LOG_EVENT_VERIFY_FAILED, job,
                              "job %" PRIu64 ": %s: pass %u failed verification (%s): %" PRIu64 " sectors differ",
                              job->id, job->info.node, st->pass + 1, verify_mode_name(p->verified.mode),
                              p->verified.mismatched);
                job_fail(job, -EIO, "%s: verification of pass %u failed: %" PRIu64 " mismatching sector%s, first at offset %" PRIu64,
                         job->info.node, st->pass + 1, p->verified.mismatched, p->verified.mismatched == 1 ? "" : "s",
                         p->verified.first[0]);
        } else
                log_job_event(LOG_INFO, LOG_EVENT_VERIFY_PASSED, job,
                              "job %" PRIu64 ": %s: pass %u verified (%s, %" PRIu64 " bytes compared)", job->id, job->info.node,
                         st->pass + 1, verify_mode_name(p->verified.mode), p->verified.coverage);
}

/* Everything after the last unit of a stage: flush or judge it, then start the next stage or end
 * the job. The caller holds that unit, so a concurrent cancel cannot end the job (and close the
 * device) meanwhile. */
static void job_stage_complete(struct job *job, unsigned run) {
        /* Stopped meanwhile (a shutdown waits for this): the pass does not count, so no flush. */
        if (atomic_load(&job->abort))
                return;
        job_stage_end(job);
        if (atomic_load(&job->abort))
                return;
        if (atomic_load(&job->stage_index) + 1 < job->n_stages) {
                pool_locked(job->pool, job_stage_next, job);
                pool_add_job(job->pool, job);
        } else {
                job_probe_after(job);
                job_finish(job, JOB_DONE, run);
        }
}

/* Give up a unit: the last one of an aborted job ends it. */
static void job_unit_put(struct job *job, unsigned run) {
        if (atomic_fetch_sub(&job->active_chunks, 1) == 1 && atomic_load(&job->abort))
                job_end_aborted(job, run);
}

/* The flusher: one thread that completes stages (a flush waits on the device, for a second or more
 * on a disk with a large cache), so that a worker never stops feeding its other devices for it.
 * Jobs wait in a FIFO; each holds the unit of its stage's end until the flusher is done with it. */
static struct {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        pthread_t thread;
        bool running, stop;
        struct job *head, *tail;
} flusher = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void *flusher_main(void *arg) {
        (void) arg;
        pthread_setname_np(pthread_self(), "wiped-flush");
        pthread_mutex_lock(&flusher.lock);
        for (;;) {
                struct job *job = flusher.head;
                unsigned run;

                if (!job) {
                        if (flusher.stop)
                                break;
                        pthread_cond_wait(&flusher.cond, &flusher.lock);
                        continue;
                }
                flusher.head = job->flush_next;
                if (!flusher.head)
                        flusher.tail = NULL;
                job->flush_next = NULL;
                run = job->flush_run;
                pthread_mutex_unlock(&flusher.lock);
                job_stage_complete(job, run);
                job_unit_put(job, run);
                pthread_mutex_lock(&flusher.lock);
        }
        pthread_mutex_unlock(&flusher.lock);
        return NULL;
}

int job_flusher_start(void) {
        int r = -pthread_create(&flusher.thread, NULL, flusher_main, NULL);

        if (r == 0)
                flusher.running = true;
        return r;
}

void job_flusher_stop(void) {
        pthread_mutex_lock(&flusher.lock);
        if (!flusher.running) {
                pthread_mutex_unlock(&flusher.lock);
                return;
        }
        flusher.stop = true;
        pthread_cond_signal(&flusher.cond);
        pthread_mutex_unlock(&flusher.lock);
        /* It completes what is queued first. */
        pthread_join(flusher.thread, NULL);
        pthread_mutex_lock(&flusher.lock);
        flusher.running = false;
        pthread_mutex_unlock(&flusher.lock);
}

/* Queue the job's stage end for the flusher: true, or false when it is not running (then the
 * caller completes the stage itself). */
static bool flusher_post(struct job *job, unsigned run) {
        bool posted = false;

        pthread_mutex_lock(&flusher.lock);
        if (flusher.running && !flusher.stop) {
                job->flush_run = run;
                job->flush_next = NULL;
                if (flusher.tail)
                        flusher.tail->flush_next = job;
                else
                        flusher.head = job;
                flusher.tail = job;
                pthread_cond_signal(&flusher.cond);
                posted = true;
        }
        pthread_mutex_unlock(&flusher.lock);
        return posted;
}

void job_release_chunk(struct job *job, bool completed, unsigned run) {
        /* Read before this unit counts as done: until then the stage cannot change under us. */
        uint64_t units = atomic_load(&job->stage_units);
        uint64_t done = completed ? atomic_fetch_add(&job->units_done, 1) + 1 : 0;

        if (completed && done == units && !atomic_load(&job->abort)) {
                /* The flusher takes over this unit and gives it up when the stage is complete. */
                if (flusher_post(job, run))
                        return;
                job_stage_complete(job, run);
        }
        job_unit_put(job, run);
}

int job_cancel(struct job *job) {
        if (atomic_load(&job->finished) || job_state_is_final(job_get_state(job)))
                return -EALREADY;
        pthread_mutex_lock(&job->lock);
        if (job->error == 0)
                job->abort_state = JOB_CANCELLED;
        pthread_mutex_unlock(&job->lock);
        atomic_store(&job->abort, true);
        log_info("job %" PRIu64 ": %s: cancel requested", job->id, job->info.node);
        /* Seen after abort was set: if no unit is held, nobody else will end the job.
         * A worker claiming concurrently counts itself in before it checks abort. */
        if (atomic_load(&job->active_chunks) == 0)
                job_end_aborted(job, atomic_load(&job->run));
        else
                /* Wake workers asleep on a rate limit: they give the job's units back now. */
                pool_wake(job->pool);
        return 0;
}

/* Whether the device now at the job's node is the one the job wiped; names the first field that
 * differs in *what. */
static bool identity_matches(const struct device_identity *a, const struct device_identity *b, const char **what) {
#define SAME_STR(x, y) ((!(x) && !(y)) || ((x) && (y) && strcmp((x), (y)) == 0))
        if (a->rdev != b->rdev)
                *what = "device number";
        else if (a->size != b->size)
                *what = "size";
        else if (a->logical_sector != b->logical_sector)
                *what = "sector size";
        else if (!SAME_STR(a->model, b->model))
                *what = "model";
        else if (!SAME_STR(a->serial, b->serial))
                *what = "serial";
        else if (!SAME_STR(a->wwn, b->wwn))
                *what = "WWN";
        else if (a->is_loop != b->is_loop || a->backing_inode != b->backing_inode || a->backing_dev != b->backing_dev ||
                 !SAME_STR(a->backing_file, b->backing_file))
                *what = "loop backing file";
        else
                return true;
        return false;
#undef SAME_STR
}

int job_verify_again(struct job *job, enum verify_mode mode, double percent, bool have_seed, uint64_t seed,
                     char *err, size_t err_len) {
        struct device_probe probe;
        const char *what = NULL;
        enum job_state s = job_get_state(job);
        struct job_pass *last = &job->passes[job->n_passes - 1];
        struct stage *stages;
        int fd, r;

        if (!job_state_is_final(s)) {
                snprintf(err, err_len, "job %" PRIu64 ": still %s", job->id, job_state_name(s));
                return -EBUSY;
        }
        if (!last->written) {
                snprintf(err, err_len, "job %" PRIu64 ": its last pass was never completely written", job->id);
                return -EINVAL;
        }
        fd = device_open(job->info.node, &probe, err, err_len);
        if (fd < 0) {
                device_probe_done(&probe);
                return fd;
        }
        if (!identity_matches(&job->info, &probe.id, &what)) {
                snprintf(err, err_len, "%s: refusing: identity no longer matches the job's device (%s)", job->info.node, what);
                device_probe_done(&probe);
                close(fd);
                return -ESTALE;
        }
        device_probe_done(&probe);

        if (mode == VERIFY_SAMPLE) {
                r = job_plan_sample(job, percent, have_seed, seed);
                if (r < 0) {
                        snprintf(err, err_len, "job %" PRIu64 ": cannot plan the sample: %s", job->id, strerror(-r));
                        close(fd);
                        return r;
                }
        }
        stages = calloc(1, sizeof(*stages));
        if (!stages) {
                close(fd);
                return -ENOMEM;
        }
        stages[0] = (struct stage) { .kind = STAGE_VERIFY, .pass = job->n_passes - 1,
                                     .sampled = mode == VERIFY_SAMPLE, .mode = mode };

        pthread_mutex_lock(&job->lock);
        job->fd = fd;
        job->state = JOB_RUNNING;
        job->abort_state = JOB_CANCELLED;
        job->error = 0;
        free(job->error_msg);
        job->error_msg = NULL;
        job->ended_at = 0;
        job->reverify = true;
        job->run_verify = mode;
        job->run_percent = percent;
        pthread_mutex_unlock(&job->lock);
        job->rate_bps = 0;
        job->sample_bytes = 0;
        job->started_at = now_realtime();
        job->started_mono = job->sample_mono = now_monotonic();
        /* A worker may still look at the job from its last run (under the pool lock). */
        pool_lock(job->pool);
        free(job->stages);
        job->stages = stages;
        job->n_stages = 1;
        job->work_total = stage_bytes(job, &job->stages[0]);
        atomic_store(&job->bytes_done, 0);
        atomic_store(&job->abort, false);
        /* A new run: a worker still ending the old one must not end this one. */
        pthread_mutex_lock(&job->lock);
        atomic_fetch_add(&job->run, 1);
        atomic_store(&job->finished, false);
        pthread_mutex_unlock(&job->lock);
        job_stage_enter(job, 0);
        pool_unlock(job->pool);
        log_info("job %" PRIu64 ": %s: verifying pass %u again (%s)", job->id, job->info.node, job->n_passes,
                 verify_mode_name(mode));
        pool_add_job(job->pool, job);
        return 0;
}

void job_interrupt_all(void) {
        for (struct job *j = jobs_head; j; j = j->next) {
                if (atomic_load(&j->finished) || job_state_is_final(job_get_state(j)))
                        continue;
                /* A job already cancelled or failing ends as such, not interrupted. */
                pthread_mutex_lock(&j->lock);
                if (j->error == 0 && !atomic_load(&j->abort))
                        j->abort_state = JOB_INTERRUPTED;
                pthread_mutex_unlock(&j->lock);
                atomic_store(&j->abort, true);
                /* Jobs with units in flight end when their workers release them. */
                if (atomic_load(&j->active_chunks) == 0)
                        job_end_aborted(j, atomic_load(&j->run));
                else if (j->pool)
                        pool_wake(j->pool);
        }
}

void job_sample_rates(void) {
        double now = now_monotonic();

        for (struct job *j = jobs_head; j; j = j->next) {
                uint64_t b = atomic_load(&j->bytes_done);
                double dt = now - j->sample_mono, inst;

                /* Samples at least 0.45 s apart, whatever the main loop's tick. */
                if (atomic_load(&j->finished) || dt < 0.45)
                        continue;
                inst = (double) (b - j->sample_bytes) / dt;
                /* Exponential smoothing over a few seconds; the first sample seeds it. */
                j->rate_bps = j->sample_bytes == 0 && j->rate_bps == 0 ? inst : 0.7 * j->rate_bps + 0.3 * inst;
                j->sample_bytes = b;
                j->sample_mono = now;
        }
}

static char *jobs_state_dir;    /* where job records go; NULL: nowhere */

int job_set_state_dir(const char *dir) {
        _cleanup_free_ char *jobs = NULL;
        DIR *d;

        free(jobs_state_dir);
        jobs_state_dir = dir ? strdup(dir) : NULL;
        if (!dir)
                return 0;
        if (!jobs_state_dir || asprintf(&jobs, "%s/jobs", dir) < 0)
                return -ENOMEM;
        /* New ids follow the saved ones, so that a record is never overwritten by another job's. */
        d = opendir(jobs);
        if (d) {
                struct dirent *e;

                while ((e = readdir(d))) {
                        char *end;
                        unsigned long long id = strtoull(e->d_name, &end, 10);

                        if (end != e->d_name && strcmp(end, ".json") == 0 && id >= jobs_next_id && id < UINT64_MAX)
                                jobs_next_id = id + 1;
                }
                closedir(d);
        }
        return 0;
}

/* Write text to dir/name atomically: a temporary file, fsync, rename, fsync of the directory.
 * 0 or -errno (nothing is left behind on failure). */
static int write_atomic(const char *dir, const char *name, const char *text) {
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char tmp[64];
        size_t len = strlen(text), off = 0;
        int fd, r = 0;

        if (dfd < 0)
                return -errno;
        snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
        /* A leftover of a crash goes: the new file is ours alone, mode 0600, never a link. */
        (void) unlinkat(dfd, tmp, 0);
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        while (off < len && r == 0) {
                ssize_t n = write(fd, text + off, len - off);

                if (n < 0 && errno != EINTR)
                        r = -errno;
                else if (n > 0)
                        off += (size_t) n;
        }
        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && renameat(dfd, tmp, dfd, name) < 0)
                r = -errno;
        if (r == 0 && fsync(dfd) < 0)
                r = -errno;
        if (r < 0)
                (void) unlinkat(dfd, tmp, 0);
        return r;
}

void job_save_unfinished(void) {
        _cleanup_free_ char *dir = NULL;

        if (!jobs_state_dir)
                return;
        if (asprintf(&dir, "%s/jobs", jobs_state_dir) < 0) {
                dir = NULL;
                log_error("cannot save jobs: out of memory");
                return;
        }
        if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
                log_error("%s: cannot create: %s: interrupted jobs are not saved", dir, strerror(errno));
                return;
        }
        for (struct job *j = jobs_head; j; j = j->next) {
                _cleanup_json_ struct json_object *o = json_object_new_object();
                struct json_object *job_o, *report_o;
                const char *text;
                char name[32];
                int r;

                if (job_get_state(j) != JOB_INTERRUPTED)
                        continue;
                /* The keys stay in the daemon's own 0700 directory, in a 0600 file. */
                job_o = o ? job_to_json(j) : NULL;
                if (job_o && json_object_object_add(o, "job", job_o) < 0) {
                        json_object_put(job_o);
                        job_o = NULL;
                }
                report_o = job_o ? job_report_json(j, true) : NULL;
                if (report_o && json_object_object_add(o, "report", report_o) < 0) {
                        json_object_put(report_o);
                        report_o = NULL;
                }
                if (!report_o || json_object_object_add(o, "format", json_object_new_int(1)) < 0 ||
                    !(text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY))) {
                        log_error("job %" PRIu64 ": cannot save: out of memory", j->id);
                        continue;
                }
                snprintf(name, sizeof(name), "%" PRIu64 ".json", j->id);
                r = write_atomic(dir, name, text);
                if (r < 0)
                        log_error("job %" PRIu64 ": %s: cannot save to %s/%s: %s", j->id, j->info.node, dir, name,
                                  strerror(-r));
                else
                        log_info("job %" PRIu64 ": %s: saved as interrupted in %s/%s", j->id, j->info.node, dir, name);
        }
}

void job_summary(char *buf, size_t n) {
        uint64_t done = 0, total = 0;
        unsigned running = 0;
        int64_t eta = 0;
        bool eta_known = true;
        char d[32];

        for (struct job *j = jobs_head; j; j = j->next) {
                uint64_t b, t;

                if (atomic_load(&j->finished) || job_state_is_final(job_get_state(j)))
                        continue;
                running++;
                b = atomic_load(&j->bytes_done);
                t = j->work_total;
                done += b < t ? b : t;
                total += t;
                if (j->rate_bps > 1.0) {
                        int64_t e = (int64_t) ((double) (t - (b < t ? b : t)) / j->rate_bps + 0.5);

                        if (e > eta)
                                eta = e;
                } else
                        eta_known = false;
        }
        if (running == 0)
                snprintf(buf, n, "idle");
        else
                snprintf(buf, n, "%u running, %.0f%% overall, ETA %s", running,
                         total ? 100.0 * (double) done / (double) total : 0.0,
                         units_duration(d, sizeof(d), eta_known ? eta : -1));
}

static int json_add(struct json_object *o, const char *k, struct json_object *v) {
        return json_object_object_add(o, k, v);
}

/* A duration or rate with a fixed number of decimals, serialised as written (not 0.56000000000000005). */
static struct json_object *json_fixed(double v, int decimals) {
        char buf[64];

        snprintf(buf, sizeof(buf), "%.*f", decimals, v);
        return json_object_new_double_s(strtod(buf, NULL), buf);
}

static struct json_object *error_json(struct job *job) {
        struct json_object *e;

        if (job->error == 0)
                return NULL;
        e = json_object_new_object();
        if (!e)
                return NULL;
        json_add(e, "code", json_object_new_string(protocol_errno_name(job->error)));
        json_add(e, "message", json_object_new_string(job->error_msg ? job->error_msg : strerror(-job->error)));
        return e;
}

static struct json_object *pass_list_json(const struct job *job) {
        struct json_object *a = json_object_new_array();
        char name[2 * METHOD_PATTERN_MAX + 8];

        for (unsigned i = 0; a && i < job->n_passes; i++)
                json_object_array_add(a, json_object_new_string(pass_name(&job->passes[i].pass, name, sizeof(name))));
        return a;
}

/* A new object holding the job's error (if any), with a consistent snapshot of its state, end
 * time and seconds since the start (to the end when it has ended). NULL on ENOMEM. */
static struct json_object *job_json_snapshot(struct job *job, enum job_state *s, double *ended, double *elapsed) {
        struct json_object *o = json_object_new_object();
        struct json_object *e;

        if (!o)
                return NULL;
        pthread_mutex_lock(&job->lock);
        *s = job->state;
        *ended = job->ended_at;
        e = error_json(job);
        pthread_mutex_unlock(&job->lock);
        if (e)
                json_add(o, "error", e);
        *elapsed = (*ended > 0 ? *ended : now_realtime()) - job->started_at;
        return o;
}

struct json_object *job_to_json(struct job *job) {
        uint64_t done = atomic_load(&job->bytes_done), total = job->work_total;
        const struct stage *st = &job->stages[atomic_load(&job->stage_index)];
        struct json_object *v;
        enum job_state s;
        double ended, elapsed;
        _cleanup_json_ struct json_object *o = job_json_snapshot(job, &s, &ended, &elapsed);

        if (!o)
                return NULL;
        if (done > total)
                done = total;
        json_add(o, "id", json_object_new_uint64(job->id));
        json_add(o, "device", json_object_new_string(job->device));
        json_add(o, "node", json_object_new_string(job->info.node));
        json_add(o, "state", json_object_new_string(job_state_name(s)));
        json_add(o, "method", json_object_new_string(job->method));
        json_add(o, "pass_list", pass_list_json(job));
        json_add(o, "cipher", json_object_new_string(keystream_cipher_name(job->cipher)));
        json_add(o, "pass", json_object_new_int((int) st->pass + 1));
        json_add(o, "passes", json_object_new_int((int) job->n_passes));
        json_add(o, "phase", job_state_is_final(s) ? NULL :
                 json_object_new_string(s == JOB_FLUSHING ? "flush" : st->kind == STAGE_WRITE ? "write" : "verify"));
        json_add(o, "size", json_object_new_uint64(job->info.size));
        json_add(o, "bytes_done", json_object_new_uint64(done));
        json_add(o, "bytes_total", json_object_new_uint64(total));
        json_add(o, "rate_bps", json_fixed(job_state_is_final(s) ? 0.0 : job->rate_bps, 0));
        if (s == JOB_DONE)
                json_add(o, "eta_s", json_object_new_int64(0));
        else if (!job_state_is_final(s) && job->rate_bps > 1.0)
                json_add(o, "eta_s", json_object_new_int64((int64_t) ((double) (total - done) / job->rate_bps + 0.5)));
        else
                json_add(o, "eta_s", NULL);
        v = json_object_new_object();
        pthread_mutex_lock(&job->lock);
        json_add(v, "mode", json_object_new_string(verify_mode_name(job->run_verify)));
        if (job->run_verify == VERIFY_SAMPLE)
                json_add(v, "percent", json_fixed(job->run_percent, 3));
        pthread_mutex_unlock(&job->lock);
        json_add(o, "verify", v);
        json_add(o, "sector_size", json_object_new_int64(job->info.logical_sector));
        json_add(o, "queue_depth", json_object_new_int64(job->queue_depth));
        json_add(o, "io_size", json_object_new_int64(job->piece));
        json_add(o, "max_rate", json_object_new_uint64(job->rate.bps));
        json_add(o, "started_at", json_object_new_int64((int64_t) job->started_at));
        json_add(o, "ended_at", ended > 0 ? json_object_new_int64((int64_t) ended) : NULL);
        json_add(o, "elapsed_s", json_fixed(elapsed, 3));
        json_add(o, "identity", device_identity_json(&job->info));
        return TAKE_PTR(o);
}

static void hex(char *out, const uint8_t *in, size_t n) {
        for (size_t i = 0; i < n; i++)
                sprintf(out + 2 * i, "%02x", in[i]);
}

static struct json_object *offsets_json(const struct verify_result *r) {
        struct json_object *a = json_object_new_array();

        for (unsigned i = 0; a && i < r->n_first; i++)
                json_object_array_add(a, json_object_new_uint64(r->first[i]));
        return a;
}

static double coverage_percent(const struct job *job, const struct verify_result *r) {
        return job->info.size ? 100.0 * (double) r->coverage / (double) job->info.size : 0.0;
}

/* A verification run as JSON; with_plan adds when, percent, seed and subsections. */
static struct json_object *verify_result_json(const struct job *job, const struct verify_result *r, bool with_plan) {
        struct json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        if (with_plan) {
                json_add(o, "at", json_object_new_int64((int64_t) r->at));
                json_add(o, "duration_s", json_fixed(r->at - r->started, 3));
                json_add(o, "mode", json_object_new_string(verify_mode_name(r->mode)));
                if (r->mode == VERIFY_SAMPLE) {
                        json_add(o, "percent", json_fixed(r->percent, 3));
                        json_add(o, "seed", json_object_new_uint64(r->seed));
                        json_add(o, "subsections", json_object_new_uint64(r->subsections));
                }
                json_add(o, "coverage_bytes", json_object_new_uint64(r->coverage));
        } else {
                json_add(o, "mode", json_object_new_string(verify_mode_name(r->mode)));
                json_add(o, "bytes_read", json_object_new_uint64(r->coverage));
        }
        json_add(o, "coverage_percent", json_fixed(coverage_percent(job, r), 3));
        json_add(o, "result", json_object_new_string(r->mismatched ? "failed" : "passed"));
        json_add(o, "mismatched_sectors", json_object_new_uint64(r->mismatched));
        json_add(o, "first_mismatches", offsets_json(r));
        return o;
}

static struct json_object *passes_json(struct job *job, bool with_keys) {
        struct json_object *passes = json_object_new_array();
        char hexbuf[2 * KEYSTREAM_KEY_MAX + 1], name[2 * METHOD_PATTERN_MAX + 8];
        uint8_t digest[32];
        unsigned dlen = 0;

        for (unsigned i = 0; passes && i < job->n_passes; i++) {
                const struct job_pass *jp = &job->passes[i];
                struct json_object *p = json_object_new_object();

                json_add(p, "pass", json_object_new_int((int) i + 1));
                json_add(p, "pattern", json_object_new_string(pass_name(&jp->pass, name, sizeof(name))));
                if (jp->pass.kind == PASS_RANDOM) {
                        json_add(p, "cipher", json_object_new_string(keystream_cipher_name(job->cipher)));
                        /* The fingerprint names the key without revealing it: SHA-256, first 16 bytes. */
                        EVP_Digest(jp->key, jp->key_len, digest, &dlen, EVP_sha256(), NULL);
                        hex(hexbuf, digest, 16);
                        json_add(p, "key_fingerprint", json_object_new_string(hexbuf));
                        if (with_keys) {
                                hex(hexbuf, jp->key, jp->key_len);
                                json_add(p, "key", json_object_new_string(hexbuf));
                        }
                        OPENSSL_cleanse(hexbuf, sizeof(hexbuf));
                }
                json_add(p, "written", json_object_new_boolean(jp->written));
                json_add(p, "verified", jp->verified.ran ? verify_result_json(job, &jp->verified, false) : NULL);
                json_object_array_add(passes, p);
        }
        return passes;
}

/* The verification of the last pass: the latest run's figures, or the plan when none ran yet. */
static struct json_object *verification_json(struct job *job) {
        struct json_object *o = json_object_new_object(), *runs = json_object_new_array();
        const struct verify_result *latest = job->n_runs ? &job->runs[job->n_runs - 1] : NULL;
        enum verify_mode mode = latest ? latest->mode : job->verify;
        uint64_t coverage;

        if (!o || !runs) {
                json_object_put(o);
                json_object_put(runs);
                return NULL;
        }
        json_add(o, "mode", json_object_new_string(verify_mode_name(mode)));
        if (mode == VERIFY_SAMPLE) {
                json_add(o, "percent", json_fixed(latest ? latest->percent : job->sample.percent, 3));
                json_add(o, "seed", json_object_new_uint64(latest ? latest->seed : job->sample.seed));
                json_add(o, "subsections", json_object_new_uint64(latest ? latest->subsections : job->sample.subsections));
        }
        coverage = latest ? latest->coverage : mode == VERIFY_NONE ? 0 :
                   mode == VERIFY_SAMPLE ? job->sample.bytes : job->info.size;
        json_add(o, "coverage_bytes", json_object_new_uint64(coverage));
        json_add(o, "coverage_percent", json_fixed(job->info.size ? 100.0 * (double) coverage / (double) job->info.size : 0, 3));
        json_add(o, "result", json_object_new_string(!latest ? "not run" : latest->mismatched ? "failed" : "passed"));
        json_add(o, "mismatched_sectors", json_object_new_uint64(latest ? latest->mismatched : 0));
        json_add(o, "first_mismatches", latest ? offsets_json(latest) : json_object_new_array());
        for (size_t i = 0; i < job->n_runs; i++)
                json_object_array_add(runs, verify_result_json(job, &job->runs[i], true));
        json_add(o, "runs", runs);
        return o;
}

struct json_object *job_report_json(struct job *job, bool with_keys) {
        _cleanup_json_ struct json_object *o = NULL;
        uint64_t written = atomic_load(&job->bytes_written), work;
        double ended, duration, started;
        enum job_state s;

        o = job_json_snapshot(job, &s, &ended, &duration);
        if (!o)
                return NULL;
        /* The wipe's own times and rate, also after later verifications. */
        pthread_mutex_lock(&job->lock);
        started = job->wipe_started;
        if (job->wipe_ended > 0) {
                ended = job->wipe_ended;
                duration = ended - started;
                work = job->wipe_work;
        } else
                work = atomic_load(&job->bytes_done);
        pthread_mutex_unlock(&job->lock);
        json_add(o, "job", json_object_new_uint64(job->id));
        json_add(o, "tool", json_object_new_string(PACKAGE_NAME " " PACKAGE_VERSION));
        json_add(o, "device", json_object_new_string(job->device));
        json_add(o, "node", json_object_new_string(job->info.node));
        json_add(o, "state", json_object_new_string(job_state_name(s)));
        json_add(o, "method", json_object_new_string(job->method));
        json_add(o, "pass_list", pass_list_json(job));
        json_add(o, "bytes_total", json_object_new_uint64(job->info.size));
        json_add(o, "bytes_written", json_object_new_uint64(written));
        json_add(o, "sector_size", json_object_new_int64(job->info.logical_sector));
        json_add(o, "queue_depth", json_object_new_int64(job->queue_depth));
        json_add(o, "io_size", json_object_new_int64(job->piece));
        json_add(o, "max_rate", json_object_new_uint64(job->rate.bps));
        json_add(o, "started_at", json_object_new_int64((int64_t) started));
        json_add(o, "ended_at", ended > 0 ? json_object_new_int64((int64_t) ended) : NULL);
        json_add(o, "duration_s", json_fixed(duration, 3));
        json_add(o, "avg_rate_bps", json_fixed(duration > 0 ? (double) work / duration : 0.0, 0));
        pthread_mutex_lock(&job->lock);
        json_add(o, "passes", passes_json(job, with_keys));
        json_add(o, "verification", verification_json(job));
        json_add(o, "signatures_after", job->sigs_checked ? device_signatures_json(job->sigs_after, job->n_sigs_after) : NULL);
        pthread_mutex_unlock(&job->lock);
        json_add(o, "identity", device_identity_json(&job->info));
        json_add(o, "signatures_before", device_signatures_json(job->sigs_before, job->n_sigs_before));
        return TAKE_PTR(o);
}
