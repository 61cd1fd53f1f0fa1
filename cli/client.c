/* The connection to wiped: one request line out, one reply line back (and, after a watch, a stream
 * of event lines), errors to exit statuses. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "clock.h"
#include "wipectl.h"

#define CLIENT_BUF_INITIAL (64 * 1024)

/* Connect a new socket to path: the fd, or -errno. */
static int client_connect_fd(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        return TAKE_FD(fd);
}

/* The control socket at control refused us: connect to the read-only socket that goes with it
 * instead ($WIPED_STATUS_SOCKET, else protocol_status_socket_path()), where the daemon serves
 * what changes nothing to anyone and refuses the rest with a message that names the fix. Sets
 * c->fd and c->path and returns 0; -errno when there is no such socket to reach (nothing reported). */
static int client_connect_status(struct client *c, const char *control) {
        static char path[sizeof(((struct sockaddr_un *) NULL)->sun_path)];
        const char *env = getenv("WIPED_STATUS_SOCKET");
        _cleanup_free_ char *derived = NULL;
        int fd;

        if (!env || !*env) {
                derived = protocol_status_socket_path(control);
                if (!derived)
                        return -ENOMEM;
                env = derived;
        }
        if (strcmp(env, control) == 0 || strlen(env) >= sizeof(path))
                return -ENOENT;
        fd = client_connect_fd(env);
        if (fd < 0)
                return fd;
        /* c->path is borrowed: it must outlive c, as the caller's path does. */
        strcpy(path, env);
        c->fd = fd;
        c->path = path;
        return 0;
}

int client_connect(struct client *c, const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;

        client_close(c);
        c->path = path;
        c->origin = CLIENT_ORIGIN_TRANSPORT;
        if (strlen(path) >= sizeof(sa.sun_path)) {
                wipectl_error("%s: socket path too long", path);
                return -ENAMETOOLONG;
        }
        strcpy(sa.sun_path, path);

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                int r = -errno;

                c->origin = CLIENT_ORIGIN_LOCAL;
                wipectl_error("%s: cannot create socket: %s", path, strerror(-r));
                return r;
        }
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                int r = -errno;

                if (r == -EACCES || r == -EPERM) {
                        /* Only root and the group may use the control socket; anyone may look
                         * through the read-only one, when there is one. */
                        if (client_connect_status(c, path) == 0)
                                return 0;
                        wipectl_error("%s: permission denied: run as root, or add yourself to the group " WIPECTL_GROUP
                                      ": sudo usermod -aG " WIPECTL_GROUP " $USER (then log in again)", path);
                        return r;
                }
                wipectl_error("%s: cannot connect to wiped: %s", path, strerror(-r));
                return r;
        }
        c->fd = TAKE_FD(fd);
        return 0;
}

void client_close(struct client *c) {
        if (c->fd >= 0)
                close(c->fd);
        c->fd = -1;
        free(c->buf);
        c->buf = NULL;
        c->buf_len = c->buf_size = 0;
}

/* Whether a failed system call should abort the call in progress because the user pressed
 * Ctrl-C; plain EINTR otherwise means "try again". */
static bool client_interrupted(const struct client *c) {
        return c->interrupted && *c->interrupted;
}

/* Judge r = -errno from a failed send() or read() on c. Returns 0 to try again (EINTR without
 * Ctrl-C); else r, for the caller to return, with c->origin set and, unless it was Ctrl-C, the
 * lost connection reported. */
static int client_io_error(struct client *c, int r) {
        if (r == -EINTR && !client_interrupted(c))
                return 0;
        if (r == -EINTR) {
                c->origin = CLIENT_ORIGIN_LOCAL;
                return r;
        }
        c->origin = CLIENT_ORIGIN_TRANSPORT;
        if (r == -EAGAIN || r == -EWOULDBLOCK) {
                /* The receive timeout of client_set_timeout() passed. */
                if (!c->quiet)
                        wipectl_error("%s: wiped does not answer", c->path);
                return -ETIMEDOUT;
        }
        if (!c->quiet)
                wipectl_error("%s: connection lost: %s", c->path, strerror(-r));
        return r;
}

/* Write all of buf. 0 or -errno (reported). */
static int client_send(struct client *c, const char *buf, size_t len) {
        while (len > 0) {
                ssize_t k = send(c->fd, buf, len, MSG_NOSIGNAL);

                if (k < 0) {
                        int r = client_io_error(c, -errno);

                        if (r == 0)
                                continue;
                        return r;
                }
                buf += k;
                len -= (size_t) k;
        }
        return 0;
}

