/* method: pass parsing and naming (the firmware erases' passes too), the method table, and
 * pattern_fill, pattern_check and pattern_ref_check against a naive byte-by-byte reference (byte o
 * of a k-byte pattern pass is pattern[o % k]). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "method.h"

#define GUARD 64                        /* canary bytes on each side of every fill */
#define CANARY 0xa5

/* Whether two parsed passes are the same pass. */
static bool pass_equal(const struct pass *a, const struct pass *b) {
        if (a->kind != b->kind || a->op != b->op)
                return false;
        if (a->kind == PASS_RANDOM)
                return true;
        return a->pattern_len == b->pattern_len && memcmp(a->pattern, b->pattern, a->pattern_len) == 0;
}

/* A pass from its bytes, without pass_parse. */
static struct pass pattern_pass(const uint8_t *bytes, size_t k) {
        struct pass p = { .kind = PASS_PATTERN, .pattern_len = (uint8_t) k };

        memcpy(p.pattern, bytes, k);
        return p;
}

static void test_parse_names(void **state) {
        static const struct {
                const char *in, *name;
                size_t len;
                uint8_t first;
        } cases[] = {
                { "zero", "zero", 1, 0x00 },
                { "one", "one", 1, 0xff },
                { "0x00", "zero", 1, 0x00 },
                { "0xff", "one", 1, 0xff },
                { "0xFF", "one", 1, 0xff },
                { "0X55", "0x55", 1, 0x55 },
                { "0x55", "0x55", 1, 0x55 },
                { "0xAa", "0xaa", 1, 0xaa },
                { "0x924924", "0x924924", 3, 0x92 },
                { "0xB6DB6D", "0xb6db6d", 3, 0xb6 },
                { "0x0000", "0x0000", 2, 0x00 },
                { "0xffff", "0xffff", 2, 0xff },
                { "0x0123456789abcdef0123456789ABCDEF0123456789abcdef0123456789abcdef",
                  "0x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", 32, 0x01 },
        };
        char buf[2 + 2 * METHOD_PATTERN_MAX + 1];
        struct pass p, q;

        (void) state;
        assert_int_equal(pass_parse("random", &p), 0);
        assert_int_equal(p.kind, PASS_RANDOM);
        assert_string_equal(pass_name(&p, buf, sizeof(buf)), "random");
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                memset(&p, 0x5a, sizeof(p));
                assert_int_equal(pass_parse(cases[i].in, &p), 0);
                assert_int_equal(p.kind, PASS_PATTERN);
                assert_int_equal(p.pattern_len, cases[i].len);
                assert_int_equal(p.pattern[0], cases[i].first);
                assert_ptr_equal(pass_name(&p, buf, sizeof(buf)), buf);
                assert_string_equal(buf, cases[i].name);
                /* The canonical name parses back to the same pass. */
                assert_int_equal(pass_parse(buf, &q), 0);
                assert_true(pass_equal(&p, &q));
        }
        /* The 32-byte pattern's bytes, all of them. */
        assert_int_equal(pass_parse(cases[sizeof(cases) / sizeof(cases[0]) - 1].in, &p), 0);
        for (unsigned i = 0; i < 32; i++)
                assert_int_equal(p.pattern[i], (uint8_t) ((i % 8) * 0x22 + 0x01));
}

