/* JSON-lines control protocol: request decoding, reply building, errno names. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "protocol.h"
#include "utf8.h"

static const char *const op_names[_PROTOCOL_OP_MAX] = {
        [PROTOCOL_OP_VERSION] = "version",
        [PROTOCOL_OP_SUBMIT] = "submit",
        [PROTOCOL_OP_STATUS] = "status",
        [PROTOCOL_OP_LIST] = "list",
        [PROTOCOL_OP_CANCEL] = "cancel",
        [PROTOCOL_OP_REPORT] = "report",
        [PROTOCOL_OP_PROBE] = "probe",
        [PROTOCOL_OP_VERIFY] = "verify",
        [PROTOCOL_OP_WATCH] = "watch",
        [PROTOCOL_OP_PAUSE] = "pause",
        [PROTOCOL_OP_RESUME] = "resume",
        [PROTOCOL_OP_FORGET] = "forget",
        [PROTOCOL_OP_DEVICES] = "devices",
        [PROTOCOL_OP_POLICIES] = "policies",
        [PROTOCOL_OP_POLICY_PAUSE] = "policy_pause",
        [PROTOCOL_OP_POLICY_RESUME] = "policy_resume",
        [PROTOCOL_OP_REPORTS] = "reports",
};

const char *protocol_op_name(enum protocol_op op) {
        if (op < 0 || op >= _PROTOCOL_OP_MAX)
                return NULL;
        return op_names[op];
}

enum protocol_op protocol_op_from_name(const char *name) {
        for (int i = 0; i < _PROTOCOL_OP_MAX; i++)
                if (name && strcmp(op_names[i], name) == 0)
                        return i;
        return PROTOCOL_OP_INVALID;
}

bool protocol_op_mutates(enum protocol_op op) {
        return op == PROTOCOL_OP_SUBMIT || op == PROTOCOL_OP_CANCEL || op == PROTOCOL_OP_PROBE ||
               op == PROTOCOL_OP_VERIFY || op == PROTOCOL_OP_PAUSE || op == PROTOCOL_OP_RESUME ||
               op == PROTOCOL_OP_FORGET || op == PROTOCOL_OP_POLICY_PAUSE || op == PROTOCOL_OP_POLICY_RESUME;
}

#define FIELDS_MAX 20                    /* fields of the op with the most, and the end */

static const struct protocol_field op_fields[_PROTOCOL_OP_MAX][FIELDS_MAX] = {
        [PROTOCOL_OP_VERSION] = { { NULL } },
        [PROTOCOL_OP_SUBMIT] = { { "devices", PROTOCOL_FIELD_STRING_ARRAY }, { "cipher", PROTOCOL_FIELD_STRING },
                                 { "method", PROTOCOL_FIELD_STRING }, { "passes", PROTOCOL_FIELD_STRING_ARRAY },
                                 { "verify", PROTOCOL_FIELD_STRING }, { "seed", PROTOCOL_FIELD_U64 },
                                 { "queue_depth", PROTOCOL_FIELD_U64 }, { "io_size", PROTOCOL_FIELD_U64 },
                                 { "max_rate", PROTOCOL_FIELD_U64 }, { "max_bad_bytes", PROTOCOL_FIELD_U64 },
                                 { "expect", PROTOCOL_FIELD_OBJECT_ARRAY }, { "dry_run", PROTOCOL_FIELD_BOOL },
                                 /* The sanitization record (wiped(8) "REPORTS"). */
                                 { "asset_tag", PROTOCOL_FIELD_STRING }, { "asset_tags", PROTOCOL_FIELD_STRING_ARRAY },
                                 { "customer", PROTOCOL_FIELD_STRING }, { "note", PROTOCOL_FIELD_STRING },
                                 { "destination", PROTOCOL_FIELD_STRING }, { "operator", PROTOCOL_FIELD_OBJECT },
                                 { "verifier", PROTOCOL_FIELD_OBJECT }, { NULL } },
        [PROTOCOL_OP_STATUS] = { { "jobs", PROTOCOL_FIELD_U64_ARRAY }, { NULL } },
        [PROTOCOL_OP_LIST] = { { NULL } },
        [PROTOCOL_OP_CANCEL] = { { "job", PROTOCOL_FIELD_U64 }, { NULL } },
        [PROTOCOL_OP_REPORT] = { { "job", PROTOCOL_FIELD_U64 }, { "keys", PROTOCOL_FIELD_BOOL }, { NULL } },
        [PROTOCOL_OP_PROBE] = { { "devices", PROTOCOL_FIELD_STRING_ARRAY }, { NULL } },
        [PROTOCOL_OP_VERIFY] = { { "job", PROTOCOL_FIELD_U64 }, { "verify", PROTOCOL_FIELD_STRING },
                                 { "seed", PROTOCOL_FIELD_U64 }, { NULL } },
        [PROTOCOL_OP_WATCH] = { { "jobs", PROTOCOL_FIELD_U64_ARRAY }, { "interval_ms", PROTOCOL_FIELD_U64 },
                                { NULL } },
        [PROTOCOL_OP_PAUSE] = { { "job", PROTOCOL_FIELD_U64 }, { NULL } },
        [PROTOCOL_OP_RESUME] = { { "job", PROTOCOL_FIELD_U64 }, { "device", PROTOCOL_FIELD_STRING }, { NULL } },
        [PROTOCOL_OP_FORGET] = { { "job", PROTOCOL_FIELD_U64 }, { NULL } },
        [PROTOCOL_OP_DEVICES] = { { NULL } },
        [PROTOCOL_OP_POLICIES] = { { NULL } },
        [PROTOCOL_OP_POLICY_PAUSE] = { { "name", PROTOCOL_FIELD_STRING }, { NULL } },
        [PROTOCOL_OP_POLICY_RESUME] = { { "name", PROTOCOL_FIELD_STRING }, { NULL } },
        [PROTOCOL_OP_REPORTS] = { { "since", PROTOCOL_FIELD_U64 }, { "until", PROTOCOL_FIELD_U64 },
                                  { "batch", PROTOCOL_FIELD_STRING }, { "jobs", PROTOCOL_FIELD_U64_ARRAY },
                                  { "limit", PROTOCOL_FIELD_U64 }, { "after_job", PROTOCOL_FIELD_U64 }, { NULL } },
};

