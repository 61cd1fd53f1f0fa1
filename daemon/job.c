/* The job table and a job's life, on the main thread: submit, finish (the one place a run ends),
 * fail, stop (pause, cancel, shutdown), a later verification, resume, and the main loop's tick.
 * Workers reach a job through job-stage.c; records and reports are in job-store.c and
 * job-report.c. The threads and the lock order are written above struct job in daemon.h. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <linux/fs.h>
#include <openssl/crypto.h>

#include "cleanup.h"
#include "clock.h"
#include "daemon-config.h"
#include "daemon.h"
#include "job-private.h"
#include "units.h"

struct job *jobs_head, *jobs_tail;      /* the table, oldest first */
uint64_t jobs_next_id = 1;              /* above every id in the state directory (job_set_state_dir) */
static atomic_uint_fast64_t key_serials;

uint64_t job_key_serial_next(void) {
        return atomic_fetch_add(&key_serials, 1) + 1;
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

void job_free(struct job *job) {
        if (!job)
                return;
        if (job->fd >= 0)
                close(job->fd);
        job_release_namespaces(job);
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
        free(job->end_hook);
        free(job->bad);
        free(job->runs);
        free(job->method);
        free(job->policy);
        job_record_done(&job->record);
        smart_job_free(job);
        free(job->purge_fallback);
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

/* Plan a job's chunks, sample, stages and unit bits again for its size (after a host protected
 * area was restored under it). 0 or -errno. */
static int job_replan(struct job *job, const struct job_request *rq, uint32_t io_size) {
        int r = chunk_plan_init(&job->plan, job->info.size, job->plan.sector, rq->chunk_size, io_size);

        if (r == 0 && job->verify == VERIFY_SAMPLE)
                r = job_plan_sample(job, rq->verify_percent, rq->have_seed, rq->seed);
        if (r == 0)
                r = job_plan_stages(job);
        if (r == 0)
                r = job_alloc_bits(job);
        if (r == 0)
                job_stage_enter(job, 0);
        return r;
}

/* Create a job for a probed device (takes the identity and signatures of the probe). Returns
 * NULL with *r on ENOMEM or when keys or plans cannot be had, or a firmware erase refused (err). */
static struct job *job_new(const char *device, struct device_probe *probe, const struct job_request *rq,
                           uint32_t io_size, struct pool *pool, int *r, char *err, size_t err_len) {
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
        if (rq->policy && !(job->policy = strdup(rq->policy))) {
                *r = -ENOMEM;
                job_free(job);
                return NULL;
        }
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
        for (unsigned i = 0; i < job->n_passes; i++)
                job->passes[i].pass = rq->passes[i];
        *r = job_resolve_firmware(job, probe, err, err_len);
        if (*r < 0) {
                job_free(job);
                return NULL;
        }
        for (unsigned i = 0; i < job->n_passes; i++) {
                struct job_pass *p = &job->passes[i];

                if (pass_op_firmware(p->pass.op)) {
                        /* Places and makes the markers of its proof (fw-step.c). */
                        p->key_len = KEYSTREAM_KEY_MAX;
                        if (getrandom(p->key, p->key_len, 0) != (ssize_t) p->key_len) {
                                *r = errno ? -errno : -EIO;
                                job_free(job);
                                return NULL;
                        }
                        continue;
                }
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
        /* Its own end hook: a policy's; a client cannot name one (it would run as root). */
        if (rq->end_hook && !(job->end_hook = strdup(rq->end_hook)) && *r == 0)
                *r = -ENOMEM;
        job->end_hook_timeout = rq->end_hook_timeout;
        job->hook.exit_status = -1;
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

/* Every check of a submit, for every device (all or nothing): the jobs it would make, in made[n]
 * (the caller frees them), with their devices open for the wipe; or, for a dry run, probed only
 * (nothing opened for writing, no namespace kept past the caller's job_free, no hidden area
 * restored). 0, or -errno with a message naming the refused device in err, made[] freed. */
static int job_prepare(struct pool *pool, const char *const *devices, size_t n, const struct job_request *rq,
                       bool dry_run, struct job **made, char *err, size_t err_len) {
        struct job_record defaults = {};
        const struct job_record *record = rq->record;
        size_t i;
        int r = 0;

        /* A request without a record (a bay policy's) gets the configuration's and a batch of its own. */
        if (!record) {
                r = job_record_defaults(&defaults);
                if (r < 0) {
                        snprintf(err, err_len, "%s: cannot make the job's record: %s", devices[0], strerror(-r));
                        return r;
                }
                record = &defaults;
        }

        /* The same device twice (perhaps under two names) is a mistake in the request. */
        for (i = 0; i < n; i++) {
                struct stat a, b;

                if (stat(devices[i], &a) < 0 || !S_ISBLK(a.st_mode))
                        continue;
                for (size_t k = 0; k < i; k++)
                        if (stat(devices[k], &b) == 0 && S_ISBLK(b.st_mode) && a.st_rdev == b.st_rdev) {
                                snprintf(err, err_len, "%s: refusing: named twice in one request (also as %s)",
                                         devices[i], devices[k]);
                                job_record_done(&defaults);
                                return -EINVAL;
                        }
        }

        for (i = 0; i < n; i++) {
                struct job_hidden_area hidden;
                struct device_probe probe;
                int fd = -1;

                if (dry_run) {
                        /* The probe's refusals are device_open()'s, in the same words. */
                        r = device_probe(devices[i], job_wiping, &probe);
                        if (r < 0)
                                snprintf(err, err_len, "%s: cannot probe: %s", devices[i], strerror(-r));
                        else if (probe.refusal) {
                                snprintf(err, err_len, "%s", probe.refusal_msg ? probe.refusal_msg : strerror(-probe.refusal));
                                r = probe.refusal;
                        }
                } else
                        r = fd = device_open(devices[i], job_wiping, &probe, err, err_len);
                if (r < 0) {
                        device_probe_done(&probe);
                        break;
                }
                r = 0;
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
                                if (fd >= 0)
                                        close(fd);
                                break;
                        }
                }
                r = job_hidden_area(&probe, &hidden, err, err_len);
                if (r < 0) {
                        device_probe_done(&probe);
                        if (fd >= 0)
                                close(fd);
                        break;
                }
                err[0] = '\0';
                made[i] = job_new(devices[i], &probe, rq, pool_io_size(pool), pool, &r, err, err_len);
                if (made[i])
                        made[i]->hidden = hidden;
                if (made[i] && job_record_copy(&made[i]->record, record, rq->asset_tags ? rq->asset_tags[i] : NULL) < 0) {
                        job_free(made[i]);
                        made[i] = NULL;
                        r = -ENOMEM;
                }
                device_probe_done(&probe);
                if (!made[i]) {
                        if (!err[0])
                                snprintf(err, err_len, "%s: cannot create job: %s", devices[i], strerror(-r));
                        if (fd >= 0)
                                close(fd);
                        break;
                }
                made[i]->fd = fd;
        }
        /* Drive health before anything is written: a failing drive refuses the submit under
         * smart-policy = refuse (smart.c). */
        if (r == 0)
                r = smart_jobs_before(made, n, err, err_len);
        /* Every device passed: hidden areas to restore are restored now (before this, a refusal
         * of any device would have left a drive changed), and a job whose device grew is planned
         * again for its new size. A dry run only says it would. */
        for (i = 0; r == 0 && !dry_run && i < n; i++) {
                struct job *job = made[i];

                r = job_hidden_restore(job, err, err_len);
                if (r == 0 && job->hidden.found && job->hidden.size_after && job->hidden.size_after != job->info.size) {
                        job->info.size = job->hidden.size_after;
                        r = job_replan(job, rq, pool_io_size(pool));
                        if (r < 0)
                                snprintf(err, err_len, "%s: cannot plan for its restored size: %s", job->info.node,
                                         strerror(-r));
                }
        }
        job_record_done(&defaults);
        if (r < 0) {
                /* All or nothing: nothing was written; release what was opened. */
                for (size_t k = 0; k < n && made[k]; k++) {
                        job_free(made[k]);
                        made[k] = NULL;
                }
        }
        return r;
}

int job_submit(struct pool *pool, const char *const *devices, size_t n, const struct job_request *rq,
               struct job **ret, char *err, size_t err_len) {
        _cleanup_free_ struct job **made = calloc(n, sizeof(*made));
        double rt = real_s(), mono = mono_s();
        size_t i;
        int r;

        if (!made)
                return -ENOMEM;
        r = job_prepare(pool, devices, n, rq, false, made, err, err_len);
        if (r < 0)
                return r;

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
                         "job %" PRIu64 ": %s: started: method %s (%u %s), %s, verify %s, %s, sector %u, %" PRIu64
                         " %s of %s, %u %s of %s in flight%s, rate limit %s%s%s",
                         job->id, job->info.node, job->method, job->n_passes,
                         units_plural(job->n_passes, "pass", "passes"), keystream_cipher_name(job->cipher),
                         verify_mode_name(job->verify), units_size((char[32]) {}, 32, job->info.size),
                         job->info.logical_sector, job->plan.n_chunks, units_plural((int64_t) job->plan.n_chunks, "chunk", "chunks"),
                         units_size((char[32]) {}, 32, job->plan.chunk_size), job->queue_depth,
                         units_plural(job->queue_depth, "I/O", "I/Os"), units_size((char[32]) {}, 32, job->piece),
                         job->info.rotational ? " (rotational: in order)" : "",
                         job->rate.bps ? units_rate((char[32]) {}, 32, (double) job->rate.bps) : "none",
                         job->policy ? ", by policy " : "", job->policy ? job->policy : "");
                pool_add_job(pool, job);
        }
        return 0;
}

