/* The view of jobs being waited for (watch, wipe, verify). On a terminal: the alternate screen,
 * redrawn in place (at most every 0.5 s, at once on a state change or a resize), one row per job
 * with a progress bar, rows beyond the height summarised, a summary row; when it ends, the last
 * frame is printed on the normal screen, where it stays. Anywhere else: plain lines, never an
 * escape code (logs, pipes): one per job at the start, on each state change and every period
 * while a job runs, and a summary at the end. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "clock.h"
#include "units.h"
#include "wipectl.h"

#define VIEW_LIVE_MS 500                /* least time between two redraws without a state change */
#define VIEW_LINE_MAX 2048              /* bytes of one line, '\0' included */
#define VIEW_DEVICE_MAX 24              /* characters of the device column at most */
#define VIEW_IDENTITY_MAX 24            /* characters of the identity column at most */
#define VIEW_BAR_MAX 40                 /* cells of the progress bar at most */
#define VIEW_BAR_MIN 5                  /* fewer cells than this: no bar */
#define VIEW_BAR_WITH_IDENTITY 10       /* the identity column goes before the bar gets fewer cells */

/* The live view on the screen, for view_release(): at most one per process. */
static struct view *view_current;

/* The size of the terminal behind out; 80x24 when it does not say. */
static void view_size(FILE *out, size_t *columns, size_t *rows) {
        struct winsize ws = { 0 };

        *columns = 80;
        *rows = 24;
        if (ioctl(fileno(out), TIOCGWINSZ, &ws) < 0)
                return;
        if (ws.ws_col > 0)
                *columns = ws.ws_col;
        if (ws.ws_row > 0)
                *rows = ws.ws_row;
}

/* A line being built, cut at max characters (whole UTF-8 sequences only). */
struct view_line {
        char s[VIEW_LINE_MAX];
        size_t len;                     /* bytes in s */
        size_t cols;                    /* characters in s */
        size_t max;                     /* characters allowed */
};

static void view_line_init(struct view_line *l, size_t max) {
        l->s[0] = '\0';
        l->len = l->cols = 0;
        l->max = max;
}

/* Append at most width characters of text (all of it when width is SIZE_MAX). */
static void view_put(struct view_line *l, const char *text, size_t width) {
        const unsigned char *p = (const unsigned char *) text;
        size_t done = 0;

        while (*p && done < width && l->cols < l->max) {
                size_t k = 1;

                while (p[k] && (p[k] & 0xc0) == 0x80)
                        k++;
                if (l->len + k >= sizeof(l->s))
                        break;
                memcpy(l->s + l->len, p, k);
                l->len += k;
                l->cols++;
                done++;
                p += k;
        }
        l->s[l->len] = '\0';
}

static void view_pad(struct view_line *l, size_t n) {
        for (size_t i = 0; i < n; i++)
                view_put(l, " ", 1);
}

/* text in a column of width characters: cut to it, padded on the left (right) or on the right. */
static void view_cell(struct view_line *l, const char *text, size_t width, bool right) {
        size_t w = output_width(text);

        if (w > width)
                w = width;
        if (right)
                view_pad(l, width - w);
        view_put(l, text, width);
        if (!right)
                view_pad(l, width - w);
}

/* One job as the view shows it. */
struct view_row {
        char id[24];
        char device[OUTPUT_CELL];       /* escaped */
        char identity[OUTPUT_CELL];     /* model and serial, or the loop device's file; escaped */
        char step[48];                  /* "pass 1/3", "verify", "flush 1/3"; "-" once ended */
        char percent[16];
        char rate[32];
        char eta[32];
        char state[32];
        char done[32];                  /* bytes done and total, for plain lines */
        char total[32];
        char elapsed[32];
        double fraction;                /* of all the work done, 0..1; -1 when unknown */
        bool ended;
        int rank;                       /* which rows stay when not all fit: lowest first */
};

/* What a job is doing: the pass being written, or a verification or flush, numbered only when
 * it is not of the last pass. */
