/* The configuration file of wiped: parsing, checking, merging and matching device patterns. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "collector.h"
#include "conffile.h"
#include "utf8.h"
#include "method.h"
#include "strutil.h"
#include "units.h"

/* How a key's value is written, checked and stored. */
enum key_type {
        KEY_UINT,                       /* unsigned: decimal digits, min..max */
        KEY_SIZE,                       /* uint64_t or uint32_t: a size ("4M"), min..max, a multiple of step */
        KEY_RATE,                       /* uint64_t: a rate ("200MB/s"), 0 for none */
        KEY_SECONDS,                    /* double: decimal seconds, seconds_min..seconds_max */
        KEY_CIPHER,                     /* enum keystream_cipher: its name */
        KEY_POLICY,                     /* enum conffile_policy: its name */
        KEY_BOOL,                       /* bool: words[0] (false) or words[1] (true) */
        KEY_STRING,                     /* char *: a copy of the value */
        KEY_LIST,                       /* char ** (NULL-terminated) and a size_t count: each value adds one */
};

/* One key of the file: everything conffile_set(), _merge(), _same(), _format() and _done() need. */
struct key_def {
        const char *name;               /* in a file and as the daemon's long option */
        enum key_type type;
        size_t offset, size;            /* of its field in struct conffile */
        size_t count_offset;            /* KEY_LIST: of the field that counts the list */
        uint64_t min, max, step;        /* KEY_UINT, KEY_SIZE: the bounds; step: a multiple of it (0: any) */
        double seconds_min, seconds_max; /* KEY_SECONDS */
        const char *words[2];           /* KEY_BOOL */
        bool (*valid)(const char *value); /* KEY_STRING, KEY_LIST: a check of the value, or NULL */
        bool file_absolute;             /* KEY_STRING: in a file, an absolute path */
        const char *invalid;            /* the message for a value that fails the checks (with the range) */
        bool reloads;                   /* a running daemon takes a new value on reload (SIGHUP): it reads
                                         * the key where it is used (a submit, a checkpoint, a start-up
                                         * resume, a history sweep); the others count at start only */
};

#define STR_(x) #x
#define STR(x) STR_(x)
/* The characters of a header's name (RFC 9110's tchar), shown where its value is not. */
#define HEADER_NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+-.^_`|~"
#define RECORD_TEXT_INVALID "not text of up to " STR(CONFFILE_RECORD_TEXT_MAX) " bytes without control characters"
/* Where the field f of struct conffile is, and its size; it must be of type T (or the build fails:
 * the table and the struct cannot drift apart). */
#define FIELD(f, T)                                                                                  \
        .offset = offsetof(struct conffile, f) + 0 * sizeof(_Generic(((struct conffile *) 0)->f, T: 1)), \
        .size = sizeof(T)

static bool method_valid(const char *value) {
        return method_find(value) != NULL;
}

/* purge's fallback: "refuse", or a pass the daemon writes (not another firmware erase). */
static bool fallback_valid(const char *value) {
        struct pass p;

        return strcmp(value, "refuse") == 0 || (pass_parse(value, &p) == 0 && !pass_op_firmware(p.op));
}

static bool hidden_valid(const char *value) {
        return strcmp(value, "restore") == 0 || strcmp(value, "refuse") == 0 || strcmp(value, "ignore") == 0;
}

static bool smart_policy_valid(const char *value) {
        return strcmp(value, "ignore") == 0 || strcmp(value, "flag") == 0 || strcmp(value, "refuse") == 0;
}

/* A path (absolute), a program name, or "none". */
static bool smartctl_valid(const char *value) {
        return value[0] && !strpbrk(value, " \t") && (value[0] == '/' || !strchr(value, '/'));
}

static bool group_valid(const char *value) {
        return !strpbrk(value, " \t:");
}

/* The sanitization record's text: printed on certificates, so no control characters. */
static bool record_text_valid(const char *value) {
        size_t n = strlen(value);

        return n <= CONFFILE_RECORD_TEXT_MAX && utf8_text_valid(value, n);
}

static bool backend_valid(const char *value) {
        enum keystream_backend want[_KEYSTREAM_CIPHER_MAX];

        return keystream_backend_spec_parse(value, want) == 0;
}

static bool absolute_valid(const char *value) {
        return value[0] == '/';
}

static bool absolute_or_none_valid(const char *value) {
        return value[0] == '/' || strcmp(value, "none") == 0;
}

static bool events_valid(const char *value) {
        return strcmp(value, "auto") == 0 || strcmp(value, "udev") == 0 || strcmp(value, "kernel") == 0;
}

int conffile_listen_parse(const char *value, struct sockaddr_storage *ss, unsigned *ss_len) {
        struct sockaddr_storage tmp = {};
        char addr[INET6_ADDRSTRLEN + 1], *end;
        const char *colon, *host = value;
        size_t n;
        unsigned long port;

        if (value[0] == '[') {
                const char *close = strchr(value, ']');

                if (!close || close[1] != ':')
                        return -EINVAL;
                host = value + 1;
                n = (size_t) (close - host);
                colon = close + 1;
        } else {
                colon = strrchr(value, ':');
                if (!colon)
                        return -EINVAL;
                n = (size_t) (colon - value);
        }
        if (n == 0 || n >= sizeof(addr) || !colon[1] || !isdigit((unsigned char) colon[1]))
                return -EINVAL;
        memcpy(addr, host, n);
        addr[n] = 0;
        errno = 0;
        port = strtoul(colon + 1, &end, 10);
        if (errno || *end || port < 1 || port > 65535)
                return -EINVAL;
        if (value[0] == '[') {
                struct sockaddr_in6 *s6 = (struct sockaddr_in6 *) &tmp;

                if (inet_pton(AF_INET6, addr, &s6->sin6_addr) != 1)
                        return -EINVAL;
                s6->sin6_family = AF_INET6;
                s6->sin6_port = htons((uint16_t) port);
                if (ss_len)
                        *ss_len = sizeof(*s6);
        } else {
                struct sockaddr_in *s4 = (struct sockaddr_in *) &tmp;

                if (inet_pton(AF_INET, addr, &s4->sin_addr) != 1)
                        return -EINVAL;
                s4->sin_family = AF_INET;
                s4->sin_port = htons((uint16_t) port);
                if (ss_len)
                        *ss_len = sizeof(*s4);
        }
        if (ss)
                *ss = tmp;
        return 0;
}

