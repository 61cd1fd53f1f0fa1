/* keystream: the contract of doc/DESIGN.md "Keystream contract", checked against the openssl CLI
 * for every backend (the contract tests run once per backend), the backends against each other at
 * random offsets and counter carries, and the choice of a backend.
 * Exit 0 pass, 1 fail, 77 when the openssl binary is missing. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "keystream.h"

#define MiB (1024 * 1024)
#define GUARD 64                        /* canary bytes after every fill */

static const enum keystream_cipher ciphers[] = { KEYSTREAM_AES_128_CTR, KEYSTREAM_CHACHA20 };

/* The backend the contract tests are running with (set by each group's setup). */
static enum keystream_backend backend_under_test = KEYSTREAM_BACKEND_OPENSSL;

static int ks_new(struct keystream **ret, enum keystream_cipher c, const uint8_t *key, size_t key_len) {
        int r = keystream_new_backend(ret, c, backend_under_test, key, key_len);

        if (r == 0)
                assert_int_equal(keystream_backend_of(*ret), backend_under_test);
        return r;
}

/* Counter block size of a cipher, as the contract states it. */
static unsigned block_size(enum keystream_cipher c) {
        return c == KEYSTREAM_AES_128_CTR ? 16 : 64;
}

/* The contract's IV for counter block n, written independently of keystream.c. */
static void contract_iv(enum keystream_cipher c, uint64_t n, uint8_t iv[16]) {
        memset(iv, 0, 16);
        for (unsigned i = 0; i < 8; i++) {
                if (c == KEYSTREAM_AES_128_CTR)
                        iv[15 - i] = (uint8_t) (n >> (8 * i));  /* 128-bit big-endian */
                else
                        iv[i] = (uint8_t) (n >> (8 * i));       /* 64-bit little-endian, 8 zeros */
        }
}

static void hex(char *s, const uint8_t *b, size_t n) {
        for (size_t i = 0; i < n; i++)
                sprintf(s + 2 * i, "%02x", b[i]);
}

static void random_bytes(void *buf, size_t n) {
        assert_int_equal(getrandom(buf, n, 0), (ssize_t) n);
}

static void random_key(enum keystream_cipher c, uint8_t key[KEYSTREAM_KEY_MAX]) {
        random_bytes(key, keystream_key_size(c));
}

/* Bytes [skip, skip + len) of `openssl enc -<cipher> -K key -iv iv -in /dev/zero`, malloc'd.
 * Any failure of the CLI fails the test. */
static uint8_t *cli_stream(enum keystream_cipher c, const uint8_t *key, const uint8_t iv[16],
                           size_t skip, size_t len) {
        char k[2 * KEYSTREAM_KEY_MAX + 1], v[33], cmd[512];
        size_t total = skip + len, got = 0;
        uint8_t *buf = malloc(total + 1);
        FILE *p;
        int st;

        assert_non_null(buf);
        hex(k, key, keystream_key_size(c));
        hex(v, iv, 16);
        snprintf(cmd, sizeof(cmd), "openssl enc -%s -K %s -iv %s -in /dev/zero 2>/dev/null | head -c %zu",
                 keystream_cipher_name(c), k, v, total);
        p = popen(cmd, "r");
        assert_non_null(p);
        for (;;) {
                size_t n = fread(buf + got, 1, total + 1 - got, p);
                if (n == 0)
                        break;
                got += n;
        }
        st = pclose(p);
        if (st != 0 || got != total)
                fail_msg("%s: got %zu of %zu bytes, status %d", cmd, got, total, st);
        memmove(buf, buf + skip, len);
        return buf;
}

/* Fill [offset, offset + len) into a buffer with a canary behind it and return it, malloc'd. */
static uint8_t *fill(struct keystream *ks, uint64_t offset, size_t len) {
        uint8_t *buf = malloc(len + GUARD);

        assert_non_null(buf);
        memset(buf, 0xa5, len + GUARD);
        assert_int_equal(keystream_fill(ks, buf, offset, len), 0);
        for (size_t i = 0; i < GUARD; i++)
                if (buf[len + i] != 0xa5)
                        fail_msg("fill at %" PRIu64 " len %zu wrote past its end", offset, len);
        return buf;
}

/* memcmp with a short message: cmocka's assert_memory_equal lists every differing byte. */
#define assert_bytes_equal(got, want, len, fmt, ...) do {                               \
                const uint8_t *_g = (got), *_w = (want);                                \
                size_t _n = (len);                                                      \
                if (memcmp(_g, _w, _n) != 0) {                                          \
                        size_t _i = 0;                                                  \
                        while (_g[_i] == _w[_i])                                        \
                                _i++;                                                   \
                        fail_msg(fmt ": first difference at byte %zu of %zu",           \
                                 __VA_ARGS__, _i, _n);                                  \
                }                                                                       \
        } while (0)

