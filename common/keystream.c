/* Seekable keystream over OpenSSL EVP: AES-128-CTR or ChaCha20 encryption of zeros.
 * The contract (doc/DESIGN.md "Keystream contract") is in keystream.h. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#include <asm/hwcap.h>
#endif

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "keystream.h"

/* Plaintext for every fill: encrypting zeros from a buffer that stays in L1/L2 into the caller's
 * buffer writes the output once, where memset + in-place encryption would write it twice. */
#define ZERO_SIZE (16 * 1024)
static const uint8_t zeros[ZERO_SIZE];

#define BLOCK_MAX 64                    /* largest counter block of any cipher, bytes */

struct keystream {
        EVP_CIPHER_CTX *ctx;
        enum keystream_cipher cipher;
        uint8_t key[KEYSTREAM_KEY_MAX]; /* copy, cleansed on rekey and free */
        size_t key_len;
        bool keyed;                     /* ctx holds the key; false after an OpenSSL error */
        bool positioned;                /* ctx stands at byte offset pos */
        uint64_t pos;
};

static const char *const cipher_names[_KEYSTREAM_CIPHER_MAX] = {
        [KEYSTREAM_AUTO] = "auto",
        [KEYSTREAM_AES_128_CTR] = "aes-128-ctr",
        [KEYSTREAM_CHACHA20] = "chacha20",
};

const char *keystream_cipher_name(enum keystream_cipher c) {
        if ((unsigned) c >= _KEYSTREAM_CIPHER_MAX)
                return NULL;
        return cipher_names[c];
}

int keystream_cipher_from_name(const char *name, enum keystream_cipher *ret) {
        if (!name || !ret)
                return -EINVAL;
        for (unsigned i = 0; i < _KEYSTREAM_CIPHER_MAX; i++)
                if (strcmp(name, cipher_names[i]) == 0) {
                        *ret = (enum keystream_cipher) i;
                        return 0;
                }
        return -EINVAL;
}

static bool cpu_has_aes(void) {
#if defined(__x86_64__) || defined(__i386__)
        unsigned a, b, c, d;

        if (!__get_cpuid(1, &a, &b, &c, &d))
                return false;
        return c & bit_AES;
#elif defined(__aarch64__) && defined(HWCAP_AES)
        return getauxval(AT_HWCAP) & HWCAP_AES;
#else
        return false;
#endif
}

enum keystream_cipher keystream_cipher_resolve(enum keystream_cipher c) {
        if (c != KEYSTREAM_AUTO)
                return c;
        return cpu_has_aes() ? KEYSTREAM_AES_128_CTR : KEYSTREAM_CHACHA20;
}

size_t keystream_key_size(enum keystream_cipher c) {
        switch (c) {
        case KEYSTREAM_AES_128_CTR:
                return 16;
        case KEYSTREAM_CHACHA20:
                return 32;
        default:
                return 0;
        }
}

static const EVP_CIPHER *cipher_evp(enum keystream_cipher c) {
        return c == KEYSTREAM_AES_128_CTR ? EVP_aes_128_ctr() : EVP_chacha20();
}

/* Bytes per counter increment. */
static unsigned cipher_block(enum keystream_cipher c) {
        return c == KEYSTREAM_AES_128_CTR ? 16 : 64;
}

/* Position the context at the start of counter block n: AES takes the 128-bit big-endian block
 * number, ChaCha20 a 64-bit little-endian one followed by 8 zero bytes (OpenSSL's 32-bit counter
 * word carries into the next, so this spans the whole 64-bit block space). The key schedule is
 * reused unless an earlier error left the context unkeyed. Returns 0 or -EIO. */
static int keystream_seek_block(struct keystream *ks, uint64_t n) {
        uint8_t iv[16] = {};

        if (ks->cipher == KEYSTREAM_AES_128_CTR)
                for (unsigned i = 0; i < 8; i++)
                        iv[15 - i] = (uint8_t) (n >> (8 * i));
        else
                for (unsigned i = 0; i < 8; i++)
                        iv[i] = (uint8_t) (n >> (8 * i));

        ks->positioned = false;
        if (ks->keyed) {
                if (EVP_EncryptInit_ex(ks->ctx, NULL, NULL, NULL, iv) != 1)
                        return -EIO;
        } else {
                if (EVP_EncryptInit_ex(ks->ctx, cipher_evp(ks->cipher), NULL, ks->key, iv) != 1)
                        return -EIO;
                ks->keyed = true;
        }
        return 0;
}

