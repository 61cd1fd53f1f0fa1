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
#include "conffile.h"
#include "daemon-config.h"
#include "daemon.h"
#include "deliver.h"
#include "protocol.h"
#include "units.h"

struct options {
        const char *config_path;        /* --config, NULL: the default file (may be missing) */
        struct conffile settings;       /* the options that are also keys of the file: they win */
        bool foreground;
        bool verbose;
        const char *pidfile;            /* --pidfile: written once serving, removed at exit */
        bool check_config;              /* --check-config: check the configuration, start nothing */
};

static bool log_verbose_on;     /* --verbose, for log_setup() again once detached */

static void usage(FILE *f) {
        fprintf(f,
                "Usage: wiped [OPTION]...\n"
                "Wipe block devices on request, as fast as they can be written.\n\n"
                "  -c, --config FILE      configuration file (default " WIPED_CONFIG_DEFAULT ", if it exists)\n"
                "  -s, --socket PATH      control socket (default $WIPED_SOCKET or " PROTOCOL_SOCKET_DEFAULT ")\n"
                "      --status-socket PATH|none\n"
                "                         read-only socket for everyone (default: beside the control\n"
                "                         socket, " PROTOCOL_STATUS_SOCKET_DEFAULT "; none: no such socket)\n"
                "  -d, --state-dir DIR    state directory (default " WIPED_STATE_DIR_DEFAULT ")\n"
                "  -t, --threads N        worker threads (default: one per CPU)\n"
                "      --buffers N        I/O buffers per thread: I/Os in flight (default %d)\n"
                "      --io-size SIZE     bytes per buffer: the largest I/O, multiple of 4096 (default 1M)\n"
                "      --queue-depth N    I/Os in flight per device (default 0: %d, rotational %d)\n"
                "      --max-rate RATE    limit of all I/O together, bytes/s (200M = 200 MB/s; default none)\n"
                "      --worker-policy other|batch|idle\n"
                "                         CPU scheduling policy of the worker threads (default %s)\n"
                "      --worker-nice N    nice value of the worker threads, 0..19 (default %d)\n"
                "      --chunk-size SIZE  bytes per chunk of a new job, 1M..1G, multiple of 1M (default 64M)\n"
                "      --checkpoint-interval SECONDS\n"
                "                         longest time between checkpoints of a job, 0.1..3600 (default 5)\n"
                "      --checkpoint-bytes SIZE\n"
                "                         checkpoint also after this many bytes, 1M..1T (default 4G)\n"
                "      --resume auto|manual\n"
                "                         resume unfinished jobs at start, or wait for wipectl resume\n"
                "                         (default auto)\n"
                "      --history-max-age DAYS\n"
                "                         forget ended jobs older than this (default 0: never)\n"
                "      --max-bad SIZE     bad sectors a job skips before it fails (default 16M)\n"
                "      --client-timeout SECONDS\n"
                "                         close a client silent mid-request or idle this long (default 60)\n"
                "      --keystream-backend auto|openssl|gcrypt|CIPHER:BACKEND,...\n"
                "                         the library that makes the keystream (default auto: the\n"
                "                         fastest measured at start-up, per cipher)\n"
                "      --job-end-hook COMMAND\n"
                "                         run with /bin/sh -c when a job ends (default none; wiped(8) HOOKS)\n"
                "      --hook-timeout SECONDS\n"
                "                         kill a hook that runs longer, 1..86400 (default 60)\n"
                "      --hook-max-running N\n"
                "                         hooks run at once, 1..64; more wait (default 4)\n"
                "      --policy-dir DIR|none\n"
                "                         the bay policies, one NAME.conf each (default\n"
                "                         " WIPED_POLICY_DIR_DEFAULT "; none: no policies)\n"
                "      --policy-events auto|udev|kernel\n"
                "                         where the policies learn of new devices (default auto)\n"
                "      --metrics-listen ADDRESS:PORT\n"
                "                         serve Prometheus metrics at http://ADDRESS:PORT/metrics\n"
                "                         (numeric: 127.0.0.1:9137, [::1]:9137; default none)\n"
                "      --metrics-textfile PATH.prom\n"
                "                         keep node_exporter's textfile of the metrics there (default none)\n"
                "      --pidfile PATH     write the daemon's pid there once it serves (removed at exit)\n"
                "      --check-config     check the configuration, print the settings in effect and\n"
                "                         exit (0: it is valid), starting nothing\n"
                "  -f, --foreground       do not detach\n"
                "  -v, --verbose          debug messages\n"
                "  -h, --help             this text\n"
                "  -V, --version          version\n\n"
                "The command line wins over the configuration file. See wiped(8).\n", WIPED_BUFFERS, WIPED_QD_SSD,
                WIPED_QD_ROTATIONAL, conffile_policy_name(WIPED_WORKER_POLICY_DEFAULT), WIPED_WORKER_NICE_DEFAULT);
}