static bool listen_valid(const char *value) {
        return conffile_listen_parse(value, NULL, NULL) == 0;
}

/* node_exporter reads the files of its textfile directory that end in .prom, and no other. */
static bool textfile_valid(const char *value) {
        size_t n = strlen(value);

        return value[0] == '/' && n > 6 && strcmp(value + n - 5, ".prom") == 0 && value[n - 6] != '/';
}

static const struct key_def keys[_CONFFILE_KEY_MAX] = {
        [CONFFILE_THREADS] = { "threads", KEY_UINT, FIELD(threads, unsigned), .min = 1, .max = CONFFILE_THREADS_MAX,
                               .invalid = "invalid thread count (1.." STR(CONFFILE_THREADS_MAX) ")" },
        [CONFFILE_BUFFERS] = { "buffers", KEY_UINT, FIELD(buffers, unsigned), .min = 1, .max = CONFFILE_BUFFERS_MAX,
                               .invalid = "invalid buffer count (1.." STR(CONFFILE_BUFFERS_MAX) ")" },
        [CONFFILE_IO_SIZE] = { "io-size", KEY_SIZE, FIELD(io_size, uint32_t), .min = 4096, .max = CONFFILE_IO_SIZE_MAX,
                               .step = 4096, .invalid = "invalid I/O size (4K..64M, multiple of 4K)" },
        /* 0 means the default: from the device. */
        [CONFFILE_QUEUE_DEPTH] = { "queue-depth", KEY_UINT, FIELD(queue_depth, unsigned),
                                   .max = CONFFILE_QUEUE_DEPTH_MAX,
                                   .invalid = "invalid queue depth (0.." STR(CONFFILE_QUEUE_DEPTH_MAX) ")" },
        [CONFFILE_MAX_RATE] = { "max-rate", KEY_RATE, FIELD(max_rate, uint64_t),
                                .invalid = "invalid rate (e.g. 200M for 200 MB/s, 0 for none)" },
        [CONFFILE_SOCKET] = { "socket", KEY_STRING, FIELD(socket, char *), .file_absolute = true },
        [CONFFILE_STATE_DIR] = { "state-dir", KEY_STRING, FIELD(state_dir, char *), .file_absolute = true },
        [CONFFILE_SOCKET_GROUP] = { "socket-group", KEY_STRING, FIELD(socket_group, char *), .valid = group_valid,
                                    .invalid = "invalid group name" },
        [CONFFILE_STATUS_SOCKET] = { "status-socket", KEY_STRING, FIELD(status_socket, char *),
                                     .valid = absolute_or_none_valid,
                                     .invalid = "not an absolute path, nor none (no read-only socket)" },
        [CONFFILE_METHOD] = { "method", KEY_STRING, FIELD(method, char *), .reloads = true, .valid = method_valid,
                              .invalid = "unknown method (see wipectl methods)" },
        /* Checked by the caller's conffile_check_fn. */
        [CONFFILE_VERIFY] = { "verify", KEY_STRING, FIELD(verify, char *), .reloads = true },
        [CONFFILE_CIPHER] = { "cipher", KEY_CIPHER, FIELD(cipher, enum keystream_cipher), .reloads = true,
                              .invalid = "unknown cipher (auto, aes-128-ctr, chacha20)" },
        [CONFFILE_CHUNK_SIZE] = { "chunk-size", KEY_SIZE, FIELD(chunk_size, uint64_t), .min = CONFFILE_CHUNK_SIZE_MIN,
                                  .reloads = true, .max = CONFFILE_CHUNK_SIZE_MAX, .step = CONFFILE_CHUNK_SIZE_MIN,
                                  .invalid = "invalid chunk size (1M..1G, multiple of 1M)" },
        [CONFFILE_CHECKPOINT_INTERVAL] = { "checkpoint-interval", KEY_SECONDS, FIELD(checkpoint_interval, double),
                                           .reloads = true, .seconds_min = CONFFILE_CHECKPOINT_INTERVAL_MIN,
                                           .seconds_max = CONFFILE_CHECKPOINT_INTERVAL_MAX,
                                           .invalid = "invalid interval (seconds, 0.1..3600)" },
        [CONFFILE_CHECKPOINT_BYTES] = { "checkpoint-bytes", KEY_SIZE, FIELD(checkpoint_bytes, uint64_t),
                                        .reloads = true, .min = CONFFILE_CHECKPOINT_BYTES_MIN,
                                        .max = CONFFILE_CHECKPOINT_BYTES_MAX,
                                        .invalid = "invalid size (1M..1T)" },
        [CONFFILE_RESUME] = { "resume", KEY_BOOL, FIELD(resume_manual, bool), .words = { "auto", "manual" },
                              .reloads = true, .invalid = "unknown resume mode (auto, manual)" },
        [CONFFILE_HISTORY_MAX_AGE] = { "history-max-age", KEY_UINT, FIELD(history_max_age_days, unsigned),
                                       .reloads = true, .max = CONFFILE_HISTORY_MAX_AGE_MAX,
                                       .invalid = "invalid age (days, 0.." STR(CONFFILE_HISTORY_MAX_AGE_MAX)
                                                  "; 0: forever)" },
        [CONFFILE_MAX_BAD] = { "max-bad", KEY_SIZE, FIELD(max_bad, uint64_t), .max = CONFFILE_MAX_BAD_MAX,
                               .reloads = true, .invalid = "invalid size of bad sectors (0..1P)" },
        [CONFFILE_CLIENT_TIMEOUT] = { "client-timeout", KEY_UINT, FIELD(client_timeout, unsigned), .min = 1,
                                      .reloads = true, .max = CONFFILE_CLIENT_TIMEOUT_MAX,
                                      .invalid = "invalid timeout (seconds, 1.." STR(CONFFILE_CLIENT_TIMEOUT_MAX) ")" },
        [CONFFILE_KEYSTREAM_BACKEND] = { "keystream-backend", KEY_STRING, FIELD(keystream_backend, char *),
                                         .valid = backend_valid,
                                         .invalid = "unknown keystream backend (auto, openssl, gcrypt, or "
                                                    "CIPHER:BACKEND,... as aes-128-ctr:gcrypt)" },
        /* Both need a restart: a worker sets its own priority when it starts. */
        [CONFFILE_WORKER_POLICY] = { "worker-policy", KEY_POLICY, FIELD(worker_policy, enum conffile_policy),
                                     .invalid = "unknown scheduling policy (other, batch, idle)" },
        [CONFFILE_WORKER_NICE] = { "worker-nice", KEY_UINT, FIELD(worker_nice, unsigned),
                                   .max = CONFFILE_WORKER_NICE_MAX,
                                   .invalid = "invalid nice value (0.." STR(CONFFILE_WORKER_NICE_MAX) ")" },
        [CONFFILE_PURGE_FALLBACK] = { "purge-fallback", KEY_STRING, FIELD(purge_fallback, char *), .reloads = true,
                                      .valid = fallback_valid,
                                      .invalid = "invalid purge fallback (refuse, or a pass: random, zero, zeroout, ...)" },
        [CONFFILE_HIDDEN_AREA] = { "hidden-area", KEY_STRING, FIELD(hidden_area, char *), .reloads = true,
                                   .valid = hidden_valid, .invalid = "unknown hidden-area policy (restore, refuse, ignore)" },
        [CONFFILE_JOB_END_HOOK] = { "job-end-hook", KEY_STRING, FIELD(job_end_hook, char *), .reloads = true },
        [CONFFILE_HOOK_TIMEOUT] = { "hook-timeout", KEY_UINT, FIELD(hook_timeout, unsigned), .min = 1,
                                    .reloads = true, .max = CONFFILE_HOOK_TIMEOUT_MAX,
                                    .invalid = "invalid timeout (seconds, 1.." STR(CONFFILE_HOOK_TIMEOUT_MAX) ")" },
        [CONFFILE_HOOK_MAX_RUNNING] = { "hook-max-running", KEY_UINT, FIELD(hook_max_running, unsigned), .min = 1,
                                        .reloads = true, .max = CONFFILE_HOOK_MAX_RUNNING_MAX,
                                        .invalid = "invalid count of hooks (1.." STR(CONFFILE_HOOK_MAX_RUNNING_MAX) ")" },
        /* The endpoint and the file need a restart; how often and how long ended jobs show reload. */
        [CONFFILE_METRICS_LISTEN] = { "metrics-listen", KEY_STRING, FIELD(metrics_listen, char *),
                                      .valid = listen_valid,
                                      .invalid = "not a numeric ADDRESS:PORT (127.0.0.1:9137, [::1]:9137)" },
        [CONFFILE_METRICS_TEXTFILE] = { "metrics-textfile", KEY_STRING, FIELD(metrics_textfile, char *),
                                        .valid = textfile_valid,
                                        .invalid = "not an absolute path of a file ending in .prom" },
        [CONFFILE_METRICS_INTERVAL] = { "metrics-interval", KEY_SECONDS, FIELD(metrics_interval, double),
                                        .reloads = true, .seconds_min = CONFFILE_METRICS_INTERVAL_MIN,
                                        .seconds_max = CONFFILE_METRICS_INTERVAL_MAX,
                                        .invalid = "invalid interval (seconds, 1..3600)" },
        [CONFFILE_METRICS_ENDED_MAX_AGE] = { "metrics-ended-max-age", KEY_SECONDS,
                                             FIELD(metrics_ended_max_age, double), .reloads = true,
                                             .seconds_max = CONFFILE_METRICS_ENDED_MAX_AGE_MAX,
                                             .invalid = "invalid age (seconds, 0..2592000)" },
        [CONFFILE_ALLOW] = { "allow", KEY_LIST, FIELD(allow, char **), .reloads = true,
                             .count_offset = offsetof(struct conffile, n_allow), .valid = absolute_valid,
                             .invalid = "not an absolute path pattern (like /dev/disk/by-id/usb-*)" },
        [CONFFILE_DENY] = { "deny", KEY_LIST, FIELD(deny, char **), .reloads = true,
                            .count_offset = offsetof(struct conffile, n_deny), .valid = absolute_valid,
                            .invalid = "not an absolute path pattern (like /dev/disk/by-id/usb-*)" },
        /* Read again on reload, with the policies in it. */
        [CONFFILE_POLICY_DIR] = { "policy-dir", KEY_STRING, FIELD(policy_dir, char *), .reloads = true,
                                  .valid = absolute_or_none_valid,
                                  .invalid = "not an absolute path, nor none (no bay policies)" },
        /* The monitor is opened once, at start. */
        [CONFFILE_POLICY_EVENTS] = { "policy-events", KEY_STRING, FIELD(policy_events, char *),
                                     .valid = events_valid, .invalid = "unknown event source (auto, udev, kernel)" },
        /* The record's defaults: read where a job is submitted (a job keeps what it got). */
        [CONFFILE_DESTINATION] = { "destination", KEY_STRING, FIELD(destination, char *), .reloads = true,
                                   .valid = record_text_valid, .invalid = RECORD_TEXT_INVALID },
        [CONFFILE_OPERATOR_NAME] = { "operator-name", KEY_STRING, FIELD(operator_person[0], char *), .reloads = true,
                .valid = record_text_valid, .invalid = RECORD_TEXT_INVALID },
        [CONFFILE_OPERATOR_TITLE] = { "operator-title", KEY_STRING, FIELD(operator_person[1], char *), .reloads = true,
                .valid = record_text_valid, .invalid = RECORD_TEXT_INVALID },
        [CONFFILE_OPERATOR_ORGANIZATION] = { "operator-organization", KEY_STRING, FIELD(operator_person[2], char *), .reloads = true,
                .valid = record_text_valid, .invalid = RECORD_TEXT_INVALID },
        [CONFFILE_OPERATOR_LOCATION] = { "operator-location", KEY_STRING, FIELD(operator_person[3], char *), .reloads = true,
                .valid = record_text_valid, .invalid = RECORD_TEXT_INVALID },
        [CONFFILE_OPERATOR_CONTACT] = { "operator-contact", KEY_STRING, FIELD(operator_person[4], char *), .reloads = true,
                .valid = record_text_valid, .invalid = RECORD_TEXT_INVALID },
        [CONFFILE_VERIFIER_NAME] = { "verifier-name", KEY_STRING, FIELD(verifier_person[0], char *), .reloads = true,
                .valid = record_text_valid, .invalid = RECORD_TEXT_INVALID },
        [CONFFILE_VERIFIER_TITLE] = { "verifier-title", KEY_STRING, FIELD(verifier_person[1], char *), .reloads = true,
                .valid = record_text_valid, .invalid = RECORD_TEXT_INVALID },
        [CONFFILE_VERIFIER_ORGANIZATION] = { "verifier-organization", KEY_STRING, FIELD(verifier_person[2], char *), .reloads = true,
                .valid = record_text_valid, .invalid = RECORD_TEXT_INVALID },
        [CONFFILE_VERIFIER_LOCATION] = { "verifier-location", KEY_STRING, FIELD(verifier_person[3], char *), .reloads = true,
                .valid = record_text_valid, .invalid = RECORD_TEXT_INVALID },
        [CONFFILE_VERIFIER_CONTACT] = { "verifier-contact", KEY_STRING, FIELD(verifier_person[4], char *), .reloads = true,
                .valid = record_text_valid, .invalid = RECORD_TEXT_INVALID },
        /* Delivery: the thread is set up once, at start. */
        [CONFFILE_REPORT_URL] = { "report-url", KEY_STRING, FIELD(report_url, char *), .valid = collector_url_valid,
                                  .invalid = "not an http:// or https:// URL with a host" },
        [CONFFILE_REPORT_HEADER] = { "report-header", KEY_LIST, FIELD(report_header, char **),
                                     .count_offset = offsetof(struct conffile, n_report_header), .valid = collector_header_valid,
                                     .invalid = "not a header \"Name: value\" wiped lets you add (not Content-Type, "
                                                "Content-Length, Transfer-Encoding, Host, Idempotency-Key, X-Wiped-*)" },
        [CONFFILE_REPORT_CA_FILE] = { "report-ca-file", KEY_STRING, FIELD(report_ca_file, char *),
                                      .file_absolute = true },
        [CONFFILE_REPORT_CLIENT_CERT] = { "report-client-cert", KEY_STRING, FIELD(report_client_cert, char *),
                                          .file_absolute = true },
        [CONFFILE_REPORT_CLIENT_KEY] = { "report-client-key", KEY_STRING, FIELD(report_client_key, char *),
                                         .file_absolute = true },
        [CONFFILE_REPORT_TIMEOUT] = { "report-timeout", KEY_SECONDS, FIELD(report_timeout, double),
                                      .seconds_min = 1, .seconds_max = CONFFILE_REPORT_TIMEOUT_MAX,
                                      .invalid = "invalid timeout (seconds, 1..3600)" },
        [CONFFILE_REPORT_RETRY_MAX_INTERVAL] = { "report-retry-max-interval", KEY_SECONDS,
                                                 FIELD(report_retry_max_interval, double), .seconds_min = 1,
                                                 .seconds_max = CONFFILE_REPORT_RETRY_MAX,
                                                 .invalid = "invalid interval (seconds, 1..86400)" },
        /* Drive health (wiped(8) "DRIVE HEALTH"): read where used, so they reload. */
        [CONFFILE_SMARTCTL] = { "smartctl", KEY_STRING, FIELD(smartctl, char *), .reloads = true,
                                .valid = smartctl_valid,
                                .invalid = "not an absolute path, a program name or none" },
        [CONFFILE_SMART_TIMEOUT] = { "smart-timeout", KEY_UINT, FIELD(smart_timeout, unsigned), .min = 1,
                                     .reloads = true, .max = CONFFILE_SMART_TIMEOUT_MAX,
                                     .invalid = "invalid timeout (seconds, 1.." STR(CONFFILE_SMART_TIMEOUT_MAX) ")" },
        [CONFFILE_SMART_POLICY] = { "smart-policy", KEY_STRING, FIELD(smart_policy, char *), .reloads = true,
                                    .valid = smart_policy_valid,
                                    .invalid = "unknown smart-policy (ignore, flag, refuse)" },
};