const struct protocol_field *protocol_op_fields(enum protocol_op op) {
        if (op < 0 || op >= _PROTOCOL_OP_MAX)
                return NULL;
        return op_fields[op];
}

bool protocol_op_has_field(enum protocol_op op, const char *name) {
        const struct protocol_field *f = protocol_op_fields(op);

        if (!f || !name)
                return false;
        if (strcmp(name, "id") == 0 || strcmp(name, "op") == 0)
                return true;
        for (; f->name; f++)
                if (strcmp(name, f->name) == 0)
                        return true;
        return false;
}

/* Whether the integer literal s[0..n) (digits, perhaps a leading '-') fits in -2^63..2^64-1, the
 * range json-c holds exactly: it clamps anything beyond without a word. */
static bool integer_fits(const char *s, size_t n) {
        bool neg = n > 0 && s[0] == '-';
        const char *limit = neg ? "9223372036854775808" : "18446744073709551615";
        size_t digits = n - neg, l = strlen(limit);

        s += neg;
        /* Strict JSON has no leading zeros, so a longer literal is a larger number. */
        if (digits != l)
                return digits < l;
        return memcmp(s, limit, l) <= 0;
}

static int hex4(const char *s) {
        int v = 0;

        for (int i = 0; i < 4; i++) {
                char c = s[i];

                v <<= 4;
                if (c >= '0' && c <= '9')
                        v |= c - '0';
                else if (c >= 'a' && c <= 'f')
                        v |= c - 'a' + 10;
                else if (c >= 'A' && c <= 'F')
                        v |= c - 'A' + 10;
                else
                        return -1;
        }
        return v;
}

/* What json-c accepts but a request must not hold, found in the text itself: an integer out of
 * range (clamped by json-c), or a \u escape of a lone surrogate (turned into U+FFFD). The JSON's
 * structure is left to json-c: this only has to tell strings from the rest. On a finding, 0 is not
 * returned: -EINVAL for a number with *err naming it and its key in buf, -EBADMSG for an escape. */
