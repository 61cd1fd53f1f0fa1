/* Signed wipe reports (wipectl(1) "report --check"): the daemon's Ed25519 host key, the signature
 * it adds to a REPORT object, the one text form a report file has, and the check of such a file.
 *
 * A report is signed over its canonical text: the object without "signature", as
 * json_object_to_json_string_ext(PLAIN | NOSLASHESCAPE) writes it. The signature is then added as
 * the object's last member, and the file is report_render() of the whole: so a file checks only
 * when it is byte for byte what the daemon wrote. json-c keeps the text of every number it parses
 * (json_object_new_double_s()), so parsing a file and rendering it again gives the same bytes.
 * Pure library code: never logs, never exits. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>
#include <openssl/evp.h>

#define SIGN_KEY_FILE "host-key.pem"   /* PKCS#8 PEM private key, 0600, in the state directory */
#define SIGN_PUB_FILE "host-key.pub"   /* PEM SubjectPublicKeyInfo, 0644, next to it */
#define SIGN_ALGORITHM "ed25519"
#define SIGN_PUB_SIZE 32               /* bytes of a raw Ed25519 public key */
#define SIGN_SIG_SIZE 64               /* bytes of an Ed25519 signature */
#define SIGN_KEY_ID_SIZE 33            /* 32 hex digits and '\0' */
#define SIGN_FILE_MAX (64 * 1024)      /* longest key file read, bytes */
#define REPORT_FILE_MAX (16 * 1024 * 1024) /* longest report file read, bytes */

/* Load the host key from dir/SIGN_KEY_FILE, or create it when that file does not exist: a new
 * Ed25519 key written atomically (temporary file O_EXCL|O_NOFOLLOW, fsync, rename that never
 * replaces a file, fsync of dir), mode 0600. dir/SIGN_PUB_FILE is (re)written from the private key,
 * mode 0644, when it is missing or does not hold the same public key. *created (may be NULL) says
 * whether the key is new. Returns 0 with *ret owning the key (EVP_PKEY_free()); -EBADMSG when the
 * key file exists but is not a regular file holding an unencrypted Ed25519 PEM private key (it is
 * left as it is); -EFBIG when it is larger than SIGN_FILE_MAX; else -errno. */
int sign_key_load_or_create(const char *dir, EVP_PKEY **ret, bool *created);
/* Read a PEM public key (SubjectPublicKeyInfo, as in SIGN_PUB_FILE) from path into pub. 0,
 * -EBADMSG when the file is not an Ed25519 PEM public key, -EFBIG, or -errno of open/read. */
int sign_pub_load(const char *path, uint8_t pub[SIGN_PUB_SIZE]);
/* The key ID of an Ed25519 key: the first 16 bytes of the SHA-256 of its raw 32-byte public key,
 * in lower-case hex. 0, or -EINVAL when key is not Ed25519. */
int sign_key_id(EVP_PKEY *key, char out[SIGN_KEY_ID_SIZE]);
/* The same from a raw public key. 0 or -EIO. */
int sign_pub_key_id(const uint8_t pub[SIGN_PUB_SIZE], char out[SIGN_KEY_ID_SIZE]);

/* Sign report (a REPORT object) with key: drop any "signature" member, sign the canonical text,
 * and add {"algorithm":"ed25519","key_id":..,"public_key":<base64>,"value":<base64>} as the last
 * member "signature". 0, -EINVAL (report is not an object, key not Ed25519) or -ENOMEM. */
int report_sign(struct json_object *report, EVP_PKEY *key);
/* The text of a report file (and of "wipectl --json report"): report pretty-printed
 * (PRETTY | SPACED | NOSLASHESCAPE) and a final "\n". A malloc'd string of *len bytes (len may be
 * NULL) plus '\0', or NULL on ENOMEM. */
char *report_render(struct json_object *report, size_t *len);
/* The one-line form of a report (a line of "wipectl report --all", JSON lines): the whole object,
 * "signature" included, as its canonical text is written, and a final "\n". Also checks. A
 * malloc'd string as report_render()'s. */
char *report_render_line(struct json_object *report, size_t *len);

/* A report's ID (wiped(8) DELIVERY, wipectl(1) EXPORT): the SHA-256 of the report file's len bytes
 * as 64 lower-case hex digits, which the export, the delivery's Idempotency-Key, the certificate
 * and its QR code all give, and sha256sum recomputes. 0 or -ENOMEM. */
#define REPORT_ID_SIZE 65               /* 64 hex digits and '\0' */
int report_id(const void *text, size_t len, char out[REPORT_ID_SIZE]);
/* Read a report file from fd (a file, a pipe) to its end. 0 with *ret owning len bytes plus a
 * '\0' (free()); -EFBIG when it holds more than REPORT_FILE_MAX bytes; -ENOMEM or -errno of read. */
int report_read_fd(int fd, char **ret, size_t *len);

/* What report_check() read from a report whose signature is valid. */
struct report_check {
        char key_id[SIGN_KEY_ID_SIZE];  /* of the key that signed; "" when not checked */
        uint8_t public_key[SIGN_PUB_SIZE];
        int64_t job;                    /* "job"; -1 when absent */
        char *state;                    /* "state", "node", "identity"."serial", "host"."hostname": */
        char *node;                     /* malloc'd copies, NULL when absent */
        char *serial;
        char *hostname;
};

/* Check len bytes of text as a signed report file: one JSON object and its final newline, whose
 * "signature" verifies over the canonical text of the object without it, and which is exactly
 * report_render() (or report_render_line()) of the object it parses to; signed by want_pub when that is not NULL.
 * Returns 0 when valid; -EBADMSG when text is not a signed report (not JSON, not an object, no or
 * a malformed "signature", another algorithm); -EKEYREJECTED when the signature does not verify
 * or the bytes are not those the daemon wrote; -ENOKEY when it is valid but signed by another key
 * than want_pub; -ENOMEM. err (err_len bytes) gets a one-line reason on failure. res is filled
 * when the signature verified (0 and -ENOKEY), zeroed otherwise; report_check_done() it always. */
int report_check(const char *text, size_t len, const uint8_t *want_pub, struct report_check *res, char *err,
                 size_t err_len);
void report_check_done(struct report_check *res);
