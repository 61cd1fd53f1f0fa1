/* wiped: command line, state directory, socket, and the order of start-up and shutdown. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>

#include "cleanup.h"
#include "daemon.h"
#include "protocol.h"
#include "units.h"

struct options {
        const char *socket_path;
        const char *state_dir;
        unsigned threads;
        unsigned queue_depth;
        unsigned buffers;
        uint32_t io_size;
        uint64_t max_rate;
        bool foreground;
        bool verbose;
};

static void usage(FILE *f) {
        fprintf(f,
                "Usage: wiped [OPTION]...\n"
                "Wipe block devices on request, as fast as they can be written.\n\n"
                "  -s, --socket PATH      control socket (default $WIPED_SOCKET or " PROTOCOL_SOCKET_DEFAULT ")\n"
                "  -d, --state-dir DIR    state directory (default " WIPED_STATE_DIR_DEFAULT ")\n"
                "  -t, --threads N        worker threads (default: one per CPU)\n"
                "      --buffers N        I/O buffers per thread: I/Os in flight (default %d)\n"
                "      --io-size SIZE     bytes per buffer: the largest I/O, multiple of 4096 (default 1M)\n"
                "      --queue-depth N    I/Os in flight per device (default 0: %d, rotational %d)\n"
                "      --max-rate RATE    limit of all I/O together, bytes/s (200M = 200 MB/s; default none)\n"
                "  -f, --foreground       do not detach\n"
                "  -v, --verbose          debug messages\n"
                "  -h, --help             this text\n"
                "  -V, --version          version\n\n"
                "See wiped(8).\n", WIPED_BUFFERS, WIPED_QD_SSD, WIPED_QD_ROTATIONAL);
}

static int parse_args(int argc, char **argv, struct options *o) {
        enum { OPT_QD = 256, OPT_IO, OPT_BUFFERS, OPT_RATE };
        static const struct option longopts[] = {
                { "socket", required_argument, NULL, 's' },
                { "state-dir", required_argument, NULL, 'd' },
                { "threads", required_argument, NULL, 't' },
                { "queue-depth", required_argument, NULL, OPT_QD },
                { "io-size", required_argument, NULL, OPT_IO },
                { "buffers", required_argument, NULL, OPT_BUFFERS },
                { "max-rate", required_argument, NULL, OPT_RATE },
                { "foreground", no_argument, NULL, 'f' },
                { "verbose", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {}
        };
        long n;
        uint64_t sz;
        char *end;
        int c;

        while ((c = getopt_long(argc, argv, "s:d:t:fvhV", longopts, NULL)) >= 0)
                switch (c) {
                case 's':
                        o->socket_path = optarg;
                        break;
                case 'd':
                        o->state_dir = optarg;
                        break;
                case 't':
                case OPT_QD:
                case OPT_BUFFERS: {
                        long max = c == 't' ? WIPED_THREADS_MAX : c == OPT_QD ? WIPED_QD_MAX : WIPED_BUFFERS_MAX;
                        const char *what = c == 't' ? "thread count" : c == OPT_QD ? "queue depth" : "buffer count";

                        errno = 0;
                        n = strtol(optarg, &end, 10);
                        /* A queue depth of 0 means the default: from the device. */
                        if (errno || *end || end == optarg || n < (c == OPT_QD ? 0 : 1) || n > max) {
                                fprintf(stderr, "wiped: %s: invalid %s (%d..%ld)\n", optarg, what, c == OPT_QD ? 0 : 1, max);
                                return -EINVAL;
                        }
                        if (c == 't')
                                o->threads = (unsigned) n;
                        else if (c == OPT_QD)
                                o->queue_depth = (unsigned) n;
                        else
                                o->buffers = (unsigned) n;
                        break;
                }
                case OPT_RATE:
                        if (units_parse_rate(optarg, &o->max_rate) < 0) {
                                fprintf(stderr, "wiped: %s: invalid rate (e.g. 200M for 200 MB/s, 0 for none)\n", optarg);
                                return -EINVAL;
                        }
                        break;
                case OPT_IO:
                        if (units_parse_size(optarg, &sz) < 0 || sz < 4096 || sz > (64u << 20) || sz % 4096) {
                                fprintf(stderr, "wiped: %s: invalid I/O size (4K..64M, multiple of 4K)\n", optarg);
                                return -EINVAL;
                        }
                        o->io_size = (uint32_t) sz;
                        break;
                case 'f':
                        o->foreground = true;
                        break;
                case 'v':
                        o->verbose = true;
                        break;
                case 'h':
                        usage(stdout);
                        exit(EXIT_SUCCESS);
                case 'V':
                        printf("wiped " PACKAGE_VERSION "\n");
                        exit(EXIT_SUCCESS);
                default:
                        usage(stderr);
                        return -EINVAL;
                }
        if (optind < argc) {
                fprintf(stderr, "wiped: unexpected argument: %s\n", argv[optind]);
                return -EINVAL;
        }
        return 0;
}

