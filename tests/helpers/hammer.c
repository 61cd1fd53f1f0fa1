/* hammer: a hostile client of wiped's control socket, for the integration tests.
 *
 *   hammer --socket PATH --connections N [--hold SECONDS] [--interval SECONDS]
 *   hammer --socket PATH --slow | --silent | --trickle [--max-wait SECONDS]
 *   hammer --socket PATH --idle-watch JOB [--max-wait SECONDS]
 *   hammer --socket PATH --garbage SEED --count N [--conns K] [--path PATH]... [--log FILE]
 *   hammer --socket PATH --watch-vanish N [--job ID]... [--for SECONDS] [--seed SEED]
 *
 * Results are "key=value" words on stdout, one line per phase, for the test to check; what went
 * wrong is on stderr. Exit status: 0 when the mode's own checks held, 1 when not, 2 usage, 99 when
 * the client itself could not run (no socket, out of memory).
 *
 * --connections  opens N connections at once, sends {"id":1,"op":"version"} on each and waits for
 *                the answers: "served" (an ok reply), "refused" (an EUSERS error, or closed before
 *                any reply: the daemon's limit), "failed" (no answer within the deadline, or an
 *                unexpected one). Prints that line, then keeps the served connections open for
 *                --hold seconds, sending a new version request on each every --interval seconds
 *                (0: none); prints "dropped" (closed by the daemon) and "missed" (pings unanswered).
 * --slow         sends half a request line and nothing more; --silent sends nothing; --trickle
 *                sends one byte of a never-ending line every 0.5 s. Prints after how many seconds
 *                the daemon closed the connection ("closed_after=none" if not within --max-wait,
 *                default 30, and exit status 1).
 * --idle-watch   watches job JOB with interval_ms 3600000, reads what comes and sends nothing for
 *                --max-wait seconds, then sends a version request: "alive=1" if it is answered.
 * --garbage      sends N hostile lines (random bytes, NULs, deep nesting, non-objects, bad ids and
 *                ops, every op with a field of a wrong type, huge and negative numbers, paths from
 *                --path, truncated requests, over-long lines) on K connections (default 1), one at
 *                a time, and checks that each gets one error reply ({"ok":false,"error":{"code":
 *                "E..."}}), for a line over 64 KiB EMSGSIZE (then it takes a new connection), and
 *                that none takes the daemon over a second to answer.
 *                Every reply line is also written to --log. No line is a valid request: job ids
 *                are never those of a real job, and paths given with --path must not be block
 *                devices (the test's own files, /dev/null, a directory, a fifo).
 * --watch-vanish opens N watch connections (every job not ended, or the --job ids) and has each
 *                vanish at a random time within --for seconds (default 3) in a random way: a close
 *                after reading, a close with events unread, a half-close, a close mid-request.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#else
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "clock.h"
#include "protocol.h"

#define REPLY_TIMEOUT 10.0              /* seconds for any one reply */

enum mode { MODE_NONE, MODE_CONNECTIONS, MODE_SLOW, MODE_SILENT, MODE_TRICKLE, MODE_IDLE_WATCH, MODE_GARBAGE,
            MODE_WATCH_VANISH };

static const char *sock_path;

/* A connection and the bytes read from it that are not yet a whole line. */
struct conn {
        int fd;                 /* -1 once closed */
        char *buf;
        size_t len, cap;
        bool eof;               /* the daemon closed it (EOF or ECONNRESET) */
};

static int ms_until(double deadline) {
        double d = deadline - mono_s();

        return d <= 0 ? 0 : (int) (d * 1000) + 1;
}

static void *xmalloc(size_t n) {
        void *p = malloc(n ? n : 1);

        if (!p) {
                fprintf(stderr, "hammer: out of memory\n");
                exit(99);
        }
        return p;
}

/* splitmix64: a small seeded generator, so that a failing garbage run can be repeated. */
static uint64_t rng_state;

static uint64_t rng(void) {
        uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

static size_t rng_below(size_t n) {
        return n ? (size_t) (rng() % n) : 0;
}

/* Raise the soft limit of open files to the hard one: the tests open more than 1024 sockets. */
static void raise_nofile(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }
}

/* Connect to the daemon, non-blocking; a full listen backlog (EAGAIN) is retried until the
 * deadline. Returns the fd or -errno. */
static int conn_open(struct conn *c, double deadline) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        *c = (struct conn) { .fd = -1 };
        if (strlen(sock_path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, sock_path);
        for (;;) {
                fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                if (fd < 0)
                        return -errno;
                if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0)
                        break;
                close(fd);
                if (errno != EAGAIN || mono_s() > deadline)
                        return -errno;
                usleep(10000);
        }
        c->fd = fd;
        return fd;
}

static void conn_close(struct conn *c) {
        if (c->fd >= 0)
                close(c->fd);
        c->fd = -1;
        free(c->buf);
        c->buf = NULL;
        c->len = c->cap = 0;
}

/* Send all of buf before the deadline. 0, -ETIMEDOUT, or -errno (EPIPE, ECONNRESET: closed). */
static int conn_send(struct conn *c, const void *buf, size_t len, double deadline) {
        const char *p = buf;

        while (len > 0) {
                ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);

                if (n < 0) {
                        struct pollfd pfd = { .fd = c->fd, .events = POLLOUT };

                        if (errno == EINTR)
                                continue;
                        if (errno != EAGAIN)
                                return -errno;
                        if (mono_s() > deadline)
                                return -ETIMEDOUT;
                        (void) poll(&pfd, 1, ms_until(deadline));
                        continue;
                }
                p += n;
                len -= (size_t) n;
        }
        return 0;
}

