/* The listening sockets and the main loop: epoll over the sockets, the clients, a timer and the
 * signals. Requests are lines; each is answered in order with one reply line.
 * All of it runs on one thread, so no client may hold it: a connection gets at most
 * SERVER_REQUESTS_PER_WAKEUP answers in a row (the rest of its lines wait in its buffer for the
 * next turn), and one that does not read its replies is not read from either (back-pressure). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>

#include "cleanup.h"
#include "clock.h"
#include "daemon.h"
#include "daemon-config.h"
#include "protocol.h"
#include "strutil.h"
#include "units.h"

struct conn {
        int fd;
        struct peer peer;               /* credentials at accept time */
        uint32_t events;                /* the epoll mask registered */
        char *in;                       /* bytes read, not yet a whole line */
        size_t in_len, in_cap;
        char *out;                      /* reply bytes not yet written */
        size_t out_len, out_off;
        bool eof;                       /* peer closed its side: close once out is written */
        bool drop;                      /* close now (error, or too much unread output) */
        bool pending;                   /* whole request lines wait in in: served at the next turn */
        struct watch *watch;            /* job events it subscribed to, or NULL */
        double active;                  /* CLOCK_MONOTONIC of its last request, or of the start of
                                         * its unfinished one, or of its accept (empty lines and
                                         * bytes of a line already timed do not count) */
        double partial_since;           /* since when it holds an unfinished line (0: none) */
        struct conn *prev, *next;       /* all connections, to close them at exit */
};

/* A socket the daemon listens on: the control socket, and the read-only one when there is one. */
struct listener {
        int fd;                         /* -1: none */
        char *path;                     /* for messages, and to remove it (made) */
        bool made;                      /* created here (not passed by systemd): removed at exit */
        bool read_only;                 /* the status socket: only the ops that change nothing */
        struct conn tag;                /* its epoll data pointer */
};

static struct conn signal_tag, timer_tag, policy_tag; /* distinct epoll data pointers */
static struct listener listeners[SERVER_LISTENERS_MAX] = { { .fd = -1 }, { .fd = -1 } };
static size_t n_listeners;

static unsigned n_conns;
static unsigned n_read_only_conns;      /* of them, through the read-only socket */
static struct conn *conns;


static void conn_free(int ep, struct conn *c) {
        if (!c)
                return;
        epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        if (c->prev)
                c->prev->next = c->next;
        else
                conns = c->next;
        if (c->next)
                c->next->prev = c->prev;
        free(c->in);
        free(c->out);
        watch_free(c->watch);
        if (c->peer.read_only)
                n_read_only_conns--;
        free(c);
        n_conns--;
}

/* The unsent reply bytes of c. */
static size_t conn_backlog(const struct conn *c) {
        return c->out_len - c->out_off;
}

/* Whether c must read its replies before it is served more (SERVER_PAUSE_BACKLOG). */
static bool conn_paused(const struct conn *c) {
        return conn_backlog(c) > SERVER_PAUSE_BACKLOG;
}

static int conn_append(struct conn *c, const char *data, size_t len) {
        /* Beyond the cap the peer is dropped: only events (a watcher's) and the one reply that
         * crossed SERVER_PAUSE_BACKLOG get there, since requests wait above that. */
        if (conn_backlog(c) + len > (c->peer.read_only ? WIPED_READ_ONLY_BACKLOG_MAX : WIPED_REPLY_BACKLOG_MAX))
                return -ENOBUFS;
        if (c->out_off > 0 && c->out_off * 2 >= c->out_len) {
                /* Drop what was sent, so that a steady reader keeps the buffer small. */
                memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
                c->out_len -= c->out_off;
                c->out_off = 0;
        }
        {
                char *n = realloc(c->out, c->out_len + len);

                if (!n)
                        return -ENOMEM;
                c->out = n;
        }
        memcpy(c->out + c->out_len, data, len);
        c->out_len += len;
        return 0;
}

static void conn_reply(struct conn *c, struct json_object *reply) {
        _cleanup_free_ char *s = NULL;
        size_t len = 0;

        if (!reply) {
                c->drop = true;
                return;
        }
        s = protocol_serialize(reply, &len);
        json_object_put(reply);
        if (!s || conn_append(c, s, len) < 0)
                c->drop = true;
}

/* Register what the connection waits for: input until the peer closed its side (or we hung up
 * on it) unless whole requests still wait in its buffer or its replies are not read (level-
 * triggered: input it would not read would wake the loop again and again), output while replies
 * are pending. */