static void view_step(struct json_object *job, char *buf, size_t n) {
        const char *phase = output_get_string(job, "phase", NULL);
        int64_t pass = output_get_int(job, "pass", 0), passes = output_get_int(job, "passes", 0);

        if (job_state_name_is_final(output_get_string(job, "state", NULL)) || !phase || passes <= 0)
                snprintf(buf, n, "-");
        else if (strcmp(phase, "write") == 0)
                snprintf(buf, n, "pass %" PRId64 "/%" PRId64, pass, passes);
        else if (pass == passes)
                snprintf(buf, n, "%s", phase);
        else
                snprintf(buf, n, "%s %" PRId64 "/%" PRId64, phase, pass, passes);
}

/* The device's identity in a few words: "MODEL SERIAL", or "loop FILE" with the file's last
 * name, or "-". */
static void view_identity(struct json_object *job, char *buf, size_t n) {
        struct json_object *identity = NULL, *loop = NULL;
        const char *model, *serial, *file;
        char raw[OUTPUT_CELL];

        json_object_object_get_ex(job, "identity", &identity);
        model = output_get_string(identity, "model", NULL);
        serial = output_get_string(identity, "serial", NULL);
        if (identity)
                json_object_object_get_ex(identity, "loop", &loop);
        file = output_get_string(loop, "backing_file", NULL);
        if (model || serial)
                snprintf(raw, sizeof(raw), "%s%s%s", model ? model : "", model && serial ? " " : "",
                         serial ? serial : "");
        else if (file)
                snprintf(raw, sizeof(raw), "loop %s", strrchr(file, '/') ? strrchr(file, '/') + 1 : file);
        else
                snprintf(raw, sizeof(raw), "-");
        output_escape(raw, false, buf, n);
}

/* A job's id: "job", or "id" from a daemon before wiped(8) NAMES AND UNITS. */
static int64_t view_job_id(struct json_object *job) {
        return output_get_int(job, json_object_object_get_ex(job, "job", NULL) ? "job" : "id", -1);
}

static void view_row_fill(struct view_row *r, struct json_object *job) {
        const char *state = output_get_string(job, "state", "?");
        struct output_job_text t;
        int64_t done, total;
        const char *device;
        double elapsed;

        /* Work over all passes and verifications (named bytes_done and bytes_total before). */
        done = output_get_int(job, json_object_object_get_ex(job, "work_done_bytes", NULL) ? "work_done_bytes" : "bytes_done", 0);
        total = output_get_int(job, json_object_object_get_ex(job, "work_total_bytes", NULL) ? "work_total_bytes" : "bytes_total", 0);
        output_job_text(job, &t);
        snprintf(r->id, sizeof(r->id), "%" PRId64, view_job_id(job));
        device = output_get_string(job, "device", NULL);
        /* A long path as given (/dev/disk/by-id/...) would be cut: the node says it in short. */
        if (!device || (output_width(device) > VIEW_DEVICE_MAX && output_get_string(job, "node", NULL)))
                device = output_get_string(job, "node", "?");
        output_escape(device, false, r->device, sizeof(r->device));
        view_identity(job, r->identity, sizeof(r->identity));
        view_step(job, r->step, sizeof(r->step));
        snprintf(r->percent, sizeof(r->percent), "%s", t.percent);
        snprintf(r->rate, sizeof(r->rate), "%s", t.rate);
        snprintf(r->eta, sizeof(r->eta), "%s", t.eta);
        output_escape(state, false, r->state, sizeof(r->state));
        snprintf(r->done, sizeof(r->done), "%s", t.done);
        snprintf(r->total, sizeof(r->total), "%s", t.total);
        elapsed = output_get_double(job, "elapsed_s", 0);
        /* Small devices take less than a second: keep its tenths. */
        if (elapsed < 60)
                snprintf(r->elapsed, sizeof(r->elapsed), "%.1fs", elapsed < 0 ? 0 : elapsed);
        else
                units_duration(r->elapsed, sizeof(r->elapsed), (int64_t) elapsed);
        r->fraction = total > 0 ? (double) (done < 0 ? 0 : done > total ? total : done) / (double) total : -1;
        r->ended = job_state_name_is_final(state);
        /* Failures first, then what still runs; what ended well last. */
        r->rank = output_state_of(state) == JOB_FAILED ? 0 : !r->ended ? 1 : output_state_of(state) != JOB_DONE ? 2 : 3;
}

