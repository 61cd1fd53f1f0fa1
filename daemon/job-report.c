/* What a job says about itself, on the main thread: the signed report (written once a job ended,
 * and again after a later verification), the report made on demand, the JSON of status and watch,
 * the sd_notify summary and the smoothed rates. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "cleanup.h"
#include "clock.h"
#include "strutil.h"
#include "daemon-config.h"
#include "daemon.h"
#include "deliver.h"
#include "job-private.h"
#include "sign.h"
#include "protocol.h"
#include "units.h"

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

/* NIST SP 800-88's category of what was done: Purge once a firmware erase completed and was
 * proven, else Clear (overwrites, and purge's fallback). */
static const char *nist_category(const struct job *job) {
        enum job_state s = job->reverify ? job->wipe_state : job->state;

        /* A job that failed (say, a signature found after the erase) or was cancelled is no Purge. */
        if (s == JOB_FAILED || s == JOB_CANCELLED)
                return "Clear";
        for (unsigned i = 0; i < job->n_passes; i++) {
                if (job->passes[i].written && pass_op_firmware(job->passes[i].pass.op))
                        return "Purge";
        }
        return "Clear";
}

/* What the report adds to the job's: the host, the standard and its caveat, the history. */
static void report_add_context(struct job *job, struct json_object *o) {
        _cleanup_free_ char *mid = read_small("/etc/machine-id");
        struct json_object *host = json_object_new_object(), *errors = json_object_new_array();
        const char *category;
        char hn[256] = "";

        (void) gethostname(hn, sizeof(hn) - 1);
        json_add(host, "hostname", json_object_new_string(hn));
        json_add(host, "machine_id", mid ? json_object_new_string(mid) : NULL);
        json_add(o, "host", host);
        pthread_mutex_lock(&job->lock);
        category = nist_category(job);
        pthread_mutex_unlock(&job->lock);
        json_add(o, "nist_category", json_object_new_string(category));
        json_add(o, "caveat", job->info.rotational || strcmp(category, "Purge") == 0 ? NULL : json_object_new_string(
                 "This is a solid-state or virtual device: its over-provisioned and remapped areas are not "
                 "addressable by writes and were not wiped. NIST SP 800-88 Purge needs the device's own "
                 "sanitize or secure erase command."));
        pthread_mutex_lock(&job->lock);
        json_add(o, "history", state_history_json(job));
        json_add(o, "interruptions", json_object_new_int((int) job->interruptions));
        json_add(o, "pauses", json_object_new_int((int) job->pauses));
        json_add(o, "resumes", json_object_new_int((int) job->resumes));
        json_add(o, "partitions_reread", job->partitions_reread ? json_object_new_boolean(job->partitions_reread > 0) : NULL);
        json_add(o, "partitions_reread_error", job->partitions_reread < 0 ?
                 json_object_new_string(protocol_errno_name(job->partitions_reread)) : NULL);
        if (job->error && errors)
                json_object_array_add(errors, error_json(job));
        pthread_mutex_unlock(&job->lock);
        json_add(o, "errors", errors);
        pthread_mutex_lock(&job->lock);
        json_add(o, "bad_ranges", state_bad_ranges_json(job));
        json_add(o, "bad_bytes", json_object_new_uint64(job->bad_bytes));
        pthread_mutex_unlock(&job->lock);
        json_add(o, "max_bad_bytes", json_object_new_uint64(job->max_bad));
}

/* How the drive was sanitized, in the words of a certificate: the technique of its passes (a
 * firmware erase written, else what the writes were). Job lock held. */