/* Fill equals the CLI at offsets small enough to reach from IV 0 and at 2^32*64 + 13, reached
 * through the IV of its block (CTR property), for many lengths. */
static void test_cli_offsets(void **state) {
        static const uint64_t offsets[] = { 0, 1, 15, 4096, MiB - 3, (UINT64_C(1) << 38) + 13 };
        static const size_t lengths[] = { 1, 15, 16, 17, 63, 64, 65, 127, 129, 4096, 4099,
                                          65536 + 1, MiB + 7 };
        const size_t maxlen = MiB + 7;

        for (size_t ci = 0; ci < 2; ci++) {
                enum keystream_cipher c = ciphers[ci];
                unsigned bs = block_size(c);
                uint8_t key[KEYSTREAM_KEY_MAX];
                struct keystream *ks = NULL;

                random_key(c, key);
                assert_int_equal(ks_new(&ks, c, key, keystream_key_size(c)), 0);
                for (size_t oi = 0; oi < sizeof(offsets) / sizeof(offsets[0]); oi++) {
                        uint64_t o = offsets[oi];
                        uint8_t iv[16];
                        uint8_t *want;

                        if (o < 16 * MiB) {
                                contract_iv(c, 0, iv);
                                want = cli_stream(c, key, iv, (size_t) o, maxlen);
                        } else {
                                contract_iv(c, o / bs, iv);
                                want = cli_stream(c, key, iv, (size_t) (o % bs), maxlen);
                        }
                        for (size_t li = 0; li < sizeof(lengths) / sizeof(lengths[0]); li++) {
                                uint8_t *got = fill(ks, o, lengths[li]);
                                assert_bytes_equal(got, want, lengths[li], "%s offset %" PRIu64 " len %zu",
                                                   keystream_cipher_name(c), o, lengths[li]);
                                free(got);
                        }
                        free(want);
                }
                keystream_free(ks);
        }
}

/* Ranges inside [base, base + ref_len) whose reference is ref; each is filled once by seeking
 * and once continuing a fill that ends where it starts. */
static void check_ranges(enum keystream_cipher c, const uint8_t *key, uint64_t base,
                         const uint8_t *ref, size_t ref_len) {
        static const size_t cuts[][2] = {
                { 0, 256 }, { 5, 200 }, { 13, 3 }, { 15, 2 }, { 16, 16 }, { 31, 70 }, { 60, 10 },
                { 63, 2 }, { 64, 192 }, { 70, 100 }, { 128, 1 }, { 255, 1 },
        };
        struct keystream *ks = NULL;

        assert_int_equal(ks_new(&ks, c, key, keystream_key_size(c)), 0);
        for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
                size_t s = cuts[i][0], n = cuts[i][1];
                uint8_t *got;

                assert_true(s + n <= ref_len);
                got = fill(ks, base + s, n);
                assert_bytes_equal(got, ref + s, n, "%s at base+%zu len %zu", keystream_cipher_name(c), s, n);
                free(got);
                if (s > 0) {
                        free(fill(ks, base, s));
                        got = fill(ks, base + s, n);
                        assert_bytes_equal(got, ref + s, n, "%s continued at base+%zu len %zu",
                                           keystream_cipher_name(c), s, n);
                        free(got);
                }
        }
        keystream_free(ks);
}

/* ChaCha20: OpenSSL's 32-bit block counter carries into the next IV word, so the contract's
 * 64-bit block number holds across 2^32 blocks (offset 2^38). */
static void test_chacha20_counter_carry(void **state) {
        static const uint64_t high[] = { 0, 1, 0x3fffffe };     /* block + 4 < 2^58 */
        enum keystream_cipher c = KEYSTREAM_CHACHA20;
        uint8_t key[KEYSTREAM_KEY_MAX], iv[16];

        random_key(c, key);
        for (size_t i = 0; i < sizeof(high) / sizeof(high[0]); i++) {
                uint64_t block = (high[i] << 32) | 0xffffffffu;    /* IV ff ff ff ff <high> */
                uint8_t *ref, *next;

                contract_iv(c, block, iv);
                ref = cli_stream(c, key, iv, 0, 256);
                /* The CLI itself: block+1 from its own IV equals the carried stream. */
                contract_iv(c, block + 1, iv);
                next = cli_stream(c, key, iv, 0, 192);
                assert_bytes_equal(ref + 64, next, 192, "openssl chacha20 carry at block %#" PRIx64, block);
                check_ranges(c, key, block * 64, ref, 256);
                free(next);
                free(ref);
        }
}

