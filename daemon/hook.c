/* wiped: the command run when a job ends (wiped(8) "HOOKS").
 *
 * The main thread decides when a job's hook is due (hook_job_check: the job ended for good and its
 * report is written), builds its environment and queues it. One runner thread starts the queued
 * hooks, hook-max-running at once, each with /bin/sh -c COMMAND in a process group of its own,
 * stdin /dev/null and stdout and stderr on one pipe whose first lines go to the log; it waits for
 * them on pidfds, kills a group that outlives its timeout (SIGTERM, SIGKILL HOOK_KILL_AFTER s
 * later) and hands the outcomes back, which the main thread puts in the job and its record
 * (hook_collect). The daemon never waits for a hook but at shutdown, and then for a bounded time.
 *
 * At least once: the record says for which end of the job the hook last completed; a job whose
 * end has no completed hook in its record (the daemon stopped or was killed first) gets it run
 * after the next start. */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "clock.h"
#include "daemon-config.h"
#include "daemon.h"
#include "job-private.h"

#define HOOK_KILL_AFTER 5.0             /* s between the SIGTERM of a timeout and the SIGKILL */
#define HOOK_STOP_GRACE 5.0             /* s a running hook gets at shutdown before its SIGTERM */
#define HOOK_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

extern char **environ;

struct hook_run {
        /* Set by the main thread; read-only afterwards. */
        uint64_t job;
        double for_end;                 /* the job's ended_at this run is for */
        char *command;
        char **env;                     /* NULL-terminated "NAME=value" */
        double timeout;                 /* seconds */
        char *node, *serial;            /* for the log */

        /* The runner's. */
        pid_t pid;
        int pidfd;                      /* -1: none (an old kernel): polled */
        int out_fd;                     /* the read end of its stdout and stderr; -1 once closed */
        double started_mono, deadline, kill_at;
        bool timed_out, term_sent, killed;
        bool cut;                       /* stopped by the daemon's shutdown, not by its timeout */
        char line[HOOK_LINE_MAX + 1];   /* a line being read */
        size_t line_len;
        size_t logged_bytes;            /* of output logged */
        unsigned logged_lines;
        uint64_t dropped;               /* bytes of output not logged */

        /* The outcome. */
        struct job_hook result;
        bool started_only;              /* an event that it started, not its end */
        struct hook_run *next;
};

static pthread_mutex_t hook_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hook_run *queue_head, *queue_tail;   /* waiting, oldest first (hook_lock) */
static size_t queue_len;                            /* (hook_lock) */
static struct hook_run *done_head, *done_tail;      /* outcomes for the main thread (hook_lock) */
static unsigned max_running = HOOK_MAX_RUNNING_DEFAULT; /* (hook_lock) */
static bool stopping;                               /* (hook_lock) */
static double stop_at;                              /* CLOCK_MONOTONIC of hook_stop() (hook_lock) */
static int wake_fd = -1;
static pthread_t runner;
static bool runner_started;

static unsigned n_running_shown;                    /* n_running, for hook_counts() (hook_lock) */

/* Runner thread only. */
static struct hook_run *running[HOOK_MAX_RUNNING_MAX];
static unsigned n_running;

const char *hook_state_name(enum hook_state s) {
        static const char *const names[] = {
                [HOOK_NONE] = "none",       [HOOK_PENDING] = "pending", [HOOK_RUNNING] = "running",
                [HOOK_EXITED] = "exited",   [HOOK_KILLED] = "killed",   [HOOK_TIMED_OUT] = "timed-out",
                [HOOK_NOT_STARTED] = "not-started",
        };

        return s >= 0 && s < _HOOK_STATE_MAX ? names[s] : NULL;
}

static int hook_state_from_name(const char *name, enum hook_state *ret) {
        for (enum hook_state s = 0; s < _HOOK_STATE_MAX; s++)
                if (strcmp(hook_state_name(s), name) == 0) {
                        *ret = s;
                        return 0;
                }
        return -EINVAL;
}