static const char *sanitization_technique(const struct job *job) {
        const char *t = NULL;

        for (unsigned i = 0; i < job->n_passes; i++) {
                const struct job_pass *jp = &job->passes[i];

                switch (jp->pass.op) {
                case PASS_OP_WRITE:
                case PASS_OP_ZEROOUT:
                        if (!t)
                                t = "overwrite";
                        break;
                case PASS_OP_DISCARD:
                        if (!t)
                                t = "discard";
                        break;
                case PASS_OP_SECURE_DISCARD:
                        if (!t)
                                t = "secure discard";
                        break;
                default:
                        if (!pass_op_firmware(jp->pass.op) || !jp->written)
                                break;
                        switch (jp->fw.cmd.action) {
                        case FW_ACTION_SANITIZE_CRYPTO:
                                return "crypto erase";
                        case FW_ACTION_SANITIZE_BLOCK:
                                return "block erase";
                        case FW_ACTION_SANITIZE_OVERWRITE:
                                return "overwrite (firmware)";
                        case FW_ACTION_NVME_FORMAT:
                                return jp->fw.cmd.ses == 2 ? "crypto erase" : "user data erase (format)";
                        case FW_ACTION_ATA_SECURITY_ERASE:
                                return jp->fw.cmd.enhanced ? "secure erase (enhanced)" : "secure erase";
                        default:
                                break;
                        }
                }
        }
        return t ? t : "none";
}

/* The certificate's summary of the verification, from the report's own "verification". */
static void sanitization_verification(struct json_object *o, struct json_object *san) {
        struct json_object *ver = NULL, *v;
        const char *mode = "none", *result = "not run";
        char buf[64];

        if (json_object_object_get_ex(o, "verification", &ver) && ver) {
                if (json_object_object_get_ex(ver, "mode", &v) && json_object_is_type(v, json_type_string))
                        mode = json_object_get_string(v);
                if (json_object_object_get_ex(ver, "result", &v) && json_object_is_type(v, json_type_string))
                        result = json_object_get_string(v);
        }
        if (ver && json_object_object_get_ex(ver, "by", NULL))
                snprintf(buf, sizeof(buf), "firmware erase proof");
        else if (strcmp(mode, "sample") == 0)
                snprintf(buf, sizeof(buf), "sampled read-back (%g%%)",
                         json_object_object_get_ex(ver, "percent", &v) && v ? json_object_get_double(v) : 0.0);
        else if (strcmp(mode, "none") == 0)
                snprintf(buf, sizeof(buf), "none");
        else
                snprintf(buf, sizeof(buf), "full read-back");
        json_add(san, "verification_method", json_object_new_string(buf));
        json_add(san, "verification_result", json_object_new_string(result));
}

/* The sanitization record (NIST SP 800-88's sample certificate, IEEE 2883): what was given at
 * submission, the host's DMI identity, the media type, the manufacturer and how it was done. */
static int report_add_record(struct job *job, struct json_object *o) {
        struct json_object *host = NULL, *san = json_object_new_object();
        const char *manufacturer = job_manufacturer(&job->info);

        if (!san || job_record_json_add(&job->record, o) < 0) {
                json_object_put(san);
                return -ENOMEM;
        }
        if (json_object_object_get_ex(o, "host", &host) && host)
                json_add(host, "dmi", job_host_dmi_json());
        json_add(o, "media_type", json_object_new_string(job_media_type(&job->info)));
        json_add(o, "manufacturer", manufacturer ? json_object_new_string(manufacturer) : NULL);
        pthread_mutex_lock(&job->lock);
        json_add(san, "category", json_object_new_string(nist_category(job)));
        json_add(san, "method", json_object_new_string(job->method));
        json_add(san, "technique", json_object_new_string(sanitization_technique(job)));
        pthread_mutex_unlock(&job->lock);
        json_add(san, "tool", json_object_new_string(PACKAGE_NAME " " PACKAGE_VERSION));
        sanitization_verification(o, san);
        json_add(o, "sanitization", san);
        return 0;
}

/* Write the signed report of an ended job to STATE_DIR/reports/ID.json: main thread. 0 or -errno
 * (logged once per failure streak). With ret, the signed report is handed there too, also when it
 * could not be written (NULL when it could not be made, or there is no state directory). */
