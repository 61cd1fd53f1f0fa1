/* Seekable keystream: AES-128-CTR or ChaCha20 encryption of zeros, made by OpenSSL's EVP or by
 * libgcrypt, whichever measured faster on this CPU (or the configured one). The contract
 * (doc/DESIGN.md "Keystream contract") is in keystream.h; both backends meet it byte for byte
 * (tests/unit/test-keystream.c checks them against each other and the openssl CLI). */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gcrypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "keystream.h"

/* Plaintext for every fill: encrypting zeros from a buffer that stays in L1/L2 into the caller's
 * buffer writes the output once, where memset + in-place encryption would write it twice. */
#define ZERO_SIZE (16 * 1024)
static const uint8_t zeros[ZERO_SIZE];

#define BLOCK_MAX 64                    /* largest counter block of any cipher, bytes */

struct keystream {
        enum keystream_cipher cipher;
        enum keystream_backend want;    /* AUTO: the process's choice for the cipher at each rekey */
        enum keystream_backend backend; /* making the stream now */
        EVP_CIPHER_CTX *evp;            /* OpenSSL's context, made on first use */
        gcry_cipher_hd_t gh;            /* libgcrypt's handle, for gh_cipher; NULL: none */
        enum keystream_cipher gh_cipher;
        uint8_t key[KEYSTREAM_KEY_MAX]; /* copy, cleansed on rekey and free */
        size_t key_len;
        bool keyed;                     /* the context holds the key; false after a library error */
        bool positioned;                /* the context stands at byte offset pos */
        uint64_t pos;
};

/* The backend of each cipher, and how it was chosen: written by keystream_backend_choose() before
 * the threads that read it start. */
static _Atomic enum keystream_backend chosen[_KEYSTREAM_CIPHER_MAX] = {
        [KEYSTREAM_AES_128_CTR] = KEYSTREAM_BACKEND_OPENSSL,
        [KEYSTREAM_CHACHA20] = KEYSTREAM_BACKEND_OPENSSL,
};
static struct keystream_choice choices[_KEYSTREAM_CIPHER_MAX];

static bool cipher_valid(enum keystream_cipher c) {
        return c == KEYSTREAM_AES_128_CTR || c == KEYSTREAM_CHACHA20;
}

/* libgcrypt wants to be initialized once by the program, before use from threads. It keeps no key
 * of ours in secure memory (the copies are cleansed on free), so none is set up. */
static pthread_once_t gcrypt_once = PTHREAD_ONCE_INIT;
static bool gcrypt_ok;

static void gcrypt_init(void) {
        if (gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) {
                gcrypt_ok = true;       /* another part of the program did it */
                return;
        }
        if (!gcry_check_version(GCRYPT_VERSION))
                return;
        gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
        gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
        gcrypt_ok = true;
}

static int gcrypt_algo(enum keystream_cipher c) {
        return c == KEYSTREAM_AES_128_CTR ? GCRY_CIPHER_AES128 : GCRY_CIPHER_CHACHA20;
}

static int gcrypt_mode(enum keystream_cipher c) {
        return c == KEYSTREAM_AES_128_CTR ? GCRY_CIPHER_MODE_CTR : GCRY_CIPHER_MODE_STREAM;
}

static int gcrypt_errno(gcry_error_t e) {
        return gcry_err_code(e) == GPG_ERR_ENOMEM ? -ENOMEM : -EIO;
}

bool keystream_backend_available(enum keystream_backend b, enum keystream_cipher c) {
        if (!cipher_valid(c))
                return false;
        switch (b) {
        case KEYSTREAM_BACKEND_OPENSSL:
                return true;
        case KEYSTREAM_BACKEND_GCRYPT:
                pthread_once(&gcrypt_once, gcrypt_init);
                return gcrypt_ok && gcry_cipher_algo_info(gcrypt_algo(c), GCRYCTL_TEST_ALGO, NULL, NULL) == 0;
        default:
                return false;
        }
}

static const EVP_CIPHER *cipher_evp(enum keystream_cipher c) {
        return c == KEYSTREAM_AES_128_CTR ? EVP_aes_128_ctr() : EVP_chacha20();
}

/* Bytes per counter increment. */
static unsigned cipher_block(enum keystream_cipher c) {
        return c == KEYSTREAM_AES_128_CTR ? 16 : 64;
}

/* Key the backend's context from the copy (no position yet). 0 or -errno. */
static int keystream_key(struct keystream *ks) {
        ks->keyed = false;
        ks->positioned = false;
        if (ks->backend == KEYSTREAM_BACKEND_OPENSSL) {
                if (!ks->evp) {
                        ks->evp = EVP_CIPHER_CTX_new();
                        if (!ks->evp)
                                return -ENOMEM;
                }
                if (EVP_CIPHER_CTX_reset(ks->evp) != 1 ||
                    EVP_EncryptInit_ex(ks->evp, cipher_evp(ks->cipher), NULL, ks->key, NULL) != 1)
                        return -EIO;
        } else {
                gcry_error_t e;

                if (ks->gh && ks->gh_cipher != ks->cipher) {
                        gcry_cipher_close(ks->gh);      /* wipes libgcrypt's key schedule */
                        ks->gh = NULL;
                }
                if (!ks->gh) {
                        e = gcry_cipher_open(&ks->gh, gcrypt_algo(ks->cipher), gcrypt_mode(ks->cipher), 0);
                        if (e) {
                                ks->gh = NULL;
                                return gcrypt_errno(e);
                        }
                        ks->gh_cipher = ks->cipher;
                }
                e = gcry_cipher_setkey(ks->gh, ks->key, ks->key_len);
                if (e)
                        return gcrypt_errno(e);
        }
        ks->keyed = true;
        return 0;
}