static void run_free(struct hook_run *h) {
        if (!h)
                return;
        free(h->command);
        for (char **e = h->env; e && *e; e++)
                free(*e);
        free(h->env);
        free(h->node);
        free(h->serial);
        free(h);
}

static void wake(void) {
        uint64_t one = 1;

        if (wake_fd >= 0)
                (void) !write(wake_fd, &one, sizeof(one));
}

/* ---- the runner thread ---- */

/* Log what the hook printed, line by line, within HOOK_OUTPUT_LINES and HOOK_OUTPUT_MAX bytes;
 * the rest is counted. Control characters are shown as '?': the journal gets text. */
static void output_line(struct hook_run *h, bool newline) {
        size_t n = h->line_len;

        h->line_len = 0;
        if (h->logged_lines >= HOOK_OUTPUT_LINES || h->logged_bytes + n > HOOK_OUTPUT_MAX) {
                h->dropped += n + newline;
                return;
        }
        h->line[n] = '\0';
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) h->line[i] < 0x20 || h->line[i] == 0x7f)
                        h->line[i] = '?';
        h->logged_lines++;
        h->logged_bytes += n;
        log_info("job %" PRIu64 ": hook: %s", h->job, h->line);
}

/* Read what is there on the hook's pipe; close it at its end. */
static void output_read(struct hook_run *h) {
        char buf[4096];

        while (h->out_fd >= 0) {
                ssize_t n = read(h->out_fd, buf, sizeof(buf));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return;
                if (n <= 0) {
                        if (h->line_len)
                                output_line(h, false);
                        close(h->out_fd);
                        h->out_fd = -1;
                        return;
                }
                for (ssize_t i = 0; i < n; i++) {
                        if (buf[i] == '\n') {
                                output_line(h, true);
                                continue;
                        }
                        if (h->line_len == HOOK_LINE_MAX) {
                                /* A long line is logged in pieces. */
                                output_line(h, false);
                        }
                        h->line[h->line_len++] = buf[i];
                }
        }
}

static void done_push(struct hook_run *h) {
        pthread_mutex_lock(&hook_lock);
        h->next = NULL;
        if (done_tail)
                done_tail->next = h;
        else
                done_head = h;
        done_tail = h;
        pthread_mutex_unlock(&hook_lock);
}

/* A copy of h that says it started (for status), to the main thread. */
static void started_push(const struct hook_run *h) {
        struct hook_run *e = calloc(1, sizeof(*e));

        if (!e)
                return;
        e->job = h->job;
        e->for_end = h->for_end;
        e->result = h->result;
        e->started_only = true;
        done_push(e);
}

/* Start h: /bin/sh -c COMMAND with h->env, stdout and stderr a pipe to us (spawn_piped). 0 or -errno. */
static int run_start(struct hook_run *h) {
        char *argv[] = { (char *) "/bin/sh", (char *) "-c", h->command, NULL };
        int r = spawn_piped("/bin/sh", argv, h->env, true, &h->pid, &h->out_fd);

        if (r < 0)
                return r;
        (void) fcntl(h->out_fd, F_SETFL, O_NONBLOCK);
        h->pidfd = (int) syscall(SYS_pidfd_open, h->pid, 0);
        return 0;
}

