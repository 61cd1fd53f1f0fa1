/* Drive health from smartmontools' smartctl (wiped(8) "DRIVE HEALTH"): a snapshot before a job
 * writes and one after it ended, in its record and report, and one in every probe; smart-policy
 * decides what a drive that fails its health check does to a submit.
 *
 * A snapshot is the JSON object of the report's "smart_before" and "smart_after" and of the
 * probe's "smart": {"available", "reason" (only when not available), "tool", "checked_at",
 * "passed", "power_on_hours", "reallocated_sectors", "pending_sectors", "offline_uncorrectable",
 * "nvme_percentage_used", "nvme_media_errors", "nvme_critical_warning", "temperature_c"}, the
 * numbers and "passed" null where the drive does not say. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

struct job;

#define SMART_TIMEOUT_DEFAULT 30                /* smart-timeout, seconds */
#define SMART_TIMEOUT_MAX 60                    /* CONFFILE_SMART_TIMEOUT_MAX */
#define SMART_OUTPUT_MAX (4u << 20)             /* bytes of smartctl's output read; more is unreadable */

/* smart-policy: what a drive whose health check failed (passed false) does to a submit. */
enum smart_policy {
        SMART_POLICY_IGNORE,            /* not checked for jobs at all (a probe still shows it) */
        SMART_POLICY_FLAG,              /* wiped, the failure in the report (an exception) */
        SMART_POLICY_REFUSE,            /* the submit is refused (-EBUSY), nothing written */
        _SMART_POLICY_MAX,
};

/* "ignore", "flag", "refuse"; NULL for another value. */
const char *smart_policy_name(enum smart_policy p);
/* The policy of a name, or -EINVAL. */
int smart_policy_from_name(const char *name, enum smart_policy *ret);

/* The snapshot smartctl's JSON output (json, len bytes; need not be terminated) says, with
 * exit_status smartctl's exit status (-1: unknown) and checked_at unix seconds. Pure: no I/O.
 * Output that is not smartctl's JSON gives {"available": false, "reason": "smartctl output
 * unreadable"}; a device smartctl finds no SMART on gives available false with the reason smartctl
 * gives ("no SMART: Unable to detect device type"). A new object, NULL on ENOMEM. */
struct json_object *smart_parse(const char *json, size_t len, int exit_status, int64_t checked_at);
/* A snapshot that is not available, for reason (tool may be NULL). NULL on ENOMEM. */
struct json_object *smart_unavailable(const char *reason, const char *tool, int64_t checked_at);
/* Whether the snapshot o says the drive failed its health check (passed is false). */
bool smart_failed(struct json_object *o);

/* Run smartctl (program: a path, or a name looked up in PATH) on the n device nodes at once, with
 * kinds[i] (may be NULL) what node i is when it is known to have no SMART ("loop device"): the
 * snapshots in out[i] (new objects; NULL only on ENOMEM). Each run is killed (its process group)
 * after timeout_s seconds: reason "smartctl timed out". Blocks the calling thread that long at
 * most; reads nothing of the devices itself. */
void smart_run(const char *program, unsigned timeout_s, const char *const *nodes, const char *const *kinds,
               size_t n, struct json_object **out);
/* What a device node is when it cannot have SMART ("loop device", ...), from the kernel name and
 * transport of its identity; NULL when it may. */
const char *smart_kind(const char *name, const char *transport);

/* Add "smart" to every PROBE object of the array devices (null when it is not a block device):
 * smartctl run on all of them at once, smart-timeout at most in all (the main thread waits: the
 * watchdog's interval is far longer). */
void smart_probe_add(struct json_object *devices);

/* ---- jobs ---- */
/* Take the snapshots before the jobs made[0..n) write (their devices are open, nothing is
 * written yet), by smart-policy; all drives at once, smart-timeout at most. Under refuse, a drive
 * whose check failed refuses the submit: -EBUSY with the message in err. 0 otherwise. */
int smart_jobs_before(struct job **made, size_t n, char *err, size_t err_len);
/* Main loop, for each job: once it ended for good, start taking its snapshot after (a thread of
 * its own) when it has one before and none after yet; collect a finished one. */
void smart_job_tick(struct job *job);
/* Whether the job's report is to wait no more (and its hook): its snapshot after is taken, or
 * none is due. A report written before it (at a forget, at the daemon's stop) is written again
 * once it is in. */
bool smart_job_settled(struct job *job);
/* Release the job's snapshots and wait for its snapshot thread, if any (job_free). */
void smart_job_free(struct job *job);
/* Add the job's "smart_policy", "smart_before" and "smart_after" to its report o (null when
 * none: a job made before drive health). */
void smart_report_add(struct job *job, struct json_object *o);
/* Add "smart_before" to the job's status object o. */
void smart_status_add(struct job *job, struct json_object *o);
/* The job's "smart" member of its record ({"policy","before","after"}), added to o when it has one. */
void smart_record_add(struct job *job, struct json_object *o);
/* Its record's "smart" member (rec: the whole record) into job. 0, -EBADMSG or -ENOMEM. */
int smart_record_parse(struct json_object *rec, struct job *job);