enum {
        OPT_QD = 256,
        OPT_IO,
        OPT_BUFFERS,
        OPT_RATE,
        OPT_CHUNK,
        OPT_CKPT_INTERVAL,
        OPT_CKPT_BYTES,
        OPT_RESUME,
        OPT_HISTORY,
        OPT_MAX_BAD,
        OPT_CLIENT_TIMEOUT,
        OPT_BACKEND,
        OPT_WORKER_POLICY,
        OPT_WORKER_NICE,
        OPT_STATUS_SOCKET,
        OPT_JOB_END_HOOK,
        OPT_HOOK_TIMEOUT,
        OPT_HOOK_MAX_RUNNING,
        OPT_POLICY_DIR,
        OPT_POLICY_EVENTS,
        OPT_PIDFILE = 0x300,
        OPT_CHECK_CONFIG,
        OPT_METRICS_LISTEN = 0x310,
        OPT_METRICS_TEXTFILE,
};

/* The options that are keys of the configuration file too (the same names and checks): true
 * with the key of option c. */
static bool option_key(int c, enum conffile_key *ret) {
        static const struct { int opt; enum conffile_key key; } keyed[] = {
                { 's', CONFFILE_SOCKET }, { 'd', CONFFILE_STATE_DIR }, { 't', CONFFILE_THREADS },
                { OPT_QD, CONFFILE_QUEUE_DEPTH }, { OPT_IO, CONFFILE_IO_SIZE }, { OPT_BUFFERS, CONFFILE_BUFFERS },
                { OPT_RATE, CONFFILE_MAX_RATE }, { OPT_CHUNK, CONFFILE_CHUNK_SIZE },
                { OPT_CKPT_INTERVAL, CONFFILE_CHECKPOINT_INTERVAL }, { OPT_CKPT_BYTES, CONFFILE_CHECKPOINT_BYTES },
                { OPT_RESUME, CONFFILE_RESUME }, { OPT_HISTORY, CONFFILE_HISTORY_MAX_AGE },
                { OPT_MAX_BAD, CONFFILE_MAX_BAD }, { OPT_CLIENT_TIMEOUT, CONFFILE_CLIENT_TIMEOUT },
                { OPT_BACKEND, CONFFILE_KEYSTREAM_BACKEND },
                { OPT_WORKER_POLICY, CONFFILE_WORKER_POLICY }, { OPT_WORKER_NICE, CONFFILE_WORKER_NICE },
                { OPT_STATUS_SOCKET, CONFFILE_STATUS_SOCKET },
                { OPT_JOB_END_HOOK, CONFFILE_JOB_END_HOOK }, { OPT_HOOK_TIMEOUT, CONFFILE_HOOK_TIMEOUT },
                { OPT_HOOK_MAX_RUNNING, CONFFILE_HOOK_MAX_RUNNING },
                { OPT_POLICY_DIR, CONFFILE_POLICY_DIR }, { OPT_POLICY_EVENTS, CONFFILE_POLICY_EVENTS },
                { OPT_METRICS_LISTEN, CONFFILE_METRICS_LISTEN }, { OPT_METRICS_TEXTFILE, CONFFILE_METRICS_TEXTFILE },
        };

        for (size_t i = 0; i < sizeof(keyed) / sizeof(keyed[0]); i++)
                if (keyed[i].opt == c) {
                        *ret = keyed[i].key;
                        return true;
                }
        return false;
}

/* Choose the library that makes each cipher's keystream, before any thread makes one: the
 * configured one, else the fastest measured here and now (a few ms). 0 or -errno (logged). */
