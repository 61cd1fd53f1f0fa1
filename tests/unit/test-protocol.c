/* Protocol decoding and encoding: valid requests, every kind of malformed input, replies. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "protocol.h"

static int parse(const char *s, struct protocol_request *req) {
        const char *err = NULL;
        int r = protocol_request_parse(req, s, strlen(s), &err);

        if (r < 0)
                assert_non_null(err);
        return r;
}

static void test_valid(void **state) {
        struct protocol_request req;
        const char **devs = NULL;
        const char *s;
        size_t n = 0;
        bool b;

        (void) state;
        assert_int_equal(parse("{\"id\":7,\"op\":\"submit\",\"devices\":[\"/dev/loop1\",\"/dev/loop2\"],\"cipher\":\"chacha20\"}  ", &req), 0);
        assert_int_equal(req.id, 7);
        assert_int_equal(req.op, PROTOCOL_OP_SUBMIT);
        assert_int_equal(protocol_get_string_array(req.obj, "devices", 8, &devs, &n), 0);
        assert_int_equal(n, 2);
        assert_string_equal(devs[1], "/dev/loop2");
        free(devs);
        assert_int_equal(protocol_get_string(req.obj, "cipher", &s), 0);
        assert_string_equal(s, "chacha20");
        assert_int_equal(protocol_get_string(req.obj, "method", &s), -ENOENT);
        assert_int_equal(protocol_get_bool(req.obj, "cipher", &b), -EINVAL);
        assert_true(protocol_op_mutates(req.op));
        protocol_request_done(&req);

        for (int op = 0; op < _PROTOCOL_OP_MAX; op++)
                assert_int_equal(protocol_op_from_name(protocol_op_name(op)), op);

        /* Watching, like status, is for everyone. */
        assert_int_equal(parse("{\"id\":8,\"op\":\"watch\",\"jobs\":[3,4],\"interval_ms\":250}", &req), 0);
        assert_int_equal(req.op, PROTOCOL_OP_WATCH);
        assert_false(protocol_op_mutates(req.op));
        protocol_request_done(&req);

        /* Listing the devices changes nothing: anyone, on either socket. */
        assert_int_equal(parse("{\"id\":9,\"op\":\"devices\"}", &req), 0);
        assert_int_equal(req.op, PROTOCOL_OP_DEVICES);
        assert_false(protocol_op_mutates(req.op));
        protocol_request_done(&req);

        /* A dry run is still a submit (it opens devices and may probe firmware): privileged. */
        assert_int_equal(parse("{\"id\":11,\"op\":\"submit\",\"devices\":[\"/dev/loop1\"],\"dry_run\":true}", &req), 0);
        assert_int_equal(protocol_get_bool(req.obj, "dry_run", &b), 0);
        assert_true(b);
        assert_true(protocol_op_mutates(req.op));
        protocol_request_done(&req);
        /* Not a boolean: the field is refused when the daemon reads it. */
        assert_int_equal(parse("{\"id\":12,\"op\":\"submit\",\"devices\":[\"/dev/loop1\"],\"dry_run\":1}", &req), 0);
        assert_int_equal(protocol_get_bool(req.obj, "dry_run", &b), -EINVAL);
        protocol_request_done(&req);
}

