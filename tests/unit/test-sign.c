/* Signed reports: the host key on disk, signing, the file's one form, and that any change of a
 * byte, a truncation, an addition or another key is caught. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "sign.h"

/* A directory of the test's own, removed with its files at the end. */
static char *make_dir(void) {
        char tmpl[] = "/tmp/test-sign.XXXXXX";
        char *dir = mkdtemp(tmpl);

        assert_non_null(dir);
        return strdup(dir);
}

static void remove_dir(char *dir) {
        char path[512];

        snprintf(path, sizeof(path), "%s/%s", dir, SIGN_KEY_FILE);
        unlink(path);
        snprintf(path, sizeof(path), "%s/%s", dir, SIGN_PUB_FILE);
        unlink(path);
        assert_int_equal(rmdir(dir), 0);
        free(dir);
}

static void write_file(const char *dir, const char *name, const char *text) {
        char path[512];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
}

/* The whole of dir/name, malloc'd. */
static char *read_file(const char *dir, const char *name) {
        char path[512], *text = NULL;
        size_t len = 0;
        int fd;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        assert_int_equal(report_read_fd(fd, &text, &len), 0);
        assert_int_equal(strlen(text), len);
        close(fd);
        return text;
}

static mode_t file_mode(const char *dir, const char *name) {
        char path[512];
        struct stat st;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        assert_int_equal(lstat(path, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        return st.st_mode & 07777;
}

static void test_key_files(void **state) {
        char *dir = make_dir(), id[SIGN_KEY_ID_SIZE], id2[SIGN_KEY_ID_SIZE], path[512];
        uint8_t pub[SIGN_PUB_SIZE];
        EVP_PKEY *key = NULL, *again = NULL;
        bool created = false;
        mode_t mask;
        char *text;

        (void) state;
        /* Modes do not depend on the umask. */
        mask = umask(077);
        assert_int_equal(sign_key_load_or_create(dir, &key, &created), 0);
        umask(mask);
        assert_non_null(key);
        assert_true(created);
        assert_int_equal(file_mode(dir, SIGN_KEY_FILE), 0600);
        assert_int_equal(file_mode(dir, SIGN_PUB_FILE), 0644);
        text = read_file(dir, SIGN_KEY_FILE);
        assert_non_null(strstr(text, "-----BEGIN PRIVATE KEY-----\n"));
        free(text);
        text = read_file(dir, SIGN_PUB_FILE);
        assert_non_null(strstr(text, "-----BEGIN PUBLIC KEY-----\n"));
        free(text);
        assert_int_equal(sign_key_id(key, id), 0);
        assert_int_equal(strlen(id), 32);
        assert_int_equal(strspn(id, "0123456789abcdef"), 32);

        /* Loaded again: the same key, nothing created. */
        assert_int_equal(sign_key_load_or_create(dir, &again, &created), 0);
        assert_false(created);
        assert_int_equal(sign_key_id(again, id2), 0);
        assert_string_equal(id, id2);
        EVP_PKEY_free(again);

        /* The public key file holds the same key. */
        snprintf(path, sizeof(path), "%s/%s", dir, SIGN_PUB_FILE);
        assert_int_equal(sign_pub_load(path, pub), 0);
        assert_int_equal(sign_pub_key_id(pub, id2), 0);
        assert_string_equal(id, id2);

        /* A missing or broken public key file is written again from the private key. */
        assert_int_equal(unlink(path), 0);
        assert_int_equal(sign_key_load_or_create(dir, &again, &created), 0);
        assert_false(created);
        EVP_PKEY_free(again);
        assert_int_equal(file_mode(dir, SIGN_PUB_FILE), 0644);
        write_file(dir, SIGN_PUB_FILE, "garbage\n");
        assert_int_equal(sign_pub_load(path, pub), -EBADMSG);
        assert_int_equal(sign_key_load_or_create(dir, &again, &created), 0);
        EVP_PKEY_free(again);
        assert_int_equal(sign_pub_load(path, pub), 0);
        assert_int_equal(sign_pub_key_id(pub, id2), 0);
        assert_string_equal(id, id2);

        /* A private key file is not a public key. */
        snprintf(path, sizeof(path), "%s/%s", dir, SIGN_KEY_FILE);
        assert_int_equal(sign_pub_load(path, pub), -EBADMSG);
        snprintf(path, sizeof(path), "%s/nothing", dir);
        assert_int_equal(sign_pub_load(path, pub), -ENOENT);

        EVP_PKEY_free(key);
        remove_dir(dir);
        assert_int_equal(sign_key_load_or_create("/nonexistent-test-sign", &key, NULL), -ENOENT);
        assert_null(key);
}

/* A key file that is there but is no key: an error, and the file stays as it was. */
static void test_key_invalid(void **state) {
        static const char *const bad[] = {
                "garbage\n",
                "",
                "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        };
        char *dir = make_dir(), path[512], target[600];
        EVP_PKEY *key = NULL;
        bool created = true;

        (void) state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                char *text;

                write_file(dir, SIGN_KEY_FILE, bad[i]);
                assert_int_equal(sign_key_load_or_create(dir, &key, &created), -EBADMSG);
                assert_null(key);
                text = read_file(dir, SIGN_KEY_FILE);
                assert_string_equal(text, bad[i]);
                free(text);
        }
        /* A symlink is not followed, even to a valid key. */
        snprintf(path, sizeof(path), "%s/%s", dir, SIGN_KEY_FILE);
        assert_int_equal(unlink(path), 0);
        snprintf(target, sizeof(target), "%s/real", dir);
        assert_int_equal(sign_key_load_or_create(dir, &key, NULL), 0);
        EVP_PKEY_free(key);
        key = NULL;
        assert_int_equal(rename(path, target), 0);
        assert_int_equal(symlink(target, path), 0);
        assert_int_equal(sign_key_load_or_create(dir, &key, NULL), -EBADMSG);
        assert_null(key);
        assert_int_equal(unlink(target), 0);
        remove_dir(dir);
}

/* A REPORT-like object with every kind of value the daemon writes. */
static struct json_object *make_report(void) {
        struct json_object *o = json_object_new_object(), *id = json_object_new_object();
        struct json_object *host = json_object_new_object(), *a = json_object_new_array();
        struct json_object *runs = json_object_new_array(), *run = json_object_new_object();

        json_object_object_add(o, "job", json_object_new_int64(12));
        json_object_object_add(o, "tool", json_object_new_string("wiped 0.1.0"));
        json_object_object_add(o, "device", json_object_new_string("/dev/disk/by-id/usb-Käse_\"x\"\\y"));
        json_object_object_add(o, "node", json_object_new_string("/dev/loop3"));
        json_object_object_add(o, "state", json_object_new_string("done"));
        json_object_object_add(o, "label", json_object_new_string("日本語 \t\n\x01 ok"));
        json_object_object_add(o, "seed", json_object_new_uint64(18446744073709551615ull));
        json_object_object_add(o, "negative", json_object_new_int64(-9223372036854775807ll - 1));
        json_object_object_add(o, "small", json_object_new_int(-3));
        json_object_object_add(o, "duration_s", json_object_new_double_s(12.5, "12.500"));
        json_object_object_add(o, "coverage_percent", json_object_new_double_s(10.001, "10.001"));
        json_object_object_add(o, "rate", json_object_new_double(0.1));
        json_object_object_add(o, "ended_at", NULL);
        json_object_object_add(o, "ok", json_object_new_boolean(1));
        json_object_array_add(a, json_object_new_int(1));
        json_object_array_add(a, json_object_new_string("two"));
        json_object_array_add(a, NULL);
        json_object_array_add(a, json_object_new_array());
        json_object_object_add(o, "list", a);
        json_object_object_add(o, "empty", json_object_new_object());
        json_object_object_add(run, "at", json_object_new_int64(1764502002));
        json_object_object_add(run, "percent", json_object_new_double_s(5, "5.0"));
        json_object_array_add(runs, run);
        json_object_object_add(o, "runs", runs);
        json_object_object_add(id, "size", json_object_new_int64(67108864));
        json_object_object_add(id, "serial", json_object_new_string("S6PNNS0T123456"));
        json_object_object_add(o, "identity", id);
        json_object_object_add(host, "hostname", json_object_new_string("wipe-station"));
        json_object_object_add(host, "machine_id", json_object_new_string("0123456789abcdef0123456789abcdef"));
        json_object_object_add(o, "host", host);
        return o;
}

/* Check len bytes of text against want_pub; the result code. */
static int check(const char *text, size_t len, const uint8_t *want_pub) {
        struct report_check res;
        char err[256];
        int r = report_check(text, len, want_pub, &res, err, sizeof(err));

        /* Every failure says why. */
        assert_true(r == 0 || err[0] != '\0');
        if (r != 0 && r != -ENOKEY)
                assert_string_equal(res.key_id, "");
        report_check_done(&res);
        return r;
}

/* A new key in a directory of its own (removed at once), with its raw public key. */
static EVP_PKEY *new_key(uint8_t pub[SIGN_PUB_SIZE]) {
        char *dir = make_dir(), path[512];
        EVP_PKEY *key = NULL;

        assert_int_equal(sign_key_load_or_create(dir, &key, NULL), 0);
        snprintf(path, sizeof(path), "%s/%s", dir, SIGN_PUB_FILE);
        assert_int_equal(sign_pub_load(path, pub), 0);
        remove_dir(dir);
        return key;
}

static void test_sign_check(void **state) {
        uint8_t pub[SIGN_PUB_SIZE], pub2[SIGN_PUB_SIZE];
        EVP_PKEY *key = new_key(pub), *key2 = new_key(pub2);
        struct json_object *report = make_report(), *sig = NULL, *v = NULL;
        char id[SIGN_KEY_ID_SIZE], err[256], *text, *text2;
        struct report_check res;
        size_t len = 0, len2 = 0;

        (void) state;
        assert_int_equal(sign_key_id(key, id), 0);
        assert_int_equal(report_sign(report, key), 0);
        text = report_render(report, &len);
        assert_non_null(text);
        assert_int_equal(strlen(text), len);
        assert_int_equal(text[len - 1], '\n');
        assert_int_not_equal(text[len - 2], '\n');
        /* Fixed decimals stay as written, '/' is not escaped. */
        assert_non_null(strstr(text, "\"duration_s\": 12.500,"));
        assert_non_null(strstr(text, "\"percent\": 5.0"));
        assert_non_null(strstr(text, "\"node\": \"/dev/loop3\""));
        assert_non_null(strstr(text, "18446744073709551615"));
        assert_non_null(strstr(text, "-9223372036854775808"));

        /* The signature is the last member, complete. */
        assert_true(json_object_object_get_ex(report, "signature", &sig));
        {
                struct json_object_iterator it = json_object_iter_begin(report), end = json_object_iter_end(report);
                const char *last = NULL;

                for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it))
                        last = json_object_iter_peek_name(&it);
                assert_string_equal(last, "signature");
        }
        assert_true(json_object_object_get_ex(sig, "algorithm", &v));
        assert_string_equal(json_object_get_string(v), "ed25519");
        assert_true(json_object_object_get_ex(sig, "key_id", &v));
        assert_string_equal(json_object_get_string(v), id);
        assert_true(json_object_object_get_ex(sig, "public_key", &v));
        assert_int_equal(strlen(json_object_get_string(v)), 44);
        assert_true(json_object_object_get_ex(sig, "value", &v));
        assert_int_equal(strlen(json_object_get_string(v)), 88);

        /* Valid, and what it says. */
        assert_int_equal(report_check(text, len, NULL, &res, err, sizeof(err)), 0);
        assert_string_equal(res.key_id, id);
        assert_memory_equal(res.public_key, pub, SIGN_PUB_SIZE);
        assert_int_equal(res.job, 12);
        assert_string_equal(res.state, "done");
        assert_string_equal(res.node, "/dev/loop3");
        assert_string_equal(res.serial, "S6PNNS0T123456");
        assert_string_equal(res.hostname, "wipe-station");
        report_check_done(&res);
        assert_int_equal(check(text, len, pub), 0);

        /* Signing again replaces the signature: still one, still valid. */
        assert_int_equal(report_sign(report, key), 0);
        text2 = report_render(report, &len2);
        assert_int_equal(len2, len);
        assert_string_equal(text2, text);
        free(text2);

        /* Another key: valid, but not the key asked for. */
        assert_int_equal(report_sign(report, key2), 0);
        text2 = report_render(report, &len2);
        assert_int_equal(check(text2, len2, NULL), 0);
        assert_int_equal(check(text2, len2, pub2), 0);
        assert_int_equal(report_check(text2, len2, pub, &res, err, sizeof(err)), -ENOKEY);
        assert_string_not_equal(res.key_id, id);
        assert_int_equal(res.job, 12);
        report_check_done(&res);
        free(text2);

        /* Not signed. */
        json_object_object_del(report, "signature");
        text2 = report_render(report, &len2);
        assert_int_equal(check(text2, len2, NULL), -EBADMSG);
        free(text2);

        free(text);
        json_object_put(report);
        EVP_PKEY_free(key);
        EVP_PKEY_free(key2);
}

