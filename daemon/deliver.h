/* wiped: delivery of the signed reports to a collector over HTTP(S) (wiped(8) "DELIVERY").
 *
 * A report is written to STATE_DIR/outbox/REPORTID.json (REPORTID: the SHA-256 of its bytes, hex)
 * before the job's record says it is reported, and stays there until the collector answered 2xx
 * (or 409) to a POST of it: it is never lost. Every POST of one report carries the same
 * Idempotency-Key, so a collector that keeps one report per key never holds two. One thread,
 * wiped-deliver, sends them one at a time; the main thread never waits for it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

struct job;

#define DELIVER_THREAD_NAME "wiped-deliver"
#define DELIVER_OUTBOX "outbox"         /* in the state directory; bad/ and delivered/ below it */
#define DELIVER_ERROR_MAX 256           /* bytes of a last error kept */

/* libcurl's global set-up: once, in main, before any thread starts. 0 or -errno (logged). */
int deliver_global_init(void);
void deliver_global_cleanup(void);
/* Read the configuration's report-* keys; with a report-url, create STATE_DIR/outbox/, queue every
 * report in it (one whose name is not its hash goes to outbox/bad/, logged) and start the thread.
 * Main thread, after the state directory is set and before jobs are loaded. 0 (also without a
 * report-url), or -errno (logged). */
int deliver_start(const char *state_dir);
/* Stop the thread (a transfer under way is aborted; its report stays in the outbox). Accepts not
 * started. */
void deliver_stop(void);
/* The job's report text (len bytes, as written to reports/) into the outbox, durably (file and
 * directory fsync'd), and queued: main thread, called by job_write_report() after the report was
 * written and before the job is marked reported. 0 (also when delivery is off), or -errno
 * (logged): the report then counts as not written and is written again later. */
int deliver_enqueue(struct job *job, const char *text, size_t len);
/* Add "report_id" (of report_file, NULL: none) and "delivery" to a job's status object. Main
 * thread. */
void deliver_job_json(struct json_object *o, uint64_t job, const char *report_file);
/* Add "reports_pending_delivery" and "collector" ({"host","last_error","last_attempt_at"}, null
 * when delivery is off) to a status or list reply. */
void deliver_reply_json(struct json_object *reply);

struct deliver_stats {
        bool enabled;
        unsigned pending;
        uint64_t delivered, failed_attempts;    /* since the start */
        double oldest_pending_s;        /* age of the oldest pending report, 0 when none */
};
/* Any thread. */
void deliver_stats(struct deliver_stats *st);
