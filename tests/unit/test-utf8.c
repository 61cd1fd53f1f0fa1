/* Strict UTF-8: every length, every edge of Unicode's table of well-formed sequences, repair. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "utf8.h"

static bool valid(const char *s) {
        return utf8_valid(s, strlen(s));
}

static void test_valid(void **state) {
        (void) state;
        assert_true(valid(""));
        assert_true(valid("/dev/sdb"));
        assert_true(valid("\xc2\x80"));                 /* U+0080, the first two-byte character */
        assert_true(valid("\xdf\xbf"));                 /* U+07FF */
        assert_true(valid("\xe0\xa0\x80"));             /* U+0800 */
        assert_true(valid("\xed\x9f\xbf"));             /* U+D7FF, just below the surrogates */
        assert_true(valid("\xee\x80\x80"));             /* U+E000, just above */
        assert_true(valid("\xef\xbf\xbf"));             /* U+FFFF */
        assert_true(valid("\xf0\x90\x80\x80"));         /* U+10000 */
        assert_true(valid("\xf4\x8f\xbf\xbf"));         /* U+10FFFF, the last */
        assert_true(utf8_valid("a\0b", 3));             /* NUL is ASCII here; the protocol refuses it itself */

        assert_false(valid("\x80"));                    /* a continuation byte alone */
        assert_false(valid("\xbf"));
        assert_false(valid("\xc0\x80"));                /* overlong NUL */
        assert_false(valid("\xc0\xaf"));                /* overlong "/" */
        assert_false(valid("\xc1\xbf"));
        assert_false(valid("\xe0\x80\xaf"));            /* overlong in three */
        assert_false(valid("\xe0\x9f\xbf"));
        assert_false(valid("\xf0\x80\x80\xaf"));        /* overlong in four */
        assert_false(valid("\xf0\x8f\xbf\xbf"));
        assert_false(valid("\xed\xa0\x80"));            /* U+D800 */
        assert_false(valid("\xed\xbf\xbf"));            /* U+DFFF */
        assert_false(valid("\xf4\x90\x80\x80"));        /* U+110000 */
        assert_false(valid("\xf5\x80\x80\x80"));
        assert_false(valid("\xff"));
        assert_false(valid("\xc3"));                    /* cut */
        assert_false(valid("\xe2\x82"));
        assert_false(valid("\xe2\x82x"));
        assert_false(valid("\xf0\x9f\x92"));
        assert_false(valid("ok\xc3("));                 /* a lead byte followed by ASCII */

        assert_int_equal(utf8_sequence("\xe2\x82\xac", 3), 3);
        assert_int_equal(utf8_sequence("\xe2\x82\xac", 2), 0);
        assert_int_equal(utf8_sequence("a", 1), 1);
        assert_int_equal(utf8_sequence("", 0), 0);
}

/* Record text (asset tags, names): valid UTF-8 without C0, DEL or C1 control characters, line or
 * paragraph separators, or bidi overrides (U+2027, U+202F, U+2065, U+206A and Hebrew are fine). */
static void test_text(void **state) {
        static const char *const good[] = { "AT-0001", "Ana Müller", "東京", "+49 30 1234", "\xc2\xa0nbsp", "",
                                            "\xe2\x80\xa7 \xe2\x80\xaf \xe2\x81\xa5 \xe2\x81\xaa", "\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d" };
        static const char *const bad[] = { "a\tb", "line\n", "\x1b[31m", "del\x7f", "c1\xc2\x85", "c1\xc2\x9b[31m",
                                           "\xc3\x28", "\xed\xa0\x80",
                                           /* U+2028, U+2029; U+202A, U+202E, U+2066, U+2069 (bidi) */
                                           "a\xe2\x80\xa8" "b", "a\xe2\x80\xa9", "\xe2\x80\xaaltr", "TAG-\xe2\x80\xae" "1234",
                                           "\xe2\x81\xa6x", "x\xe2\x81\xa9" };

        (void) state;
        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
                assert_true(utf8_text_valid(good[i], strlen(good[i])));
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                assert_false(utf8_text_valid(bad[i], strlen(bad[i])));
        /* A NUL is a control character too. */
        assert_false(utf8_text_valid("a\0b", 3));
}

static void test_sanitize(void **state) {
        char *s;

        (void) state;
        assert_null(utf8_sanitize_dup(NULL));
        s = utf8_sanitize_dup("plain \xc3\xa9");
        assert_string_equal(s, "plain \xc3\xa9");
        free(s);
        /* Each bad byte becomes one U+FFFD; good characters around it stay. */
        s = utf8_sanitize_dup("a\xc0\xaf" "b\xed\xa0\x80" "c\xe2\x82");
        assert_string_equal(s, "a\xef\xbf\xbd\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                               "c\xef\xbf\xbd\xef\xbf\xbd");
        assert_true(valid(s));
        free(s);

        /* In place: the same pointer when valid, a repaired one when not. */
        s = strdup("serial-123");
        assert_ptr_equal(utf8_sanitize(s), s);
        free(s);
        s = utf8_sanitize(strdup("WD\xff"));
        assert_string_equal(s, "WD\xef\xbf\xbd");
        free(s);
        assert_null(utf8_sanitize(NULL));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_valid),
                cmocka_unit_test(test_sanitize),
                cmocka_unit_test(test_text),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
