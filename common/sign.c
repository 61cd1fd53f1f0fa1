/* Signed wipe reports: the host key, signing, rendering and checking: see sign.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include "atomicfile.h"
#include "cleanup.h"
#include "sign.h"
#include "strutil.h"

/* The canonical text that is signed, and the text of a file: one flag set each, used everywhere. */
#define SIGN_CANONICAL_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
#define SIGN_RENDER_FLAGS (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)
#define SIGN_B64_PUB 44                 /* base64 characters of 32 bytes */
#define SIGN_B64_SIG 88                 /* base64 characters of 64 bytes */

/* Read what fd holds, at most max bytes. 0 with *ret owning len bytes plus a '\0'; -EFBIG when
 * there is more; -ENOMEM or -errno of read. */
static int sign_read_fd(int fd, size_t max, char **ret, size_t *len) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, n = 0;

        for (;;) {
                ssize_t k;

                if (n == size) {
                        /* Room for one byte more than allowed: a file that fills it is too large. */
                        size_t want = size ? size * 2 : 4096;
                        char *p;

                        if (want > max + 1)
                                want = max + 1;
                        if (want <= n)
                                return -EFBIG;
                        p = realloc(buf, want + 1);
                        if (!p)
                                return -ENOMEM;
                        buf = p;
                        size = want;
                }
                k = read(fd, buf + n, size - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                n += (size_t) k;
        }
        if (n > max)
                return -EFBIG;
        buf[n] = '\0';
        *len = n;
        *ret = TAKE_PTR(buf);
        return 0;
}

int report_read_fd(int fd, char **ret, size_t *len) {
        return sign_read_fd(fd, REPORT_FILE_MAX, ret, len);
}

/* Read the regular file dir/name (never through a symlink). 0 with *ret owning the text; -ENOENT
 * when there is no such file; -EBADMSG when it is not a regular file; -EFBIG; else -errno. The
 * buffer may hold a private key: the caller cleanses it. */
static int sign_read_key_file(int dfd, const char *name, char **ret, size_t *len) {
        _cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
        struct stat st;

        if (fd < 0)
                return errno == ELOOP ? -EBADMSG : -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADMSG;
        return sign_read_fd(fd, SIGN_FILE_MAX, ret, len);
}

/* OpenSSL's PEM readers would ask for a passphrase on the terminal; a host key has none. */
static int sign_no_passphrase(char *buf, int size, int rwflag, void *u) {
        (void) buf;
        (void) size;
        (void) rwflag;
        (void) u;
        return -1;
}

/* The raw public key of an Ed25519 key. 0 or -EINVAL. */
static int sign_raw_pub(EVP_PKEY *key, uint8_t pub[SIGN_PUB_SIZE]) {
        size_t n = SIGN_PUB_SIZE;

        if (!key || !EVP_PKEY_is_a(key, "ED25519") || EVP_PKEY_get_raw_public_key(key, pub, &n) != 1 ||
            n != SIGN_PUB_SIZE) {
                ERR_clear_error();
                return -EINVAL;
        }
        return 0;
}

/* Parse a PEM Ed25519 private key from len bytes of text. The key or NULL. */
static EVP_PKEY *sign_parse_private(const char *text, size_t len) {
        BIO *bio = BIO_new_mem_buf(text, (int) len);
        EVP_PKEY *key = NULL;

        if (bio)
                key = PEM_read_bio_PrivateKey(bio, NULL, sign_no_passphrase, NULL);
        BIO_free(bio);
        if (key && !EVP_PKEY_is_a(key, "ED25519")) {
                EVP_PKEY_free(key);
                key = NULL;
        }
        ERR_clear_error();
        return key;
}

/* Parse a PEM Ed25519 public key from len bytes of text into pub. 0 or -EBADMSG. */
static int sign_parse_public(const char *text, size_t len, uint8_t pub[SIGN_PUB_SIZE]) {
        BIO *bio = BIO_new_mem_buf(text, (int) len);
        EVP_PKEY *key = NULL;
        int r;

        if (bio)
                key = PEM_read_bio_PUBKEY(bio, NULL, sign_no_passphrase, NULL);
        BIO_free(bio);
        r = key && sign_raw_pub(key, pub) == 0 ? 0 : -EBADMSG;
        EVP_PKEY_free(key);
        ERR_clear_error();
        return r;
}

/* Write key as PEM to dir/name with mode: its private key (PKCS#8) when private, else its public
 * key; the private key never replaces a file. 0, -EEXIST, -ENOMEM or -errno. */