/* Read what is there now (non-blocking). 1 if bytes came, 0 if none, -1 on close (c->eof set). */
static int conn_fill(struct conn *c) {
        bool got = false;

        for (;;) {
                ssize_t n;

                if (c->cap - c->len < 4096) {
                        char *b;

                        c->cap = c->cap ? c->cap * 2 : 16384;
                        b = realloc(c->buf, c->cap);
                        if (!b) {
                                fprintf(stderr, "hammer: out of memory\n");
                                exit(99);
                        }
                        c->buf = b;
                }
                n = recv(c->fd, c->buf + c->len, c->cap - c->len, MSG_DONTWAIT);
                if (n > 0) {
                        c->len += (size_t) n;
                        got = true;
                        continue;
                }
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return got ? 1 : 0;
                c->eof = true;  /* 0: EOF; ECONNRESET and the like: closed as well */
                return got ? 1 : -1;
        }
}

/* Take one whole line from the buffer into a new string (without the newline); NULL if none. */
static char *conn_take_line(struct conn *c) {
        char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
        size_t n;
        char *line;

        if (!nl)
                return NULL;
        n = (size_t) (nl - c->buf);
        line = xmalloc(n + 1);
        memcpy(line, c->buf, n);
        line[n] = '\0';
        memmove(c->buf, nl + 1, c->len - n - 1);
        c->len -= n + 1;
        return line;
}

/* Wait for one whole line before the deadline. Returns it (caller frees); NULL with *closed set
 * when the daemon closed the connection first, NULL alone on timeout. */
static char *conn_read_line(struct conn *c, double deadline, bool *closed) {
        *closed = false;
        for (;;) {
                struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
                char *line = conn_take_line(c);

                if (line)
                        return line;
                if (c->eof) {
                        *closed = true;
                        return NULL;
                }
                if (mono_s() > deadline)
                        return NULL;
                if (poll(&pfd, 1, ms_until(deadline)) > 0)
                        (void) conn_fill(c);
        }
}

/* A line the daemon sent: an error reply with a symbolic code, an ok reply, or something else.
 * (The daemon writes plain JSON without blanks: wiped(8) PROTOCOL.) */
static bool is_error_reply(const char *line) {
        return line[0] == '{' && strstr(line, "\"ok\":false") && strstr(line, "\"error\":{\"code\":\"E") &&
               strstr(line, "\"message\":\"");
}

static bool is_ok_reply(const char *line) {
        return line[0] == '{' && strstr(line, "\"ok\":true") != NULL;
}

/* Print at most 160 bytes of data, escaped, to stderr. */
static void print_escaped(const char *what, const char *data, size_t len) {
        fprintf(stderr, "  %s (%zu bytes): ", what, len);
        for (size_t i = 0; i < len && i < 160; i++) {
                unsigned char ch = (unsigned char) data[i];

                if (ch >= 0x20 && ch < 0x7f && ch != '\\')
                        fputc(ch, stderr);
                else
                        fprintf(stderr, "\\x%02x", ch);
        }
        fprintf(stderr, "%s\n", len > 160 ? "..." : "");
}

/* --- --connections --- */

static int run_connections(long n, double hold, double interval) {
        static const char req[] = "{\"id\":1,\"op\":\"version\"}\n";
        struct conn *cs = xmalloc((size_t) n * sizeof(*cs));
        enum { PENDING, SERVED, REFUSED, FAILED } *st = xmalloc((size_t) n * sizeof(*st));
        long served = 0, refused = 0, failed = 0, dropped = 0, pings = 0, missed = 0;
        double deadline = mono_s() + 10 + (double) n / 50;
        bool *waiting = xmalloc((size_t) n * sizeof(*waiting));
        struct pollfd *pfds = xmalloc((size_t) n * sizeof(*pfds));
        long pending;

        /* All connections first, then the requests: N clients connected at once. */
        for (long i = 0; i < n; i++) {
                int r = conn_open(&cs[i], deadline);

                st[i] = PENDING;
                if (r < 0) {
                        fprintf(stderr, "hammer: connection %ld: connect: %s\n", i, strerror(-r));
                        st[i] = FAILED;
                        failed++;
                }
        }
        for (long i = 0; i < n; i++)
                if (st[i] == PENDING && conn_send(&cs[i], req, sizeof(req) - 1, deadline) < 0)
                        cs[i].eof = true;       /* refused at once: the answer may be waiting */
        for (pending = n - failed; pending > 0 && mono_s() < deadline;) {
                nfds_t k = 0;

                for (long i = 0; i < n; i++)
                        if (st[i] == PENDING)
                                pfds[k++] = (struct pollfd) { .fd = cs[i].fd, .events = POLLIN };
                (void) poll(pfds, k, ms_until(deadline));
                for (long i = 0; i < n; i++) {
                        char *line;

                        if (st[i] != PENDING)
                                continue;
                        (void) conn_fill(&cs[i]);
                        line = conn_take_line(&cs[i]);
                        if (line && is_ok_reply(line) && strstr(line, "\"id\":1,")) {
                                st[i] = SERVED;
                                served++;
                        } else if ((line && strstr(line, "\"EUSERS\"")) || (!line && cs[i].eof)) {
                                st[i] = REFUSED;
                                refused++;
                                conn_close(&cs[i]);
                        } else if (line) {
                                fprintf(stderr, "hammer: connection %ld: unexpected reply: %.200s\n", i, line);
                                st[i] = FAILED;
                                failed++;
                                conn_close(&cs[i]);
                        }
                        if (st[i] != PENDING)
                                pending--;
                        free(line);
                }
        }
        for (long i = 0; i < n; i++)
                if (st[i] == PENDING) {
                        st[i] = FAILED;
                        failed++;
                        conn_close(&cs[i]);
                }
        if (failed)
                fprintf(stderr, "hammer: %ld of %ld connections got no answer\n", failed, n);
        printf("connections=%ld served=%ld refused=%ld failed=%ld\n", n, served, refused, failed);
        fflush(stdout);

        /* Hold the served connections, pinging every interval. */
        {
                double end = mono_s() + hold, next_ping = interval > 0 ? mono_s() + interval : end + 1;
                long open = served;

                for (long i = 0; i < n; i++)
                        waiting[i] = false;
                while (open > 0 && mono_s() < end) {
                        double until = next_ping < end ? next_ping : end;
                        nfds_t k = 0;

                        for (long i = 0; i < n; i++)
                                if (st[i] == SERVED && cs[i].fd >= 0)
                                        pfds[k++] = (struct pollfd) { .fd = cs[i].fd, .events = POLLIN };
                        (void) poll(pfds, k, ms_until(until));
                        for (long i = 0; i < n; i++) {
                                char *line;

                                if (st[i] != SERVED || cs[i].fd < 0)
                                        continue;
                                (void) conn_fill(&cs[i]);
                                while ((line = conn_take_line(&cs[i]))) {
                                        if (is_ok_reply(line))
                                                waiting[i] = false;
                                        free(line);
                                }
                                if (cs[i].eof) {
                                        dropped++;
                                        open--;
                                        conn_close(&cs[i]);
                                }
                        }
                        if (mono_s() >= next_ping && mono_s() < end) {
                                char ping[64];
                                int len = snprintf(ping, sizeof(ping), "{\"id\":%ld,\"op\":\"version\"}\n", pings + 2);

                                for (long i = 0; i < n; i++) {
                                        if (st[i] != SERVED || cs[i].fd < 0)
                                                continue;
                                        missed += waiting[i];
                                        waiting[i] = true;
                                        (void) conn_send(&cs[i], ping, (size_t) len, mono_s() + 1);
                                }
                                pings++;
                                next_ping += interval;
                        }
                }
                /* The last pings get a second to be answered. */
                for (long i = 0; i < n; i++) {
                        bool closed;
                        char *line;

                        while (st[i] == SERVED && cs[i].fd >= 0 && waiting[i]) {
                                line = conn_read_line(&cs[i], mono_s() + 1, &closed);
                                if (!line) {
                                        missed++;
                                        break;
                                }
                                if (is_ok_reply(line))
                                        waiting[i] = false;
                                free(line);
                        }
                }
        }
        if (dropped)
                fprintf(stderr, "hammer: %ld connections were closed by the daemon while held\n", dropped);
        printf("held=%g dropped=%ld pings=%ld missed=%ld\n", hold, dropped, pings, missed);
        for (long i = 0; i < n; i++)
                conn_close(&cs[i]);
        free(cs);
        free(st);
        free(waiting);
        free(pfds);
        return failed || missed ? 1 : 0;
}

