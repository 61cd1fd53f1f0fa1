/* Logging to stderr: "<N>message" lines when stderr is the journal (sd-daemon(3) prefixes),
 * "wiped: message" otherwise. Thread-safe: one fprintf per message. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "daemon.h"

static bool log_journal;        /* stderr is connected to journald */
static int log_max = LOG_INFO;

void log_setup(bool verbose) {
        log_journal = getenv("JOURNAL_STREAM") != NULL;
        log_max = verbose ? LOG_DEBUG : LOG_INFO;
}

void log_msg(int level, const char *fmt, ...) {
        char buf[2048];
        va_list ap;

        if (level > log_max)
                return;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        if (log_journal)
                fprintf(stderr, "<%d>%s\n", level, buf);
        else
                fprintf(stderr, "wiped: %s\n", buf);
}