static int check_text(const char *s, size_t len, char *buf, size_t buf_len, const char **err) {
        const char *key = NULL, *str = NULL;
        size_t key_len = 0, str_len = 0;

        for (size_t i = 0; i < len; i++) {
                char c = s[i];

                if (c == '"') {
                        size_t start = ++i;

                        for (; i < len && s[i] != '"'; i++) {
                                int u, v;

                                if (s[i] != '\\')
                                        continue;
                                if (++i >= len || s[i] != 'u')
                                        continue;
                                if (i + 4 >= len || (u = hex4(s + i + 1)) < 0)
                                        return 0;       /* json-c refuses it */
                                i += 4;
                                if (u >= 0xdc00 && u <= 0xdfff) {
                                        *err = "a string holds a lone UTF-16 surrogate escape";
                                        return -EBADMSG;
                                }
                                if (u < 0xd800 || u > 0xdbff)
                                        continue;
                                if (i + 6 >= len || s[i + 1] != '\\' || s[i + 2] != 'u' ||
                                    (v = hex4(s + i + 3)) < 0xdc00 || v > 0xdfff) {
                                        *err = "a string holds a lone UTF-16 surrogate escape";
                                        return -EBADMSG;
                                }
                                i += 6;
                        }
                        str = s + start;
                        str_len = i - start;
                        continue;
                }
                if (c == ':') {
                        key = str;
                        key_len = str_len;
                        continue;
                }
                if (c == '-' || (c >= '0' && c <= '9')) {
                        size_t start = i, end = i + 1;
                        bool integer = true;

                        while (end < len && strchr("0123456789+-.eE", s[end])) {
                                if (strchr(".eE", s[end]))
                                        integer = false;
                                end++;
                        }
                        if (integer && !integer_fits(s + start, end - start)) {
                                snprintf(buf, buf_len, "\"%.*s\": %.*s is out of range (integers are from -2^63 to 2^64-1)",
                                         key ? (int) (key_len < 64 ? key_len : 64) : 0, key ? key : "",
                                         (int) (end - start < 40 ? end - start : 40), s + start);
                                *err = buf;
                                return -EINVAL;
                        }
                        i = end - 1;
                }
        }
        return 0;
}

/* Parse exactly one JSON object from line[0..len), allowing trailing blanks. 0, -EBADMSG or -ENOMEM. */
static int parse_object(const char *line, size_t len, struct json_object **ret, const char **err) {
        struct json_tokener *tok;
        struct json_object *o;
        enum json_tokener_error jerr;

        if (len > INT32_MAX) {
                *err = "line too long";
                return -EMSGSIZE;
        }
        /* A NUL, raw or escaped: json-c would cut a key at it ("op\u0000x" is "op"), and no field
         * of a request may hold one. */
        if (memchr(line, '\0', len) || memmem(line, len, "\\u0000", 6)) {
                *err = "line contains a NUL byte";
                return -EBADMSG;
        }

        tok = json_tokener_new_ex(32);
        if (!tok) {
                *err = "out of memory";
                return -ENOMEM;
        }
        /* Strict: no single quotes, no trailing commas, nothing JSON does not allow. */
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        o = json_tokener_parse_ex(tok, line, (int) len);
        jerr = json_tokener_get_error(tok);
        if (o && jerr == json_tokener_success)
                /* Allow trailing white space only. */
                for (size_t i = json_tokener_get_parse_end(tok); i < len; i++)
                        if (!strchr(" \t\r", line[i])) {
                                jerr = json_tokener_error_parse_unexpected;
                                break;
                        }
        json_tokener_free(tok);
        if (!o || jerr != json_tokener_success) {
                json_object_put(o);
                *err = "not valid JSON";
                return -EBADMSG;
        }
        if (!json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                *err = "not a JSON object";
                return -EBADMSG;
        }
        *ret = o;
        return 0;
}

int protocol_request_parse(struct protocol_request *req, const char *line, size_t len, const char **err) {
        struct json_object *o = NULL, *v;
        const char *name;
        bool utf8_ok;
        int64_t id;
        int r;

        *req = (struct protocol_request) { .id = -1, .op = PROTOCOL_OP_INVALID };
        *err = NULL;

        if (len > PROTOCOL_LINE_MAX) {
                *err = "request too long";
                return -EMSGSIZE;
        }
        r = parse_object(line, len, &o, err);
        if (r < 0)
                return r;
        req->obj = o;
        /* Strict UTF-8 (checked once the id is known, for the reply): json-c's own check lets
         * overlong forms and surrogates through, and a reply that echoed them would not be JSON. */
        utf8_ok = utf8_valid(line, len);

        if (!json_object_object_get_ex(o, "id", &v) || !json_object_is_type(v, json_type_int)) {
                *err = "request needs an integer \"id\"";
                return -EINVAL;
        }
        errno = 0;
        id = json_object_get_int64(v);
        if (id < 0 || errno != 0 || (json_object_get_uint64(v) > INT64_MAX)) {
                *err = "\"id\" must be an integer from 0 to 2^63-1";
                return -EINVAL;
        }
        req->id = id;
        if (!utf8_ok) {
                *err = "not valid UTF-8";
                return -EBADMSG;
        }
        r = check_text(line, len, req->err, sizeof(req->err), err);
        if (r < 0)
                return r;

        if (!json_object_object_get_ex(o, "op", &v) || !json_object_is_type(v, json_type_string)) {
                *err = "request needs a string \"op\"";
                return -EINVAL;
        }
        name = json_object_get_string(v);
        req->op = (size_t) json_object_get_string_len(v) == strlen(name) ? protocol_op_from_name(name) :
                  PROTOCOL_OP_INVALID;
        if (req->op == PROTOCOL_OP_INVALID) {
                *err = "unknown operation";
                return -EOPNOTSUPP;
        }
        return 0;
}