/* The hook's process ended with status: its outcome, logged, to the main thread. */
static void run_end(struct hook_run *h, int status) {
        double took = mono_s() - h->started_mono;
        struct job_hook *o = &h->result;

        /* Whatever of its group is left after a timeout goes with it. */
        if (h->timed_out)
                (void) kill(-h->pid, SIGKILL);
        output_read(h);
        if (h->out_fd >= 0) {
                /* Left open by a process of its own it left behind: not waited for. */
                close(h->out_fd);
                h->out_fd = -1;
        }
        if (h->pidfd >= 0)
                close(h->pidfd);
        h->pidfd = -1;
        if (h->dropped)
                log_info("job %" PRIu64 ": hook: %" PRIu64 " more bytes of output not logged", h->job, h->dropped);
        o->ended = real_s();
        o->duration = took;
        if (h->cut) {
                /* Not its fault, and not done: pending in the record, run again after the start. */
                o->state = HOOK_PENDING;
                o->signal = 0;
                o->exit_status = -1;
                log_job(LOG_WARNING, LOG_EVENT_HOOK_FAILED, h->job, h->node, h->serial,
                        "job %" PRIu64 ": %s: hook stopped by the daemon's stop after %.1f s (%s); it runs again after "
                        "the next start", h->job, h->node, took, h->killed ? "SIGKILL" : "SIGTERM");
        } else if (h->timed_out) {
                o->state = HOOK_TIMED_OUT;
                o->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
                o->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
                log_job(LOG_WARNING, LOG_EVENT_HOOK_FAILED, h->job, h->node, h->serial,
                        "job %" PRIu64 ": %s: hook timed out after %.0f s, killed (%s)", h->job, h->node, h->timeout,
                        h->killed ? "SIGKILL" : "SIGTERM");
        } else if (WIFSIGNALED(status)) {
                o->state = HOOK_KILLED;
                o->signal = WTERMSIG(status);
                o->exit_status = -1;
                log_job(LOG_WARNING, LOG_EVENT_HOOK_FAILED, h->job, h->node, h->serial,
                        "job %" PRIu64 ": %s: hook killed by signal %d (SIG%s) after %.1f s", h->job, h->node,
                        o->signal, sigabbrev_np(o->signal) ? sigabbrev_np(o->signal) : "?", took);
        } else {
                o->state = HOOK_EXITED;
                o->exit_status = WEXITSTATUS(status);
                o->signal = 0;
                if (o->exit_status == 0)
                        log_job(LOG_INFO, LOG_EVENT_HOOK_FINISHED, h->job, h->node, h->serial,
                                "job %" PRIu64 ": %s: hook exited 0 after %.1f s", h->job, h->node, took);
                else
                        log_job(LOG_WARNING, LOG_EVENT_HOOK_FAILED, h->job, h->node, h->serial,
                                "job %" PRIu64 ": %s: hook failed: exit status %d after %.1f s", h->job, h->node,
                                o->exit_status, took);
        }
        done_push(h);
}

static void run_begin(struct hook_run *h) {
        int r;

        h->pidfd = h->out_fd = -1;
        h->started_mono = mono_s();
        h->deadline = h->started_mono + h->timeout;
        h->result.started = real_s();
        r = run_start(h);
        if (r < 0) {
                h->result.state = HOOK_NOT_STARTED;
                h->result.ended = h->result.started;
                h->result.exit_status = -1;
                log_job(LOG_ERR, LOG_EVENT_HOOK_FAILED, h->job, h->node, h->serial,
                        "job %" PRIu64 ": %s: cannot start the hook /bin/sh: %s", h->job, h->node, strerror(-r));
                done_push(h);
                return;
        }
        h->result.state = HOOK_RUNNING;
        log_debug("job %" PRIu64 ": %s: hook started (pid %ld)", h->job, h->node, (long) h->pid);
        started_push(h);
        running[n_running++] = h;
}