/* The rate a wipe of job's device may be expected to run at, in bytes/s, and where it comes from:
 * the request's (or the configuration's) max-rate, else the average of the latest wipe of the
 * same device (its identity) that ended done, in this daemon's table (*from_job its id). 0 when
 * neither says. */
static double job_expected_rate(const struct job *job, const char **from, uint64_t *from_job) {
        double best_end = 0, rate = 0;

        *from = NULL;
        *from_job = 0;
        if (job->rate.bps > 0) {
                *from = "max_rate_bps";
                return (double) job->rate.bps;
        }
        for (struct job *j = jobs_head; j; j = j->next) {
                const char *what;
                double started, ended;
                uint64_t work;
                enum job_state s;

                if (!device_identity_same(&j->info, &job->info, !device_identity_strong(&j->info), &what))
                        continue;
                pthread_mutex_lock(&j->lock);
                s = j->wipe_state;
                started = j->wipe_started;
                ended = j->wipe_ended;
                work = j->wipe_work;
                pthread_mutex_unlock(&j->lock);
                if ((s != JOB_DONE && s != JOB_DONE_ERRORS) || ended <= started || work == 0 || ended < best_end)
                        continue;
                best_end = ended;
                rate = (double) work / (ended - started);
                *from = "job";
                *from_job = j->id;
        }
        return rate;
}