/* --- --slow, --silent, --trickle, --idle-watch --- */

static int run_idle(enum mode mode, const char *job, double max_wait) {
        struct conn c;
        double t0, deadline, next_byte;
        bool closed = false, got_any = false;
        char first[256] = "";
        int r;

        r = conn_open(&c, mono_s() + 10);
        if (r < 0) {
                fprintf(stderr, "hammer: %s: %s\n", sock_path, strerror(-r));
                return 99;
        }
        t0 = mono_s();
        if (mode == MODE_SLOW) {
                static const char half[] = "{\"id\":1,\"op\":\"vers";

                r = conn_send(&c, half, sizeof(half) - 1, t0 + 5);
        } else if (mode == MODE_TRICKLE) {
                static const char start[] = "{\"id\":1,\"op\":\"version\",\"x\":\"";

                r = conn_send(&c, start, sizeof(start) - 1, t0 + 5);
        } else if (mode == MODE_IDLE_WATCH) {
                char req[128];
                int len = snprintf(req, sizeof(req), "{\"id\":1,\"op\":\"watch\",\"jobs\":[%s],\"interval_ms\":3600000}\n", job);
                char *line;

                r = conn_send(&c, req, (size_t) len, t0 + 5);
                line = r < 0 ? NULL : conn_read_line(&c, t0 + REPLY_TIMEOUT, &closed);
                if (!line || !is_ok_reply(line)) {
                        fprintf(stderr, "hammer: watch of job %s: %s\n", job, line ? line : closed ? "closed" : "no reply");
                        free(line);
                        conn_close(&c);
                        return 1;
                }
                free(line);
        }
        if (r < 0) {
                fprintf(stderr, "hammer: send: %s\n", strerror(-r));
                conn_close(&c);
                return 1;
        }

        deadline = t0 + max_wait;
        next_byte = t0 + 0.5;
        while (!c.eof && mono_s() < deadline) {
                struct pollfd pfd = { .fd = c.fd, .events = POLLIN };
                double until = mode == MODE_TRICKLE && next_byte < deadline ? next_byte : deadline;

                if (poll(&pfd, 1, ms_until(until)) > 0) {
                        size_t before = c.len;

                        (void) conn_fill(&c);
                        if (!got_any && c.len > before) {
                                /* What the daemon said before closing, if anything. */
                                size_t n = c.len - before < sizeof(first) - 1 ? c.len - before : sizeof(first) - 1;

                                memcpy(first, c.buf + before, n);
                                first[n] = '\0';
                                first[strcspn(first, "\n")] = '\0';
                                got_any = true;
                        }
                        if (mode == MODE_IDLE_WATCH)
                                c.len = 0;      /* events: not interesting here */
                }
                if (mode == MODE_TRICKLE && !c.eof && mono_s() >= next_byte) {
                        if (conn_send(&c, "a", 1, mono_s() + 1) < 0)
                                c.eof = true;
                        next_byte += 0.5;
                }
        }
        if (c.eof) {
                printf("closed_after=%.2f%s%s\n", mono_s() - t0, got_any && mode != MODE_IDLE_WATCH ? " said=" : "",
                       got_any && mode != MODE_IDLE_WATCH ? first : "");
                conn_close(&c);
                if (mode == MODE_IDLE_WATCH) {
                        printf("alive=0\n");
                        return 1;
                }
                return 0;
        }
        if (mode != MODE_IDLE_WATCH) {
                printf("closed_after=none\n");
                conn_close(&c);
                return 1;
        }
        /* The watcher was left alone: does the connection still answer? */
        {
                static const char req[] = "{\"id\":2,\"op\":\"version\"}\n";
                double until = mono_s() + REPLY_TIMEOUT;
                char *line;
                bool answered = false;

                r = conn_send(&c, req, sizeof(req) - 1, mono_s() + 5);
                while (r == 0 && !answered && (line = conn_read_line(&c, until, &closed))) {
                        answered = is_ok_reply(line) && strstr(line, "\"id\":2,");
                        free(line);
                }
                printf("closed_after=none alive=%d\n", answered);
                conn_close(&c);
                return answered ? 0 : 1;
        }
}