/* The field of key k in c; the caller knows its type from keys[k].type. */
static void *field(struct conffile *c, enum conffile_key k) {
        return (char *) c + keys[k].offset;
}

static const void *cfield(const struct conffile *c, enum conffile_key k) {
        return (const char *) c + keys[k].offset;
}

/* The count of the list key k in c. */
static size_t *list_count(struct conffile *c, enum conffile_key k) {
        return (size_t *) (void *) ((char *) c + keys[k].count_offset);
}

static size_t clist_count(const struct conffile *c, enum conffile_key k) {
        return *(const size_t *) (const void *) ((const char *) c + keys[k].count_offset);
}

const char *conffile_key_name(enum conffile_key key) {
        return (unsigned) key < _CONFFILE_KEY_MAX ? keys[key].name : NULL;
}

int conffile_key_from_name(const char *name, enum conffile_key *ret) {
        for (unsigned k = 0; name && k < _CONFFILE_KEY_MAX; k++)
                if (strcmp(name, keys[k].name) == 0) {
                        *ret = (enum conffile_key) k;
                        return 0;
                }
        return -ENOENT;
}

/* The edit distance of a and b (optimal string alignment: insertions, deletions, substitutions
 * and swaps of two neighbours, each 1), with '_' and '-' as one character and case ignored, so
 * that "max_rate" and "Max-Rate" are "max-rate". Strings longer than 63 bytes are far from all. */
