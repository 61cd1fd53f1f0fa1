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
#include "clock.h"
#include "strutil.h"
#include "daemon-config.h"
#include "daemon.h"
#include "sign.h"
#include "protocol.h"
#include "units.h"

#define SAMPLE_EXTENTS_PER_UNIT 16      /* sample extents one worker claims at a time */

static int json_add(struct json_object *o, const char *k, struct json_object *v);
static struct json_object *error_json(struct job *job);
static void graveyard_sweep(double now, bool all);

static struct job *jobs_head, *jobs_tail;  /* oldest first */
static atomic_uint_fast64_t key_serials;

uint64_t job_key_serial_next(void) {
        return atomic_fetch_add(&key_serials, 1) + 1;
}
static uint64_t jobs_next_id = 1;

static const char *const state_names[_JOB_STATE_MAX] = {
        [JOB_RUNNING] = "running",
        [JOB_FLUSHING] = "flushing",
        [JOB_DONE] = "done",
        [JOB_FAILED] = "failed",
        [JOB_CANCELLED] = "cancelled",
        [JOB_INTERRUPTED] = "interrupted",
        [JOB_PAUSED] = "paused",
        [JOB_DONE_ERRORS] = "done-with-errors",
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
        return s == JOB_DONE || s == JOB_DONE_ERRORS || s == JOB_FAILED || s == JOB_CANCELLED || s == JOB_INTERRUPTED;
}

/* Whether the job ended for good: done (with errors or not), failed or cancelled. */
static bool state_ended(enum job_state s) {
        return s == JOB_DONE || s == JOB_DONE_ERRORS || s == JOB_FAILED || s == JOB_CANCELLED;
}

