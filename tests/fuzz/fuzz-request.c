/* libFuzzer target: one request line as a client sends it (tests/fuzz/README.md).
 * The bytes go to protocol_request_parse() as the daemon's client_handle() gives them; a decoded
 * request is then read with every accessor the daemon uses, on the field names its ops read, and
 * the strings it gets are parsed as the daemon parses them (cipher, method, passes). The error
 * reply is built and serialised as the daemon sends it. The same bytes then go to
 * protocol_reply_parse(), as wipectl reads a reply line. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "keystream.h"
#include "method.h"
#include "protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A string field as submit reads it: harmless on names that are not its own. */
static void read_string(struct json_object *o, const char *name) {
        const char *s;

        if (protocol_get_string(o, name, &s) == 0) {
                enum keystream_cipher c;
                struct pass p;

                (void) keystream_cipher_from_name(s, &c);
                (void) method_find(s);
                (void) pass_parse(s, &p);
                (void) strlen(s);
        }
}

/* Read every field of a decoded request as the daemon's handlers do; the results are not checked
 * against anything: the sanitizers watch the reads. */
static void read_fields(struct json_object *o) {
        const char **strings = NULL;
        uint64_t *ids = NULL, v = 0;
        size_t n = 0;
        bool b;

        /* The scalar fields of every op, as common/protocol.c lists them (the arrays below). */
        read_string(o, "op");
        (void) protocol_get_u64(o, "id", &v);
        (void) protocol_get_bool(o, "ok", &b);
        for (int op = 0; op < _PROTOCOL_OP_MAX; op++)
                for (const struct protocol_field *f = protocol_op_fields(op); f && f->name; f++)
                        if (f->type == PROTOCOL_FIELD_STRING)
                                read_string(o, f->name);
                        else if (f->type == PROTOCOL_FIELD_U64)
                                (void) protocol_get_u64(o, f->name, &v);
                        else if (f->type == PROTOCOL_FIELD_BOOL)
                                (void) protocol_get_bool(o, f->name, &b);

        if (protocol_get_string_array(o, "devices", PROTOCOL_DEVICES_MAX, &strings, &n) == 0)
                for (size_t i = 0; i < n; i++)
                        (void) strlen(strings[i]);
        free(strings);
        strings = NULL;
        if (protocol_get_string_array(o, "passes", METHOD_PASSES_MAX, &strings, &n) == 0)
                for (size_t i = 0; i < n; i++) {
                        struct pass p;

                        (void) pass_parse(strings[i], &p);
                }
        free(strings);

        if (protocol_get_u64_array(o, "jobs", 4096, &ids, &n) == 0)
                for (size_t i = 0; i < n; i++)
                        v ^= ids[i];
        free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct protocol_request req;
        struct json_object *reply = NULL;
        const char *err = NULL, *message = NULL;
        char *line;
        size_t len;
        int r;

        /* The daemon hands over the line without its '\n', in a buffer of its own: a copy of
         * exactly size bytes lets AddressSanitizer see any read past the end. */
        line = malloc(size ? size : 1);
        if (!line)
                return 0;
        if (size)
                memcpy(line, data, size);

        r = protocol_request_parse(&req, line, size, &err);
        if (r == 0) {
                if (req.op < 0 || req.op >= _PROTOCOL_OP_MAX || !protocol_op_name(req.op))
                        abort();
                (void) protocol_op_mutates(req.op);
                read_fields(req.obj);
                reply = protocol_reply_new(req.id);
        } else {
                if (!err)
                        abort();        /* the contract: an explanation on every error */
                reply = protocol_reply_error(req.id, r, "%s", err);
        }
        if (reply) {
                char *text = protocol_serialize(reply, &len);

                /* What the daemon sends must read back as the same reply: ok, or the same error
                 * (every code protocol_request_parse() returns has a name). */
                if (text) {
                        struct json_object *back = NULL;

                        if (len == 0 || text[len - 1] != '\n' ||
                            protocol_reply_parse(text, len - 1, &back, &message) != r || !back)
                                abort();
                        json_object_put(back);
                        free(text);
                }
                json_object_put(reply);
        }
        protocol_request_done(&req);

        reply = NULL;
        r = protocol_reply_parse(line, size, &reply, &message);
        if (r != -EBADMSG && !reply)
                abort();
        if (reply) {
                (void) protocol_errno_name(r);
                (void) strlen(message ? message : "");
                read_fields(reply);
        }
        json_object_put(reply);
        free(line);
        return 0;
}
