/* Seekable keystream: the byte at device offset o is a pure function of (cipher, key, o).
 * The contract is doc/DESIGN.md "Keystream contract" and README "Keystream contract":
 *   AES-128-CTR: IV = 128-bit big-endian o/16.
 *   ChaCha20:    IV = 64-bit little-endian o/64, then 8 zero bytes (OpenSSL's counter carry).
 * Both equal `openssl enc -<cipher> -K <key> -iv 0...0 -in /dev/zero` at offset o.
 *
 * Two libraries make it, byte for byte the same: OpenSSL's libcrypto and libgcrypt (whose
 * AES-CTR has VAES/AVX2 code, about twice OpenSSL 3.0's speed on CPUs with VAES). Which one makes
 * each cipher is chosen once per process, by measuring both (keystream_backend_choose()), or set by
 * the configuration; until then OpenSSL makes both. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum keystream_cipher {
        KEYSTREAM_AUTO = 0,             /* resolved by keystream_cipher_resolve() */
        KEYSTREAM_AES_128_CTR,
        KEYSTREAM_CHACHA20,
        _KEYSTREAM_CIPHER_MAX,
};

#define KEYSTREAM_KEY_MAX 32            /* largest key of any cipher, bytes */

enum keystream_backend {
        KEYSTREAM_BACKEND_AUTO = 0,     /* the fastest measured (keystream_backend_choose()) */
        KEYSTREAM_BACKEND_OPENSSL,
        KEYSTREAM_BACKEND_GCRYPT,
        _KEYSTREAM_BACKEND_MAX,
};

struct keystream;

/* Name as used on the command line and in the protocol ("aes-128-ctr", "chacha20", "auto"). */
const char *keystream_cipher_name(enum keystream_cipher c);
/* Parse a name; returns 0 or -EINVAL. */
int keystream_cipher_from_name(const char *name, enum keystream_cipher *ret);
/* AUTO -> AES-128-CTR if the CPU has AES instructions (x86 AES-NI, ARMv8 AES), else ChaCha20.
 * Other values are returned unchanged. */
enum keystream_cipher keystream_cipher_resolve(enum keystream_cipher c);
/* Key length in bytes (16 or 32); 0 for AUTO. */
size_t keystream_key_size(enum keystream_cipher c);

/* Backend names as in the configuration and the replies ("auto", "openssl", "gcrypt"). */
const char *keystream_backend_name(enum keystream_backend b);
int keystream_backend_from_name(const char *name, enum keystream_backend *ret);
/* Parse a keystream-backend setting into want[cipher] (want[KEYSTREAM_AUTO] unused): "auto",
 * "openssl" or "gcrypt" for both ciphers, or a comma-separated list of CIPHER:BACKEND where the
 * ciphers not named stay auto ("aes-128-ctr:gcrypt,chacha20:openssl"). 0 or -EINVAL (a cipher
 * named twice, an unknown name, an empty item). */
int keystream_backend_spec_parse(const char *spec, enum keystream_backend want[_KEYSTREAM_CIPHER_MAX]);

/* How the backend of a cipher was chosen, and what each backend made on this CPU. */
struct keystream_choice {
        enum keystream_backend backend; /* OPENSSL until keystream_backend_choose() */
        bool configured;                /* set by the caller's want, not by the measurement */
        bool measured;                  /* mbps holds figures */
        double mbps[_KEYSTREAM_BACKEND_MAX]; /* 10^6 bytes/s of one thread; 0: cannot make it */
};

/* What keystream_backend_choose() measures per backend by default: a few ms of each, 3 times. */
#define KEYSTREAM_CHOOSE_BYTES (8u << 20)

/* Whether backend b can make cipher c here (libgcrypt in FIPS mode refuses ChaCha20). */
bool keystream_backend_available(enum keystream_backend b, enum keystream_cipher c);
/* Measure every available backend making c, one thread, `bytes` bytes each, interleaved and best
 * of three; then make `want` the backend of c when it is not AUTO (-EOPNOTSUPP when it cannot
 * make c here), else the fastest. From then on keystream_new() and keystream_rekey() use it for c.
 * Call before the threads that make keystreams start (the choice is read without a lock). The
 * outcome goes to *ret (may be NULL). 0 or -errno. */
int keystream_backend_choose(enum keystream_cipher c, enum keystream_backend want, size_t bytes,
                             struct keystream_choice *ret);
/* The choice in effect for c (AES or ChaCha20). */
void keystream_backend_choice(enum keystream_cipher c, struct keystream_choice *ret);
/* Measure one backend: MB/s (10^6 bytes/s) of keystream_fill() into a 1 MiB buffer, sequential
 * offsets, best of `runs` runs of `bytes` bytes. 0 or -errno (-EOPNOTSUPP when unavailable). */
int keystream_backend_measure(enum keystream_backend b, enum keystream_cipher c, size_t bytes, unsigned runs,
                              double *mbps);

/* A cipher context for one key. keystream_new() copies the key; returns 0 or -errno
 * (-EINVAL for AUTO or a wrong key length, -ENOMEM). The context is not thread-safe: one per
 * thread. keystream_free() cleanses the key copy and accepts NULL. */
int keystream_new(struct keystream **ret, enum keystream_cipher c, const uint8_t *key, size_t key_len);
/* The same with a given backend, kept over rekeys (AUTO: the process's choice per cipher, as
 * keystream_new()). -EOPNOTSUPP when the backend cannot make c here. */
int keystream_new_backend(struct keystream **ret, enum keystream_cipher c, enum keystream_backend b,
                          const uint8_t *key, size_t key_len);
/* The backend making ks's stream now. */
enum keystream_backend keystream_backend_of(const struct keystream *ks);
void keystream_free(struct keystream *ks);
/* Re-key an existing context (same or other cipher) without reallocating. 0 or -errno. */
int keystream_rekey(struct keystream *ks, enum keystream_cipher c, const uint8_t *key, size_t key_len);

/* Write the keystream bytes for device offsets [offset, offset+len) into buf. Any offset and
 * length, aligned or not, up to the cipher's counter space. Returns 0 or -errno (-EIO when
 * the library fails). */
int keystream_fill(struct keystream *ks, void *buf, uint64_t offset, size_t len);
