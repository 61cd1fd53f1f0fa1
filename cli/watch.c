/* Waiting for jobs: a watch request, then its events (state changes within 0.1 s of happening,
 * progress every interval, "end" once every job has ended) shown by the view or printed as JSON
 * lines. watch, wait, wipe and verify share it, Ctrl-C (detach) and the exit status included. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "wipectl.h"

#define WATCH_LIVE_INTERVAL_MS 500      /* progress events for a live view: one per redraw */
#define WATCH_PLAIN_INTERVAL_MS 1000    /* progress events for plain lines */
#define WATCH_PLAIN_PERIOD_MS 5000      /* plain lines of running jobs, at least this far apart */

/* Raised by the signal handlers while waiting; a handler can reach nothing else. */
static volatile sig_atomic_t watch_interrupted; /* SIGINT: detach */
static volatile sig_atomic_t watch_resized;     /* SIGWINCH or SIGCONT: redraw */
static volatile sig_atomic_t watch_stopped;     /* SIGTSTP: give the terminal back, then stop */
static volatile sig_atomic_t watch_terminated;  /* SIGTERM or SIGHUP: its number */

static void watch_on_signal(int sig) {
        switch (sig) {
        case SIGINT:
                watch_interrupted = 1;
                break;
        case SIGWINCH:
        case SIGCONT:
                watch_resized = 1;
                break;
        case SIGTSTP:
                watch_stopped = 1;
                break;
        default:
                watch_terminated = sig;
                break;
        }
}

/* The signals a wait handles: SIGINT always; the others only for a live view, which must give the
 * terminal back before the process stops or dies. */
static const int watch_signals[] = { SIGINT, SIGWINCH, SIGCONT, SIGTSTP, SIGTERM, SIGHUP };
#define WATCH_SIGNALS (sizeof(watch_signals) / sizeof(watch_signals[0]))

/* The dispositions a wait replaced, to restore. */
struct watch_saved {
        struct sigaction old[WATCH_SIGNALS];
        bool set[WATCH_SIGNALS];
        sigset_t handled;               /* the signals with our handler */
        sigset_t mask;                  /* the signal mask before the wait blocked them */
        bool blocked;
};

/* Install the handlers (no SA_RESTART: a blocked read must return to notice a flag). Signals that
 * were ignored stay ignored, except SIGINT (Ctrl-C always detaches). */
static void watch_signals_install(struct watch_saved *w, bool live) {
        struct sigaction sa = { .sa_handler = watch_on_signal };

        sigemptyset(&sa.sa_mask);
        sigemptyset(&w->handled);
        watch_interrupted = watch_resized = watch_stopped = watch_terminated = 0;
        for (size_t i = 0; i < WATCH_SIGNALS; i++) {
                int sig = watch_signals[i];

                w->set[i] = false;
                if (sig != SIGINT && !live)
                        continue;
                if (sigaction(sig, NULL, &w->old[i]) < 0)
                        continue;
                if (sig != SIGINT && w->old[i].sa_handler == SIG_IGN)
                        continue;
                if (sigaction(sig, &sa, NULL) == 0) {
                        w->set[i] = true;
                        sigaddset(&w->handled, sig);
                }
        }
}

/* Block the handled signals between two waits for an event, so that none is missed: they are
 * let through only while client_event() sleeps, with w->mask. */
static void watch_signals_block(struct watch_saved *w) {
        sigprocmask(SIG_BLOCK, &w->handled, &w->mask);
        w->blocked = true;
}

static void watch_signals_restore(struct watch_saved *w) {
        if (w->blocked)
                sigprocmask(SIG_SETMASK, &w->mask, NULL);
        w->blocked = false;
        for (size_t i = 0; i < WATCH_SIGNALS; i++)
                if (w->set[i])
                        sigaction(watch_signals[i], &w->old[i], NULL);
}

/* Receive sig as it was meant to be (stop, or die) once the view gave the terminal back. */
static void watch_signal_default(int sig) {
        sigset_t one;

        signal(sig, SIG_DFL);
        sigemptyset(&one);
        sigaddset(&one, sig);
        raise(sig);
        sigprocmask(SIG_UNBLOCK, &one, NULL);
        /* Back from a stop. */
        sigprocmask(SIG_BLOCK, &one, NULL);
}