void protocol_request_done(struct protocol_request *req) {
        if (!req)
                return;
        json_object_put(req->obj);
        req->obj = NULL;
}

/* The field key of o in *v: 0, -ENOENT when absent, -EINVAL when null (a null is not "use the
 * default": it is a value of the wrong type). */
static int get_field(struct json_object *o, const char *key, struct json_object **v) {
        *v = NULL;
        if (!o || !json_object_object_get_ex(o, key, v))
                return -ENOENT;
        return *v ? 0 : -EINVAL;
}

int protocol_get_string(struct json_object *o, const char *key, const char **ret) {
        struct json_object *v;
        int r = get_field(o, key, &v);

        if (r < 0)
                return r;
        /* An embedded NUL (\u0000) would cut the string short: "/dev/sdb\u0000x" is not a path. */
        if (!json_object_is_type(v, json_type_string) ||
            (size_t) json_object_get_string_len(v) != strlen(json_object_get_string(v)))
                return -EINVAL;
        *ret = json_object_get_string(v);
        return 0;
}

int protocol_get_bool(struct json_object *o, const char *key, bool *ret) {
        struct json_object *v;
        int r = get_field(o, key, &v);

        if (r < 0)
                return r;
        if (!json_object_is_type(v, json_type_boolean))
                return -EINVAL;
        *ret = json_object_get_boolean(v);
        return 0;
}

static int value_u64(struct json_object *v, uint64_t *ret) {
        int64_t s;

        if (!json_object_is_type(v, json_type_int))
                return -EINVAL;
        /* json-c keeps integers as int64 or uint64; reject negatives and overflow. */
        errno = 0;
        s = json_object_get_int64(v);
        if (s < 0)
                return -EINVAL;
        if (s == INT64_MAX) {
                errno = 0;
                *ret = json_object_get_uint64(v);
                if (errno != 0)
                        return -EINVAL;
                return 0;
        }
        *ret = (uint64_t) s;
        return 0;
}

int protocol_get_u64(struct json_object *o, const char *key, uint64_t *ret) {
        struct json_object *v;
        int r = get_field(o, key, &v);

        if (r < 0)
                return r;
        return value_u64(v, ret);
}

/* The array field key of o in *v, with min to max entries (*len): 0, -ENOENT when absent, -EINVAL
 * when null, not an array, or of another length. */
static int get_array(struct json_object *o, const char *key, size_t min, size_t max, struct json_object **v,
                     size_t *len) {
        int r = get_field(o, key, v);

        if (r < 0)
                return r;
        if (!json_object_is_type(*v, json_type_array))
                return -EINVAL;
        *len = json_object_array_length(*v);
        return *len < min || *len > max ? -EINVAL : 0;
}

int protocol_get_string_array(struct json_object *o, const char *key, size_t max, const char ***ret, size_t *n) {
        struct json_object *v;
        const char **a;
        size_t len;
        int r = get_array(o, key, 1, max, &v, &len);

        if (r < 0)
                return r;
        a = calloc(len, sizeof(*a));
        if (!a)
                return -ENOMEM;
        for (size_t i = 0; i < len; i++) {
                struct json_object *e = json_object_array_get_idx(v, i);

                if (!e || !json_object_is_type(e, json_type_string) || json_object_get_string_len(e) == 0 ||
                    strlen(json_object_get_string(e)) != (size_t) json_object_get_string_len(e)) {
                        free(a);
                        return -EINVAL;
                }
                a[i] = json_object_get_string(e);
        }
        *ret = a;
        *n = len;
        return 0;
}