static int sign_write_key(int dfd, const char *name, EVP_PKEY *key, bool private) {
        /* A secure-memory BIO is cleansed when freed: the private key does not linger. */
        BIO *bio = BIO_new(private ? BIO_s_secmem() : BIO_s_mem());
        char *data = NULL;
        long len;
        int r = -ENOMEM;

        if (!bio)
                goto out;
        if (private ? PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL) != 1
                    : PEM_write_bio_PUBKEY(bio, key) != 1)
                goto out;
        len = BIO_get_mem_data(bio, &data);
        if (len <= 0 || !data)
                goto out;
        r = atomic_write_at(dfd, name, data, (size_t) len, private ? 0600 : 0644, private);
out:
        BIO_free(bio);
        ERR_clear_error();
        return r;
}

/* Make dir/SIGN_PUB_FILE hold the public key of key, unless it already does. 0 or -errno. */
static int sign_sync_pub(int dfd, EVP_PKEY *key) {
        uint8_t want[SIGN_PUB_SIZE], have[SIGN_PUB_SIZE];
        char *text = NULL;
        size_t len = 0;
        int r;

        r = sign_raw_pub(key, want);
        if (r < 0)
                return r;
        r = sign_read_key_file(dfd, SIGN_PUB_FILE, &text, &len);
        if (r == 0)
                r = sign_parse_public(text, len, have);
        free(text);
        /* A copy of public data, derived from the private key: a stale or broken one is replaced. */
        if (r == 0 && memcmp(want, have, SIGN_PUB_SIZE) == 0)
                return 0;
        if (r < 0 && r != -ENOENT && r != -EBADMSG && r != -EFBIG)
                return r;
        return sign_write_key(dfd, SIGN_PUB_FILE, key, false);
}

/* Load dir/SIGN_KEY_FILE into *ret: 0, -ENOENT, -EBADMSG, -EFBIG or -errno. */
static int sign_load(int dfd, EVP_PKEY **ret) {
        char *text = NULL;
        size_t len = 0;
        int r;

        r = sign_read_key_file(dfd, SIGN_KEY_FILE, &text, &len);
        if (r < 0)
                return r;
        *ret = sign_parse_private(text, len);
        OPENSSL_cleanse(text, len);
        free(text);
        return *ret ? 0 : -EBADMSG;
}

int sign_key_load_or_create(const char *dir, EVP_PKEY **ret, bool *created) {
        EVP_PKEY *key = NULL;
        bool made = false;
        int dfd, r;

        *ret = NULL;
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        r = sign_load(dfd, &key);
        if (r == -ENOENT) {
                key = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
                ERR_clear_error();
                if (!key) {
                        r = -ENOMEM;
                        goto out;
                }
                r = sign_write_key(dfd, SIGN_KEY_FILE, key, true);
                made = r == 0;
                if (r == -EEXIST) {
                        /* Another process made one meanwhile: that one is the host key. */
                        EVP_PKEY_free(key);
                        key = NULL;
                        r = sign_load(dfd, &key);
                }
        }
        if (r == 0)
                r = sign_sync_pub(dfd, key);
out:
        close(dfd);
        if (r < 0) {
                EVP_PKEY_free(key);
                return r;
        }
        if (created)
                *created = made;
        *ret = key;
        return 0;
}

int sign_pub_load(const char *path, uint8_t pub[SIGN_PUB_SIZE]) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r;

        if (fd < 0)
                return -errno;
        r = sign_read_fd(fd, SIGN_FILE_MAX, &text, &len);
        if (r < 0)
                return r;
        return sign_parse_public(text, len, pub);
}

int sign_pub_key_id(const uint8_t pub[SIGN_PUB_SIZE], char out[SIGN_KEY_ID_SIZE]) {
        uint8_t md[EVP_MAX_MD_SIZE];
        unsigned n = 0;

        if (EVP_Digest(pub, SIGN_PUB_SIZE, md, &n, EVP_sha256(), NULL) != 1 || n < 16) {
                ERR_clear_error();
                return -EIO;
        }
        for (unsigned i = 0; i < 16; i++)
                snprintf(out + 2 * i, 3, "%02x", md[i]);
        return 0;
}

int sign_key_id(EVP_PKEY *key, char out[SIGN_KEY_ID_SIZE]) {
        uint8_t pub[SIGN_PUB_SIZE];
        int r = sign_raw_pub(key, pub);

        return r < 0 ? r : sign_pub_key_id(pub, out);
}