/* The length of the first whole line in c->buf (without its '\n'), searching from byte from;
 * -1 when there is none yet. */
static ssize_t client_find_line(const struct client *c, size_t from) {
        char *nl = c->buf && from < c->buf_len ? memchr(c->buf + from, '\n', c->buf_len - from) : NULL;

        return nl ? nl - c->buf : -1;
}

/* Read once into c->buf, growing it as needed up to CLIENT_REPLY_MAX. 0 when bytes arrived,
 * -EAGAIN on EINTR that should be retried, or -errno (reported; -ECONNRESET when the daemon
 * closed the connection). */
static int client_fill(struct client *c) {
        ssize_t k;

        if (c->buf_len > CLIENT_REPLY_MAX) {
                c->origin = CLIENT_ORIGIN_TRANSPORT;
                wipectl_error("%s: reply longer than %d MiB", c->path, CLIENT_REPLY_MAX >> 20);
                return -EMSGSIZE;
        }
        if (c->buf_len == c->buf_size) {
                size_t size = c->buf_size ? c->buf_size * 2 : CLIENT_BUF_INITIAL;
                char *p;

                if (size > CLIENT_REPLY_MAX + 1)
                        size = CLIENT_REPLY_MAX + 1;
                p = realloc(c->buf, size);
                if (!p) {
                        c->origin = CLIENT_ORIGIN_LOCAL;
                        wipectl_error("%s: out of memory for the reply", c->path);
                        return -ENOMEM;
                }
                c->buf = p;
                c->buf_size = size;
        }
        k = read(c->fd, c->buf + c->buf_len, c->buf_size - c->buf_len);
        if (k < 0) {
                int r = client_io_error(c, -errno);

                return r == 0 ? -EAGAIN : r;
        }
        if (k == 0) {
                c->origin = CLIENT_ORIGIN_TRANSPORT;
                if (!c->quiet)
                        wipectl_error("%s: connection lost: wiped closed the connection", c->path);
                return -ECONNRESET;
        }
        c->buf_len += (size_t) k;
        return 0;
}

/* Read until c->buf holds a whole line; *line_len is its length without the '\n'. 0 or -errno
 * (reported). */
static int client_receive_line(struct client *c, size_t *line_len) {
        size_t scanned = 0;

        for (;;) {
                ssize_t l = client_find_line(c, scanned);
                int r;

                if (l >= 0) {
                        *line_len = (size_t) l;
                        return 0;
                }
                scanned = c->buf_len;
                r = client_fill(c);
                if (r < 0 && r != -EAGAIN)
                        return r;
        }
}

/* Drop the first len bytes (a line and its '\n') from the buffer. */
static void client_consume(struct client *c, size_t len) {
        memmove(c->buf, c->buf + len, c->buf_len - len);
        c->buf_len -= len;
}

/* Whether the reply's "id" is ours; error replies may carry null when the daemon could not read
 * the request. */
static bool client_id_matches(struct json_object *reply, int64_t id, bool ok) {
        struct json_object *v = NULL;

        if (!json_object_object_get_ex(reply, "id", &v) || !v)
                return !ok;
        return json_object_is_type(v, json_type_int) && json_object_get_int64(v) == id;
}