/* AES-128-CTR: the counter is 128 bits. Offsets are 64-bit, so blocks 2^32 (offset 2^36, where
 * OpenSSL's 32-bit fast path carries) and up to 2^60 are reachable; block 2^64 is not, and there
 * the CLI alone is checked to carry all 128 bits as the contract says. */
static void test_aes_counter_carry(void **state) {
        /* The last one's 256 bytes end exactly at offset 2^64. */
        static const uint64_t blocks[] = { 0xffffffffu, UINT64_C(0x1ffffffff), UINT64_C(0x0ffffffffffffff0) };
        enum keystream_cipher c = KEYSTREAM_AES_128_CTR;
        uint8_t key[KEYSTREAM_KEY_MAX], iv[16];
        uint8_t *a, *b;

        random_key(c, key);
        for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++) {
                uint8_t *ref;

                contract_iv(c, blocks[i], iv);
                ref = cli_stream(c, key, iv, 0, 256);
                check_ranges(c, key, blocks[i] * 16, ref, 256);
                free(ref);
        }

        memset(iv, 0, 8);
        memset(iv + 8, 0xff, 8);                                /* block 2^64 - 1 */
        a = cli_stream(c, key, iv, 0, 64);
        memset(iv, 0, 16);
        iv[7] = 1;                                              /* block 2^64 */
        b = cli_stream(c, key, iv, 0, 48);
        assert_bytes_equal(a + 16, b, 48, "%s", "openssl aes-128-ctr 128-bit carry");
        free(a);
        free(b);
}

/* The last bytes of the 64-bit offset space: allowed up to 2^64 exclusive, not beyond. */
static void test_end_of_offset_space(void **state) {
        for (size_t ci = 0; ci < 2; ci++) {
                enum keystream_cipher c = ciphers[ci];
                unsigned bs = block_size(c);
                uint64_t o = UINT64_MAX - 99;                   /* 100 bytes to 2^64 */
                uint8_t key[KEYSTREAM_KEY_MAX], iv[16], byte;
                struct keystream *ks = NULL;
                uint8_t *want, *got;

                random_key(c, key);
                assert_int_equal(ks_new(&ks, c, key, keystream_key_size(c)), 0);
                contract_iv(c, o / bs, iv);
                want = cli_stream(c, key, iv, (size_t) (o % bs), 100);
                got = fill(ks, o, 100);
                assert_bytes_equal(got, want, 100, "%s end of offset space", keystream_cipher_name(c));
                free(got);
                /* The last byte alone: a fill inside the last block only. */
                assert_int_equal(keystream_fill(ks, &byte, UINT64_MAX, 1), 0);
                assert_int_equal(byte, want[99]);
                free(want);
                /* Fills ending at 2^64 leave nothing to continue: offset 0 must seek. */
                contract_iv(c, 0, iv);
                want = cli_stream(c, key, iv, 0, 16);
                got = fill(ks, 0, 16);
                assert_bytes_equal(got, want, 16, "%s offset 0 after the last byte", keystream_cipher_name(c));
                free(got);
                free(fill(ks, UINT64_MAX - 99, 100));
                got = fill(ks, 0, 16);
                assert_bytes_equal(got, want, 16, "%s offset 0 after 2^64", keystream_cipher_name(c));
                assert_int_equal(keystream_fill(ks, got, UINT64_MAX, 2), -EINVAL);
                assert_int_equal(keystream_fill(ks, got, UINT64_MAX - 15, 17), -EINVAL);
                free(got);
                free(want);
                keystream_free(ks);
        }
}

