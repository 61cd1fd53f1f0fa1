/* The configuration file of wiped: parsing, checking, merging and matching device patterns. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "conffile.h"
#include "method.h"
#include "units.h"

static const struct {
        const char *name;
        bool list;                      /* may be repeated: each line adds one value */
} conffile_keys[_CONFFILE_KEY_MAX] = {
        [CONFFILE_THREADS] = { "threads" },
        [CONFFILE_BUFFERS] = { "buffers" },
        [CONFFILE_IO_SIZE] = { "io-size" },
        [CONFFILE_QUEUE_DEPTH] = { "queue-depth" },
        [CONFFILE_MAX_RATE] = { "max-rate" },
        [CONFFILE_SOCKET] = { "socket" },
        [CONFFILE_STATE_DIR] = { "state-dir" },
        [CONFFILE_SOCKET_GROUP] = { "socket-group" },
        [CONFFILE_METHOD] = { "method" },
        [CONFFILE_VERIFY] = { "verify" },
        [CONFFILE_CIPHER] = { "cipher" },
        [CONFFILE_CHUNK_SIZE] = { "chunk-size" },
        [CONFFILE_CHECKPOINT_INTERVAL] = { "checkpoint-interval" },
        [CONFFILE_CHECKPOINT_BYTES] = { "checkpoint-bytes" },
        [CONFFILE_RESUME] = { "resume" },
        [CONFFILE_HISTORY_MAX_AGE] = { "history-max-age" },
        [CONFFILE_MAX_BAD] = { "max-bad" },
        [CONFFILE_CLIENT_TIMEOUT] = { "client-timeout" },
        [CONFFILE_ALLOW] = { "allow", true },
        [CONFFILE_DENY] = { "deny", true },
};

const char *conffile_key_name(enum conffile_key key) {
        return (unsigned) key < _CONFFILE_KEY_MAX ? conffile_keys[key].name : NULL;
}

int conffile_key_from_name(const char *name, enum conffile_key *ret) {
        for (unsigned k = 0; name && k < _CONFFILE_KEY_MAX; k++)
                if (strcmp(name, conffile_keys[k].name) == 0) {
                        *ret = (enum conffile_key) k;
                        return 0;
                }
        return -ENOENT;
}

