/* Parsing of WHEN arguments: unix seconds, ISO 8601 dates and date-times, spans ago. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "when.h"

/* n digits at s into *v; false when one is not a digit. */
static bool digits(const char *s, int n, int *v) {
        *v = 0;
        for (int i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                *v = *v * 10 + (s[i] - '0');
        }
        return true;
}

/* A run of 1 to 18 digits at *s (so that it fits) into *v, advancing *s. */
static bool number(const char **s, int64_t *v) {
        const char *p = *s;

        *v = 0;
        while (*p >= '0' && *p <= '9' && p - *s < 18)
                *v = *v * 10 + (*p++ - '0');
        if (p == *s || (*p >= '0' && *p <= '9'))
                return false;
        *s = p;
        return true;
}

static bool leap(int y) {
        return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int month_days(int y, int m) {
        static const int days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

        return m == 2 && leap(y) ? 29 : days[m - 1];
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (the days_from_civil
 * algorithm): what timegm() gives, without its time_t and its GNU extension. */
static int64_t days_from_civil(int64_t y, int m, int d) {
        int64_t era, yoe, doy, doe;

        y -= m <= 2;
        era = (y >= 0 ? y : y - 399) / 400;
        yoe = y - era * 400;
        doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
        doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + doe - 719468;
}

/* "Z", "+HH", "+HH:MM", "+HHMM" (or '-'), the whole rest of the string at s: its offset east of
 * UTC in seconds. */
static bool zone(const char *s, int *offset) {
        int h, m = 0, sign;

        if (strcmp(s, "Z") == 0 || strcmp(s, "z") == 0) {
                *offset = 0;
                return true;
        }
        if (*s != '+' && *s != '-')
                return false;
        sign = *s++ == '-' ? -1 : 1;
        if (!digits(s, 2, &h))
                return false;
        s += 2;
        /* A colon only between hours and minutes: "+01:" is no zone. */
        if (*s == ':' && !*++s)
                return false;
        if (*s && (!digits(s, 2, &m) || s[2]))
                return false;
        if (h > 23 || m > 59)
                return false;
        *offset = sign * (h * 3600 + m * 60);
        return true;
}

static int parse_date_time(const char *s, int64_t *ret) {
        int y, mo, d, h = 0, mi = 0, sec = 0, offset = 0;
        bool has_zone = false;
        int64_t t;

        if (!digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) || s[7] != '-' || !digits(s + 8, 2, &d))
                return -EINVAL;
        s += 10;
        if (mo < 1 || mo > 12 || d < 1 || d > month_days(y, mo))
                return -EINVAL;
        if (*s == 'T' || *s == 't' || *s == ' ') {
                s++;
                if (!digits(s, 2, &h) || s[2] != ':' || !digits(s + 3, 2, &mi))
                        return -EINVAL;
                s += 5;
                if (*s == ':') {
                        if (!digits(s + 1, 2, &sec))
                                return -EINVAL;
                        s += 3;
                }
                if (h > 23 || mi > 59 || sec > 59)
                        return -EINVAL;
                if (*s) {
                        if (!zone(s, &offset))
                                return -EINVAL;
                        has_zone = true;
                }
        } else if (*s)
                return -EINVAL;

        if (has_zone)
                t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - offset;
        else {
                struct tm tm = { .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d,
                                 .tm_hour = h, .tm_min = mi, .tm_sec = sec, .tm_isdst = -1 };
                time_t tt = mktime(&tm);

                /* -1 is also one second before the epoch: out of range here either way. */
                if (tt == (time_t) -1)
                        return -ERANGE;
                t = (int64_t) tt;
        }
        if (t < 0)
                return -ERANGE;
        *ret = t;
        return 0;
}

int when_parse(const char *s, time_t now, int64_t *ret) {
        const char *p = s;
        int64_t v, unit;

        if (!s || !*s)
                return -EINVAL;
        if (strcmp(s, "now") == 0) {
                *ret = (int64_t) now;
                return 0;
        }
        if (*p == '@') {
                p++;
                if (!number(&p, &v))
                        return *p >= '0' && *p <= '9' ? -ERANGE : -EINVAL;
                if (*p)
                        return -EINVAL;
                *ret = v;
                return 0;
        }
        /* A date has a '-' after four digits; a span is digits and a unit. */
        if (strlen(s) >= 10 && s[4] == '-')
                return parse_date_time(s, ret);
        if (!number(&p, &v))
                return *p >= '0' && *p <= '9' ? -ERANGE : -EINVAL;
        if (strcmp(p, "s") == 0)
                unit = 1;
        else if (strcmp(p, "m") == 0 || strcmp(p, "min") == 0)
                unit = 60;
        else if (strcmp(p, "h") == 0)
                unit = 3600;
        else if (strcmp(p, "d") == 0)
                unit = 86400;
        else if (strcmp(p, "w") == 0)
                unit = 7 * 86400;
        else
                return -EINVAL;
        if (v > (int64_t) now / unit)
                return -ERANGE;
        *ret = (int64_t) now - v * unit;
        return 0;
}