/* Create the state directory and hold its lock for the life of the process, so that two daemons
 * never share one. Returns the lock fd or -errno. */
static int state_dir_lock(const char *dir) {
        _cleanup_free_ char *path = NULL;
        int fd;

        if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
                int e = errno;

                log_error("%s: cannot create state directory: %s", dir, strerror(e));
                return -e;
        }
        if (asprintf(&path, "%s/wiped.lock", dir) < 0)
                return -ENOMEM;
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) {
                int e = errno;

                log_error("%s: %s", path, strerror(e));
                return -e;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                int e = errno;

                log_error("%s: %s", dir, e == EWOULDBLOCK ? "another wiped uses this state directory" : strerror(e));
                close(fd);
                return -e;
        }
        return fd;
}

/* The listening socket: the one systemd passed, or our own at path (made=true). */
static int socket_open(const char *path, bool *made) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;
        struct group *g;
        struct stat st;
        int n;

        *made = false;
        n = sd_listen_fds(1);
        if (n > 1) {
                log_error("expected one socket from systemd, got %d", n);
                return -EINVAL;
        }
        if (n == 1) {
                if (sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_STREAM, 1, NULL, 0) <= 0) {
                        log_error("the socket passed by systemd is not a listening AF_UNIX stream socket");
                        return -EINVAL;
                }
                return SD_LISTEN_FDS_START;
        }

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
        *made = true;
        g = getgrnam(WIPED_GROUP);
        if (g && chown(path, 0, g->gr_gid) < 0)
                log_warning("%s: cannot give it to group %s: %s", path, WIPED_GROUP, strerror(errno));
        if (chmod(path, 0660) < 0 || listen(fd, 128) < 0) {
                int e = errno;

                log_error("%s: %s", path, strerror(e));
                unlink(path);
                *made = false;
                return -e;
        }
        return TAKE_FD(fd);
}

/* Detach: the parent returns only once the child is serving (or has failed). Returns the
 * write end of the readiness pipe in the child (-1 in foreground mode); exits in the parent. */
static int daemonize(void) {
        int p[2];
        pid_t pid;
        char c = 1;

        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid > 0) {
                close(p[1]);
                exit(read(p[0], &c, 1) == 1 && c == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
        }
        close(p[0]);
        if (setsid() < 0)
                return -errno;
        return p[1];
}