/* Encrypt len zero bytes into out, advancing the context. Returns 0 or -EIO. */
static int keystream_stream(struct keystream *ks, uint8_t *out, size_t len) {
        while (len > 0) {
                int n = (int) (len < ZERO_SIZE ? len : ZERO_SIZE), outl = 0;

                if (EVP_EncryptUpdate(ks->ctx, out, &outl, zeros, n) != 1 || outl != n)
                        return -EIO;
                out += n;
                len -= (size_t) n;
        }
        return 0;
}

int keystream_rekey(struct keystream *ks, enum keystream_cipher c, const uint8_t *key, size_t key_len) {
        if (!ks || !key)
                return -EINVAL;
        if (c != KEYSTREAM_AES_128_CTR && c != KEYSTREAM_CHACHA20)
                return -EINVAL;
        if (key_len != keystream_key_size(c))
                return -EINVAL;

        OPENSSL_cleanse(ks->key, sizeof(ks->key));
        memcpy(ks->key, key, key_len);
        ks->key_len = key_len;
        ks->cipher = c;
        ks->keyed = false;
        ks->positioned = false;

        /* Key now, so that a broken OpenSSL shows here rather than on the first fill. */
        if (EVP_CIPHER_CTX_reset(ks->ctx) != 1 ||
            EVP_EncryptInit_ex(ks->ctx, cipher_evp(c), NULL, ks->key, NULL) != 1)
                return -EIO;
        ks->keyed = true;
        return 0;
}

int keystream_new(struct keystream **ret, enum keystream_cipher c, const uint8_t *key, size_t key_len) {
        struct keystream *ks;
        int r;

        if (!ret)
                return -EINVAL;
        ks = calloc(1, sizeof(*ks));
        if (!ks)
                return -ENOMEM;
        ks->ctx = EVP_CIPHER_CTX_new();
        if (!ks->ctx) {
                free(ks);
                return -ENOMEM;
        }
        r = keystream_rekey(ks, c, key, key_len);
        if (r < 0) {
                keystream_free(ks);
                return r;
        }
        *ret = ks;
        return 0;
}

void keystream_free(struct keystream *ks) {
        if (!ks)
                return;
        EVP_CIPHER_CTX_free(ks->ctx);   /* cleanses OpenSSL's key schedule */
        OPENSSL_cleanse(ks, sizeof(*ks));
        free(ks);
}

/* A fill continuing where the previous one ended streams on without reseeking; otherwise seek
 * to the block holding offset and take the unaligned head from one block generated into a
 * scratch buffer. The rest is encrypted straight into buf, OpenSSL keeping any partial tail
 * block for the next call. */
int keystream_fill(struct keystream *ks, void *buf, uint64_t offset, size_t len) {
        uint8_t *out = buf;
        uint64_t end;
        int r;

        if (!ks || (!buf && len > 0))
                return -EINVAL;
        if (len == 0)
                return 0;
        /* [offset, offset + len) must lie within the 64-bit offset space; it may end at 2^64. */
        if ((uint64_t) (len - 1) > UINT64_MAX - offset)
                return -EINVAL;
        end = offset + len;             /* 0 when the range ends at 2^64 */

        if (!ks->positioned || ks->pos != offset) {
                unsigned bs = cipher_block(ks->cipher), skip = (unsigned) (offset % bs);

                r = keystream_seek_block(ks, offset / bs);
                if (r < 0)
                        goto fail;
                if (skip > 0) {
                        uint8_t block[BLOCK_MAX];
                        size_t n = bs - skip < len ? bs - skip : len;

                        r = keystream_stream(ks, block, bs);
                        if (r < 0)
                                goto fail;
                        memcpy(out, block + skip, n);
                        out += n;
                        len -= n;
                        /* The context now stands at the next block boundary, which is past end
                         * when the whole range fell inside this block. */
                        ks->pos = offset - skip + bs;
                        ks->positioned = ks->pos != 0;
                        if (len == 0)
                                return 0;
                }
        }

        ks->positioned = false;
        r = keystream_stream(ks, out, len);
        if (r < 0)
                goto fail;
        ks->pos = end;
        ks->positioned = end != 0;      /* past 2^64 there is nothing to continue */
        return 0;

fail:
        /* Re-key from the copy on the next fill rather than trust the context's state. */
        ks->keyed = false;
        ks->positioned = false;
        return r;
}
