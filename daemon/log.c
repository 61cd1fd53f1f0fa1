/* Logging. Under journald (stderr is the stream JOURNAL_STREAM names) every message is a
 * structured journal entry (sd_journal_send): job events carry a MESSAGE_ID per event type and the
 * fields WIPED_JOB, WIPED_DEVICE and WIPED_SERIAL (wiped(8) "LOGGING" lists them). Elsewhere a
 * line on stderr: "<N>message" (sd-daemon(3) priority prefix), or "wiped: message" on a terminal.
 * Thread-safe: one write per message. */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <syslog.h>
#include <systemd/sd-journal.h>

#include "daemon.h"

static bool log_journal;        /* stderr is connected to journald, or detached with a journal */
static bool log_syslog;         /* detached without a journal: syslog(3) */
static bool log_tty;            /* stderr is a terminal */
static bool log_detached;       /* stderr is /dev/null: a line that cannot go to the journal goes to syslog */
static int log_max = LOG_INFO;

/* The MESSAGE_IDs of job events (also in wiped(8)). */
static const char *const log_ids[_LOG_EVENT_MAX] = {
        [LOG_EVENT_JOB_STARTED] = "191bb7c282d8423388b4eb8685b1a626",
        [LOG_EVENT_PASS_DONE] = "e9a6243f8b6441d784ff445830291483",
        [LOG_EVENT_VERIFY_PASSED] = "84fca34eb01f4991803c87fbaa1ecab9",
        [LOG_EVENT_VERIFY_FAILED] = "afe8783eb2c74781a7e6db24ccd15967",
        [LOG_EVENT_JOB_DONE] = "015a9b3a6a7d4f6f9908acf397fbd073",
        [LOG_EVENT_JOB_FAILED] = "7b27dc23179a4d0682374f46925c99a5",
        [LOG_EVENT_JOB_CANCELLED] = "1126b28c61bc4f04960c1f1fa1a63c8c",
        [LOG_EVENT_JOB_INTERRUPTED] = "70168704748a45668d92e36a639fc1e3",
        [LOG_EVENT_JOB_PAUSED] = "d7f6e00e756c41eda33d8659296878d7",
        [LOG_EVENT_JOB_RESUMED] = "736873e9b483437eaf52667fbc9886c4",
        [LOG_EVENT_REPORT_WRITTEN] = "37252d5071fe4b9b9478cad29768974a",
        [LOG_EVENT_STATE_CORRUPT] = "b0f6baeb377547f49b162f1bcd82d9c5",
        [LOG_EVENT_HOOK_FINISHED] = "e068c435b65348d9b22697a789ac97cc",
        [LOG_EVENT_HOOK_FAILED] = "1f3f1c1247a647aebc22d42e09564cb3",
        [LOG_EVENT_POLICY_REFUSED] = "5b0e6a1f3c9d4e2b8a7f61d04c3e9a52",
        [LOG_EVENT_POLICY_SKIPPED] = "c4d81f27a96b4f0e93e5b2a7d6f1083c",
};

const char *log_event_id(enum log_event e) {
        return e >= 0 && e < _LOG_EVENT_MAX ? log_ids[e] : NULL;
}

/* Whether stderr is the journal stream systemd connected us to: JOURNAL_STREAM is "DEV:INODE" of
 * that stream (systemd.exec(5)); a child with stderr redirected elsewhere must not use it. */
static bool stderr_is_journal(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0)
                return false;
        return (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
}

/* Whether stderr is /dev/null (a detached daemon): nobody reads it. */
static bool stderr_is_null(void) {
        struct stat st, null;

        return fstat(STDERR_FILENO, &st) == 0 && stat("/dev/null", &null) == 0 && S_ISCHR(st.st_mode) &&
               st.st_rdev == null.st_rdev;
}

void log_setup(bool verbose) {
        log_journal = stderr_is_journal();
        log_tty = isatty(STDERR_FILENO);
        log_syslog = false;
        log_detached = !log_journal && stderr_is_null();
        if (log_detached) {
                /* Detached: the journal where it runs, else syslog; never the terminal left.
                 * syslog is opened either way: it takes what the journal refuses. */
                openlog("wiped", LOG_PID, LOG_DAEMON);
                if (access("/run/systemd/journal/socket", F_OK) == 0)
                        log_journal = true;
                else
                        log_syslog = true;
        }
        log_max = verbose ? LOG_DEBUG : LOG_INFO;
}

static void log_line(int level, const char *msg) {
        /* Detached, a message the journal did not take is not lost in /dev/null (syslog(3) opens
         * its socket at the first call). */
        if (log_syslog || log_detached)
                syslog(level, "%s", msg);
        else if (log_tty)
                fprintf(stderr, "wiped: %s\n", msg);
        else
                fprintf(stderr, "<%d>%s\n", level, msg);
}

/* One message: a journal entry with PRIORITY (and, for a job event, its MESSAGE_ID and fields),
 * else a line on stderr. */
static void log_emit(int level, enum log_event event, uint64_t job, const char *device, const char *serial,
                     const char *fmt, va_list ap) {
        char buf[2048];
        int r = -1;

        vsnprintf(buf, sizeof(buf), fmt, ap);
        if (log_journal && event == _LOG_EVENT_MAX)
                r = sd_journal_send("MESSAGE=%s", buf, "PRIORITY=%d", level, "SYSLOG_IDENTIFIER=wiped", NULL);
        else if (log_journal)
                r = sd_journal_send("MESSAGE=%s", buf, "PRIORITY=%d", level, "SYSLOG_IDENTIFIER=wiped",
                                    "MESSAGE_ID=%s", log_event_id(event), "WIPED_JOB=%" PRIu64, job,
                                    "WIPED_DEVICE=%s", device ? device : "", "WIPED_SERIAL=%s", serial ? serial : "",
                                    NULL);
        if (r < 0)
                log_line(level, buf);
}

void log_msg(int level, const char *fmt, ...) {
        va_list ap;

        if (level > log_max)
                return;
        va_start(ap, fmt);
        log_emit(level, _LOG_EVENT_MAX, 0, NULL, NULL, fmt, ap);
        va_end(ap);
}

static atomic_uint_fast64_t log_event_counts[_LOG_EVENT_MAX];

uint64_t log_event_count(enum log_event e) {
        return (unsigned) e < _LOG_EVENT_MAX ? atomic_load(&log_event_counts[e]) : 0;
}

void log_job(int level, enum log_event event, uint64_t job, const char *device, const char *serial,
             const char *fmt, ...) {
        va_list ap;

        if ((unsigned) event < _LOG_EVENT_MAX)
                atomic_fetch_add_explicit(&log_event_counts[event], 1, memory_order_relaxed);
        if (level > log_max)
                return;
        va_start(ap, fmt);
        log_emit(level, event, job, device, serial, fmt, ap);
        va_end(ap);
}