/* Counts of jobs by state. */
struct view_counts {
        size_t jobs, running, done, failed, cancelled, interrupted, paused, done_errors;
        double rate;                    /* bytes/s of the running jobs together */
        int64_t eta;                    /* the largest known ETA of the running jobs, -1 when none */
};

static void view_count(struct view_counts *k, struct json_object *job) {
        const char *state = output_get_string(job, "state", "");
        int64_t eta;

        k->jobs++;
        switch (output_state_of(state)) {
        case JOB_DONE:
                k->done++;
                break;
        case JOB_FAILED:
                k->failed++;
                break;
        case JOB_CANCELLED:
                k->cancelled++;
                break;
        case JOB_INTERRUPTED:
                k->interrupted++;
                break;
        case JOB_PAUSED:
                k->paused++;
                break;
        case JOB_DONE_ERRORS:
                k->done_errors++;
                break;
        default:
                k->running++;
                k->rate += output_get_double(job, "rate_bps", 0);
                eta = output_get_int(job, "eta_s", -1);
                if (eta > k->eta)
                        k->eta = eta;
        }
}

/* Which states a list of counts names: the four usual ones always (and interrupted when there
 * are some), running always and the others when there are some, or only those there are some of. */
enum view_states {
        VIEW_STATES_FULL,
        VIEW_STATES_COMPACT,
        VIEW_STATES_PRESENT,
};

/* Append " 10 running, 2 done" to buf[0..l) as `which` says; returns the new length (may reach n). */
static size_t view_state_list(const struct view_counts *k, enum view_states which, char *buf, size_t l, size_t n) {
        const struct {
                size_t count;
                const char *name;
        } parts[] = {
                { k->running, job_state_name(JOB_RUNNING) }, { k->done, job_state_name(JOB_DONE) },
                { k->failed, job_state_name(JOB_FAILED) }, { k->cancelled, job_state_name(JOB_CANCELLED) },
                { k->interrupted, job_state_name(JOB_INTERRUPTED) }, { k->paused, job_state_name(JOB_PAUSED) },
                { k->done_errors, "done with errors" },
        };
        bool first = true;

        for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]) && l < n; i++) {
                bool shown = parts[i].count > 0 || (which == VIEW_STATES_FULL && i < 4) ||
                             (which == VIEW_STATES_COMPACT && i == 0);

                if (!shown)
                        continue;
                l += (size_t) snprintf(buf + l, n - l, "%s %zu %s", first ? "" : ",", parts[i].count, parts[i].name);
                first = false;
        }
        return l;
}

/* "3 jobs: 1 running, 1 done, 1 failed, 0 cancelled, total 240.6 MB/s, ETA 4m05s" (interrupted
 * jobs, when there are some, after the cancelled ones); compact, for a narrow terminal, leaves out
 * the states no job is in: "3 jobs: 1 running, 1 done, 1 failed, total 240.6 MB/s, ETA 4m05s". */
static void view_summary(const struct view_counts *k, bool compact, char *buf, size_t n) {
        size_t l = (size_t) snprintf(buf, n, "%zu job%s:", k->jobs, k->jobs == 1 ? "" : "s");
        char rate[32], eta[32];

        if (l < n)
                l = view_state_list(k, compact ? VIEW_STATES_COMPACT : VIEW_STATES_FULL, buf, l, n);
        if (l < n)
                snprintf(buf + l, n - l, ", total %s, ETA %s", units_rate(rate, sizeof(rate), k->rate),
                         units_duration(eta, sizeof(eta), k->eta));
}