/* Every 1-byte pattern, and 2- and 3-byte ones over many values, survive parse(name(parse)). */
static void test_round_trip(void **state) {
        char in[2 + 2 * METHOD_PATTERN_MAX + 1], buf[2 + 2 * METHOD_PATTERN_MAX + 1];
        struct pass p, q;

        (void) state;
        for (unsigned v = 0; v < 256; v++) {
                snprintf(in, sizeof(in), "0x%02X", v);
                assert_int_equal(pass_parse(in, &p), 0);
                assert_int_equal(p.pattern_len, 1);
                assert_int_equal(p.pattern[0], v);
                pass_name(&p, buf, sizeof(buf));
                assert_int_equal(pass_parse(buf, &q), 0);
                assert_true(pass_equal(&p, &q));
        }
        for (unsigned v = 0; v < 65536; v += 257) {
                for (unsigned k = 2; k <= 3; k++) {
                        uint8_t b[3] = { (uint8_t) (v >> 8), (uint8_t) v, (uint8_t) (v * 7) };
                        char want[9];

                        p = pattern_pass(b, k);
                        pass_name(&p, buf, sizeof(buf));
                        snprintf(want, sizeof(want), k == 2 ? "0x%02x%02x" : "0x%02x%02x%02x", b[0], b[1], b[2]);
                        assert_string_equal(buf, want);
                        assert_int_equal(pass_parse(buf, &q), 0);
                        assert_true(pass_equal(&p, &q));
                }
        }
        /* Every length 1..32. */
        for (unsigned k = 1; k <= METHOD_PATTERN_MAX; k++) {
                uint8_t b[METHOD_PATTERN_MAX];

                for (unsigned i = 0; i < k; i++)
                        b[i] = (uint8_t) (0x10 + 37 * i + k);
                p = pattern_pass(b, k);
                pass_name(&p, buf, sizeof(buf));
                assert_int_equal(strlen(buf), 2 + 2 * k);
                assert_int_equal(pass_parse(buf, &q), 0);
                assert_true(pass_equal(&p, &q));
        }
}

/* The erase commands' passes: a zero pattern (what they are checked as) with an op, a name of
 * their own that round-trips, and the ioctl they are; a written zero pass is not one of them. */
static void test_erase_passes(void **state) {
        static const struct {
                const char *name, *command;
                enum pass_op op;
        } cases[] = {
                { "zeroout", "BLKZEROOUT", PASS_OP_ZEROOUT },
                { "discard", "BLKDISCARD", PASS_OP_DISCARD },
                { "secure-discard", "BLKSECDISCARD", PASS_OP_SECURE_DISCARD },
        };
        char buf[2 + 2 * METHOD_PATTERN_MAX + 1];
        struct pass p, q, zero;
        uint8_t data[4096];

        (void) state;
        assert_int_equal(pass_parse("zero", &zero), 0);
        assert_int_equal(zero.op, PASS_OP_WRITE);
        assert_null(pass_op_command(PASS_OP_WRITE));
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                memset(&p, 0x5a, sizeof(p));
                assert_int_equal(pass_parse(cases[i].name, &p), 0);
                assert_int_equal(p.kind, PASS_PATTERN);
                assert_int_equal(p.op, cases[i].op);
                assert_int_equal(p.pattern_len, 1);
                assert_int_equal(p.pattern[0], 0x00);
                assert_string_equal(pass_name(&p, buf, sizeof(buf)), cases[i].name);
                assert_string_equal(pass_op_command(p.op), cases[i].command);
                assert_int_equal(pass_parse(buf, &q), 0);
                assert_true(pass_equal(&p, &q));
                assert_false(pass_equal(&p, &zero));
                /* Checked as zeros. */
                memset(data, 0, sizeof(data));
                assert_true(pattern_check(&p, data, 12345, sizeof(data)));
                data[100] = 1;
                assert_false(pattern_check(&p, data, 12345, sizeof(data)));
        }
}

/* The firmware erases' passes: each parses to its op (a one-byte zero pattern, as the other erase
 * commands), its name round-trips, it is a firmware erase and no ioctl; the written and the block
 * layer's passes are not firmware erases. */
