#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "strutil.h"

void hex_encode(char *out, const uint8_t *in, size_t n) {
        static const char digits[] = "0123456789abcdef";

        for (size_t i = 0; i < n; i++) {
                out[2 * i] = digits[in[i] >> 4];
                out[2 * i + 1] = digits[in[i] & 15];
        }
        out[2 * n] = '\0';
}

static int hexval(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

int hex_decode(const char *s, uint8_t *out, size_t max, size_t *n) {
        size_t len = strlen(s);

        if (len % 2 || len / 2 > max)
                return -EINVAL;
        for (size_t i = 0; i < len; i += 2) {
                int hi = hexval(s[i]), lo = hexval(s[i + 1]);

                if (hi < 0 || lo < 0)
                        return -EINVAL;
                out[i / 2] = (uint8_t) (hi << 4 | lo);
        }
        *n = len / 2;
        return 0;
}

/* A decimal number of at most 10 digits that fits 32 bits: its end, or NULL. */
static const char *parse_u32(const char *s, unsigned *ret) {
        unsigned long v = 0;
        const char *p = s;

        while (*p >= '0' && *p <= '9' && p - s < 10)
                v = v * 10 + (unsigned long) (*p++ - '0');
        if (p == s || (*p >= '0' && *p <= '9') || v > 0xffffffffUL)
                return NULL;
        *ret = (unsigned) v;
        return p;
}

int parse_devno(const char *s, dev_t *ret) {
        unsigned ma, mi;

        if (!s || !(s = parse_u32(s, &ma)) || *s++ != ':' || !(s = parse_u32(s, &mi)) || *s)
                return -EINVAL;
        *ret = makedev(ma, mi);
        return 0;
}

static bool is_blank(char ch) {
        return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v';
}

char *strip_blanks(char *s) {
        size_t n;

        while (is_blank(*s))
                s++;
        n = strlen(s);
        while (n > 0 && is_blank(s[n - 1]))
                s[--n] = '\0';
        return s;
}

void strv_free(char **v) {
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
}

int strv_append(char ***v, size_t *n, const char *s) {
        char **nv = realloc(*v, (*n + 2) * sizeof(*nv));

        if (!nv)
                return -ENOMEM;
        *v = nv;
        nv[*n] = strdup(s);
        if (!nv[*n])
                return -ENOMEM;
        nv[++*n] = NULL;
        return 0;
}