/* "... 12 more jobs: 10 running, 2 done": the rows left out, the states they are in. */
static void view_more(const struct view_counts *k, char *buf, size_t n) {
        size_t l = (size_t) snprintf(buf, n, "... %zu more job%s:", k->jobs, k->jobs == 1 ? "" : "s");

        if (l < n)
                view_state_list(k, VIEW_STATES_PRESENT, buf, l, n);
}

/* Column widths of a frame, in characters; 0 leaves a column out (identity, bar, rate, ETA). */
struct view_layout {
        size_t id, device, identity, step, bar, percent, rate, eta, state;
};

static size_t view_max(size_t a, size_t b) {
        return a > b ? a : b;
}

/* Fit the columns of rows[n] to columns characters: the identity goes first, then the bar
 * shrinks and goes, then the rate and the ETA; a line still too long is cut at the edge. */
static void view_layout(struct view_layout *y, const struct view_row *rows, size_t n, size_t columns) {
        size_t base, room;

        *y = (struct view_layout) {
                /* Room for the usual values, so that columns do not move as the values change. */
                .id = 3, .device = 6, .identity = 8, .step = 8, .percent = 6, .rate = 10, .eta = 5, .state = 7,
        };
        for (size_t i = 0; i < n; i++) {
                y->id = view_max(y->id, output_width(rows[i].id));
                y->device = view_max(y->device, output_width(rows[i].device));
                y->identity = view_max(y->identity, output_width(rows[i].identity));
                y->step = view_max(y->step, output_width(rows[i].step));
                y->percent = view_max(y->percent, output_width(rows[i].percent));
                y->rate = view_max(y->rate, output_width(rows[i].rate));
                y->eta = view_max(y->eta, output_width(rows[i].eta));
                y->state = view_max(y->state, output_width(rows[i].state));
        }
        if (y->device > VIEW_DEVICE_MAX)
                y->device = VIEW_DEVICE_MAX;
        if (y->identity > VIEW_IDENTITY_MAX)
                y->identity = VIEW_IDENTITY_MAX;
        /* Seven columns and six gaps of two besides the identity and the bar ("[", "] "). */
        base = y->id + y->device + y->step + y->percent + y->rate + y->eta + y->state + 6 * 2;
        room = columns > base ? columns - base : 0;
        if (room >= y->identity + 2 + 3 + VIEW_BAR_WITH_IDENTITY) {
                y->bar = room - y->identity - 2 - 3;
        } else {
                y->identity = 0;
                y->bar = room >= 3 + VIEW_BAR_MIN ? room - 3 : 0;
        }
        if (y->bar > VIEW_BAR_MAX)
                y->bar = VIEW_BAR_MAX;
        if (y->bar)
                return;
        /* Without a bar the column still says PROGRESS. */
        if (y->percent < 8) {
                base += 8 - y->percent;
                y->percent = 8;
        }
        if (base > columns) {
                base -= y->rate + 2;
                y->rate = 0;
        }
        if (base > columns)
                y->eta = 0;
}

static void view_bar(struct view_line *l, double fraction, size_t cells) {
        size_t filled = fraction < 0 ? 0 : (size_t) (fraction * (double) cells + 0.5);

        if (filled > cells)
                filled = cells;
        view_put(l, "[", 1);
        for (size_t i = 0; i < cells; i++)
                view_put(l, i < filled ? "#" : (fraction < 0 ? " " : "."), 1);
        view_put(l, "] ", 2);
}

