/* The job table and a job's life: submit, progress, cancel, failure, flush and end.
 * The table and the rate fields belong to the main thread; workers touch a job only through
 * its atomics and job_fail()/job_release_chunk(), which take job->lock for the state. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "cleanup.h"
#include "daemon.h"
#include "protocol.h"
#include "units.h"

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

const char *job_state_name(enum job_state s) {
        return s < _JOB_STATE_MAX ? state_names[s] : "unknown";
}

bool job_state_is_final(enum job_state s) {
        return s == JOB_DONE || s == JOB_FAILED || s == JOB_CANCELLED || s == JOB_INTERRUPTED;
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
        OPENSSL_cleanse(job->key, sizeof(job->key));
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
}

/* Create a job for an opened device (takes fd, and the identity and signatures of the probe).
 * Returns NULL on ENOMEM or when the random key or plan cannot be had (error in *r). */
static struct job *job_new(const char *device, int fd, struct device_probe *probe, enum keystream_cipher cipher,
                           uint32_t io_size, int *r) {
        struct job *job = calloc(1, sizeof(*job));

        if (!job) {
                *r = -ENOMEM;
                return NULL;
        }
        job->fd = fd;
        job->info = probe->id;
        probe->id = (struct device_identity) {};
        job->sigs_before = TAKE_PTR(probe->sigs);
        job->n_sigs_before = probe->n_sigs;
        probe->n_sigs = 0;
        pthread_mutex_init(&job->lock, NULL);
        job->device = strdup(device);
        job->cipher = cipher;
        job->key_len = keystream_key_size(cipher);
        if (!job->device) {
                *r = -ENOMEM;
                job_free(job);
                return NULL;
        }
        if (getrandom(job->key, job->key_len, 0) != (ssize_t) job->key_len) {
                *r = errno ? -errno : -EIO;
                job_free(job);
                return NULL;
        }
        /* Writes are whole physical sectors where the device has larger ones than logical. */
        if (job->info.physical_sector > job->info.logical_sector && job->info.physical_sector <= 65536 &&
            io_size % job->info.physical_sector == 0 && job->info.size % job->info.physical_sector == 0)
                *r = chunk_plan_init(&job->plan, job->info.size, job->info.physical_sector, 0, io_size);
        else
                *r = chunk_plan_init(&job->plan, job->info.size, job->info.logical_sector, 0, io_size);
        if (*r < 0) {
                job_free(job);
                return NULL;
        }
        job->state = JOB_RUNNING;
        job->abort_state = JOB_CANCELLED;
        return job;
}

int job_submit(struct pool *pool, const char *const *devices, size_t n, enum keystream_cipher cipher,
               struct job **ret, char *err, size_t err_len) {
        _cleanup_free_ struct job **made = calloc(n, sizeof(*made));
        double rt = now_realtime(), mono = now_monotonic();
        size_t i;
        int r = 0;

        if (!made)
                return -ENOMEM;
        cipher = keystream_cipher_resolve(cipher);

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
                made[i] = job_new(devices[i], fd, &probe, cipher, pool_io_size(pool), &r);
                device_probe_done(&probe);
                if (!made[i]) {
                        snprintf(err, err_len, "%s: cannot create job: %s", devices[i], strerror(-r));
                        close(fd);
                        break;
                }
        }
        if (r < 0) {
                /* All or nothing: nothing was written, release what was opened. */
                for (size_t k = 0; k < i; k++)
                        job_free(made[k]);
                return r;
        }

        for (i = 0; i < n; i++) {
                struct job *job = made[i];

                job->id = jobs_next_id++;
                job->started_at = rt;
                job->started_mono = job->sample_mono = mono;
                if (jobs_tail)
                        jobs_tail->next = job;
                else
                        jobs_head = job;
                jobs_tail = job;
                ret[i] = job;
                log_info("job %" PRIu64 ": %s: started: random pass, %s, %" PRIu64 " bytes, sector %u, %" PRIu64 " chunks of %" PRIu64 " bytes",
                         job->id, job->info.node, keystream_cipher_name(job->cipher), job->info.size,
                         job->info.logical_sector, job->plan.n_chunks, job->plan.chunk_size);
                pool_add_job(pool, job);
        }
        return 0;
}