static void test_malformed(void **state) {
        struct protocol_request req;
        char *big;

        (void) state;
        assert_int_equal(parse("", &req), -EBADMSG);
        assert_int_equal(parse("not json", &req), -EBADMSG);
        assert_int_equal(parse("[1,2,3]", &req), -EBADMSG);
        assert_int_equal(parse("\"string\"", &req), -EBADMSG);
        assert_int_equal(parse("{\"id\":1,\"op\":\"version\"", &req), -EBADMSG);
        assert_int_equal(parse("{\"id\":1,\"op\":\"version\"} trailing", &req), -EBADMSG);
        assert_int_equal(parse("{\"id\":1,\"op\":\"version\"}{}", &req), -EBADMSG);
        /* Strict JSON, and no NUL even escaped (json-c would cut a key at it). */
        assert_int_equal(parse("{'id':1,'op':'version'}", &req), -EBADMSG);
        assert_int_equal(parse("{\"id\":1,\"op\":\"version\",}", &req), -EBADMSG);
        assert_int_equal(parse("{\"id\":1,\"op\":\"version\\u0000\"}", &req), -EBADMSG);
        assert_int_equal(parse("{\"id\":1,\"op\":\"list\",\"op\\u0000x\":\"cancel\"}", &req), -EBADMSG);
        assert_int_equal(parse("{\"id\":1,\"op\":\"version\",\"x\":\"\xff\xfe\"}", &req), -EBADMSG);
        assert_int_equal(parse("{\"op\":\"version\"}", &req), -EINVAL);
        assert_int_equal(req.id, -1);
        protocol_request_done(&req);
        assert_int_equal(parse("{\"id\":\"1\",\"op\":\"version\"}", &req), -EINVAL);
        protocol_request_done(&req);
        assert_int_equal(parse("{\"id\":-5,\"op\":\"version\"}", &req), -EINVAL);
        protocol_request_done(&req);
        assert_int_equal(parse("{\"id\":1.5,\"op\":\"version\"}", &req), -EINVAL);
        protocol_request_done(&req);
        assert_int_equal(parse("{\"id\":99999999999999999999999,\"op\":\"version\"}", &req), -EINVAL);
        protocol_request_done(&req);
        assert_int_equal(parse("{\"id\":3,\"op\":7}", &req), -EINVAL);
        assert_int_equal(req.id, 3);
        protocol_request_done(&req);
        assert_int_equal(parse("{\"id\":3,\"op\":\"format-c\"}", &req), -EOPNOTSUPP);
        assert_int_equal(req.id, 3);
        protocol_request_done(&req);

        /* An embedded NUL is an error, not a truncated request. */
        {
                static const char nul[] = "{\"id\":1,\"op\":\"version\"}\0{\"x\":1}";
                const char *err;

                assert_int_equal(protocol_request_parse(&req, nul, sizeof(nul) - 1, &err), -EBADMSG);
        }

        /* Too long, even if it would be valid JSON. */
        big = malloc(PROTOCOL_LINE_MAX + 100);
        assert_non_null(big);
        memset(big, ' ', PROTOCOL_LINE_MAX + 99);
        memcpy(big, "{\"id\":1,\"op\":\"version\"}", 23);
        big[PROTOCOL_LINE_MAX + 99] = '\0';
        assert_int_equal(parse(big, &req), -EMSGSIZE);
        free(big);

        /* Deep nesting is refused by the tokenizer's depth limit, not by a crash. */
        {
                char deep[2000];

                memset(deep, '[', sizeof(deep) - 1);
                deep[sizeof(deep) - 1] = '\0';
                assert_int_equal(parse(deep, &req), -EBADMSG);
        }
}

/* The fields of every op: a list for each, names unique, "id" and "op" accepted everywhere. */
static void test_op_fields(void **state) {
        const struct protocol_field *f;

        (void) state;
        for (int op = 0; op < _PROTOCOL_OP_MAX; op++) {
                f = protocol_op_fields(op);
                assert_non_null(f);
                assert_true(protocol_op_has_field(op, "id"));
                assert_true(protocol_op_has_field(op, "op"));
                assert_false(protocol_op_has_field(op, "devcies"));
                assert_false(protocol_op_has_field(op, ""));
                for (size_t i = 0; f[i].name; i++) {
                        assert_true(protocol_op_has_field(op, f[i].name));
                        for (size_t j = 0; j < i; j++)
                                assert_string_not_equal(f[i].name, f[j].name);
                }
        }
        assert_null(protocol_op_fields(_PROTOCOL_OP_MAX));
        assert_null(protocol_op_fields(PROTOCOL_OP_INVALID));
        assert_false(protocol_op_has_field(PROTOCOL_OP_INVALID, "id"));
        assert_null(protocol_op_fields(PROTOCOL_OP_VERSION)[0].name);
        assert_null(protocol_op_fields(PROTOCOL_OP_LIST)[0].name);
        assert_true(protocol_op_has_field(PROTOCOL_OP_SUBMIT, "max_bad_bytes"));
        assert_true(protocol_op_has_field(PROTOCOL_OP_SUBMIT, "expect"));
        assert_false(protocol_op_has_field(PROTOCOL_OP_PROBE, "expect"));
        assert_true(protocol_op_has_field(PROTOCOL_OP_WATCH, "interval_ms"));
        assert_false(protocol_op_has_field(PROTOCOL_OP_STATUS, "interval_ms"));
        f = protocol_op_fields(PROTOCOL_OP_REPORT);
        assert_string_equal(f[1].name, "keys");
        assert_int_equal(f[1].type, PROTOCOL_FIELD_BOOL);
}