static void daemonize_ready(int fd, bool ok) {
        char c = ok ? 0 : 1;
        int null;

        if (fd < 0)
                return;
        (void) !write(fd, &c, 1);
        close(fd);
        if (ok && (null = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0) {
                dup2(null, STDIN_FILENO);
                dup2(null, STDOUT_FILENO);
                close(null);
        }
}

/* Stop every job at a consistent point: the flusher completes what it has (before the pool goes:
 * it may schedule a next stage), workers drain what is in flight, and every unfinished job ends
 * interrupted. Safe to call twice. */
static void stop_jobs(void *arg) {
        struct pool **pool = arg;

        job_interrupt_all();
        job_flusher_stop();
        pool_free(*pool);
        *pool = NULL;
        job_interrupt_all();
        job_save_unfinished();
}

int main(int argc, char **argv) {
        struct options o = {
                .socket_path = getenv("WIPED_SOCKET") ? getenv("WIPED_SOCKET") : PROTOCOL_SOCKET_DEFAULT,
                .state_dir = WIPED_STATE_DIR_DEFAULT,
                .buffers = WIPED_BUFFERS,
                .io_size = 1u << 20,
        };
        struct pool *pool = NULL;
        int lock_fd = -1, listen_fd = -1, ready_fd = -1, r;
        bool made = false;
        sigset_t mask;
        long ncpu;

        if (parse_args(argc, argv, &o) < 0)
                return 2;
        log_setup(o.verbose);
        if (o.threads == 0) {
                ncpu = sysconf(_SC_NPROCESSORS_ONLN);
                o.threads = ncpu < 1 ? 1 : ncpu > WIPED_THREADS_MAX ? WIPED_THREADS_MAX : (unsigned) ncpu;
        }

        if (!o.foreground) {
                ready_fd = daemonize();
                if (ready_fd < 0) {
                        log_error("cannot detach: %s", strerror(-ready_fd));
                        return EXIT_FAILURE;
                }
        }

        /* Signals go to the main loop's signalfd; threads started later inherit the mask. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &mask, NULL);
        signal(SIGPIPE, SIG_IGN);
        umask(0077);
        /* One descriptor per client and per running job: take the hard limit. */
        {
                struct rlimit rl;

                if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                        rl.rlim_cur = rl.rlim_max;
                        (void) setrlimit(RLIMIT_NOFILE, &rl);
                }
        }

        lock_fd = state_dir_lock(o.state_dir);
        if (lock_fd < 0 || job_set_state_dir(o.state_dir) < 0)
                goto fail;
        listen_fd = socket_open(o.socket_path, &made);
        if (listen_fd < 0) {
                log_error("%s: cannot listen: %s", o.socket_path, strerror(-listen_fd));
                goto fail;
        }
        r = job_flusher_start();
        if (r < 0)
                log_warning("cannot start the flusher thread (%s): workers flush themselves", strerror(-r));
        r = pool_new(&pool, &(struct pool_config) { .threads = o.threads, .buffers = o.buffers, .io_size = o.io_size,
                                                    .queue_depth = o.queue_depth, .max_rate = o.max_rate });
        if (r < 0) {
                log_error("cannot start %u workers: %s", o.threads, strerror(-r));
                goto fail;
        }
        {
                char mem[32], rate[32], qd[32];

                if (o.queue_depth)
                        snprintf(qd, sizeof(qd), "%u", o.queue_depth);
                else
                        snprintf(qd, sizeof(qd), "%d (rotational %d)", WIPED_QD_SSD, WIPED_QD_ROTATIONAL);
                log_info("wiped " PACKAGE_VERSION ": socket %s, state %s; %u threads x %u buffers x %u KiB = %s of I/O "
                         "buffers (%s); %s I/Os in flight per device; rate limit %s", o.socket_path, o.state_dir,
                         o.threads, o.buffers, o.io_size >> 10, units_size(mem, sizeof(mem), pool_memory(pool)),
                         pool_registered(pool) ? "registered" : "not registered", qd,
                         o.max_rate ? units_rate(rate, sizeof(rate), (double) o.max_rate) : "none");
        }
        daemonize_ready(ready_fd, true);
        ready_fd = -1;

        r = server_run(listen_fd, pool, stop_jobs, &pool);
        if (r < 0) {
                log_error("main loop failed: %s", strerror(-r));
                stop_jobs(&pool);
        }
        job_free_all();
        if (made)
                unlink(o.socket_path);
        close(listen_fd);
        close(lock_fd);
        log_info("stopped");
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;

fail:
        daemonize_ready(ready_fd, false);
        job_flusher_stop();
        pool_free(pool);
        if (listen_fd >= 0)
                close(listen_fd);
        if (made)
                unlink(o.socket_path);
        if (lock_fd >= 0)
                close(lock_fd);
        return EXIT_FAILURE;
}