static void test_firmware_passes(void **state) {
        static const struct {
                const char *name;
                enum pass_op op;
        } cases[] = {
                { "sanitize", PASS_OP_SANITIZE },
                { "sanitize-crypto", PASS_OP_SANITIZE_CRYPTO },
                { "sanitize-block", PASS_OP_SANITIZE_BLOCK },
                { "sanitize-overwrite", PASS_OP_SANITIZE_OVERWRITE },
                { "nvme-format", PASS_OP_NVME_FORMAT },
                { "ata-secure-erase", PASS_OP_ATA_SECURE_ERASE },
                { "purge", PASS_OP_PURGE },
        };
        static const char *const not_firmware[] = { "random", "zero", "one", "0x55", "zeroout", "discard",
                                                    "secure-discard" };
        char buf[2 + 2 * METHOD_PATTERN_MAX + 1];
        struct pass p, q, v[sizeof(cases) / sizeof(cases[0])];

        (void) state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                memset(&p, 0x5a, sizeof(p));
                assert_int_equal(pass_parse(cases[i].name, &p), 0);
                assert_int_equal(p.kind, PASS_PATTERN);
                assert_int_equal(p.op, cases[i].op);
                assert_int_equal(p.pattern_len, 1);
                assert_int_equal(p.pattern[0], 0x00);
                assert_true(pass_op_firmware(p.op));
                assert_null(pass_op_command(p.op));
                assert_string_equal(pass_name(&p, buf, sizeof(buf)), cases[i].name);
                assert_int_equal(pass_parse(buf, &q), 0);
                assert_true(pass_equal(&p, &q));
                v[i] = p;
                /* Each is a pass of its own, none the same as another. */
                for (size_t j = 0; j < i; j++)
                        assert_false(pass_equal(&v[i], &v[j]));
        }
        for (size_t i = 0; i < sizeof(not_firmware) / sizeof(not_firmware[0]); i++) {
                assert_int_equal(pass_parse(not_firmware[i], &p), 0);
                if (pass_op_firmware(p.op))
                        fail_msg("%s: taken for a firmware erase", not_firmware[i]);
        }
        assert_false(pass_op_firmware(PASS_OP_WRITE));
        assert_false(pass_op_firmware(PASS_OP_ZEROOUT));
        assert_false(pass_op_firmware(PASS_OP_DISCARD));
        assert_false(pass_op_firmware(PASS_OP_SECURE_DISCARD));
        /* In a list, as any pass. */
        {
                struct pass *l = NULL;
                size_t n = 0;

                assert_int_equal(pass_list_parse("sanitize-crypto,zero", &l, &n), 0);
                assert_int_equal(n, 2);
                assert_int_equal(l[0].op, PASS_OP_SANITIZE_CRYPTO);
                assert_int_equal(l[1].op, PASS_OP_WRITE);
                free(l);
        }
}

static void test_parse_bad(void **state) {
        static const char *const bad[] = {
                "", "0x", "0X", "x55", "55", "0x5", "0x555", "0x55 ", " 0x55", "0x 55", "0xgg", "0x5g",
                "0xg5", "0x-1", "0x+1", "zeros", "zer", "ones", "randoms", "random ", " zero", "zero,",
                "ZEROOUT", "zero-out", "discards", "secure_discard", "securediscard", "discard ",
                "0x55,0xaa", "00x55", "0x0x55", "0x\xff\xff",
                "Sanitize", "SANITIZE", "sanitize-", "sanitize-crypt", "sanitize_crypto", "sanitize crypto",
                "sanitize-crypto ", "nvme_format", "nvmeformat", "nvme-format-crypto", "ata-secure",
                "ata-security-erase", "secure-erase", "purge ", "Purge", "purges", "none",
                /* 33 bytes: one too many */
                "0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20",
        };
        struct pass p;

        (void) state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                if (pass_parse(bad[i], &p) != -EINVAL)
                        fail_msg("pass_parse(\"%s\") did not fail with -EINVAL", bad[i]);
        }
        assert_int_equal(pass_parse(NULL, &p), -EINVAL);
}

/* A name buffer too small is truncated, never overrun. */
static void test_name_short_buffer(void **state) {
        char buf[2 + 2 * METHOD_PATTERN_MAX + 1 + GUARD];
        struct pass p;

        (void) state;
        assert_int_equal(pass_parse("0x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", &p), 0);
        for (size_t n = 1; n <= 2 + 2 * METHOD_PATTERN_MAX + 1; n++) {
                memset(buf, CANARY, sizeof(buf));
                pass_name(&p, buf, n);
                assert_true(strlen(buf) < n);
                for (size_t i = n; i < sizeof(buf); i++)
                        assert_int_equal((uint8_t) buf[i], CANARY);
        }
}