/* --- --garbage --- */

struct buf {
        char *p;
        size_t len, cap;
};

static void buf_add(struct buf *b, const void *data, size_t n) {
        if (b->len + n + 1 > b->cap) {
                char *p;

                b->cap = (b->len + n + 1) * 2;
                p = realloc(b->p, b->cap);
                if (!p) {
                        fprintf(stderr, "hammer: out of memory\n");
                        exit(99);
                }
                b->p = p;
        }
        memcpy(b->p + b->len, data, n);
        b->len += n;
        b->p[b->len] = '\0';
}

static void buf_str(struct buf *b, const char *s) {
        buf_add(b, s, strlen(s));
}

static void buf_char(struct buf *b, char ch) {
        buf_add(b, &ch, 1);
}

static void buf_u64(struct buf *b, uint64_t v) {
        char s[32];

        snprintf(s, sizeof(s), "%" PRIu64, v);
        buf_str(b, s);
}

#define N_(a) (sizeof(a) / sizeof((a)[0]))
#define PICK(a) ((a)[rng_below(N_(a))])

/* Values of the wrong JSON type for each kind of field (never null: null reads as absent). */
static const char *const wrong_u64[] = { "\"1\"", "-1", "1.5", "1e400", "-1e400", "true", "false", "[1]", "{\"a\":1}",
                                         "\"\"", "-9223372036854775808", "-0.0", "[]", "{}" };
static const char *const wrong_str[] = { "1", "-1", "true", "[]", "{}", "[\"random\"]", "1.5", "{\"a\":\"b\"}" };
static const char *const wrong_strarr[] = { "\"/dev/null\"", "1", "[]", "[1]", "[\"\"]", "[null]", "[[]]", "{}", "true",
                                            "[\"a\\u0000b\"]", "[\"x\",2]", "[{}]" };
static const char *const wrong_u64arr[] = { "1", "\"1\"", "[-1]", "[\"1\"]", "[1.5]", "{}", "[[1]]", "true", "[null]",
                                            "[1e400]", "\"[]\"" };
static const char *const wrong_bool[] = { "1", "0", "\"true\"", "[]", "{}", "\"\"", "[true]" };
static const char *const wrong_objarr[] = { "{}", "1", "\"x\"", "true", "[1]", "[\"x\"]", "[null]", "[[]]", "[{}]",
                                            "[{\"node\":1}]", "[{\"node\":\"/dev/null\",\"bogus\":1}]" };
static const char *const wrong_obj[] = { "1", "\"x\"", "true", "[]", "[{}]", "{\"name\":1}", "{\"bogus\":\"x\"}",
                                         "{\"name\":\"a\\u0007b\"}" };
/* Numbers out of every range or at its edges, for the numeric fields of a submit. */
static const char *const odd_numbers[] = { "-1", "-4096", "0", "1", "4097", "1e30", "18446744073709551615",
                                           "18446744073709551616", "99999999999999999999999", "9223372036854775807",
                                           "9223372036854775808", "-9223372036854775808", "1e-5", "4096.0" };
static const char *const not_objects[] = { "1", "-1", "1e400", "\"version\"", "[]", "[{\"id\":1,\"op\":\"version\"}]",
                                           "null", "true", "false", "\"\"", "{", "}", "{}", "{\"id\":1}",
                                           "{\"op\":\"version\"}", "{\"id\":1,\"op\":\"version\"} x",
                                           "{\"id\":1,\"op\":\"version\"}{\"id\":2,\"op\":\"version\"}",
                                           "{'id':1,'op':'version'}", "{id:1,op:version}", "{\"id\":1,\"op\":\"version\",}",
                                           " ", "\t", "\r", "\xef\xbb\xbf{\"id\":1,\"op\":\"version\"}" };
static const char *const bad_envelopes[] = { "\"id\":-1,\"op\":\"version\"", "\"id\":\"1\",\"op\":\"version\"",
                                             "\"id\":1.5,\"op\":\"version\"", "\"id\":null,\"op\":\"version\"",
                                             "\"id\":[1],\"op\":\"version\"", "\"id\":18446744073709551615,\"op\":\"version\"",
                                             "\"id\":9223372036854775808,\"op\":\"version\"", "\"id\":1e400,\"op\":\"version\"",
                                             "\"id\":1,\"op\":1", "\"id\":1,\"op\":null", "\"id\":1,\"op\":[\"version\"]",
                                             "\"id\":1,\"op\":\"\"", "\"id\":1,\"op\":\"VERSION\"",
                                             "\"id\":1,\"op\":\"version \"", "\"id\":1,\"op\":\"version\\u0000\"",
                                             "\"id\":1,\"op\":\"\\u0000version\"", "\"id\":1,\"op\":\"rm -rf /\"",
                                             "\"id\":1,\"op\":\"../version\"", "\"id\":1,\"op\":\"%s%s%s%n\"",
                                             "\"id\":1,\"op\":\"shutdown\"", "\"id\":1,\"op\":\"\xff\xfe\"" };