static void *runner_main(void *arg) {
        (void) arg;
        pthread_setname_np(pthread_self(), "wiped-hook");
        for (;;) {
                struct pollfd pfd[1 + 2 * HOOK_MAX_RUNNING_MAX];
                struct hook_run *who[1 + 2 * HOOK_MAX_RUNNING_MAX];
                unsigned n = 0;
                double now, next;
                bool polled = false, stop;
                int timeout_ms;

                /* Start what waits, as far as the limit lets. */
                pthread_mutex_lock(&hook_lock);
                stop = stopping;
                while (!stop && queue_head && n_running < max_running && n_running < HOOK_MAX_RUNNING_MAX) {
                        struct hook_run *h = queue_head;

                        queue_head = h->next;
                        if (!queue_head)
                                queue_tail = NULL;
                        queue_len--;
                        pthread_mutex_unlock(&hook_lock);
                        run_begin(h);
                        pthread_mutex_lock(&hook_lock);
                        stop = stopping;
                }
                n_running_shown = n_running;
                if (stop && n_running == 0) {
                        pthread_mutex_unlock(&hook_lock);
                        return NULL;
                }
                pthread_mutex_unlock(&hook_lock);

                /* Deadlines: the timeout's SIGTERM, the SIGKILL after it; at shutdown, sooner. */
                now = mono_s();
                next = now + 3600;
                for (unsigned i = 0; i < n_running; i++) {
                        struct hook_run *h = running[i];
                        double deadline = h->deadline;

                        if (stop && !h->term_sent && deadline > stop_at + HOOK_STOP_GRACE)
                                deadline = stop_at + HOOK_STOP_GRACE;
                        if (!h->term_sent && now >= deadline) {
                                h->timed_out = true;
                                h->term_sent = true;
                                h->kill_at = now + HOOK_KILL_AFTER;
                                h->cut = stop && now < h->deadline;
                                if (h->cut)
                                        log_warning("job %" PRIu64 ": %s: hook still running at shutdown: stopped",
                                                    h->job, h->node);
                                (void) kill(-h->pid, SIGTERM);
                        } else if (h->term_sent && !h->killed && now >= h->kill_at) {
                                h->killed = true;
                                (void) kill(-h->pid, SIGKILL);
                        }
                        if (!h->term_sent && deadline < next)
                                next = deadline;
                        else if (h->term_sent && !h->killed && h->kill_at < next)
                                next = h->kill_at;
                        if (h->pidfd < 0)
                                polled = true;
                }

                pfd[n] = (struct pollfd) { .fd = wake_fd, .events = POLLIN };
                who[n++] = NULL;
                for (unsigned i = 0; i < n_running; i++) {
                        struct hook_run *h = running[i];

                        if (h->out_fd >= 0) {
                                pfd[n] = (struct pollfd) { .fd = h->out_fd, .events = POLLIN };
                                who[n++] = h;
                        }
                        if (h->pidfd >= 0) {
                                pfd[n] = (struct pollfd) { .fd = h->pidfd, .events = POLLIN };
                                who[n++] = h;
                        }
                }
                timeout_ms = (int) ((next - now) * 1000) + 1;
                if (polled && timeout_ms > 100)
                        timeout_ms = 100;
                if (poll(pfd, n, timeout_ms) < 0 && errno != EINTR) {
                        log_error("hooks: poll: %s", strerror(errno));
                        usleep(100000);
                }
                if (pfd[0].revents & POLLIN) {
                        uint64_t v;

                        (void) !read(wake_fd, &v, sizeof(v));
                }
                for (unsigned i = 1; i < n; i++)
                        if (pfd[i].revents && pfd[i].fd == who[i]->out_fd)
                                output_read(who[i]);
                /* Reap whatever ended (a pidfd polled readable, or any without a pidfd). */
                for (unsigned i = 0; i < n_running;) {
                        struct hook_run *h = running[i];
                        int status;
                        pid_t p = waitpid(h->pid, &status, WNOHANG);

                        if (p == h->pid || (p < 0 && errno == ECHILD)) {
                                if (p < 0)
                                        status = W_EXITCODE(127, 0);
                                running[i] = running[--n_running];
                                run_end(h, status);
                                continue;
                        }
                        i++;
                }
        }
}

/* ---- the main thread ---- */

int hook_start(void) {
        int r;

        wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (wake_fd < 0)
                return -errno;
        r = pthread_create(&runner, NULL, runner_main, NULL);
        if (r != 0) {
                close(wake_fd);
                wake_fd = -1;
                return -r;
        }
        runner_started = true;
        return 0;
}