static unsigned edit_distance(const char *a, const char *b) {
        unsigned d[64][64];
        size_t n = strlen(a), m = strlen(b);

        if (n >= 64 || m >= 64)
                return UINT_MAX;
        for (size_t i = 0; i <= n; i++)
                d[i][0] = (unsigned) i;
        for (size_t j = 0; j <= m; j++)
                d[0][j] = (unsigned) j;
        for (size_t i = 1; i <= n; i++)
                for (size_t j = 1; j <= m; j++) {
                        char x = a[i - 1] == '_' ? '-' : (char) tolower((unsigned char) a[i - 1]);
                        char y = b[j - 1] == '_' ? '-' : (char) tolower((unsigned char) b[j - 1]);
                        unsigned best = d[i - 1][j - 1] + (x != y);

                        if (d[i - 1][j] + 1 < best)
                                best = d[i - 1][j] + 1;
                        if (d[i][j - 1] + 1 < best)
                                best = d[i][j - 1] + 1;
                        if (i > 1 && j > 1 && tolower((unsigned char) a[i - 1]) == tolower((unsigned char) b[j - 2]) &&
                            tolower((unsigned char) a[i - 2]) == tolower((unsigned char) b[j - 1]) &&
                            d[i - 2][j - 2] + 1 < best)
                                best = d[i - 2][j - 2] + 1;
                        d[i][j] = best;
                }
        return d[n][m];
}