/* The header, or (row not NULL) a job's row. */
static void view_row_line(struct view_line *l, const struct view_layout *y, const struct view_row *row) {
        view_cell(l, row ? row->id : "JOB", y->id, true);
        view_pad(l, 2);
        view_cell(l, row ? row->device : "DEVICE", y->device, false);
        view_pad(l, 2);
        if (y->identity) {
                view_cell(l, row ? row->identity : "IDENTITY", y->identity, false);
                view_pad(l, 2);
        }
        view_cell(l, row ? row->step : "PHASE", y->step, false);
        view_pad(l, 2);
        if (!row)
                view_cell(l, "PROGRESS", y->bar ? y->bar + 3 + y->percent : y->percent, !y->bar);
        else {
                if (y->bar)
                        view_bar(l, row->fraction, y->bar);
                view_cell(l, row->percent, y->percent, true);
        }
        view_pad(l, 2);
        if (y->rate) {
                view_cell(l, row ? row->rate : "RATE", y->rate, true);
                view_pad(l, 2);
        }
        if (y->eta) {
                view_cell(l, row ? row->eta : "ETA", y->eta, true);
                view_pad(l, 2);
        }
        view_cell(l, row ? row->state : "STATE", y->state, false);
}

/* Sort key of the rows that stay: rank, then position. */
static int view_rank_compare(const void *a, const void *b, void *arg) {
        const struct view_row *rows = arg;
        size_t i = *(const size_t *) a, j = *(const size_t *) b;

        if (rows[i].rank != rows[j].rank)
                return rows[i].rank < rows[j].rank ? -1 : 1;
        return i < j ? -1 : i > j;
}

/* Write line l to f: live, at row ++*row of the screen, cleared first; else ending in '\n'. */
static void view_emit(FILE *f, bool live, size_t *row, const struct view_line *l) {
        if (live)
                fprintf(f, "\033[%zu;1H\033[2K%s", ++*row, l->s);
        else
                fprintf(f, "%s\n", l->s);
}

/* Write the frame of jobs to f: the header, the rows (at most height lines in all when height is
 * not 0, the rows left out summarised in one), the summary; each line cut to columns characters.
 * live: each line is placed at its row of the screen and the rest of the screen cleared;
 * otherwise lines end in '\n'. -ENOMEM or 0. */
static int view_frame(FILE *f, struct json_object *jobs, size_t columns, size_t height, bool live) {
        size_t n = json_object_array_length(jobs), shown = n, line = 0;
        _cleanup_free_ struct view_row *rows = calloc(n ? n : 1, sizeof(*rows));
        _cleanup_free_ size_t *order = calloc(n ? n : 1, sizeof(*order));
        _cleanup_free_ bool *visible = calloc(n ? n : 1, sizeof(*visible));
        struct view_counts all = { .eta = -1 }, hidden = { .eta = -1 };
        struct view_layout y;
        struct view_line l;
        char text[512];

        if (!rows || !order || !visible)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                view_row_fill(&rows[i], json_object_array_get_idx(jobs, i));
                view_count(&all, json_object_array_get_idx(jobs, i));
                order[i] = i;
        }
        /* The header and the summary, and the rows that fit between them; when not all fit, one
         * line tells about the rest. */
        if (height) {
                size_t room = height > 2 ? height - 2 : 0;

                if (n > room)
                        shown = room > 1 ? room - 1 : 0;
        }
        qsort_r(order, n, sizeof(*order), view_rank_compare, rows);
        for (size_t i = 0; i < n; i++)
                visible[order[i]] = i < shown;
        view_layout(&y, rows, n, columns);

        if (!height || height >= 2) {
                view_line_init(&l, columns);
                view_row_line(&l, &y, NULL);
                view_emit(f, live, &line, &l);
        }
        for (size_t i = 0; i < n; i++) {
                if (!visible[i]) {
                        view_count(&hidden, json_object_array_get_idx(jobs, i));
                        continue;
                }
                view_line_init(&l, columns);
                view_row_line(&l, &y, &rows[i]);
                view_emit(f, live, &line, &l);
        }
        if (hidden.jobs && (!height || height >= 3)) {
                view_more(&hidden, text, sizeof(text));
                view_line_init(&l, columns);
                view_put(&l, text, SIZE_MAX);
                view_emit(f, live, &line, &l);
        }
        view_summary(&all, false, text, sizeof(text));
        if (output_width(text) > columns)
                view_summary(&all, true, text, sizeof(text));
        view_line_init(&l, columns);
        view_put(&l, text, SIZE_MAX);
        view_emit(f, live, &line, &l);
        if (live && (!height || line < height))
                fprintf(f, "\033[%zu;1H\033[J", line + 1);
        return 0;
}

