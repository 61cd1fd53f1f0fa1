/* Live progress of waited-for jobs: poll "status" every 0.1 s (so that the wait ends within 0.1 s
 * of the jobs); on a terminal redraw one line per job in place every 0.5 s, elsewhere print plain
 * lines every 2 s (no escape codes, fit for logs). wipe and
 * verify share it, Ctrl-C (detach) and the exit status included. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "wipectl.h"

#define PROGRESS_POLL_MS 100            /* status poll interval */
#define PROGRESS_TTY_MS 500             /* redraw interval on a terminal */
#define PROGRESS_PLAIN_MS 2000          /* interval of plain lines off a terminal */
#define PROGRESS_LINE_MAX 512

/* State of one display; lives on progress_wait()'s stack. */
struct progress {
        FILE *out;                      /* where lines go; NULL draws nothing */
        bool tty;                       /* out is a terminal: redraw in place */
        size_t drawn;                   /* lines drawn last time on the terminal */
        int64_t last_plain_ms;          /* when lines were last printed or drawn, -1 never */
        bool *shown_ended;              /* per job (in reply order): its last line has been printed */
        size_t n;                       /* entries in shown_ended */
};

static int64_t progress_now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Columns of the terminal, 80 when unknown. */
static int progress_columns(FILE *out) {
        struct winsize ws = { 0 };

        if (ioctl(fileno(out), TIOCGWINSZ, &ws) < 0 || ws.ws_col == 0)
                return 80;
        return ws.ws_col;
}

/* Format one job as a line without '\n', the state and phase early so that a narrow terminal
 * still shows them; percent, bytes and ETA count all the work (every pass and the verification):
 * "job 4   /dev/loop3  running  pass 2/3     45.2%  115 MiB / 768 MiB  120.3 MB/s  ETA 5s" */
static void progress_line(struct json_object *job, int device_width, char *buf, size_t n) {
        struct output_job_text t;

        output_job_text(job, &t);
        snprintf(buf, n, "job %-3" PRId64 " %-*s  %-9s  %-11s  %6s  %9s / %-9s  %12s  ETA %s",
                 output_get_int(job, "id", -1), device_width, output_get_string(job, "device", "?"),
                 output_get_string(job, "state", "?"), t.phase, t.percent, t.done, t.total, t.rate, t.eta);
}

/* Draw the jobs of one status reply. On a terminal the previous lines are overwritten: the cursor
 * goes up over them and each line is cleared before it is written. Lines are cut to the width of
 * the terminal so that none wraps and the count stays right. Off a terminal a job that has ended
 * gets its line once, so that a log does not repeat it every 2 s. */
static void progress_draw(struct progress *p, struct json_object *jobs, bool final) {
        size_t n = json_object_array_length(jobs);
        int device_width = 0, columns = 0;
        char line[PROGRESS_LINE_MAX];

        if (!p->out)
                return;
        {
                int64_t now = progress_now_ms();

                if (!final && p->last_plain_ms >= 0 &&
                    now - p->last_plain_ms < (p->tty ? PROGRESS_TTY_MS : PROGRESS_PLAIN_MS))
                        return;
                p->last_plain_ms = now;
        }
        for (size_t i = 0; i < n; i++) {
                int l = (int) strlen(output_get_string(json_object_array_get_idx(jobs, i), "device", "?"));

                if (l > device_width)
                        device_width = l;
        }
        if (p->tty) {
                columns = progress_columns(p->out);
                if (p->drawn > 0)
                        fprintf(p->out, "\033[%zuA", p->drawn);
        }
        for (size_t i = 0; i < n; i++) {
                struct json_object *job = json_object_array_get_idx(jobs, i);

                if (!p->tty && i < p->n && output_state_ended(output_get_string(job, "state", NULL))) {
                        if (p->shown_ended[i])
                                continue;
                        p->shown_ended[i] = true;
                }
                progress_line(job, device_width, line, sizeof(line));
                if (p->tty) {
                        if (columns > 1 && (size_t) columns - 1 < sizeof(line))
                                line[columns - 1] = '\0';
                        fprintf(p->out, "\r\033[K%s\n", line);
                } else
                        fprintf(p->out, "%s\n", line);
        }
        if (p->tty)
                p->drawn = n;
        fflush(p->out);
}

