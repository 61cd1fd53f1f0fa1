/* Human-readable sizes, rates and durations. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <strings.h>

#include "units.h"

char *units_size(char *buf, size_t n, uint64_t bytes) {
        static const char *const suffix[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
        double v = (double) bytes;
        unsigned i = 0;

        if (bytes < 1024) {
                snprintf(buf, n, "%" PRIu64 " B", bytes);
                return buf;
        }
        while (v >= 1024.0 && i < 6) {
                v /= 1024.0;
                i++;
        }
        snprintf(buf, n, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, suffix[i]);
        return buf;
}

char *units_rate(char *buf, size_t n, double bps) {
        if (bps < 0)
                bps = 0;
        snprintf(buf, n, "%.1f MB/s", bps / 1e6);
        return buf;
}

char *units_duration(char *buf, size_t n, int64_t s) {
        if (s < 0)
                snprintf(buf, n, "-");
        else if (s < 60)
                snprintf(buf, n, "%" PRId64 "s", s);
        else if (s < 3600)
                snprintf(buf, n, "%" PRId64 "m%02" PRId64 "s", s / 60, s % 60);
        else if (s < 100 * 3600)
                snprintf(buf, n, "%" PRId64 "h%02" PRId64 "m", s / 3600, (s / 60) % 60);
        else
                snprintf(buf, n, "%" PRId64 "d%02" PRId64 "h", s / 86400, (s / 3600) % 24);
        return buf;
}

int units_parse_size(const char *s, uint64_t *ret) {
        static const char *const suffixes = "KMGTPE";
        unsigned long long v;
        unsigned shift = 0;
        const char *p;
        char *end;

        if (!s || !*s || *s == '-' || *s == '+')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (end == s)
                return -EINVAL;
        if (*end) {
                p = (*end >= 'a' && *end <= 'z') || (*end >= 'A' && *end <= 'Z') ? strchr(suffixes, *end & ~0x20) : NULL;
                if (!p)
                        return -EINVAL;
                shift = 10 * (unsigned) (p - suffixes + 1);
                end++;
                if (strcasecmp(end, "") != 0 && strcasecmp(end, "iB") != 0 && strcasecmp(end, "B") != 0)
                        return -EINVAL;
        }
        if (shift && v > (UINT64_MAX >> shift))
                return -ERANGE;
        *ret = (uint64_t) v << shift;
        return 0;
}

int units_parse_rate(const char *s, uint64_t *ret) {
        static const char *const suffixes = "KMGT";
        long double v, mult = 1;
        unsigned points = 0;
        const char *p;
        char *end;

        if (!s || !*s || *s == '-' || *s == '+' || *s == '.' || !(*s >= '0' && *s <= '9'))
                return -EINVAL;
        /* Digits and at most one point: no hex, exponents or infinities from strtold. */
        for (p = s; (*p >= '0' && *p <= '9') || *p == '.'; p++)
                if (*p == '.' && points++ > 0)
                        return -EINVAL;
        errno = 0;
        v = strtold(s, &end);
        if (end != p)
                return -EINVAL;
        if (errno == ERANGE)
                return -ERANGE;
        if (end == s || v != v)
                return -EINVAL;
        if (*end) {
                p = (*end >= 'a' && *end <= 'z') || (*end >= 'A' && *end <= 'Z') ? strchr(suffixes, *end & ~0x20) : NULL;
                if (p) {
                        bool binary = end[1] == 'i' || end[1] == 'I';

                        for (long i = 0; i <= p - suffixes; i++)
                                mult *= binary ? 1024.0L : 1000.0L;
                        end += binary ? 2 : 1;
                }
                if (*end == 'B' || *end == 'b')
                        end++;
                if (strcmp(end, "/s") == 0)
                        end += 2;
                if (*end)
                        return -EINVAL;
        }
        v *= mult;
        if (v >= 18446744073709551615.0L)
                return -ERANGE;
        if (v > 0 && v < 1)
                return -EINVAL;         /* under one byte per second: surely a mistake */
        *ret = (uint64_t) (v + 0.5L);
        return 0;
}

const char *units_plural(int64_t n, const char *one, const char *many) {
        return n == 1 ? one : many;
}