static int keystream_setup(const struct conffile *s) {
        enum keystream_backend want[_KEYSTREAM_CIPHER_MAX] = {};

        if (s->keystream_backend && keystream_backend_spec_parse(s->keystream_backend, want) < 0) {
                log_error("keystream-backend = %s: not a backend setting", s->keystream_backend);
                return -EINVAL;
        }
        for (enum keystream_cipher c = KEYSTREAM_AES_128_CTR; c < _KEYSTREAM_CIPHER_MAX; c++) {
                struct keystream_choice ch;
                char speeds[128] = "";
                int r = keystream_backend_choose(c, want[c], KEYSTREAM_CHOOSE_BYTES, &ch);

                if (r < 0) {
                        log_error("keystream-backend: %s cannot make %s here: %s", keystream_backend_name(want[c]),
                                  keystream_cipher_name(c), strerror(-r));
                        return r;
                }
                for (enum keystream_backend b = KEYSTREAM_BACKEND_OPENSSL; b < _KEYSTREAM_BACKEND_MAX; b++)
                        if (ch.mbps[b] > 0) {
                                size_t n = strlen(speeds);

                                snprintf(speeds + n, sizeof(speeds) - n, "%s%s %.1f GB/s", n ? ", " : "",
                                         keystream_backend_name(b), ch.mbps[b] / 1000);
                        }
                log_info("keystream: %s made by %s (%s; measured on one thread: %s)", keystream_cipher_name(c),
                         keystream_backend_name(ch.backend), ch.configured ? "configured" : "the fastest", speeds);
        }
        return 0;
}

static int parse_args(int argc, char **argv, struct options *o) {
        static const struct option longopts[] = {
                { "config", required_argument, NULL, 'c' },
                { "socket", required_argument, NULL, 's' },
                { "state-dir", required_argument, NULL, 'd' },
                { "threads", required_argument, NULL, 't' },
                { "queue-depth", required_argument, NULL, OPT_QD },
                { "io-size", required_argument, NULL, OPT_IO },
                { "buffers", required_argument, NULL, OPT_BUFFERS },
                { "max-rate", required_argument, NULL, OPT_RATE },
                { "chunk-size", required_argument, NULL, OPT_CHUNK },
                { "checkpoint-interval", required_argument, NULL, OPT_CKPT_INTERVAL },
                { "checkpoint-bytes", required_argument, NULL, OPT_CKPT_BYTES },
                { "resume", required_argument, NULL, OPT_RESUME },
                { "history-max-age", required_argument, NULL, OPT_HISTORY },
                { "max-bad", required_argument, NULL, OPT_MAX_BAD },
                { "client-timeout", required_argument, NULL, OPT_CLIENT_TIMEOUT },
                { "keystream-backend", required_argument, NULL, OPT_BACKEND },
                { "worker-policy", required_argument, NULL, OPT_WORKER_POLICY },
                { "worker-nice", required_argument, NULL, OPT_WORKER_NICE },
                { "status-socket", required_argument, NULL, OPT_STATUS_SOCKET },
                { "job-end-hook", required_argument, NULL, OPT_JOB_END_HOOK },
                { "hook-timeout", required_argument, NULL, OPT_HOOK_TIMEOUT },
                { "hook-max-running", required_argument, NULL, OPT_HOOK_MAX_RUNNING },
                { "policy-dir", required_argument, NULL, OPT_POLICY_DIR },
                { "policy-events", required_argument, NULL, OPT_POLICY_EVENTS },
                { "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
                { "metrics-listen", required_argument, NULL, OPT_METRICS_LISTEN },
                { "metrics-textfile", required_argument, NULL, OPT_METRICS_TEXTFILE },
                { "foreground", no_argument, NULL, 'f' },
                { "pidfile", required_argument, NULL, OPT_PIDFILE },
                { "verbose", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {}
        };
        enum conffile_key key;
        char msg[256];
        int c, r;

        while ((c = getopt_long(argc, argv, "c:s:d:t:fvhV", longopts, NULL)) >= 0) {
                if (option_key(c, &key)) {
                        /* --status-socket "": none. */
                        r = conffile_set(&o->settings, key, key == CONFFILE_STATUS_SOCKET && !*optarg ? "none" : optarg,
                                         msg, sizeof(msg));
                        if (r < 0) {
                                fprintf(stderr, "wiped: %s: %s\n", optarg, r == -EINVAL ? msg : strerror(-r));
                                return r;
                        }
                        continue;
                }
                switch (c) {
                case 'c':
                        o->config_path = optarg;
                        break;
                case OPT_CHECK_CONFIG:
                        o->check_config = true;
                        break;
                case 'f':
                        o->foreground = true;
                        break;
                case OPT_PIDFILE:
                        o->pidfile = optarg;
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
        }
        if (optind < argc) {
                fprintf(stderr, "wiped: unexpected argument: %s\n", argv[optind]);
                return -EINVAL;
        }
        return 0;
}

/* Create the state directory and hold its lock for the life of the process, so that two daemons
 * never share one; its file wiped.lock holds our pid. Returns the lock fd or -errno. */
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
                char pid[24] = "";
                ssize_t n;

                /* The holder wrote its pid into the file: name it. */
                if (e == EWOULDBLOCK && (n = pread(fd, pid, sizeof(pid) - 1, 0)) > 0) {
                        pid[n] = '\0';
                        pid[strspn(pid, "0123456789")] = '\0';
                }
                if (e == EWOULDBLOCK && pid[0])
                        log_error("%s: another wiped (pid %s) uses this state directory", dir, pid);
                else
                        log_error("%s: %s", dir, e == EWOULDBLOCK ? "another wiped uses this state directory" : strerror(e));
                close(fd);
                return -e;
        }
        /* Our pid, for the message of a second daemon (after detaching: the pid that stays). */
        if (ftruncate(fd, 0) < 0 || dprintf(fd, "%ld\n", (long) getpid()) < 0)
                log_warning("%s: cannot write the pid: %s", path, strerror(errno));
        return fd;
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
                dup2(null, STDERR_FILENO);
                close(null);
                /* Nothing to the terminal we left: stderr is /dev/null, so the journal or syslog. */
                log_setup(log_verbose_on);
        }
}

