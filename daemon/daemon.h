/* wiped: private declarations of the daemon, grouped by file. */
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <syslog.h>
#include <json-c/json.h>

#include "chunk.h"
#include "firmware.h"
#include "keystream.h"
#include "method.h"
#include "rate.h"
#include "sample.h"
#include "smart.h"
#include "vocab.h"

#define WIPED_STATE_DIR_DEFAULT "/var/lib/wiped"
#define WIPED_GROUP "wiped"
#define WIPED_CLIENTS_MAX 1024          /* connections served at once */
#define WIPED_BUFFERS 16                /* I/O buffers per worker thread */
#define WIPED_BUFFERS_MAX 1024
#define WIPED_QD_SSD 8                  /* writes in flight per non-rotational device */
#define WIPED_QD_ROTATIONAL 4           /* and per rotational one (one region at a time) */
#define WIPED_QD_MAX 256
#define WIPED_THREADS_MAX 256
#define WIPED_REPLY_BACKLOG_MAX (16u << 20) /* unread reply bytes before a client is dropped */
#define WIPED_READ_ONLY_BACKLOG_MAX (4u << 20) /* the same for a client of the read-only socket */

struct job;
struct pool;

/* log.c */
void log_setup(bool verbose);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define log_error(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/* Job events: a MESSAGE_ID each in the journal (wiped(8) "LOGGING"). */
enum log_event {
        LOG_EVENT_JOB_STARTED,
        LOG_EVENT_PASS_DONE,
        LOG_EVENT_VERIFY_PASSED,
        LOG_EVENT_VERIFY_FAILED,
        LOG_EVENT_JOB_DONE,
        LOG_EVENT_JOB_FAILED,
        LOG_EVENT_JOB_CANCELLED,
        LOG_EVENT_JOB_INTERRUPTED,
        LOG_EVENT_JOB_PAUSED,
        LOG_EVENT_JOB_RESUMED,
        LOG_EVENT_REPORT_WRITTEN,
        LOG_EVENT_STATE_CORRUPT,
        LOG_EVENT_HOOK_FINISHED,        /* a job's end hook exited 0 */
        LOG_EVENT_HOOK_FAILED,          /* it exited non-zero, was killed, timed out or did not start */
        LOG_EVENT_POLICY_REFUSED,       /* a bay policy's device was refused (WIPED_JOB=0) */
        LOG_EVENT_POLICY_SKIPPED,       /* or skipped: not empty, has a job, gone, paused */
        _LOG_EVENT_MAX,
};
/* The event's MESSAGE_ID (32 hex digits). */
const char *log_event_id(enum log_event e);
/* How many times event e was logged (log_job) since the start, whatever the log level: the
 * metrics' counters of jobs started and ended and reports written. Any thread. */
uint64_t log_event_count(enum log_event e);
/* A job event: with MESSAGE_ID, WIPED_JOB, WIPED_DEVICE and WIPED_SERIAL in the journal. */
void log_job(int level, enum log_event event, uint64_t job, const char *device, const char *serial,
             const char *fmt, ...) __attribute__((format(printf, 6, 7)));
#define log_job_event(level, event, job, ...) \
        log_job(level, event, (job)->id, (job)->info.node, (job)->info.serial, __VA_ARGS__)

/* device.c (probe and open) and device-*.c (the facts it gathers, by source, and the refusals) */
/* What a device is: recorded by every job, shown by probe, status and report. */
struct device_identity {
        char *node;                     /* resolved device node, e.g. /dev/loop3 */
        char *name;                     /* kernel name, e.g. loop3 */
        dev_t rdev;                     /* device number */
        uint64_t size;                  /* bytes */
        uint32_t logical_sector;        /* BLKSSZGET */
        uint32_t physical_sector;       /* BLKPBSZGET */
        uint32_t minimum_io;            /* libblkid topology, bytes (0 = unknown) */
        uint32_t optimal_io;            /* libblkid topology, bytes (0 = unknown) */
        int32_t alignment_offset;       /* libblkid topology, bytes */
        bool rotational, removable, read_only;
        char *transport;                /* loop, nvme, sata, usb, scsi, virtio, mmc or NULL */
        char *vendor, *model, *serial, *wwn;  /* NULL when unknown */
        char **by_id;                   /* /dev/disk/by-id links to node, NULL-terminated */
        int partition;                  /* its number when it is a partition, else 0 */
        uint64_t part_start;            /* partition only: its first sector (512-byte units) */
        bool is_loop;
        char *backing_file;             /* loop only */
        uint64_t backing_inode;         /* loop only */
        dev_t backing_dev;              /* loop only */
};

/* One signature libblkid found (a file system, RAID/LVM/LUKS member or partition table). */
struct device_signature {
        char *type;                     /* ext4, gpt, crypto_LUKS, ... */
        char *usage;                    /* filesystem, raid, crypto, partition_table, other */
        char *label, *uuid;             /* NULL when none */
        uint64_t offset;                /* bytes, where its magic is */
        int written;                    /* after a wipe: 1 when the bytes there are the last pass's own
                                         * (a chance match), 0 when not, -1 not checked */
};

struct device_partition {
        int number;
        char *node;                     /* /dev/loop3p1, NULL when the kernel has no node for it */
        uint64_t start, size;           /* bytes */
        char *type, *name, *uuid;       /* type: GPT GUID or "0x83" */
        char *fs_type, *fs_label, *fs_uuid;  /* file system inside, NULL when none */
        char *mountpoint;               /* NULL when not mounted */
};

/* What the kernel's block layer offers for erasing without writing the data: the queue limits in
 * sysfs (for a partition, its disk's). What a device can do, not what it is: a probe shows it, and
 * it is neither part of an identity nor compared with one. -1: sysfs does not say. */
struct device_erase {
        int64_t discard_max;            /* bytes one BLKDISCARD may cover; 0: no discard */
        int64_t discard_granularity;    /* bytes: the unit the device discards in */
        int64_t write_zeroes_max;       /* bytes one offloaded zeroing may cover; 0: BLKZEROOUT
                                         * works, by writing zero pages */
        int64_t write_zeroes_unmap_max; /* the same zeroing by unmapping (newer kernels only) */
        /* Secure discard is not here: the kernel does not tell whether a device has it until a
         * BLKSECDISCARD is tried, and a probe never tries. */
};

struct device_probe {
        char *path;                     /* as the client gave it */
        bool have_identity;             /* it is a block device: identity and erase are filled */
        struct device_identity id;
        struct device_erase erase;
        struct fw_caps firmware;        /* what its firmware can do to erase (firmware.h) */
        struct device_signature *sigs;
        size_t n_sigs;
        char *pt_type, *pt_uuid;        /* partition table, NULL when none */
        struct device_partition *parts;
        size_t n_parts;
        int refusal;                    /* 0 when it may be wiped, else -errno */
        char *refusal_msg;              /* "<node>: refusing: <reason>" */
        bool no_exclusive_open;         /* in: skip the O_EXCL test, the last check (a listing
                                         * must not make another program's O_EXCL open fail) */
};

/* Which job is writing the device rdev: its id, or 0. The job side passes one in (job_wiping), so
 * that a probe refuses a device that is already being wiped without knowing about jobs. */
typedef uint64_t device_wiper_fn(dev_t rdev);

/* Look at a device without writing: identity, signatures, partitions, and every reason it must
 * not be wiped (the first one in p->refusal), among them wiper(rdev) (NULL: not asked). Returns 0,
 * or -ENOMEM. */
int device_probe(const char *path, device_wiper_fn *wiper, struct device_probe *p);
void device_probe_done(struct device_probe *p);
/* Probe, refuse if needed, and open the device O_RDWR|O_EXCL|O_DIRECT|O_CLOEXEC. Returns the fd
 * with *p filled, or -errno with p->refusal_msg (or a message in err) naming the device. */
int device_open(const char *path, device_wiper_fn *wiper, struct device_probe *p, char *err, size_t err_len);
/* Whether expect is an identity a client confirmed: an object with members of an identity only,
 * and at least node, major, minor and size. 0, or -EINVAL with what is wrong in err. */
int device_expect_check(struct json_object *expect, char *err, size_t err_len);
/* Whether the identity is the one confirmed in expect (node, device number, size, sector sizes,
 * vendor, model, serial, WWN, partition, loop backing file: the members it has). 0, -ESTALE with
 * the first difference in what, or -ENOMEM. */
int device_expect_match(const struct device_identity *id, struct json_object *expect, char *what, size_t what_len);
/* Every signature libblkid finds on an open device (like wipefs). 0 or -errno. */
int device_signatures_read(const char *node, struct device_signature **ret, size_t *n);
void device_signatures_free(struct device_signature *s, size_t n);
void device_identity_done(struct device_identity *id);
/* Whether a and b are the same device: size, sector sizes, model, serial, WWN and loop backing
 * file (and the device number when same_number); *what names the first difference. */
bool device_identity_same(const struct device_identity *a, const struct device_identity *b, bool same_number,
                          const char **what);
/* Whether the identity names one device among any others: a serial, a WWN or a backing file. */
bool device_identity_strong(const struct device_identity *id);
/* The identity of the block device at path, opened read-only without O_EXCL. 0 or -errno. */
int device_identity_of(const char *path, struct device_identity *id);
/* The node of the one present device with identity want (device number aside): 0 with *ret
 * malloc'd, -ENODEV when none, -ENOTUNIQ when several. */
int device_find_identity(const struct device_identity *want, char **ret);
struct json_object *device_identity_json(const struct device_identity *id);
struct json_object *device_signatures_json(const struct device_signature *s, size_t n);
struct json_object *device_probe_json(const struct device_probe *p);
/* device-list.c: every block device of the machine with its partitions, what is on each and
 * whether it may be wiped (wipectl(1) DEVICES), without the exclusive open a submit tries (each
 * row says "exclusive_checked": false); a new array, or NULL on ENOMEM. */
struct json_object *device_list_json(device_wiper_fn *wiper);
/* The probe of a listing (no firmware questions, no exclusive open: p->no_exclusive_open) of the
 * block device node with device number rdev, for the bay policies. 0 (a refusal is in p), or
 * -ENOMEM; device_probe_done() p in any case. */
int device_probe_listed(const char *node, dev_t rdev, device_wiper_fn *wiper, struct device_probe *p);
/* Every /dev/disk/by-* link to node: NULL-terminated, free with device_links_free(); NULL on ENOMEM. */
char **device_links(const char *node);
void device_links_free(char **links);

/* job-record.c: the sanitization record of a job (wiped(8) "REPORTS"): what NIST SP 800-88's sample
 * certificate and IEEE 2883 ask for beyond what the wipe itself knows, given at submission or by
 * the configuration, and kept in the job (a reload changes new jobs only). */
#define JOB_RECORD_TEXT_MAX 256         /* bytes of an asset tag, a customer, a destination, a name... */
#define JOB_RECORD_NOTE_MAX 1024        /* bytes of the note */
#define JOB_PERSON_KEYS 5               /* name, title, organization, location, contact */
#define JOB_BATCH_LEN 32                /* hex characters of a batch id */
/* "name", "title", "organization", "location", "contact": the members of a person object. */
extern const char *const job_person_keys[JOB_PERSON_KEYS];
/* Who performed or verified a sanitization; NULL where not recorded. */
struct job_person {
        char *f[JOB_PERSON_KEYS];       /* in job_person_keys' order */
};
struct job_record {
        char batch[JOB_BATCH_LEN + 1];  /* one random id per submit (lower-case hex); "" in older records */
        char *asset_tag, *customer, *note, *destination;  /* NULL: not recorded */
        struct job_person operator, verifier;
};
void job_record_done(struct job_record *r);
/* A copy of src in *dst (initialised here) with asset_tag (may be NULL) for its asset tag when
 * given, else src's. 0 or -ENOMEM (*dst holds nothing then). */
int job_record_copy(struct job_record *dst, const struct job_record *src, const char *asset_tag);
/* The configuration's defaults (destination, operator-*, verifier-*) and a new batch id in *r
 * (initialised here). 0, or -ENOMEM or getrandom's -errno. */
int job_record_defaults(struct job_record *r);
/* Whether s is acceptable record text of at most max bytes (utf8_text_valid, not empty). */
bool job_record_text_valid(const char *s, size_t max);
/* The record fields of a submit request (asset_tag, asset_tags, customer, note, destination,
 * operator, verifier) over the defaults already in *r, for n devices: *asset_tags gets a malloc'd
 * array of n borrowed strings (NULL when the request gives no per-device tags). 0, or -EINVAL
 * with a message naming the field in err, or -ENOMEM. */
int job_record_parse_request(struct json_object *req, size_t n, struct job_record *r, const char ***asset_tags,
                             char *err, size_t err_len);
/* Add "batch", "asset_tag", "customer", "note", "destination", "operator", "verifier" to o (null
 * where not recorded). 0 or -ENOMEM. */
int job_record_json_add(const struct job_record *r, struct json_object *o);
/* Read what job_record_json_add() wrote from o into *r (initialised here); a member that is absent
 * reads as not recorded. 0, or -EBADMSG with the bad member in *bad. */
int job_record_from_json(struct json_object *o, struct job_record *r, const char **bad);
/* "HDD", "SSD", "NVMe SSD", "USB drive", "SD/MMC card", "virtual disk" or "unknown". */
const char *job_media_type(const struct device_identity *id);
/* The manufacturer of the drive: its vendor, or for the SATA translation's "ATA" (or none) the
 * one its model names; NULL when unknown. */
const char *job_manufacturer(const struct device_identity *id);
/* The host's DMI identity {"vendor","product","serial","uuid"} from /sys/class/dmi/id (read once;
 * null where unreadable). A new reference; NULL on ENOMEM. */
struct json_object *job_host_dmi_json(void);
/* Add "overall_status" and "exceptions" to the report o, derived from its own members (state,
 * verification, bad_bytes, hidden_area, purge_fallback, errors, smart_before/smart_after), so
 * that it is called last. 0 or -ENOMEM. */
int job_record_overall(struct json_object *o);

/* job.c */
#define VERIFY_FIRST_MAX 16             /* mismatching sector offsets kept */

/* One verification of one pass. */
struct verify_result {
        bool ran;                       /* completed (else never run, or ended early: see end) */
        enum verify_end end;
        enum verify_mode mode;
        double percent;                 /* sample only */
        uint64_t seed, subsections;     /* sample only */
        uint64_t coverage;              /* bytes compared */
        uint64_t mismatched;            /* sectors that differ */
        uint64_t first[VERIFY_FIRST_MAX]; /* their lowest byte offsets, ascending */
        unsigned n_first;
        double started, at;             /* CLOCK_REALTIME when it started and ended */
};

/* An ATA drive's hidden area found at submit (sectors), and what the submit did about it. */
struct job_hidden_area {
        bool found;                     /* native max above current max, or DCO max above native */
        uint64_t current_max, native_max, dco_max;
        char action[24];                /* "restored", "ignored" */
        uint64_t size_before, size_after;  /* bytes the kernel saw before and after */
        char note[200];                 /* what did not go as planned */
        bool restore_pending, lba48;    /* at submit: to restore once every check passed (48-bit) */
        bool hpa_pending, dco_pending;  /* which: SET MAX ADDRESS, then DEVICE CONFIGURATION RESTORE */
};

/* A firmware erase pass (pass_op_firmware): the command, and what became of it (job lock).
 * Proof: before the command, FW_SAMPLES extents of the device are hashed and FW_MARKERS marker
 * sectors written (offsets and content from the pass's key); afterwards no marker may be there,
 * and no sample extent that held data may hold it still. */
#define FW_MARKERS 16                   /* marker sectors written before a firmware erase */
#define FW_SAMPLES 32                   /* extents hashed before it and compared after */
#define FW_SAMPLE_BYTES (64u << 10)     /* bytes of each */
struct job_fw {
        struct fw_command cmd;          /* resolved at submit */
        bool started;                   /* about to be sent: on disk before it is */
        double started_at, ended_at;    /* CLOCK_REALTIME seconds, 0 when not */
        struct fw_status status;        /* the drive's last word on it */
        unsigned n_samples;             /* extents hashed before (0: none yet) */
        uint64_t before[FW_SAMPLES];    /* their hashes; bit 0 set: the extent was one byte repeated */
        bool proven;                    /* the checks after it ran */
        unsigned markers, markers_survived;
        uint64_t marker_first;          /* offset of the first that survived */
        unsigned samples_unchanged, samples_blank;  /* held data and still do; were blank before */
        char returns[64];               /* what the drive returns now: zeros, ones, ... */
        char note[256];                 /* what a resume found on the drive and did */
};

struct job_pass {
        struct pass pass;               /* what it writes */
        uint8_t key[KEYSTREAM_KEY_MAX]; /* random passes: own key from getrandom; cleansed on free */
        size_t key_len;
        uint64_t key_serial;            /* names this key for the workers' cipher caches: never reused */
        bool written;                   /* every write completed and flushed */
        struct verify_result verified;  /* latest verification of this pass */
        struct job_fw fw;               /* a firmware erase pass only */
};

enum stage_kind {
        STAGE_WRITE,
        STAGE_VERIFY,
};

/* A step of a job: write one pass, or read back and compare one pass over some extents. */
struct stage {
        enum stage_kind kind;
        unsigned pass;                  /* index into passes */
        bool sampled;                   /* verify the sample plan's extents, not the whole device */
        enum verify_mode mode;          /* verify: what it is reported as */
};

struct job_event {
        enum job_event_kind kind;
        double at;                      /* CLOCK_REALTIME seconds */
        char *node;                     /* the device's node then */
        char *reason;                   /* NULL when none */
        unsigned pass;                  /* 1-based pass of the stage then */
        int phase;                      /* STAGE_WRITE, STAGE_VERIFY, or -1 (ended) */
        uint64_t bytes_done;            /* of the run, as status shows it */
};

/* What is known to be on the disk: the stage then, its units done and flushed, and the counters
 * that go with them. A resume starts here. */
struct job_checkpoint {
        unsigned stage;                 /* index into stages */
        uint64_t *bits;                 /* units of that stage done (n_unit_words words) */
        uint64_t bytes_done;            /* of the run: earlier stages plus the units in bits */
        uint64_t bytes_written;         /* over all passes */
        struct verify_result verify;    /* of a verify stage: the comparisons so far */
        double at;                      /* CLOCK_REALTIME seconds; 0 when none was taken */
};

/* The work a worker claims: extents of one stage of one job, and how far it got. */
struct job_unit {
        struct job *job;
        unsigned run;                   /* the job's run generation when claimed */
        enum stage_kind kind;
        const struct job_pass *pass;
        unsigned pass_index;
        uint64_t index;                 /* of the unit in its stage */
        uint64_t bytes;                 /* it covers */
        const struct extent *extents;   /* into the job's sample plan, or &one */
        size_t n_extents;
        struct extent one;              /* a whole-device chunk */
};

/* hook.c: what became of the hook of a job's end (below: the functions) */
enum hook_state {
        HOOK_NONE,                      /* no hook for the job's latest end (none configured) */
        HOOK_PENDING,                   /* queued, or due after a restart */
        HOOK_RUNNING,
        HOOK_EXITED,                    /* with exit_status (0: success) */
        HOOK_KILLED,                    /* by signal, not by us */
        HOOK_TIMED_OUT,                 /* killed by us after its timeout */
        HOOK_NOT_STARTED,               /* /bin/sh could not be started */
        _HOOK_STATE_MAX,
};

/* The hook of a job's latest end (main thread; kept in its record). */
struct job_hook {
        enum hook_state state;
        double done_for;                /* the ended_at of the end whose hook completed (0: none) */
        bool queued;                    /* handed to the runner, its outcome not back yet */
        double queued_for;              /* for the end at this ended_at */
        bool event_verify;              /* for the end of a later verification, not of the wipe */
        int exit_status;                /* HOOK_EXITED (or a timed-out one that exited): 0..255; else -1 */
        int signal;                     /* HOOK_KILLED, HOOK_TIMED_OUT: the signal that ended it */
        double started, ended;          /* CLOCK_REALTIME seconds, 0 when not */
        double duration;                /* seconds */
};

/* A job: one device, its passes and verification, and where it got to.
 *
 * Threads. The main thread owns the job table (job.c), submits, stops, resumes, forgets, writes
 * records and reports and samples rates. Worker threads (worker.c) claim units, write and read
 * them and release them (job_claim_unit, job_release_chunk, job_bad_range, job_verify_mismatch,
 * job_fail). The flusher thread (job-stage.c) flushes a completed stage, judges it and moves the
 * job on, and takes checkpoints; without a flusher, the worker that released the last unit does.
 *
 * Locks, in the order they are taken (never the other way round):
 *   1. the pool lock (pool_lock, pool_locked: worker.c): the pool's list of jobs with units to
 *      claim, and a job's stage_index and stage_units, which change only under it and only while
 *      no unit of the job is held (job_stage_next, job_stage_enter, job_stage_resume);
 *   2. job->lock: the fields under "Protected by lock", "Bad sectors", "Persistence" and "The wipe
 *      itself" below;
 *   3. the flusher's lock (job-stage.c): its two queues (flush_next, ckpt_next) and its running and
 *      stop flags. It is never taken while a job lock is held: flusher_post and
 *      flusher_post_checkpoint drop the job lock first.
 * The atomics below are read and written without a lock; "finished" and "run" change under
 * job->lock. The "Main thread only" fields are read and written on the main thread alone. */
struct job {
        uint64_t id;
        char *device;                   /* path as the client gave it */
        struct device_identity info;    /* what the device was at submit */
        struct device_signature *sigs_before;  /* found at submit */
        size_t n_sigs_before;
        int fd;                         /* open while the job runs; -1 after it ended */
        struct pool *pool;
        struct chunk_plan plan;
        uint32_t piece;                 /* bytes per I/O: at most the pool's buffer, whole plan sectors */
        unsigned queue_depth;           /* I/Os of this device in flight at most, over all workers */
        unsigned max_holders;           /* workers writing it at once: 1 for rotational devices */
        struct rate_limit rate;         /* max_rate of the submit (bps 0: none) */
        enum keystream_cipher cipher;   /* of every random pass; resolved, never AUTO */
        char *method;                   /* a method's name, or "custom" */
        char *policy;                   /* the bay policy that started it, NULL: a client did */
        struct job_record record;       /* asset tag, batch, operator...: as submitted (job-record.c) */
        struct job_hidden_area hidden;  /* what was hidden on the drive at submit, and what was done */
        int *ns_fds;                    /* the controller's other namespaces, held O_EXCL while a firmware
                                         * command that erases them all is to come (job lock) */
        size_t n_ns_fds;
        char *purge_fallback;           /* purge on a drive without firmware erase: why (the
                                         * fallback pass is Clear, not Purge); NULL otherwise */
        struct job_pass *passes;
        unsigned n_passes;
        enum verify_mode verify;        /* asked for at submit */
        double verify_percent;          /* sample */
        enum verify_mode run_verify;    /* of the latest run: the wipe's, or a later verify's */
        double run_percent;
        bool reverify;                  /* the latest run is a later verification, not the wipe */
        struct sample_plan sample;      /* planned at submit (and again by a later verify) */
        struct stage *stages;           /* the steps, in order */
        unsigned n_stages;

        /* Changed only when no unit of the job is held, under the pool lock (job_stage_enter). */
        atomic_uint stage_index;        /* index of the current stage */
        atomic_uint_fast64_t stage_units; /* units of the current stage */
        uint64_t work_total;            /* bytes to write and read over all stages of this run */

        /* Shared with the workers (lock-free). */
        atomic_uint_fast64_t next_unit;    /* next unit of the current stage to claim */
        atomic_uint_fast64_t units_done;   /* units of the current stage finished */
        atomic_uint_fast64_t bytes_done;   /* bytes written or read and compared, this run */
        atomic_uint_fast64_t bytes_written; /* over all passes */
        atomic_uint active_chunks;         /* units claimed and not yet released */
        atomic_uint inflight;              /* I/Os submitted and not completed */
        atomic_uint holders;               /* workers holding a unit they still submit from */
        atomic_bool abort;                 /* cancel, failure or shutdown: claim nothing more */
        atomic_bool finished;              /* job_finish() ran (exactly once per run; set under lock) */
        atomic_bool settled;               /* and returned: its thread no longer looks at the job */
        atomic_uint run;                   /* run generation: bumped by a later verify (under lock) */
        _Atomic uint64_t *unit_bits;       /* units of the current stage completed; claims skip them */
        size_t n_unit_words;
        atomic_uint_fast64_t ckpt_pending; /* bytes completed since the last checkpoint */
        atomic_uint_fast64_t last_ok_ns;   /* CLOCK_MONOTONIC of the last I/O that succeeded */
        atomic_uint_fast64_t fail_streak;  /* I/Os failed since the last success */
        atomic_uint_fast64_t fail_streak_ns; /* CLOCK_MONOTONIC of the first of them */
        uint64_t max_bad;                  /* bytes of bad sectors before the job fails */

        /* Protected by lock. */
        pthread_mutex_t lock;
        enum job_state state;
        enum job_state abort_state;     /* what abort ends in: CANCELLED, FAILED or INTERRUPTED */
        int error;                      /* negative errno when failed */
        char *error_msg;                /* names the device and the offset */
        double ended_at;                /* CLOCK_REALTIME seconds, 0 while running */
        bool sigs_checked;              /* sigs_after holds a probe made after the flush */
        struct device_signature *sigs_after;
        size_t n_sigs_after;
        struct verify_result current;   /* the verification in progress */
        struct verify_result *runs;     /* every verification of the last pass */
        size_t n_runs;

        /* Bad sectors found (job lock): sorted, merged byte ranges. */
        struct extent *bad;
        size_t n_bad;
        uint64_t bad_bytes;
        unsigned bad_logged;            /* new ranges logged */

        /* Persistence (job lock). */
        struct job_checkpoint ckpt;     /* the latest checkpoint of this run */
        struct job_event *history;
        size_t n_history;
        char *reason;                   /* why it is interrupted or paused; NULL otherwise */
        unsigned interruptions;         /* times the daemon stopped under it (stop, crash, power) */
        unsigned pauses;                /* times a user paused it */
        /* Bit 1 << enum keystream_backend for each backend that made keystream for it (its random
         * passes' writes and reads), over every daemon that ran it; set when a stage starts. */
        atomic_uint keystream_backends;
        unsigned resumes;               /* times it went on after either */
        uint64_t superseded_by;         /* a later job started on its device (0: none) */
        int partitions_reread;          /* after its last write: 1 the kernel read the partition table
                                         * again, -errno it refused, 0 not tried (job_finish) */
        enum job_state wipe_state;      /* how the wipe ended, while a later verification runs */
        int wipe_error;                 /* the wipe's error, kept while a later verification runs */
        char *wipe_error_msg;
        bool cancel_pending;            /* cancelled while a pause or stop was settling */
        bool dirty;                     /* the record on disk is older than the job */
        bool ckpt_queued;               /* a checkpoint waits for the flusher */
        uint64_t persist_started;       /* record writes begun (job_persist) */
        uint64_t persist_done;          /* the latest of them that reached the disk */

        /* The wipe itself, kept when a later verification runs (job lock). */
        double wipe_started, wipe_ended;        /* CLOCK_REALTIME seconds */
        uint64_t wipe_work;                     /* bytes written and read by the wipe */

        /* Main thread only. */
        double started_at;              /* CLOCK_REALTIME seconds: start of the latest run */
        double started_mono;            /* CLOCK_MONOTONIC seconds */
        double rate_bps;                /* smoothed rate of work */
        uint64_t sample_bytes;          /* bytes_done at the last sample */
        double sample_mono;             /* time of the last sample */
        bool reported;                  /* its report is written (for the end at reported_end and */
        double reported_end;            /* the verification runs counted in reported_runs) */
        size_t reported_runs;
        char *report_file;              /* where, once written */
        double ckpt_mono;               /* CLOCK_MONOTONIC of the latest checkpoint request */
        double persist_retry;           /* CLOCK_MONOTONIC: no record write before (after a failure) */
        double report_retry;            /* the same for its report */
        double resume_until;            /* CLOCK_MONOTONIC: retry a busy device until then */
        double resume_next;             /* and not before this */
        struct job *flush_next;         /* the flusher's queue (its lock) */
        struct job *ckpt_next;          /* its checkpoint queue (its lock) */
        unsigned flush_run;             /* the run whose stage the flusher completes */
        double forgotten_at;            /* CLOCK_MONOTONIC when forgotten: freed a little later */
        char *end_hook;                 /* its own hook command (a policy's); NULL: job-end-hook */
        double end_hook_timeout;        /* its own hook's timeout, seconds; 0: hook-timeout */
        struct job_hook hook;           /* the hook of its latest end (hook.c) */
        /* Drive health (smart.c; main thread): the snapshots before and after, NULL when none (a
         * job made before drive health), and the after one being taken. */
        enum smart_policy smart_policy; /* as applied at the submit */
        struct json_object *smart_before, *smart_after;
        bool smart_after_due;           /* a snapshot after is to be taken once it ended */
        struct smart_thread *smart_thread;
        struct job *next;               /* job table order: oldest first */
};

/* spawn.c: start path with argv and env in a process group of its own, in "/", with stdin
 * /dev/null, stdout (and stderr with stderr_too, else /dev/null) a pipe whose reading end (O_CLOEXEC)
 * goes to *out_fd, no other descriptor of the daemon, the default signal dispositions and an empty
 * signal mask (the daemon blocks the main loop's signals). 0 with *pid, or -errno. */
int spawn_piped(const char *path, char *const argv[], char *const env[], bool stderr_too, pid_t *pid, int *out_fd);

/* hook.c: the command run when a job ends (wiped(8) "HOOKS") */
#define HOOK_TIMEOUT_DEFAULT 60         /* hook-timeout, seconds */
#define HOOK_MAX_RUNNING_DEFAULT 4      /* hook-max-running */
#define HOOK_MAX_RUNNING_MAX 64
#define HOOK_QUEUE_MAX 1024             /* hooks queued to start; more wait in their jobs (pending) */
#define HOOK_OUTPUT_LINES 20            /* lines of a hook's output logged */
#define HOOK_OUTPUT_MAX 4096            /* bytes of them */
#define HOOK_LINE_MAX 512               /* longer lines are logged in pieces */
#define HOOK_ENV_MAX 32                 /* variables of its environment */

/* "none", "pending", "running", "exited", "killed", "timed-out", "not-started". */
const char *hook_state_name(enum hook_state s);
/* Start the runner thread. 0 or -errno. */
int hook_start(void);
/* Shutdown: queued hooks are dropped (pending in their records: they run after the next start);
 * running ones get HOOK_STOP_GRACE s, then SIGTERM, then SIGKILL. Returns when none runs. */
void hook_stop(void);
/* How many hooks may run at once (hook-max-running). */
void hook_set_max_running(unsigned n);
/* Main loop: queue the job's hook when it ended for good, its report is written and its hook has
 * not completed for that end; a job without a hook (none configured) has it counted as done. */
void hook_job_check(struct job *job);
/* The job id was forgotten: its hook, when still queued, does not run. */
void hook_job_forgotten(uint64_t id);
/* Main loop: take the outcomes of the hooks into their jobs (records to be written). */
void hook_collect(void);
/* A loaded job whose record has no "end_hook" (written before hooks existed): no hook for its end. */
void hook_job_loaded(struct job *job, bool in_record);
/* The job's hook as status shows it (NULL when it has none), or as its record keeps it (record). */
struct json_object *hook_json(const struct job *job, bool record);
/* The record's "end_hook" into job. 0, -EBADMSG or -ENOMEM. */
int hook_record_parse(struct json_object *o, struct job *job);
/* Hooks running now and queued to start (for status and metrics). */
void hook_counts(unsigned *running, unsigned *queued);
/* Add "hooks_running" and "hooks_queued" to o. 0 or -ENOMEM. */
int hook_counts_json_add(struct json_object *o);

/* What a submit asks for. */
struct job_request {
        enum keystream_cipher cipher;
        const char *method;             /* name, or "custom" with passes */
        const struct pass *passes;
        size_t n_passes;
        enum verify_mode verify;
        double verify_percent;
        bool have_seed;
        uint64_t seed;
        unsigned queue_depth;           /* 0: the daemon's default */
        uint32_t io_size;               /* 0: the daemon's buffer size */
        uint64_t max_rate;              /* bytes/s, 0: none */
        uint64_t chunk_size;            /* bytes per chunk, 0: CHUNK_SIZE_DEFAULT */
        uint64_t max_bad;               /* bytes of bad sectors before the job fails */
        struct json_object *const *expect; /* per device: the identity the client confirmed, or NULL */
        const char *end_hook;           /* the job's own hook (a policy's; never a client's), NULL: the
                                         * global job-end-hook */
        double end_hook_timeout;        /* its timeout, seconds; 0: hook-timeout */
        const char *policy;             /* the bay policy that asks (policy.c), NULL: a client */
        const struct job_record *record; /* the sanitization record; NULL: the configuration's
                                          * defaults and a batch of its own */
        const char *const *asset_tags;  /* per device, in order; NULL: record's asset_tag for all */
};

/* Create and start jobs for every device (all or nothing): returns 0 and the new jobs in
 * ret[0..n), or -errno with a message naming the refused device in err. */
int job_submit(struct pool *pool, const char *const *devices, size_t n, const struct job_request *rq,
               struct job **ret, char *err, size_t err_len);
/* Everything job_submit() checks and plans, without writing or starting anything (no drive state
 * changed, no job, no record): 0 with *ret a new array of the plans (wiped(8) submit "dry_run"),
 * or job_submit()'s -errno and message. */
int job_dry_run(struct pool *pool, const char *const *devices, size_t n, const struct job_request *rq,
                struct json_object **ret, char *err, size_t err_len);
/* Verify the last pass of an ended job again, on its device if its identity still matches.
 * 0 (the job runs again), or -errno with a message in err. */
int job_verify_again(struct job *job, enum verify_mode mode, double percent, bool have_seed, uint64_t seed,
                     char *err, size_t err_len);
struct job *job_find(uint64_t id);
struct job *job_first(void);
/* The id of the job that may still write the device rdev (it has not settled), or 0: the
 * device_wiper_fn that submit, resume and probe pass to device.c. */
uint64_t job_wiping(dev_t rdev);
/* Ask a running job to stop; -EALREADY when it has ended. */
int job_cancel(struct job *job);
/* Record the first error of a job and make it stop (any thread). */
void job_fail(struct job *job, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define JOB_BAD_RANGES_MAX 65536       /* bad ranges kept; beyond, the job fails */
#define JOB_BAD_LOGGED_MAX 64           /* bad ranges logged one by one */
/* A worker could not write or read [off, off + len) (a bad sector): recorded and skipped. 0, or
 * -EIO when that makes more than the job's max_bad bytes (the job then fails). */
int job_bad_range(struct job *job, uint64_t off, uint64_t len, bool read);
/* A worker found a sector that differs from what the pass wrote. */
void job_verify_mismatch(struct job *job, uint64_t offset);
/* Claim the next unit of the job's current stage into *u: true, or false when there is none.
 * Called with the pool lock held. */
bool job_claim_unit(struct job *job, struct job_unit *u);
/* Called by a worker after releasing a unit (completed: the unit, when all of it was done; else
 * NULL): advances the job to its next stage, or ends it,
 * when the stage is complete (on the flusher thread) or the job aborted. */
void job_release_chunk(struct job *job, const struct job_unit *completed, unsigned run);
/* Start the flusher thread that flushes completed passes. 0 or -errno (then workers flush). */
int job_flusher_start(void);
/* Complete what is queued, then stop it; stages complete on the workers afterwards. */
void job_flusher_stop(void);
/* Shutdown: every unfinished job stops and ends interrupted (now, or when its workers release
 * their chunks). Call before pool_free() and again after it. */
void job_interrupt_all(void);
/* Stop a running job at a consistent point: its completed units are flushed and recorded, the
 * device closed, the state "paused" with why as the reason. -EALREADY when it is not running. */
int job_pause(struct job *job, const char *why);
/* Continue a paused or interrupted job from its checkpoint on the device with its identity, at
 * path when given (needed for a device with no serial, WWN or backing file), else wherever it is
 * now. 0, or -errno with a message in err: -ENODEV no such device, -ESTALE identity differs,
 * -EBUSY in use, -EALREADY not stopped. */
int job_resume(struct job *job, const char *path, char *err, size_t err_len);
/* Drop an ended or stopped job from the table and delete its record (the report stays).
 * -EBUSY while it runs. */
int job_forget(struct job *job);
/* Where job records and reports are kept (the state directory); NULL for nowhere. Creates jobs/
 * and reports/ and loads the host key. 0 or -errno (logged). */
int job_set_state_dir(const char *dir);
/* Read the saved jobs (once, before serving): corrupt records are moved aside, unfinished jobs
 * come back interrupted and, unless resume is manual, are resumed where their device is present. */
void job_load_all(struct pool *pool);
/* Main loop, about every 0.1 s: checkpoints due, records and reports to write, busy devices to
 * retry, old history to prune. */
void job_tick(void);
/* Write every record that changed now (shutdown). */
void job_persist_all(void);
/* The signed report of a job that is no longer in the table (forgotten), from the state
 * directory: NULL with -errno in *r. */
struct json_object *job_report_from_file(uint64_t id, int *r);
/* A job from a checked record (pool may be NULL: defaults), as loading makes it; NULL with the
 * reason in err. Free with job_destroy(). */
struct job *job_from_record(struct json_object *rec, struct pool *pool, char *err, size_t err_len);
void job_destroy(struct job *job);
/* The report of a job: for one that ended (done, failed, cancelled), the signed report, written
 * now if it was not yet (a job that shows an end has its signed report); else a report made now,
 * unsigned. with_keys (root) always makes a new one, unsigned. NULL on ENOMEM. */
struct json_object *job_report(struct job *job, bool with_keys);
/* Whether a job that ended has its signed report still to come: its thread is returning, the drive
 * health after it is being taken, or the main loop's next tick writes it. False once it is written,
 * when writing it failed (tried again every 5 s: nobody is held for that), or without reports. A
 * watch's end waits for it, so that a report is there when wipectl wipe or wait returns. */
bool job_report_pending(struct job *job);
/* Write the reports that are due now (what the next tick would write): before reports are listed. */
void job_write_due_reports(void);
/* "idle", or "3 running, 41% overall, ETA 2h13m" (sd_notify STATUS=). */
void job_summary(char *buf, size_t n);
/* Update smoothed rates; called by the main loop about twice a second. */
void job_sample_rates(void);
enum job_state job_get_state(struct job *job);
/* JSON renderings (see wiped(8) PROTOCOL): NULL on ENOMEM. */
struct json_object *job_to_json(struct job *job);
struct json_object *job_report_json(struct job *job, bool with_keys);
void job_free_all(void);

/* recheck.c: does the device still hold what the job's record says it wrote? */
#define RECHECK_SAMPLES 128             /* sectors read back at random before a stopped job goes on */
/* Before a paused or interrupted job goes on, on fd (its device, opened O_DIRECT): the sectors
 * at the signatures sigs[n] (found when it was opened), its first and last and RECHECK_SAMPLES at
 * random, wherever the checkpoint says what is there (a pass done there, or the pass before it),
 * must hold exactly that. 0; -ESTALE with what differs in err; or -errno. */
int recheck_resume(struct job *job, int fd, const struct device_signature *sigs, size_t n, char *err,
                   size_t err_len);
/* After the last pass: sets sigs[i].written for each signature a fresh probe found, from whether
 * the sector holding its magic is what the last pass wrote (a chance match in the keystream or a
 * pattern) or not; sectors in bad ranges count as written. Returns 0 when every one is, 1 with the
 * index of the first that is not in *first, or -errno when one could not be read. */
int recheck_signatures(struct job *job, int fd, struct device_signature *sigs, size_t n, size_t *first);

/* state.c: job records on disk (STATE_DIR/jobs/ID.json) and the host key that signs reports. */
#define STATE_RECORD_FORMAT 2
#define STATE_RECORD_MAX (256u << 20)   /* bytes of a record file */
/* Write len bytes to dir/name atomically: a temporary file (0600, O_EXCL|O_NOFOLLOW), fsync,
 * rename, fsync of the directory. 0 or -errno (nothing is left behind on failure). */
int state_write_atomic(const char *dir, const char *name, const char *text, size_t len);
/* The job's record: request, identity, keys, plan, checkpoint, history. NULL on ENOMEM. */
struct json_object *state_record_json(struct job *job);
/* The record as the file holds it: one line with its SHA-256 in it. malloc'd, NULL on ENOMEM. */
char *state_record_text(struct json_object *rec, size_t *len);
/* Overwrite the keys in a record before it is freed. */
void state_record_cleanse(struct json_object *rec);
/* Read and check a record file: size, checksum, strict JSON. 0 with *ret, or -errno with err. */
int state_record_read(int dirfd, const char *name, struct json_object **ret, char *err, size_t err_len);
/* The same from len bytes of text (changed in place: the hash is zeroed); check_sum false skips
 * the checksum (for the fuzzer, which cannot forge it). */
int state_record_decode(char *text, size_t len, bool check_sum, struct json_object **ret, char *err, size_t err_len);
/* Fill a new job (fd -1, no pool) from a checked record: every field's type and range is
 * checked. 0, or -EBADMSG/-ENOMEM with the field named in err. */
int state_record_parse(struct json_object *rec, struct job *job, char *err, size_t err_len);
/* The checkpoint's done units ([first, count] pairs) into bits of n units (zeroed by the caller):
 * 0, or -EBADMSG when one is out of range. */
int state_record_bits(struct json_object *rec, uint64_t *bits, uint64_t n);
/* The job's bad ranges as [{offset, length}] (job lock held). NULL on ENOMEM. */
struct json_object *state_bad_ranges_json(const struct job *job);
/* The job's history as JSON (job lock held). NULL on ENOMEM. */
struct json_object *state_history_json(const struct job *job);
/* A firmware erase pass's command, drive status and proof (record: with what a resume needs). */
struct json_object *state_fw_json(const struct job_fw *f, bool record);
/* An ATA drive's hidden area found at submit and what was done (NULL when none was found). */
struct json_object *state_hidden_json(const struct job_hidden_area *h);
/* The names of the keystream backends in bits (a job's keystream_backends), in enum order. */
struct json_object *state_backends_json(unsigned bits);
#define JOB_HISTORY_MAX 1000         /* events kept per job */

/* fw-step.c: run the unit of a firmware erase pass's stage in a thread of its own, which releases
 * it (job_release_chunk) when the erase is done, failed or stopped. 0 or -errno. */
int fw_step_spawn(struct job *job, const struct job_unit *u);
/* At shutdown, after every job was told to stop: wait until every firmware step's thread returned
 * (a sanitize is left to the drive at once; a format or security erase ends first), calling tick
 * (main thread: the records) every 100 ms meanwhile. */
void fw_step_wait_all(void (*tick)(void));

/* pool.c: the worker threads and the jobs they serve (worker.c, worker-check.c run the threads) */
struct pool_config {
        unsigned threads;               /* worker threads */
        unsigned buffers;               /* I/O buffers (and I/Os in flight) per worker */
        uint32_t io_size;               /* bytes per buffer: the largest I/O */
        unsigned queue_depth;           /* default I/Os in flight per device; 0: from its topology */
        uint64_t max_rate;              /* bytes/s over all jobs; 0: none */
        int worker_policy;              /* the workers' SCHED_OTHER, SCHED_BATCH or SCHED_IDLE (worker-policy) */
        unsigned worker_nice;           /* and their nice value, 0..19 (worker-nice) */
};

/* Start the worker threads, each with its own io_uring and buffers. Returns 0 or -errno. */
int pool_new(struct pool **ret, const struct pool_config *cfg);
/* The I/Os in flight a device gets by default (from the pool's setting or its topology). */
unsigned pool_device_queue_depth(struct pool *pool, const struct device_identity *id);
/* Take a job off the list of jobs with units to claim (before it is freed). */
void pool_remove_job(struct pool *pool, struct job *job);
/* Make a job's units claimable. */
void pool_add_job(struct pool *pool, struct job *job);
/* Run fn(job) under the pool lock: changes to a job's stage are made there. */
void pool_locked(struct pool *pool, void (*fn)(struct job *), struct job *job);
void pool_lock(struct pool *pool);
void pool_unlock(struct pool *pool);
/* Wake every worker to look at the jobs again (a job was cancelled or failed). Takes the pool lock. */
void pool_wake(struct pool *pool);
/* Give the calling worker thread the pool's CPU priority: its nice value (never raised: a daemon
 * started at a higher nice value keeps its workers there), then its scheduling policy. Called
 * first thing by each worker, so that the kernel threads its io_uring starts for it inherit
 * both. A failure is logged once for all workers, and the worker runs on as it is. */
void pool_thread_priority(struct pool *pool);
/* Stop claiming, wait for in-flight writes, join the threads, free. Accepts NULL. */
void pool_free(struct pool *pool);
unsigned pool_threads(struct pool *pool);
uint32_t pool_io_size(struct pool *pool);
unsigned pool_buffers(struct pool *pool);
unsigned pool_queue_depth(struct pool *pool);
uint64_t pool_max_rate(struct pool *pool);
/* Bytes of I/O buffers: threads x buffers x io_size, plus verification scratch. */
uint64_t pool_memory(struct pool *pool);
/* Whether every worker's buffers are registered (pinned) with its ring. */
bool pool_registered(struct pool *pool);
/* {"threads","buffers","io_size","queue_depth","max_rate","buffer_memory","registered_buffers",
 * "worker_policy","worker_nice","worker_priority_applied"}; NULL on ENOMEM. */
struct json_object *pool_json(struct pool *pool);

/* policy.c: hot-plug bay policies (wiped(8) "BAY POLICIES"): a device that appears and meets a
 * policy's criteria becomes a job through the normal submit, after it stayed present settle
 * seconds. Main thread only. */
#define POLICIES_MAX 64                 /* policy files read from the policy directory */
#define POLICY_PENDING_MAX 256          /* devices waiting for their settle time at once */
#define POLICY_EVENTS_MAX 16            /* last events kept per policy */
#define POLICY_PATTERNS_MAX 64          /* values of the repeatable keys of one policy, together */
#define POLICY_SETTLE_MAX 3600          /* seconds */
#define POLICY_SETTLE_DEFAULT 2.0
#define POLICY_FILE_SUFFIX ".conf"
#define POLICY_NAME_MAX 64
#define POLICY_STATES_FILE "policies.json" /* in the state directory: the pauses, across restarts */

struct policy_event {
        double at;                      /* CLOCK_REALTIME seconds */
        char *device;                   /* node */
        char *what;                     /* "job 7 started", "refused: /dev/loop3: refusing: mounted on /mnt" */
        uint64_t job;                   /* the job it started, 0 when none */
};

/* One policy: one file NAME.conf of the policy directory. */
struct policy {
        char *name, *file;
        /* What it matches: every criterion given must hold; the values of one key are ORed. */
        char **match, **transport, **model, **serial, **backing;  /* NULL-terminated or NULL */
        size_t n_match, n_transport, n_model, n_serial, n_backing;
        int rotational;                 /* -1: either, else 0 or 1 */
        uint64_t min_size, max_size;    /* bytes; max_size 0: no bound */
        bool content_any;               /* content = any (default empty: no signature at all) */
        /* What it does: NULL or unset means the daemon's default. */
        char *method, *verify, *cipher;
        uint64_t max_rate;              /* bytes/s */
        bool have_max_rate;
        char *hook;                     /* command run when its jobs end (kept for the hooks) */
        double hook_timeout;            /* seconds, 0: the daemon's default */
        bool enabled;                   /* enabled = (initial state) */
        bool existing_wipe;             /* existing = wipe: also devices present when it was loaded */
        double settle;                  /* seconds a device must stay before its job starts */
        /* At run time (not from the file). */
        bool paused;                    /* disabled, or paused by policy_pause */
        double loaded_mono;             /* CLOCK_MONOTONIC when first loaded */
        uint64_t n_started, n_refused, n_skipped;
        struct policy_event events[POLICY_EVENTS_MAX]; /* a ring, oldest first from next_event */
        unsigned n_events, next_event;
};

/* Parse the text (len bytes) of the policy file called file into *p (initialised here; free it
 * with policy_done() in any case), the policy's name being name. 0, -EINVAL with every problem in
 * err ("FILE:LINE: message" one a line, an unknown key with the closest known one), or -ENOMEM. */
int policy_parse(struct policy *p, const char *name, const char *file, const char *text, size_t len, char *err,
                 size_t err_len);
void policy_done(struct policy *p);
/* Whether the device with identity id and /dev/disk links (NULL-terminated, may be NULL) meets
 * every match criterion of p: NULL when it does, else which one it fails ("transport", ...). A
 * partition never matches. Pure. */
const char *policy_match(const struct policy *p, const struct device_identity *id, char *const *links);
/* Whether name is a valid policy name (the file name without ".conf"): letters, digits, '-', '_',
 * '.', '@', at most POLICY_NAME_MAX bytes, not starting with '.'. */
bool policy_name_valid(const char *name);
/* wiped --check-config: read every policy of the directory dir ("none": none) and print each
 * problem on out. 0, or -errno when a file does not parse. */
int policy_check_dir(const char *dir, FILE *out);
/* Start watching devices (the monitor of policy-events) and read the policies of policy-dir: the
 * fd to wait on for device events, or -errno (logged; the policies then never act). */
int policy_start(struct pool *pool);
/* Device events are waiting on the fd. */
void policy_dispatch(void);
/* Main loop, about every 0.1 s: devices whose settle time is over are acted on. */
void policy_tick(void);
/* Read the policy directory again (SIGHUP): policies are added, changed or removed by name; a
 * paused one stays paused. A directory with a bad file changes nothing. */
void policy_reload(void);
void policy_stop(void);
/* "udev" or "kernel": where device events come from; NULL when none is watched. */
const char *policy_events_source(void);
/* Every policy, its settings, state, counters, last events and a dry run over the present
 * disks (wiped(8) PROTOCOL "policies"): a new array, or NULL on ENOMEM. */
struct json_object *policy_list_json(void);
/* Pause or resume the policy called name, also for the next start (POLICY_STATES_FILE): 0,
 * -ENOENT when there is none, -EALREADY when it is already so. */
int policy_set_paused(const char *name, bool paused);

/* uevent.c: block device events, from udev (sd-device monitor) or the kernel (netlink). */
enum uevent_action {
        UEVENT_ADD,
        UEVENT_CHANGE,
        UEVENT_REMOVE,
};

struct uevent {
        enum uevent_action action;
        char name[64];                  /* kernel name: loop3, sda */
        dev_t devno;
};

/* Open a monitor of whole-disk block device events: mode "udev" (udev's, after its rules ran:
 * the /dev/disk links exist), "kernel" (the kernel's netlink broadcast) or "auto" (udev when it
 * runs: /run/udev/control exists). The fd to poll, with what was chosen in *used; or -errno. */
int uevent_open(const char *mode, const char **used);
/* The next event into *ev: 1, 0 when there is none now, or -errno. Events of anything but a
 * whole disk of the block subsystem are skipped. */
int uevent_receive(struct uevent *ev);
void uevent_close(void);
/* metrics.c: Prometheus metrics (wiped(8) "METRICS"), at metrics-listen and in metrics-textfile */
#define METRICS_ENDED_MAX 256           /* ended jobs exported at most (the latest) */
/* Start serving (metrics-listen) and writing (metrics-textfile) what is configured, after the
 * jobs were loaded; pool's sizes are read now. 0 (also when nothing is configured), or -errno
 * (logged: the address cannot be bound, the directory cannot be opened). */
int metrics_start(struct pool *pool);
/* Main loop, every tick (main thread): the snapshot scrapes are served from, made again when a
 * second passed or a job's state changed, and the textfile rewritten every metrics-interval and
 * at a job's change of state. */
void metrics_tick(void);
/* Stop serving; write the textfile a last time, with wiped_up 0. Main thread, before
 * job_free_all(); accepts not started. */
void metrics_stop(void);
/* An I/O of a worker failed, or a synchronous retry of one (wiped_io_errors_total). Any thread. */
void metrics_count_io_error(void);
/* The exposition text of the daemon and the jobs shown, with wiped_up 1 or 0 (main thread): a
 * new malloc'd string with its length in *len, or NULL on ENOMEM. */
char *metrics_render(bool up, size_t *len);
/* A label value as the exposition format wants it: backslash, double quote and newline escaped. */
void metrics_put_label(FILE *f, const char *v);

/* server.c */
struct server_config {
        const char *socket_path;
        unsigned threads;
        bool foreground;
};
#define SERVER_LISTENERS_MAX 2          /* the control socket and the read-only one */
#define SERVER_STATUS_FDNAME "status"   /* FileDescriptorName= of the read-only socket systemd passes */
#define SERVER_CONTROL_CLIENTS_RESERVED 64 /* of WIPED_CLIENTS_MAX: never taken by the read-only socket */
#define SERVER_READ_ONLY_PER_UID_MAX 32 /* connections one uid may hold on the read-only socket */
#define SERVER_REQUESTS_PER_WAKEUP 8    /* requests of one connection answered before the others' turn */
#define SERVER_PAUSE_BACKLOG (256u << 10) /* unsent reply bytes above which a connection's further
                                         * requests wait (are not read) until it reads its replies */
/* Open the sockets to serve (wiped(8) PERMISSIONS): those systemd passed (sd_listen_fds: the one
 * named SERVER_STATUS_FDNAME read-only, the other the control socket; then none is created), else
 * the control socket at control_path (0660, the socket group) and, unless status_path is NULL, the
 * read-only socket at status_path (0666). 0, or -errno (logged) with nothing open or created. */
int server_listen(const char *control_path, const char *status_path);
/* Close the sockets; remove those server_listen() created. */
void server_unlisten(void);
/* Serve the sockets of server_listen() until SIGTERM/SIGINT, then call on_stop(arg) (which stops
 * the jobs) and send the watchers their last events. Returns 0, or -errno without calling on_stop. */
int server_run(struct pool *pool, void (*on_stop)(void *), void *arg);
/* WATCHDOG=1 to the service manager when half its interval passed (main thread): for a wait of the
 * main thread that is bounded but may outlast the interval (smartctl runs, smart.c). */
void server_watchdog_alive(void);

/* report-store.c */
/* The reply to a "reports" request req (wiped(8) PROTOCOL "reports"): the signed reports of
 * STATE_DIR/reports that match its since/until/batch/jobs, oldest first by ended_at then job, at
 * most its limit or about bytes_max bytes of them, with their report ids, the files left out as
 * unreadable and whether more match. Main thread. Never NULL but on ENOMEM. */
struct json_object *report_store_query(int64_t id, struct json_object *req, size_t bytes_max);
/* Drop the index of the report files (at exit). */
void report_store_free(void);

/* server-client.c */
#define PEER_GROUPS_MAX 256

/* Who is at the other end of a connection, as the kernel told us at accept time. */
struct peer {
        uid_t uid;
        gid_t gid;
        pid_t pid;                      /* for messages only: it may have gone or been reused */
        gid_t groups[PEER_GROUPS_MAX];  /* supplementary groups (SO_PEERGROUPS) */
        int n_groups;
        bool read_only;                 /* came through the read-only socket: may only look */
};

#define WATCH_INTERVAL_MS 1000          /* default progress event interval */
#define REQUEST_JOBS_MAX 4096          /* job ids a status or watch request may name (a plain number: */
#define STRINGIFY_(x) #x                /* error messages spell it with STRINGIFY) */
#define STRINGIFY(x) STRINGIFY_(x)

/* A connection's subscription to job events (the "watch" request). */
struct watch {
        uint64_t *ids;                  /* the watched jobs */
        uint32_t *seen;                 /* per job: the state signature last sent */
        double *sent;                   /* per job: CLOCK_MONOTONIC seconds of the last event */
        size_t n;
        double interval;                /* seconds between progress events of a job */
        bool ended;                     /* the "end" event was sent: nothing more to send */
};

/* Handle one request line from a peer; returns the reply (never NULL unless out of memory). A
 * "watch" request that was accepted also returns its subscription in *watch (NULL otherwise). */
struct json_object *client_handle(struct pool *pool, const struct peer *peer, const char *line, size_t len,
                                  struct watch **watch);
#define CLIENT_DEVICES_CACHE_S 2.0      /* how old a device list a read-only peer may be sent */
/* Free the device list kept for the read-only peers' devices requests (at exit). */
void client_devices_cache_drop(void);
void watch_free(struct watch *w);
/* The events due now for a subscription, appended to events (an array): "state" when a job's
 * state, pass or phase changed, "progress" every interval while it runs, "end" once when every
 * watched job has ended. 0 or -ENOMEM. */
int watch_events(struct watch *w, struct json_object *events);
