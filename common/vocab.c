#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sample.h"
#include "vocab.h"

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

static const char *const end_names[_VERIFY_END_MAX] = {
        [VERIFY_END_CANCELLED] = "cancelled",
        [VERIFY_END_INTERRUPTED] = "interrupted",
        [VERIFY_END_ERROR] = "error",
};

static const char *const event_names[_JOB_EVENT_MAX] = {
        [JOB_EVENT_STARTED] = "started",
        [JOB_EVENT_INTERRUPTED] = "interrupted",
        [JOB_EVENT_PAUSED] = "paused",
        [JOB_EVENT_RESUMED] = "resumed",
        [JOB_EVENT_ENDED] = "ended",
};

/* The index of name in names[0..n) (NULL entries match nothing): it, or -EINVAL. */
static int name_index(const char *const *names, int n, const char *name) {
        for (int i = 0; name && i < n; i++)
                if (names[i] && strcmp(names[i], name) == 0)
                        return i;
        return -EINVAL;
}

const char *job_state_name(enum job_state s) {
        return s < _JOB_STATE_MAX ? state_names[s] : "unknown";
}

int job_state_from_name(const char *name, enum job_state *ret) {
        int i = name_index(state_names, _JOB_STATE_MAX, name);

        if (i < 0)
                return i;
        *ret = (enum job_state) i;
        return 0;
}

bool job_state_is_final(enum job_state s) {
        return s == JOB_DONE || s == JOB_DONE_ERRORS || s == JOB_FAILED || s == JOB_CANCELLED || s == JOB_INTERRUPTED;
}

bool job_state_name_is_final(const char *name) {
        enum job_state s;

        return job_state_from_name(name, &s) == 0 && job_state_is_final(s);
}

const char *verify_mode_name(enum verify_mode m) {
        return m < _VERIFY_MODE_MAX ? verify_names[m] : "unknown";
}

/* A plain decimal number, "10" or "2.5", in (0, 100]: 0 with *ret, or -EINVAL. strtod() alone
 * would also take a sign, spaces, an exponent, hex, "inf" and "nan". */
static int parse_percent(const char *s, double *ret) {
        size_t digits = strspn(s, "0123456789."), dots = 0;
        double v;

        for (const char *p = s; *p; p++)
                dots += *p == '.';
        if (digits == 0 || s[digits] != '\0' || dots > 1 || strcmp(s, ".") == 0)
                return -EINVAL;
        v = strtod(s, NULL);
        if (!(v > 0 && v <= 100))
                return -EINVAL;
        *ret = v;
        return 0;
}

int verify_mode_parse(const char *s, enum verify_mode *mode, double *percent) {
        enum verify_mode m;
        double pct = 0;
        int i;

        if (!s)
                return -EINVAL;
        if (strncmp(s, "sample=", 7) == 0) {
                if (parse_percent(s + 7, &pct) < 0)
                        return -EINVAL;
                m = VERIFY_SAMPLE;
        } else {
                i = name_index(verify_names, _VERIFY_MODE_MAX, s);
                if (i < 0)
                        return i;
                m = (enum verify_mode) i;
                if (m == VERIFY_SAMPLE)
                        pct = SAMPLE_PERCENT_DEFAULT;
        }
        if (mode)
                *mode = m;
        if (percent)
                *percent = pct;
        return 0;
}

const char *verify_result_word(enum verify_end end, bool mismatched) {
        if (end > VERIFY_END_COMPLETE && end < _VERIFY_END_MAX)
                return end_names[end];
        return mismatched ? "failed" : "passed";
}

int verify_end_from_name(const char *name, enum verify_end *ret) {
        int i = name_index(end_names, _VERIFY_END_MAX, name);

        if (i < 0)
                return i;
        *ret = (enum verify_end) i;
        return 0;
}

const char *job_event_name(enum job_event_kind k) {
        return k < _JOB_EVENT_MAX ? event_names[k] : "unknown";
}

int job_event_from_name(const char *name, enum job_event_kind *ret) {
        int i = name_index(event_names, _JOB_EVENT_MAX, name);

        if (i < 0)
                return i;
        *ret = (enum job_event_kind) i;
        return 0;
}