bool conffile_key_is_list(enum conffile_key key) {
        return (unsigned) key < _CONFFILE_KEY_MAX && conffile_keys[key].list;
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

static void strv_free(char **v) {
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
}

/* Append a copy of s to the NULL-terminated list *v of *n entries. 0 or -ENOMEM. */
static int strv_append(char ***v, size_t *n, const char *s) {
        char **nv = realloc(*v, (*n + 2) * sizeof(*nv));

        if (!nv)
                return -ENOMEM;
        *v = nv;
        nv[*n] = strdup(s);
        if (!nv[*n])
                return -ENOMEM;
        nv[++*n] = NULL;
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

int conffile_set(struct conffile *c, enum conffile_key key, const char *value, char *msg, size_t len) {
        uint64_t v;
        int r = 0;

        if (!value || !*value)
                return value_error(msg, len, "no value");
        switch (key) {
        case CONFFILE_THREADS:
                if (parse_uint(value, 1, CONFFILE_THREADS_MAX, &c->threads) < 0)
                        return value_error(msg, len, "invalid thread count (1..%d)", CONFFILE_THREADS_MAX);
                break;
        case CONFFILE_BUFFERS:
                if (parse_uint(value, 1, CONFFILE_BUFFERS_MAX, &c->buffers) < 0)
                        return value_error(msg, len, "invalid buffer count (1..%d)", CONFFILE_BUFFERS_MAX);
                break;
        case CONFFILE_QUEUE_DEPTH:
                /* 0 means the default: from the device. */
                if (parse_uint(value, 0, CONFFILE_QUEUE_DEPTH_MAX, &c->queue_depth) < 0)
                        return value_error(msg, len, "invalid queue depth (0..%d)", CONFFILE_QUEUE_DEPTH_MAX);
                break;
        case CONFFILE_IO_SIZE:
                if (units_parse_size(value, &v) < 0 || v < 4096 || v > CONFFILE_IO_SIZE_MAX || v % 4096)
                        return value_error(msg, len, "invalid I/O size (4K..64M, multiple of 4K)");
                c->io_size = (uint32_t) v;
                break;
        case CONFFILE_MAX_RATE:
                if (units_parse_rate(value, &v) < 0)
                        return value_error(msg, len, "invalid rate (e.g. 200M for 200 MB/s, 0 for none)");
                c->max_rate = v;
                break;
        case CONFFILE_SOCKET:
                r = set_string(&c->socket, value);
                break;
        case CONFFILE_STATE_DIR:
                r = set_string(&c->state_dir, value);
                break;
        case CONFFILE_SOCKET_GROUP:
                if (strpbrk(value, " \t:"))
                        return value_error(msg, len, "invalid group name");
                r = set_string(&c->socket_group, value);
                break;
        case CONFFILE_METHOD:
                if (!method_find(value))
                        return value_error(msg, len, "unknown method (see wipectl methods)");
                r = set_string(&c->method, value);
                break;
        case CONFFILE_VERIFY:
                r = set_string(&c->verify, value);
                break;
        case CONFFILE_CIPHER:
                if (keystream_cipher_from_name(value, &c->cipher) < 0)
                        return value_error(msg, len, "unknown cipher (auto, aes-128-ctr, chacha20)");
                break;
        case CONFFILE_CHUNK_SIZE:
                if (units_parse_size(value, &v) < 0 || v < CONFFILE_CHUNK_SIZE_MIN || v > CONFFILE_CHUNK_SIZE_MAX ||
                    v % CONFFILE_CHUNK_SIZE_MIN)
                        return value_error(msg, len, "invalid chunk size (1M..1G, multiple of 1M)");
                c->chunk_size = v;
                break;
        case CONFFILE_CHECKPOINT_INTERVAL:
                if (parse_seconds(value, CONFFILE_CHECKPOINT_INTERVAL_MIN, CONFFILE_CHECKPOINT_INTERVAL_MAX,
                                  &c->checkpoint_interval) < 0)
                        return value_error(msg, len, "invalid interval (seconds, 0.1..3600)");
                break;
        case CONFFILE_CHECKPOINT_BYTES:
                if (units_parse_size(value, &v) < 0 || v < CONFFILE_CHECKPOINT_BYTES_MIN ||
                    v > CONFFILE_CHECKPOINT_BYTES_MAX)
                        return value_error(msg, len, "invalid size (1M..1T)");
                c->checkpoint_bytes = v;
                break;
        case CONFFILE_RESUME:
                if (strcmp(value, "auto") == 0)
                        c->resume_manual = false;
                else if (strcmp(value, "manual") == 0)
                        c->resume_manual = true;
                else
                        return value_error(msg, len, "unknown resume mode (auto, manual)");
                break;
        case CONFFILE_HISTORY_MAX_AGE:
                if (parse_uint(value, 0, CONFFILE_HISTORY_MAX_AGE_MAX, &c->history_max_age_days) < 0)
                        return value_error(msg, len, "invalid age (days, 0..%d; 0: forever)",
                                           CONFFILE_HISTORY_MAX_AGE_MAX);
                break;
        case CONFFILE_MAX_BAD:
                if (units_parse_size(value, &v) < 0 || v > CONFFILE_MAX_BAD_MAX)
                        return value_error(msg, len, "invalid size of bad sectors (0..1P)");
                c->max_bad = v;
                break;
        case CONFFILE_CLIENT_TIMEOUT:
                if (parse_uint(value, 1, CONFFILE_CLIENT_TIMEOUT_MAX, &c->client_timeout) < 0)
                        return value_error(msg, len, "invalid timeout (seconds, 1..%d)", CONFFILE_CLIENT_TIMEOUT_MAX);
                break;
        case CONFFILE_ALLOW:
        case CONFFILE_DENY:
                if (value[0] != '/')
                        return value_error(msg, len, "not an absolute path pattern (like /dev/disk/by-id/usb-*)");
                if (c->n_allow + c->n_deny >= CONFFILE_PATTERNS_MAX)
                        return value_error(msg, len, "more than %d allow and deny patterns", CONFFILE_PATTERNS_MAX);
                r = key == CONFFILE_ALLOW ? strv_append(&c->allow, &c->n_allow, value) :
                                            strv_append(&c->deny, &c->n_deny, value);
                break;
        default:
                return value_error(msg, len, "unknown key");
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

static bool is_blank(char ch) {
        return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v';
}

/* s without the blanks at either end (in place). */
static char *strip(char *s) {
        size_t n;

        while (is_blank(*s))
                s++;
        n = strlen(s);
        while (n > 0 && is_blank(s[n - 1]))
                s[--n] = '\0';
        return s;
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
        s = strip(copy);
        if (!*s || *s == '#')
                return 0;
        eq = strchr(s, '=');
        if (!eq)
                return line_error(err, err_len, name, line, "expected \"key = value\", got \"%.64s\"", s);
        *eq = '\0';
        key_s = strip(s);
        value = strip(eq + 1);
        if (!*key_s)
                return line_error(err, err_len, name, line, "expected \"key = value\": no key before '='");
        if (conffile_key_from_name(key_s, &key) < 0)
                return line_error(err, err_len, name, line, "unknown key \"%.64s\"", key_s);
        if (c->set[key] && !conffile_key_is_list(key))
                return line_error(err, err_len, name, line, "duplicate key \"%s\" (first set on line %u)",
                                  conffile_key_name(key), c->line[key]);
        if (!*value)
                return line_error(err, err_len, name, line, "%s: no value", conffile_key_name(key));
        if ((key == CONFFILE_SOCKET || key == CONFFILE_STATE_DIR) && value[0] != '/')
                return line_error(err, err_len, name, line, "%s = %.128s: not an absolute path", conffile_key_name(key),
                                  value);
        r = conffile_set(c, key, value, msg, sizeof(msg));
        if (r == -EINVAL || (r == 0 && check && check(key, value, msg, sizeof(msg)) < 0))
                return line_error(err, err_len, name, line, "%s = %.128s: %s", conffile_key_name(key), value, msg);
        if (r < 0)
                return r;
        if (!c->line[key])
                c->line[key] = line;
        return 0;
}

int conffile_parse(struct conffile *c, const char *name, const char *text, size_t len, conffile_check_fn check,
                   char *err, size_t err_len) {
        const char *p = text, *end = text + len;
        unsigned line = 0;
        int r;

        *c = (struct conffile) {};
        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t) (end - p));
                size_t n = eol ? (size_t) (eol - p) : (size_t) (end - p);

                r = parse_line(c, name, ++line, p, n, check, err, err_len);
                if (r < 0)
                        return r;
                p += n + (eol ? 1 : 0);
        }
        return 0;
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

        for (unsigned k = 0; k < _CONFFILE_KEY_MAX && r >= 0; k++) {
                if (!src->set[k])
                        continue;
                switch ((enum conffile_key) k) {
                case CONFFILE_THREADS:
                        dst->threads = src->threads;
                        break;
                case CONFFILE_BUFFERS:
                        dst->buffers = src->buffers;
                        break;
                case CONFFILE_IO_SIZE:
                        dst->io_size = src->io_size;
                        break;
                case CONFFILE_QUEUE_DEPTH:
                        dst->queue_depth = src->queue_depth;
                        break;
                case CONFFILE_MAX_RATE:
                        dst->max_rate = src->max_rate;
                        break;
                case CONFFILE_SOCKET:
                        r = set_string(&dst->socket, src->socket);
                        break;
                case CONFFILE_STATE_DIR:
                        r = set_string(&dst->state_dir, src->state_dir);
                        break;
                case CONFFILE_SOCKET_GROUP:
                        r = set_string(&dst->socket_group, src->socket_group);
                        break;
                case CONFFILE_METHOD:
                        r = set_string(&dst->method, src->method);
                        break;
                case CONFFILE_VERIFY:
                        r = set_string(&dst->verify, src->verify);
                        break;
                case CONFFILE_CIPHER:
                        dst->cipher = src->cipher;
                        break;
                case CONFFILE_CHUNK_SIZE:
                        dst->chunk_size = src->chunk_size;
                        break;
                case CONFFILE_CHECKPOINT_INTERVAL:
                        dst->checkpoint_interval = src->checkpoint_interval;
                        break;
                case CONFFILE_CHECKPOINT_BYTES:
                        dst->checkpoint_bytes = src->checkpoint_bytes;
                        break;
                case CONFFILE_RESUME:
                        dst->resume_manual = src->resume_manual;
                        break;
                case CONFFILE_HISTORY_MAX_AGE:
                        dst->history_max_age_days = src->history_max_age_days;
                        break;
                case CONFFILE_MAX_BAD:
                        dst->max_bad = src->max_bad;
                        break;
                case CONFFILE_CLIENT_TIMEOUT:
                        dst->client_timeout = src->client_timeout;
                        break;
                case CONFFILE_ALLOW:
                        r = strv_copy(&dst->allow, &dst->n_allow, src->allow, src->n_allow);
                        break;
                case CONFFILE_DENY:
                        r = strv_copy(&dst->deny, &dst->n_deny, src->deny, src->n_deny);
                        break;
                default:
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
        switch (key) {
        case CONFFILE_THREADS:
                return a->threads == b->threads;
        case CONFFILE_BUFFERS:
                return a->buffers == b->buffers;
        case CONFFILE_IO_SIZE:
                return a->io_size == b->io_size;
        case CONFFILE_QUEUE_DEPTH:
                return a->queue_depth == b->queue_depth;
        case CONFFILE_MAX_RATE:
                return a->max_rate == b->max_rate;
        case CONFFILE_SOCKET:
                return str_same(a->socket, b->socket);
        case CONFFILE_STATE_DIR:
                return str_same(a->state_dir, b->state_dir);
        case CONFFILE_SOCKET_GROUP:
                return str_same(a->socket_group, b->socket_group);
        case CONFFILE_METHOD:
                return str_same(a->method, b->method);
        case CONFFILE_VERIFY:
                return str_same(a->verify, b->verify);
        case CONFFILE_CIPHER:
                return a->cipher == b->cipher;
        case CONFFILE_CHUNK_SIZE:
                return a->chunk_size == b->chunk_size;
        case CONFFILE_CHECKPOINT_INTERVAL:
                return a->checkpoint_interval == b->checkpoint_interval;
        case CONFFILE_CHECKPOINT_BYTES:
                return a->checkpoint_bytes == b->checkpoint_bytes;
        case CONFFILE_RESUME:
                return a->resume_manual == b->resume_manual;
        case CONFFILE_HISTORY_MAX_AGE:
                return a->history_max_age_days == b->history_max_age_days;
        case CONFFILE_MAX_BAD:
                return a->max_bad == b->max_bad;
        case CONFFILE_CLIENT_TIMEOUT:
                return a->client_timeout == b->client_timeout;
        case CONFFILE_ALLOW:
                return strv_same(a->allow, a->n_allow, b->allow, b->n_allow);
        case CONFFILE_DENY:
                return strv_same(a->deny, a->n_deny, b->deny, b->n_deny);
        default:
                return true;
        }
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
        const char *s = NULL;

        switch (key) {
        case CONFFILE_THREADS:
                snprintf(buf, n, "%u", c->threads);
                return buf;
        case CONFFILE_BUFFERS:
                snprintf(buf, n, "%u", c->buffers);
                return buf;
        case CONFFILE_IO_SIZE:
                snprintf(buf, n, "%" PRIu32, c->io_size);
                return buf;
        case CONFFILE_QUEUE_DEPTH:
                snprintf(buf, n, "%u", c->queue_depth);
                return buf;
        case CONFFILE_MAX_RATE:
                snprintf(buf, n, "%" PRIu64, c->max_rate);
                return buf;
        case CONFFILE_SOCKET:
                s = c->socket;
                break;
        case CONFFILE_STATE_DIR:
                s = c->state_dir;
                break;
        case CONFFILE_SOCKET_GROUP:
                s = c->socket_group;
                break;
        case CONFFILE_METHOD:
                s = c->method;
                break;
        case CONFFILE_VERIFY:
                s = c->verify;
                break;
        case CONFFILE_CIPHER:
                s = keystream_cipher_name(c->cipher);
                break;
        case CONFFILE_CHUNK_SIZE:
                snprintf(buf, n, "%" PRIu64, c->chunk_size);
                return buf;
        case CONFFILE_CHECKPOINT_INTERVAL:
                snprintf(buf, n, "%.9g", c->checkpoint_interval);
                return buf;
        case CONFFILE_CHECKPOINT_BYTES:
                snprintf(buf, n, "%" PRIu64, c->checkpoint_bytes);
                return buf;
        case CONFFILE_RESUME:
                s = c->resume_manual ? "manual" : "auto";
                break;
        case CONFFILE_HISTORY_MAX_AGE:
                snprintf(buf, n, "%u", c->history_max_age_days);
                return buf;
        case CONFFILE_MAX_BAD:
                snprintf(buf, n, "%" PRIu64, c->max_bad);
                return buf;
        case CONFFILE_CLIENT_TIMEOUT:
                snprintf(buf, n, "%u", c->client_timeout);
                return buf;
        case CONFFILE_ALLOW:
                return format_strv(buf, n, c->allow, c->n_allow);
        case CONFFILE_DENY:
                return format_strv(buf, n, c->deny, c->n_deny);
        default:
                break;
        }
        snprintf(buf, n, "%s", s ? s : "(none)");
        return buf;
}

void conffile_done(struct conffile *c) {
        if (!c)
                return;
        free(c->socket);
        free(c->state_dir);
        free(c->socket_group);
        free(c->method);
        free(c->verify);
        strv_free(c->allow);
        strv_free(c->deny);
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