const char *conffile_suggest(const char *word, const char *const *candidates, size_t n) {
        const char *best = NULL;
        unsigned best_d = UINT_MAX, limit;
        size_t len = word ? strlen(word) : 0;

        if (len == 0)
                return NULL;
        /* Close means a slip of the keyboard, not another word: one edit for a short word, two
         * for a longer one, and never half of it. */
        limit = len <= 4 ? 1 : 2;
        for (size_t i = 0; i < n; i++) {
                unsigned d = candidates[i] ? edit_distance(word, candidates[i]) : UINT_MAX;

                if (d < best_d) {
                        best_d = d;
                        best = candidates[i];
                }
        }
        return best_d <= limit && best_d * 2 < len ? best : NULL;
}

const char *conffile_key_suggest(const char *name) {
        const char *names[_CONFFILE_KEY_MAX];

        for (unsigned k = 0; k < _CONFFILE_KEY_MAX; k++)
                names[k] = keys[k].name;
        return conffile_suggest(name, names, _CONFFILE_KEY_MAX);
}

/* The closest of the words key k accepts to value (for "did you mean"), when they are a known
 * few; NULL when none is close or the key takes other values. */
static const char *value_suggest(enum conffile_key k, const char *value) {
        static const char *const hidden[] = { "restore", "refuse", "ignore" };
        static const char *const smart[] = { "ignore", "flag", "refuse" };
        static const char *const policy[] = { "other", "batch", "idle" };
        const char *ciphers[_KEYSTREAM_CIPHER_MAX + 1];
        size_t n = 0;

        switch (keys[k].type) {
        case KEY_BOOL:
                return conffile_suggest(value, keys[k].words, 2);
        case KEY_POLICY:
                return conffile_suggest(value, policy, sizeof(policy) / sizeof(policy[0]));
        case KEY_CIPHER:
                for (int c = 0; c < _KEYSTREAM_CIPHER_MAX; c++)
                        if (keystream_cipher_name((enum keystream_cipher) c))
                                ciphers[n++] = keystream_cipher_name((enum keystream_cipher) c);
                return conffile_suggest(value, ciphers, n);
        default:
                if (k == CONFFILE_SMART_POLICY)
                        return conffile_suggest(value, smart, sizeof(smart) / sizeof(smart[0]));
                return k == CONFFILE_HIDDEN_AREA ? conffile_suggest(value, hidden, sizeof(hidden) / sizeof(hidden[0]))
                                                 : NULL;
        }
}

static const struct {
        enum conffile_policy policy;
        const char *name;               /* chrt(1)'s word for it */
} policies[] = {
        { CONFFILE_POLICY_OTHER, "other" },
        { CONFFILE_POLICY_BATCH, "batch" },
        { CONFFILE_POLICY_IDLE, "idle" },
};