int report_sign(struct json_object *report, EVP_PKEY *key) {
        _cleanup_json_ struct json_object *sig = NULL;
        uint8_t pub[SIGN_PUB_SIZE], value[SIGN_SIG_SIZE];
        char id[SIGN_KEY_ID_SIZE], pub64[SIGN_B64_PUB + 1], value64[SIGN_B64_SIG + 1];
        size_t value_len = sizeof(value), tbs_len = 0;
        EVP_MD_CTX *ctx = NULL;
        const char *tbs;
        int r;

        if (!json_object_is_type(report, json_type_object))
                return -EINVAL;
        r = sign_raw_pub(key, pub);
        if (r < 0)
                return r;
        r = sign_pub_key_id(pub, id);
        if (r < 0)
                return r;
        json_object_object_del(report, "signature");
        tbs = json_object_to_json_string_length(report, SIGN_CANONICAL_FLAGS, &tbs_len);
        if (!tbs)
                return -ENOMEM;
        ctx = EVP_MD_CTX_new();
        /* Ed25519 hashes the message itself: no digest, one call. */
        r = ctx && EVP_DigestSignInit(ctx, NULL, NULL, NULL, key) == 1 &&
                            EVP_DigestSign(ctx, value, &value_len, (const unsigned char *) tbs, tbs_len) == 1 &&
                            value_len == SIGN_SIG_SIZE
                    ? 0
                    : -ENOMEM;
        EVP_MD_CTX_free(ctx);
        ERR_clear_error();
        if (r < 0)
                return r;
        EVP_EncodeBlock((unsigned char *) pub64, pub, SIGN_PUB_SIZE);
        EVP_EncodeBlock((unsigned char *) value64, value, SIGN_SIG_SIZE);

        sig = json_object_new_object();
        if (!sig || json_object_object_add(sig, "algorithm", json_object_new_string(SIGN_ALGORITHM)) < 0 ||
            json_object_object_add(sig, "key_id", json_object_new_string(id)) < 0 ||
            json_object_object_add(sig, "public_key", json_object_new_string(pub64)) < 0 ||
            json_object_object_add(sig, "value", json_object_new_string(value64)) < 0)
                return -ENOMEM;
        /* A member added after the delete above comes last. */
        if (json_object_object_add(report, "signature", sig) < 0)
                return -ENOMEM;
        TAKE_PTR(sig);
        return 0;
}

/* A report's text with flags and a final newline. */
static char *report_render_flags(struct json_object *report, int flags, size_t *len) {
        size_t n = 0;
        const char *s = json_object_to_json_string_length(report, flags, &n);
        char *text;

        if (!s)
                return NULL;
        text = malloc(n + 2);
        if (!text)
                return NULL;
        memcpy(text, s, n);
        text[n] = '\n';
        text[n + 1] = '\0';
        if (len)
                *len = n + 1;
        return text;
}

char *report_render(struct json_object *report, size_t *len) {
        return report_render_flags(report, SIGN_RENDER_FLAGS, len);
}

char *report_render_line(struct json_object *report, size_t *len) {
        return report_render_flags(report, SIGN_CANONICAL_FLAGS, len);
}

int report_id(const void *text, size_t len, char out[REPORT_ID_SIZE]) {
        uint8_t md[32];
        unsigned n = 0;

        if (EVP_Digest(text, len, md, &n, EVP_sha256(), NULL) != 1 || n != sizeof(md))
                return -ENOMEM;
        hex_encode(out, md, sizeof(md));
        return 0;
}

