/* The control protocol (doc/DESIGN.md "The protocol", wiped(8) "PROTOCOL"): one JSON object per line over
 * a SOCK_STREAM Unix socket. Requests are {"id":N,"op":"...",...}; replies carry the same id and
 * either "ok":true with the op's fields, or "ok":false,"error":{"code":"EXXX","message":"..."}
 * where code is the symbolic errno name. Both sides link this file; it never logs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#define PROTOCOL_VERSION 1
/* The "format_version" of every JSON document wipectl prints and of every report the daemon
 * signs: 2 is the first with one naming scheme for fields and units (wiped(8), NAMES AND UNITS).
 * It changes when a field is renamed or removed, or changes type or meaning. */
#define JSON_FORMAT_VERSION 2
#define PROTOCOL_LINE_MAX (64 * 1024)   /* longest request or reply line, bytes, without '\n' */
#define PROTOCOL_DEVICES_MAX 256        /* devices in one submit */
/* The reports op (wiped(8) PROTOCOL "reports"): at most this many reports in one reply (the
 * default and the largest "limit"), and about this many bytes of them; "truncated" says more. */
#define PROTOCOL_REPORTS_MAX 1000
#define PROTOCOL_REPORTS_BYTES_MAX (8 * 1024 * 1024)
#define PROTOCOL_REPORTS_JOBS_MAX 4096  /* entries of its "jobs" */
#define PROTOCOL_SOCKET_DEFAULT "/run/wiped.sock"
/* The read-only socket beside it (wiped(8) PERMISSIONS): protocol_status_socket_path() of the default. */
#define PROTOCOL_STATUS_SOCKET_DEFAULT "/run/wiped-status.sock"

/* The events a watch subscription sends (wiped(8) PROTOCOL "watch"): a job's state or stage
 * changed, its progress at each interval, and the end once every watched job has ended. */
#define PROTOCOL_EVENT_STATE "state"
#define PROTOCOL_EVENT_PROGRESS "progress"
#define PROTOCOL_EVENT_END "end"

enum protocol_op {
        PROTOCOL_OP_VERSION,
        PROTOCOL_OP_SUBMIT,
        PROTOCOL_OP_STATUS,
        PROTOCOL_OP_LIST,
        PROTOCOL_OP_CANCEL,
        PROTOCOL_OP_REPORT,
        PROTOCOL_OP_PROBE,
        PROTOCOL_OP_VERIFY,
        PROTOCOL_OP_WATCH,
        PROTOCOL_OP_PAUSE,
        PROTOCOL_OP_RESUME,
        PROTOCOL_OP_FORGET,
        PROTOCOL_OP_DEVICES,
        PROTOCOL_OP_POLICIES,
        PROTOCOL_OP_POLICY_PAUSE,
        PROTOCOL_OP_POLICY_RESUME,
        PROTOCOL_OP_REPORTS,
        _PROTOCOL_OP_MAX,
        PROTOCOL_OP_INVALID = -1,
};

const char *protocol_op_name(enum protocol_op op);
enum protocol_op protocol_op_from_name(const char *name);
/* Whether the op changes anything or probes devices given by the client (needs root or the wiped
 * group). The devices listing is not one: it shows what lsblk shows anyone, and more than that only
 * the daemon's verdict. */
bool protocol_op_mutates(enum protocol_op op);

/* The JSON type of a request field. */
enum protocol_field_type {
        PROTOCOL_FIELD_U64,             /* a non-negative integer */
        PROTOCOL_FIELD_STRING,
        PROTOCOL_FIELD_BOOL,
        PROTOCOL_FIELD_STRING_ARRAY,    /* of non-empty strings */
        PROTOCOL_FIELD_U64_ARRAY,
        PROTOCOL_FIELD_OBJECT_ARRAY,
        PROTOCOL_FIELD_OBJECT,
};