void hook_stop(void) {
        if (!runner_started)
                return;
        pthread_mutex_lock(&hook_lock);
        stopping = true;
        stop_at = mono_s();
        pthread_mutex_unlock(&hook_lock);
        wake();
        pthread_join(runner, NULL);
        runner_started = false;
        /* What never started stays pending in its job's record: it runs after the next start. */
        pthread_mutex_lock(&hook_lock);
        while (queue_head) {
                struct hook_run *h = queue_head;

                queue_head = h->next;
                run_free(h);
        }
        queue_tail = NULL;
        queue_len = 0;
        pthread_mutex_unlock(&hook_lock);
        close(wake_fd);
        wake_fd = -1;
}

void hook_counts(unsigned *running_now, unsigned *queued) {
        pthread_mutex_lock(&hook_lock);
        *running_now = n_running_shown;
        *queued = (unsigned) queue_len;
        pthread_mutex_unlock(&hook_lock);
}

int hook_counts_json_add(struct json_object *o) {
        unsigned r, q;

        hook_counts(&r, &q);
        if (json_object_object_add(o, "hooks_running", json_object_new_int64(r)) < 0 ||
            json_object_object_add(o, "hooks_queued", json_object_new_int64(q)) < 0)
                return -ENOMEM;
        return 0;
}

void hook_set_max_running(unsigned n) {
        pthread_mutex_lock(&hook_lock);
        if (n != max_running) {
                max_running = n;
                pthread_mutex_unlock(&hook_lock);
                wake();
                return;
        }
        pthread_mutex_unlock(&hook_lock);
}

static int env_add(char ***env, size_t *n, const char *name, const char *value) {
        char *s;

        if (asprintf(&s, "%s=%s", name, value ? value : "") < 0)
                return -ENOMEM;
        (*env)[(*n)++] = s;
        return 0;
}

/* The /dev/disk/by-path link to node (the bay), malloc'd; NULL when there is none. */
static char *by_path_of(const char *node) {
        DIR *d = node ? opendir("/dev/disk/by-path") : NULL;
        struct dirent *e;
        char *found = NULL;

        if (!d)
                return NULL;
        while (!found && (e = readdir(d))) {
                char path[PATH_MAX], real[PATH_MAX];

                if (e->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "/dev/disk/by-path/%s", e->d_name);
                if (realpath(path, real) && strcmp(real, node) == 0)
                        found = strdup(path);
        }
        closedir(d);
        return found;
}

/* The exit status wipectl wait gives for a job in state s (wipectl(1) "EXIT STATUS"). */
static int exit_status_of(enum job_state s) {
        switch (s) {
        case JOB_DONE:
                return 0;
        case JOB_FAILED:
                return 6;
        case JOB_CANCELLED:
                return 7;
        case JOB_INTERRUPTED:
                return 8;
        case JOB_DONE_ERRORS:
                return 10;
        default:
                return 1;
        }
}