int client_call(struct client *c, struct json_object *request, struct json_object **ret) {
        _cleanup_json_ struct json_object *reply = NULL;
        _cleanup_free_ char *line = NULL;
        const char *message = NULL, *opname = NULL;
        struct json_object *v = NULL;
        size_t len = 0, line_len = 0;
        int64_t id;
        int r;

        *ret = NULL;
        c->origin = CLIENT_ORIGIN_LOCAL;
        c->op = PROTOCOL_OP_INVALID;
        if (json_object_object_get_ex(request, "op", &v))
                opname = json_object_get_string(v);
        c->op = protocol_op_from_name(opname);
        if (c->fd < 0) {
                c->origin = CLIENT_ORIGIN_TRANSPORT;
                wipectl_error("%s: not connected", c->path ? c->path : "wiped");
                return -ENOTCONN;
        }

        id = c->next_id++;
        if (json_object_object_add(request, "id", json_object_new_int64(id)) < 0) {
                wipectl_error("%s: out of memory", opname ? opname : "request");
                return -ENOMEM;
        }
        line = protocol_serialize(request, &len);
        if (!line) {
                wipectl_error("%s: out of memory", opname ? opname : "request");
                return -ENOMEM;
        }
        if (len - 1 > PROTOCOL_LINE_MAX) {
                wipectl_error("%s: request longer than %d bytes", opname ? opname : "request", PROTOCOL_LINE_MAX);
                return -EMSGSIZE;
        }

        r = client_send(c, line, len);
        if (r < 0)
                return r;
        r = client_receive_line(c, &line_len);
        if (r < 0)
                return r;

        r = protocol_reply_parse(c->buf, line_len, &reply, &message);
        if (r == -EBADMSG || !client_id_matches(reply, id, r == 0)) {
                c->origin = CLIENT_ORIGIN_TRANSPORT;
                wipectl_error("%s: %s", c->path, r == -EBADMSG && message ? message : "reply to another request");
                /* The stream is out of step with our requests: do not use it again. */
                client_close(c);
                return -EBADMSG;
        }
        client_consume(c, line_len + 1);
        if (r < 0) {
                c->origin = CLIENT_ORIGIN_DAEMON;
                if (message && *message)
                        wipectl_error("%s", message);
                else
                        wipectl_error("%s: %s", opname ? opname : "request", strerror(-r));
                return r;
        }
        *ret = TAKE_PTR(reply);
        return 0;
}

/* Decode an event line (len bytes at line, its '\n' at line[len]): a JSON object with a string
 * "event". NULL when it is not one. */
static struct json_object *client_event_parse(char *line, size_t len) {
        struct json_object *o, *v = NULL;

        line[len] = '\0';
        o = json_tokener_parse(line);
        line[len] = '\n';
        if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "event", &v) ||
            !json_object_is_type(v, json_type_string)) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

int client_event(struct client *c, int timeout_ms, const sigset_t *sigmask, struct json_object **ret, char **line) {
        int64_t deadline = timeout_ms >= 0 ? mono_ms() + timeout_ms : -1;
        size_t scanned = 0;

        *ret = NULL;
        if (line)
                *line = NULL;
        if (c->fd < 0) {
                c->origin = CLIENT_ORIGIN_TRANSPORT;
                wipectl_error("%s: not connected", c->path ? c->path : "wiped");
                return -ENOTCONN;
        }
        for (;;) {
                ssize_t l = client_find_line(c, scanned);
                struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
                struct timespec ts, *tsp = NULL;
                int r;

                if (l >= 0) {
                        _cleanup_json_ struct json_object *event = client_event_parse(c->buf, (size_t) l);

                        if (!event) {
                                c->origin = CLIENT_ORIGIN_TRANSPORT;
                                wipectl_error("%s: watch: a line that is not an event", c->path);
                                return -EBADMSG;
                        }
                        if (line) {
                                *line = strndup(c->buf, (size_t) l);
                                if (!*line) {
                                        c->origin = CLIENT_ORIGIN_LOCAL;
                                        wipectl_error("%s: out of memory for an event", c->path);
                                        return -ENOMEM;
                                }
                        }
                        client_consume(c, (size_t) l + 1);
                        *ret = TAKE_PTR(event);
                        return 1;
                }
                scanned = c->buf_len;
                if (deadline >= 0) {
                        int64_t left = deadline - mono_ms();

                        if (left < 0)
                                left = 0;
                        ts.tv_sec = left / 1000;
                        ts.tv_nsec = (left % 1000) * 1000000;
                        tsp = &ts;
                }
                r = ppoll(&pfd, 1, tsp, sigmask);
                if (r < 0 && errno == EINTR)
                        return 0;
                if (r < 0) {
                        r = -errno;
                        c->origin = CLIENT_ORIGIN_LOCAL;
                        wipectl_error("%s: poll: %s", c->path, strerror(-r));
                        return r;
                }
                if (r == 0)
                        return 0;
                r = client_fill(c);
                if (r == -EAGAIN || r == -EINTR)
                        return 0;
                if (r < 0)
                        return r;
        }
}

struct json_object *client_request_jobs(enum protocol_op op, const int64_t *ids, size_t n) {
        _cleanup_json_ struct json_object *req = protocol_request_new(0, op);
        struct json_object *a;

        if (!req)
                return NULL;
        if (n > 0) {
                a = json_object_new_array();
                if (!a || json_object_object_add(req, "jobs", a) < 0) {
                        json_object_put(a);
                        return NULL;
                }
                for (size_t i = 0; i < n; i++)
                        if (json_object_array_add(a, json_object_new_int64(ids[i])) < 0)
                                return NULL;
        }
        return TAKE_PTR(req);
}

