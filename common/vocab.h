/* The words the daemon, its configuration, its records, the protocol and the CLI all use: job
 * states, verification modes (with the one parser of "sample=PCT"), how a verification ended, and
 * the kinds of events in a job's history. One definition each; see wiped(8) PROTOCOL. */
#pragma once

#include <stdbool.h>

enum job_state {
        JOB_RUNNING,
        JOB_FLUSHING,
        JOB_DONE,
        JOB_FAILED,
        JOB_CANCELLED,
        JOB_INTERRUPTED,
        JOB_PAUSED,                     /* stopped by a user at a checkpoint; resumable */
        JOB_DONE_ERRORS,                /* done, but for bad sectors that could not be written */
        _JOB_STATE_MAX,
};

/* "running", "flushing", "done", "failed", "cancelled", "interrupted", "paused",
 * "done-with-errors"; "unknown" for anything else. */
const char *job_state_name(enum job_state s);
/* The state a name stands for: 0 with *ret, or -EINVAL. */
int job_state_from_name(const char *name, enum job_state *ret);
/* Whether a job in state s has stopped working: done (with errors or not), failed, cancelled or
 * interrupted. Paused is not final (it waits for a resume). */
bool job_state_is_final(enum job_state s);
/* The same for a state's name (NULL or an unknown name: false). */
bool job_state_name_is_final(const char *name);

enum verify_mode {
        VERIFY_NONE,
        VERIFY_SAMPLE,                  /* NIST SP 800-88 sampling of the last pass */
        VERIFY_LAST,                    /* read the whole device after the last pass */
        VERIFY_ALL,                     /* read the whole device after every pass */
        _VERIFY_MODE_MAX,
};

/* "none", "sample", "last", "all"; "unknown" for anything else. */
const char *verify_mode_name(enum verify_mode m);
/* Parse "none", "sample" (SAMPLE_PERCENT_DEFAULT), "sample=PCT", "last" or "all": 0 with *mode
 * and *percent (0 but for sample; either pointer may be NULL), or -EINVAL. PCT is a plain decimal
 * number in (0, 100], "10" or "2.5": no sign, exponent, hex, "inf" or "nan", no spaces. */
int verify_mode_parse(const char *s, enum verify_mode *mode, double *percent);

/* How a verification run ended. */
enum verify_end {
        VERIFY_END_COMPLETE,            /* every planned byte was compared (passed or failed) */
        VERIFY_END_CANCELLED,           /* a later verification, cancelled */
        VERIFY_END_INTERRUPTED,         /* a later verification, stopped by the daemon's stop */
        VERIFY_END_ERROR,               /* a later verification that could not read (I/O error) */
        _VERIFY_END_MAX,
};

/* A run's result: "passed" or "failed" when it completed (by whether anything mismatched), else
 * "cancelled", "interrupted" or "error". */
const char *verify_result_word(enum verify_end end, bool mismatched);
/* The end of a run that ended early, from its result name ("cancelled", "interrupted", "error"):
 * 0 with *ret, or -EINVAL. */
int verify_end_from_name(const char *name, enum verify_end *ret);

/* A line of a job's history (reports list them): where it started, stopped and went on. */
enum job_event_kind {
        JOB_EVENT_STARTED,
        JOB_EVENT_INTERRUPTED,
        JOB_EVENT_PAUSED,
        JOB_EVENT_RESUMED,
        JOB_EVENT_ENDED,
        _JOB_EVENT_MAX,
};

/* "started", "interrupted", "paused", "resumed", "ended"; "unknown" for anything else. */
const char *job_event_name(enum job_event_kind k);
/* The kind a name stands for: 0 with *ret, or -EINVAL. */
int job_event_from_name(const char *name, enum job_event_kind *ret);