int job_write_report(struct job *job, struct json_object **ret) {
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
        if (r == 0)
                r = deliver_enqueue(job, text, len);
        if (ret && text)
                *ret = json_object_get(o);
        if (r < 0) {
                if (job->report_retry == 0)
                        log_error("job %" PRIu64 ": %s: cannot write its report %s: %s (tried again every 5 s)", job->id,
                                  job->info.node, path, strerror(-r));
                job->report_retry = mono_s() + JOB_WRITE_RETRY;
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

bool job_report_pending(struct job *job) {
        if (!reports_dir || !host_key || !state_ended(job_get_state(job)) || job->report_retry > 0)
                return false;
        return !atomic_load(&job->settled) || !smart_job_settled(job) || job_report_due(job);
}

void job_write_due_reports(void) {
        double mono = mono_s();

        for (struct job *j = jobs_head; j; j = j->next)
                if (smart_job_settled(j) && job_report_due(j) && mono >= j->report_retry)
                        (void) job_write_report(j, NULL);
}

struct json_object *job_report(struct job *job, bool with_keys) {
        struct json_object *o = NULL;
        int r;

        if (with_keys)
                return job_report_json(job, true);
        /* A job that shows an end has its signed report: made now if the main loop's next tick was
         * to write it (or if writing it failed: it is signed all the same). */
        if (job_report_due(job) && smart_job_settled(job)) {
                (void) job_write_report(job, &o);
                if (o)
                        return o;
        }
        if (job->reported && state_ended(job_get_state(job)) && atomic_load(&job->settled) &&
            (o = report_read(job->id, &r)))
                return o;
        return job_report_json(job, false);
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

int json_add(struct json_object *o, const char *k, struct json_object *v) {
        return json_object_object_add(o, k, v);
}

/* A duration or rate with a fixed number of decimals, serialised as written (not 0.56000000000000005). */
static struct json_object *json_fixed(double v, int decimals) {
        char buf[64];

        snprintf(buf, sizeof(buf), "%.*f", decimals, v);
        return json_object_new_double_s(strtod(buf, NULL), buf);
}

struct json_object *error_json(struct job *job) {
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

/* Where the job is in its current stage (a pass written or read back, or a firmware erase), in
 * device bytes: *base the work of the stages before it, *len the stage's own bytes. */
static const struct stage *job_stage_position(const struct job *job, uint64_t *base, uint64_t *len) {
        unsigned i = atomic_load(&job->stage_index);
        const struct stage *st;

        if (i >= job->n_stages)
                i = job->n_stages - 1;
        *base = 0;
        for (unsigned k = 0; k < i; k++)
                *base += stage_bytes(job, &job->stages[k]);
        st = &job->stages[i];
        *len = stage_bytes(job, st);
        return st;
}

/* The job as status and watch show it: one snapshot, taken under its lock, so that its state,
 * whether it is stopping, its counters and its error always agree (a job settles under that lock).
 * Names follow wiped(8) NAMES AND UNITS; the deprecated ones are sent beside the new for one
 * release (removed in the next): id, size, bytes_done, bytes_total, max_rate, checkpoint.bytes_done. */
struct json_object *job_to_json(struct job *job) {
        _cleanup_json_ struct json_object *o = json_object_new_object();
        uint64_t done, total = job->work_total, redo = 0, base, len, phase_done;
        const struct stage *st;
        struct json_object *v, *e;
        enum job_state s;
        double elapsed, rate;

        if (!o)
                return NULL;
        pthread_mutex_lock(&job->lock);
        s = job->state;
        done = atomic_load(&job->bytes_done);
        st = job_stage_position(job, &base, &len);
        if (done > total)
                done = total;
        /* A stopped job counts what its checkpoint holds: what its workers wrote after it (parts of
         * units) is written again when it resumes, so it is not counted as done (and not dropped at
         * the resume). */
        if ((s == JOB_PAUSED || s == JOB_INTERRUPTED) && job->ckpt.at > 0 && job->ckpt.bytes_done <= done) {
                redo = done - job->ckpt.bytes_done;
                done = job->ckpt.bytes_done;
        }
        phase_done = done > base ? done - base : 0;
        if (phase_done > len || s == JOB_DONE || s == JOB_DONE_ERRORS)
                phase_done = len;
        /* A running job's rate is the smoothed one, a stopped job's none; an ended job's is its
         * average over the wipe. */
        if (s == JOB_PAUSED || s == JOB_INTERRUPTED)
                rate = 0.0;
        else if (!job_state_is_final(s))
                rate = job->rate_bps;
        else {
                double d = (job->wipe_ended > 0 ? job->wipe_ended : job->ended_at) - job->wipe_started;
                uint64_t w = job->wipe_ended > 0 ? job->wipe_work : done;

                rate = job->wipe_started > 0 && d > 0 ? (double) w / d : 0.0;
        }
        e = error_json(job);
        if (e)
                json_add(o, "error", e);
        elapsed = (job->ended_at > 0 ? job->ended_at : real_s()) - job->started_at;
        json_add(o, "job", json_object_new_uint64(job->id));
        json_add(o, "id", json_object_new_uint64(job->id));             /* deprecated: job */
        json_add(o, "device", json_object_new_string(job->device));
        json_add(o, "node", json_object_new_string(job->info.node));
        json_add(o, "state", json_object_new_string(job_state_name(s)));
        json_add(o, "method", json_object_new_string(job->method));
        json_add(o, "policy", job->policy ? json_object_new_string(job->policy) : NULL);
        /* The sanitization record as submitted: batch, asset tag, customer, ... (job-record.c). */
        if (job_record_json_add(&job->record, o) < 0) {
                pthread_mutex_unlock(&job->lock);
                return NULL;
        }
        json_add(o, "pass_list", pass_list_json(job));
        json_add(o, "cipher", json_object_new_string(keystream_cipher_name(job->cipher)));
        json_add(o, "keystream_backends", state_backends_json(atomic_load(&job->keystream_backends)));
        json_add(o, "pass", json_object_new_int((int) st->pass + 1));
        json_add(o, "passes", json_object_new_int((int) job->n_passes));
        json_add(o, "phase", job_state_is_final(s) ? NULL :
                 json_object_new_string(s == JOB_FLUSHING ? "flush" : st->kind == STAGE_VERIFY ? "verify" :
                                        pass_op_firmware(job->passes[st->pass].pass.op) ? "firmware" : "write"));
        if (pass_op_firmware(job->passes[st->pass].pass.op)) {
                const struct job_fw *f = &job->passes[st->pass].fw;
                struct json_object *fw = json_object_new_object();

                json_add(fw, "action", json_object_new_string(fw_action_name(f->cmd.action)));
                json_add(fw, "started", json_object_new_boolean(f->started));
                json_add(fw, "drive_status", json_object_new_string(fw_run_state_name(f->status.state)));
                json_add(fw, "drive_status_text", f->status.text[0] ? json_object_new_string(f->status.text) : NULL);
                json_add(o, "firmware", fw);
        }
        json_add(o, "nist_category", json_object_new_string(nist_category(job)));
        json_add(o, "size_bytes", json_object_new_uint64(job->info.size));
        json_add(o, "size", json_object_new_uint64(job->info.size));    /* deprecated: size_bytes */
        /* The current phase in device bytes (a sampled verification reads its sample only)... */
        json_add(o, "phase_done_bytes", json_object_new_uint64(phase_done));
        json_add(o, "phase_total_bytes", json_object_new_uint64(len));
        /* ... and the work over all passes and verifications. */
        json_add(o, "work_done_bytes", json_object_new_uint64(done));
        json_add(o, "work_total_bytes", json_object_new_uint64(total));
        json_add(o, "bytes_done", json_object_new_uint64(done));        /* deprecated: work_done_bytes */
        json_add(o, "bytes_total", json_object_new_uint64(total));      /* deprecated: work_total_bytes */
        json_add(o, "rate_bps", json_fixed(rate, 0));
        if (s == JOB_DONE || s == JOB_DONE_ERRORS)
                json_add(o, "eta_s", json_object_new_int64(0));
        else if (!job_state_is_final(s) && rate > 1.0)
                json_add(o, "eta_s", json_object_new_int64((int64_t) ((double) (total - done) / rate + 0.5)));
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
        /* A rotational device is written by one worker at a time, in order (worker.c). */
        json_add(o, "in_order", json_object_new_boolean(job->max_holders == 1));
        json_add(o, "io_size", json_object_new_int64(job->piece));
        json_add(o, "max_rate_bps", json_object_new_uint64(job->rate.bps));
        json_add(o, "max_rate", json_object_new_uint64(job->rate.bps)); /* deprecated: max_rate_bps */
        json_add(o, "started_at", json_object_new_int64((int64_t) job->started_at));
        json_add(o, "ended_at", job->ended_at > 0 ? json_object_new_int64((int64_t) job->ended_at) : NULL);
        json_add(o, "elapsed_s", json_fixed(elapsed, 3));
        json_add(o, "reason", job->reason ? json_object_new_string(job->reason) : NULL);
        if (job->ckpt.at > 0) {
                struct json_object *ck = json_object_new_object();

                json_add(ck, "at", json_object_new_int64((int64_t) job->ckpt.at));
                json_add(ck, "work_done_bytes", json_object_new_uint64(job->ckpt.bytes_done));
                json_add(ck, "bytes_done", json_object_new_uint64(job->ckpt.bytes_done)); /* deprecated */
                /* Written after the checkpoint by a stopped job: written again when it resumes. */
                json_add(ck, "redo_bytes", json_object_new_uint64(redo));
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
        /* Interrupted, and to be resumed without a user: at the first tick after a start (or while
         * its device is busy at it), or, stopped by this daemon's own stop, at the next start
         * (resume = auto). A client waiting for the job keeps waiting. */
        json_add(o, "resuming", json_object_new_boolean(s == JOB_INTERRUPTED && (job->resume_until > 0 ||
                 (job->abort_state == JOB_INTERRUPTED && !config_settings()->resume_manual))));
        json_add(o, "identity", device_identity_json(&job->info));
        pthread_mutex_unlock(&job->lock);
        /* The end hook's outcome (wiped(8) HOOKS); null when the job has none (yet). */
        json_add(o, "hook", hook_json(job, false));
        deliver_job_json(o, job->id, job->reported ? job->report_file : NULL);
        smart_status_add(job, o);
        /* Ended, with its signed report still to come (a moment: the drive health after it). */
        json_add(o, "report_pending", json_object_new_boolean(job_report_pending(job)));
        return TAKE_PTR(o);
}

static struct json_object *offsets_json(const struct verify_result *r) {
        struct json_object *a = json_object_new_array();

        for (unsigned i = 0; a && i < r->n_first; i++)
                json_object_array_add(a, json_object_new_uint64(r->first[i]));
        return a;
}

const char *verify_result_name(const struct verify_result *r) {
        return verify_result_word(r->end, r->mismatched != 0);
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
                json_add(o, "read_bytes", json_object_new_uint64(r->coverage));
                json_add(o, "bytes_read", json_object_new_uint64(r->coverage)); /* deprecated: read_bytes */
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
                if (pass_op_firmware(jp->pass.op))
                        /* The drive's own erase: its command, status and proof. */
                        json_add(p, "firmware", state_fw_json(&jp->fw, false));
                else if (jp->pass.op != PASS_OP_WRITE)
                        /* Checked as zeros: what the report's check command compares with. */
                        json_add(p, "command", json_object_new_string(pass_op_command(jp->pass.op)));
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
        if (pass_op_firmware(job->passes[job->n_passes - 1].pass.op)) {
                /* A firmware erase is checked by its own proof, not read back against a pattern. */
                const struct job_fw *f = &job->passes[job->n_passes - 1].fw;

                json_add(o, "by", json_object_new_string("firmware erase proof: markers and a sample (passes[].firmware)"));
                json_add(o, "result", json_object_new_string(!f->proven ? "not run" :
                                                             f->markers_survived || f->samples_unchanged ||
                                                             (job->sigs_checked && job->n_sigs_after > 0) ? "failed" : "passed"));
        } else
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
        json_add(o, "format_version", json_object_new_int(JSON_FORMAT_VERSION));
        json_add(o, "job", json_object_new_uint64(job->id));
        json_add(o, "tool", json_object_new_string(PACKAGE_NAME " " PACKAGE_VERSION));
        json_add(o, "device", json_object_new_string(job->device));
        json_add(o, "node", json_object_new_string(job->info.node));
        json_add(o, "state", json_object_new_string(job_state_name(s)));
        json_add(o, "method", json_object_new_string(job->method));
        /* The bay policy that started the job without a person (null: a client submitted it). */
        json_add(o, "policy", job->policy ? json_object_new_string(job->policy) : NULL);
        json_add(o, "pass_list", pass_list_json(job));
        json_add(o, "keystream_backends", state_backends_json(atomic_load(&job->keystream_backends)));
        json_add(o, "size_bytes", json_object_new_uint64(job->info.size));
        json_add(o, "written_bytes", json_object_new_uint64(written));
        json_add(o, "bytes_total", json_object_new_uint64(job->info.size)); /* deprecated: size_bytes */
        json_add(o, "bytes_written", json_object_new_uint64(written));      /* deprecated: written_bytes */
        json_add(o, "sector_size", json_object_new_int64(job->info.logical_sector));
        json_add(o, "queue_depth", json_object_new_int64(job->queue_depth));
        json_add(o, "io_size", json_object_new_int64(job->piece));
        json_add(o, "max_rate_bps", json_object_new_uint64(job->rate.bps));
        json_add(o, "max_rate", json_object_new_uint64(job->rate.bps)); /* deprecated: max_rate_bps */
        json_add(o, "started_at", json_object_new_int64((int64_t) started));
        json_add(o, "ended_at", ended > 0 ? json_object_new_int64((int64_t) ended) : NULL);
        json_add(o, "duration_s", json_fixed(duration, 3));
        json_add(o, "avg_rate_bps", json_fixed(duration > 0 ? (double) work / duration : 0.0, 0));
        pthread_mutex_lock(&job->lock);
        json_add(o, "passes", passes_json(job, with_keys));
        json_add(o, "hidden_area", state_hidden_json(&job->hidden));
        json_add(o, "purge_fallback", job->purge_fallback ? json_object_new_string(job->purge_fallback) : NULL);
        json_add(o, "verification", verification_json(job));
        json_add(o, "signatures_after", job->sigs_checked ? device_signatures_json(job->sigs_after, job->n_sigs_after) : NULL);
        pthread_mutex_unlock(&job->lock);
        json_add(o, "identity", device_identity_json(&job->info));
        json_add(o, "signatures_before", device_signatures_json(job->sigs_before, job->n_sigs_before));
        smart_report_add(job, o);
        report_add_context(job, o);
        if (report_add_record(job, o) < 0)
                return NULL;
        /* Other parts' fields (SMART) go here, before the overall status. */
        /* Last: derived from the report itself, so that it sees every field above. */
        if (job_record_overall(o) < 0)
                return NULL;
        return TAKE_PTR(o);
}