const char *conffile_policy_name(enum conffile_policy p) {
        for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
                if (policies[i].policy == p)
                        return policies[i].name;
        return NULL;
}

int conffile_policy_from_name(const char *name, enum conffile_policy *ret) {
        for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
                if (strcmp(policies[i].name, name) == 0) {
                        *ret = policies[i].policy;
                        return 0;
                }
        return -EINVAL;
}

bool conffile_key_is_list(enum conffile_key key) {
        return (unsigned) key < _CONFFILE_KEY_MAX && keys[key].type == KEY_LIST;
}

bool conffile_key_reloads(enum conffile_key key) {
        return (unsigned) key < _CONFFILE_KEY_MAX && keys[key].reloads;
}

/* A decimal integer from min to max, digits only. 0 or -EINVAL. */
static int parse_uint(const char *s, unsigned min, unsigned max, unsigned *ret) {
        unsigned long n;
        char *end;

        if (!(*s >= '0' && *s <= '9'))
                return -EINVAL;
        errno = 0;
        n = strtoul(s, &end, 10);
        if (errno || *end || n < min || n > max)
                return -EINVAL;
        *ret = (unsigned) n;
        return 0;
}

/* Decimal seconds from min to max: digits with at most one point ("5", "0.25"), no sign, exponent
 * or infinity. 0 or -EINVAL. */
static int parse_seconds(const char *s, double min, double max, double *ret) {
        unsigned points = 0;
        const char *p;
        char *end;
        double v;

        if (!(*s >= '0' && *s <= '9'))
                return -EINVAL;
        for (p = s; *p; p++)
                if (*p == '.')
                        points++;
                else if (!(*p >= '0' && *p <= '9'))
                        return -EINVAL;
        if (points > 1 || p[-1] == '.')
                return -EINVAL;
        errno = 0;
        v = strtod(s, &end);
        if (errno || *end || !(v >= min && v <= max))
                return -EINVAL;
        *ret = v;
        return 0;
}

/* Replace the string *dst by a copy of s. 0 or -ENOMEM. */
static int set_string(char **dst, const char *s) {
        char *copy = strdup(s);

        if (!copy)
                return -ENOMEM;
        free(*dst);
        *dst = copy;
        return 0;
}