/* Position the context at the start of counter block n: AES takes the 128-bit big-endian block
 * number, ChaCha20 a 64-bit little-endian one followed by 8 zero bytes (OpenSSL's 32-bit counter
 * word carries into the next, and libgcrypt's 16-byte ChaCha20 IV is the same counter and nonce
 * words, so this spans the whole 64-bit block space). The key schedule is reused unless an
 * earlier error left the context unkeyed. Returns 0 or -errno. */
static int keystream_seek_block(struct keystream *ks, uint64_t n) {
        uint8_t iv[16] = {};
        int r;

        if (ks->cipher == KEYSTREAM_AES_128_CTR)
                for (unsigned i = 0; i < 8; i++)
                        iv[15 - i] = (uint8_t) (n >> (8 * i));
        else
                for (unsigned i = 0; i < 8; i++)
                        iv[i] = (uint8_t) (n >> (8 * i));

        ks->positioned = false;
        if (!ks->keyed) {
                r = keystream_key(ks);
                if (r < 0)
                        return r;
        }
        if (ks->backend == KEYSTREAM_BACKEND_OPENSSL)
                return EVP_EncryptInit_ex(ks->evp, NULL, NULL, NULL, iv) == 1 ? 0 : -EIO;
        if (ks->cipher == KEYSTREAM_AES_128_CTR)
                return gcry_cipher_setctr(ks->gh, iv, sizeof(iv)) ? -EIO : 0;
        return gcry_cipher_setiv(ks->gh, iv, sizeof(iv)) ? -EIO : 0;
}

/* Encrypt len zero bytes into out, advancing the context (both libraries keep the rest of a
 * partly used block for the next call). Returns 0 or -EIO. */
static int keystream_stream(struct keystream *ks, uint8_t *out, size_t len) {
        while (len > 0) {
                int n = (int) (len < ZERO_SIZE ? len : ZERO_SIZE), outl = 0;

                if (ks->backend == KEYSTREAM_BACKEND_OPENSSL) {
                        if (EVP_EncryptUpdate(ks->evp, out, &outl, zeros, n) != 1 || outl != n)
                                return -EIO;
                } else if (gcry_cipher_encrypt(ks->gh, out, (size_t) n, zeros, (size_t) n))
                        return -EIO;
                out += n;
                len -= (size_t) n;
        }
        return 0;
}

int keystream_rekey(struct keystream *ks, enum keystream_cipher c, const uint8_t *key, size_t key_len) {
        enum keystream_backend b;

        if (!ks || !key)
                return -EINVAL;
        if (!cipher_valid(c))
                return -EINVAL;
        if (key_len != keystream_key_size(c))
                return -EINVAL;
        b = ks->want != KEYSTREAM_BACKEND_AUTO ? ks->want : atomic_load_explicit(&chosen[c], memory_order_relaxed);
        if (!keystream_backend_available(b, c))
                return -EOPNOTSUPP;

        OPENSSL_cleanse(ks->key, sizeof(ks->key));
        memcpy(ks->key, key, key_len);
        ks->key_len = key_len;
        ks->cipher = c;
        ks->backend = b;

        /* Key now, so that a broken library shows here rather than on the first fill. */
        return keystream_key(ks);
}

int keystream_new_backend(struct keystream **ret, enum keystream_cipher c, enum keystream_backend b,
                          const uint8_t *key, size_t key_len) {
        struct keystream *ks;
        int r;

        if (!ret || (unsigned) b >= _KEYSTREAM_BACKEND_MAX)
                return -EINVAL;
        ks = calloc(1, sizeof(*ks));
        if (!ks)
                return -ENOMEM;
        ks->want = b;
        r = keystream_rekey(ks, c, key, key_len);
        if (r < 0) {
                keystream_free(ks);
                return r;
        }
        *ret = ks;
        return 0;
}

int keystream_new(struct keystream **ret, enum keystream_cipher c, const uint8_t *key, size_t key_len) {
        return keystream_new_backend(ret, c, KEYSTREAM_BACKEND_AUTO, key, key_len);
}

enum keystream_backend keystream_backend_of(const struct keystream *ks) {
        return ks->backend;
}

