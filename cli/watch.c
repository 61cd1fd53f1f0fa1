/* Waiting for jobs: a watch request, then its events (state changes within 0.1 s of happening,
 * progress every interval, "end" once every job has ended) shown by the view or printed as JSON
 * lines. watch, wait, wipe and verify share it, Ctrl-C (detach) and the exit status included. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "clock.h"
#include "wipectl.h"

#define WATCH_LIVE_INTERVAL_MS 500      /* progress events for a live view: one per redraw */
#define WATCH_PLAIN_INTERVAL_MS 1000    /* progress events for plain lines (each 10 % step seen soon) */
#define WATCH_PLAIN_STEPS 10            /* plain: a line at each tenth of a job's work */
#define WATCH_RETRY_MS 500              /* between two looks while reconnecting or waiting for a resume */

struct watch_tuning watch_tuning = {
        .reconnect_ms = WATCH_RECONNECT_DEFAULT_MS,
        .progress_ms = WATCH_PROGRESS_DEFAULT_MS,
};

int watch_parse_seconds(const char *s, int64_t min_ms, int64_t max_ms, int64_t *ms) {
        size_t dots = 0;
        double v;

        if (!*s || strspn(s, "0123456789.") != strlen(s) || strcmp(s, ".") == 0)
                return -EINVAL;
        for (const char *p = s; *p; p++)
                dots += *p == '.';
        if (dots > 1)
                return -EINVAL;
        v = strtod(s, NULL) * 1000.0 + 0.5;
        if (!(v >= (double) min_ms && v < (double) max_ms + 1))
                return -EINVAL;
        *ms = (int64_t) v;
        return 0;
}

int watch_option(const struct cmd_entry *self, int opt, const char *arg) {
        switch (opt) {
        case WATCH_ARG_RECONNECT:
                if (watch_parse_seconds(arg, 0, WATCH_RECONNECT_MAX_MS, &watch_tuning.reconnect_ms) < 0)
                        return cmd_usage_error(self, "bad reconnect timeout '%s' (seconds, 0 to 86400)", arg);
                return -1;
        case WATCH_ARG_PROGRESS:
                if (watch_parse_seconds(arg, 1000, WATCH_PROGRESS_MAX_MS, &watch_tuning.progress_ms) < 0)
                        return cmd_usage_error(self, "bad progress interval '%s' (seconds, 1 to 86400)", arg);
                return -1;
        default:
                return cmd_usage_error(self, "unknown option");
        }
}

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
        int64_t id = output_job_id(job);
        size_t n = json_object_array_length(jobs);

        *slot = job;
        for (size_t i = 0; i < n; i++)
                if (output_job_id(json_object_array_get_idx(jobs, i)) == id)
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
#define WATCH_EVENT_RECONNECTING "reconnecting" /* wipectl's own: the daemon went away (wipectl(1) "watch") */

/* {"event":name,"time":T} and, with jobs, "jobs":[...]: an event of wipectl's own. 0 or -errno
 * (reported). */
static int watch_print_event(struct client *c, const char *name, struct json_object *jobs) {
        _cleanup_json_ struct json_object *e = json_object_new_object();
        struct timespec ts;
        char t[32];
        const char *s;

        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(t, sizeof(t), "%.3f", (double) ts.tv_sec + (double) ts.tv_nsec / 1e9);
        if (!e || json_object_object_add(e, "event", json_object_new_string(name)) < 0 ||
            json_object_object_add(e, "time", json_object_new_double_s(strtod(t, NULL), t)) < 0 ||
            (jobs && json_object_object_add(e, "jobs", json_object_get(jobs)) < 0) ||
            !(s = json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE))) {
                c->origin = CLIENT_ORIGIN_LOCAL;
                wipectl_error("watch: out of memory");
                return -ENOMEM;
        }
        return watch_print_line(c, s);
}

/* One wait: its connection, what it shows, and how it gets back to the daemon after a restart. */
struct watch_run {
        struct client *c;
        const struct watch_settings *s;
        struct watch_saved w;
        struct view v;
        struct json_object *jobs;       /* [JOB...] as last seen (a reference): the view's */
        int64_t interval;               /* interval_ms of the watch requests */
        int64_t period;                 /* plain: between two lines of a running job */
        bool reconnect;                 /* follow the jobs across restarts (--reconnect-timeout > 0) */
        bool plain;                     /* the view prints plain lines */
        bool started;                   /* the view was started */
        bool away;                      /* the connection was lost and not made again yet */
        int64_t deadline;               /* mono ms: give up reconnecting, or waiting for a resume; 0: none */
        struct watch_step {
                int64_t id;
                int step;               /* the tenth of its work the job's last plain line showed */
        } *steps;
        size_t n_steps, steps_size;
};