/* A range filled in unaligned pieces, in order and shuffled, equals one fill of the range. */
static void test_pieces(void **state) {
        const size_t len = 300000;
        size_t cuts[400], order[400], n = 0;

        for (size_t ci = 0; ci < 2; ci++) {
                enum keystream_cipher c = ciphers[ci];
                uint8_t key[KEYSTREAM_KEY_MAX];
                struct keystream *ks = NULL;
                uint64_t base;
                uint8_t *whole, *pieces;
                uint32_t r;

                random_key(c, key);
                random_bytes(&r, sizeof(r));
                base = (UINT64_C(1) << 38) - 150000 + r % 1000;        /* crosses the carry */
                assert_int_equal(ks_new(&ks, c, key, keystream_key_size(c)), 0);
                whole = fill(ks, base, len);

                /* Cut points: random sizes from 1 byte to 5000. */
                n = 0;
                cuts[n++] = 0;
                while (cuts[n - 1] < len && n < sizeof(cuts) / sizeof(cuts[0]) - 1) {
                        random_bytes(&r, sizeof(r));
                        cuts[n] = cuts[n - 1] + 1 + (r % 2 ? r % 5000 : r % 70);
                        if (cuts[n] > len)
                                cuts[n] = len;
                        n++;
                }
                cuts[n - 1] = len;

                pieces = malloc(len);
                assert_non_null(pieces);
                memset(pieces, 0, len);
                for (size_t i = 0; i + 1 < n; i++)
                        assert_int_equal(keystream_fill(ks, pieces + cuts[i], base + cuts[i], cuts[i + 1] - cuts[i]), 0);
                assert_bytes_equal(pieces, whole, len, "%s in order", keystream_cipher_name(c));

                /* The same pieces in a random order (Fisher-Yates over piece indices). */
                for (size_t i = 0; i + 1 < n; i++)
                        order[i] = i;
                for (size_t i = n - 2; i > 0; i--) {
                        size_t j, t;
                        random_bytes(&r, sizeof(r));
                        j = r % (i + 1);
                        t = order[i];
                        order[i] = order[j];
                        order[j] = t;
                }
                memset(pieces, 0, len);
                for (size_t k = 0; k + 1 < n; k++) {
                        size_t i = order[k];
                        assert_int_equal(keystream_fill(ks, pieces + cuts[i], base + cuts[i], cuts[i + 1] - cuts[i]), 0);
                }
                assert_bytes_equal(pieces, whole, len, "%s shuffled", keystream_cipher_name(c));
                free(pieces);
                free(whole);
                keystream_free(ks);
        }
}

/* Re-keying to another key or cipher gives what a new context gives; bad re-keys change nothing. */
static void test_rekey(void **state) {
        uint8_t k1[KEYSTREAM_KEY_MAX], k2[KEYSTREAM_KEY_MAX], k3[KEYSTREAM_KEY_MAX];
        struct keystream *ks = NULL, *ref = NULL;
        uint8_t *a, *b;

        random_key(KEYSTREAM_AES_128_CTR, k1);
        random_key(KEYSTREAM_CHACHA20, k2);
        random_key(KEYSTREAM_AES_128_CTR, k3);
        assert_int_equal(ks_new(&ks, KEYSTREAM_AES_128_CTR, k1, 16), 0);
        free(fill(ks, 1000, 77));                               /* leave it mid-stream */

        assert_int_equal(keystream_rekey(ks, KEYSTREAM_CHACHA20, k2, 32), 0);
        assert_int_equal(ks_new(&ref, KEYSTREAM_CHACHA20, k2, 32), 0);
        a = fill(ks, 1077, 5000);
        b = fill(ref, 1077, 5000);
        assert_bytes_equal(a, b, 5000, "%s", "rekey to chacha20");
        free(a);
        free(b);
        keystream_free(ref);

        assert_int_equal(keystream_rekey(ks, KEYSTREAM_AES_128_CTR, k3, 16), 0);
        assert_int_equal(ks_new(&ref, KEYSTREAM_AES_128_CTR, k3, 16), 0);
        a = fill(ks, 6077, 5000);
        b = fill(ref, 6077, 5000);
        assert_bytes_equal(a, b, 5000, "%s", "rekey to aes-128-ctr");
        free(a);

        assert_int_equal(keystream_rekey(ks, KEYSTREAM_CHACHA20, k2, 16), -EINVAL);
        assert_int_equal(keystream_rekey(ks, KEYSTREAM_AUTO, k2, 32), -EINVAL);
        assert_int_equal(keystream_rekey(ks, KEYSTREAM_AES_128_CTR, NULL, 16), -EINVAL);
        assert_int_equal(keystream_rekey(NULL, KEYSTREAM_AES_128_CTR, k1, 16), -EINVAL);
        a = fill(ks, 6077, 5000);
        assert_bytes_equal(a, b, 5000, "%s", "after rejected rekeys");
        free(a);
        free(b);
        keystream_free(ref);

        /* Same key again: the stream restarts consistently. */
        assert_int_equal(keystream_rekey(ks, KEYSTREAM_AES_128_CTR, k1, 16), 0);
        assert_int_equal(ks_new(&ref, KEYSTREAM_AES_128_CTR, k1, 16), 0);
        a = fill(ks, 0, 300);
        b = fill(ref, 0, 300);
        assert_bytes_equal(a, b, 300, "%s", "rekey to the first key");
        free(a);
        free(b);
        keystream_free(ref);
        keystream_free(ks);
}