static int check_error(char *err, size_t len, int r, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int check_error(char *err, size_t len, int r, const char *fmt, ...) {
        va_list ap;

        if (err && len > 0) {
                va_start(ap, fmt);
                vsnprintf(err, len, fmt, ap);
                va_end(ap);
        }
        return r;
}

/* Decode the base64 string s of exactly size bytes into out; only the one canonical encoding of
 * those bytes is accepted. 0 or -EBADMSG. */
static int check_base64(const char *s, uint8_t *out, size_t size) {
        size_t len = strlen(s), want = 4 * ((size + 2) / 3);
        unsigned char buf[SIGN_SIG_SIZE + 3], again[SIGN_B64_SIG + 1];

        if (len != want || size > SIGN_SIG_SIZE ||
            strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") != len)
                return -EBADMSG;
        if (EVP_DecodeBlock(buf, (const unsigned char *) s, (int) len) < (int) size)
                return -EBADMSG;
        EVP_EncodeBlock(again, buf, (int) size);
        if (strcmp((const char *) again, s) != 0)
                return -EBADMSG;
        memcpy(out, buf, size);
        return 0;
}

/* A malloc'd copy of the string member key of o (NULL when o is NULL or it is absent or not a
 * string): 0 or -ENOMEM. */
static int check_copy(struct json_object *o, const char *key, char **ret) {
        struct json_object *v = NULL;

        *ret = NULL;
        if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return 0;
        *ret = strdup(json_object_get_string(v));
        return *ret ? 0 : -ENOMEM;
}

/* Fill res from a report whose signature verified. 0 or -ENOMEM. */
static int check_fill(struct json_object *report, struct report_check *res) {
        struct json_object *v = NULL, *identity = NULL, *host = NULL;

        if (json_object_object_get_ex(report, "job", &v) && json_object_is_type(v, json_type_int))
                res->job = json_object_get_int64(v);
        json_object_object_get_ex(report, "identity", &identity);
        json_object_object_get_ex(report, "host", &host);
        if (identity && !json_object_is_type(identity, json_type_object))
                identity = NULL;
        if (host && !json_object_is_type(host, json_type_object))
                host = NULL;
        if (check_copy(report, "state", &res->state) < 0 || check_copy(report, "node", &res->node) < 0 ||
            check_copy(identity, "serial", &res->serial) < 0 || check_copy(host, "hostname", &res->hostname) < 0)
                return -ENOMEM;
        return 0;
}

/* The "signature" member sig, checked to be {"algorithm":"ed25519","key_id","public_key","value"}
 * and nothing else: the public key and signature bytes, and the key ID as written. 0 or -EBADMSG
 * with err set. */
static int check_signature_member(struct json_object *sig, uint8_t pub[SIGN_PUB_SIZE], uint8_t value[SIGN_SIG_SIZE],
                                  const char **key_id, char *err, size_t err_len) {
        struct json_object *v = NULL;
        const char *s;

        if (!json_object_is_type(sig, json_type_object))
                return check_error(err, err_len, -EBADMSG, "\"signature\" is not an object");
        if (!json_object_object_get_ex(sig, "algorithm", &v) || !json_object_is_type(v, json_type_string))
                return check_error(err, err_len, -EBADMSG, "\"signature\" has no \"algorithm\"");
        s = json_object_get_string(v);
        if (strcmp(s, SIGN_ALGORITHM) != 0)
                return check_error(err, err_len, -EBADMSG, "unknown signature algorithm \"%.32s\"", s);
        if (!json_object_object_get_ex(sig, "public_key", &v) || !json_object_is_type(v, json_type_string) ||
            check_base64(json_object_get_string(v), pub, SIGN_PUB_SIZE) < 0)
                return check_error(err, err_len, -EBADMSG, "\"signature\" has no valid \"public_key\"");
        if (!json_object_object_get_ex(sig, "value", &v) || !json_object_is_type(v, json_type_string) ||
            check_base64(json_object_get_string(v), value, SIGN_SIG_SIZE) < 0)
                return check_error(err, err_len, -EBADMSG, "\"signature\" has no valid \"value\"");
        if (!json_object_object_get_ex(sig, "key_id", &v) || !json_object_is_type(v, json_type_string))
                return check_error(err, err_len, -EBADMSG, "\"signature\" has no \"key_id\"");
        *key_id = json_object_get_string(v);
        /* Nothing in it goes unchecked: it is the one part of the file the signature does not cover. */
        if (json_object_object_length(sig) != 4)
                return check_error(err, err_len, -EBADMSG, "\"signature\" has unknown members");
        return 0;
}

/* Whether value is a valid Ed25519 signature by pub of len bytes of msg. 0, -EKEYREJECTED, or
 * -ENOMEM. */
static int check_verify(const uint8_t pub[SIGN_PUB_SIZE], const uint8_t value[SIGN_SIG_SIZE], const char *msg,
                        size_t len) {
        EVP_PKEY *key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub, SIGN_PUB_SIZE);
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        int r = -ENOMEM;

        if (!ctx)
                goto out;
        /* A public key that is not a point of the curve fails here or in the verification. */
        if (!key || EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, key) != 1) {
                r = -EKEYREJECTED;
                goto out;
        }
        r = EVP_DigestVerify(ctx, value, SIGN_SIG_SIZE, (const unsigned char *) msg, len) == 1 ? 0 : -EKEYREJECTED;
out:
        EVP_MD_CTX_free(ctx);
        EVP_PKEY_free(key);
        ERR_clear_error();
        return r;
}

void report_check_done(struct report_check *res) {
        if (!res)
                return;
        free(res->state);
        free(res->node);
        free(res->serial);
        free(res->hostname);
        *res = (struct report_check) { .job = -1 };
}

/* report_check() on the parsed object report (modified: its signature is taken out and put back
 * last). */