static void expect_list(const char *list, const char *const *names, size_t n) {
        char buf[2 + 2 * METHOD_PATTERN_MAX + 1];
        struct pass *v = NULL;
        size_t got = 0;

        if (pass_list_parse(list, &v, &got) != 0)
                fail_msg("pass_list_parse(\"%s\") failed", list);
        assert_non_null(v);
        assert_int_equal(got, n);
        for (size_t i = 0; i < n; i++)
                assert_string_equal(pass_name(&v[i], buf, sizeof(buf)), names[i]);
        free(v);
}

static void test_list(void **state) {
        static const char *const three[] = { "random", "0x924924", "zero" };
        static const char *const one[] = { "one" };
        static const char *const bad[] = {
                "", ",", ",,", "random,", ",random", "random,,zero", "random, zero", "random,zero ",
                "random;zero", "random,0x5", "random,bogus,zero", "0x924924,", "zero,one,",
        };
        char list[64 * 9 + 16];
        struct pass *v;
        size_t n;

        (void) state;
        expect_list("random,0x924924,zero", three, 3);
        expect_list("one", one, 1);
        expect_list("random,0X924924,0x00", three, 3);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                v = NULL;
                if (pass_list_parse(bad[i], &v, &n) != -EINVAL)
                        fail_msg("pass_list_parse(\"%s\") did not fail with -EINVAL", bad[i]);
        }
        v = NULL;
        assert_int_equal(pass_list_parse(NULL, &v, &n), -EINVAL);

        /* 64 passes are the most; 65 are refused. */
        list[0] = '\0';
        for (unsigned i = 0; i < METHOD_PASSES_MAX; i++)
                strcat(list, i % 2 ? ",random" : (i ? ",0x924924" : "0x924924"));
        assert_int_equal(pass_list_parse(list, &v, &n), 0);
        assert_int_equal(n, METHOD_PASSES_MAX);
        for (unsigned i = 0; i < n; i++)
                assert_int_equal(v[i].kind, i % 2 ? PASS_RANDOM : PASS_PATTERN);
        assert_int_equal(v[62].pattern_len, 3);
        free(v);
        strcat(list, ",zero");
        v = NULL;
        assert_int_equal(pass_list_parse(list, &v, &n), -EINVAL);
        /* 64 passes and an empty 65th item. */
        list[strlen(list) - 4] = '\0';
        assert_int_equal(pass_list_parse(list, &v, &n), -EINVAL);
}

/* The table as the issue names it. */
static void test_table(void **state) {
        static const struct {
                const char *name;
                size_t passes;
                bool legacy;
        } want[] = {
                { "random", 1, false },
                { "zero", 1, false },
                { "random-zero", 2, false },
                { "zeroout", 1, false },
                { "discard", 1, false },
                { "secure-discard", 1, false },
                { "sanitize", 1, false },
                { "sanitize-crypto", 1, false },
                { "sanitize-block", 1, false },
                { "sanitize-overwrite", 1, false },
                { "nvme-format", 1, false },
                { "ata-secure-erase", 1, false },
                { "purge", 1, false },
                { "dod-3pass", 3, true },
                { "schneier", 7, true },
                { "gutmann", 35, true },
        };
        char buf[2 + 2 * METHOD_PATTERN_MAX + 1];
        const struct method *t;
        size_t n;

        (void) state;
        t = method_table(&n);
        assert_non_null(t);
        assert_int_equal(n, sizeof(want) / sizeof(want[0]));
        for (size_t i = 0; i < n; i++) {
                struct pass *v = NULL;
                size_t np = 0;

                assert_string_equal(t[i].name, want[i].name);
                assert_ptr_equal(method_find(t[i].name), &t[i]);
                assert_int_equal(t[i].legacy, want[i].legacy);
                assert_non_null(t[i].description);
                assert_true(strlen(t[i].description) > 10);
                if (t[i].legacy && !strstr(t[i].description, "800-88"))
                        fail_msg("%s: a legacy method's description must cite NIST SP 800-88", t[i].name);
                if (pass_list_parse(t[i].passes, &v, &np) != 0)
                        fail_msg("%s: its passes \"%s\" do not parse", t[i].name, t[i].passes);
                assert_int_equal(np, want[i].passes);
                assert_true(np >= 1 && np <= METHOD_PASSES_MAX);
                /* The list is written in canonical names, so that reports show it as listed. */
                {
                        char canon[1024] = "";

                        for (size_t j = 0; j < np; j++) {
                                if (j)
                                        strcat(canon, ",");
                                strcat(canon, pass_name(&v[j], buf, sizeof(buf)));
                        }
                        assert_string_equal(canon, t[i].passes);
                }
                free(v);
                for (size_t j = 0; j < i; j++)
                        assert_string_not_equal(t[i].name, t[j].name);
        }
        assert_null(method_find("nope"));
        assert_null(method_find(""));
        assert_null(method_find("Random"));
        assert_null(method_find("custom"));
        assert_null(method_find(NULL));
}