static void test_fields(void **state) {
        struct protocol_request req;
        const char **devs = NULL;
        uint64_t *ids = NULL, v;
        size_t n = 0;

        (void) state;
        assert_int_equal(parse("{\"id\":1,\"op\":\"status\",\"jobs\":[1,2,18446744073709551615],\"neg\":-1,"
                               "\"big\":18446744073709551615,\"empty\":[],\"mixed\":[\"a\",1],"
                               "\"float\":1.0,\"n\":null}", &req), 0);
        assert_int_equal(protocol_get_u64_array(req.obj, "jobs", 16, &ids, &n), 0);
        assert_int_equal(n, 3);
        assert_true(ids[2] == UINT64_MAX);
        free(ids);
        assert_int_equal(protocol_get_u64_array(req.obj, "jobs", 2, &ids, &n), -EINVAL);
        assert_int_equal(protocol_get_u64(req.obj, "neg", &v), -EINVAL);
        assert_int_equal(protocol_get_u64(req.obj, "big", &v), 0);
        assert_true(v == UINT64_MAX);
        assert_int_equal(protocol_get_u64(req.obj, "float", &v), -EINVAL);
        /* null is a value of the wrong type, not "the default". */
        assert_int_equal(protocol_get_u64(req.obj, "n", &v), -EINVAL);
        {
                const char *s1;
                bool b;

                assert_int_equal(protocol_get_string(req.obj, "n", &s1), -EINVAL);
                assert_int_equal(protocol_get_bool(req.obj, "n", &b), -EINVAL);
                assert_int_equal(protocol_get_string_array(req.obj, "n", 8, &devs, &n), -EINVAL);
                assert_int_equal(protocol_get_u64_array(req.obj, "n", 8, &ids, &n), -EINVAL);
        }
        assert_int_equal(protocol_get_u64(req.obj, "missing", &v), -ENOENT);
        assert_int_equal(protocol_get_string_array(req.obj, "empty", 8, &devs, &n), -EINVAL);
        assert_int_equal(protocol_get_string_array(req.obj, "mixed", 8, &devs, &n), -EINVAL);
        assert_int_equal(protocol_get_string_array(req.obj, "missing", 8, &devs, &n), -ENOENT);
        assert_int_equal(protocol_get_string_array(req.obj, "big", 8, &devs, &n), -EINVAL);
        /* An empty list of job ids is one; a list over max is not. */
        assert_int_equal(protocol_get_u64_array(req.obj, "empty", 8, &ids, &n), 0);
        assert_int_equal(n, 0);
        free(ids);
        assert_int_equal(protocol_get_u64_array(req.obj, "missing", 8, &ids, &n), -ENOENT);
        assert_int_equal(protocol_get_u64_array(req.obj, "big", 8, &ids, &n), -EINVAL);
        assert_int_equal(protocol_get_u64_array(req.obj, "jobs", 3, &ids, &n), 0);
        free(ids);
        /* A line with an escaped NUL does not parse; a string holding one (made here) is refused. */
        {
                struct json_object *a = json_object_new_array();

                json_object_array_add(a, json_object_new_string_len("a\0b", 3));
                json_object_object_add(req.obj, "nul", a);
                json_object_object_add(req.obj, "nul1", json_object_new_string_len("a\0b", 3));
        }
        assert_int_equal(protocol_get_string_array(req.obj, "nul", 8, &devs, &n), -EINVAL);
        {
                const char *s1;

                assert_int_equal(protocol_get_string(req.obj, "nul1", &s1), -EINVAL);
        }
        assert_int_equal(protocol_get_string_array(req.obj, "jobs", 8, &devs, &n), -EINVAL);
        protocol_request_done(&req);
}