struct protocol_field {
        const char *name;               /* NULL ends a list */
        enum protocol_field_type type;
};

/* The fields a request of op may carry besides "id" and "op", in the order wiped(8) lists them,
 * ending with a NULL name (an op without fields has only that end); NULL for an unknown op. Any
 * other field is an error (EINVAL "unknown field"). Static. */
const struct protocol_field *protocol_op_fields(enum protocol_op op);
/* Whether a request of op may carry the field name: "id", "op" or one of protocol_op_fields(op). */
bool protocol_op_has_field(enum protocol_op op, const char *name);

/* A decoded request. obj owns everything; free with protocol_request_done(). */
struct protocol_request {
        int64_t id;                     /* -1 when the request had no usable id */
        enum protocol_op op;
        struct json_object *obj;
        char err[192];                  /* an error message naming a field (see err below) */
};

/* Decode one line (without its '\n'; len bytes, may contain NULs, which are an error).
 * Returns 0, or -EMSGSIZE (longer than PROTOCOL_LINE_MAX), -EBADMSG (not a JSON object, not
 * strict UTF-8 (overlong forms and surrogates included), an escaped lone surrogate, an embedded
 * NUL, trailing garbage), -EINVAL (missing or bad "id" or "op", an integer anywhere outside
 * -2^63..2^64-1, which json-c would clamp), -EOPNOTSUPP (unknown op). On error *err points to an
 * explanation (static, or in req->err) and req->id holds the id when it could be read. */
int protocol_request_parse(struct protocol_request *req, const char *line, size_t len, const char **err);
void protocol_request_done(struct protocol_request *req);

/* Field accessors: 0 when present and of the right type, -ENOENT when absent, -EINVAL when null,
 * of the wrong type or out of range. */
int protocol_get_string(struct json_object *o, const char *key, const char **ret);
int protocol_get_bool(struct json_object *o, const char *key, bool *ret);
int protocol_get_u64(struct json_object *o, const char *key, uint64_t *ret);
/* An array of non-empty strings, at most max entries; *ret holds pointers into o (borrowed)
 * and must be freed with free(). -EINVAL also for an empty array or over max. */
int protocol_get_string_array(struct json_object *o, const char *key, size_t max, const char ***ret, size_t *n);
/* An array of non-negative integers, at most max entries; *ret malloc'd. */
int protocol_get_u64_array(struct json_object *o, const char *key, size_t max, uint64_t **ret, size_t *n);

/* Build a request {"id":id,"op":name}; NULL on ENOMEM. */
struct json_object *protocol_request_new(int64_t id, enum protocol_op op);
/* Build a reply {"id":id,"ok":true}; id < 0 gives "id":null. NULL on ENOMEM. */
struct json_object *protocol_reply_new(int64_t id);
/* Build an error reply for -errno error with a printf-style message. NULL on ENOMEM. */
struct json_object *protocol_reply_error(int64_t id, int error, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* Serialise o as one line with a trailing '\n' (malloc'd, length in *len). NULL on ENOMEM. */
char *protocol_serialize(struct json_object *o, size_t *len);

/* Decode a reply line. Returns 0 when "ok" is true (*ret owns the object), or the negative errno
 * named by its error code (*ret still owns the object and *message points into it), or -EBADMSG
 * when the line is not a valid reply. */
int protocol_reply_parse(const char *line, size_t len, struct json_object **ret, const char **message);

/* "EBUSY" for -EBUSY or EBUSY; "EUNKNOWN" for numbers without a name. */
const char *protocol_errno_name(int error);
/* The positive errno for a name, or 0 when unknown. */
int protocol_errno_from_name(const char *name);

/* The read-only socket that goes with the control socket at control: its name with "-status"
 * before a final ".sock", or "-status.sock" appended (/run/wiped.sock: /run/wiped-status.sock).
 * Malloc'd; NULL on ENOMEM. */
char *protocol_status_socket_path(const char *control);