/* The plan of a job that a dry run made (never started): what would be done to which device, and
 * how long it would take. NULL on ENOMEM. */
static struct json_object *job_plan_json(const struct job *job) {
        _cleanup_json_ struct json_object *o = json_object_new_object();
        struct json_object *passes = json_object_new_array(), *est = json_object_new_object();
        char name[2 * METHOD_PATTERN_MAX + 8];
        const char *from;
        uint64_t from_job;
        double rate = job_expected_rate(job, &from, &from_job);
        bool firmware = false;

        if (!o || !passes || !est) {
                json_object_put(passes);
                json_object_put(est);
                return NULL;
        }
        json_object_object_add(o, "device", json_object_new_string(job->device));
        json_object_object_add(o, "node", json_object_new_string(job->info.node));
        json_object_object_add(o, "size_bytes", json_object_new_uint64(job->info.size));
        json_object_object_add(o, "identity", device_identity_json(&job->info));
        json_object_object_add(o, "method", json_object_new_string(job->method));
        for (unsigned i = 0; i < job->n_passes; i++) {
                const struct job_pass *jp = &job->passes[i];
                struct json_object *p = json_object_new_object();

                json_object_object_add(p, "pass", json_object_new_int((int) i + 1));
                json_object_object_add(p, "pattern", json_object_new_string(pass_name(&jp->pass, name, sizeof(name))));
                if (pass_op_firmware(jp->pass.op)) {
                        /* The command as it would be sent to this drive (no password: none is set). */
                        json_object_object_add(p, "firmware", fw_command_json(&jp->fw.cmd, false));
                        firmware = true;
                } else if (jp->pass.op != PASS_OP_WRITE)
                        json_object_object_add(p, "command", json_object_new_string(pass_op_command(jp->pass.op)));
                json_object_array_add(passes, p);
        }
        json_object_object_add(o, "passes", passes);
        json_object_object_add(o, "cipher", json_object_new_string(keystream_cipher_name(job->cipher)));
        json_object_object_add(o, "verify", json_object_new_string(verify_mode_name(job->verify)));
        json_object_object_add(o, "verify_percent", job->verify == VERIFY_SAMPLE ?
                               json_object_new_double(job->verify_percent) : NULL);
        json_object_object_add(o, "chunks", json_object_new_uint64(job->plan.n_chunks));
        json_object_object_add(o, "chunk_size", json_object_new_uint64(job->plan.chunk_size));
        json_object_object_add(o, "io_size", json_object_new_uint64(job->piece));
        json_object_object_add(o, "queue_depth", json_object_new_uint64(job->queue_depth));
        json_object_object_add(o, "in_order", json_object_new_boolean(job->max_holders == 1));
        json_object_object_add(o, "max_rate_bps", json_object_new_uint64(job->rate.bps));
        json_object_object_add(o, "hidden_area", !job->hidden.found ? NULL :
                               json_object_new_string(job->hidden.restore_pending ? "restore" : job->hidden.action));
        json_object_object_add(o, "purge_fallback", job->purge_fallback ? json_object_new_string(job->purge_fallback) : NULL);
        json_object_object_add(o, "work_total_bytes", json_object_new_uint64(job->work_total));
        /* The sanitization record the job would carry (wiped(8) "REPORTS"). */
        json_object_object_add(o, "media_type", json_object_new_string(job_media_type(&job->info)));
        if (job_record_json_add(&job->record, o) < 0) {
                json_object_put(est);
                return NULL;
        }
        /* Writes and verification reads at the rate; a firmware erase takes the drive's own time. */
        json_object_object_add(est, "duration_s", rate > 0 ? json_object_new_int64((int64_t) ((double) job->work_total / rate + 0.5)) : NULL);
        json_object_object_add(est, "rate_bps", rate > 0 ? json_object_new_int64((int64_t) rate) : NULL);
        json_object_object_add(est, "rate_from", from ? json_object_new_string(from) : NULL);
        json_object_object_add(est, "job", from_job ? json_object_new_uint64(from_job) : NULL);
        json_object_object_add(est, "firmware_not_counted", json_object_new_boolean(firmware));
        json_object_object_add(o, "estimate", est);
        return TAKE_PTR(o);
}