static int value_error(char *msg, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int value_error(char *msg, size_t len, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, len, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

/* The value of key is not one it takes: its message, and the closest word it takes, if any. */
static int invalid_error(char *msg, size_t len, enum conffile_key key, const char *value) {
        const char *hint = value_suggest(key, value);

        if (hint)
                return value_error(msg, len, "%s; did you mean %s?", keys[key].invalid, hint);
        return value_error(msg, len, "%s", keys[key].invalid);
}

/* A KEY_SIZE or KEY_RATE field holds a uint32_t or a uint64_t, as its size says. */
static void uint_store(void *p, size_t size, uint64_t v) {
        if (size == sizeof(uint32_t))
                *(uint32_t *) p = (uint32_t) v;
        else
                *(uint64_t *) p = v;
}

static uint64_t uint_load(const void *p, size_t size) {
        return size == sizeof(uint32_t) ? *(const uint32_t *) p : *(const uint64_t *) p;
}

int conffile_set(struct conffile *c, enum conffile_key key, const char *value, char *msg, size_t len) {
        const struct key_def *d;
        void *f;
        uint64_t v;
        int r = 0;

        if (!value || !*value)
                return value_error(msg, len, "no value");
        if ((unsigned) key >= _CONFFILE_KEY_MAX)
                return value_error(msg, len, "unknown key");
        d = &keys[key];
        f = field(c, key);
        switch (d->type) {
        case KEY_UINT:
                if (parse_uint(value, (unsigned) d->min, (unsigned) d->max, f) < 0)
                        return invalid_error(msg, len, key, value);
                break;
        case KEY_SIZE:
                if (units_parse_size(value, &v) < 0 || v < d->min || v > d->max || (d->step && v % d->step))
                        return invalid_error(msg, len, key, value);
                uint_store(f, d->size, v);
                break;
        case KEY_RATE:
                if (units_parse_rate(value, &v) < 0)
                        return invalid_error(msg, len, key, value);
                uint_store(f, d->size, v);
                break;
        case KEY_SECONDS:
                if (parse_seconds(value, d->seconds_min, d->seconds_max, f) < 0)
                        return invalid_error(msg, len, key, value);
                break;
        case KEY_CIPHER:
                if (keystream_cipher_from_name(value, f) < 0)
                        return invalid_error(msg, len, key, value);
                break;
        case KEY_POLICY:
                if (conffile_policy_from_name(value, f) < 0)
                        return invalid_error(msg, len, key, value);
                break;
        case KEY_BOOL:
                if (strcmp(value, d->words[0]) == 0)
                        *(bool *) f = false;
                else if (strcmp(value, d->words[1]) == 0)
                        *(bool *) f = true;
                else
                        return invalid_error(msg, len, key, value);
                break;
        case KEY_STRING:
                if (d->valid && !d->valid(value))
                        return invalid_error(msg, len, key, value);
                r = set_string(f, value);
                break;
        case KEY_LIST:
                if (d->valid && !d->valid(value))
                        return invalid_error(msg, len, key, value);
                if (key == CONFFILE_REPORT_HEADER && c->n_report_header >= COLLECTOR_HEADERS_MAX)
                        return value_error(msg, len, "more than %d report-header lines", COLLECTOR_HEADERS_MAX);
                if (c->n_allow + c->n_deny >= CONFFILE_PATTERNS_MAX)
                        return value_error(msg, len, "more than %d allow and deny patterns", CONFFILE_PATTERNS_MAX);
                r = strv_append(f, list_count(c, key), value);
                break;
        }
        if (r < 0)
                return r;
        c->set[key] = true;
        return 0;
}

static int line_error(char *err, size_t len, const char *name, unsigned line, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
static int line_error(char *err, size_t len, const char *name, unsigned line, const char *fmt, ...) {
        char msg[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        snprintf(err, len, "%s:%u: %s", name, line, msg);
        return -EINVAL;
}

/* One line (len bytes, no newline) of the file. 0, -EINVAL with the message in err, -ENOMEM. */
static int parse_line(struct conffile *c, const char *name, unsigned line, const char *text, size_t len,
                      conffile_check_fn check, char *err, size_t err_len) {
        _cleanup_free_ char *copy = NULL;
        char *s, *eq, *key_s, *value, msg[256] = "";
        enum conffile_key key;
        int r;

        if (memchr(text, '\0', len))
                return line_error(err, err_len, name, line, "contains a NUL byte");
        copy = strndup(text, len);
        if (!copy)
                return -ENOMEM;
        s = strip_blanks(copy);
        if (!*s || *s == '#')
                return 0;
        eq = strchr(s, '=');
        if (!eq)
                return line_error(err, err_len, name, line, "expected \"key = value\", got \"%.64s\"", s);
        *eq = '\0';
        key_s = strip_blanks(s);
        value = strip_blanks(eq + 1);
        if (!*key_s)
                return line_error(err, err_len, name, line, "expected \"key = value\": no key before '='");
        if (conffile_key_from_name(key_s, &key) < 0) {
                const char *hint = conffile_key_suggest(key_s);

                if (hint)
                        return line_error(err, err_len, name, line, "unknown key \"%.64s\"; did you mean %s?", key_s,
                                          hint);
                return line_error(err, err_len, name, line, "unknown key \"%.64s\"", key_s);
        }
        if (c->set[key] && !conffile_key_is_list(key))
                return line_error(err, err_len, name, line, "duplicate key \"%s\" (first set on line %u)",
                                  conffile_key_name(key), c->line[key]);
        if (!*value)
                return line_error(err, err_len, name, line, "%s: no value", conffile_key_name(key));
        if (keys[key].file_absolute && value[0] != '/')
                return line_error(err, err_len, name, line, "%s = %.128s: not an absolute path", conffile_key_name(key),
                                  value);
        r = conffile_set(c, key, value, msg, sizeof(msg));
        if (r == -EINVAL || (r == 0 && check && check(key, value, msg, sizeof(msg)) < 0)) {
                /* A header's value may be a secret (Authorization): its name only, also here. */
                if (key == CONFFILE_REPORT_HEADER)
                        return line_error(err, err_len, name, line, "%s = %.*s: (value not shown): %s",
                                          conffile_key_name(key), (int) strspn(value, HEADER_NAME_CHARS), value, msg);
                return line_error(err, err_len, name, line, "%s = %.128s: %s", conffile_key_name(key), value, msg);
        }
        if (r < 0)
                return r;
        if (!c->line[key])
                c->line[key] = line;
        return 0;
}

int conffile_parse(struct conffile *c, const char *name, const char *text, size_t len, conffile_check_fn check,
                   char *err, size_t err_len) {
        const char *p = text, *end = text + len;
        unsigned line = 0, errors = 0;
        size_t used = 0;
        char one[1024];
        int r;

        *c = (struct conffile) {};
        if (err_len)
                err[0] = '\0';
        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t) (end - p));
                size_t n = eol ? (size_t) (eol - p) : (size_t) (end - p);

                r = parse_line(c, name, ++line, p, n, check, one, sizeof(one));
                if (r == -EINVAL) {
                        /* Go on: every problem of the file at once, one line each. */
                        if (used < err_len) {
                                int w = snprintf(err + used, err_len - used, "%s%s", errors ? "\n" : "", one);

                                used += w > 0 ? (size_t) w : 0;
                        }
                        errors++;
                } else if (r < 0)
                        return r;
                p += n + (eol ? 1 : 0);
        }
        return errors ? -EINVAL : 0;
}

int conffile_load(struct conffile *c, const char *path, conffile_check_fn check, char *err, size_t err_len) {
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int fd = -1;
        size_t len = 0;
        ssize_t n;

        *c = (struct conffile) {};
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                int e = errno;

                snprintf(err, err_len, "%s: %s", path, strerror(e));
                return -e;
        }
        text = malloc(CONFFILE_SIZE_MAX + 1);
        if (!text)
                return -ENOMEM;
        /* One byte more than allowed: a file that fills it is too large. */
        while (len <= CONFFILE_SIZE_MAX && (n = read(fd, text + len, CONFFILE_SIZE_MAX + 1 - len)) != 0) {
                if (n < 0) {
                        int e = errno;

                        if (e == EINTR)
                                continue;
                        snprintf(err, err_len, "%s: %s", path, strerror(e));
                        return -e;
                }
                len += (size_t) n;
        }
        if (len > CONFFILE_SIZE_MAX) {
                snprintf(err, err_len, "%s: larger than %u bytes", path, CONFFILE_SIZE_MAX);
                return -EFBIG;
        }
        return conffile_parse(c, path, text, len, check, err, err_len);
}

static int strv_copy(char ***dst, size_t *n_dst, char *const *src, size_t n_src) {
        char **v = NULL;
        size_t n = 0;

        for (size_t i = 0; i < n_src; i++)
                if (strv_append(&v, &n, src[i]) < 0) {
                        strv_free(v);
                        return -ENOMEM;
                }
        strv_free(*dst);
        *dst = v;
        *n_dst = n;
        return 0;
}