/* What json-c accepts but a request must not hold: raw UTF-8 that is not well formed, escaped lone
 * surrogates, integers beyond what json-c holds (it clamps them). */
static void test_strict(void **state) {
        static const char *const bad_utf8[] = {
                "\xc0\xaf",                   /* overlong "/" */
                "\xe0\x80\xaf",              /* overlong "/" in three bytes */
                "\xed\xa0\x80",              /* U+D800, a surrogate */
                "\xed\xbf\xbf",              /* U+DFFF */
                "\xf4\x90\x80\x80",         /* above U+10FFFF */
                "\xf8\x88\x80\x80\x80",    /* five bytes */
                "\x80",                        /* a stray continuation byte */
                "\xc3",                        /* a cut sequence */
        };
        struct protocol_request req;
        char line[256];

        (void) state;
        for (size_t i = 0; i < sizeof(bad_utf8) / sizeof(bad_utf8[0]); i++) {
                snprintf(line, sizeof(line), "{\"id\":1,\"op\":\"probe\",\"devices\":[\"/dev/%s\"]}", bad_utf8[i]);
                assert_int_equal(parse(line, &req), -EBADMSG);
                protocol_request_done(&req);
        }
        /* Well-formed characters of every length pass. */
        assert_int_equal(parse("{\"id\":1,\"op\":\"probe\",\"devices\":[\"/dev/\xc3\xa9\xe2\x82\xac\xf0\x9f\x92\xbe\"]}", &req), 0);
        protocol_request_done(&req);

        /* Escaped surrogates: a pair is one character, a lone one is malformed. */
        assert_int_equal(parse("{\"id\":1,\"op\":\"probe\",\"devices\":[\"/dev/\\ud83d\\udcbe\"]}", &req), 0);
        protocol_request_done(&req);
        assert_int_equal(parse("{\"id\":1,\"op\":\"probe\",\"devices\":[\"/dev/\\ud800\"]}", &req), -EBADMSG);
        assert_int_equal(req.id, 1);
        protocol_request_done(&req);
        assert_int_equal(parse("{\"id\":1,\"op\":\"probe\",\"devices\":[\"/dev/\\udc00x\"]}", &req), -EBADMSG);
        protocol_request_done(&req);
        assert_int_equal(parse("{\"id\":1,\"op\":\"probe\",\"devices\":[\"/dev/\\ud800\\u0041\"]}", &req), -EBADMSG);
        protocol_request_done(&req);
        /* An escaped backslash before "u" is not an escape. */
        assert_int_equal(parse("{\"id\":1,\"op\":\"probe\",\"devices\":[\"/dev/\\\\ud800\"]}", &req), 0);
        protocol_request_done(&req);

        /* Integers: the edges pass, one beyond is EINVAL naming the field, the id kept. */
        assert_int_equal(parse("{\"id\":2,\"op\":\"submit\",\"max_rate\":18446744073709551615,\"x\":-9223372036854775808}", &req), 0);
        protocol_request_done(&req);
        assert_int_equal(parse("{\"id\":2,\"op\":\"submit\",\"max_rate\":18446744073709551616}", &req), -EINVAL);
        assert_int_equal(req.id, 2);
        {
                const char *err = NULL;

                protocol_request_done(&req);
                assert_int_equal(protocol_request_parse(&req, "{\"id\":2,\"op\":\"submit\",\"seed\":18446744073709551616}",
                                                        strlen("{\"id\":2,\"op\":\"submit\",\"seed\":18446744073709551616}"), &err), -EINVAL);
                assert_non_null(strstr(err, "\"seed\": 18446744073709551616 is out of range"));
        }
        protocol_request_done(&req);
        assert_int_equal(parse("{\"id\":2,\"op\":\"submit\",\"x\":-9223372036854775809}", &req), -EINVAL);
        protocol_request_done(&req);
        assert_int_equal(parse("{\"id\":2,\"op\":\"status\",\"jobs\":[1,99999999999999999999999]}", &req), -EINVAL);
        protocol_request_done(&req);
        /* Digits inside a string are not numbers; an exponent makes a double (a type error later). */
        assert_int_equal(parse("{\"id\":2,\"op\":\"submit\",\"method\":\"99999999999999999999999\",\"f\":1e400}", &req), 0);
        protocol_request_done(&req);
}