/* The one-line form of an export checks as the file does; anything between the two, or a line
 * with a byte changed, does not. */
static void test_line_form(void **state) {
        uint8_t pub[SIGN_PUB_SIZE];
        EVP_PKEY *key = new_key(pub);
        struct json_object *report = make_report();
        char *line, *text;
        size_t len = 0, tlen = 0;

        (void) state;
        assert_int_equal(report_sign(report, key), 0);
        line = report_render_line(report, &len);
        text = report_render(report, &tlen);
        assert_non_null(line);
        assert_int_equal(strlen(line), len);
        assert_int_equal(line[len - 1], '\n');
        assert_null(memchr(line, '\n', len - 1));
        assert_int_equal(check(line, len, pub), 0);
        assert_int_equal(check(text, tlen, pub), 0);
        /* Without its newline, with two, with a space added after a colon: not the daemon's bytes. */
        assert_int_equal(check(line, len - 1, pub), -EKEYREJECTED);
        line[len - 1] = ' ';
        assert_int_equal(check(line, len, pub), -EKEYREJECTED);
        line[len - 1] = '\n';
        {
                char *spaced = NULL;
                const char *colon = strchr(line, ':');

                assert_non_null(colon);
                assert_true(asprintf(&spaced, "%.*s %s", (int) (colon - line + 1), line, colon + 1) > 0);
                assert_int_equal(check(spaced, len + 1, pub), -EKEYREJECTED);
                free(spaced);
        }
        /* A changed value: the signature fails. */
        {
                char *p = strstr(line, "\"done\"");

                assert_non_null(p);
                p[1] = 'D';
                assert_int_equal(check(line, len, pub), -EKEYREJECTED);
        }
        free(line);
        free(text);
        json_object_put(report);
        EVP_PKEY_free(key);
}