/* Redraw the live view now, in one write. */
static void view_draw(struct view *v) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, columns, rows;
        FILE *f;

        v->last_ms = mono_ms();
        v->dirty = v->force = false;
        if (!v->on_screen)
                return;
        view_size(v->out, &columns, &rows);
        f = open_memstream(&buf, &len);
        if (!f)
                return;
        if (view_frame(f, v->jobs, columns, rows, true) < 0) {
                fclose(f);
                return;
        }
        if (fclose(f) != 0)
                return;
        fwrite(buf, 1, len, v->out);
        fflush(v->out);
}

static void view_enter(struct view *v) {
        /* The alternate screen (the shell's screen comes back as it was) without a cursor. */
        fputs("\033[?1049h\033[?25l", v->out);
        v->on_screen = true;
        view_current = v;
        view_draw(v);
}

static void view_leave(struct view *v) {
        if (!v->on_screen)
                return;
        /* Empty the alternate screen first, the cursor at its top: a terminal that resizes it back to
         * the size it had when it was entered (tmux) could otherwise keep some of it. */
        fputs("\033[H\033[2J\033[?25h\033[?1049l", v->out);
        fflush(v->out);
        v->on_screen = false;
        if (view_current == v)
                view_current = NULL;
}

/* The last frame on the normal screen, every row, to stay there. */
static void view_print_final(struct view *v) {
        size_t columns, rows;

        view_size(v->out, &columns, &rows);
        view_frame(v->out, v->jobs, columns, 0, false);
        fflush(v->out);
}

/* "job 4: /dev/loop3: running, pass 1/2 random: 12.0 MiB of 32.0 MiB (device), 44.0% of all work,
 * 120.3 MB/s, ETA 4m05s" (the phase in device bytes, the percentage of every pass and verification
 * together), or once ended "job 4: /dev/loop3: done, 32.0 MiB (device), 100.0% of all work in 6s,
 * 123.4 MB/s (average)". */
static void view_plain_line(struct view *v, struct json_object *job) {
        struct json_object *list = NULL;
        const char *phase = output_get_string(job, "phase", NULL), *pattern = NULL;
        int64_t pass = output_get_int(job, "pass", 0);
        char size[32];
        struct view_row r;

        view_row_fill(&r, job);
        if (output_device_size(job) >= 0)
                output_size(size, sizeof(size), (uint64_t) output_device_size(job));
        else
                snprintf(size, sizeof(size), "-");
        /* The pattern of the pass being written: "pass 1/2 random". */
        if (phase && strcmp(phase, "write") == 0 && json_object_object_get_ex(job, "pass_list", &list) &&
            json_object_is_type(list, json_type_array) && pass >= 1 && (size_t) pass <= json_object_array_length(list))
                pattern = json_object_get_string(json_object_array_get_idx(list, (size_t) pass - 1));
        if (r.ended)
                fprintf(v->out, "job %s: %s: %s, %s (device), %s of all work in %s, %s (average)\n", r.id, r.device,
                        r.state, size, r.percent, r.elapsed, r.rate);
        else
                fprintf(v->out, "job %s: %s: %s, %s%s%s: %s of %s (device), %s of all work, %s, ETA %s\n", r.id, r.device,
                        r.state, r.step, pattern ? " " : "", pattern ? pattern : "", r.done, r.total, r.percent, r.rate,
                        r.eta);
}

/* Plain: whether the final line of job id has been printed; with mark, record that it has. */
static bool view_final_printed(struct view *v, int64_t id, bool mark) {
        for (size_t i = 0; i < v->n_final; i++)
                if (v->final[i] == id)
                        return true;
        if (mark && v->n_final < v->final_size)
                v->final[v->n_final++] = id;
        return false;
}