static void expect_passes(const char *method, const char *const *names, size_t n) {
        const struct method *m = method_find(method);
        char buf[2 + 2 * METHOD_PATTERN_MAX + 1];
        struct pass *v = NULL;
        size_t got = 0;

        assert_non_null(m);
        assert_int_equal(pass_list_parse(m->passes, &v, &got), 0);
        assert_int_equal(got, n);
        for (size_t i = 0; i < n; i++)
                if (strcmp(pass_name(&v[i], buf, sizeof(buf)), names[i]) != 0)
                        fail_msg("%s: pass %zu is %s, expected %s", method, i + 1, buf, names[i]);
        free(v);
}

static void test_methods(void **state) {
        static const char *const random1[] = { "random" };
        static const char *const zero[] = { "zero" };
        static const char *const random_zero[] = { "random", "zero" };
        static const char *const zeroout[] = { "zeroout" };
        static const char *const discard[] = { "discard" };
        static const char *const secure_discard[] = { "secure-discard" };
        static const char *const firmware[] = { "sanitize", "sanitize-crypto", "sanitize-block",
                                                "sanitize-overwrite", "nvme-format", "ata-secure-erase", "purge" };
        static const char *const dod[] = { "zero", "one", "random" };
        static const char *const schneier[] = { "zero", "one", "random", "random", "random", "random", "random" };
        /* Gutmann 1996, table of passes 5..31, in order. */
        static const char *const gutmann_middle[27] = {
                "0x55", "0xaa", "0x924924", "0x492492", "0x249249", "zero", "0x11", "0x22", "0x33",
                "0x44", "0x55", "0x66", "0x77", "0x88", "0x99", "0xaa", "0xbb", "0xcc", "0xdd", "0xee",
                "one", "0x924924", "0x492492", "0x249249", "0x6db6db", "0xb6db6d", "0xdb6db6",
        };
        const char *gutmann[35];

        (void) state;
        expect_passes("random", random1, 1);
        expect_passes("zero", zero, 1);
        expect_passes("random-zero", random_zero, 2);
        expect_passes("zeroout", zeroout, 1);
        expect_passes("discard", discard, 1);
        expect_passes("secure-discard", secure_discard, 1);
        /* The firmware erases: each method is its one pass, of its own name. */
        for (size_t i = 0; i < sizeof(firmware) / sizeof(firmware[0]); i++) {
                const struct method *m = method_find(firmware[i]);

                expect_passes(firmware[i], &firmware[i], 1);
                assert_non_null(m);
                assert_string_equal(m->passes, firmware[i]);
                assert_false(m->legacy);
                if (!strstr(m->description, "800-88"))
                        fail_msg("%s: a firmware method's description must name its NIST SP 800-88 class",
                                 firmware[i]);
        }
        expect_passes("dod-3pass", dod, 3);
        expect_passes("schneier", schneier, 7);
        /* 4 random, the 27 patterns, 4 random. */
        for (unsigned i = 0; i < 35; i++)
                gutmann[i] = i < 4 || i >= 31 ? "random" : gutmann_middle[i - 4];
        expect_passes("gutmann", gutmann, 35);
}

/* ---- pattern_fill / pattern_check ------------------------------------------------------------ */

