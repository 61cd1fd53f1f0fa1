/* Protocol decoding and encoding: valid requests, every kind of malformed input, replies. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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
        assert_int_equal(protocol_get_u64(req.obj, "n", &v), -ENOENT);
        assert_int_equal(protocol_get_u64(req.obj, "missing", &v), -ENOENT);
        assert_int_equal(protocol_get_string_array(req.obj, "empty", 8, &devs, &n), -EINVAL);
        assert_int_equal(protocol_get_string_array(req.obj, "mixed", 8, &devs, &n), -EINVAL);
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

        o = protocol_request_new(3, PROTOCOL_OP_CANCEL);
        assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), "{\"id\":3,\"op\":\"cancel\"}");
        json_object_put(o);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_valid),
                cmocka_unit_test(test_malformed),
                cmocka_unit_test(test_fields),
                cmocka_unit_test(test_replies),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
