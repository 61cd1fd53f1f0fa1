/* Live progress of waited-for jobs: poll "status" every 0.5 s; on a terminal redraw one line per
 * job in place, elsewhere print plain lines every 2 s (no escape codes, fit for logs). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <inttypes.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "wipectl.h"

#define PROGRESS_POLL_MS 500            /* status poll interval */
#define PROGRESS_PLAIN_MS 2000          /* interval of plain lines off a terminal */
#define PROGRESS_LINE_MAX 512

/* State of one display; lives on progress_wait()'s stack. */
struct progress {
        FILE *out;                      /* where lines go; NULL draws nothing */
        bool tty;                       /* out is a terminal: redraw in place */
        size_t drawn;                   /* lines drawn last time on the terminal */
        int64_t last_plain_ms;          /* when plain lines were last printed, -1 never */
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

/* Format one job as a line without '\n', the state early so that a narrow terminal still shows it:
 * "job 4   /dev/loop3  running    45.2%    115 MiB / 256 MiB    120.3 MB/s  ETA 1s" */
static void progress_line(struct json_object *job, int device_width, char *buf, size_t n) {
        struct output_job_text t;
        int64_t passes = output_get_int(job, "passes", 1);
        char pass[48] = "";

        output_job_text(job, &t);
        if (passes > 1)
                snprintf(pass, sizeof(pass), "  pass %s", t.pass);
        snprintf(buf, n, "job %-3" PRId64 " %-*s  %-9s  %6s  %9s / %-9s  %12s  ETA %s%s",
                 output_get_int(job, "id", -1), device_width, output_get_string(job, "device", "?"),
                 output_get_string(job, "state", "?"), t.percent, t.done, t.total, t.rate, t.eta, pass);
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
        if (!p->tty) {
                int64_t now = progress_now_ms();

                if (!final && p->last_plain_ms >= 0 && now - p->last_plain_ms < PROGRESS_PLAIN_MS)
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