static void conn_update_events(int ep, struct conn *c) {
        bool input = !c->eof && !c->pending && !conn_paused(c);
        uint32_t want = (input ? EPOLLIN | EPOLLRDHUP : 0) | (c->out_off < c->out_len ? EPOLLOUT : 0);

        if (want != c->events) {
                struct epoll_event ev = { .events = want, .data.ptr = c };

                epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
                c->events = want;
        }
}

static void conn_flush(int ep, struct conn *c) {
        while (c->out_off < c->out_len) {
                ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);

                if (n < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                break;
                        c->drop = true;
                        return;
                }
                c->out_off += (size_t) n;
        }
        conn_update_events(ep, c);
}

/* Answer the whole lines in c's buffer, at most *budget of them (each answered one takes one)
 * and none while c is paused; c->pending says whether whole lines are left. An empty line is no
 * request: skipped, and no activity either. */
static void conn_process_lines(struct conn *c, struct pool *pool, unsigned *budget) {
        size_t start = 0;

        c->pending = false;
        for (;;) {
                char *nl = memchr(c->in + start, '\n', c->in_len - start);
                size_t len;

                if (!nl)
                        break;
                len = (size_t) (nl - (c->in + start));
                if (len > 0) {
                        struct watch *w = NULL;

                        if (*budget == 0 || conn_paused(c)) {
                                c->pending = true;
                                break;
                        }
                        (*budget)--;
                        c->active = mono_s();
                        conn_reply(c, client_handle(pool, &c->peer, c->in + start, len, &w));
                        if (w) {
                                /* A new watch replaces the connection's previous one. */
                                watch_free(c->watch);
                                c->watch = w;
                        }
                }
                start += len + 1;
                if (c->drop)
                        return;
        }
        memmove(c->in, c->in + start, c->in_len - start);
        c->in_len -= start;
        if (!c->pending && c->in_len > PROTOCOL_LINE_MAX) {
                /* A line that can never be a valid request: say so and hang up, since the rest
                 * of the stream cannot be framed reliably. */
                conn_reply(c, protocol_reply_error(-1, -EMSGSIZE, "request longer than %d bytes", PROTOCOL_LINE_MAX));
                c->in_len = 0;
                c->eof = true;
        }
}

/* Serve c: the whole lines already in its buffer, then what it sent, until the socket is empty,
 * SERVER_REQUESTS_PER_WAKEUP requests were answered, or its unread replies pause it. What is left
 * is served at its next turn (server_pending). */
static void conn_read(int ep, struct conn *c, struct pool *pool) {
        unsigned budget = SERVER_REQUESTS_PER_WAKEUP, reads = 0;

        if (c->pending) {
                conn_process_lines(c, pool, &budget);
                if (!c->pending && c->in_len > 0 && c->partial_since == 0) {
                        /* What is left is the start of a line: timed from now. */
                        c->partial_since = mono_s();
                        c->active = c->partial_since;
                }
        }
        /* A bounded number of reads: a peer that writes as fast as we read (empty lines, say)
         * is read again at its next turn (the socket stays readable), after the others. */
        while (!c->eof && !c->drop && !c->pending && !conn_paused(c) && reads++ < SERVER_REQUESTS_PER_WAKEUP) {
                size_t had;
                ssize_t n;

                if (c->in_cap - c->in_len < 4096) {
                        size_t cap = c->in_cap ? c->in_cap * 2 : 8192;
                        char *p;

                        if (cap > PROTOCOL_LINE_MAX + 8192)
                                cap = PROTOCOL_LINE_MAX + 8192;
                        p = realloc(c->in, cap);
                        if (!p) {
                                c->drop = true;
                                return;
                        }
                        c->in = p;
                        c->in_cap = cap;
                }
                n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno != EAGAIN)
                                c->drop = true;
                        break;
                }
                if (n == 0) {
                        c->eof = true;
                        break;
                }
                c->in_len += (size_t) n;
                had = c->in_len - (size_t) n;
                conn_process_lines(c, pool, &budget);
                /* An unfinished line is timed from its first byte: trickling does not keep it. A
                 * read that finished a line and began the next starts the clock again. Lines
                 * left whole in the buffer are not unfinished: they wait for their turn. */
                if (c->in_len == 0 || c->pending)
                        c->partial_since = 0;
                else if (c->partial_since == 0 || (c->in_len <= (size_t) n && had > 0)) {
                        c->partial_since = mono_s();
                        c->active = c->partial_since;
                }
        }
        conn_flush(ep, c);
}