static void test_bad_inputs(void **state) {
        uint8_t key[KEYSTREAM_KEY_MAX] = {}, buf[16];
        struct keystream *ks = NULL;
        enum keystream_cipher c;

        assert_int_equal(keystream_new(&ks, KEYSTREAM_AUTO, key, 16), -EINVAL);
        assert_int_equal(keystream_new(&ks, KEYSTREAM_AUTO, key, 32), -EINVAL);
        assert_int_equal(keystream_new(&ks, KEYSTREAM_AES_128_CTR, key, 15), -EINVAL);
        assert_int_equal(keystream_new(&ks, KEYSTREAM_AES_128_CTR, key, 32), -EINVAL);
        assert_int_equal(keystream_new(&ks, KEYSTREAM_CHACHA20, key, 16), -EINVAL);
        assert_int_equal(keystream_new(&ks, KEYSTREAM_CHACHA20, NULL, 32), -EINVAL);
        assert_int_equal(keystream_new(&ks, _KEYSTREAM_CIPHER_MAX, key, 16), -EINVAL);
        assert_int_equal(keystream_new(&ks, (enum keystream_cipher) 99, key, 32), -EINVAL);
        assert_int_equal(keystream_new(NULL, KEYSTREAM_AES_128_CTR, key, 16), -EINVAL);
        assert_null(ks);

        assert_int_equal(keystream_new(&ks, KEYSTREAM_AES_128_CTR, key, 16), 0);
        assert_int_equal(keystream_fill(NULL, buf, 0, 16), -EINVAL);
        assert_int_equal(keystream_fill(ks, NULL, 0, 16), -EINVAL);
        assert_int_equal(keystream_fill(ks, NULL, 0, 0), 0);
        assert_int_equal(keystream_fill(ks, buf, 2, SIZE_MAX), -EINVAL);
        keystream_free(ks);
        keystream_free(NULL);

        assert_int_equal(keystream_cipher_from_name("aes-128-ctr", &c), 0);
        assert_int_equal(c, KEYSTREAM_AES_128_CTR);
        assert_int_equal(keystream_cipher_from_name("chacha20", &c), 0);
        assert_int_equal(c, KEYSTREAM_CHACHA20);
        assert_int_equal(keystream_cipher_from_name("auto", &c), 0);
        assert_int_equal(c, KEYSTREAM_AUTO);
        assert_int_equal(keystream_cipher_from_name("AES-128-CTR", &c), -EINVAL);
        assert_int_equal(keystream_cipher_from_name("aes", &c), -EINVAL);
        assert_int_equal(keystream_cipher_from_name("", &c), -EINVAL);
        assert_int_equal(keystream_cipher_from_name(NULL, &c), -EINVAL);
        assert_int_equal(keystream_cipher_from_name("auto", NULL), -EINVAL);
        assert_null(keystream_cipher_name(_KEYSTREAM_CIPHER_MAX));
        assert_string_equal(keystream_cipher_name(KEYSTREAM_AES_128_CTR), "aes-128-ctr");
        assert_string_equal(keystream_cipher_name(KEYSTREAM_CHACHA20), "chacha20");
        assert_string_equal(keystream_cipher_name(KEYSTREAM_AUTO), "auto");
        assert_int_equal(keystream_key_size(KEYSTREAM_AES_128_CTR), 16);
        assert_int_equal(keystream_key_size(KEYSTREAM_CHACHA20), 32);
        assert_int_equal(keystream_key_size(KEYSTREAM_AUTO), 0);
        assert_int_equal(keystream_key_size(_KEYSTREAM_CIPHER_MAX), 0);
}

/* Does /proc/cpuinfo list the "aes" flag? -1 when unknown. */
static int cpuinfo_has_aes(void) {
        char line[8192];
        FILE *f = fopen("/proc/cpuinfo", "re");
        int r = -1;

        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, "flags", 5) == 0 || strncmp(line, "Features", 8) == 0) {
                        r = strstr(line, " aes ") || strstr(line, " aes\n");
                        break;
                }
        fclose(f);
        return r;
}

static void test_resolve(void **state) {
        enum keystream_cipher c = keystream_cipher_resolve(KEYSTREAM_AUTO);
        int has = cpuinfo_has_aes();

        assert_true(c == KEYSTREAM_AES_128_CTR || c == KEYSTREAM_CHACHA20);
        if (has >= 0)
                assert_int_equal(c, has ? KEYSTREAM_AES_128_CTR : KEYSTREAM_CHACHA20);
        assert_int_equal(keystream_cipher_resolve(KEYSTREAM_AES_128_CTR), KEYSTREAM_AES_128_CTR);
        assert_int_equal(keystream_cipher_resolve(KEYSTREAM_CHACHA20), KEYSTREAM_CHACHA20);
        print_message("auto resolves to %s\n", keystream_cipher_name(c));
}