/* The environment of the job's hook (wiped(8) "HOOKS"): NULL on ENOMEM. */
static char **hook_env(struct job *job, enum job_state s) {
        _cleanup_free_ char *by_id = NULL, *by_path = NULL, *error = NULL;
        char num[32], size[32], exitst[16];
        const char *event = job->reverify ? "verify" : "wipe";
        char **env = calloc(HOOK_ENV_MAX + 1, sizeof(*env));
        size_t n = 0, len = 0;
        int exit_status = exit_status_of(s);
        const char *verify_result = NULL;
        int r = 0;

        if (!env)
                return NULL;
        for (char **l = job->info.by_id; l && *l; l++)
                len += strlen(*l) + 1;
        by_id = calloc(1, len + 1);
        for (char **l = job->info.by_id; by_id && l && *l; l++) {
                if (*by_id)
                        strcat(by_id, " ");
                strcat(by_id, *l);
        }
        by_path = by_path_of(job->info.node);
        pthread_mutex_lock(&job->lock);
        if (job->error_msg)
                error = strdup(job->error_msg);
        if (job->reverify && job->n_runs > 0) {
                verify_result = verify_result_name(&job->runs[job->n_runs - 1]);
                /* A later verification that did not pass: wipectl verify's status for it. */
                if (strcmp(verify_result, "passed") != 0)
                        exit_status = strcmp(verify_result, "cancelled") == 0 ? 7 :
                                      strcmp(verify_result, "interrupted") == 0 ? 8 : 6;
        }
        pthread_mutex_unlock(&job->lock);
        snprintf(num, sizeof(num), "%" PRIu64, job->id);
        snprintf(size, sizeof(size), "%" PRIu64, job->info.size);
        snprintf(exitst, sizeof(exitst), "%d", exit_status);
        r |= env_add(&env, &n, "PATH", HOOK_PATH);
        r |= env_add(&env, &n, "WIPED_EVENT", event);
        r |= env_add(&env, &n, "WIPED_JOB", num);
        r |= env_add(&env, &n, "WIPED_STATE", job_state_name(s));
        r |= env_add(&env, &n, "WIPED_EXIT_STATUS", exitst);
        r |= env_add(&env, &n, "WIPED_DEVICE", job->info.node);
        r |= env_add(&env, &n, "WIPED_DEVICE_NAME", job->info.name);
        r |= env_add(&env, &n, "WIPED_SERIAL", job->info.serial);
        r |= env_add(&env, &n, "WIPED_MODEL", job->info.model);
        r |= env_add(&env, &n, "WIPED_VENDOR", job->info.vendor);
        r |= env_add(&env, &n, "WIPED_WWN", job->info.wwn);
        r |= env_add(&env, &n, "WIPED_SIZE_BYTES", size);
        r |= env_add(&env, &n, "WIPED_TRANSPORT", job->info.transport);
        r |= env_add(&env, &n, "WIPED_BY_ID", by_id);
        r |= env_add(&env, &n, "WIPED_BY_PATH", by_path);
        r |= env_add(&env, &n, "WIPED_METHOD", job->method);
        r |= env_add(&env, &n, "WIPED_REPORT", job->report_file);
        r |= env_add(&env, &n, "WIPED_ERROR", s == JOB_FAILED ? error : NULL);
        r |= env_add(&env, &n, "WIPED_VERIFY_RESULT", verify_result);
        /* The bay policy that started the job (empty for a job a client submitted). */
        r |= env_add(&env, &n, "WIPED_POLICY", job->policy);
        /* The sanitization record's asset tag (for a label) and batch (empty when not recorded). */
        r |= env_add(&env, &n, "WIPED_ASSET_TAG", job->record.asset_tag);
        r |= env_add(&env, &n, "WIPED_BATCH", job->record.batch);
        if (r || !by_id) {
                for (size_t i = 0; i < n; i++)
                        free(env[i]);
                free(env);
                return NULL;
        }
        return env;
}

/* Queue the job's hook for its end at ended_at (state s): 0, -EAGAIN when the queue is full (tried
 * again at the next tick), or -ENOMEM. */
static int hook_queue(struct job *job, const char *command, double timeout, enum job_state s, double ended_at) {
        struct hook_run *h;

        pthread_mutex_lock(&hook_lock);
        if (queue_len >= HOOK_QUEUE_MAX || stopping || !runner_started) {
                pthread_mutex_unlock(&hook_lock);
                return -EAGAIN;
        }
        pthread_mutex_unlock(&hook_lock);
        h = calloc(1, sizeof(*h));
        if (!h)
                return -ENOMEM;
        h->job = job->id;
        h->for_end = ended_at;
        h->timeout = timeout;
        h->command = strdup(command);
        h->node = strdup(job->info.node ? job->info.node : job->device);
        h->serial = job->info.serial ? strdup(job->info.serial) : NULL;
        h->env = hook_env(job, s);
        if (!h->command || !h->node || (job->info.serial && !h->serial) || !h->env) {
                run_free(h);
                return -ENOMEM;
        }
        h->result.event_verify = job->reverify;
        pthread_mutex_lock(&hook_lock);
        if (queue_tail)
                queue_tail->next = h;
        else
                queue_head = h;
        queue_tail = h;
        queue_len++;
        pthread_mutex_unlock(&hook_lock);
        wake();
        return 0;
}