/* Every byte changed, one at a time, in two ways; cut short; added to. */
static void test_tamper(void **state) {
        uint8_t pub[SIGN_PUB_SIZE];
        EVP_PKEY *key = new_key(pub);
        struct json_object *report = make_report();
        size_t len = 0;
        char *text, *copy;

        (void) state;
        assert_int_equal(report_sign(report, key), 0);
        text = report_render(report, &len);
        assert_non_null(text);
        copy = malloc(len + 16);
        assert_non_null(copy);
        for (size_t i = 0; i < len; i++) {
                memcpy(copy, text, len);
                copy[i] ^= 0x01;
                if (check(copy, len, NULL) >= 0)
                        fail_msg("byte %zu changed from 0x%02x to 0x%02x: still valid", i, (unsigned char) text[i],
                                 (unsigned char) copy[i]);
                if (text[i] == ' ')
                        continue;
                copy[i] = ' ';
                if (check(copy, len, NULL) >= 0)
                        fail_msg("byte %zu changed from 0x%02x to ' ': still valid", i, (unsigned char) text[i]);
        }
        for (size_t n = 0; n < len; n++)
                assert_true(check(text, n, NULL) < 0);
        /* The last byte is the newline: without it, or with more, the file is not the daemon's. */
        assert_int_equal(check(text, len - 1, NULL), -EKEYREJECTED);
        for (const char *const *add = (const char *const[]) { "\n", " ", "x", "{}", "\n{}", NULL }; *add; add++) {
                memcpy(copy, text, len);
                memcpy(copy + len, *add, strlen(*add));
                assert_true(check(copy, len + strlen(*add), NULL) < 0);
        }
        /* A space inserted where JSON allows one. */
        memcpy(copy, " ", 1);
        memcpy(copy + 1, text, len);
        assert_int_equal(check(copy, len + 1, NULL), -EKEYREJECTED);
        /* A byte deleted anywhere. */
        for (size_t i = 0; i < len; i++) {
                memcpy(copy, text, i);
                memcpy(copy + i, text + i + 1, len - i - 1);
                assert_true(check(copy, len - 1, NULL) < 0);
        }
        assert_int_equal(check("{}\n", 3, NULL), -EBADMSG);
        assert_int_equal(check("[]\n", 3, NULL), -EBADMSG);
        assert_int_equal(check("not json\n", 9, NULL), -EBADMSG);
        assert_int_equal(check("", 0, NULL), -EBADMSG);
        free(copy);
        free(text);
        json_object_put(report);
        EVP_PKEY_free(key);
}