static const char *const truncatable[] = { "{\"id\":1,\"op\":\"status\"}", "{\"id\":7,\"op\":\"list\"}",
                                           "{\"id\":3,\"op\":\"version\"}", "{\"id\":1,\"op\":\"status\",\"jobs\":[1,2,3]}" };

static const char **paths;       /* --path: things that are not block devices */
static size_t n_paths;

static void add_json_string(struct buf *b, const char *s) {
        buf_char(b, '"');
        for (; *s; s++) {
                if (*s == '"' || *s == '\\')
                        buf_char(b, '\\');
                buf_char(b, *s);
        }
        buf_char(b, '"');
}

/* A value of the field's own type that is harmless: a job id no job has (they count from 1 and
 * never get near 2^40), a path that is not a block device, a valid name, the identity of /dev/null. */
static void add_harmless(struct buf *b, const struct protocol_field *f) {
        switch (f->type) {
        case PROTOCOL_FIELD_U64:
                if (strcmp(f->name, "job") == 0)
                        buf_u64(b, (UINT64_C(1) << 40) + rng_below(1u << 20));
                else if (strcmp(f->name, "interval_ms") == 0)
                        buf_u64(b, 1000);
                else if (strcmp(f->name, "io_size") == 0)
                        buf_u64(b, 4096);
                else
                        buf_u64(b, 1 + rng_below(8));
                break;
        case PROTOCOL_FIELD_STRING:
                if (strcmp(f->name, "device") == 0)
                        add_json_string(b, n_paths ? paths[rng_below(n_paths)] : "/dev/null");
                else if (strcmp(f->name, "cipher") == 0)
                        add_json_string(b, "auto");
                else if (strcmp(f->name, "verify") == 0)
                        add_json_string(b, "none");
                else
                        add_json_string(b, "random");
                break;
        case PROTOCOL_FIELD_STRING_ARRAY:
                buf_char(b, '[');
                if (strcmp(f->name, "devices") == 0)
                        add_json_string(b, n_paths ? paths[rng_below(n_paths)] : "/dev/null");
                else
                        add_json_string(b, "zero");
                buf_char(b, ']');
                break;
        case PROTOCOL_FIELD_U64_ARRAY:
                buf_char(b, '[');
                buf_u64(b, (UINT64_C(1) << 40) + rng_below(1u << 20));
                buf_char(b, ']');
                break;
        case PROTOCOL_FIELD_BOOL:
                buf_str(b, "false");
                break;
        case PROTOCOL_FIELD_OBJECT_ARRAY:
                buf_str(b, "[{\"node\":\"/dev/null\",\"major\":1,\"minor\":3,\"size\":0}]");
                break;
        case PROTOCOL_FIELD_OBJECT:
                buf_str(b, "{\"name\":\"Hammer\"}");
                break;
        }
}

static void add_wrong(struct buf *b, const struct protocol_field *f) {
        switch (f->type) {
        case PROTOCOL_FIELD_U64: buf_str(b, PICK(wrong_u64)); break;
        case PROTOCOL_FIELD_STRING: buf_str(b, PICK(wrong_str)); break;
        case PROTOCOL_FIELD_STRING_ARRAY: buf_str(b, PICK(wrong_strarr)); break;
        case PROTOCOL_FIELD_U64_ARRAY: buf_str(b, PICK(wrong_u64arr)); break;
        case PROTOCOL_FIELD_BOOL: buf_str(b, PICK(wrong_bool)); break;
        case PROTOCOL_FIELD_OBJECT_ARRAY: buf_str(b, PICK(wrong_objarr)); break;
        case PROTOCOL_FIELD_OBJECT: buf_str(b, PICK(wrong_obj)); break;
        }
}

/* A request of op that cannot succeed: every field the op needs is present with a harmless value
 * (the job does not exist, the path is no block device), and field number bad (if any) has a value
 * of the wrong type, or an odd number when odd is set; an op without fields gets an unknown one. */
static void gen_op_request(struct buf *b, enum protocol_op op, bool odd) {
        const struct protocol_field *fields = protocol_op_fields(op);
        size_t nf = 0, bad;

        while (fields[nf].name)
                nf++;
        bad = rng_below(nf);
        buf_str(b, "{\"id\":");
        buf_u64(b, rng_below(1000));
        buf_str(b, ",\"op\":\"");
        buf_str(b, protocol_op_name(op));
        buf_char(b, '"');
        for (size_t i = 0; i < nf; i++) {
                const struct protocol_field *f = &fields[i];
                bool required = strcmp(f->name, "job") == 0 || strcmp(f->name, "devices") == 0 ||
                                (strcmp(f->name, "jobs") == 0 && op == PROTOCOL_OP_WATCH);

                if (i != bad && !required && rng_below(2))
                        continue;
                if (i == bad && op == PROTOCOL_OP_SUBMIT && strcmp(f->name, "passes") == 0)
                        continue;       /* "passes" goes with "method": leave it to the other fields */
                buf_str(b, ",\"");
                buf_str(b, f->name);
                buf_str(b, "\":");
                if (i != bad)
                        add_harmless(b, f);
                else if (odd && f->type == PROTOCOL_FIELD_U64)
                        buf_str(b, PICK(odd_numbers));
                else
                        add_wrong(b, f);
        }
        if (nf == 0 || rng_below(8) == 0) {
                buf_str(b, ",\"");
                buf_str(b, PICK(((const char *const[]) { "x", "devcies", "Job", "", "keys ", "\\u0000" })));
                buf_str(b, "\":1");
        }
        buf_char(b, '}');
}