int protocol_get_u64_array(struct json_object *o, const char *key, size_t max, uint64_t **ret, size_t *n) {
        struct json_object *v;
        uint64_t *a;
        size_t len;
        int r = get_array(o, key, 0, max, &v, &len);

        if (r < 0)
                return r;
        a = calloc(len ? len : 1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        for (size_t i = 0; i < len; i++) {
                struct json_object *e = json_object_array_get_idx(v, i);

                if (!e || value_u64(e, &a[i]) < 0) {
                        free(a);
                        return -EINVAL;
                }
        }
        *ret = a;
        *n = len;
        return 0;
}

struct json_object *protocol_request_new(int64_t id, enum protocol_op op) {
        struct json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        if (json_object_object_add(o, "id", json_object_new_int64(id)) < 0 ||
            json_object_object_add(o, "op", json_object_new_string(protocol_op_name(op))) < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

static struct json_object *reply_base(int64_t id, bool ok) {
        struct json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        if (json_object_object_add(o, "id", id >= 0 ? json_object_new_int64(id) : NULL) < 0 ||
            json_object_object_add(o, "ok", json_object_new_boolean(ok)) < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

struct json_object *protocol_reply_new(int64_t id) {
        return reply_base(id, true);
}

struct json_object *protocol_reply_error(int64_t id, int error, const char *fmt, ...) {
        struct json_object *o, *e;
        _cleanup_free_ char *clean = NULL;
        char msg[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        /* What it echoes may be cut in the middle of a character (%.64s, the buffer's end), or
         * come from a device: the message is made valid UTF-8, as every reply must be. */
        clean = utf8_sanitize_dup(msg);

        o = reply_base(id, false);
        e = json_object_new_object();
        if (!o || !e || !clean ||
            json_object_object_add(e, "code", json_object_new_string(protocol_errno_name(error))) < 0 ||
            json_object_object_add(e, "message", json_object_new_string(clean)) < 0 ||
            json_object_object_add(o, "error", e) < 0) {
                json_object_put(o);
                json_object_put(e);
                return NULL;
        }
        return o;
}

char *protocol_serialize(struct json_object *o, size_t *len) {
        const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        _cleanup_free_ char *clean = NULL;
        size_t l;
        char *buf;

        if (!s)
                return NULL;
        l = strlen(s);
        /* The last guard: json-c copies a string's bytes as they are, so one that came from
         * somewhere else than a checked request must not make the line invalid JSON text. The
         * structure is ASCII: only bytes inside strings are replaced (by U+FFFD). */
        if (!utf8_valid(s, l)) {
                clean = utf8_sanitize_dup(s);
                if (!clean)
                        return NULL;
                s = clean;
                l = strlen(s);
        }
        buf = malloc(l + 2);
        if (!buf)
                return NULL;
        memcpy(buf, s, l);
        buf[l] = '\n';
        buf[l + 1] = '\0';
        *len = l + 1;
        return buf;
}

int protocol_reply_parse(const char *line, size_t len, struct json_object **ret, const char **message) {
        struct json_object *o = NULL, *e;
        const char *code;
        bool ok;
        int r;

        *ret = NULL;
        *message = NULL;
        r = parse_object(line, len, &o, message);
        if (r == 0 && !utf8_valid(line, len)) {
                json_object_put(o);
                r = -EBADMSG;
        }
        if (r < 0) {
                *message = "malformed reply";
                return -EBADMSG;
        }
        if (protocol_get_bool(o, "ok", &ok) < 0) {
                json_object_put(o);
                *message = "reply without \"ok\"";
                return -EBADMSG;
        }
        *ret = o;
        if (ok)
                return 0;
        if (get_field(o, "error", &e) < 0 || protocol_get_string(e, "code", &code) < 0 || protocol_get_string(e, "message", message) < 0) {
                *message = "error reply without code or message";
                return -EBADMSG;
        }
        r = protocol_errno_from_name(code);
        return r > 0 ? -r : -EIO;
}

const char *protocol_errno_name(int error) {
        const char *n;

        if (error < 0)
                error = -error;
        n = strerrorname_np(error);
        return n ? n : "EUNKNOWN";
}

int protocol_errno_from_name(const char *name) {
        if (!name)
                return 0;
        for (int e = 1; e < 256; e++) {
                const char *n = strerrorname_np(e);

                if (n && strcmp(n, name) == 0)
                        return e;
        }
        return 0;
}

char *protocol_status_socket_path(const char *control) {
        size_t n = strlen(control);
        char *s;

        if (n >= 5 && strcmp(control + n - 5, ".sock") == 0)
                n -= 5;
        if (asprintf(&s, "%.*s-status.sock", (int) n, control) < 0)
                return NULL;
        return s;
}