/* Serve the connections whose whole requests wait in their buffers (their turn came again, or
 * they read their replies). Returns whether some still wait and may be served now, so that the
 * loop does not sleep on them: their socket may never become readable again. */
static bool server_pending(int ep, struct pool *pool) {
        bool more = false;

        for (struct conn *c = conns; c; c = c->next) {
                if (!c->pending || c->drop || conn_paused(c))
                        continue;
                conn_read(ep, c, pool);
                more |= c->pending && !c->drop && !conn_paused(c);
        }
        return more;
}

static bool listen_paused;      /* out of file descriptors: accept again at the next tick */

/* How many connections uid holds on the read-only socket. */
static unsigned server_read_only_conns_of(uid_t uid) {
        unsigned n = 0;

        for (const struct conn *c = conns; c; c = c->next)
                if (c->peer.read_only && c->peer.uid == uid && !c->drop)
                        n++;
        return n;
}

static void server_accept(int ep, const struct listener *l) {
        for (;;) {
                struct ucred cred;
                socklen_t sl = sizeof(cred), gl;
                struct epoll_event ev;
                struct conn *c;
                int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

                if (fd < 0) {
                        if (errno == EMFILE || errno == ENFILE) {
                                /* Level-triggered: the socket stays readable. Stop listening for
                                 * a moment instead of spinning. */
                                log_warning("accept: %s: pausing new connections", strerror(errno));
                                for (size_t i = 0; i < n_listeners; i++)
                                        epoll_ctl(ep, EPOLL_CTL_DEL, listeners[i].fd, NULL);
                                listen_paused = true;
                        } else if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                                log_warning("accept: %s", strerror(errno));
                        return;
                }
                /* Anyone may connect to the read-only socket: it never takes the last slots, so
                 * that a flood of lookers leaves root and the group room on the control socket. */
                if (n_conns >= WIPED_CLIENTS_MAX ||
                    (l->read_only && n_read_only_conns >= WIPED_CLIENTS_MAX - SERVER_CONTROL_CLIENTS_RESERVED) ||
                    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &sl) < 0) {
                        static const char busy[] = "{\"id\":null,\"ok\":false,\"error\":{\"code\":\"EUSERS\",\"message\":\"too many clients\"}}\n";

                        (void) !send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
                        close(fd);
                        continue;
                }
                if (l->read_only && server_read_only_conns_of(cred.uid) >= SERVER_READ_ONLY_PER_UID_MAX) {
                        static const char many[] = "{\"id\":null,\"ok\":false,\"error\":{\"code\":\"EUSERS\",\"message\":"
                                                   "\"too many connections of this user to the read-only socket (at most "
                                                   STRINGIFY(SERVER_READ_ONLY_PER_UID_MAX) ")\"}}\n";

                        (void) !send(fd, many, sizeof(many) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
                        close(fd);
                        continue;
                }
                c = calloc(1, sizeof(*c));
                if (!c) {
                        close(fd);
                        continue;
                }
                c->fd = fd;
                c->active = mono_s();
                c->peer.uid = cred.uid;
                c->peer.gid = cred.gid;
                c->peer.pid = cred.pid;
                c->peer.read_only = l->read_only;
                /* The groups as they were at connect time, not read later from a pid. */
                gl = sizeof(c->peer.groups);
                if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, c->peer.groups, &gl) == 0)
                        c->peer.n_groups = (int) (gl / sizeof(gid_t));
                c->events = EPOLLIN | EPOLLRDHUP;
                ev = (struct epoll_event) { .events = c->events, .data.ptr = c };
                if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
                        close(fd);
                        free(c);
                        continue;
                }
                c->next = conns;
                if (conns)
                        conns->prev = c;
                conns = c;
                n_conns++;
                if (c->peer.read_only)
                        n_read_only_conns++;
        }
}

/* The peer has closed its side and has every reply; a watcher also every event up to "end" (a
 * client may shut down its sending side right after its watch request). */
static bool conn_done(const struct conn *c) {
        return c->eof && c->out_off == c->out_len && (!c->watch || c->watch->ended);
}