/* Sleep until ms milliseconds have passed since start. -EINTR when c->interrupted is raised. */
static int progress_sleep(const struct client *c, int64_t start, int64_t ms) {
        for (;;) {
                int64_t left = start + ms - progress_now_ms();
                struct timespec ts;

                if (c->interrupted && *c->interrupted)
                        return -EINTR;
                if (left <= 0)
                        return 0;
                ts.tv_sec = left / 1000;
                ts.tv_nsec = (left % 1000) * 1000000;
                if (nanosleep(&ts, NULL) < 0 && errno != EINTR)
                        return -errno;
        }
}

/* Build {"op":"status","jobs":[ids]}; NULL on ENOMEM. */
static struct json_object *progress_request(const int64_t *ids, size_t n) {
        _cleanup_json_ struct json_object *req = protocol_request_new(0, PROTOCOL_OP_STATUS);
        struct json_object *a = json_object_new_array();

        if (!req || !a || json_object_object_add(req, "jobs", a) < 0) {
                json_object_put(a);
                return NULL;
        }
        for (size_t i = 0; i < n; i++)
                if (json_object_array_add(a, json_object_new_int64(ids[i])) < 0)
                        return NULL;
        return TAKE_PTR(req);
}

int progress_wait(struct client *c, const int64_t *ids, size_t n, FILE *out, struct json_object **ret) {
        _cleanup_json_ struct json_object *request = progress_request(ids, n);
        _cleanup_json_ struct json_object *last = NULL;
        _cleanup_free_ bool *shown_ended = calloc(n, sizeof(bool));
        struct progress p = {
                .out = out, .tty = out && isatty(fileno(out)), .last_plain_ms = -1,
                .shown_ended = shown_ended, .n = shown_ended ? n : 0,
        };

        *ret = NULL;
        if (!request || !shown_ended) {
                wipectl_error("status: out of memory");
                return -ENOMEM;
        }
        for (;;) {
                _cleanup_json_ struct json_object *reply = NULL;
                int64_t start = progress_now_ms();
                struct json_object *jobs = NULL;
                bool ended = true;
                int r;

                r = client_call(c, request, &reply);
                if (r < 0) {
                        *ret = TAKE_PTR(last);
                        return r;
                }
                if (!json_object_object_get_ex(reply, "jobs", &jobs) || !json_object_is_type(jobs, json_type_array)) {
                        wipectl_error("%s: status reply without \"jobs\"", c->path);
                        *ret = TAKE_PTR(last);
                        return -EBADMSG;
                }
                json_object_put(last);
                last = output_from_reply(reply);
                if (!last) {
                        wipectl_error("status: out of memory");
                        return -ENOMEM;
                }
                for (size_t i = 0; i < json_object_array_length(jobs); i++)
                        if (!output_state_ended(output_get_string(json_object_array_get_idx(jobs, i), "state", NULL)))
                                ended = false;
                progress_draw(&p, jobs, ended);
                if (ended) {
                        *ret = TAKE_PTR(last);
                        return 0;
                }
                r = progress_sleep(c, start, PROGRESS_POLL_MS);
                if (r < 0) {
                        *ret = TAKE_PTR(last);
                        return r;
                }
        }
}

/* Raised by SIGINT while waiting: detach and leave the jobs to the daemon. A signal handler can
 * reach nothing else. */
static volatile sig_atomic_t progress_interrupted;

static void progress_on_sigint(int sig) {
        (void) sig;
        progress_interrupted = 1;
}