/* Plain: the line of job, and, once it has ended, only the first time. */
static void view_plain_job(struct view *v, struct json_object *job) {
        bool ended = job_state_name_is_final(output_get_string(job, "state", NULL));

        if (ended && view_final_printed(v, view_job_id(job), true))
                return;
        view_plain_line(v, job);
}

bool view_live(FILE *out) {
        const char *term = getenv("TERM");

        return isatty(fileno(out)) && !(term && strcmp(term, "dumb") == 0);
}

int view_start(struct view *v, FILE *out, struct json_object *jobs, int64_t period_ms) {
        size_t n = json_object_array_length(jobs);

        *v = (struct view) {
                .out = out, .jobs = jobs, .period_ms = period_ms, .last_ms = mono_ms(), .live = view_live(out),
        };
        if (v->live) {
                view_enter(v);
                return 0;
        }
        /* Room for every job watched, and for as many more as events may add. */
        v->final_size = n + 64;
        v->final = calloc(v->final_size, sizeof(*v->final));
        if (!v->final)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                view_plain_job(v, json_object_array_get_idx(jobs, i));
        fflush(out);
        return 0;
}

void view_changed(struct view *v, struct json_object *job, bool state) {
        if (!v->out)
                return;
        if (v->live) {
                v->dirty = true;
                v->force = v->force || state;
                return;
        }
        if (state) {
                view_plain_job(v, job);
                fflush(v->out);
        }
}

void view_resize(struct view *v) {
        if (v->out && v->live)
                v->force = true;
}

/* Whether a plain view has a running job to print lines for. */
static bool view_running(const struct view *v) {
        for (size_t i = 0; i < json_object_array_length(v->jobs); i++)
                if (!job_state_name_is_final(output_get_string(json_object_array_get_idx(v->jobs, i), "state", NULL)))
                        return true;
        return false;
}

int view_timeout(const struct view *v) {
        int64_t left;

        if (!v->out)
                return -1;
        if (v->live) {
                if (v->force)
                        return 0;
                if (!v->dirty)
                        return -1;
                left = v->last_ms + VIEW_LIVE_MS - mono_ms();
        } else {
                if (!view_running(v))
                        return -1;
                left = v->last_ms + v->period_ms - mono_ms();
        }
        return left < 0 ? 0 : (int) left;
}

void view_tick(struct view *v) {
        if (!v->out || view_timeout(v) != 0)
                return;
        if (v->live) {
                view_draw(v);
                return;
        }
        v->last_ms = mono_ms();
        for (size_t i = 0; i < json_object_array_length(v->jobs); i++) {
                struct json_object *job = json_object_array_get_idx(v->jobs, i);

                if (!job_state_name_is_final(output_get_string(job, "state", NULL)))
                        view_plain_line(v, job);
        }
        fflush(v->out);
}

void view_suspend(struct view *v) {
        if (v->out && v->live)
                view_leave(v);
}

void view_resume(struct view *v) {
        if (v->out && v->live && !v->on_screen && !v->released)
                view_enter(v);
}

void view_end(struct view *v, bool ended) {
        char text[512];

        if (!v->out)
                return;
        if (v->live) {
                if (v->on_screen) {
                        view_leave(v);
                        view_print_final(v);
                }
        } else if (ended) {
                struct view_counts k = { .eta = -1 };

                for (size_t i = 0; i < json_object_array_length(v->jobs); i++) {
                        view_plain_job(v, json_object_array_get_idx(v->jobs, i));
                        view_count(&k, json_object_array_get_idx(v->jobs, i));
                }
                view_summary(&k, false, text, sizeof(text));
                fprintf(v->out, "%s\n", text);
                fflush(v->out);
        }
        free(v->final);
        *v = (struct view) {};
}

void view_release(void) {
        struct view *v = view_current;

        if (!v)
                return;
        view_leave(v);
        view_print_final(v);
        v->released = true;
}