/* Send every watching connection the events that are due. */
static void server_watch_tick(int ep) {
        for (struct conn *c = conns, *next; c; c = next) {
                struct json_object *events;

                next = c->next;
                if (!c->watch || c->watch->ended || c->drop)
                        continue;
                events = json_object_new_array();
                if (!events || watch_events(c->watch, events) < 0)
                        c->drop = true;
                for (size_t i = 0; !c->drop && i < json_object_array_length(events); i++)
                        conn_reply(c, json_object_get(json_object_array_get_idx(events, i)));
                json_object_put(events);
                /* A watcher that does not read its events is dropped (backlog limit), after this
                 * batch of epoll events: one of them may still name it. */
                if (!c->drop)
                        conn_flush(ep, c);
        }
}

/* A client that stops in the middle of a request, or holds a connection without asking
 * anything, goes after client-timeout seconds; a watcher may be quiet as long as it likes. */
static void server_timeouts(double now) {
        double limit = (double) config_settings()->client_timeout;

        for (struct conn *c = conns; c; c = c->next)
                if (!c->drop && ((c->in_len > 0 && c->partial_since > 0 && now - c->partial_since > limit) ||
                                 ((!c->watch || c->watch->ended) && now - c->active > limit))) {
                        log_debug("client pid %d uid %u: %s for %.0f s: closed", (int) c->peer.pid,
                                  (unsigned) c->peer.uid, c->in_len > 0 ? "unfinished request" : "idle", limit);
                        c->drop = true;
                }
}

static void server_sweep(int ep) {
        for (struct conn *c = conns, *next; c; c = next) {
                next = c->next;
                if (c->drop || conn_done(c))
                        conn_free(ep, c);
        }
}

static int add_fd(int ep, int fd, struct conn *tag) {
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = tag };

        return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/* Forget the listeners: their fds closed, the sockets made here removed, the paths freed. */
static void listeners_drop(void) {
        for (size_t i = 0; i < n_listeners; i++) {
                if (listeners[i].fd >= 0)
                        close(listeners[i].fd);
                if (listeners[i].made)
                        unlink(listeners[i].path);
                free(listeners[i].path);
                listeners[i] = (struct listener) { .fd = -1 };
        }
        n_listeners = 0;
}

/* Make our own socket at path and listen on it: mode 0660 and the socket group (socket-group,
 * else the group wiped when it exists) for the control socket, 0666 for the read-only one. A
 * stale socket of an earlier run is replaced, one another daemon serves is left alone. Returns
 * the fd, or -errno (logged) with nothing left at path. */
static int listener_create(const char *path, bool read_only) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;
        struct group *g;
        struct stat st;
        gid_t gid;
        int n;

        if (strlen(path) >= sizeof(sa.sun_path)) {
                log_error("%s: socket path too long", path);
                return -ENAMETOOLONG;
        }
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (lstat(path, &st) == 0) {
                _cleanup_close_ int probe = -1;

                if (!S_ISSOCK(st.st_mode)) {
                        log_error("%s: exists and is not a socket", path);
                        return -EEXIST;
                }
                probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (probe >= 0 && connect(probe, (struct sockaddr *) &sa, sizeof(sa)) == 0) {
                        log_error("%s: another daemon is serving this socket", path);
                        return -EADDRINUSE;
                }
                /* A stale socket of an earlier run: nobody listens on it. */
                unlink(path);
        }
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                int e = errno;

                log_error("%s: bind: %s", path, strerror(e));
                return -e;
        }
        if (!read_only) {
                /* The configured socket-group must own it; else the group wiped does when it exists. */
                n = config_socket_group(&gid);
                if (n > 0 && chown(path, (uid_t) -1, gid) < 0) {
                        int e = errno;

                        log_error("%s: cannot give it to group %s: %s", path, config_settings()->socket_group,
                                  strerror(e));
                        unlink(path);
                        return -e;
                }
                if (n < 0) {
                        unlink(path);
                        return n;
                }
                g = n == 0 ? getgrnam(WIPED_GROUP) : NULL;
                if (g && chown(path, 0, g->gr_gid) < 0)
                        log_warning("%s: cannot give it to group %s: %s", path, WIPED_GROUP, strerror(errno));
        }
        /* Whoever may connect to the read-only socket may only look: the check is per request. */
        if (chmod(path, read_only ? 0666 : 0660) < 0 || listen(fd, 128) < 0) {
                int e = errno;

                log_error("%s: %s", path, strerror(e));
                unlink(path);
                return -e;
        }
        return TAKE_FD(fd);
}

/* Take over the n sockets systemd passed: the one named "status" (FileDescriptorName=) is the
 * read-only socket, any other the control socket. 0 or -errno (logged). */