/* Whether job is interrupted and its daemon resumes it on its own ("resuming": now, or at its
 * next start): not an end to a wait that reconnects. */
static bool watch_job_resuming(struct json_object *job) {
        struct json_object *v = NULL;

        return output_state_of(output_get_string(job, "state", "")) == JOB_INTERRUPTED &&
               json_object_object_get_ex(job, "resuming", &v) && json_object_is_type(v, json_type_boolean) &&
               json_object_get_boolean(v);
}

/* Whether a job of jobs is resuming (and the wait reconnects). */
static bool watch_resuming(const struct watch_run *run, struct json_object *jobs) {
        if (!run->reconnect)
                return false;
        for (size_t i = 0; i < json_object_array_length(jobs); i++)
                if (watch_job_resuming(json_object_array_get_idx(jobs, i)))
                        return true;
        return false;
}

/* The tenth of its work job has done, 0 to 10. */
static int watch_job_step(struct json_object *job) {
        int64_t done = output_get_int_or(job, "work_done_bytes", "bytes_done", 0);
        int64_t total = output_get_int_or(job, "work_total_bytes", "bytes_total", 0);

        if (total <= 0 || done <= 0)
                return 0;
        return done >= total ? WATCH_PLAIN_STEPS : (int) ((double) done / (double) total * WATCH_PLAIN_STEPS);
}

/* Plain: the entry of the job with id in run->steps, made when missing; NULL on ENOMEM. */
static struct watch_step *watch_step_of(struct watch_run *run, int64_t id) {
        for (size_t i = 0; i < run->n_steps; i++)
                if (run->steps[i].id == id)
                        return &run->steps[i];
        if (run->n_steps == run->steps_size) {
                size_t size = run->steps_size ? run->steps_size * 2 : 8;
                struct watch_step *p = realloc(run->steps, size * sizeof(*p));

                if (!p)
                        return NULL;
                run->steps = p;
                run->steps_size = size;
        }
        run->steps[run->n_steps] = (struct watch_step) { .id = id, .step = -1 };
        return &run->steps[run->n_steps++];
}

/* job (in run->jobs) changed, as a change of state or as progress: tell the view. Off a terminal
 * a line is printed for a state change and when the job passed a tenth of its work; never for a
 * job that is only waiting to be resumed (its "interrupted" is not its end). */
static void watch_show(struct watch_run *run, struct json_object *job, bool state) {
        struct watch_step *st;
        int step;

        if (watch_job_resuming(job) && run->reconnect) {
                view_changed(&run->v, job, false);
                return;
        }
        if (!run->plain || !run->started) {
                view_changed(&run->v, job, state);
                return;
        }
        step = watch_job_step(job);
        st = watch_step_of(run, output_job_id(job));
        if (st && st->step >= 0 && step > st->step)
                state = true;
        if (st && state)
                st->step = step;
        view_changed(&run->v, job, state);
}

/* Start the view of run once there is something to show and no job is waiting for a resume
 * (a plain view would print its "interrupted" as its last line). 0 or -ENOMEM (reported). */
static int watch_view_start(struct watch_run *run, bool anyway) {
        size_t n = json_object_array_length(run->jobs);

        if (run->started || !run->s->view || n == 0 || (!anyway && watch_resuming(run, run->jobs)))
                return 0;
        if (view_start(&run->v, run->s->view, run->jobs, run->period) < 0) {
                wipectl_error("watch: out of memory");
                return -ENOMEM;
        }
        run->started = true;
        for (size_t i = 0; run->plain && i < n; i++) {
                struct json_object *job = json_object_array_get_idx(run->jobs, i);
                struct watch_step *st = watch_step_of(run, output_job_id(job));

                if (st)
                        st->step = watch_job_step(job);
        }
        return 0;
}

/* Take one event into run->jobs and the view: *ended is set by "end", *again when that "end"
 * has a job that its daemon resumes (a wait that reconnects waits on). 0 or -errno (reported). */
