/* The words and numbers of the PDF certificate that need no drawing (pdf.h): times, durations, the
 * key file the check command names. Kept apart from pdf.c so that unit tests reach them without
 * cairo. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sign.h"
#include "pdf.h"

const char *pdf_format_time(time_t t, char *buf, size_t n) {
        struct tm tm;

        if (!gmtime_r(&t, &tm) || strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
                snprintf(buf, n, "?");
        return buf;
}

const char *pdf_format_duration(double s, char *buf, size_t n) {
        int64_t t = (int64_t) (s + 0.5);

        if (s < 0)
                snprintf(buf, n, "?");
        else if (t >= 3600)
                snprintf(buf, n, "%" PRId64 " h %02" PRId64 " min %02" PRId64 " s (%.1f s)", t / 3600, t / 60 % 60,
                         t % 60, s);
        else if (t >= 60)
                snprintf(buf, n, "%" PRId64 " min %02" PRId64 " s (%.1f s)", t / 60, t % 60, s);
        else
                snprintf(buf, n, "%.1f s", s);
        return buf;
}

const char *pdf_format_key_path(const struct pdf_options *o, const char *file, char *buf, size_t n) {
        static const char reports[] = "/reports";
        const char *slash = strrchr(file, '/');
        size_t dir = slash ? (size_t) (slash - file) : 0;

        if (o && o->key_path)
                snprintf(buf, n, "%s", o->key_path);
        else if (dir > strlen(reports) && memcmp(file + dir - strlen(reports), reports, strlen(reports)) == 0)
                snprintf(buf, n, "%.*s/%s", (int) (dir - strlen(reports)), file, SIGN_PUB_FILE);
        else
                snprintf(buf, n, "/var/lib/wiped/%s", SIGN_PUB_FILE);
        return buf;
}