static void test_replies(void **state) {
        struct json_object *o, *r = NULL;
        const char *msg = NULL;
        char *line;
        size_t len;

        (void) state;
        o = protocol_reply_error(5, -EBUSY, "%s: refusing: %s", "/dev/loop3", "device is in use");
        assert_non_null(o);
        line = protocol_serialize(o, &len);
        json_object_put(o);
        assert_non_null(line);
        assert_int_equal(line[len - 1], '\n');
        assert_int_equal(memchr(line, '\n', len - 1) == NULL, 1);
        assert_int_equal(protocol_reply_parse(line, len - 1, &r, &msg), -EBUSY);
        assert_string_equal(msg, "/dev/loop3: refusing: device is in use");
        json_object_put(r);
        free(line);

        o = protocol_reply_new(9);
        json_object_object_add(o, "note", json_object_new_string("line\nbreak"));
        line = protocol_serialize(o, &len);
        json_object_put(o);
        /* A newline inside a string is escaped: one reply is one line. */
        assert_null(memchr(line, '\n', len - 1));
        assert_int_equal(protocol_reply_parse(line, len - 1, &r, &msg), 0);
        json_object_put(r);
        free(line);

        assert_int_equal(protocol_reply_parse("{\"id\":1}", 8, &r, &msg), -EBADMSG);
        assert_null(r);
        assert_int_equal(protocol_reply_parse("garbage", 7, &r, &msg), -EBADMSG);

        assert_string_equal(protocol_errno_name(-EPERM), "EPERM");
        assert_string_equal(protocol_errno_name(EMSGSIZE), "EMSGSIZE");
        assert_int_equal(protocol_errno_from_name("ENOTBLK"), ENOTBLK);
        assert_int_equal(protocol_errno_from_name("ENOPE"), 0);

        /* A message cut in the middle of a character, or a string from a device that is not
         * UTF-8, still makes a reply that is valid JSON text. */
        o = protocol_reply_error(6, -ENOENT, "%.6s: no such device", "/dev/\xc3\xa9");
        line = protocol_serialize(o, &len);
        json_object_put(o);
        assert_non_null(line);
        assert_int_equal(protocol_reply_parse(line, len - 1, &r, &msg), -ENOENT);
        assert_string_equal(msg, "/dev/\xef\xbf\xbd: no such device");
        json_object_put(r);
        free(line);
        o = protocol_reply_new(7);
        json_object_object_add(o, "label", json_object_new_string("a\xff\xc0\xaf" "b"));
        line = protocol_serialize(o, &len);
        json_object_put(o);
        assert_int_equal(protocol_reply_parse(line, len - 1, &r, &msg), 0);
        assert_string_equal(json_object_get_string(json_object_object_get(r, "label")),
                            "a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" "b");
        json_object_put(r);
        free(line);

        o = protocol_request_new(3, PROTOCOL_OP_CANCEL);
        assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), "{\"id\":3,\"op\":\"cancel\"}");
        json_object_put(o);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_valid),
                cmocka_unit_test(test_malformed),
                cmocka_unit_test(test_op_fields),
                cmocka_unit_test(test_fields),
                cmocka_unit_test(test_strict),
                cmocka_unit_test(test_replies),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