int job_dry_run(struct pool *pool, const char *const *devices, size_t n, const struct job_request *rq,
                struct json_object **ret, char *err, size_t err_len) {
        _cleanup_free_ struct job **made = calloc(n, sizeof(*made));
        _cleanup_json_ struct json_object *plans = json_object_new_array();
        int r;

        *ret = NULL;
        if (!made || !plans)
                return -ENOMEM;
        r = job_prepare(pool, devices, n, rq, true, made, err, err_len);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                struct json_object *p = r == 0 ? job_plan_json(made[i]) : NULL;

                if (!p)
                        r = -ENOMEM;
                else
                        json_object_array_add(plans, p);
                /* Never started: its namespaces are let go now, no record, no report. */
                job_free(made[i]);
        }
        if (r == 0)
                *ret = TAKE_PTR(plans);
        return r;
}

/* How a later verification that did not complete ended, from the state its run ends in. */
static enum verify_end reverify_end(enum job_state s) {
        return s == JOB_CANCELLED ? VERIFY_END_CANCELLED : s == JOB_FAILED ? VERIFY_END_ERROR : VERIFY_END_INTERRUPTED;
}

/* Have the kernel read the partition table of the whole disk open on fd again (BLKRRPART, as
 * "blockdev --rereadpt" does). 1 when it did, -errno when it refused (-EBUSY: a partition is in
 * use), 0 when the disk does not scan partitions at all (-EINVAL: a loop device without
 * partition scanning): then there was nothing stale to drop. */
static int job_reread_partitions(int fd) {
        if (ioctl(fd, BLKRRPART, 0) == 0)
                return 1;
        return errno == EINVAL ? 0 : -errno;
}

/* End run `run` of the job in state s (once per run; later calls, and calls for an older run,
 * do nothing). Closes the device; a job that stops (paused, interrupted) takes its last
 * checkpoint first. The new state is seen (status, watch, a resume or a new job on the device)
 * only once all of that is done and the job has settled: "paused" means the device is closed.
 * A later verification that does not complete (cancelled, interrupted, an I/O error) leaves the
 * job as the wipe left it, and is recorded as a run that ended so. */