int client_call_simple(struct client *c, enum protocol_op op, struct json_object **ret) {
        _cleanup_json_ struct json_object *request = protocol_request_new(0, op);

        *ret = NULL;
        if (!request) {
                c->origin = CLIENT_ORIGIN_LOCAL;
                wipectl_error("%s: out of memory", protocol_op_name(op));
                return -ENOMEM;
        }
        return client_call(c, request, ret);
}

int client_connect_call(struct client *c, const char *path, struct json_object *request, struct json_object **ret) {
        int r;

        *ret = NULL;
        r = client_connect(c, path);
        if (r >= 0)
                r = client_call(c, request, ret);
        if (r < 0) {
                r = client_translate_errno(c, r);
                client_close(c);
        }
        return r;
}

int client_reconnect(struct client *c, const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;

        client_close(c);
        c->path = path;
        c->origin = CLIENT_ORIGIN_TRANSPORT;
        if (strlen(path) >= sizeof(sa.sun_path))
                return client_connect(c, path);
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return client_connect(c, path);
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                /* No socket (between the old daemon's unlink and the new one's bind), nobody
                 * listening (a stale socket), or a backlog that is being torn down. */
                if (errno == ENOENT || errno == ECONNREFUSED || errno == ECONNRESET || errno == EAGAIN)
                        return -EAGAIN;
                /* Anything else (permission, a path that is not a socket) is for good: said as
                 * every first connection says it. */
                return client_connect(c, path);
        }
        c->fd = TAKE_FD(fd);
        return 0;
}

int client_set_timeout(struct client *c, int64_t timeout_ms) {
        struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000 };

        if (c->fd < 0)
                return -ENOTCONN;
        /* A timeout that rounds to 0 would mean none. */
        if (timeout_ms > 0 && tv.tv_sec == 0 && tv.tv_usec == 0)
                tv.tv_usec = 1000;
        if (setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
                return -errno;
        return 0;
}

bool client_lost(const struct client *c, int r) {
        if (r >= 0 || c->origin != CLIENT_ORIGIN_TRANSPORT)
                return false;
        switch (-r) {
        case ECONNRESET:
        case EPIPE:
        case ENOTCONN:
        case ECONNREFUSED:
        case ENOENT:
        case ETIMEDOUT:
        case EAGAIN:
                return true;
        default:
                return false;
        }
}

/* The exit status for errno e of c, and the one place that decides it. */
static int client_exit_status(const struct client *c, int e) {
        if (e == 0)
                return WIPECTL_EXIT_OK;
        /* The daemon's EACCES is a device its configuration denies: a refusal, below. */
        if (e == EPERM || (e == EACCES && c->origin != CLIENT_ORIGIN_DAEMON))
                return WIPECTL_EXIT_PERMISSION;

        switch (c->origin) {
        case CLIENT_ORIGIN_TRANSPORT:
                /* A daemon that answers nonsense is reachable; anything else is not. */
                if (e == EBADMSG || e == EMSGSIZE || e == EPROTO)
                        return WIPECTL_EXIT_FAILURE;
                return WIPECTL_EXIT_UNREACHABLE;
        case CLIENT_ORIGIN_DAEMON:
                switch (e) {
                case EACCES:
                case ENOENT:
                case ENOTBLK:
                case EISDIR:
                case EBUSY:
                case EROFS:
                case ENXIO:
                case ENODEV:
                case EEXIST:
                /* A firmware erase the drive does not have, or refuses in its state. */
                case EOPNOTSUPP:
                /* verify: the device is no longer the one the job wiped. */
                case ESTALE:
                        return WIPECTL_EXIT_REFUSED;
                case EINVAL:
                        /* Only a submit names devices; elsewhere EINVAL is a bad request. */
                        return c->op == PROTOCOL_OP_SUBMIT ? WIPECTL_EXIT_REFUSED : WIPECTL_EXIT_FAILURE;
                default:
                        return WIPECTL_EXIT_FAILURE;
                }
        case CLIENT_ORIGIN_LOCAL:
        default:
                return WIPECTL_EXIT_FAILURE;
        }
}

int client_translate_errno(const struct client *c, int r) {
        int e = r < 0 ? -r : r;
        int status = client_exit_status(c, e);

        /* The errno name and exit status of the error just reported, for the JSON error object. */
        wipectl_error_note(e, status);
        return status;
}