/* End the job in state s (once; later calls do nothing). Closes the device. */
static void job_finish(struct job *job, enum job_state s) {
        char b[64];

        if (atomic_exchange(&job->finished, true))
                return;
        pthread_mutex_lock(&job->lock);
        job->state = s;
        job->ended_at = now_realtime();
        /* The old partitions are gone from the disk: let the kernel forget them too (best effort;
         * it fails harmlessly on devices without partitions or with one in use). */
        if (job->fd >= 0 && s == JOB_DONE)
                (void) ioctl(job->fd, BLKRRPART, 0);
        if (job->fd >= 0) {
                close(job->fd);
                job->fd = -1;
        }
        pthread_mutex_unlock(&job->lock);
        if (s == JOB_DONE)
                log_info("job %" PRIu64 ": %s: done: %s written and flushed", job->id, job->info.node,
                         units_size(b, sizeof(b), job->info.size));
        else
                log_info("job %" PRIu64 ": %s: %s after %" PRIu64 " bytes", job->id, job->info.node,
                         job_state_name(s), (uint64_t) atomic_load(&job->bytes_done));
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
}

static void job_end_aborted(struct job *job) {
        enum job_state s;

        pthread_mutex_lock(&job->lock);
        s = job->abort_state;
        pthread_mutex_unlock(&job->lock);
        job_finish(job, s);
}

/* After the flush: what a fresh libblkid probe finds on the device now (nothing, we hope). */
static void job_probe_after(struct job *job) {
        struct device_signature *sigs = NULL;
        size_t n = 0;
        int r = device_signatures_read(job->info.node, &sigs, &n);

        if (r < 0) {
                log_warning("job %" PRIu64 ": %s: cannot probe after the wipe: %s", job->id, job->info.node, strerror(-r));
                return;
        }
        if (n > 0)
                log_warning("job %" PRIu64 ": %s: a probe after the wipe still finds %s", job->id, job->info.node, sigs[0].type);
        pthread_mutex_lock(&job->lock);
        job->sigs_after = sigs;
        job->n_sigs_after = n;
        job->sigs_checked = true;
        pthread_mutex_unlock(&job->lock);
}

void job_release_chunk(struct job *job, bool completed) {
        uint64_t done = completed ? atomic_fetch_add(&job->chunks_done, 1) + 1 : atomic_load(&job->chunks_done);

        if (completed && done == job->plan.n_chunks && !atomic_load(&job->abort)) {
                /* Last chunk: the pass counts only after a flush that followed every write.
                 * The chunk is still held, so a concurrent cancel cannot end the job (and close
                 * the device) under the flush. */
                pthread_mutex_lock(&job->lock);
                job->state = JOB_FLUSHING;
                pthread_mutex_unlock(&job->lock);
                if (fdatasync(job->fd) < 0)
                        job_fail(job, -errno, "%s: flush failed: %s", job->info.node, strerror(errno));
                else
                        job_probe_after(job);
                atomic_fetch_sub(&job->active_chunks, 1);
                if (atomic_load(&job->abort))
                        job_end_aborted(job);
                else
                        job_finish(job, JOB_DONE);
                return;
        }
        if (atomic_fetch_sub(&job->active_chunks, 1) == 1 && atomic_load(&job->abort))
                job_end_aborted(job);
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
        /* Seen after abort was set: if no chunk is held, nobody else will end the job.
         * A worker claiming concurrently counts itself in before it checks abort. */
        if (atomic_load(&job->active_chunks) == 0)
                job_end_aborted(job);
        return 0;
}

void job_interrupt_all(void) {
        for (struct job *j = jobs_head; j; j = j->next) {
                if (atomic_load(&j->finished))
                        continue;
                pthread_mutex_lock(&j->lock);
                if (j->error == 0)
                        j->abort_state = JOB_INTERRUPTED;
                pthread_mutex_unlock(&j->lock);
                atomic_store(&j->abort, true);
                /* Jobs with chunks in flight end when their workers release them. */
                if (atomic_load(&j->active_chunks) == 0)
                        job_end_aborted(j);
        }
}