/* Build {"op":"watch","jobs":[ids],"interval_ms":M}, without the parts not given; NULL on
 * ENOMEM. */
static struct json_object *watch_request(const int64_t *ids, size_t n, int64_t interval_ms) {
        _cleanup_json_ struct json_object *req = client_request_jobs(PROTOCOL_OP_WATCH, ids, n);

        if (!req)
                return NULL;
        if (interval_ms > 0 && json_object_object_add(req, "interval_ms", json_object_new_int64(interval_ms)) < 0)
                return NULL;
        return TAKE_PTR(req);
}

/* Put job into jobs in place of the job with its id, or at the end; *slot gets it (borrowed).
 * 0 or -ENOMEM. */
static int watch_update(struct json_object *jobs, struct json_object *job, struct json_object **slot) {
        int64_t id = output_get_int(job, "id", -1);
        size_t n = json_object_array_length(jobs);

        *slot = job;
        for (size_t i = 0; i < n; i++)
                if (output_get_int(json_object_array_get_idx(jobs, i), "id", -2) == id)
                        return json_object_array_put_idx(jobs, i, json_object_get(job)) < 0 ? -ENOMEM : 0;
        if (json_object_array_add(jobs, json_object_get(job)) < 0) {
                json_object_put(job);
                return -ENOMEM;
        }
        return 0;
}

/* Print line on stdout as a line of its own, at once (for "jq --unbuffered"). 0 or -EIO
 * (reported). */
static int watch_print_line(struct client *c, const char *line) {
        if (wipectl_print_event(line) == EOF || fflush(stdout) == EOF || ferror(stdout)) {
                c->origin = CLIENT_ORIGIN_LOCAL;
                wipectl_error("stdout: write error");
                return -EIO;
        }
        return 0;
}

#define WATCH_EVENT_START "start"     /* wipectl's own first event: the watch reply (wipectl(1) "watch") */

/* {"event":"start","time":T,"jobs":[...]}: the reply, as the first event. 0 or -errno
 * (reported). */
static int watch_print_start(struct client *c, struct json_object *jobs) {
        _cleanup_json_ struct json_object *e = json_object_new_object();
        struct timespec ts;
        char t[32];
        const char *s;

        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(t, sizeof(t), "%.3f", (double) ts.tv_sec + (double) ts.tv_nsec / 1e9);
        if (!e || json_object_object_add(e, "event", json_object_new_string(WATCH_EVENT_START)) < 0 ||
            json_object_object_add(e, "time", json_object_new_double_s(strtod(t, NULL), t)) < 0 ||
            json_object_object_add(e, "jobs", json_object_get(jobs)) < 0 ||
            !(s = json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE))) {
                c->origin = CLIENT_ORIGIN_LOCAL;
                wipectl_error("watch: out of memory");
                return -ENOMEM;
        }
        return watch_print_line(c, s);
}

/* Take one event into jobs and the view; *ended is set by "end". 0 or -errno (reported). */
static int watch_take(struct client *c, struct json_object *event, struct json_object *jobs, struct view *v,
                      bool *ended) {
        const char *name = output_get_string(event, "event", "");
        struct json_object *job = NULL, *list = NULL, *slot;
        bool state = strcmp(name, PROTOCOL_EVENT_STATE) == 0;

        if (state || strcmp(name, PROTOCOL_EVENT_PROGRESS) == 0) {
                if (!json_object_object_get_ex(event, "job", &job) || !json_object_is_type(job, json_type_object)) {
                        c->origin = CLIENT_ORIGIN_TRANSPORT;
                        wipectl_error("%s: watch: \"%s\" event without \"job\"", c->path, name);
                        return -EBADMSG;
                }
                if (watch_update(jobs, job, &slot) < 0)
                        goto nomem;
                view_changed(v, slot, state);
                return 0;
        }
        if (strcmp(name, PROTOCOL_EVENT_END) == 0) {
                if (!json_object_object_get_ex(event, "jobs", &list) || !json_object_is_type(list, json_type_array)) {
                        c->origin = CLIENT_ORIGIN_TRANSPORT;
                        wipectl_error("%s: watch: \"end\" event without \"jobs\"", c->path);
                        return -EBADMSG;
                }
                for (size_t i = 0; i < json_object_array_length(list); i++)
                        if (watch_update(jobs, json_object_array_get_idx(list, i), &slot) < 0)
                                goto nomem;
                *ended = true;
                return 0;
        }
        /* Events of later daemons: not ours to know. */
        return 0;

nomem:
        c->origin = CLIENT_ORIGIN_LOCAL;
        wipectl_error("watch: out of memory");
        return -ENOMEM;
}