static int listeners_passed(int n, char **names) {
        int control = 0, status = 0;

        for (int i = 0; i < n; i++) {
                int fd = SD_LISTEN_FDS_START + i, fl;
                bool ro = names && names[i] && strcmp(names[i], SERVER_STATUS_FDNAME) == 0;
                struct sockaddr_un sa = {};
                socklen_t sl = sizeof(sa);
                struct listener *l;

                if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) <= 0) {
                        log_error("socket %d passed by systemd (%s) is not a listening AF_UNIX stream socket", i + 1,
                                  names && names[i] ? names[i] : "unnamed");
                        return -EINVAL;
                }
                if ((ro ? ++status : ++control) > 1 || n_listeners >= SERVER_LISTENERS_MAX) {
                        log_error("expected from systemd one control socket and at most one named \"%s\", got %d sockets",
                                  SERVER_STATUS_FDNAME, n);
                        return -EINVAL;
                }
                /* Passed blocking unless the unit says NonBlocking=yes: the main loop accepts until
                 * EAGAIN, and must never block in accept(). */
                fl = fcntl(fd, F_GETFL);
                if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
                        int e = errno;

                        log_error("cannot make the socket passed by systemd non-blocking: %s", strerror(e));
                        return -e;
                }
                l = &listeners[n_listeners++];
                *l = (struct listener) { .fd = fd, .read_only = ro };
                if (getsockname(fd, (struct sockaddr *) &sa, &sl) < 0 || sa.sun_path[0] == '\0')
                        l->path = strdup(ro ? "the status socket" : "the control socket");
                else
                        l->path = strndup(sa.sun_path, sizeof(sa.sun_path));
                if (!l->path)
                        return -ENOMEM;
        }
        if (!control) {
                log_error("systemd passed no control socket (only one named \"%s\")", SERVER_STATUS_FDNAME);
                return -EINVAL;
        }
        return 0;
}

int server_listen(const char *control_path, const char *status_path) {
        char **names = NULL;
        int n, r;

        n = sd_listen_fds_with_names(1, &names);
        if (n < 0) {
                log_error("the sockets passed by systemd: %s", strerror(-n));
                return n;
        }
        if (n > 0) {
                r = listeners_passed(n, names);
                strv_free(names);
                if (r < 0)
                        listeners_drop();
                return r;
        }
        strv_free(names);
        for (int i = 0; i < (status_path ? 2 : 1); i++) {
                const char *path = i ? status_path : control_path;
                struct listener *l = &listeners[n_listeners];
                int fd = listener_create(path, i == 1);

                if (fd < 0) {
                        if (i == 1)
                                log_error("%s: cannot listen: %s (status-socket = none: no read-only socket)", path,
                                          strerror(-fd));
                        else
                                log_error("%s: cannot listen: %s", path, strerror(-fd));
                        listeners_drop();
                        return fd;
                }
                *l = (struct listener) { .fd = fd, .made = true, .read_only = i == 1, .path = strdup(path) };
                n_listeners++;
                if (!l->path) {
                        /* Nothing to remove it by: remove it now. */
                        unlink(path);
                        l->made = false;
                        listeners_drop();
                        return -ENOMEM;
                }
        }
        if (status_path)
                log_info("%s: read-only socket for everyone (version, status, list, watch, report, devices)", status_path);
        return 0;
}

void server_unlisten(void) {
        listeners_drop();
}

/* The service manager's watchdog (main thread): its interval (0: none) and the last WATCHDOG=1. */
static uint64_t watchdog_usec;
static double watchdog_at;

void server_watchdog_alive(void) {
        double now = mono_s();

        if (watchdog_usec && now - watchdog_at >= (double) watchdog_usec / 2e6) {
                sd_notify(0, "WATCHDOG=1");
                watchdog_at = now;
        }
}

/* The service manager's view: STATUS= when the summary changed (at most once a second), and
 * WATCHDOG=1 every half watchdog interval. Called on every tick. */
static void server_notify(double now, double *status_at) {
        static char last[128] = "idle";
        char status[128];

        server_watchdog_alive();
        if (now - *status_at < 1.0)
                return;
        *status_at = now;
        job_summary(status, sizeof(status));
        if (strcmp(status, last) != 0) {
                sd_notifyf(0, "STATUS=%s", status);
                snprintf(last, sizeof(last), "%s", status);
        }
}