/* The reference: byte o of the pass is pattern[o % k]. */
static void naive_fill(const struct pass *p, uint8_t *buf, uint64_t offset, size_t len) {
        for (size_t i = 0; i < len; i++)
                buf[i] = p->pattern[(offset + i) % p->pattern_len];
}

static const uint64_t offsets[] = {
        0, 1, 2, 3, 5, 31, 32, 33, 255, 256, 511, 512, 4095, 4096, 4097, 1048576 + 17,
        (1ULL << 40) + 7, (1ULL << 62) + 3, (1ULL << 63) - (1ULL << 21),
};
static const size_t lengths[] = {
        0, 1, 2, 3, 4, 5, 31, 32, 33, 63, 64, 65, 95, 96, 97, 254, 255, 256, 257, 258, 511, 512, 513,
        767, 768, 769, 1023, 1024, 4095, 4096, 4099, 65536 + 13, 1048576 + 5,
};
#define LEN_MAX (1048576 + 5)

/* The patterns under test: 1, 2, 3 and 32 bytes, and a few others. */
static size_t test_patterns(struct pass *v) {
        static const char *const names[] = {
                "zero", "one", "0x55", "0x5aa5", "0x0100", "0x924924", "0x492492", "0xb6db6d", "0x000001",
                "0x0102030405", "0x01020304050607",
                "0x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                "0x00000000000000000000000000000000000000000000000000000000000000ff",
                "0x0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
        };
        size_t n = sizeof(names) / sizeof(names[0]);

        for (size_t i = 0; i < n; i++)
                assert_int_equal(pass_parse(names[i], &v[i]), 0);
        return n;
}

static void test_fill(void **state) {
        uint8_t *buf = malloc(LEN_MAX + 2 * GUARD), *ref = malloc(LEN_MAX);
        struct pass pats[16];
        size_t np = test_patterns(pats);

        (void) state;
        assert_non_null(buf);
        assert_non_null(ref);
        for (size_t pi = 0; pi < np; pi++)
                for (size_t oi = 0; oi < sizeof(offsets) / sizeof(offsets[0]); oi++)
                        for (size_t li = 0; li < sizeof(lengths) / sizeof(lengths[0]); li++) {
                                size_t len = lengths[li];
                                uint64_t off = offsets[oi];

                                memset(buf, CANARY, LEN_MAX + 2 * GUARD);
                                pattern_fill(&pats[pi], buf + GUARD, off, len);
                                naive_fill(&pats[pi], ref, off, len);
                                if (memcmp(buf + GUARD, ref, len) != 0)
                                        fail_msg("pattern_fill: pattern %zu (%u bytes), offset %llu, length %zu: wrong bytes",
                                                 pi, pats[pi].pattern_len, (unsigned long long) off, len);
                                for (size_t i = 0; i < GUARD; i++) {
                                        assert_int_equal(buf[i], CANARY);
                                        assert_int_equal(buf[GUARD + len + i], CANARY);
                                }
                                /* Unaligned destinations too. */
                                if (len < 70000) {
                                        memset(buf, CANARY, len + 2 * GUARD);
                                        pattern_fill(&pats[pi], buf + GUARD + 3, off, len);
                                        if (len)
                                                assert_memory_equal(buf + GUARD + 3, ref, len);
                                        assert_int_equal(buf[GUARD + 3 + len], CANARY);
                                        assert_int_equal(buf[GUARD + 2], CANARY);
                                }
                        }
        free(buf);
        free(ref);
}

/* The laid-out pattern the tests of pattern_ref_check() use, set to the pattern under test. */
static struct pattern_ref the_ref;

/* Flip one byte at position i of ref (a correct fill of [off, off+len)) and expect a failure,
 * of pattern_check() and of pattern_ref_check() against the_ref (set to p). The flipped bits vary
 * with the position (low bit, high bit, all bits); at the ends, all three. */