static int watch_take(struct watch_run *run, struct json_object *event, bool *ended, bool *again) {
        struct client *c = run->c;
        const char *name = output_get_string(event, "event", "");
        struct json_object *job = NULL, *list = NULL, *slot;
        bool state = strcmp(name, PROTOCOL_EVENT_STATE) == 0;

        if (state || strcmp(name, PROTOCOL_EVENT_PROGRESS) == 0) {
                if (!json_object_object_get_ex(event, "job", &job) || !json_object_is_type(job, json_type_object)) {
                        c->origin = CLIENT_ORIGIN_TRANSPORT;
                        wipectl_error("%s: watch: \"%s\" event without \"job\"", c->path, name);
                        return -EBADMSG;
                }
                if (watch_update(run->jobs, job, &slot) < 0)
                        goto nomem;
                watch_show(run, slot, state);
                return 0;
        }
        if (strcmp(name, PROTOCOL_EVENT_END) == 0) {
                if (!json_object_object_get_ex(event, "jobs", &list) || !json_object_is_type(list, json_type_array)) {
                        c->origin = CLIENT_ORIGIN_TRANSPORT;
                        wipectl_error("%s: watch: \"end\" event without \"jobs\"", c->path);
                        return -EBADMSG;
                }
                for (size_t i = 0; i < json_object_array_length(list); i++)
                        if (watch_update(run->jobs, json_object_array_get_idx(list, i), &slot) < 0)
                                goto nomem;
                *ended = true;
                *again = watch_resuming(run, list);
                return 0;
        }
        /* Events of later daemons: not ours to know. */
        return 0;

nomem:
        c->origin = CLIENT_ORIGIN_LOCAL;
        wipectl_error("watch: out of memory");
        return -ENOMEM;
}

/* Act on the flags the signal handlers raised: -EINTR to stop waiting (Ctrl-C, or SIGTERM/SIGHUP
 * after giving the terminal back), else 0. */
static int watch_signals_check(struct watch_run *run) {
        struct sigaction sa = { .sa_handler = watch_on_signal };

        sigemptyset(&sa.sa_mask);
        if (watch_interrupted)
                return -EINTR;
        if (watch_terminated) {
                int sig = watch_terminated;

                view_end(&run->v, false);
                watch_signals_restore(&run->w);
                watch_signal_default(sig);
                return -EINTR;
        }
        if (watch_stopped) {
                watch_stopped = 0;
                view_suspend(&run->v);
                watch_signal_default(SIGTSTP);
                sigaction(SIGTSTP, &sa, NULL);
                if (!run->away)
                        view_resume(&run->v);
        }
        if (watch_resized) {
                watch_resized = 0;
                view_resize(&run->v);
        }
        return 0;
}

/* Follow the events after the reply, until "end", Ctrl-C or an error. 0 after "end"; 1 after an
 * "end" with a job its daemon resumes; -EINTR or -errno (reported, unless a lost connection of a
 * wait that reconnects). */
static int watch_follow(struct watch_run *run) {
        const struct watch_settings *s = run->s;
        bool draining = false, ended = false, again = false;

        while (!ended) {
                _cleanup_json_ struct json_object *event = NULL;
                _cleanup_free_ char *line = NULL;
                int r;

                r = watch_signals_check(run);
                if (r < 0)
                        return r;
                /* Take every event already there before drawing once. */
                r = client_event(run->c, draining ? 0 : view_timeout(&run->v), &run->w.mask, &event,
                                 s->events ? &line : NULL);
                if (r < 0)
                        return r;
                if (r == 0) {
                        draining = false;
                        view_tick(&run->v);
                        continue;
                }
                draining = true;
                r = watch_take(run, event, &ended, &again);
                if (r < 0)
                        return r;
                /* An "end" that is not the end is not printed: the watch goes on. */
                if (s->events && !again && (r = watch_print_line(run->c, line)) < 0)
                        return r;
        }
        return again ? 1 : 0;
}

/* Where the messages of a reconnecting wait go: the view's stream, else stderr. */
static FILE *watch_note_stream(const struct watch_run *run) {
        return run->started ? run->v.out : stderr;
}

/* The connection was lost, or the daemon is not there: say so once (a live view leaves the
 * screen meanwhile; a plain view and the journal get one line; --json events a "reconnecting"
 * event). 0 or -errno (reported). */
static int watch_away(struct watch_run *run) {
        FILE *f;

        if (run->away)
                return 0;
        run->away = true;
        view_suspend(&run->v);
        f = watch_note_stream(run);
        fprintf(f, "wipectl: %s: daemon restarting, reconnecting (for up to %" PRId64 " s)...\n", run->c->path,
                (watch_tuning.reconnect_ms + 999) / 1000);
        fflush(f);
        return run->s->events ? watch_print_event(run->c, WATCH_EVENT_RECONNECTING, NULL) : 0;
}