/* Random keys, offsets and lengths against the CLI. */
static void test_random(void **state) {
        for (unsigned i = 0; i < 12; i++) {
                enum keystream_cipher c = ciphers[i % 2];
                unsigned bs = block_size(c);
                uint8_t key[KEYSTREAM_KEY_MAX], iv[16];
                struct keystream *ks = NULL;
                uint64_t o;
                uint32_t r;
                size_t len;
                uint8_t *want, *got;

                random_key(c, key);
                random_bytes(&o, sizeof(o));
                random_bytes(&r, sizeof(r));
                if (i % 3 == 0)
                        o %= 1u << 20;
                len = 1 + r % (i % 4 == 0 ? 100000 : 300);
                if (o > UINT64_MAX - len)
                        o -= len;
                contract_iv(c, o / bs, iv);
                want = cli_stream(c, key, iv, (size_t) (o % bs), len);
                assert_int_equal(ks_new(&ks, c, key, keystream_key_size(c)), 0);
                got = fill(ks, o, len);
                assert_bytes_equal(got, want, len, "%s offset %" PRIu64 " len %zu", keystream_cipher_name(c), o, len);
                free(got);
                free(want);
                keystream_free(ks);
        }
}

/* Informational only: 1 MiB fills per second, never asserted. */
static void test_throughput(void **state) {
        const size_t len = MiB;
        uint8_t *buf = malloc(len);

        assert_non_null(buf);
        memset(buf, 0, len);
        for (size_t ci = 0; ci < 2; ci++) {
                enum keystream_cipher c = ciphers[ci];
                uint8_t key[KEYSTREAM_KEY_MAX];
                struct keystream *ks = NULL;
                struct timespec t0, t1;
                unsigned n = 256;
                double s;

                random_key(c, key);
                assert_int_equal(ks_new(&ks, c, key, keystream_key_size(c)), 0);
                clock_gettime(CLOCK_MONOTONIC, &t0);
                for (unsigned i = 0; i < n; i++)
                        assert_int_equal(keystream_fill(ks, buf, (uint64_t) i * 3 * len + 5, len), 0);
                clock_gettime(CLOCK_MONOTONIC, &t1);
                s = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9;
                print_message("%s: %.2f GB/s (1 MiB fills, one core)\n", keystream_cipher_name(c),
                              (double) n * (double) len / s / 1e9);
                keystream_free(ks);
        }
        free(buf);
}

/* The backends against each other: random keys, offsets anywhere in the 64-bit space (some just
 * before a 32-bit or 64-bit counter carry) and lengths, as one fill and as a fill continuing a
 * previous one. */
static void test_backends_agree(void **state) {
        enum keystream_backend bs[_KEYSTREAM_BACKEND_MAX];
        unsigned nb = 0;

        for (enum keystream_backend b = KEYSTREAM_BACKEND_OPENSSL; b < _KEYSTREAM_BACKEND_MAX; b++)
                if (keystream_backend_available(b, KEYSTREAM_AES_128_CTR))
                        bs[nb++] = b;
        assert_true(nb >= 2);
        for (unsigned i = 0; i < 400; i++) {
                enum keystream_cipher c = ciphers[i % 2];
                unsigned bsz = block_size(c);
                struct keystream *ks[_KEYSTREAM_BACKEND_MAX] = {};
                uint8_t key[KEYSTREAM_KEY_MAX], *ref = NULL;
                uint64_t o, blk;
                uint32_t r;
                size_t len, head;

                random_key(c, key);
                random_bytes(&o, sizeof(o));
                random_bytes(&r, sizeof(r));
                switch (i % 5) {
                case 0:         /* just before a 32-bit block counter carry */
                        blk = ((o >> 32) << 32) | 0xffffffffu;
                        o = blk * bsz - r % (3 * bsz);
                        break;
                case 1:         /* near the end of the offset space (AES's 64-bit word carries beyond) */
                        o = UINT64_MAX - r % (1u << 20);
                        break;
                case 2:
                        o %= 1u << 24;
                        break;
                default:
                        break;
                }
                len = 1 + r % (i % 7 == 0 ? 300000 : 5000);
                if (o > UINT64_MAX - len + 1)
                        o = UINT64_MAX - len + 1;
                head = len > 1 ? r % len : 0;
                for (unsigned k = 0; k < nb; k++) {
                        uint8_t *got;

                        if (keystream_backend_available(bs[k], c) == false)
                                continue;
                        assert_int_equal(keystream_new_backend(&ks[k], c, bs[k], key, keystream_key_size(c)), 0);
                        got = fill(ks[k], o, len);
                        if (!ref) {
                                ref = got;
                                continue;
                        }
                        assert_bytes_equal(got, ref, len, "%s %s against %s at offset %" PRIu64 " len %zu",
                                           keystream_cipher_name(c), keystream_backend_name(bs[k]),
                                           keystream_backend_name(bs[0]), o, len);
                        /* The same range as a head, then a fill continuing it. */
                        memset(got, 0, len);
                        if (head > 0)
                                assert_int_equal(keystream_fill(ks[k], got, o, head), 0);
                        assert_int_equal(keystream_fill(ks[k], got + head, o + head, len - head), 0);
                        assert_bytes_equal(got, ref, len, "%s %s continued at offset %" PRIu64 "+%zu len %zu",
                                           keystream_cipher_name(c), keystream_backend_name(bs[k]), o, head, len);
                        free(got);
                }
                free(ref);
                for (unsigned k = 0; k < nb; k++)
                        keystream_free(ks[k]);
        }
}