/* Follow the events after the reply, until "end", Ctrl-C or an error. 0, -EINTR or -errno
 * (reported). */
static int watch_follow(struct client *c, const struct watch_settings *s, struct watch_saved *w,
                        struct json_object *jobs, struct view *v) {
        struct sigaction sa = { .sa_handler = watch_on_signal };
        bool draining = false, ended = false;

        sigemptyset(&sa.sa_mask);
        while (!ended) {
                _cleanup_json_ struct json_object *event = NULL;
                _cleanup_free_ char *line = NULL;
                int r;

                if (watch_interrupted)
                        return -EINTR;
                if (watch_terminated) {
                        int sig = watch_terminated;

                        view_end(v, false);
                        watch_signals_restore(w);
                        watch_signal_default(sig);
                        return -EINTR;
                }
                if (watch_stopped) {
                        watch_stopped = 0;
                        view_suspend(v);
                        watch_signal_default(SIGTSTP);
                        sigaction(SIGTSTP, &sa, NULL);
                        view_resume(v);
                }
                if (watch_resized) {
                        watch_resized = 0;
                        view_resize(v);
                }
                /* Take every event already there before drawing once. */
                r = client_event(c, draining ? 0 : view_timeout(v), &w->mask, &event, s->events ? &line : NULL);
                if (r < 0)
                        return r;
                if (r == 0) {
                        draining = false;
                        view_tick(v);
                        continue;
                }
                draining = true;
                if (s->events && (r = watch_print_line(c, line)) < 0)
                        return r;
                r = watch_take(c, event, jobs, v, &ended);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Watch jobs on the connected client c until every one has ended: send the watch request, then
 * follow its events, showing them as s says; Ctrl-C stops the wait (the jobs keep running).
 * Returns 0 when every job has ended, -EINTR after Ctrl-C, or -errno, already reported (the
 * connection lost: client_translate_errno() gives 3). In every case *ret owns the jobs as last
 * seen ({"jobs":[JOB...]}), or NULL when none were. */
static int watch_jobs(struct client *c, const struct watch_settings *s, struct json_object **ret) {
        _cleanup_json_ struct json_object *request = NULL, *reply = NULL, *status = NULL;
        struct json_object *jobs = NULL;
        struct watch_saved w = {};
        struct view v = {};
        bool live = s->view && view_live(s->view);
        int64_t interval = s->interval_ms;
        int r;

        *ret = NULL;
        if (interval == 0 && s->view)
                interval = live ? WATCH_LIVE_INTERVAL_MS : WATCH_PLAIN_INTERVAL_MS;
        request = watch_request(s->ids, s->n, interval);
        if (!request) {
                wipectl_error("watch: out of memory");
                return -ENOMEM;
        }

        watch_signals_install(&w, live);
        c->interrupted = &watch_interrupted;
        r = client_call(c, request, &reply);
        c->interrupted = NULL;
        if (r < 0) {
                watch_signals_restore(&w);
                return r;
        }
        if (!json_object_object_get_ex(reply, "jobs", &jobs) || !json_object_is_type(jobs, json_type_array)) {
                watch_signals_restore(&w);
                c->origin = CLIENT_ORIGIN_TRANSPORT;
                wipectl_error("%s: watch reply without \"jobs\"", c->path);
                return -EBADMSG;
        }
        status = json_object_new_object();
        if (!status || json_object_object_add(status, "jobs", json_object_get(jobs)) < 0) {
                watch_signals_restore(&w);
                wipectl_error("watch: out of memory");
                return -ENOMEM;
        }

        r = s->events ? watch_print_start(c, jobs) : 0;
        /* Nothing to show when there is nothing to watch: "end" follows at once. */
        if (r == 0 && s->view && json_object_array_length(jobs) > 0) {
                int64_t period = interval > WATCH_PLAIN_PERIOD_MS ? interval : WATCH_PLAIN_PERIOD_MS;

                r = view_start(&v, s->view, jobs, period);
                if (r < 0)
                        wipectl_error("watch: out of memory");
        }
        if (r == 0) {
                watch_signals_block(&w);
                r = watch_follow(c, s, &w, jobs, &v);
        }
        view_end(&v, r == 0);
        watch_signals_restore(&w);
        *ret = TAKE_PTR(status);
        return r;
}

int watch_outcome(struct json_object *status) {
        struct json_object *jobs = NULL;
        bool failed = false, cancelled = false, interrupted = false, bad = false, other = false;

        if (!json_object_object_get_ex(status, "jobs", &jobs) || !json_object_is_type(jobs, json_type_array))
                return WIPECTL_EXIT_FAILURE;
        for (size_t i = 0; i < json_object_array_length(jobs); i++) {
                struct json_object *job = json_object_array_get_idx(jobs, i);
                const char *state = output_get_string(job, "state", "");
                char err[1024];

                enum job_state s = output_state_of(state);
                struct json_object *verify = NULL;
                enum verify_end end;

                /* A later verification that did not complete leaves the job as the wipe left it:
                 * the wait for it still fails as the check did. */
                if ((s == JOB_DONE || s == JOB_DONE_ERRORS) && json_object_object_get_ex(job, "verify", &verify) &&
                    verify_end_from_name(output_get_string(verify, "result", NULL), &end) == 0) {
                        wipectl_error("job %" PRId64 ": %s: verifying again %s; the job stays %s", output_get_int(job, "id", -1),
                                      output_get_string(job, "node", "?"), end == VERIFY_END_ERROR ? "failed (I/O error)" :
                                      end == VERIFY_END_CANCELLED ? "was cancelled" : "was interrupted", state);
                        if (end == VERIFY_END_CANCELLED)
                                cancelled = true;
                        else if (end == VERIFY_END_INTERRUPTED)
                                interrupted = true;
                        else
                                failed = true;
                        continue;
                }
                switch (s) {
                case JOB_CANCELLED:
                        cancelled = true;
                        break;
                case JOB_FAILED:
                        failed = true;
                        break;
                case JOB_INTERRUPTED:
                        interrupted = true;
                        break;
                case JOB_DONE_ERRORS:
                        bad = true;
                        break;
                case JOB_DONE:
                        break;
                default:
                        other = true;
                        break;
                }
                if (output_error_line(job, err, sizeof(err)))
                        wipectl_error("%s", err);
        }
        if (failed)
                return WIPECTL_EXIT_JOB_FAILED;
        if (cancelled)
                return WIPECTL_EXIT_JOB_CANCELLED;
        if (interrupted)
                return WIPECTL_EXIT_JOB_INTERRUPTED;
        if (bad)
                return WIPECTL_EXIT_DONE_ERRORS;
        return other ? WIPECTL_EXIT_FAILURE : WIPECTL_EXIT_OK;
}

/* Tell how to reach the jobs after Ctrl-C: one line on stderr, naming the jobs still running in
 * status ({"jobs":[JOB...]}), or ids[n] when status is NULL. */
static void watch_detached(struct json_object *status, const int64_t *ids, size_t n) {
        struct json_object *jobs = NULL;
        char list[256] = "";
        size_t l = 0, running = 0;
        int64_t first = -1;

        if (status && json_object_object_get_ex(status, "jobs", &jobs) && json_object_is_type(jobs, json_type_array))
                n = json_object_array_length(jobs);
        for (size_t i = 0; i < n; i++) {
                struct json_object *job = jobs ? json_object_array_get_idx(jobs, i) : NULL;
                int64_t id = job ? output_get_int(job, "id", -1) : ids[i];

                if (job && job_state_name_is_final(output_get_string(job, "state", NULL)))
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

int watch_wait(struct client *c, const struct watch_settings *s, bool json, struct json_object **status) {
        int r = watch_jobs(c, s, status);

        client_close(c);
        if (r == -EINTR) {
                /* One document with --json still: the jobs as last seen. */
                if (json && !s->events && *status)
                        output_render(OUTPUT_JOBS, *status, true);
                watch_detached(*status, s->ids, s->n);
                return WIPECTL_EXIT_DETACHED;
        }
        if (r < 0)
                return client_translate_errno(c, r);
        return -1;
}

int watch_finish(struct client *c, const struct wipectl_options *opts, bool no_wait, struct json_object *reply,
                 enum output_kind kind, const int64_t *ids, size_t n) {
        _cleanup_json_ struct json_object *result = NULL, *status = NULL;
        struct watch_settings s = { .ids = ids, .n = n, .view = stdout };
        int r;

        if (no_wait) {
                client_close(c);
                result = output_from_reply(reply);
                return output_print(kind, result, opts->json);
        }
        /* JSON goes to stdout once, at the end; a terminal on stderr can still watch. */
        if (opts->json)
                s.view = view_live(stderr) ? stderr : NULL;
        r = watch_wait(c, &s, opts->json, &status);
        if (r >= 0)
                return r;
        if (opts->json && output_print(OUTPUT_JOBS, status, true) != WIPECTL_EXIT_OK)
                return WIPECTL_EXIT_FAILURE;
        return watch_outcome(status);
}

/* Whether a JOB object says the job was asked to stop and has not stopped yet. */
static bool watch_job_stopping(struct json_object *job) {
        struct json_object *v = NULL;

        return json_object_object_get_ex(job, "stopping", &v) && json_object_is_type(v, json_type_boolean) &&
               json_object_get_boolean(v);
}

int watch_until_stopped(const struct wipectl_options *opts, struct json_object *holder) {
        _cleanup_json_ struct json_object *request = NULL, *reply = NULL;
        struct client c = CLIENT_INIT;
        struct json_object *job = NULL, *jobs = NULL;
        int64_t id;
        int r;

        if (!json_object_object_get_ex(holder, "job", &job) || !watch_job_stopping(job))
                return WIPECTL_EXIT_OK;
        id = output_get_int(job, "id", -1);
        request = watch_request(&id, 1, 0);
        if (!request) {
                wipectl_error("out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        /* Its state events: the one that comes once it stopped (device closed) ends the wait. */
        r = client_connect_call(&c, opts->socket_path, request, &reply);
        if (r != WIPECTL_EXIT_OK)
                return r;
        if (json_object_object_get_ex(reply, "jobs", &jobs) && json_object_is_type(jobs, json_type_array) &&
            json_object_array_length(jobs) == 1)
                job = json_object_array_get_idx(jobs, 0);
        else
                job = NULL;
        while (job && watch_job_stopping(job)) {
                _cleanup_json_ struct json_object *event = NULL;
                struct json_object *list = NULL;

                json_object_put(reply);
                reply = NULL;
                r = client_event(&c, -1, NULL, &event, NULL);
                if (r < 0) {
                        r = client_translate_errno(&c, r);
                        client_close(&c);
                        return r;
                }
                if (r == 0)
                        continue;
                if (json_object_object_get_ex(event, "job", &job) && json_object_is_type(job, json_type_object)) {
                        reply = json_object_get(event);
                        continue;
                }
                if (json_object_object_get_ex(event, "jobs", &list) && json_object_is_type(list, json_type_array) &&
                    json_object_array_length(list) == 1) {
                        job = json_object_array_get_idx(list, 0);
                        reply = json_object_get(event);
                        continue;
                }
                job = NULL;
        }
        client_close(&c);
        if (!job) {
                wipectl_error("%s: watch: no news of job %" PRId64, opts->socket_path, id);
                return WIPECTL_EXIT_FAILURE;
        }
        return json_object_object_add(holder, "job", json_object_get(job)) < 0 ? WIPECTL_EXIT_FAILURE : WIPECTL_EXIT_OK;
}