void hook_job_forgotten(uint64_t id) {
        struct hook_run *keep = NULL, *tail = NULL, *gone = NULL;

        /* Out of the queue, under the lock: the runner takes only from it. One already started
         * runs to its end. */
        pthread_mutex_lock(&hook_lock);
        for (struct hook_run *h = queue_head, *next; h; h = next) {
                next = h->next;
                if (h->job == id) {
                        h->next = gone;
                        gone = h;
                        queue_len--;
                        continue;
                }
                h->next = NULL;
                if (tail)
                        tail->next = h;
                else
                        keep = h;
                tail = h;
        }
        queue_head = keep;
        queue_tail = tail;
        pthread_mutex_unlock(&hook_lock);
        while (gone) {
                struct hook_run *h = gone;

                gone = h->next;
                log_info("job %" PRIu64 ": %s: forgotten before its hook started: the hook does not run", h->job,
                         h->node);
                run_free(h);
        }
}

static void mark_dirty(struct job *job) {
        pthread_mutex_lock(&job->lock);
        job->dirty = true;
        pthread_mutex_unlock(&job->lock);
}

void hook_job_check(struct job *job) {
        const struct conffile *cfg = config_settings();
        enum job_state s;
        double ended;
        const char *command;
        int r;

        if (job->hook.queued || !atomic_load(&job->settled))
                return;
        pthread_mutex_lock(&job->lock);
        s = job->state;
        ended = job->ended_at;
        pthread_mutex_unlock(&job->lock);
        if (!state_ended(s) || ended <= 0 || ended == job->hook.done_for)
                return;
        /* After its report: a hook may upload it (and its drive health after, which it holds). */
        if (!smart_job_settled(job))
                return;
        if (reports_dir && host_key && job_report_due(job))
                return;
        command = job->end_hook ? job->end_hook : cfg->job_end_hook;
        if (!command || !*command) {
                /* No hook for this end: counted as done, so that one configured later does not
                 * run for the jobs that ended before it. */
                job->hook.done_for = ended;
                job->hook.state = HOOK_NONE;
                mark_dirty(job);
                return;
        }
        r = hook_queue(job, command, job->end_hook_timeout > 0 ? job->end_hook_timeout : (double) cfg->hook_timeout,
                       s, ended);
        if (r == -ENOMEM)
                log_error("job %" PRIu64 ": cannot queue its hook: out of memory (tried again)", job->id);
        if (r < 0)
                return;
        job->hook = (struct job_hook) { .state = HOOK_PENDING, .done_for = job->hook.done_for, .queued = true,
                                        .queued_for = ended, .event_verify = job->reverify, .exit_status = -1 };
        mark_dirty(job);
}

void hook_collect(void) {
        struct hook_run *list;

        hook_set_max_running(config_settings()->hook_max_running);
        pthread_mutex_lock(&hook_lock);
        list = done_head;
        done_head = done_tail = NULL;
        pthread_mutex_unlock(&hook_lock);
        while (list) {
                struct hook_run *h = list;
                struct job *job = job_find(h->job);

                list = h->next;
                if (job && job->hook.queued && job->hook.queued_for == h->for_end) {
                        if (h->started_only) {
                                job->hook.state = HOOK_RUNNING;
                                job->hook.started = h->result.started;
                        } else {
                                bool verify = job->hook.event_verify;

                                double done_for = job->hook.done_for;

                                job->hook = h->result;
                                job->hook.event_verify = verify;
                                /* Cut short by a stop: not done (pending in the record). */
                                job->hook.done_for = h->result.state == HOOK_PENDING ? done_for : h->for_end;
                                job->hook.queued = false;
                                mark_dirty(job);
                        }
                }
                if (h->started_only)
                        free(h);
                else
                        run_free(h);
        }
}