static void test_backend_names(void **state) {
        enum keystream_backend want[_KEYSTREAM_CIPHER_MAX], b;

        assert_string_equal(keystream_backend_name(KEYSTREAM_BACKEND_AUTO), "auto");
        assert_string_equal(keystream_backend_name(KEYSTREAM_BACKEND_OPENSSL), "openssl");
        assert_string_equal(keystream_backend_name(KEYSTREAM_BACKEND_GCRYPT), "gcrypt");
        assert_null(keystream_backend_name(_KEYSTREAM_BACKEND_MAX));
        assert_int_equal(keystream_backend_from_name("gcrypt", &b), 0);
        assert_int_equal(b, KEYSTREAM_BACKEND_GCRYPT);
        assert_int_equal(keystream_backend_from_name("GCRYPT", &b), -EINVAL);
        assert_int_equal(keystream_backend_from_name("", &b), -EINVAL);
        assert_int_equal(keystream_backend_from_name(NULL, &b), -EINVAL);

        assert_int_equal(keystream_backend_spec_parse("auto", want), 0);
        assert_int_equal(want[KEYSTREAM_AES_128_CTR], KEYSTREAM_BACKEND_AUTO);
        assert_int_equal(want[KEYSTREAM_CHACHA20], KEYSTREAM_BACKEND_AUTO);
        assert_int_equal(keystream_backend_spec_parse("openssl", want), 0);
        assert_int_equal(want[KEYSTREAM_AES_128_CTR], KEYSTREAM_BACKEND_OPENSSL);
        assert_int_equal(want[KEYSTREAM_CHACHA20], KEYSTREAM_BACKEND_OPENSSL);
        assert_int_equal(keystream_backend_spec_parse("aes-128-ctr:gcrypt", want), 0);
        assert_int_equal(want[KEYSTREAM_AES_128_CTR], KEYSTREAM_BACKEND_GCRYPT);
        assert_int_equal(want[KEYSTREAM_CHACHA20], KEYSTREAM_BACKEND_AUTO);
        assert_int_equal(keystream_backend_spec_parse("chacha20:openssl,aes-128-ctr:auto", want), 0);
        assert_int_equal(want[KEYSTREAM_AES_128_CTR], KEYSTREAM_BACKEND_AUTO);
        assert_int_equal(want[KEYSTREAM_CHACHA20], KEYSTREAM_BACKEND_OPENSSL);

        /* Refusals leave want as it was. */
        static const char *const bad[] = {
                "", "fast", "gcrypt,openssl", "aes-128-ctr", "aes-128-ctr:", ":gcrypt", "aes:gcrypt",
                "auto:gcrypt", "aes-128-ctr:gcrypt,", ",aes-128-ctr:gcrypt", "aes-128-ctr:gcrypt,aes-128-ctr:openssl",
                "aes-128-ctr:gcrypt:openssl", "aes-128-ctr: gcrypt", "chacha20:GCRYPT",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                if (keystream_backend_spec_parse(bad[i], want) != -EINVAL)
                        fail_msg("\"%s\" was accepted", bad[i]);
                assert_int_equal(want[KEYSTREAM_CHACHA20], KEYSTREAM_BACKEND_OPENSSL);
        }
        assert_int_equal(keystream_backend_spec_parse(NULL, want), -EINVAL);
        assert_int_equal(keystream_backend_spec_parse("auto", NULL), -EINVAL);
}

/* Choosing measures every backend, picks one that can make the cipher, and keystream_new() then
 * uses it; a configured backend wins over the measurement. */