/* Sleep ms, acting on signals meanwhile. 0 or -EINTR. */
static int watch_sleep(struct watch_run *run, int64_t ms) {
        int64_t end = mono_ms() + ms;

        for (;;) {
                int64_t left = end - mono_ms();
                struct timespec ts;
                int r = watch_signals_check(run);

                if (r < 0)
                        return r;
                if (left <= 0)
                        return 0;
                ts.tv_sec = left / 1000;
                ts.tv_nsec = (left % 1000) * 1000000;
                (void) ppoll(NULL, 0, &ts, &run->w.mask);
        }
}

/* Watch the jobs again on a new connection, once the daemon answers, until run->deadline: the
 * jobs and the view take the reply. 0 when following again; -ETIMEDOUT when the time is up;
 * -EINTR; or -errno (reported: the daemon no longer knows a job, permission, ...). */
static int watch_again(struct watch_run *run) {
        size_t n = json_object_array_length(run->jobs);
        _cleanup_free_ int64_t *ids = calloc(n ? n : 1, sizeof(*ids));

        if (!ids) {
                wipectl_error("watch: out of memory");
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
                ids[i] = output_job_id(json_object_array_get_idx(run->jobs, i));
        for (;;) {
                _cleanup_json_ struct json_object *request = NULL, *reply = NULL;
                struct json_object *jobs = NULL, *slot;
                int64_t left;
                int r;

                r = watch_sleep(run, WATCH_RETRY_MS);
                if (r < 0)
                        return r;
                left = run->deadline - mono_ms();
                if (left <= 0)
                        return -ETIMEDOUT;
                r = client_reconnect(run->c, run->c->path);
                if (r == -EAGAIN) {
                        r = watch_away(run);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (r < 0)
                        return r;
                request = watch_request(ids, n, run->interval);
                if (!request) {
                        wipectl_error("watch: out of memory");
                        return -ENOMEM;
                }
                /* A daemon that is starting answers once it has loaded its jobs; one that is
                 * socket-activated but never comes must not hold us past the deadline. Ctrl-C
                 * is let through while waiting. */
                (void) client_set_timeout(run->c, left);
                run->c->interrupted = &watch_interrupted;
                sigprocmask(SIG_SETMASK, &run->w.mask, NULL);
                r = client_call(run->c, request, &reply);
                sigprocmask(SIG_BLOCK, &run->w.handled, NULL);
                run->c->interrupted = NULL;
                if (r == -EINTR)
                        return r;
                if (client_lost(run->c, r)) {
                        client_close(run->c);
                        r = watch_away(run);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (r < 0)
                        return r;
                (void) client_set_timeout(run->c, 0);
                if (!json_object_object_get_ex(reply, "jobs", &jobs) || !json_object_is_type(jobs, json_type_array)) {
                        run->c->origin = CLIENT_ORIGIN_TRANSPORT;
                        wipectl_error("%s: watch reply without \"jobs\"", run->c->path);
                        return -EBADMSG;
                }
                for (size_t i = 0; i < json_object_array_length(jobs); i++) {
                        struct json_object *job = json_object_array_get_idx(jobs, i);
                        const char *was = NULL;

                        for (size_t k = 0; k < json_object_array_length(run->jobs); k++) {
                                struct json_object *old = json_object_array_get_idx(run->jobs, k);

                                if (output_job_id(old) == output_job_id(job) && output_job_id(job) >= 0)
                                        was = output_get_string(old, "state", NULL);
                        }
                        was = was ? strdupa(was) : NULL;
                        if (watch_update(run->jobs, job, &slot) < 0) {
                                wipectl_error("watch: out of memory");
                                return -ENOMEM;
                        }
                        watch_show(run, slot, !was || strcmp(was, output_get_string(job, "state", "")) != 0);
                }
                if (run->away) {
                        FILE *f = watch_note_stream(run);

                        run->away = false;
                        if (!run->v.live || !run->started) {
                                fprintf(f, "wipectl: %s: reconnected\n", run->c->path);
                                fflush(f);
                        }
                        view_resume(&run->v);
                }
                return run->s->events ? watch_print_event(run->c, WATCH_EVENT_START, jobs) : 0;
        }
}

/* Watch jobs on the connected client c until every one has ended: send the watch request, then
 * follow its events, showing them as s says; Ctrl-C stops the wait (the jobs keep running). When
 * the connection is lost, or a job ends interrupted but its daemon resumes it, reconnect and watch
 * the same jobs again for up to watch_tuning.reconnect_ms. Returns 0 when every job has ended,
 * -EINTR after Ctrl-C, -ETIMEDOUT (reported) when the daemon or a resume did not come in time, or
 * -errno, already reported (the connection lost: client_translate_errno() gives 3). In every case
 * *ret owns the jobs as last seen ({"jobs":[JOB...]}), or NULL when none were. */
static int watch_jobs(struct client *c, const struct watch_settings *s, struct json_object **ret) {
        _cleanup_json_ struct json_object *request = NULL, *reply = NULL, *status = NULL;
        struct json_object *jobs = NULL;
        struct watch_run run = { .c = c, .s = s, .reconnect = watch_tuning.reconnect_ms > 0 };
        bool live = s->view && view_live(s->view);
        int r;

        *ret = NULL;
        run.interval = s->interval_ms;
        if (run.interval == 0 && s->view)
                run.interval = live ? WATCH_LIVE_INTERVAL_MS : WATCH_PLAIN_INTERVAL_MS;
        run.period = run.interval > watch_tuning.progress_ms ? run.interval : watch_tuning.progress_ms;
        run.plain = s->view && !live;
        request = watch_request(s->ids, s->n, run.interval);
        if (!request) {
                wipectl_error("watch: out of memory");
                return -ENOMEM;
        }

        watch_signals_install(&run.w, live);
        c->interrupted = &watch_interrupted;
        r = client_call(c, request, &reply);
        c->interrupted = NULL;
        if (r < 0) {
                watch_signals_restore(&run.w);
                return r;
        }
        if (!json_object_object_get_ex(reply, "jobs", &jobs) || !json_object_is_type(jobs, json_type_array)) {
                watch_signals_restore(&run.w);
                c->origin = CLIENT_ORIGIN_TRANSPORT;
                wipectl_error("%s: watch reply without \"jobs\"", c->path);
                return -EBADMSG;
        }
        run.jobs = jobs;
        status = json_object_new_object();
        if (!status || json_object_object_add(status, "jobs", json_object_get(jobs)) < 0) {
                watch_signals_restore(&run.w);
                wipectl_error("watch: out of memory");
                return -ENOMEM;
        }
        /* From here a lost connection is expected news, said in a line of our own. */
        c->quiet = run.reconnect;

        r = s->events ? watch_print_event(c, WATCH_EVENT_START, jobs) : 0;
        /* Nothing to show when there is nothing to watch: "end" follows at once. */
        if (r == 0)
                r = watch_view_start(&run, false);
        if (r == 0)
                watch_signals_block(&run.w);
        while (r == 0) {
                r = watch_follow(&run);
                if (r == 0 || r == -EINTR)
                        break;
                if (r < 0 && !(run.reconnect && client_lost(c, r)))
                        break;
                if (r < 0 && (r = watch_away(&run)) < 0)
                        break;
                client_close(c);
                /* One allowance from the first trouble until every job is going again. */
                if (run.deadline == 0)
                        run.deadline = mono_ms() + watch_tuning.reconnect_ms;
                r = watch_again(&run);
                if (r == 0 && !watch_resuming(&run, run.jobs))
                        run.deadline = 0;
                if (r == 0)
                        r = watch_view_start(&run, false);
        }
        c->quiet = false;
        if (r == -ETIMEDOUT) {
                c->origin = CLIENT_ORIGIN_TRANSPORT;
                wipectl_error("%s: %s within %" PRId64 " s; the jobs are left interrupted", c->path,
                              run.away ? "wiped did not come back" : "the jobs were not resumed",
                              (watch_tuning.reconnect_ms + 999) / 1000);
        }
        if (r == 0)
                r = watch_view_start(&run, true);
        view_end(&run.v, r == 0);
        watch_signals_restore(&run.w);
        free(run.steps);
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
                        wipectl_error("job %" PRId64 ": %s: verifying again %s; the job stays %s", output_job_id(job),
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
                int64_t id = job ? output_job_id(job) : ids[i];

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
        if (r == -ETIMEDOUT) {
                int outcome = *status ? watch_outcome(*status) : WIPECTL_EXIT_JOB_INTERRUPTED;

                /* The daemon or the resume did not come back in time: the jobs stay interrupted;
                 * one that had failed or was cancelled before still says so (6, 7 before 8). */
                if (json && !s->events && *status)
                        output_render(OUTPUT_JOBS, *status, true);
                if (outcome == WIPECTL_EXIT_JOB_FAILED || outcome == WIPECTL_EXIT_JOB_CANCELLED)
                        return outcome;
                return WIPECTL_EXIT_JOB_INTERRUPTED;
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
                s.view = view_live(stderr) && !opts->quiet ? stderr : NULL;
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
        id = output_job_id(job);
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