/* The pid of a live wiped that path names, other than us; 0 when none (no file, a stale one). */
static pid_t pidfile_owner(const char *path) {
        _cleanup_free_ char *comm = NULL;
        char buf[32] = "", cpath[64], name[32] = "";
        FILE *f = fopen(path, "re");
        long pid = 0;

        if (!f)
                return 0;
        if (fgets(buf, sizeof(buf), f))
                pid = strtol(buf, NULL, 10);
        fclose(f);
        if (pid <= 0 || pid == getpid() || (kill((pid_t) pid, 0) < 0 && errno == ESRCH))
                return 0;
        snprintf(cpath, sizeof(cpath), "/proc/%ld/comm", pid);
        f = fopen(cpath, "re");
        if (!f)
                return 0;
        if (!fgets(name, sizeof(name), f))
                name[0] = '\0';
        fclose(f);
        name[strcspn(name, "\n")] = '\0';
        return strcmp(name, "wiped") == 0 ? (pid_t) pid : 0;
}

/* Write our pid to path through a temporary file renamed over it, so that nobody reads half of
 * it. 0 or -errno (logged). */
static int pidfile_write(const char *path) {
        _cleanup_free_ char *tmp = NULL;
        FILE *f;

        if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
                return -ENOMEM;
        {
                int fd = mkostemp(tmp, O_CLOEXEC);

                if (fd < 0 || fchmod(fd, 0644) < 0 || !(f = fdopen(fd, "w"))) {
                        int e = errno;

                        if (fd >= 0) {
                                close(fd);
                                unlink(tmp);
                        }
                        log_error("%s: cannot write the pid file: %s", path, strerror(e));
                        return -e;
                }
        }
        if (fprintf(f, "%ld\n", (long) getpid()) < 0 || fclose(f) != 0 || rename(tmp, path) < 0) {
                int e = errno;

                unlink(tmp);
                log_error("%s: cannot write the pid file: %s", path, strerror(e));
                return -e;
        }
        return 0;
}

/* Stop every job at a consistent point: the flusher completes what it has (before the pool goes:
 * it may schedule a next stage), workers drain what is in flight, and every unfinished job ends
 * interrupted. Safe to call twice. */
static void stop_jobs(void *arg) {
        struct pool **pool = arg;

        job_interrupt_all();
        fw_step_wait_all(job_persist_all);
        job_flusher_stop();
        pool_free(*pool);
        *pool = NULL;
        job_interrupt_all();
        job_persist_all();
}