static void expect_flip_detected(const struct pass *p, uint8_t *ref, uint64_t off, size_t len, size_t i) {
        static const uint8_t flips[] = { 0x01, 0x80, 0xff };
        bool all = i < 64 || len - i <= 64;

        for (size_t f = all ? 0 : i % 3; f < (all ? 3 : i % 3 + 1); f++) {
                ref[i] ^= flips[f];
                if (pattern_check(p, ref, off, len))
                        fail_msg("pattern_check: pattern of %u bytes, offset %llu, length %zu: byte %zu ^ 0x%02x not detected",
                                 p->pattern_len, (unsigned long long) off, len, i, flips[f]);
                if (pattern_ref_check(&the_ref, ref, off, len))
                        fail_msg("pattern_ref_check: pattern of %u bytes, offset %llu, length %zu: byte %zu ^ 0x%02x not detected",
                                 p->pattern_len, (unsigned long long) off, len, i, flips[f]);
                ref[i] ^= flips[f];
        }
}

static void test_check(void **state) {
        uint8_t *ref = malloc(LEN_MAX + 8);
        struct pass pats[16];
        size_t np = test_patterns(pats);

        (void) state;
        assert_non_null(ref);
        for (size_t pi = 0; pi < np; pi++)
                for (size_t oi = 0; oi < sizeof(offsets) / sizeof(offsets[0]); oi++)
                        for (size_t li = 0; li < sizeof(lengths) / sizeof(lengths[0]); li++) {
                                const struct pass *p = &pats[pi];
                                size_t len = lengths[li], k = p->pattern_len;
                                uint64_t off = offsets[oi];

                                /* Another pattern first, so that setting the reference replaces it. */
                                pattern_ref_set(&the_ref, &pats[(pi + 1) % np]);
                                pattern_ref_set(&the_ref, p);
                                naive_fill(p, ref, off, len);
                                if (!pattern_check(p, ref, off, len))
                                        fail_msg("pattern_check: pattern %zu (%zu bytes), offset %llu, length %zu: correct data refused",
                                                 pi, k, (unsigned long long) off, len);
                                if (!pattern_ref_check(&the_ref, ref, off, len))
                                        fail_msg("pattern_ref_check: pattern %zu (%zu bytes), offset %llu, length %zu: correct data refused",
                                                 pi, k, (unsigned long long) off, len);
                                /* The same bytes at an unaligned address. */
                                if (len < 70000) {
                                        memmove(ref + 1, ref, len);
                                        assert_true(pattern_check(p, ref + 1, off, len));
                                        assert_true(pattern_ref_check(&the_ref, ref + 1, off, len));
                                        memmove(ref, ref + 1, len);
                                }
                                /* A single flipped byte anywhere: at every position of buffers up to
                                 * 1 KiB; in longer ones the first and last 600 bytes, 3 bytes around
                                 * every 256-byte boundary of the first 8 KiB, and every 4093rd byte. */
                                if (len <= 1024) {
                                        for (size_t i = 0; i < len; i++)
                                                expect_flip_detected(p, ref, off, len, i);
                                } else {
                                        for (size_t i = 0; i < len; i++) {
                                                if (i < 600 || len - i <= 600 || i % 4093 == 0 ||
                                                    (i < 8192 && (i + 1) % 256 <= 2))
                                                        expect_flip_detected(p, ref, off, len, i);
                                                else if (i >= 8192) {
                                                        size_t next = i - i % 4093 + 4093;

                                                        i = (next < len - 600 ? next : len - 600) - 1;
                                                }
                                        }
                                }
                                /* The right bytes at the wrong phase: refused unless the pattern repeats with that shift. */
                                if (len >= 2 * k && k > 1) {
                                        bool periodic = true;

                                        for (size_t j = 0; j < k; j++)
                                                periodic &= p->pattern[j] == p->pattern[(j + 1) % k];
                                        if (!periodic) {
                                                assert_false(pattern_check(p, ref, off + 1, len));
                                                assert_false(pattern_ref_check(&the_ref, ref, off + 1, len));
                                        }
                                }
                        }
        free(ref);
}