/* One hostile line (no newline in it, never empty); *overlong when it is over the 64 KiB limit. */
static void gen_line(struct buf *b, bool *overlong) {
        unsigned kind = (unsigned) rng_below(100);

        b->len = 0;
        *overlong = false;
        if (kind < 2) {                         /* over the limit: error, then the close */
                size_t n = PROTOCOL_LINE_MAX + 1 + rng_below(3 * PROTOCOL_LINE_MAX);

                buf_str(b, "{\"id\":1,\"op\":\"version\",\"pad\":\"");
                while (b->len < n)
                        buf_char(b, (char) ('a' + rng_below(26)));
                *overlong = true;
        } else if (kind < 12) {                 /* random printable bytes */
                size_t n = 1 + rng_below(300);

                for (size_t i = 0; i < n; i++)
                        buf_char(b, (char) (0x20 + rng_below(0x5f)));
        } else if (kind < 22) {                 /* random bytes, NULs among them */
                size_t n = 1 + rng_below(300);

                for (size_t i = 0; i < n; i++) {
                        char ch = (char) rng_below(256);

                        buf_char(b, ch == '\n' ? '\0' : ch);
                }
        } else if (kind < 27) {                 /* deep nesting, under the line limit */
                size_t depth = 33 + rng_below(20000);
                const char *open = PICK(((const char *const[]) { "[", "{\"a\":", "[{\"x\":" }));

                if (rng_below(2))
                        buf_str(b, "{\"id\":1,\"op\":\"status\",\"jobs\":");
                while (b->len + strlen(open) < PROTOCOL_LINE_MAX - 10 && depth-- > 0)
                        buf_str(b, open);
                buf_str(b, "1");
        } else if (kind < 35) {                 /* valid JSON, or nearly, that is not a request */
                buf_str(b, PICK(not_objects));
        } else if (kind < 45) {                 /* a bad id or op */
                buf_char(b, '{');
                buf_str(b, PICK(bad_envelopes));
                buf_char(b, '}');
        } else if (kind < 75) {                 /* an op with a field of the wrong type */
                gen_op_request(b, (enum protocol_op) rng_below(_PROTOCOL_OP_MAX), false);
        } else if (kind < 83) {                 /* a submit with odd numbers */
                gen_op_request(b, PROTOCOL_OP_SUBMIT, true);
        } else if (kind < 88) {                 /* an unknown op */
                buf_str(b, "{\"id\":1,\"op\":\"");
                for (size_t i = 0, n = 1 + rng_below(40); i < n; i++)
                        buf_char(b, (char) ('a' + rng_below(26)));
                buf_str(b, "x\"}");
        } else if (kind < 94) {                 /* a request cut short */
                const char *s = PICK(truncatable);

                buf_add(b, s, 1 + rng_below(strlen(s) - 1));
        } else if (kind < 97) {                 /* big, under the limit, with an unknown field */
                size_t n = 1000 + rng_below(PROTOCOL_LINE_MAX - 2000);

                buf_str(b, "{\"id\":1,\"op\":\"list\",\"junk\":\"");
                while (b->len < n)
                        buf_char(b, (char) ('a' + rng_below(26)));
                buf_str(b, "\"}");
        } else {                                /* a valid submit with one unknown field */
                buf_str(b, "{\"id\":1,\"op\":\"submit\",\"devices\":[");
                add_json_string(b, n_paths ? paths[rng_below(n_paths)] : "/dev/null");
                buf_str(b, "],\"method\":\"zero\",\"verify\":\"none\",\"devcies\":[\"x\"]}");
        }
        /* Every line ends a request: no newline inside, never empty. */
        for (size_t i = 0; i < b->len; i++)
                if (b->p[i] == '\n')
                        b->p[i] = ' ';
        if (b->len == 0)
                buf_char(b, 'x');
}

static int run_garbage(uint64_t seed, long count, long n_conns, const char *log_path) {
        struct conn *cs = xmalloc((size_t) n_conns * sizeof(*cs));
        long errors = 0, overlong_n = 0, bad = 0, slow = 0;
        double *used = xmalloc((size_t) n_conns * sizeof(*used));
        FILE *log = NULL;
        struct buf b = { 0 };

        rng_state = seed;
        if (log_path && !(log = fopen(log_path, "w"))) {
                fprintf(stderr, "hammer: %s: %s\n", log_path, strerror(errno));
                return 99;
        }
        for (long i = 0; i < n_conns; i++) {
                cs[i] = (struct conn) { .fd = -1 };
                used[i] = 0;
        }
        for (long i = 0; i < count; i++) {
                struct conn *c = &cs[i % n_conns];
                bool overlong, closed = false;
                const char *why = NULL;
                char *line = NULL;
                double t0 = mono_s();
                int r;

                gen_line(&b, &overlong);
                /* A connection the daemon closed for being idle (--client-timeout: it waited while
                 * another was served) is not the line's fault: take a new one. */
                if (c->fd >= 0 && (t0 - used[i % n_conns] > 1.0 || conn_fill(c) < 0 || c->eof))
                        conn_close(c);
                used[i % n_conns] = t0;
                if (c->fd < 0 && (r = conn_open(c, mono_s() + 10)) < 0) {
                        fprintf(stderr, "hammer: line %ld: connect: %s (the daemon died?)\n", i, strerror(-r));
                        bad++;
                        break;
                }
                buf_char(&b, '\n');
                /* In one to three pieces: framing must not depend on how the bytes arrive. */
                {
                        size_t cut1 = rng_below(b.len), cut2 = cut1 + rng_below(b.len - cut1);

                        r = conn_send(c, b.p, cut1, mono_s() + 5);
                        if (r == 0)
                                r = conn_send(c, b.p + cut1, cut2 - cut1, mono_s() + 5);
                        if (r == 0)
                                r = conn_send(c, b.p + cut2, b.len - cut2, mono_s() + 5);
                }
                b.len--;
                if (r < 0 && !overlong) {
                        why = "the connection closed while sending";
                } else {
                        line = conn_read_line(c, mono_s() + REPLY_TIMEOUT, &closed);
                        if (!line)
                                why = closed ? "closed without a reply" : "no reply within 10 s";
                        else if (!is_error_reply(line))
                                why = "not an error reply";
                        else if (overlong && !strstr(line, "\"EMSGSIZE\""))
                                why = "an over-long line, not EMSGSIZE";
                }
                if (line && log)
                        fprintf(log, "%s\n", line);
                /* After an over-long line the daemon may close the connection (when the line's end
                 * was past its buffer) or not: either way this one starts again. */
                if (!why && overlong)
                        overlong_n++;
                if (why) {
                        bad++;
                        fprintf(stderr, "hammer: line %ld (seed %" PRIu64 "): %s\n", i, seed, why);
                        print_escaped("sent", b.p, b.len);
                        if (line)
                                print_escaped("reply", line, strlen(line));
                } else if (!overlong)
                        errors++;
                if (!why && mono_s() - t0 > 1.0) {
                        /* The main loop serves every client: one request must not hold it. */
                        slow++;
                        fprintf(stderr, "hammer: line %ld (seed %" PRIu64 "): answered after %.1f s\n", i, seed, mono_s() - t0);
                        print_escaped("sent", b.p, b.len);
                }
                free(line);
                if (overlong || closed || c->eof || why)
                        conn_close(c);  /* next line on a new connection */
        }
        for (long i = 0; i < n_conns; i++)
                conn_close(&cs[i]);
        free(cs);
        free(b.p);
        if (log)
                fclose(log);
        free(used);
        printf("sent=%ld errors=%ld overlong=%ld slow=%ld bad=%ld\n", count, errors, overlong_n, slow, bad);
        return bad || slow ? 1 : 0;
}