int main(int argc, char **argv) {
        struct options o = {};
        const struct conffile *s;
        struct pool *pool = NULL;
        int lock_fd = -1, ready_fd = -1, r;
        sigset_t mask;

        if (parse_args(argc, argv, &o) < 0) {
                conffile_done(&o.settings);
                return 2;
        }
        log_setup(o.verbose);
        log_verbose_on = o.verbose;
        /* $WIPED_SOCKET: under --socket, over the file. */
        if (!o.settings.set[CONFFILE_SOCKET] && getenv("WIPED_SOCKET") && *getenv("WIPED_SOCKET")) {
                char msg[256];

                if (conffile_set(&o.settings, CONFFILE_SOCKET, getenv("WIPED_SOCKET"), msg, sizeof(msg)) < 0) {
                        log_error("out of memory");
                        return EXIT_FAILURE;
                }
        }
        /* --check-config: the configuration only; no state directory, socket or detaching. */
        if (o.check_config) {
                r = config_test(o.config_path, &o.settings);
                conffile_done(&o.settings);
                config_free();
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        }
        /* After --check-config, which an admin runs beside the daemon before a reload. */
        if (o.pidfile) {
                pid_t other = pidfile_owner(o.pidfile);

                if (other > 0) {
                        log_error("%s: names wiped %ld, still running", o.pidfile, (long) other);
                        conffile_done(&o.settings);
                        return EXIT_FAILURE;
                }
        }
        /* Before anything else: a configuration that does not parse starts nothing. */
        if (config_load(o.config_path, &o.settings) < 0) {
                conffile_done(&o.settings);
                config_free();
                return EXIT_FAILURE;
        }
        /* What follows never changes while the daemon runs: a reload keeps these settings. */
        s = config_settings();

        /* Under socket activation the service manager supervises us, and the passed socket is
         * only ours while our pid is the one it names (LISTEN_PID): never detach then. */
        if (!o.foreground && !getenv("LISTEN_FDS")) {
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

        /* libcurl's global state, before any thread. */
        if (deliver_global_init() < 0)
                goto fail;
        lock_fd = state_dir_lock(s->state_dir);
        if (lock_fd < 0 || job_set_state_dir(s->state_dir) < 0)
                goto fail;
        if (server_listen(s->socket, strcmp(s->status_socket, "none") == 0 ? NULL : s->status_socket) < 0)
                goto fail;
        if (keystream_setup(s) < 0)
                goto fail;
        r = job_flusher_start();
        if (r < 0)
                log_warning("cannot start the flusher thread (%s): workers flush themselves", strerror(-r));
        r = pool_new(&pool, &(struct pool_config) { .threads = s->threads, .buffers = s->buffers, .io_size = s->io_size,
                                                    .queue_depth = s->queue_depth, .max_rate = s->max_rate,
                                                    .worker_policy = (int) s->worker_policy,
                                                    .worker_nice = s->worker_nice });
        if (r < 0) {
                log_error("cannot start %u workers: %s", s->threads, strerror(-r));
                goto fail;
        }
        {
                char mem[32], rate[32], qd[32], io[32];

                if (s->queue_depth)
                        snprintf(qd, sizeof(qd), "%u", s->queue_depth);
                else
                        snprintf(qd, sizeof(qd), "%d (rotational %d)", WIPED_QD_SSD, WIPED_QD_ROTATIONAL);
                /* Sizes as wipectl version prints them ("1.00 MiB"), counts with their singular. */
                log_info("wiped " PACKAGE_VERSION ": socket %s, state %s; %u %s x %u %s x %s = %s of I/O "
                         "buffers (%s); %s I/Os in flight per device; rate limit %s; workers at policy %s, nice %u",
                         s->socket, s->state_dir, s->threads, units_plural(s->threads, "thread", "threads"), s->buffers,
                         units_plural(s->buffers, "buffer", "buffers"), units_size(io, sizeof(io), s->io_size),
                         units_size(mem, sizeof(mem), pool_memory(pool)),
                         pool_registered(pool) ? "registered" : "not registered", qd,
                         s->max_rate ? units_rate(rate, sizeof(rate), (double) s->max_rate) : "none",
                         conffile_policy_name(s->worker_policy), s->worker_nice);
        }
        r = hook_start();
        if (r < 0) {
                log_error("cannot start the hook thread: %s", strerror(-r));
                goto fail;
        }
        /* Before the jobs: a report written from here on goes to the outbox. */
        if (deliver_start(s->state_dir) < 0)
                goto fail;
        job_load_all(pool);
        if (metrics_start(pool) < 0)
                goto fail;
        if (o.pidfile && pidfile_write(o.pidfile) < 0)
                goto fail;
        daemonize_ready(ready_fd, true);
        ready_fd = -1;

        r = server_run(pool, stop_jobs, &pool);
        if (r < 0) {
                log_error("main loop failed: %s", strerror(-r));
                stop_jobs(&pool);
        }
        /* The hooks that ran meanwhile into their records; those that did not, pending there. */
        hook_stop();
        hook_collect();
        job_persist_all();
        /* A transfer under way is aborted; its report stays in the outbox for the next start. */
        deliver_stop();
        /* After the jobs stopped: the last textfile shows how they were left. */
        metrics_stop();
        job_free_all();
        report_store_free();
        deliver_global_cleanup();
        if (o.pidfile)
                unlink(o.pidfile);
        server_unlisten();
        close(lock_fd);
        log_info("stopped");
        config_free();
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;

fail:
        daemonize_ready(ready_fd, false);
        hook_stop();
        deliver_stop();
        metrics_stop();
        job_flusher_stop();
        pool_free(pool);
        server_unlisten();
        if (lock_fd >= 0)
                close(lock_fd);
        config_free();
        return EXIT_FAILURE;
}