static void test_choose(void **state) {
        uint8_t key[KEYSTREAM_KEY_MAX] = { 1 };

        for (size_t ci = 0; ci < 2; ci++) {
                enum keystream_cipher c = ciphers[ci];
                struct keystream_choice ch, now;
                struct keystream *ks = NULL;

                assert_int_equal(keystream_backend_choose(c, KEYSTREAM_BACKEND_AUTO, 1u << 20, &ch), 0);
                assert_true(ch.measured);
                assert_false(ch.configured);
                assert_true(keystream_backend_available(ch.backend, c));
                for (enum keystream_backend b = KEYSTREAM_BACKEND_OPENSSL; b < _KEYSTREAM_BACKEND_MAX; b++) {
                        if (keystream_backend_available(b, c))
                                assert_true(ch.mbps[b] > 0);
                        assert_true(ch.mbps[ch.backend] >= ch.mbps[b]);
                        print_message("%s %s: %.0f MB/s\n", keystream_cipher_name(c), keystream_backend_name(b),
                                      ch.mbps[b]);
                }
                keystream_backend_choice(c, &now);
                assert_int_equal(now.backend, ch.backend);
                assert_int_equal(keystream_new(&ks, c, key, keystream_key_size(c)), 0);
                assert_int_equal(keystream_backend_of(ks), ch.backend);

                for (enum keystream_backend b = KEYSTREAM_BACKEND_OPENSSL; b < _KEYSTREAM_BACKEND_MAX; b++) {
                        if (!keystream_backend_available(b, c))
                                continue;
                        assert_int_equal(keystream_backend_choose(c, b, 1u << 16, &ch), 0);
                        assert_true(ch.configured);
                        assert_int_equal(ch.backend, b);
                        /* A rekey follows the process's choice; a context made for a backend keeps it. */
                        assert_int_equal(keystream_rekey(ks, c, key, keystream_key_size(c)), 0);
                        assert_int_equal(keystream_backend_of(ks), b);
                }
                keystream_free(ks);
                assert_int_equal(keystream_backend_choose(c, (enum keystream_backend) 7, 1u << 16, &ch), -EINVAL);
                assert_int_equal(keystream_backend_choose(KEYSTREAM_AUTO, KEYSTREAM_BACKEND_AUTO, 1u << 16, &ch),
                                 -EINVAL);
                assert_int_equal(keystream_backend_choose(c, KEYSTREAM_BACKEND_OPENSSL, 1u << 16, NULL), 0);
        }
        assert_int_equal(keystream_new_backend(NULL, KEYSTREAM_AES_128_CTR, KEYSTREAM_BACKEND_OPENSSL, key, 16),
                         -EINVAL);
}

static int use_backend(enum keystream_backend b) {
        backend_under_test = b;
        print_message("backend %s\n", keystream_backend_name(b));
        return 0;
}

static int use_openssl(void **state) {
        return use_backend(KEYSTREAM_BACKEND_OPENSSL);
}

static int use_gcrypt(void **state) {
        return use_backend(KEYSTREAM_BACKEND_GCRYPT);
}

int main(void) {
        /* The contract, once per backend. */
        const struct CMUnitTest contract[] = {
                cmocka_unit_test(test_cli_offsets),
                cmocka_unit_test(test_chacha20_counter_carry),
                cmocka_unit_test(test_aes_counter_carry),
                cmocka_unit_test(test_end_of_offset_space),
                cmocka_unit_test(test_pieces),
                cmocka_unit_test(test_rekey),
                cmocka_unit_test(test_random),
                cmocka_unit_test(test_throughput),
        };
        const struct CMUnitTest common[] = {
                cmocka_unit_test(test_bad_inputs),
                cmocka_unit_test(test_resolve),
                cmocka_unit_test(test_backend_names),
                cmocka_unit_test(test_backends_agree),
                cmocka_unit_test(test_choose),
        };
        int failed = 0;

        if (system("openssl version >/dev/null 2>&1") != 0) {
                fprintf(stderr, "test-keystream: skipped: no openssl binary in PATH\n");
                return 77;
        }
        failed += cmocka_run_group_tests_name("keystream", common, NULL, NULL);
        failed += cmocka_run_group_tests_name("contract with openssl", contract, use_openssl, NULL);
        if (keystream_backend_available(KEYSTREAM_BACKEND_GCRYPT, KEYSTREAM_AES_128_CTR))
                failed += cmocka_run_group_tests_name("contract with gcrypt", contract, use_gcrypt, NULL);
        else
                fail_msg("libgcrypt is linked but cannot make AES-128-CTR");
        return failed == 0 ? 0 : 1;
}