/* --- --watch-vanish --- */

static int run_watch_vanish(long n, const char *jobs, double span, uint64_t seed) {
        struct conn *cs = xmalloc((size_t) n * sizeof(*cs));
        double *when = xmalloc((size_t) n * sizeof(*when));
        int *how = xmalloc((size_t) n * sizeof(*how));
        long replied = 0, events = 0, failed = 0, left;
        struct buf req = { 0 };
        double t0;

        rng_state = seed;
        buf_str(&req, "{\"id\":1,\"op\":\"watch\",\"interval_ms\":100");
        if (jobs) {
                buf_str(&req, ",\"jobs\":[");
                buf_str(&req, jobs);
                buf_char(&req, ']');
        }
        buf_str(&req, "}\n");
        for (long i = 0; i < n; i++) {
                int r = conn_open(&cs[i], mono_s() + 10);
                bool closed;
                char *line;

                if (r < 0) {
                        fprintf(stderr, "hammer: watcher %ld: connect: %s\n", i, strerror(-r));
                        failed++;
                        continue;
                }
                r = conn_send(&cs[i], req.p, req.len, mono_s() + 5);
                line = r < 0 ? NULL : conn_read_line(&cs[i], mono_s() + REPLY_TIMEOUT, &closed);
                if (line && is_ok_reply(line)) {
                        replied++;
                } else {
                        fprintf(stderr, "hammer: watcher %ld: %s\n", i, line ? line : "no reply");
                        failed++;
                        conn_close(&cs[i]);
                }
                free(line);
        }
        t0 = mono_s();
        for (long i = 0; i < n; i++) {
                when[i] = t0 + span * (double) rng_below(1000) / 1000.0;
                how[i] = (int) rng_below(4);
        }
        for (left = replied; left > 0;) {
                double next = t0 + span + 1;
                struct pollfd *pfds = xmalloc((size_t) n * sizeof(*pfds));
                nfds_t k = 0;

                for (long i = 0; i < n; i++)
                        if (cs[i].fd >= 0) {
                                if (when[i] < next)
                                        next = when[i];
                                /* Way 1 never reads again: its events pile up unread. */
                                if (how[i] != 1)
                                        pfds[k++] = (struct pollfd) { .fd = cs[i].fd, .events = POLLIN };
                        }
                (void) poll(pfds, k, ms_until(next));
                free(pfds);
                for (long i = 0; i < n; i++) {
                        static const char half[] = "{\"id\":2,\"op\":\"sta";
                        char *line;

                        if (cs[i].fd < 0)
                                continue;
                        if (how[i] != 1) {
                                (void) conn_fill(&cs[i]);
                                while ((line = conn_take_line(&cs[i]))) {
                                        events += strstr(line, "\"event\"") != NULL;
                                        free(line);
                                }
                        }
                        if (mono_s() < when[i] && !cs[i].eof)
                                continue;
                        switch (how[i]) {
                        case 2:         /* half-close first: the daemon sees EOF while watching */
                                shutdown(cs[i].fd, SHUT_WR);
                                usleep(1000);
                                break;
                        case 3:         /* half a request, then gone */
                                (void) conn_send(&cs[i], half, strlen(half), mono_s() + 1);
                                break;
                        default:
                                break;
                        }
                        conn_close(&cs[i]);
                        left--;
                }
        }
        printf("watchers=%ld replied=%ld failed=%ld events=%ld vanished=%ld\n", n, replied, failed, events, replied);
        free(cs);
        free(when);
        free(how);
        free(req.p);
        return failed ? 1 : 0;
}

static void usage(FILE *f) {
        fprintf(f, "usage: hammer --socket PATH MODE [OPTIONS]\n"
                   "  --connections N [--hold SECONDS] [--interval SECONDS]\n"
                   "  --slow | --silent | --trickle [--max-wait SECONDS]\n"
                   "  --idle-watch JOB [--max-wait SECONDS]\n"
                   "  --garbage SEED --count N [--conns K] [--path PATH]... [--log FILE]\n"
                   "  --watch-vanish N [--job ID]... [--for SECONDS] [--seed SEED]\n");
}

