/* What the job files share and no other part of the daemon sees: job.c (the table and a job's
 * life), job-stage.c (plan, units, stage ends, checkpoints, the flusher), job-store.c (the state
 * directory: records, loading, forgetting) and job-report.c (reports and JSON).
 * The lock order and what each lock guards are written above struct job in daemon.h. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "daemon.h"

/* ---- job.c: the table (main thread) ---- */
extern struct job *jobs_head, *jobs_tail;      /* oldest first */
extern uint64_t jobs_next_id;

/* Whether the job ended for good: done (with errors or not), failed or cancelled. */
static inline bool state_ended(enum job_state s) {
        return s == JOB_DONE || s == JOB_DONE_ERRORS || s == JOB_FAILED || s == JOB_CANCELLED;
}

/* A number for a newly set key (the workers cache their cipher by it): never reused. */
uint64_t job_key_serial_next(void);
void job_free(struct job *job);
/* End run `run` of the job in state s (once per run): see job.c. */
void job_finish(struct job *job, enum job_state s, unsigned run);
/* The last unit of an aborted run was released: end the run in its abort state. */
void job_end_aborted(struct job *job, unsigned run);
/* End a stopped job (paused or interrupted) for good in state s (main thread). */
void job_end_stopped(struct job *job, enum job_state s, int error, const char *why);

/* ---- job-firmware.c: the firmware side of a submit (main thread) ---- */
/* Resolve the job's firmware erase passes for the probed drive (sanitize and purge into its
 * strongest command, purge's fallback; every namespace such a command erases must pass the
 * refusals). 0, or -errno with why in err; nothing is sent to the drive. */
int job_resolve_firmware(struct job *job, const struct device_probe *probe, char *err, size_t err_len);
/* A firmware command c that erases every namespace of the controller: check every other
 * namespace with the refusals of a wipe and hold it open O_EXCL in job->ns_fds (nothing mounts or
 * claims it meanwhile). 0, -EBUSY with the ones that do not pass in err, or -ENOMEM. */
int job_hold_namespaces(struct job *job, const struct device_probe *probe, const struct fw_command *c, char *err,
                        size_t err_len);
/* Close what job_hold_namespaces() holds (the job ended or stopped). */
void job_release_namespaces(struct job *job);
/* An ATA drive's hidden area, by hidden-area: to be restored (h->restore_pending), the submit
 * refused, or only recorded in *h. Sends nothing. 0 or -errno with why in err. */
int job_hidden_area(const struct device_probe *probe, struct job_hidden_area *h, char *err, size_t err_len);
/* Restore a pending host protected area through the job's descriptor (after every check of the
 * submit passed), and have the kernel read the size again: h->size_after. 0 or -errno (err). */
int job_hidden_restore(struct job *job, char *err, size_t err_len);

/* ---- job-stage.c: plan and units (main thread), claims and stage ends (workers, flusher) ---- */
/* Bytes a stage writes or reads; units of a stage. */
uint64_t stage_bytes(const struct job *job, const struct stage *st);
uint64_t stage_units(const struct job *job, const struct stage *st);
/* Plan the sample for a verification; a random seed unless one is given. 0 or -errno. */
int job_plan_sample(struct job *job, double percent, bool have_seed, uint64_t seed);
/* The steps of a wipe; sets stages and work_total. 0 or -ENOMEM. */
int job_plan_stages(struct job *job);
/* Room for the done-unit bitmaps of every stage. 0 or -ENOMEM. */
int job_alloc_bits(struct job *job);
/* Make stage i the current one (no unit of the job is held). */
void job_stage_enter(struct job *job, unsigned i);
/* Make the checkpoint's stage current again, its done units skipped (no unit of the job is held). */
void job_stage_resume(struct job *job);
/* Bytes written over all passes when stage holds done bytes of its units. */
uint64_t written_at(const struct job *job, unsigned stage, uint64_t done);

/* A checkpoint being taken: what the job had completed when its flush began. */
struct ckpt_snap {
        unsigned run, stage;
        enum stage_kind kind;
        uint64_t *bits;
        uint64_t bytes_done, bytes_written;
        struct verify_result verify;
};
/* Copy what is completed now into c (job lock taken inside). 0 or -ENOMEM. */
int ckpt_snapshot(struct job *job, struct ckpt_snap *c);
/* Make a flushed snapshot the checkpoint, unless the job moved on meanwhile (final: its last). */
void ckpt_store(struct job *job, const struct ckpt_snap *c, bool final);

/* Everything after the last unit of a stage: flush or judge it, then the next stage or the end. */
void job_stage_complete(struct job *job, unsigned run);
/* Give up a unit: the last one of an aborted job ends it. */
void job_unit_put(struct job *job, unsigned run);
/* Queue the job's stage end for the flusher: false when it is not running. */
bool flusher_post(struct job *job, unsigned run);
/* Queue a checkpoint of a running job (main thread). Without a flusher, none is taken. */
void flusher_post_checkpoint(struct job *job);

/* ---- job-store.c: the state directory (main thread) ---- */
#define JOB_FORGOTTEN_GRACE 5.0         /* s a forgotten job stays in memory for a status or watch
                                         * request that still holds it, and until its units are released */
#define JOB_PRUNE_INTERVAL 60.0         /* s between looks for jobs older than history-max-age */
#define JOB_WRITE_RETRY 5.0             /* s before a record or report that could not be written is tried again */
extern char *reports_dir;               /* STATE_DIR/reports; NULL: nothing is kept */
extern EVP_PKEY *host_key;              /* signs reports */

/* Append an event to the job's history (job lock held). 0 or -ENOMEM. */
int job_event_add(struct job *job, enum job_event_kind kind, const char *reason, uint64_t bytes_done);
/* Write the job's record if it changed. */
void job_persist(struct job *job, double now);
/* Wait until a record of the job as it is now is on disk (any thread but the main one, which
 * writes it at its next tick): before a firmware command is sent. 0 (also when no state
 * directory is kept), -EINTR when the job is being stopped, or -ETIMEDOUT. */
int job_record_wait(struct job *job, double timeout_s);
/* Whether the job's signed report is to be written (again). */
bool job_report_due(struct job *j);
/* Free the forgotten jobs nothing can look at any more (all: every one of them). */
void graveyard_sweep(double now, bool all);
/* Forget ended jobs older than history-max-age (their reports stay). */
void job_prune(double mono);

/* ---- job-report.c: reports and JSON (main thread) ---- */
/* The name of a verification run's result: passed, failed, cancelled, interrupted or error. */
const char *verify_result_name(const struct verify_result *r);
/* Write the signed report of an ended job to STATE_DIR/reports/ID.json. 0 or -errno. */
int job_write_report(struct job *job, struct json_object **ret);
/* json_object_object_add that takes NULL as "out of memory": 0 or -ENOMEM. */
int json_add(struct json_object *o, const char *k, struct json_object *v);
/* The job's error as {"errno", "message"}, or NULL when it has none. */
struct json_object *error_json(struct job *job);