static int check_object(struct json_object *report, const char *text, size_t len, const uint8_t *want_pub,
                        struct report_check *res, char *err, size_t err_len) {
        _cleanup_json_ struct json_object *sig = NULL;
        _cleanup_free_ char *rendered = NULL;
        uint8_t pub[SIGN_PUB_SIZE], value[SIGN_SIG_SIZE];
        char id[SIGN_KEY_ID_SIZE];
        const char *key_id = NULL, *tbs;
        size_t tbs_len = 0, rendered_len = 0;
        int r;

        if (!json_object_object_get_ex(report, "signature", &sig))
                return check_error(err, err_len, -EBADMSG, "not signed (no \"signature\")");
        json_object_get(sig);
        r = check_signature_member(sig, pub, value, &key_id, err, err_len);
        if (r < 0)
                return r;
        r = sign_pub_key_id(pub, id);
        if (r < 0)
                return check_error(err, err_len, r, "cannot compute the key ID");
        if (strcmp(key_id, id) != 0)
                return check_error(err, err_len, -EKEYREJECTED, "\"key_id\" is not that of \"public_key\" (%s)", id);

        json_object_object_del(report, "signature");
        tbs = json_object_to_json_string_length(report, SIGN_CANONICAL_FLAGS, &tbs_len);
        if (!tbs)
                return check_error(err, err_len, -ENOMEM, "out of memory");
        r = check_verify(pub, value, tbs, tbs_len);
        if (r == -EKEYREJECTED)
                return check_error(err, err_len, r, "bad signature: the report was changed after it was signed");
        if (r < 0)
                return check_error(err, err_len, r, "out of memory");

        /* Signed content may still be written differently (spaces, escapes, number forms, member
         * order of "signature"): only the daemon's exact bytes pass. */
        if (json_object_object_add(report, "signature", json_object_get(sig)) < 0) {
                json_object_put(sig);
                return check_error(err, err_len, -ENOMEM, "out of memory");
        }
        rendered = report_render(report, &rendered_len);
        if (!rendered)
                return check_error(err, err_len, -ENOMEM, "out of memory");
        /* Or the one line of an export, as exactly. */
        if (rendered_len != len || memcmp(rendered, text, len) != 0) {
                free(rendered);
                rendered = report_render_line(report, &rendered_len);
                if (!rendered)
                        return check_error(err, err_len, -ENOMEM, "out of memory");
        }
        if (rendered_len != len || memcmp(rendered, text, len) != 0)
                return check_error(err, err_len, -EKEYREJECTED,
                                   "the signature is valid but the file is not in the form the daemon wrote "
                                   "(bytes changed, added or removed)");

        memcpy(res->key_id, id, sizeof(id));
        memcpy(res->public_key, pub, SIGN_PUB_SIZE);
        r = check_fill(report, res);
        if (r < 0)
                return check_error(err, err_len, r, "out of memory");
        if (want_pub && memcmp(want_pub, pub, SIGN_PUB_SIZE) != 0)
                return check_error(err, err_len, -ENOKEY, "signed by key %s, not by the key given", id);
        return 0;
}

int report_check(const char *text, size_t len, const uint8_t *want_pub, struct report_check *res, char *err,
                 size_t err_len) {
        _cleanup_json_ struct json_object *report = NULL;
        struct json_tokener *tok;
        enum json_tokener_error e;
        size_t end;
        int r;

        *res = (struct report_check) { .job = -1 };
        if (err && err_len > 0)
                err[0] = '\0';
        if (len == 0)
                return check_error(err, err_len, -EBADMSG, "empty");
        if (len > INT32_MAX)
                return check_error(err, err_len, -EBADMSG, "too large");
        tok = json_tokener_new();
        if (!tok)
                return check_error(err, err_len, -ENOMEM, "out of memory");
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        report = json_tokener_parse_ex(tok, text, (int) len);
        e = json_tokener_get_error(tok);
        end = json_tokener_get_parse_end(tok);
        json_tokener_free(tok);
        if (!report || e != json_tokener_success)
                return check_error(err, err_len, -EBADMSG, "not JSON: %s at byte %zu",
                                   e == json_tokener_continue ? "unexpected end" : json_tokener_error_desc(e), end);
        /* The strict tokener takes trailing white space; anything else after the object is not
         * part of a report. */
        if (end != len)
                return check_error(err, err_len, -EBADMSG, "data after the report at byte %zu", end);
        if (!json_object_is_type(report, json_type_object))
                return check_error(err, err_len, -EBADMSG, "not a JSON object");
        r = check_object(report, text, len, want_pub, res, err, err_len);
        if (r < 0 && r != -ENOKEY)
                report_check_done(res);
        return r;
}