static bool parse_num(const char *s, double min, double max, double *ret) {
        char *end;
        double v;

        errno = 0;
        v = strtod(s, &end);
        if (errno || end == s || *end || v < min || v > max)
                return false;
        *ret = v;
        return true;
}

int main(int argc, char *argv[]) {
        enum { OPT_SOCKET = 256, OPT_CONNECTIONS, OPT_HOLD, OPT_INTERVAL, OPT_SLOW, OPT_SILENT, OPT_TRICKLE, OPT_MAX_WAIT,
               OPT_IDLE_WATCH, OPT_GARBAGE, OPT_COUNT, OPT_CONNS, OPT_PATH, OPT_LOG, OPT_WATCH_VANISH, OPT_JOB, OPT_FOR, OPT_SEED,
               OPT_HELP };
        static const struct option longopts[] = {
                { "socket", required_argument, NULL, OPT_SOCKET },
                { "connections", required_argument, NULL, OPT_CONNECTIONS },
                { "hold", required_argument, NULL, OPT_HOLD },
                { "interval", required_argument, NULL, OPT_INTERVAL },
                { "slow", no_argument, NULL, OPT_SLOW },
                { "silent", no_argument, NULL, OPT_SILENT },
                { "trickle", no_argument, NULL, OPT_TRICKLE },
                { "max-wait", required_argument, NULL, OPT_MAX_WAIT },
                { "idle-watch", required_argument, NULL, OPT_IDLE_WATCH },
                { "garbage", required_argument, NULL, OPT_GARBAGE },
                { "count", required_argument, NULL, OPT_COUNT },
                { "conns", required_argument, NULL, OPT_CONNS },
                { "path", required_argument, NULL, OPT_PATH },
                { "log", required_argument, NULL, OPT_LOG },
                { "watch-vanish", required_argument, NULL, OPT_WATCH_VANISH },
                { "job", required_argument, NULL, OPT_JOB },
                { "for", required_argument, NULL, OPT_FOR },
                { "seed", required_argument, NULL, OPT_SEED },
                { "help", no_argument, NULL, OPT_HELP },
                {}
        };
        enum mode mode = MODE_NONE;
        double n = 0, hold = 0, interval = 0, max_wait = 30, count = 100, conns = 1, span = 3, seed = 1;
        const char *log_path = NULL, *idle_job = NULL;
        struct buf jobs = { 0 };
        int opt, r;

        paths = xmalloc((size_t) argc * sizeof(*paths));
        while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
                bool ok = true;
                double v;

                switch (opt) {
                case OPT_SOCKET: sock_path = optarg; break;
                case OPT_CONNECTIONS: mode = MODE_CONNECTIONS; ok = parse_num(optarg, 1, 100000, &n); break;
                case OPT_HOLD: ok = parse_num(optarg, 0, 3600, &hold); break;
                case OPT_INTERVAL: ok = parse_num(optarg, 0, 3600, &interval); break;
                case OPT_SLOW: mode = MODE_SLOW; break;
                case OPT_SILENT: mode = MODE_SILENT; break;
                case OPT_TRICKLE: mode = MODE_TRICKLE; break;
                case OPT_MAX_WAIT: ok = parse_num(optarg, 0.1, 3600, &max_wait); break;
                case OPT_IDLE_WATCH: mode = MODE_IDLE_WATCH; idle_job = optarg; ok = parse_num(optarg, 1, 1e15, &v); break;
                case OPT_GARBAGE: mode = MODE_GARBAGE; ok = parse_num(optarg, 0, 1e15, &seed); break;
                case OPT_COUNT: ok = parse_num(optarg, 1, 1e7, &count); break;
                case OPT_CONNS: ok = parse_num(optarg, 1, 1000, &conns); break;
                case OPT_PATH: paths[n_paths++] = optarg; break;
                case OPT_LOG: log_path = optarg; break;
                case OPT_WATCH_VANISH: mode = MODE_WATCH_VANISH; ok = parse_num(optarg, 1, 100000, &n); break;
                case OPT_JOB:
                        ok = parse_num(optarg, 1, 1e15, &v);
                        if (jobs.len)
                                buf_char(&jobs, ',');
                        buf_str(&jobs, optarg);
                        break;
                case OPT_FOR: ok = parse_num(optarg, 0, 3600, &span); break;
                case OPT_SEED: ok = parse_num(optarg, 0, 1e15, &seed); break;
                case OPT_HELP: usage(stdout); return 0;
                default: usage(stderr); return 2;
                }
                if (!ok) {
                        fprintf(stderr, "hammer: bad value \"%s\"\n", optarg);
                        return 2;
                }
        }
        if (optind < argc || !sock_path || mode == MODE_NONE) {
                usage(stderr);
                return 2;
        }
        raise_nofile();
        switch (mode) {
        case MODE_CONNECTIONS: r = run_connections((long) n, hold, interval); break;
        case MODE_SLOW:
        case MODE_SILENT:
        case MODE_TRICKLE:
        case MODE_IDLE_WATCH: r = run_idle(mode, idle_job, max_wait); break;
        case MODE_GARBAGE: r = run_garbage((uint64_t) seed, (long) count, (long) conns, log_path); break;
        case MODE_WATCH_VANISH: r = run_watch_vanish((long) n, jobs.len ? jobs.p : NULL, span, (uint64_t) seed); break;
        default: r = 2; break;
        }
        /* Everything freed: the helper runs under LeakSanitizer in the ASan build. */
        free(jobs.p);
        free(paths);
        return r;
}