void job_finish(struct job *job, enum job_state s, unsigned run) {
        enum verify_mode run_verify;
        enum verify_end end = VERIFY_END_COMPLETE;
        struct ckpt_snap c = {};
        bool reverify, stopped;
        int fd, reread = 0;
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
        /* A cancel that came after job_end_aborted() read the abort state (a pause or the daemon's
         * stop) and before this: that stop settles, then the cancel ends the job, as for a cancel
         * that comes while it settles (job_stop). */
        if ((s == JOB_PAUSED || s == JOB_INTERRUPTED) && !reverify && job->abort_state == JOB_CANCELLED)
                job->cancel_pending = true;
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
                /* A firmware step wrote nothing to flush (and a sanitizing drive refuses it). */
                if (c.kind != STAGE_WRITE || pass_op_firmware(job->passes[job->stages[c.stage].pass].pass.op) ||
                    fdatasync(fd) == 0)
                        ckpt_store(job, &c, true);
                else
                        log_warning("job %" PRIu64 ": %s: flush when stopping failed: %s: resuming from the previous "
                                    "checkpoint", job->id, job->info.node, strerror(errno));
                free(c.bits);
        }
        /* The old partitions are gone from the disk: let the kernel forget them too, through our
         * own exclusive descriptor (BLKRRPART needs no other opener of the disk or a partition),
         * also after a wipe that failed or was cancelled once it wrote something. The outcome
         * goes into the report (partitions_reread). Outside the lock: status requests must not
         * wait for the device. */
        if (fd >= 0 && !stopped && !reverify && job->info.partition == 0 &&
            (s == JOB_DONE || s == JOB_DONE_ERRORS || atomic_load(&job->bytes_done) > 0))
                reread = job_reread_partitions(fd);
        if (fd >= 0)
                close(fd);
        job_release_namespaces(job);

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
                              "job %" PRIu64 ": %s: done with errors: %s, %u %s written and flushed except %s"
                              " of bad sectors in %zu range%s, verification %s", job->id, job->info.node,
                              units_size(b, sizeof(b), job->info.size), job->n_passes,
                              units_plural(job->n_passes, "pass", "passes"),
                              units_size((char[32]) {}, 32, job->bad_bytes), job->n_bad,
                              job->n_bad == 1 ? "" : "s", verify_mode_name(job->verify));
        else if (s == JOB_DONE && pass_op_firmware(job->passes[job->n_passes - 1].pass.op))
                log_job_event(LOG_NOTICE, LOG_EVENT_JOB_DONE, job,
                              "job %" PRIu64 ": %s: done: %s, %u pass%s, the last a firmware erase (%s) proven by its "
                              "markers (NIST SP 800-88 Purge)", job->id, job->info.node,
                              units_size(b, sizeof(b), job->info.size), job->n_passes, job->n_passes == 1 ? "" : "es",
                              fw_action_name(job->passes[job->n_passes - 1].fw.cmd.action));
        else if (s == JOB_DONE)
                log_job_event(LOG_NOTICE, LOG_EVENT_JOB_DONE, job,
                              "job %" PRIu64 ": %s: done: %s, %u %s written and flushed, verification %s", job->id,
                              job->info.node, units_size(b, sizeof(b), job->info.size), job->n_passes,
                              units_plural(job->n_passes, "pass", "passes"),
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
        if (reread != 0)
                job->partitions_reread = reread;
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

void job_end_aborted(struct job *job, unsigned run) {
        enum job_state s;

        pthread_mutex_lock(&job->lock);
        s = job->abort_state;
        pthread_mutex_unlock(&job->lock);
        job_finish(job, s, run);
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
void job_end_stopped(struct job *job, enum job_state s, int error, const char *why) {
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
        /* What a firmware erase leaves is the drive's own: no pattern to compare with. */
        if (pass_op_firmware(last->pass.op)) {
                snprintf(err, err_len, "job %" PRIu64 ": its last pass is a firmware erase (%s), which has no pattern to "
                         "compare with: its proof (markers, sample) is in the report", job->id,
                         fw_action_name(last->fw.cmd.action));
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
        /* A firmware command still to come that erases every namespace: they are checked and held
         * again, as at submit. */
        for (unsigned i = job->stages[job->ckpt.stage].pass; r == 0 && i < job->n_passes; i++)
                if (pass_op_firmware(job->passes[i].pass.op) && !job->passes[i].written && !job->passes[i].fw.started)
                        r = job_hold_namespaces(job, &probe, &job->passes[i].fw.cmd, err, err_len);
        if (r < 0) {
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

void job_tick(void) {
        const struct conffile *cfg = config_settings();
        double mono = mono_s();

        job_sample_rates();
        hook_collect();
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
                smart_job_tick(j);
                /* Once its drive health after it ended is in (smart.c). */
                if (smart_job_settled(j) && job_report_due(j) && mono >= j->report_retry)
                        job_write_report(j, NULL);
                hook_job_check(j);
                job_persist(j, mono);
        }
        job_prune(mono);
        graveyard_sweep(mono, false);
}

