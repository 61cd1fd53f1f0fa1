/* Strict UTF-8 checking and repair (RFC 3629, Unicode's table 3-7 of well-formed sequences). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

size_t utf8_sequence(const char *s, size_t len) {
        const uint8_t *p = (const uint8_t *) s;
        uint8_t lo = 0x80, hi = 0xbf;
        size_t n;

        if (len == 0)
                return 0;
        if (p[0] < 0x80)
                return 1;
        /* The lead byte says how long; the second byte's range excludes overlong forms (E0, F0),
         * surrogates (ED) and code points above U+10FFFF (F4). */
        if (p[0] >= 0xc2 && p[0] <= 0xdf)
                n = 2;
        else if (p[0] >= 0xe0 && p[0] <= 0xef) {
                n = 3;
                if (p[0] == 0xe0)
                        lo = 0xa0;
                else if (p[0] == 0xed)
                        hi = 0x9f;
        } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
                n = 4;
                if (p[0] == 0xf0)
                        lo = 0x90;
                else if (p[0] == 0xf4)
                        hi = 0x8f;
        } else
                return 0;       /* 80..C1 (continuation or overlong lead), F5..FF */
        if (len < n || p[1] < lo || p[1] > hi)
                return 0;
        for (size_t i = 2; i < n; i++)
                if (p[i] < 0x80 || p[i] > 0xbf)
                        return 0;
        return n;
}

bool utf8_valid(const char *s, size_t len) {
        size_t i = 0;

        while (i < len) {
                size_t n;

                /* ASCII runs are the common case. */
                if ((uint8_t) s[i] < 0x80) {
                        i++;
                        continue;
                }
                n = utf8_sequence(s + i, len - i);
                if (n == 0)
                        return false;
                i += n;
        }
        return true;
}

char *utf8_sanitize_dup(const char *s) {
        static const char replacement[] = "\xef\xbf\xbd";
        size_t len, bad = 0, i, o;
        char *out;

        if (!s)
                return NULL;
        len = strlen(s);
        for (i = 0; i < len;) {
                size_t n = utf8_sequence(s + i, len - i);

                if (n == 0) {
                        bad++;
                        n = 1;
                }
                i += n;
        }
        out = malloc(len + 2 * bad + 1);
        if (!out)
                return NULL;
        for (i = 0, o = 0; i < len;) {
                size_t n = utf8_sequence(s + i, len - i);

                if (n == 0) {
                        memcpy(out + o, replacement, 3);
                        o += 3;
                        i++;
                        continue;
                }
                memcpy(out + o, s + i, n);
                o += n;
                i += n;
        }
        out[o] = '\0';
        return out;
}

char *utf8_sanitize(char *s) {
        char *t;

        if (!s || utf8_valid(s, strlen(s)))
                return s;
        t = utf8_sanitize_dup(s);
        free(s);
        return t;
}

bool utf8_text_valid(const char *s, size_t len) {
        if (!utf8_valid(s, len))
                return false;
        for (size_t i = 0; i < len; i++) {
                uint8_t c = (uint8_t) s[i];

                if (c < 0x20 || c == 0x7f)
                        return false;
                /* U+0080..U+009F are encoded 0xC2 0x80..0x9F. */
                if (c == 0xc2 && i + 1 < len && (uint8_t) s[i + 1] < 0xa0)
                        return false;
                /* The line and paragraph separators U+2028, U+2029 and the bidi embeddings,
                 * overrides and isolates U+202A..U+202E, U+2066..U+2069 (0xE2 0x80 0xA8..0xAE,
                 * 0xE2 0x81 0xA6..0xA9): a record's one line of text, read in the order written. */
                if (c == 0xe2 && i + 2 < len) {
                        uint8_t c1 = (uint8_t) s[i + 1], c2 = (uint8_t) s[i + 2];

                        if ((c1 == 0x80 && c2 >= 0xa8 && c2 <= 0xae) || (c1 == 0x81 && c2 >= 0xa6 && c2 <= 0xa9))
                                return false;
                }
        }
        return true;
}