/* pattern_check with a wrong buffer of the right length: a different pattern of the same length. */
static void test_check_other_pattern(void **state) {
        uint8_t buf[4096];
        struct pass a, b;

        (void) state;
        assert_int_equal(pass_parse("0x924924", &a), 0);
        assert_int_equal(pass_parse("0x492492", &b), 0);
        /* 0x492492 is 0x924924 from its second byte on. */
        pattern_fill(&b, buf, 0, sizeof(buf));
        assert_false(pattern_check(&a, buf, 0, sizeof(buf)));
        assert_false(pattern_check(&a, buf, 2, sizeof(buf)));
        assert_true(pattern_check(&a, buf, 1, sizeof(buf)));
        assert_true(pattern_check(&a, buf, 4, sizeof(buf)));
        assert_true(pattern_check(&b, buf, 3, sizeof(buf)));
        assert_int_equal(pass_parse("zero", &a), 0);
        memset(buf, 0, sizeof(buf));
        assert_true(pattern_check(&a, buf, 7, sizeof(buf)));
        buf[4095] = 1;
        assert_false(pattern_check(&a, buf, 7, sizeof(buf)));
        assert_true(pattern_check(&a, buf, 7, sizeof(buf) - 1));
}

/* pattern_ref: set by content, replaced by another pattern, none for a random pass or when
 * zeroed; a reference of one pattern refuses another of the same period. */
static void test_ref(void **state) {
        static struct pattern_ref ref;  /* zeroed: holds none */
        uint8_t buf[PATTERN_REF_SIZE * 3 + 100];
        struct pass a, b, same, random;

        (void) state;
        assert_int_equal(pass_parse("0x924924", &a), 0);
        assert_int_equal(pass_parse("0x492492", &b), 0);
        assert_int_equal(pass_parse("0x924924", &same), 0);
        assert_int_equal(pass_parse("random", &random), 0);
        memset(buf, 0, sizeof(buf));
        assert_false(pattern_ref_check(&ref, buf, 0, sizeof(buf)));
        pattern_fill(&a, buf, 5, sizeof(buf));
        pattern_ref_set(&ref, &a);
        assert_true(pattern_ref_check(&ref, buf, 5, sizeof(buf)));
        assert_true(pattern_ref_check(&ref, buf, 5 + 3 * 12345, sizeof(buf)));
        assert_false(pattern_ref_check(&ref, buf, 6, sizeof(buf)));
        /* 0x492492 is 0x924924 one byte on. */
        pattern_ref_set(&ref, &b);
        assert_false(pattern_ref_check(&ref, buf, 5, sizeof(buf)));
        assert_true(pattern_ref_check(&ref, buf, 4, sizeof(buf)));
        /* The same pattern from another pass: nothing to lay out again, still right. */
        pattern_ref_set(&ref, &a);
        ref.bytes[PATTERN_REF_SIZE / 2] ^= 1;  /* so that a new layout would show */
        pattern_ref_set(&ref, &same);
        assert_false(pattern_ref_check(&ref, buf, 5, sizeof(buf)));
        pattern_ref_set(&ref, &b);
        pattern_ref_set(&ref, &same);
        assert_true(pattern_ref_check(&ref, buf, 5, sizeof(buf)));
        /* A random pass has no pattern: the reference then holds none. */
        pattern_ref_set(&ref, &random);
        assert_false(pattern_ref_check(&ref, buf, 5, sizeof(buf)));
        /* A mismatch past the first pieces of the comparison, in the last byte. */
        pattern_ref_set(&ref, &a);
        buf[sizeof(buf) - 1] ^= 0x40;
        assert_false(pattern_ref_check(&ref, buf, 5, sizeof(buf)));
        assert_true(pattern_ref_check(&ref, buf, 5, sizeof(buf) - 1));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_names),
                cmocka_unit_test(test_round_trip),
                cmocka_unit_test(test_erase_passes),
                cmocka_unit_test(test_firmware_passes),
                cmocka_unit_test(test_parse_bad),
                cmocka_unit_test(test_name_short_buffer),
                cmocka_unit_test(test_list),
                cmocka_unit_test(test_table),
                cmocka_unit_test(test_methods),
                cmocka_unit_test(test_fill),
                cmocka_unit_test(test_check),
                cmocka_unit_test(test_check_other_pattern),
                cmocka_unit_test(test_ref),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
