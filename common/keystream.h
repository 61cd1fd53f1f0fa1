/* Seekable keystream: the byte at device offset o is a pure function of (cipher, key, o).
 * The contract is doc/DESIGN.md "Keystream contract" and README "Keystream contract":
 *   AES-128-CTR: IV = 128-bit big-endian o/16.
 *   ChaCha20:    IV = 64-bit little-endian o/64, then 8 zero bytes (OpenSSL's counter carry).
 * Both equal `openssl enc -<cipher> -K <key> -iv 0...0 -in /dev/zero` at offset o. */
#pragma once

#include <stddef.h>
#include <stdint.h>

enum keystream_cipher {
        KEYSTREAM_AUTO = 0,             /* resolved by keystream_cipher_resolve() */
        KEYSTREAM_AES_128_CTR,
        KEYSTREAM_CHACHA20,
        _KEYSTREAM_CIPHER_MAX,
};

#define KEYSTREAM_KEY_MAX 32            /* largest key of any cipher, bytes */

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

/* A cipher context for one key. keystream_new() copies the key; returns 0 or -errno
 * (-EINVAL for AUTO or a wrong key length, -ENOMEM). The context is not thread-safe: one per
 * thread. keystream_free() cleanses the key copy and accepts NULL. */
int keystream_new(struct keystream **ret, enum keystream_cipher c, const uint8_t *key, size_t key_len);
void keystream_free(struct keystream *ks);
/* Re-key an existing context (same or other cipher) without reallocating. 0 or -errno. */
int keystream_rekey(struct keystream *ks, enum keystream_cipher c, const uint8_t *key, size_t key_len);

/* Write the keystream bytes for device offsets [offset, offset+len) into buf. Any offset and
 * length, aligned or not, up to the cipher's counter space. Returns 0 or -errno (-EIO when
 * OpenSSL fails). */
int keystream_fill(struct keystream *ks, void *buf, uint64_t offset, size_t len);