int conffile_merge(struct conffile *dst, const struct conffile *src) {
        int r = 0;

        for (enum conffile_key k = 0; k < _CONFFILE_KEY_MAX && r >= 0; k++) {
                if (!src->set[k])
                        continue;
                switch (keys[k].type) {
                case KEY_STRING:
                        r = set_string(field(dst, k), *(char *const *) cfield(src, k));
                        break;
                case KEY_LIST:
                        r = strv_copy(field(dst, k), list_count(dst, k), *(char **const *) cfield(src, k),
                                      clist_count(src, k));
                        break;
                default:
                        /* A scalar: a number, a cipher, a policy or a bool. */
                        memcpy(field(dst, k), cfield(src, k), keys[k].size);
                        break;
                }
                if (r >= 0) {
                        dst->set[k] = true;
                        dst->line[k] = src->line[k];
                }
        }
        return r;
}

static bool str_same(const char *a, const char *b) {
        return a == b || (a && b && strcmp(a, b) == 0);
}

static bool strv_same(char *const *a, size_t na, char *const *b, size_t nb) {
        if (na != nb)
                return false;
        for (size_t i = 0; i < na; i++)
                if (strcmp(a[i], b[i]) != 0)
                        return false;
        return true;
}

bool conffile_same(const struct conffile *a, const struct conffile *b, enum conffile_key key) {
        const void *fa, *fb;

        if ((unsigned) key >= _CONFFILE_KEY_MAX)
                return true;
        fa = cfield(a, key);
        fb = cfield(b, key);
        switch (keys[key].type) {
        case KEY_UINT:
                return *(const unsigned *) fa == *(const unsigned *) fb;
        case KEY_SIZE:
        case KEY_RATE:
                return uint_load(fa, keys[key].size) == uint_load(fb, keys[key].size);
        case KEY_SECONDS:
                return *(const double *) fa == *(const double *) fb;
        case KEY_CIPHER:
                return *(const enum keystream_cipher *) fa == *(const enum keystream_cipher *) fb;
        case KEY_POLICY:
                return *(const enum conffile_policy *) fa == *(const enum conffile_policy *) fb;
        case KEY_BOOL:
                return *(const bool *) fa == *(const bool *) fb;
        case KEY_STRING:
                return str_same(*(char *const *) fa, *(char *const *) fb);
        case KEY_LIST:
                return strv_same(*(char **const *) fa, clist_count(a, key), *(char **const *) fb, clist_count(b, key));
        }
        return true;
}

static char *format_strv(char *buf, size_t n, char *const *v, size_t count) {
        size_t used = 0;

        buf[0] = '\0';
        if (count == 0)
                snprintf(buf, n, "(none)");
        for (size_t i = 0; i < count && used < n; i++) {
                int w = snprintf(buf + used, n - used, "%s%s", i ? ", " : "", v[i]);

                if (w < 0)
                        break;
                used += (size_t) w;
        }
        return buf;
}

char *conffile_format(const struct conffile *c, enum conffile_key key, char *buf, size_t n) {
        const struct key_def *d;
        const char *s = NULL;
        const void *f;

        if ((unsigned) key >= _CONFFILE_KEY_MAX) {
                snprintf(buf, n, "(none)");
                return buf;
        }
        d = &keys[key];
        f = cfield(c, key);
        switch (d->type) {
        case KEY_UINT:
                snprintf(buf, n, "%u", *(const unsigned *) f);
                return buf;
        case KEY_SIZE:
        case KEY_RATE:
                snprintf(buf, n, "%" PRIu64, uint_load(f, d->size));
                return buf;
        case KEY_SECONDS:
                snprintf(buf, n, "%.9g", *(const double *) f);
                return buf;
        case KEY_CIPHER:
                s = keystream_cipher_name(*(const enum keystream_cipher *) f);
                break;
        case KEY_POLICY:
                s = conffile_policy_name(*(const enum conffile_policy *) f);
                break;
        case KEY_BOOL:
                s = d->words[*(const bool *) f];
                break;
        case KEY_STRING:
                s = *(char *const *) f;
                break;
        case KEY_LIST:
                return format_strv(buf, n, *(char **const *) f, clist_count(c, key));
        }
        snprintf(buf, n, "%s", s ? s : "(none)");
        return buf;
}

void conffile_done(struct conffile *c) {
        if (!c)
                return;
        for (enum conffile_key k = 0; k < _CONFFILE_KEY_MAX; k++)
                if (keys[k].type == KEY_STRING)
                        free(*(char **) field(c, k));
                else if (keys[k].type == KEY_LIST)
                        strv_free(*(char ***) field(c, k));
        *c = (struct conffile) {};
}

/* The first of patterns matching node or one of links, or NULL. */
static const char *match_any(char *const *patterns, size_t n, const char *node, char *const *links) {
        for (size_t i = 0; i < n; i++) {
                if (fnmatch(patterns[i], node, FNM_PATHNAME) == 0)
                        return patterns[i];
                for (size_t j = 0; links && links[j]; j++)
                        if (fnmatch(patterns[i], links[j], FNM_PATHNAME) == 0)
                                return patterns[i];
        }
        return NULL;
}

enum conffile_match conffile_match_device(const struct conffile *c, const char *node, char *const *links,
                                          const char **pattern) {
        const char *p = match_any(c->deny, c->n_deny, node, links);

        if (pattern)
                *pattern = p;
        if (p)
                return CONFFILE_DENIED;
        if (c->n_allow > 0 && !match_any(c->allow, c->n_allow, node, links))
                return CONFFILE_NOT_ALLOWED;
        return CONFFILE_ALLOWED;
}