/* Report failed jobs on stderr and derive the exit status from how the jobs ended. */
static int progress_outcome(struct json_object *status) {
        struct json_object *jobs = NULL;
        bool failed = false, cancelled = false, other = false;

        if (!json_object_object_get_ex(status, "jobs", &jobs) || !json_object_is_type(jobs, json_type_array))
                return WIPECTL_EXIT_FAILURE;
        for (size_t i = 0; i < json_object_array_length(jobs); i++) {
                struct json_object *job = json_object_array_get_idx(jobs, i);
                const char *state = output_get_string(job, "state", "");
                char err[1024];

                if (strcmp(state, "cancelled") == 0)
                        cancelled = true;
                else if (strcmp(state, "failed") == 0)
                        failed = true;
                else if (strcmp(state, "done") != 0)
                        other = true;
                if (output_error_line(job, err, sizeof(err)))
                        wipectl_error("%s", err);
        }
        if (failed)
                return WIPECTL_EXIT_JOB_FAILED;
        if (cancelled)
                return WIPECTL_EXIT_JOB_CANCELLED;
        return other ? WIPECTL_EXIT_FAILURE : WIPECTL_EXIT_OK;
}

/* Tell how to reach the jobs after a detach: one line, naming the jobs still running (all of them
 * when no status arrived yet). */
static void progress_detached(struct json_object *status, const int64_t *ids, size_t n) {
        struct json_object *jobs = NULL;
        char list[256] = "";
        size_t l = 0, running = 0;
        int64_t first = -1;

        if (status && json_object_object_get_ex(status, "jobs", &jobs) && json_object_is_type(jobs, json_type_array))
                n = json_object_array_length(jobs);
        for (size_t i = 0; i < n; i++) {
                struct json_object *job = jobs ? json_object_array_get_idx(jobs, i) : NULL;
                int64_t id = job ? output_get_int(job, "id", -1) : ids[i];

                if (job && output_state_ended(output_get_string(job, "state", NULL)))
                        continue;
                if (running++ == 0)
                        first = id;
                if (l < sizeof(list))
                        l += (size_t) snprintf(list + l, sizeof(list) - l, " %" PRId64, id);
        }
        /* Overwrite the "^C" the terminal echoed. */
        if (isatty(STDERR_FILENO))
                fputs("\r\033[K", stderr);
        if (running == 1)
                wipectl_error("detached; jobs keep running (wipectl cancel %" PRId64 ")", first);
        else
                wipectl_error("detached; jobs keep running (wipectl cancel ID; IDs:%s)", running ? list : " none");
}

/* The waiting half of progress_finish(): wait for ids[n] on the connected client c and tell how
 * they ended. Returns the exit status; c stays open. */
static int progress_run(struct client *c, const struct wipectl_options *opts, const int64_t *ids, size_t n) {
        _cleanup_json_ struct json_object *status = NULL;
        struct sigaction sa = { .sa_handler = progress_on_sigint }, old;
        FILE *out = stdout;
        int r;

        /* JSON goes to stdout once, at the end; a terminal on stderr can still watch. */
        if (opts->json)
                out = isatty(STDERR_FILENO) ? stderr : NULL;

        /* No SA_RESTART: a blocked read or sleep must return to notice the flag. */
        sigemptyset(&sa.sa_mask);
        progress_interrupted = 0;
        sigaction(SIGINT, &sa, &old);
        c->interrupted = &progress_interrupted;
        r = progress_wait(c, ids, n, out, &status);
        c->interrupted = NULL;
        sigaction(SIGINT, &old, NULL);

        if (r == -EINTR) {
                if (opts->json && status)
                        output_render(OUTPUT_JOBS, status, true);
                progress_detached(status, ids, n);
                return WIPECTL_EXIT_DETACHED;
        }
        if (r < 0)
                return client_translate_errno(c, r);
        if (opts->json && output_print(OUTPUT_JOBS, status, true) != WIPECTL_EXIT_OK)
                return WIPECTL_EXIT_FAILURE;
        return progress_outcome(status);
}

int progress_finish(struct client *c, const struct wipectl_options *opts, bool no_wait, struct json_object *reply,
                    enum output_kind kind, const int64_t *ids, size_t n) {
        _cleanup_json_ struct json_object *result = NULL;
        int r;

        if (no_wait) {
                client_close(c);
                result = output_from_reply(reply);
                return output_print(kind, result, opts->json);
        }
        r = progress_run(c, opts, ids, n);
        client_close(c);
        return r;
}