/* The listener whose epoll data pointer is c, or NULL. */
static struct listener *listener_of(const struct conn *c) {
        for (size_t i = 0; i < n_listeners; i++)
                if (c == &listeners[i].tag)
                        return &listeners[i];
        return NULL;
}

static int listeners_add(int ep) {
        int r;

        for (size_t i = 0; i < n_listeners; i++)
                if ((r = add_fd(ep, listeners[i].fd, &listeners[i].tag)) < 0 && r != -EEXIST)
                        return r;
        return 0;
}

int server_run(struct pool *pool, void (*on_stop)(void *), void *arg) {
        _cleanup_close_ int ep = -1, sfd = -1, tfd = -1;
        /* Ticks: watch events (state changes within 0.1 s) and rate samples (job.c keeps its own pace). */
        struct itimerspec its = { .it_interval = { 0, 100000000 }, .it_value = { 0, 100000000 } };
        sigset_t mask;
        char mem[32];
        double status_at = 0;
        int r, pfd;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
        tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        ep = epoll_create1(EPOLL_CLOEXEC);
        if (sfd < 0 || tfd < 0 || ep < 0)
                return -errno;
        if (timerfd_settime(tfd, 0, &its, NULL) < 0)
                return -errno;
        if ((r = listeners_add(ep)) < 0 || (r = add_fd(ep, sfd, &signal_tag)) < 0 ||
            (r = add_fd(ep, tfd, &timer_tag)) < 0)
                return r;
        /* The bay policies' device events (none: the policies never act, which policy_start logged). */
        pfd = policy_start(pool);
        if (pfd >= 0 && (r = add_fd(ep, pfd, &policy_tag)) < 0) {
                policy_stop();
                return r;
        }

        /* The watchdog, when the service manager asks for one: pinged from this loop, so a stuck
         * main loop (not a busy worker) is what it catches. */
        if (sd_watchdog_enabled(0, &watchdog_usec) <= 0)
                watchdog_usec = 0;
        sd_notify(0, "READY=1\nSTATUS=idle");
        watchdog_at = mono_s();
        log_info("ready: %u worker %s, %s of I/O buffers", pool_threads(pool),
                 units_plural(pool_threads(pool), "thread", "threads"), units_size(mem, sizeof(mem), pool_memory(pool)));

        for (bool running = true, more = false; running;) {
                struct epoll_event evs[64];
                /* Requests left waiting in a buffer: look for events without sleeping. */
                int n = epoll_wait(ep, evs, 64, more ? 0 : -1);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                for (int i = 0; i < n; i++) {
                        struct conn *c = evs[i].data.ptr;
                        struct listener *l = listener_of(c);

                        if (l) {
                                server_accept(ep, l);
                        } else if (c == &signal_tag) {
                                struct signalfd_siginfo si;

                                while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
                                        if (si.ssi_signo == SIGHUP) {
                                                (void) config_reload();
                                                policy_reload();
                                                continue;
                                        }
                                        log_info("%s: stopping", strsignal((int) si.ssi_signo));
                                        sd_notify(0, "STOPPING=1");
                                        running = false;
                                        break;
                                }
                        } else if (c == &policy_tag) {
                                policy_dispatch();
                        } else if (c == &timer_tag) {
                                uint64_t ticks;

                                (void) !read(tfd, &ticks, sizeof(ticks));
                                job_tick();
                                policy_tick();
                                metrics_tick();
                                server_watch_tick(ep);
                                server_timeouts(mono_s());
                                server_notify(mono_s(), &status_at);
                                if (listen_paused && listeners_add(ep) == 0)
                                        listen_paused = false;
                        } else {
                                if (evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
                                        conn_read(ep, c, pool);
                                if ((evs[i].events & (EPOLLHUP | EPOLLERR)) && c->eof)
                                        c->drop = true; /* nobody left to read the replies */
                                if (!c->drop && (evs[i].events & EPOLLOUT))
                                        conn_flush(ep, c);
                                if (c->drop || conn_done(c))
                                        conn_free(ep, c);
                        }
                }
                more = server_pending(ep, pool);
                server_sweep(ep);
        }
        /* Stop the jobs while the clients are still connected, so that watchers see them end
         * (interrupted) before the connections close; what they do not read now is lost. */
        policy_stop();
        on_stop(arg);
        server_watch_tick(ep);
        while (conns)
                conn_free(ep, conns);
        client_devices_cache_drop();
        return 0;
}