/* A "signature" member that is not the daemon's. */
static void test_signature_member(void **state) {
        uint8_t pub[SIGN_PUB_SIZE];
        EVP_PKEY *key = new_key(pub);
        struct json_object *report = make_report(), *sig = NULL;
        size_t len = 0;
        char *text;

        (void) state;
        assert_int_equal(report_sign(report, key), 0);
        assert_true(json_object_object_get_ex(report, "signature", &sig));

        json_object_object_add(sig, "algorithm", json_object_new_string("rsa"));
        text = report_render(report, &len);
        assert_int_equal(check(text, len, NULL), -EBADMSG);
        free(text);
        json_object_object_add(sig, "algorithm", json_object_new_string("ed25519"));

        json_object_object_add(sig, "comment", json_object_new_string("mine"));
        text = report_render(report, &len);
        assert_int_equal(check(text, len, NULL), -EBADMSG);
        free(text);
        json_object_object_del(sig, "comment");

        json_object_object_add(sig, "key_id", json_object_new_string("00000000000000000000000000000000"));
        text = report_render(report, &len);
        assert_int_equal(check(text, len, NULL), -EKEYREJECTED);
        free(text);

        json_object_object_add(report, "signature", json_object_new_string("x"));
        text = report_render(report, &len);
        assert_int_equal(check(text, len, NULL), -EBADMSG);
        free(text);
        json_object_object_add(report, "signature", NULL);
        text = report_render(report, &len);
        assert_int_equal(check(text, len, NULL), -EBADMSG);
        free(text);

        /* Signed, then a member added after the signature. */
        assert_int_equal(report_sign(report, key), 0);
        json_object_object_add(report, "extra", json_object_new_int(1));
        text = report_render(report, &len);
        assert_int_equal(check(text, len, NULL), -EKEYREJECTED);
        free(text);
        /* ... or the signature moved before another member: the same signed content, another form. */
        assert_int_equal(report_sign(report, key), 0);
        {
                struct json_object *moved = json_object_new_object();

                json_object_object_foreach(report, k, val) {
                        if (strcmp(k, "job") == 0)
                                json_object_object_add(moved, "signature",
                                                       json_object_get(json_object_object_get(report, "signature")));
                        if (strcmp(k, "signature") != 0)
                                json_object_object_add(moved, k, json_object_get(val));
                }
                text = report_render(moved, &len);
                assert_int_equal(check(text, len, NULL), -EKEYREJECTED);
                free(text);
                json_object_put(moved);
        }
        json_object_put(report);
        EVP_PKEY_free(key);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_key_files),
                cmocka_unit_test(test_key_invalid),
                cmocka_unit_test(test_sign_check),
                cmocka_unit_test(test_line_form),
                cmocka_unit_test(test_tamper),
                cmocka_unit_test(test_signature_member),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