void keystream_free(struct keystream *ks) {
        if (!ks)
                return;
        EVP_CIPHER_CTX_free(ks->evp);   /* cleanses OpenSSL's key schedule */
        if (ks->gh)
                gcry_cipher_close(ks->gh);      /* and libgcrypt its own */
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

static double seconds_now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

#define MEASURE_BUFFER (1u << 20)       /* as a worker fills: one I/O buffer at a time */

/* One run of `bytes` bytes from offset `at`: MB/s into *mbps when better. 0 or -errno. */
static int measure_run(struct keystream *ks, uint8_t *buf, uint64_t at, size_t bytes, double *mbps) {
        double t0 = seconds_now(), t;

        for (size_t done = 0; done < bytes; done += MEASURE_BUFFER) {
                size_t n = bytes - done < MEASURE_BUFFER ? bytes - done : MEASURE_BUFFER;
                int r = keystream_fill(ks, buf, at + done, n);

                if (r < 0)
                        return r;
        }
        t = seconds_now() - t0;
        if (t > 0 && (double) bytes / t / 1e6 > *mbps)
                *mbps = (double) bytes / t / 1e6;
        return 0;
}

/* Measure the backends in bs[0..n) making c, runs rounds interleaved so that a noisy moment
 * touches all of them; mbps[b] gets the best run of each. */
static int measure_interleaved(const enum keystream_backend *bs, unsigned n, enum keystream_cipher c, size_t bytes,
                               unsigned runs, double mbps[_KEYSTREAM_BACKEND_MAX]) {
        struct keystream *ks[_KEYSTREAM_BACKEND_MAX] = {};
        uint8_t key[KEYSTREAM_KEY_MAX] = {};
        uint8_t *buf;
        int r = 0;

        if (bytes == 0 || runs == 0)
                return -EINVAL;
        buf = aligned_alloc(4096, MEASURE_BUFFER);
        if (!buf)
                return -ENOMEM;
        /* Any key: the speed does not depend on it. */
        for (size_t i = 0; i < sizeof(key); i++)
                key[i] = (uint8_t) (i * 37 + 11);
        for (unsigned i = 0; i < n && r >= 0; i++)
                r = keystream_new_backend(&ks[i], c, bs[i], key, keystream_key_size(c));
        for (unsigned i = 0; i < n; i++)
                mbps[bs[i]] = 0;
        for (unsigned run = 0; run < runs && r >= 0; run++)
                for (unsigned i = 0; i < n && r >= 0; i++)
                        r = measure_run(ks[i], buf, (uint64_t) run << 40, bytes, &mbps[bs[i]]);
        for (unsigned i = 0; i < n; i++)
                keystream_free(ks[i]);
        free(buf);
        return r;
}

int keystream_backend_measure(enum keystream_backend b, enum keystream_cipher c, size_t bytes, unsigned runs,
                              double *mbps) {
        double m[_KEYSTREAM_BACKEND_MAX] = {};
        int r;

        if (!mbps || b == KEYSTREAM_BACKEND_AUTO || (unsigned) b >= _KEYSTREAM_BACKEND_MAX || !cipher_valid(c))
                return -EINVAL;
        if (!keystream_backend_available(b, c))
                return -EOPNOTSUPP;
        r = measure_interleaved(&b, 1, c, bytes, runs, m);
        if (r < 0)
                return r;
        *mbps = m[b];
        return 0;
}

int keystream_backend_choose(enum keystream_cipher c, enum keystream_backend want, size_t bytes,
                             struct keystream_choice *ret) {
        struct keystream_choice ch = { .backend = KEYSTREAM_BACKEND_OPENSSL };
        enum keystream_backend bs[_KEYSTREAM_BACKEND_MAX];
        unsigned n = 0;
        int r;

        if (!cipher_valid(c) || (unsigned) want >= _KEYSTREAM_BACKEND_MAX)
                return -EINVAL;
        if (want != KEYSTREAM_BACKEND_AUTO && !keystream_backend_available(want, c))
                return -EOPNOTSUPP;
        for (enum keystream_backend b = KEYSTREAM_BACKEND_OPENSSL; b < _KEYSTREAM_BACKEND_MAX; b++)
                if (keystream_backend_available(b, c))
                        bs[n++] = b;
        r = measure_interleaved(bs, n, c, bytes, 3, ch.mbps);
        if (r < 0)
                return r;
        ch.measured = true;
        if (want != KEYSTREAM_BACKEND_AUTO) {
                ch.backend = want;
                ch.configured = true;
        } else
                /* OpenSSL, the contract's reference, unless another is faster. */
                for (unsigned i = 0; i < n; i++)
                        if (ch.mbps[bs[i]] > ch.mbps[ch.backend])
                                ch.backend = bs[i];
        choices[c] = ch;
        atomic_store(&chosen[c], ch.backend);
        if (ret)
                *ret = ch;
        return 0;
}

void keystream_backend_choice(enum keystream_cipher c, struct keystream_choice *ret) {
        if (!cipher_valid(c)) {
                *ret = (struct keystream_choice) { .backend = KEYSTREAM_BACKEND_OPENSSL };
                return;
        }
        *ret = choices[c];
        ret->backend = atomic_load(&chosen[c]);
}