int job_bad_range(struct job *job, uint64_t off, uint64_t len, bool read) {
        uint64_t before, total, limit, quiet_s;
        size_t i, n, ranges_before;
        unsigned logged;
        bool over;
        char b[32], l[32];

        pthread_mutex_lock(&job->lock);
        before = job->bad_bytes;
        ranges_before = job->n_bad;
        /* Insert in order, merging with the neighbours it touches or overlaps. */
        for (i = 0; i < job->n_bad && job->bad[i].offset + job->bad[i].length < off; i++)
                ;
        if (i < job->n_bad && job->bad[i].offset <= off + len) {
                uint64_t end = off + len > job->bad[i].offset + job->bad[i].length ? off + len :
                               job->bad[i].offset + job->bad[i].length;

                job->bad_bytes -= job->bad[i].length;
                if (off < job->bad[i].offset)
                        job->bad[i].offset = off;
                job->bad[i].length = end - job->bad[i].offset;
                /* It may now reach the next ones. */
                for (n = i + 1; n < job->n_bad && job->bad[n].offset <= end; n++) {
                        uint64_t e = job->bad[n].offset + job->bad[n].length;

                        job->bad_bytes -= job->bad[n].length;
                        if (e > end)
                                end = e;
                }
                job->bad[i].length = end - job->bad[i].offset;
                memmove(&job->bad[i + 1], &job->bad[n], (job->n_bad - n) * sizeof(*job->bad));
                job->n_bad -= n - i - 1;
                job->bad_bytes += job->bad[i].length;
        } else if (job->n_bad < JOB_BAD_RANGES_MAX) {
                struct extent *a = realloc(job->bad, (job->n_bad + 1) * sizeof(*a));

                if (!a) {
                        /* Never skip a sector without a record of it. */
                        pthread_mutex_unlock(&job->lock);
                        job_fail(job, -ENOMEM, "%s: cannot record a bad sector at offset %" PRIu64 ": out of memory",
                                 job->info.node, off);
                        return -ENOMEM;
                }
                job->bad = a;
                memmove(&a[i + 1], &a[i], (job->n_bad - i) * sizeof(*a));
                a[i] = (struct extent) { off, len };
                job->n_bad++;
                job->bad_bytes += len;
        }
        total = job->bad_bytes;
        limit = job->max_bad;
        over = total > limit || job->n_bad >= JOB_BAD_RANGES_MAX;
        if (total != before)
                job->dirty = true;
        /* A line for each new range, up to a limit: a dying disk must not flood the journal. */
        logged = job->n_bad > ranges_before ? ++job->bad_logged : 0;
        pthread_mutex_unlock(&job->lock);
        if (logged > 0 && logged <= JOB_BAD_LOGGED_MAX)
                log_warning("job %" PRIu64 ": %s: bad sector at offset %" PRIu64 " (%s): skipped; %s bad so far%s",
                            job->id, job->info.node, off, read ? "read" : "write", units_size(b, sizeof(b), total),
                            logged == JOB_BAD_LOGGED_MAX ? " (further bad ranges are in the report only)" : "");
        if (over) {
                uint64_t last = atomic_load(&job->last_ok_ns), now = mono_ns();

                quiet_s = now > last ? (now - last) / 1000000000u : 0;
                job_fail(job, -EIO, "%s: too many bad sectors: %s (limit %s)%s", job->info.node,
                         units_size(b, sizeof(b), total), units_size(l, sizeof(l), limit),
                         quiet_s >= 1 ? "; no I/O has succeeded since: the device may have failed or gone" : "");
                return -EIO;
        }
        return 0;
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

uint64_t job_wiping(dev_t rdev) {
        for (struct job *j = jobs_head; j; j = j->next)
                /* Until it settled, a job may still hold its device (a stopping job flushes and closes
                 * it); a paused job holds nothing: its device is closed until it resumes. */
                if (j->info.rdev == rdev && !atomic_load(&j->settled))
                        return j->id;
        return 0;
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
        free((void *) job->unit_bits);
        free(job->ckpt.bits);
        for (size_t i = 0; i < job->n_history; i++) {
                free(job->history[i].node);
                free(job->history[i].reason);
        }
        free(job->history);
        free(job->reason);
        free(job->report_file);
        free(job->bad);
        free(job->runs);
        free(job->method);
        sample_plan_done(&job->sample);
        device_identity_done(&job->info);
        device_signatures_free(job->sigs_before, job->n_sigs_before);
        device_signatures_free(job->sigs_after, job->n_sigs_after);
        pthread_mutex_destroy(&job->lock);
        free(job->device);
        free(job->error_msg);
        free(job->wipe_error_msg);
        free(job);
}

void job_free_all(void) {
        while (jobs_head) {
                struct job *j = jobs_head;

                jobs_head = j->next;
                job_free(j);
        }
        jobs_tail = NULL;
        graveyard_sweep(0, true);
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

/* Units of a stage. */
static uint64_t stage_units(const struct job *job, const struct stage *st) {
        return st->kind == STAGE_VERIFY && st->sampled ?
               (job->sample.n_extents + SAMPLE_EXTENTS_PER_UNIT - 1) / SAMPLE_EXTENTS_PER_UNIT : job->plan.n_chunks;
}

/* Bytes of unit u of a stage. */
static uint64_t unit_bytes(const struct job *job, const struct stage *st, uint64_t u) {
        uint64_t off, len = 0;

        if (st->kind == STAGE_VERIFY && st->sampled) {
                for (size_t e = u * SAMPLE_EXTENTS_PER_UNIT;
                     e < job->sample.n_extents && e < (u + 1) * SAMPLE_EXTENTS_PER_UNIT; e++)
                        len += job->sample.extents[e].length;
                return len;
        }
        chunk_range(&job->plan, u, &off, &len);
        return len;
}

/* Bytes of work of the stages before stage i. */
static uint64_t stage_base(const struct job *job, unsigned i) {
        uint64_t b = 0;

        for (unsigned k = 0; k < i && k < job->n_stages; k++)
                b += stage_bytes(job, &job->stages[k]);
        return b;
}

/* Room for the done-unit bitmaps of every stage (the current one, and the checkpoint's).
 * 0 or -ENOMEM. */
static int job_alloc_bits(struct job *job) {
        uint64_t n = job->plan.n_chunks, s = (job->sample.n_extents + SAMPLE_EXTENTS_PER_UNIT - 1) / SAMPLE_EXTENTS_PER_UNIT;
        size_t words = (size_t) (((n > s ? n : s) + 63) / 64);
        _Atomic uint64_t *bits;
        uint64_t *ck;

        if (words <= job->n_unit_words)
                return 0;
        bits = calloc(words, sizeof(*bits));
        ck = calloc(words, sizeof(*ck));
        if (!bits || !ck) {
                free((void *) bits);
                free(ck);
                return -ENOMEM;
        }
        if (job->ckpt.bits)
                memcpy(ck, job->ckpt.bits, job->n_unit_words * sizeof(*ck));
        free((void *) job->unit_bits);
        free(job->ckpt.bits);
        job->unit_bits = bits;
        job->ckpt.bits = ck;
        job->n_unit_words = words;
        return 0;
}

static bool unit_bit(_Atomic uint64_t *bits, uint64_t u) {
        return atomic_load_explicit(&bits[u / 64], memory_order_relaxed) >> (u % 64) & 1;
}

/* Make stage i the current one (no unit of the job is held). Unless this run is a later
 * verification, the stage's start is the checkpoint now: every earlier stage was flushed. */
static void job_stage_enter(struct job *job, unsigned i) {
        const struct stage *st = &job->stages[i];

        atomic_store(&job->stage_index, i);
        atomic_store(&job->stage_units, stage_units(job, st));
        atomic_store(&job->next_unit, 0);
        atomic_store(&job->units_done, 0);
        for (size_t w = 0; w < job->n_unit_words; w++)
                atomic_store_explicit(&job->unit_bits[w], 0, memory_order_relaxed);
        atomic_store(&job->ckpt_pending, 0);
        pthread_mutex_lock(&job->lock);
        if (!job->reverify) {
                job->ckpt.stage = i;
                memset(job->ckpt.bits, 0, job->n_unit_words * sizeof(*job->ckpt.bits));
                job->ckpt.bytes_done = stage_base(job, i);
                job->ckpt.bytes_written = atomic_load(&job->bytes_written);
                job->ckpt.verify = (struct verify_result) {};
                job->ckpt.at = real_s();
                job->dirty = true;
        }
        pthread_mutex_unlock(&job->lock);
        if (st->kind == STAGE_VERIFY) {
                pthread_mutex_lock(&job->lock);
                job->current = (struct verify_result) {
                        .mode = st->mode,
                        .percent = st->sampled ? job->sample.percent : 100.0,
                        .seed = st->sampled ? job->sample.seed : 0,
                        .subsections = st->sampled ? job->sample.subsections : 0,
                        .coverage = stage_bytes(job, st),
                        .started = real_s(),
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
        /* Units done before a resume are skipped. */
        do {
                c = atomic_fetch_add(&job->next_unit, 1);
                if (c >= atomic_load(&job->stage_units))
                        return false;
        } while (unit_bit(job->unit_bits, c));
        st = &job->stages[atomic_load(&job->stage_index)];
        *u = (struct job_unit) {
                .job = job,
                .run = atomic_load(&job->run),
                .kind = st->kind,
                .pass = &job->passes[st->pass],
                .pass_index = st->pass,
                .index = c,
                .bytes = unit_bytes(job, st, c),
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
                p->key_serial = job_key_serial_next();
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
        *r = chunk_plan_init(&job->plan, job->info.size, unit, rq->chunk_size, io_size);
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
        job->max_bad = rq->max_bad;
        atomic_store(&job->last_ok_ns, mono_ns());
        if (*r == 0 && job->verify == VERIFY_SAMPLE)
                *r = job_plan_sample(job, rq->verify_percent, rq->have_seed, rq->seed);
        if (*r == 0)
                *r = job_plan_stages(job);
        if (*r == 0)
                *r = job_alloc_bits(job);
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
        double rt = real_s(), mono = mono_s();
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
                int fd = device_open(devices[i], job_wiping, &probe, err, err_len);

                if (fd < 0) {
                        r = fd;
                        device_probe_done(&probe);
                        break;
                }
                if (rq->expect && rq->expect[i]) {
                        char what[320];

                        r = device_expect_match(&probe.id, rq->expect[i], what, sizeof(what));
                        if (r < 0) {
                                if (r == -ESTALE)
                                        snprintf(err, err_len, "%s: refusing: not the device that was confirmed: %s",
                                                 probe.id.node, what);
                                else
                                        snprintf(err, err_len, "%s: cannot compare: %s", probe.id.node, strerror(-r));
                                device_probe_done(&probe);
                                close(fd);
                                break;
                        }
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
                /* Earlier jobs on this device: what is on it from now on is this job's. */
                for (struct job *j = jobs_head; j; j = j->next) {
                        const char *what;

                        if (j->superseded_by ||
                            !device_identity_same(&j->info, &job->info, !device_identity_strong(&j->info), &what))
                                continue;
                        pthread_mutex_lock(&j->lock);
                        j->superseded_by = job->id;
                        j->dirty = true;
                        pthread_mutex_unlock(&j->lock);
                }
                job->started_at = job->wipe_started = rt;
                job->started_mono = job->sample_mono = mono;
                pthread_mutex_lock(&job->lock);
                (void) job_event_add(job, JOB_EVENT_STARTED, NULL, 0);
                job->dirty = true;
                pthread_mutex_unlock(&job->lock);
                job->ckpt_mono = mono;
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

/* Bytes written over all passes when stage holds done bytes of its units: the passes before it
 * whole, and those bytes when it writes. */
static uint64_t written_at(const struct job *job, unsigned stage, uint64_t done) {
        uint64_t w = 0;

        for (unsigned k = 0; k < stage && k < job->n_stages; k++)
                if (job->stages[k].kind == STAGE_WRITE)
                        w += job->info.size;
        if (stage < job->n_stages && job->stages[stage].kind == STAGE_WRITE)
                w += done;
        return w;
}

/* The completed units of the current stage and what goes with them, taken where the stage cannot
 * change (under the pool lock, or when no unit is held). */
struct ckpt_snap {
        unsigned run, stage;
        enum stage_kind kind;
        uint64_t *bits;
        uint64_t bytes_done, bytes_written;
        struct verify_result verify;
};

static int ckpt_snapshot(struct job *job, struct ckpt_snap *c) {
        const struct stage *st;
        uint64_t units, done = 0;

        c->run = atomic_load(&job->run);
        c->stage = atomic_load(&job->stage_index);
        st = &job->stages[c->stage];
        c->kind = st->kind;
        c->bits = calloc(job->n_unit_words, sizeof(*c->bits));
        if (!c->bits)
                return -ENOMEM;
        for (size_t w = 0; w < job->n_unit_words; w++)
                c->bits[w] = atomic_load(&job->unit_bits[w]);
        units = atomic_load(&job->stage_units);
        for (uint64_t u = 0; u < units; u++)
                if (c->bits[u / 64] >> (u % 64) & 1)
                        done += unit_bytes(job, st, u);
        c->bytes_done = stage_base(job, c->stage) + done;
        c->bytes_written = written_at(job, c->stage, done);
        atomic_store(&job->ckpt_pending, 0);
        pthread_mutex_lock(&job->lock);
        c->verify = st->kind == STAGE_VERIFY ? job->current : (struct verify_result) {};
        pthread_mutex_unlock(&job->lock);
        /* Mismatches are counted per sector as found, also in units not done yet: a verification
         * that found some starts again whole on a resume, so that none is counted twice. */
        if (st->kind == STAGE_VERIFY && c->verify.mismatched > 0) {
                memset(c->bits, 0, job->n_unit_words * sizeof(*c->bits));
                c->bytes_done = stage_base(job, c->stage);
                c->verify = (struct verify_result) {};
        }
        return 0;
}

/* Make a snapshot whose writes were flushed the checkpoint, unless the job moved on meanwhile
 * (final: the job's own last one, taken when it stopped). */
static void ckpt_store(struct job *job, const struct ckpt_snap *c, bool final) {
        pthread_mutex_lock(&job->lock);
        if (final || (!atomic_load(&job->finished) && atomic_load(&job->run) == c->run && c->stage >= job->ckpt.stage)) {
                job->ckpt.stage = c->stage;
                memcpy(job->ckpt.bits, c->bits, job->n_unit_words * sizeof(*c->bits));
                job->ckpt.bytes_done = c->bytes_done;
                job->ckpt.bytes_written = c->bytes_written;
                job->ckpt.verify = c->verify;
                job->ckpt.at = real_s();
                job->dirty = true;
        }
        pthread_mutex_unlock(&job->lock);
}

/* A checkpoint of a running job (on the flusher): what its workers completed is flushed, then
 * recorded. */
static void job_checkpoint(struct job *job, unsigned run) {
        struct ckpt_snap c = {};
        int fd = -1, r;

        pool_lock(job->pool);
        if (atomic_load(&job->run) == run && !atomic_load(&job->finished) && !atomic_load(&job->abort)) {
                pthread_mutex_lock(&job->lock);
                /* Our own descriptor: the job may end and close its own meanwhile. */
                if (job->fd >= 0)
                        fd = fcntl(job->fd, F_DUPFD_CLOEXEC, 0);
                pthread_mutex_unlock(&job->lock);
                if (fd >= 0 && ckpt_snapshot(job, &c) < 0) {
                        close(fd);
                        fd = -1;
                }
        }
        pool_unlock(job->pool);
        if (fd >= 0) {
                r = c.kind == STAGE_WRITE && fdatasync(fd) < 0 ? -errno : 0;
                close(fd);
                if (r < 0)
                        job_fail(job, r, "%s: flush for a checkpoint failed: %s", job->info.node, strerror(-r));
                else
                        ckpt_store(job, &c, false);
        }
        free(c.bits);
        pthread_mutex_lock(&job->lock);
        job->ckpt_queued = false;
        pthread_mutex_unlock(&job->lock);
}

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

/* How a later verification that did not complete ended, from the state its run ends in. */
static enum verify_end reverify_end(enum job_state s) {
        return s == JOB_CANCELLED ? VERIFY_END_CANCELLED : s == JOB_FAILED ? VERIFY_END_ERROR : VERIFY_END_INTERRUPTED;
}

/* End run `run` of the job in state s (once per run; later calls, and calls for an older run,
 * do nothing). Closes the device; a job that stops (paused, interrupted) takes its last
 * checkpoint first. The new state is seen (status, watch, a resume or a new job on the device)
 * only once all of that is done and the job has settled: "paused" means the device is closed.
 * A later verification that does not complete (cancelled, interrupted, an I/O error) leaves the
 * job as the wipe left it, and is recorded as a run that ended so. */
static void job_finish(struct job *job, enum job_state s, unsigned run) {
        enum verify_mode run_verify;
        enum verify_end end = VERIFY_END_COMPLETE;
        struct ckpt_snap c = {};
        bool reverify, stopped;
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
        /* A later verification that found mismatches fails the job (its device no longer holds
         * what the wipe wrote); one that ended otherwise before the end says nothing of it. */
        if (reverify && s != JOB_DONE && !(s == JOB_FAILED && job->current.ran)) {
                end = reverify_end(s);
                s = job->wipe_state;
        }
        /* Done but for sectors that could not be written: a distinct end. */
        if (s == JOB_DONE && job->bad_bytes > 0)
                s = JOB_DONE_ERRORS;
        stopped = s == JOB_INTERRUPTED || s == JOB_PAUSED;
        fd = job->fd;
        job->fd = -1;
        pthread_mutex_unlock(&job->lock);

        /* Every unit is given back: what is complete is flushed and becomes the checkpoint. */
        if (fd >= 0 && stopped && !reverify && ckpt_snapshot(job, &c) == 0) {
                if (c.kind != STAGE_WRITE || fdatasync(fd) == 0)
                        ckpt_store(job, &c, true);
                else
                        log_warning("job %" PRIu64 ": %s: flush when stopping failed: %s: resuming from the previous "
                                    "checkpoint", job->id, job->info.node, strerror(errno));
                free(c.bits);
        }
        /* The old partitions are gone from the disk: let the kernel forget them too (best effort;
         * it fails harmlessly on devices without partitions or with one in use). Outside the
         * lock: status requests must not wait for the device. */
        if (fd >= 0 && (s == JOB_DONE || s == JOB_DONE_ERRORS) && !reverify)
                (void) ioctl(fd, BLKRRPART, 0);
        if (fd >= 0)
                close(fd);

        /* Logged before the state is seen: nothing the messages read changes until it settled. */
        if (end != VERIFY_END_COMPLETE)
                log_info("job %" PRIu64 ": %s: verifying again (%s) %s; the job stays %s", job->id, job->info.node,
                         verify_mode_name(run_verify), end == VERIFY_END_CANCELLED ? "cancelled" :
                         end == VERIFY_END_ERROR ? "failed" : "interrupted", job_state_name(s));
        else if ((s == JOB_DONE || s == JOB_DONE_ERRORS) && reverify)
                log_job_event(LOG_INFO, LOG_EVENT_JOB_DONE, job, "job %" PRIu64 ": %s: verified again (%s): passed",
                              job->id, job->info.node, verify_mode_name(run_verify));
        else if (s == JOB_DONE_ERRORS)
                log_job_event(LOG_WARNING, LOG_EVENT_JOB_DONE, job,
                              "job %" PRIu64 ": %s: done with errors: %s, %u passes written and flushed except %" PRIu64
                              " bytes of bad sectors in %zu range%s, verification %s", job->id, job->info.node,
                              units_size(b, sizeof(b), job->info.size), job->n_passes, job->bad_bytes, job->n_bad,
                              job->n_bad == 1 ? "" : "s", verify_mode_name(job->verify));
        else if (s == JOB_DONE)
                log_job_event(LOG_NOTICE, LOG_EVENT_JOB_DONE, job,
                              "job %" PRIu64 ": %s: done: %s, %u passes written and flushed, verification %s", job->id,
                              job->info.node, units_size(b, sizeof(b), job->info.size), job->n_passes,
                              verify_mode_name(job->verify));
        else if (s == JOB_PAUSED)
                log_job_event(LOG_NOTICE, LOG_EVENT_JOB_PAUSED, job, "job %" PRIu64 ": %s: paused at %s of %s (%s)",
                              job->id, job->info.node, units_size(b, sizeof(b), job->ckpt.bytes_done),
                              units_size((char[32]) {}, 32, job->work_total), job->reason ? job->reason : "");
        else
                log_job_event(s == JOB_FAILED ? LOG_ERR : LOG_WARNING,
                              s == JOB_FAILED ? LOG_EVENT_JOB_FAILED :
                              s == JOB_CANCELLED ? LOG_EVENT_JOB_CANCELLED : LOG_EVENT_JOB_INTERRUPTED,
                              job, "job %" PRIu64 ": %s: %s", job->id, job->info.node, job_state_name(s));
        pthread_mutex_lock(&job->lock);
        if (end != VERIFY_END_COMPLETE) {
                /* The check that was cut short, as such; the wipe's error (if it had one) again. */
                struct verify_result *v = realloc(job->runs, (job->n_runs + 1) * sizeof(*v));

                job->current.end = end;
                job->current.at = real_s();
                job->current.coverage = atomic_load(&job->bytes_done);
                if (v) {
                        job->runs = v;
                        job->runs[job->n_runs++] = job->current;
                }
                free(job->error_msg);
                job->error = job->wipe_error;
                job->error_msg = TAKE_PTR(job->wipe_error_msg);
        } else if (reverify) {
                free(job->wipe_error_msg);
                job->wipe_error_msg = NULL;
        }
        job->wipe_error = 0;
        /* A cancel that came while it stopped: the job ends here, with its last checkpoint. */
        if (job->cancel_pending && stopped && !reverify) {
                log_job_event(LOG_WARNING, LOG_EVENT_JOB_CANCELLED, job, "job %" PRIu64 ": %s: cancelled while it was "
                              "stopping (%s)", job->id, job->info.node, job_state_name(s));
                s = JOB_CANCELLED;
                stopped = false;
                free(job->reason);
                job->reason = NULL;
                atomic_store(&job->bytes_done, job->ckpt.bytes_done);
        }
        job->cancel_pending = false;
        job->state = s;
        job->ended_at = real_s();
        if (!reverify && !stopped) {
                job->wipe_ended = job->ended_at;
                job->wipe_work = atomic_load(&job->bytes_done);
        }
        if (!reverify)
                job->wipe_state = s;
        if ((s == JOB_DONE || s == JOB_DONE_ERRORS) && !reverify)
                job->ckpt = (struct job_checkpoint) { .stage = job->n_stages, .bits = job->ckpt.bits,
                                                      .bytes_done = job->work_total,
                                                      .bytes_written = written_at(job, job->n_stages, 0),
                                                      .at = job->ended_at };
        if (!reverify)
                (void) job_event_add(job, s == JOB_PAUSED ? JOB_EVENT_PAUSED : s == JOB_INTERRUPTED ?
                                     JOB_EVENT_INTERRUPTED : JOB_EVENT_ENDED,
                                     stopped ? job->reason : s == JOB_FAILED ? job->error_msg :
                                     s == JOB_CANCELLED ? "cancelled" : NULL,
                                     stopped ? job->ckpt.bytes_done : atomic_load(&job->bytes_done));
        if (s == JOB_INTERRUPTED && !reverify)
                job->interruptions++;
        if (s == JOB_PAUSED && !reverify)
                job->pauses++;
        job->dirty = true;
        /* Seen together with the state: whoever sees it ended sees it settled. This thread does
         * not look at the job again (a resume or a forget may follow at once). */
        atomic_store(&job->settled, true);
        pthread_mutex_unlock(&job->lock);
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
        size_t lo = 0, hi;

        pthread_mutex_lock(&job->lock);
        /* A sector that could not be written is known bad, not a mismatch. */
        for (hi = job->n_bad; lo < hi;) {
                size_t mid = lo + (hi - lo) / 2;

                if (job->bad[mid].offset + job->bad[mid].length <= offset)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo < job->n_bad && job->bad[lo].offset <= offset) {
                pthread_mutex_unlock(&job->lock);
                return;
        }
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

/* After the last flush: what a fresh libblkid probe finds on the device now (nothing, we hope).
 * A signature it finds must be in what the last pass wrote (a chance match of its magic in the
 * keystream or a pattern): else something else wrote to the device during the wipe, and the job
 * fails (through job_fail(): returns -ESTALE). 0 otherwise. */
static int job_probe_after(struct job *job) {
        struct device_signature *sigs = NULL;
        size_t n = 0, first = 0;
        char path[64];
        int r, k = 0;

        /* Through the job's own descriptor: the same device, even if its name moved meanwhile. */
        snprintf(path, sizeof(path), "/proc/self/fd/%d", job->fd);
        r = device_signatures_read(path, &sigs, &n);

        if (r < 0) {
                log_warning("job %" PRIu64 ": %s: cannot probe after the wipe: %s", job->id, job->info.node, strerror(-r));
                return 0;
        }
        if (n > 0) {
                k = recheck_signatures(job, job->fd, sigs, n, &first);
                if (k < 0)
                        log_warning("job %" PRIu64 ": %s: a probe after the wipe finds %s at offset %" PRIu64 ", and the "
                                    "sector there cannot be read back: %s", job->id, job->info.node, sigs[0].type,
                                    sigs[0].offset, strerror(-k));
                else if (k == 0)
                        log_warning("job %" PRIu64 ": %s: a probe after the wipe finds %s at offset %" PRIu64 ", in the "
                                    "bytes the last pass wrote there (a chance match)", job->id, job->info.node,
                                    sigs[0].type, sigs[0].offset);
        }
        pthread_mutex_lock(&job->lock);
        device_signatures_free(job->sigs_after, job->n_sigs_after);
        job->sigs_after = sigs;
        job->n_sigs_after = n;
        job->sigs_checked = true;
        pthread_mutex_unlock(&job->lock);
        if (k == 1) {
                job_fail(job, -ESTALE, "%s: a probe after the wipe finds %s at offset %" PRIu64 ", which is not what "
                         "pass %u wrote there: something else wrote to the device during the wipe", job->info.node,
                         sigs[first].type, sigs[first].offset, job->n_passes);
                return -ESTALE;
        }
        return 0;
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
        job->current.at = real_s();
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
        } else
                job_finish(job, job_probe_after(job) < 0 ? JOB_FAILED : JOB_DONE, run);
}

/* Give up a unit: the last one of an aborted job ends it. */
static void job_unit_put(struct job *job, unsigned run) {
        (void) run;
        /* No unit of any run is held now: the run to end is the current one (a unit given back
         * late may be of an earlier run, claimed just before it ended). */
        if (atomic_fetch_sub(&job->active_chunks, 1) == 1 && atomic_load(&job->abort))
                job_end_aborted(job, atomic_load(&job->run));
        /* This thread's last touch of the job goes through its lock, which graveyard_sweep()
         * takes before it frees a forgotten job: the free is ordered after it. */
        pthread_mutex_lock(&job->lock);
        pthread_mutex_unlock(&job->lock);
}

/* The flusher: one thread that completes stages (a flush waits on the device, for a second or more
 * on a disk with a large cache), so that a worker never stops feeding its other devices for it,
 * and takes checkpoints. Jobs wait in two FIFOs; a job whose stage ends holds the unit of its
 * stage's end until the flusher is done with it. Stage ends go first. */
static struct {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        pthread_t thread;
        bool running, stop;
        struct job *head, *tail;
        struct job *ckpt_head, *ckpt_tail;
} flusher = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void *flusher_main(void *arg) {
        (void) arg;
        pthread_setname_np(pthread_self(), "wiped-flush");
        pthread_mutex_lock(&flusher.lock);
        for (;;) {
                struct job *job = flusher.head;
                unsigned run;

                if (job) {
                        flusher.head = job->flush_next;
                        if (!flusher.head)
                                flusher.tail = NULL;
                        job->flush_next = NULL;
                        run = job->flush_run;
                        pthread_mutex_unlock(&flusher.lock);
                        job_stage_complete(job, run);
                        job_unit_put(job, run);
                        pthread_mutex_lock(&flusher.lock);
                        continue;
                }
                job = flusher.ckpt_head;
                if (job) {
                        flusher.ckpt_head = job->ckpt_next;
                        if (!flusher.ckpt_head)
                                flusher.ckpt_tail = NULL;
                        job->ckpt_next = NULL;
                        pthread_mutex_unlock(&flusher.lock);
                        job_checkpoint(job, atomic_load(&job->run));
                        pthread_mutex_lock(&flusher.lock);
                        continue;
                }
                if (flusher.stop)
                        break;
                pthread_cond_wait(&flusher.cond, &flusher.lock);
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

/* Queue a checkpoint of a running job (main thread). Without a flusher, none is taken. */
static void flusher_post_checkpoint(struct job *job) {
        pthread_mutex_lock(&job->lock);
        if (job->ckpt_queued) {
                pthread_mutex_unlock(&job->lock);
                return;
        }
        job->ckpt_queued = true;
        pthread_mutex_unlock(&job->lock);
        pthread_mutex_lock(&flusher.lock);
        if (flusher.running && !flusher.stop) {
                job->ckpt_next = NULL;
                if (flusher.ckpt_tail)
                        flusher.ckpt_tail->ckpt_next = job;
                else
                        flusher.ckpt_head = job;
                flusher.ckpt_tail = job;
                pthread_cond_signal(&flusher.cond);
                pthread_mutex_unlock(&flusher.lock);
                return;
        }
        pthread_mutex_unlock(&flusher.lock);
        pthread_mutex_lock(&job->lock);
        job->ckpt_queued = false;
        pthread_mutex_unlock(&job->lock);
}

void job_release_chunk(struct job *job, const struct job_unit *completed, unsigned run) {
        /* Read before this unit counts as done: until then the stage cannot change under us. */
        uint64_t units = atomic_load(&job->stage_units);
        uint64_t done = 0;

        if (completed) {
                /* Written (or compared) whole: a checkpoint may record it once it is flushed. */
                atomic_fetch_or(&job->unit_bits[completed->index / 64], 1ULL << (completed->index % 64));
                atomic_fetch_add(&job->ckpt_pending, completed->bytes);
                done = atomic_fetch_add(&job->units_done, 1) + 1;
        }
        if (completed && done == units && !atomic_load(&job->abort)) {
                /* The flusher takes over this unit and gives it up when the stage is complete. */
                if (flusher_post(job, run))
                        return;
                job_stage_complete(job, run);
        }
        job_unit_put(job, run);
}

/* Stop a running job: it ends in state s (CANCELLED or PAUSED) unless it failed first. */
static int job_stop(struct job *job, enum job_state s, const char *why) {
        pthread_mutex_lock(&job->lock);
        if (job_state_is_final(job->state) || job->state == JOB_PAUSED) {
                pthread_mutex_unlock(&job->lock);
                return -EALREADY;
        }
        if (atomic_load(&job->finished)) {
                /* Its run is ending (every unit given back): a pause or the daemon's stop that is
                 * settling is turned into the end a cancel asks for; anything else is too late. */
                bool take = s == JOB_CANCELLED && !job->reverify && atomic_load(&job->abort) &&
                            (job->abort_state == JOB_PAUSED || job->abort_state == JOB_INTERRUPTED);

                job->cancel_pending |= take;
                pthread_mutex_unlock(&job->lock);
                return take ? 0 : -EALREADY;
        }
        /* A cancel overrides a pause still in progress; a pause never overrides a cancel. */
        if (s == JOB_PAUSED && atomic_load(&job->abort) && job->abort_state != JOB_PAUSED) {
                pthread_mutex_unlock(&job->lock);
                return -EALREADY;
        }
        if (job->error == 0) {
                job->abort_state = s;
                free(job->reason);
                job->reason = why ? strdup(why) : NULL;
        }
        pthread_mutex_unlock(&job->lock);
        atomic_store(&job->abort, true);
        log_info("job %" PRIu64 ": %s: %s requested", job->id, job->info.node, s == JOB_PAUSED ? "pause" : "cancel");
        /* Seen after abort was set: if no unit is held, nobody else will end the job.
         * A worker claiming concurrently counts itself in before it checks abort. */
        if (atomic_load(&job->active_chunks) == 0)
                job_end_aborted(job, atomic_load(&job->run));
        else
                /* Wake workers asleep on a rate limit: they give the job's units back now. */
                pool_wake(job->pool);
        return 0;
}

/* End a stopped job (paused or interrupted: no device open, nothing in flight) for good, in state
 * s (CANCELLED or FAILED) with why in its history (and, failed, error as its error): main thread.
 * Its report is then due. */
static void job_end_stopped(struct job *job, enum job_state s, int error, const char *why) {
        enum job_state was = job_get_state(job);

        pthread_mutex_lock(&job->lock);
        job->state = job->wipe_state = s;
        job->ended_at = job->wipe_ended = real_s();
        job->wipe_work = job->ckpt.bytes_done;
        free(job->reason);
        job->reason = NULL;
        if (s == JOB_FAILED) {
                job->error = error;
                free(job->error_msg);
                job->error_msg = strdup(why);
        }
        (void) job_event_add(job, JOB_EVENT_ENDED, why, job->ckpt.bytes_done);
        job->dirty = true;
        pthread_mutex_unlock(&job->lock);
        job->resume_until = 0;
        if (s == JOB_FAILED)
                log_job_event(LOG_ERR, LOG_EVENT_JOB_FAILED, job, "job %" PRIu64 ": %s", job->id, why);
        else
                log_job_event(LOG_WARNING, LOG_EVENT_JOB_CANCELLED, job, "job %" PRIu64 ": %s: %s (was %s)", job->id,
                              job->info.node, why, job_state_name(was));
}

int job_cancel(struct job *job) {
        enum job_state s;
        int r = job_stop(job, JOB_CANCELLED, NULL);

        if (r != -EALREADY)
                return r;
        /* A stopped job (also one that settled just now, between a look at it and the stop) has
         * no device open and nothing in flight: it ends here. Only this thread moves it on. */
        s = job_get_state(job);
        if ((s == JOB_PAUSED || s == JOB_INTERRUPTED) && atomic_load(&job->settled)) {
                job_end_stopped(job, JOB_CANCELLED, 0, "cancelled");
                return 0;
        }
        return r;
}

int job_pause(struct job *job, const char *why) {
        if (!atomic_load(&job->finished) && job->reverify)
                return -EOPNOTSUPP;
        return job_stop(job, JOB_PAUSED, why);
}

int job_verify_again(struct job *job, enum verify_mode mode, double percent, bool have_seed, uint64_t seed,
                     char *err, size_t err_len) {
        struct device_probe probe;
        const char *what = NULL;
        enum job_state s = job_get_state(job);
        struct job_pass *last = &job->passes[job->n_passes - 1];
        struct stage *stages;
        int fd, r;

        if (!job_state_is_final(s) || s == JOB_INTERRUPTED || !atomic_load(&job->settled)) {
                snprintf(err, err_len, "job %" PRIu64 ": %s%s", job->id, s == JOB_INTERRUPTED || s == JOB_PAUSED ?
                         "" : "still ", job_state_name(s));
                return -EBUSY;
        }
        if (!last->written) {
                snprintf(err, err_len, "job %" PRIu64 ": its last pass was never completely written", job->id);
                return -EINVAL;
        }
        /* What is on the device is a later job's: a check against this job's passes would say
         * nothing true of either. */
        if (job->superseded_by) {
                snprintf(err, err_len, "job %" PRIu64 ": %s was wiped again by a later job, %" PRIu64 ", since: "
                         "verify job %" PRIu64 " instead", job->id, job->info.node, job->superseded_by, job->superseded_by);
                return -ESTALE;
        }
        fd = device_open(job->info.node, job_wiping, &probe, err, err_len);
        if (fd < 0) {
                device_probe_done(&probe);
                return fd;
        }
        if (!device_identity_same(&job->info, &probe.id, true, &what)) {
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
        /* Room for the new sample's units; a worker may still look at the old ones (pool lock). */
        pool_lock(job->pool);
        r = job_alloc_bits(job);
        pool_unlock(job->pool);
        if (r < 0) {
                free(stages);
                close(fd);
                return r;
        }

        pthread_mutex_lock(&job->lock);
        job->fd = fd;
        job->state = JOB_RUNNING;
        job->abort_state = JOB_CANCELLED;
        /* Kept aside: a check that does not complete leaves the job as the wipe left it. */
        free(job->wipe_error_msg);
        job->wipe_error = job->error;
        job->wipe_error_msg = TAKE_PTR(job->error_msg);
        job->error = 0;
        job->ended_at = 0;
        job->reverify = true;
        job->run_verify = mode;
        job->run_percent = percent;
        pthread_mutex_unlock(&job->lock);
        job->rate_bps = 0;
        job->sample_bytes = 0;
        job->started_at = real_s();
        job->started_mono = job->sample_mono = mono_s();
        atomic_store(&job->last_ok_ns, mono_ns());
        /* A worker may still look at the job from its last run (under the pool lock). */
        pool_lock(job->pool);
        free(job->stages);
        job->stages = stages;
        job->n_stages = 1;
        job->work_total = stage_bytes(job, &job->stages[0]);
        atomic_store(&job->settled, false);
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
                if (j->error == 0 && !atomic_load(&j->abort)) {
                        j->abort_state = JOB_INTERRUPTED;
                        free(j->reason);
                        j->reason = strdup("the daemon was stopped");
                }
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
        double now = mono_s();

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

/* ---- the state directory: records, reports, loading, resuming, forgetting ---- */

static char *jobs_state_dir;    /* the state directory; NULL: nothing is kept */
static char *jobs_dir, *reports_dir;
static EVP_PKEY *host_key;      /* signs reports */
static struct job *graveyard;   /* forgotten jobs, freed once nothing can look at them */
static double prune_next;       /* CLOCK_MONOTONIC of the next look at old history */

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

/* ---- records ---- */

/* Write the job's record if it changed: main thread. Failures keep the job as it is in memory and
 * are retried; what was saved before stays. */
static void job_persist(struct job *job, double now) {
        _cleanup_json_ struct json_object *rec = NULL;
        _cleanup_free_ char *text = NULL;
        char name[32];
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
                if (job->persist_retry > 0)
                        log_info("job %" PRIu64 ": %s/%s: saved again", job->id, jobs_dir, name);
                job->persist_retry = 0;
                return;
        }
        /* Once per failure streak; the next try in 5 s. */
        if (job->persist_retry == 0)
                log_error("job %" PRIu64 ": %s: cannot save its record in %s: %s (the job goes on; its last saved "
                          "record stays)", job->id, job->info.node, jobs_dir, strerror(-r));
        job->persist_retry = now + 5.0;
        pthread_mutex_lock(&job->lock);
        job->dirty = true;
        pthread_mutex_unlock(&job->lock);
}

/* Whether the job's signed report is to be written (again): it ended, and its report is older
 * than its end or than its latest verification run. */
static bool job_report_due(struct job *j) {
        enum job_state s;
        size_t runs;

        pthread_mutex_lock(&j->lock);
        s = j->state;
        runs = j->n_runs;
        pthread_mutex_unlock(&j->lock);
        return state_ended(s) && atomic_load(&j->settled) &&
               (!j->reported || j->reported_end != j->ended_at || j->reported_runs != runs);
}

static int job_write_report(struct job *job, struct json_object **ret);

void job_persist_all(void) {
        for (struct job *j = jobs_head; j; j = j->next) {
                j->persist_retry = 0;
                if (job_report_due(j))
                        job_write_report(j, NULL);
                job_persist(j, mono_s());
        }
}

/* ---- reports ---- */

static char *read_small(const char *path) {
        FILE *f = fopen(path, "re");
        char buf[256];
        size_t n;

        if (!f)
                return NULL;
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = 0;
        buf[strcspn(buf, "\n")] = 0;
        return n > 0 ? strdup(buf) : NULL;
}

/* What the report adds to the job's: the host, the standard and its caveat, the history. */
static void report_add_context(struct job *job, struct json_object *o) {
        _cleanup_free_ char *mid = read_small("/etc/machine-id");
        struct json_object *host = json_object_new_object(), *errors = json_object_new_array();
        char hn[256] = "";

        (void) gethostname(hn, sizeof(hn) - 1);
        json_add(host, "hostname", json_object_new_string(hn));
        json_add(host, "machine_id", mid ? json_object_new_string(mid) : NULL);
        json_add(o, "host", host);
        json_add(o, "nist_category", json_object_new_string("Clear"));
        json_add(o, "caveat", job->info.rotational ? NULL : json_object_new_string(
                 "This is a solid-state or virtual device: its over-provisioned and remapped areas are not "
                 "addressable by writes and were not wiped. NIST SP 800-88 Purge needs the device's own "
                 "sanitize or secure erase command."));
        pthread_mutex_lock(&job->lock);
        json_add(o, "history", job_history_json(job));
        json_add(o, "interruptions", json_object_new_int((int) job->interruptions));
        json_add(o, "pauses", json_object_new_int((int) job->pauses));
        json_add(o, "resumes", json_object_new_int((int) job->resumes));
        if (job->error && errors)
                json_object_array_add(errors, error_json(job));
        pthread_mutex_unlock(&job->lock);
        json_add(o, "errors", errors);
        pthread_mutex_lock(&job->lock);
        json_add(o, "bad_ranges", job_bad_ranges_json(job));
        json_add(o, "bad_bytes", json_object_new_uint64(job->bad_bytes));
        pthread_mutex_unlock(&job->lock);
        json_add(o, "max_bad_bytes", json_object_new_uint64(job->max_bad));
}

/* Write the signed report of an ended job to STATE_DIR/reports/ID.json: main thread. 0 or -errno
 * (logged once per failure streak). With ret, the signed report is handed there too, also when it
 * could not be written (NULL when it could not be made, or there is no state directory). */
static int job_write_report(struct job *job, struct json_object **ret) {
        _cleanup_json_ struct json_object *o = NULL;
        _cleanup_free_ char *text = NULL, *path = NULL;
        double ended = job->ended_at;
        size_t runs;
        char name[32];
        size_t len;
        int r = -ENOMEM;

        if (ret)
                *ret = NULL;
        if (!reports_dir || !host_key)
                return 0;
        pthread_mutex_lock(&job->lock);
        runs = job->n_runs;
        pthread_mutex_unlock(&job->lock);
        snprintf(name, sizeof(name), "%" PRIu64 ".json", job->id);
        if (asprintf(&path, "%s/%s", reports_dir, name) < 0) {
                path = NULL;
                return -ENOMEM;
        }
        o = job_report_json(job, false);
        if (o) {
                json_add(o, "report_file", json_object_new_string(path));
                r = report_sign(o, host_key);
        }
        if (r == 0 && !(text = report_render(o, &len)))
                r = -ENOMEM;
        if (r == 0)
                r = state_write_atomic(reports_dir, name, text, len);
        if (ret && text)
                *ret = json_object_get(o);
        if (r < 0) {
                if (job->report_retry == 0)
                        log_error("job %" PRIu64 ": %s: cannot write its report %s: %s (tried again every 5 s)", job->id,
                                  job->info.node, path, strerror(-r));
                job->report_retry = mono_s() + 5.0;
                return r;
        }
        job->report_retry = 0;
        job->reported = true;
        job->reported_end = ended;
        job->reported_runs = runs;
        free(job->report_file);
        job->report_file = TAKE_PTR(path);
        pthread_mutex_lock(&job->lock);
        job->dirty = true;
        pthread_mutex_unlock(&job->lock);
        log_job_event(LOG_NOTICE, LOG_EVENT_REPORT_WRITTEN, job, "job %" PRIu64 ": %s: report written to %s", job->id,
                      job->info.node, job->report_file);
        return 0;
}

/* The stored signed report of job id, parsed. NULL with -errno in *r. */
static struct json_object *report_read(uint64_t id, int *r) {
        _cleanup_free_ char *path = NULL;
        struct json_object *o;

        if (!reports_dir) {
                *r = -ENOENT;
                return NULL;
        }
        if (asprintf(&path, "%s/%" PRIu64 ".json", reports_dir, id) < 0) {
                *r = -ENOMEM;
                return NULL;
        }
        o = json_object_from_file(path);
        if (!o || !json_object_is_type(o, json_type_object)) {
                *r = access(path, F_OK) == 0 ? -EBADMSG : -ENOENT;
                json_object_put(o);
                return NULL;
        }
        return o;
}

struct json_object *job_report_from_file(uint64_t id, int *r) {
        return report_read(id, r);
}

struct json_object *job_report(struct job *job, bool with_keys) {
        struct json_object *o = NULL;
        int r;

        if (with_keys)
                return job_report_json(job, true);
        /* A job that shows an end has its signed report: made now if the main loop's next tick was
         * to write it (or if writing it failed: it is signed all the same). */
        if (job_report_due(job)) {
                (void) job_write_report(job, &o);
                if (o)
                        return o;
        }
        if (job->reported && state_ended(job_get_state(job)) && atomic_load(&job->settled) &&
            (o = report_read(job->id, &r)))
                return o;
        return job_report_json(job, false);
}

/* ---- resume ---- */

/* Make the checkpoint's stage current again, its done units skipped (no unit of the job is held). */
static void job_stage_resume(struct job *job) {
        unsigned i = job->ckpt.stage;
        const struct stage *st = &job->stages[i];
        uint64_t units = stage_units(job, st), done = 0;

        atomic_store(&job->stage_index, i);
        atomic_store(&job->stage_units, units);
        atomic_store(&job->next_unit, 0);
        for (size_t w = 0; w < job->n_unit_words; w++)
                atomic_store(&job->unit_bits[w], job->ckpt.bits[w]);
        for (uint64_t u = 0; u < units; u++)
                done += job->ckpt.bits[u / 64] >> (u % 64) & 1;
        atomic_store(&job->units_done, done);
        atomic_store(&job->ckpt_pending, 0);
        atomic_store(&job->bytes_done, job->ckpt.bytes_done);
        atomic_store(&job->bytes_written, job->ckpt.bytes_written);
        pthread_mutex_lock(&job->lock);
        if (st->kind == STAGE_VERIFY) {
                job->current = job->ckpt.verify;
                job->current.mode = st->mode;
                job->current.percent = st->sampled ? job->sample.percent : 100.0;
                job->current.seed = st->sampled ? job->sample.seed : 0;
                job->current.subsections = st->sampled ? job->sample.subsections : 0;
                job->current.coverage = stage_bytes(job, st);
                if (job->current.started == 0)
                        job->current.started = real_s();
        }
        pthread_mutex_unlock(&job->lock);
}

int job_resume(struct job *job, const char *path, char *err, size_t err_len) {
        _cleanup_free_ char *node = NULL;
        struct device_probe probe;
        enum job_state s = job_get_state(job);
        const char *what = "";
        double mono = mono_s();
        bool all_done;
        int fd, r;
        char b[32], msg[512];

        if ((s != JOB_PAUSED && s != JOB_INTERRUPTED) || !atomic_load(&job->settled)) {
                /* Asked to stop and not stopped yet: busy, try again in a moment. */
                bool stopping = !job_state_is_final(s) && atomic_load(&job->abort) && !atomic_load(&job->settled);

                snprintf(err, err_len, "job %" PRIu64 ": %s", job->id, stopping ? "still stopping" :
                         job_state_is_final(s) ? "has ended" : "is running");
                return stopping ? -EBUSY : -EALREADY;
        }
        if (job->ckpt.stage >= job->n_stages) {
                snprintf(err, err_len, "job %" PRIu64 ": nothing left to do", job->id);
                return -EALREADY;
        }
        /* Where is the device now? Named: that one, if it is the job's. Else: under its old name if
         * that is still it, or wherever a device with its identity is. */
        if (path)
                node = strdup(path);
        else if (!device_identity_strong(&job->info)) {
                snprintf(err, err_len, "%s: the job's device has no serial, WWN or backing file to be recognised by: "
                         "name it (wipectl resume --device PATH)", job->info.node);
                return -ENODEV;
        } else {
                struct device_identity now;

                if (device_identity_of(job->info.node, &now) == 0 && device_identity_same(&job->info, &now, false, &what))
                        node = strdup(job->info.node);
                device_identity_done(&now);
                if (!node) {
                        r = device_find_identity(&job->info, &node);
                        if (r < 0) {
                                snprintf(err, err_len, "%s: %s", job->info.node, r == -ENODEV ?
                                         "no present device has the job's identity (model, serial, WWN, size, backing file)" :
                                         r == -ENOTUNIQ ? "several present devices have the job's identity" : strerror(-r));
                                return r == -ENOTUNIQ ? -ENODEV : r;
                        }
                }
        }
        if (!node)
                return -ENOMEM;
        fd = device_open(node, job_wiping, &probe, err, err_len);
        if (fd < 0) {
                device_probe_done(&probe);
                return fd;
        }
        if (!device_identity_same(&job->info, &probe.id, false, &what)) {
                snprintf(err, err_len, "%s: refusing: not the job's device (%s differs)", probe.id.node, what);
                device_probe_done(&probe);
                close(fd);
                return -ESTALE;
        }
        r = config_check_device(probe.id.node, probe.id.by_id, msg, sizeof(msg));
        if (r < 0) {
                snprintf(err, err_len, "%s: refusing: %s", probe.id.node, msg);
                device_probe_done(&probe);
                close(fd);
                return r;
        }
        /* Its name and links now; what it is stays the job's. */
        device_identity_done(&job->info);
        job->info = probe.id;
        probe.id = (struct device_identity) {};
        /* While it was stopped the device was anyone's: it must still hold what the checkpoint
         * says was written, or the job would end "done" over whatever was put there. */
        r = recheck_resume(job, fd, probe.sigs, probe.n_sigs, msg, sizeof(msg));
        device_probe_done(&probe);
        if (r == -ESTALE) {
                close(fd);
                snprintf(err, err_len, "%s; job %" PRIu64 " failed (wipe it again with a new job)", msg, job->id);
                job_end_stopped(job, JOB_FAILED, -ESTALE, msg);
                return -ESTALE;
        }
        if (r < 0) {
                close(fd);
                snprintf(err, err_len, "%s: cannot read back what the job wrote before going on: %s", job->info.node,
                         strerror(-r));
                return r;
        }

        pthread_mutex_lock(&job->lock);
        job->fd = fd;
        job->state = JOB_RUNNING;
        job->abort_state = JOB_CANCELLED;
        job->ended_at = 0;
        job->reverify = false;
        job->run_verify = job->verify;
        job->run_percent = job->verify_percent;
        free(job->reason);
        job->reason = NULL;
        job->resumes++;
        (void) job_event_add(job, JOB_EVENT_RESUMED, NULL, job->ckpt.bytes_done);
        job->dirty = true;
        pthread_mutex_unlock(&job->lock);
        job->rate_bps = 0;
        job->sample_bytes = job->ckpt.bytes_done;
        job->started_at = real_s();
        job->started_mono = job->sample_mono = job->ckpt_mono = mono;
        atomic_store(&job->last_ok_ns, mono_ns());
        job->resume_until = 0;
        /* A worker may still look at the job from its last run (under the pool lock). */
        pool_lock(job->pool);
        atomic_store(&job->abort, false);
        atomic_store(&job->settled, false);
        pthread_mutex_lock(&job->lock);
        atomic_fetch_add(&job->run, 1);
        atomic_store(&job->finished, false);
        pthread_mutex_unlock(&job->lock);
        job_stage_resume(job);
        all_done = atomic_load(&job->units_done) == atomic_load(&job->stage_units);
        pool_unlock(job->pool);
        log_job_event(LOG_NOTICE, LOG_EVENT_JOB_RESUMED, job, "job %" PRIu64 ": %s: resumed at pass %u (%s), %s of %s done",
                      job->id, job->info.node, job->stages[job->ckpt.stage].pass + 1,
                      job->stages[job->ckpt.stage].kind == STAGE_WRITE ? "write" : "verify",
                      units_size(b, sizeof(b), job->ckpt.bytes_done), units_size(msg, sizeof(msg), job->work_total));
        if (all_done) {
                /* Stopped after its stage's last unit and before the stage's end: end it now. */
                unsigned run = atomic_load(&job->run);

                atomic_fetch_add(&job->active_chunks, 1);
                if (!flusher_post(job, run)) {
                        job_stage_complete(job, run);
                        job_unit_put(job, run);
                }
        } else
                pool_add_job(job->pool, job);
        return 0;
}

/* ---- forget ---- */

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
        job->forgotten_at = mono_s();
        job->next = graveyard;
        graveyard = job;
        log_info("job %" PRIu64 ": %s: forgotten (%s)%s%s", job->id, job->info.node, job_state_name(s),
                 job->reported ? "; its report stays in " : "", job->reported ? job->report_file : "");
        return 0;
}

static void graveyard_sweep(double now, bool all) {
        for (struct job **p = &graveyard; *p;) {
                struct job *j = *p;

                /* Workers and the flusher let go of a job microseconds after it settled. */
                if (all || (now - j->forgotten_at > 5.0 && atomic_load(&j->active_chunks) == 0)) {
                        *p = j->next;
                        /* After every thread's last touch (see job_unit_put()). */
                        pthread_mutex_lock(&j->lock);
                        pthread_mutex_unlock(&j->lock);
                        job_free(j);
                } else
                        p = &j->next;
        }
}

/* Forget ended jobs older than history-max-age (their reports stay). */
static void job_prune(double mono) {
        unsigned days = config_settings()->history_max_age_days;
        double limit = real_s() - (double) days * 86400.0;

        if (days == 0 || mono < prune_next)
                return;
        prune_next = mono + 60.0;
        for (struct job *j = jobs_head, *next; j; j = next) {
                enum job_state s = job_get_state(j);

                next = j->next;
                if (state_ended(s) && j->ended_at > 0 && j->ended_at < limit &&
                    j->reported && job_forget(j) == 0)
                        log_info("job %" PRIu64 ": older than history-max-age (%u days)", j->id, days);
        }
}

/* ---- the main loop's tick ---- */

void job_tick(void) {
        const struct conffile *cfg = config_settings();
        double mono = mono_s();

        job_sample_rates();
        for (struct job *j = jobs_head; j; j = j->next) {
                enum job_state s = job_get_state(j);

                /* A checkpoint is due after an interval or an amount of work. */
                if (!atomic_load(&j->finished) && !atomic_load(&j->abort) && !j->reverify && s == JOB_RUNNING) {
                        uint64_t pending = atomic_load(&j->ckpt_pending);

                        if (pending > 0 && (pending >= cfg->checkpoint_bytes || mono - j->ckpt_mono >= cfg->checkpoint_interval)) {
                                j->ckpt_mono = mono;
                                flusher_post_checkpoint(j);
                        }
                }
                /* A device busy at a resume (a killed daemon's I/O still draining) is retried. */
                if (s == JOB_INTERRUPTED && j->resume_until > 0 && mono >= j->resume_next && atomic_load(&j->settled)) {
                        char err[512];
                        int r = job_resume(j, NULL, err, sizeof(err));

                        /* Busy (a killed daemon's I/O draining) or not there yet (disks still
                         * appearing at boot): tried again every second while the window lasts. */
                        if (r < 0 && job_get_state(j) != JOB_INTERRUPTED) {
                                /* It ended instead (the device changed while it was stopped). */
                                j->resume_until = 0;
                                log_warning("job %" PRIu64 ": not resumed: %s", j->id, err);
                        } else if ((r == -EBUSY || r == -ENODEV) && mono < j->resume_until) {
                                j->resume_next = mono + 1.0;
                                pthread_mutex_lock(&j->lock);
                                free(j->reason);
                                j->reason = strdup(err);
                                pthread_mutex_unlock(&j->lock);
                        } else if (r < 0) {
                                j->resume_until = 0;
                                pthread_mutex_lock(&j->lock);
                                free(j->reason);
                                j->reason = strdup(err);
                                j->dirty = true;
                                pthread_mutex_unlock(&j->lock);
                                log_warning("job %" PRIu64 ": not resumed: %s", j->id, err);
                        }
                }
                if (job_report_due(j) && mono >= j->report_retry)
                        job_write_report(j, NULL);
                job_persist(j, mono);
        }
        job_prune(mono);
        graveyard_sweep(mono, false);
}

/* ---- loading ---- */

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
        *elapsed = (*ended > 0 ? *ended : real_s()) - job->started_at;
        return o;
}

/* The job as status and watch show it: one snapshot, taken under its lock, so that its state,
 * whether it is stopping, its counters and its error always agree (a job settles under that lock). */
struct json_object *job_to_json(struct job *job) {
        _cleanup_json_ struct json_object *o = json_object_new_object();
        uint64_t done, total = job->work_total;
        const struct stage *st;
        struct json_object *v, *e;
        enum job_state s;
        double elapsed;

        if (!o)
                return NULL;
        pthread_mutex_lock(&job->lock);
        s = job->state;
        done = atomic_load(&job->bytes_done);
        st = &job->stages[atomic_load(&job->stage_index)];
        if (done > total)
                done = total;
        e = error_json(job);
        if (e)
                json_add(o, "error", e);
        elapsed = (job->ended_at > 0 ? job->ended_at : real_s()) - job->started_at;
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
        if (s == JOB_DONE || s == JOB_DONE_ERRORS)
                json_add(o, "eta_s", json_object_new_int64(0));
        else if (!job_state_is_final(s) && job->rate_bps > 1.0)
                json_add(o, "eta_s", json_object_new_int64((int64_t) ((double) (total - done) / job->rate_bps + 0.5)));
        else
                json_add(o, "eta_s", NULL);
        v = json_object_new_object();
        json_add(v, "mode", json_object_new_string(verify_mode_name(job->run_verify)));
        if (job->run_verify == VERIFY_SAMPLE)
                json_add(v, "percent", json_fixed(job->run_percent, 3));
        /* How the latest verification run ended, once the job is not running. */
        json_add(v, "result", job_state_is_final(s) && job->n_runs > 0 ?
                 json_object_new_string(verify_result_name(&job->runs[job->n_runs - 1])) : NULL);
        json_add(o, "verify", v);
        json_add(o, "sector_size", json_object_new_int64(job->info.logical_sector));
        json_add(o, "queue_depth", json_object_new_int64(job->queue_depth));
        json_add(o, "io_size", json_object_new_int64(job->piece));
        json_add(o, "max_rate", json_object_new_uint64(job->rate.bps));
        json_add(o, "started_at", json_object_new_int64((int64_t) job->started_at));
        json_add(o, "ended_at", job->ended_at > 0 ? json_object_new_int64((int64_t) job->ended_at) : NULL);
        json_add(o, "elapsed_s", json_fixed(elapsed, 3));
        json_add(o, "reason", job->reason ? json_object_new_string(job->reason) : NULL);
        if (job->ckpt.at > 0) {
                struct json_object *ck = json_object_new_object();

                json_add(ck, "at", json_object_new_int64((int64_t) job->ckpt.at));
                json_add(ck, "bytes_done", json_object_new_uint64(job->ckpt.bytes_done));
                json_add(o, "checkpoint", ck);
        } else
                json_add(o, "checkpoint", NULL);
        json_add(o, "interruptions", json_object_new_int((int) job->interruptions));
        json_add(o, "pauses", json_object_new_int((int) job->pauses));
        json_add(o, "resumes", json_object_new_int((int) job->resumes));
        json_add(o, "bad_bytes", json_object_new_uint64(job->bad_bytes));
        json_add(o, "superseded_by", job->superseded_by ? json_object_new_uint64(job->superseded_by) : NULL);
        /* Asked to stop (cancel, pause, a failure, the daemon's stop) and not stopped yet: its
         * workers give back their chunks, the device is being flushed and closed. */
        json_add(o, "stopping", json_object_new_boolean(atomic_load(&job->abort) && !atomic_load(&job->settled)));
        json_add(o, "identity", device_identity_json(&job->info));
        pthread_mutex_unlock(&job->lock);
        return TAKE_PTR(o);
}

static struct json_object *offsets_json(const struct verify_result *r) {
        struct json_object *a = json_object_new_array();

        for (unsigned i = 0; a && i < r->n_first; i++)
                json_object_array_add(a, json_object_new_uint64(r->first[i]));
        return a;
}

const char *verify_result_name(const struct verify_result *r) {
        switch (r->end) {
        case VERIFY_END_CANCELLED:
                return "cancelled";
        case VERIFY_END_INTERRUPTED:
                return "interrupted";
        case VERIFY_END_ERROR:
                return "error";
        default:
                return r->mismatched ? "failed" : "passed";
        }
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
        json_add(o, "result", json_object_new_string(verify_result_name(r)));
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
                        hex_encode(hexbuf, digest, 16);
                        json_add(p, "key_fingerprint", json_object_new_string(hexbuf));
                        if (with_keys) {
                                hex_encode(hexbuf, jp->key, jp->key_len);
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

/* The latest verification run that compared all it planned, or NULL. */
static const struct verify_result *latest_complete_run(const struct job *job) {
        for (size_t i = job->n_runs; i > 0; i--)
                if (job->runs[i - 1].end == VERIFY_END_COMPLETE)
                        return &job->runs[i - 1];
        return NULL;
}

/* The verification of the last pass: the latest complete run's figures (a later check cut short
 * says nothing of the device: it is in runs only), or the plan when none ran yet. */
static struct json_object *verification_json(struct job *job) {
        struct json_object *o = json_object_new_object(), *runs = json_object_new_array();
        const struct verify_result *latest = latest_complete_run(job);
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
        report_add_context(job, o);
        return TAKE_PTR(o);
}