void hook_job_loaded(struct job *job, bool in_record) {
        /* A record from before hooks: its end is not to have one now. */
        if (!in_record)
                job->hook.done_for = job->ended_at;
}

struct json_object *hook_json(const struct job *job, bool record) {
        const struct job_hook *o = &job->hook;
        struct json_object *j;

        if (!record && o->state == HOOK_NONE)
                return NULL;
        j = json_object_new_object();
        if (!j)
                return NULL;
        /* A record keeps the job's own hook (a policy's): a restart runs the same. */
        if (record) {
                json_add(j, "command", job->end_hook ? json_object_new_string(job->end_hook) : NULL);
                json_add(j, "timeout_s", json_object_new_double(job->end_hook_timeout));
                json_add(j, "done_for", json_object_new_double(o->done_for));
        }
        json_add(j, "state", json_object_new_string(hook_state_name(o->state)));
        json_add(j, "event", json_object_new_string(o->event_verify ? "verify" : "wipe"));
        json_add(j, "exit_status", o->state == HOOK_EXITED || (o->state == HOOK_TIMED_OUT && o->exit_status >= 0)
                                           ? json_object_new_int(o->exit_status) : NULL);
        json_add(j, "signal", o->signal ? json_object_new_int(o->signal) : NULL);
        json_add(j, "started_at", o->started > 0 ? json_object_new_double(o->started) : NULL);
        json_add(j, "ended_at", o->ended > 0 ? json_object_new_double(o->ended) : NULL);
        json_add(j, "duration_s", o->ended > 0 ? json_object_new_double(o->duration) : NULL);
        return j;
}

/* A number member of o, or def when absent or null. */
static double get_num(struct json_object *o, const char *k, double def) {
        struct json_object *v;

        if (!json_object_object_get_ex(o, k, &v) || !v)
                return def;
        if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
                return NAN;
        return json_object_get_double(v);
}

int hook_record_parse(struct json_object *o, struct job *job) {
        struct json_object *v;
        struct job_hook *h = &job->hook;
        double exit_status, sig;
        enum hook_state s;

        if (!json_object_is_type(o, json_type_object))
                return -EBADMSG;
        if (json_object_object_get_ex(o, "command", &v) && v) {
                if (!json_object_is_type(v, json_type_string))
                        return -EBADMSG;
                if (!(job->end_hook = strdup(json_object_get_string(v))))
                        return -ENOMEM;
        }
        job->end_hook_timeout = get_num(o, "timeout_s", 0);
        h->done_for = get_num(o, "done_for", 0);
        h->started = get_num(o, "started_at", 0);
        h->ended = get_num(o, "ended_at", 0);
        h->duration = get_num(o, "duration_s", 0);
        exit_status = get_num(o, "exit_status", -1);
        sig = get_num(o, "signal", 0);
        /* In range before the conversion: a number out of int's range is undefined behaviour. */
        if (!(exit_status >= -1 && exit_status <= 255 && sig >= 0 && sig <= 64))
                return -EBADMSG;
        h->exit_status = (int) exit_status;
        h->signal = (int) sig;
        if (!json_object_object_get_ex(o, "state", &v) || !json_object_is_type(v, json_type_string) ||
            hook_state_from_name(json_object_get_string(v), &s) < 0)
                return -EBADMSG;
        if (!isfinite(job->end_hook_timeout) || job->end_hook_timeout < 0 ||
            job->end_hook_timeout > CONFFILE_HOOK_TIMEOUT_MAX || !isfinite(h->done_for) || !isfinite(h->started) ||
            !isfinite(h->ended) || !isfinite(h->duration))
                return -EBADMSG;
        h->state = s;
        if (json_object_object_get_ex(o, "event", &v) && json_object_is_type(v, json_type_string))
                h->event_verify = strcmp(json_object_get_string(v), "verify") == 0;
        /* Queued or running when the daemon stopped: to run again (done_for is the end before). */
        if (s == HOOK_PENDING || s == HOOK_RUNNING)
                h->state = HOOK_PENDING;
        return 0;
}