void job_sample_rates(void) {
        double now = now_monotonic();

        for (struct job *j = jobs_head; j; j = j->next) {
                uint64_t b = atomic_load(&j->bytes_done);
                double dt = now - j->sample_mono, inst;

                if (atomic_load(&j->finished) || dt < 0.2)
                        continue;
                inst = (double) (b - j->sample_bytes) / dt;
                /* Exponential smoothing over a few seconds; the first sample seeds it. */
                j->rate_bps = j->sample_bytes == 0 && j->rate_bps == 0 ? inst : 0.7 * j->rate_bps + 0.3 * inst;
                j->sample_bytes = b;
                j->sample_mono = now;
        }
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
        uint64_t done = atomic_load(&job->bytes_done), total = job->info.size;
        enum job_state s;
        double ended, elapsed;
        _cleanup_json_ struct json_object *o = job_json_snapshot(job, &s, &ended, &elapsed);

        if (!o)
                return NULL;
        json_add(o, "id", json_object_new_uint64(job->id));
        json_add(o, "device", json_object_new_string(job->device));
        json_add(o, "node", json_object_new_string(job->info.node));
        json_add(o, "state", json_object_new_string(job_state_name(s)));
        json_add(o, "method", json_object_new_string("random"));
        json_add(o, "cipher", json_object_new_string(keystream_cipher_name(job->cipher)));
        json_add(o, "pass", json_object_new_int(1));
        json_add(o, "passes", json_object_new_int(1));
        json_add(o, "bytes_done", json_object_new_uint64(done));
        json_add(o, "bytes_total", json_object_new_uint64(total));
        json_add(o, "rate_bps", json_fixed(job_state_is_final(s) ? 0.0 : job->rate_bps, 0));
        if (s == JOB_DONE)
                json_add(o, "eta_s", json_object_new_int64(0));
        else if (!job_state_is_final(s) && job->rate_bps > 1.0)
                json_add(o, "eta_s", json_object_new_int64((int64_t) ((double) (total - done) / job->rate_bps + 0.5)));
        else
                json_add(o, "eta_s", NULL);
        json_add(o, "sector_size", json_object_new_int64(job->info.logical_sector));
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

struct json_object *job_report_json(struct job *job, bool with_keys) {
        _cleanup_json_ struct json_object *o = NULL;
        struct json_object *passes, *p;
        uint8_t digest[32];
        char hexbuf[2 * KEYSTREAM_KEY_MAX + 1];
        unsigned dlen = 0;
        uint64_t written = atomic_load(&job->bytes_done);
        double ended, duration;
        enum job_state s;

        o = job_json_snapshot(job, &s, &ended, &duration);
        if (!o)
                return NULL;
        json_add(o, "job", json_object_new_uint64(job->id));
        json_add(o, "tool", json_object_new_string(PACKAGE_NAME " " PACKAGE_VERSION));
        json_add(o, "device", json_object_new_string(job->device));
        json_add(o, "node", json_object_new_string(job->info.node));
        json_add(o, "state", json_object_new_string(job_state_name(s)));
        json_add(o, "method", json_object_new_string("random"));
        json_add(o, "bytes_total", json_object_new_uint64(job->info.size));
        json_add(o, "bytes_written", json_object_new_uint64(written));
        json_add(o, "sector_size", json_object_new_int64(job->info.logical_sector));
        json_add(o, "started_at", json_object_new_int64((int64_t) job->started_at));
        json_add(o, "ended_at", ended > 0 ? json_object_new_int64((int64_t) ended) : NULL);
        json_add(o, "duration_s", json_fixed(duration, 3));
        json_add(o, "avg_rate_bps", json_fixed(duration > 0 ? (double) written / duration : 0.0, 0));

        passes = json_object_new_array();
        p = json_object_new_object();
        if (!passes || !p) {
                json_object_put(passes);
                json_object_put(p);
                return NULL;
        }
        json_add(p, "pass", json_object_new_int(1));
        json_add(p, "pattern", json_object_new_string("random"));
        json_add(p, "cipher", json_object_new_string(keystream_cipher_name(job->cipher)));
        /* The fingerprint identifies the key without revealing it: SHA-256, first 16 bytes. */
        EVP_Digest(job->key, job->key_len, digest, &dlen, EVP_sha256(), NULL);
        hex(hexbuf, digest, 16);
        json_add(p, "key_fingerprint", json_object_new_string(hexbuf));
        if (with_keys) {
                hex(hexbuf, job->key, job->key_len);
                json_add(p, "key", json_object_new_string(hexbuf));
        }
        OPENSSL_cleanse(hexbuf, sizeof(hexbuf));
        json_object_array_add(passes, p);
        json_add(o, "passes", passes);
        json_add(o, "identity", device_identity_json(&job->info));
        json_add(o, "signatures_before", device_signatures_json(job->sigs_before, job->n_sigs_before));
        pthread_mutex_lock(&job->lock);
        json_add(o, "signatures_after", job->sigs_checked ? device_signatures_json(job->sigs_after, job->n_sigs_after) : NULL);
        pthread_mutex_unlock(&job->lock);
        return TAKE_PTR(o);
}
