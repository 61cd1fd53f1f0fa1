/* wipectl: the command-line client of wiped. One private header for the whole program, grouped
 * by the file that defines each thing (tmux's tmux.h is the model). */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>

#include "protocol.h"
#include "vocab.h"

struct option;
struct pass;

/* Exit statuses, documented in wipectl(1) "EXIT STATUS". */
enum wipectl_exit {
        WIPECTL_EXIT_OK = 0,
        WIPECTL_EXIT_FAILURE = 1,       /* the daemon reported an error, or another failure */
        WIPECTL_EXIT_USAGE = 2,         /* bad command line, or a confirmation that was not given */
        WIPECTL_EXIT_UNREACHABLE = 3,   /* cannot connect to the daemon, or the connection was lost */
        WIPECTL_EXIT_PERMISSION = 4,    /* EPERM or EACCES */
        WIPECTL_EXIT_REFUSED = 5,       /* the daemon refused a device */
        WIPECTL_EXIT_JOB_FAILED = 6,    /* a waited-for job ended "failed" */
        WIPECTL_EXIT_JOB_CANCELLED = 7, /* a waited-for job ended "cancelled", and none failed */
        WIPECTL_EXIT_JOB_INTERRUPTED = 8, /* a waited-for job ended "interrupted" (the daemon stopped), and
                                           * none failed or was cancelled */
        WIPECTL_EXIT_CHECK_FAILED = 9,  /* report --check: the report failed its check */
        WIPECTL_EXIT_DONE_ERRORS = 10,  /* a waited-for job ended "done-with-errors" (bad sectors skipped), and
                                         * none failed, was cancelled or interrupted */
        WIPECTL_EXIT_DETACHED = 130,    /* Ctrl-C while waiting; the jobs keep running */
};

/* main.c */

/* "format_version" of every JSON document wipectl prints (wipectl(1) "JSON OUTPUT"): it changes
 * when a field is renamed or removed, or changes its type or meaning; new fields do not change it.
 * 1 was the unversioned output before the one naming scheme of fields that wiped(8) documents. */
#define WIPECTL_JSON_FORMAT JSON_FORMAT_VERSION

/* Global options, parsed before the command name and read-only afterwards. */
struct wipectl_options {
        const char *socket_path;        /* --socket, $WIPED_SOCKET, or PROTOCOL_SOCKET_DEFAULT */
        bool json;                      /* --json: print the command's JSON object instead of text */
        bool bytes;                     /* --bytes: sizes in text as byte counts (output_raw_bytes) */
        bool quiet;                     /* -q, --quiet: nothing on stdout but --json's object */
};

/* One subcommand (tmux's cmd_entry). exec() gets argv[0] = the command name and returns an exit
 * status from enum wipectl_exit. Each command parses its own options with getopt_long. */
struct cmd_entry {
        const char *name;
        const char *args;               /* synopsis after the name, "[--keys] JOB" */
        const char *summary;            /* one line for "wipectl --help" */
        const char *help;               /* option lines for "wipectl NAME --help", or NULL */
        int (*exec)(const struct cmd_entry *self, const struct wipectl_options *opts, int argc, char **argv);
};

/* Print "Usage: wipectl [OPTIONS] NAME ARGS" and the command's help to f. */
void cmd_usage(const struct cmd_entry *entry, FILE *f);
/* Report a usage error for a command: "wipectl: NAME: <message>" and a hint; returns
 * WIPECTL_EXIT_USAGE. */
int cmd_usage_error(const struct cmd_entry *entry, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* What a command's getopt_long loop does not handle itself (optstring ":h", --help as 'h', opterr
 * 0): 'h' prints the usage on stdout and returns WIPECTL_EXIT_OK; '?' or ':' is reported as a
 * usage error ("unknown option '-x'", "option '--seed' needs an argument"), WIPECTL_EXIT_USAGE. */
int cmd_option_other(const struct cmd_entry *entry, char **argv, int c);
/* getopt_long for a command whose options are --help and, unless flag is NULL, the one long
 * option *flag (no argument, .flag NULL, .val not 'h', '?' or ':'), which sets *set. "--flag=x"
 * is reported through .val: as "-c" for a val below 0x100, else by name (cmd_option_other()).
 * Returns -1 when parsing is done (optind at the first operand), or an exit status to return. */
int cmd_options(const struct cmd_entry *self, int argc, char **argv, const struct option *flag, bool *set);
/* --json after a command's name (probe, methods), for cmd_options(). */
extern const struct option cmd_json_option;
/* getopt_long() for a command's options (optstring and longopts as getopt_long takes them, opterr
 * 0), that also takes the global options anywhere on the line (--json/-J, --quiet/-q, --bytes,
 * --socket) into the options the command was given, and returns the command's own. Returns -1 when
 * parsing is done; then, with --quiet and without --json, stdout goes to /dev/null. */
int cmd_getopt(int argc, char **argv, const char *optstring, const struct option *longopts);
/* Print "wipectl: <message>" on stderr, one line. The message names its object first. The first
 * message of a run is kept for the JSON error object (wipectl_exit()). */
void wipectl_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The error just reported with wipectl_error() stands for errno errnum (0: none) and leads to the
 * exit status status (client_translate_errno() calls it). Only the first error is kept. */
void wipectl_error_note(int errnum, int status);
/* {"message","errno","exit_status"} of the first error, with status (or, when 0, the one noted),
 * as the JSON error object holds it; NULL when there is no status (no error, or a warning), or on
 * ENOMEM. The caller owns it. */
struct json_object *wipectl_error_json(int status);
/* A JSON document went to stdout (output_render() calls it): wipectl_exit() adds no error object. */
void wipectl_json_printed(void);
/* Print one event line of watch --json (line: a JSON object from the daemon) with the format version
 * in it, '\n' after. 0 or EOF. */
int wipectl_print_event(const char *line);
/* What main() returns for the exit status status: with --json, when nothing was printed on stdout
 * and status is not 0, prints {"format_version":N,"error":{...}} first. */
int wipectl_exit(int status);
/* Parse a job id (a decimal integer from 0 to 2^53). 0 or -EINVAL. */
int wipectl_parse_job_id(const char *s, int64_t *ret);
/* The JOB operands argv[optind..argc) as ids, malloc'd in *ret (NULL when there are none). -1 when
 * they are fine, or the exit status of the error reported ("X: not a job id"). */
int cmd_operand_jobs(const struct cmd_entry *self, int argc, char **argv, int64_t **ret, size_t *n);
/* The one JOB operand in *id: -1 when it is fine, or the exit status of the usage error reported
 * ("no job given", "one job at a time", "X: not a job id"). */
int cmd_operand_job(const struct cmd_entry *self, int argc, char **argv, int64_t *id);
/* Parse a sample seed: decimal digits, at most 2^64 - 1. 0 or -EINVAL. */
int wipectl_parse_seed(const char *s, uint64_t *ret);

/* cmd-wipe.c */
extern const struct cmd_entry cmd_wipe_entry;

/* cmd-devices.c */
extern const struct cmd_entry cmd_devices_entry;

/* cmd-policies.c */
extern const struct cmd_entry cmd_policies_entry;

/* cmd-methods.c */
extern const struct cmd_entry cmd_methods_entry;

/* cmd-verify.c */
extern const struct cmd_entry cmd_verify_entry;

/* cmd-watch.c */
extern const struct cmd_entry cmd_watch_entry;
extern const struct cmd_entry cmd_wait_entry;

/* cmd-job.c */
extern const struct cmd_entry cmd_status_entry;
extern const struct cmd_entry cmd_list_entry;
extern const struct cmd_entry cmd_cancel_entry;
extern const struct cmd_entry cmd_pause_entry;
extern const struct cmd_entry cmd_resume_entry;
extern const struct cmd_entry cmd_forget_entry;
extern const struct cmd_entry cmd_report_entry;
extern const struct cmd_entry cmd_version_entry;

/* cmd-pdf.c: report --pdf */
struct export_selection;
struct cmd_report_pdf {
        const char *file;               /* --pdf FILE ("-": standard output) */
        const char *check;              /* --check REPORT: a report file instead of jobs, or NULL */
        const char *key;                /* --key PEMFILE with --check, or NULL */
        bool summary_only;              /* --summary-only: no page per drive */
        const struct export_selection *select; /* --all's selection instead of JOB operands, or NULL */
};
/* report --pdf: the certificates of the JOB operands argv[optind..argc) (their signed reports, from
 * the daemon), of the reports a->select selects (--all), or of the report file a->check after
 * checking its signature. Returns an exit status;
 * built without PDF support (configure --disable-pdf), says so and returns WIPECTL_EXIT_FAILURE. */
int cmd_report_pdf(const struct cmd_entry *self, const struct wipectl_options *opts, const struct cmd_report_pdf *a,
                   int argc, char **argv);

/* client.c */

/* Where the last error of a client came from; decides its exit status. */
enum client_origin {
        CLIENT_ORIGIN_LOCAL,            /* this program: memory, arguments */
        CLIENT_ORIGIN_TRANSPORT,        /* the socket: connect, send, receive */
        CLIENT_ORIGIN_DAEMON,           /* an error reply from the daemon */
};

/* One connection to the daemon, carrying requests in sequence. Initialise with CLIENT_INIT. */
struct client {
        const char *path;               /* socket path (borrowed) */
        int fd;                         /* -1 when not connected */
        int64_t next_id;                /* id of the next request */
        char *buf;                      /* received bytes not yet consumed */
        size_t buf_len;                 /* bytes held in buf */
        size_t buf_size;                /* allocated size of buf */
        const volatile sig_atomic_t *interrupted; /* when set and non-zero, EINTR aborts a call */
        enum client_origin origin;      /* origin of the last error */
        enum protocol_op op;            /* op of the last request */
        bool quiet;                     /* a lost connection is expected (a wait that reconnects): not
                                         * reported, only returned */
};
#define CLIENT_INIT { .fd = -1, .next_id = 1, .origin = CLIENT_ORIGIN_LOCAL, .op = PROTOCOL_OP_INVALID }
#define CLIENT_REPLY_MAX (16 * 1024 * 1024) /* longest reply line accepted, bytes */

#define WIPECTL_GROUP "wiped"           /* the group that may use the control socket (wiped's WIPED_GROUP) */

/* Connect to the Unix socket at path. When the control socket at path refuses us (EACCES), connect
 * to its read-only socket instead ($WIPED_STATUS_SOCKET, else protocol_status_socket_path(path);
 * c->path then names it), where the daemon answers what changes nothing and refuses the rest with
 * EPERM. 0, or -errno after printing "wipectl: PATH: ..." (for EACCES, with the fix: root or the
 * group, and the usermod line). */
int client_connect(struct client *c, const char *path);
/* Close the connection and free the buffer; c can be connected again. Accepts a closed client. */
void client_close(struct client *c);
/* Send request (its "id" is set here; the caller keeps ownership) and wait for the reply.
 * On success returns 0 and *ret owns the reply. On failure prints one line on stderr (the
 * daemon's message, or the socket path and what went wrong) and returns -errno; c->origin says
 * where the error came from. -EINTR when c->interrupted was set while waiting. */
int client_call(struct client *c, struct json_object *request, struct json_object **ret);
/* Build {"op":op,"jobs":[ids]} (status, watch), without "jobs" when n is 0; NULL on ENOMEM. */
struct json_object *client_request_jobs(enum protocol_op op, const int64_t *ids, size_t n);
/* Convenience: request op with no fields. Same contract as client_call(). */
int client_call_simple(struct client *c, enum protocol_op op, struct json_object **ret);
/* Connect to path and send request: client_connect(), then client_call(). Returns 0 with *ret
 * owning the reply and c still connected; or, c closed and the error printed, its exit status
 * (client_translate_errno(), never 0). */
int client_connect_call(struct client *c, const char *path, struct json_object *request, struct json_object **ret);
/* Read the next event line of a watch (sent with client_call() on c), waiting at most timeout_ms
 * (-1: no limit) with the signal mask sigmask in place while it waits (as ppoll(2) does; NULL: the
 * current mask). Returns 1 with *ret owning the event object and, when line is not NULL, *line
 * owning a copy of the line as the daemon sent it (without '\n'); 0 when the time passed or a
 * signal arrived first (the caller checks its flags); or -errno after printing one line: the
 * connection was lost ("PATH: connection lost: ...", c->origin CLIENT_ORIGIN_TRANSPORT), or the
 * line is not an event. */
int client_event(struct client *c, int timeout_ms, const sigset_t *sigmask, struct json_object **ret, char **line);
/* Connect to path again without a word when the daemon is not there yet (restarting): 0 when
 * connected; -EAGAIN when nobody answers at path now (no socket, refused, reset); else what
 * client_connect() returns (reported). */
int client_reconnect(struct client *c, const char *path);
/* Give up a reply or event that takes longer than timeout_ms (0: wait as long as it takes): the
 * call then fails with -ETIMEDOUT (CLIENT_ORIGIN_TRANSPORT). 0 or -errno. */
int client_set_timeout(struct client *c, int64_t timeout_ms);
/* Whether r from a call on c means the connection to the daemon went away (or never came):
 * something to reconnect after, not a failure of the daemon or of this program. */
bool client_lost(const struct client *c, int r);
/* Map a failure of c (r = -errno from a client_* call) to an exit status. The one place that
 * decides exit statuses for errors (cryptsetup's translate_errno). */
int client_translate_errno(const struct client *c, int r);

/* cmd-probe.c */
extern const struct cmd_entry cmd_probe_entry;
/* Report every refused device of a probe's result ({"devices":[PROBE...]}) on stderr,
 * "wipectl: /dev/loop3: refusing: is read-only"; returns whether there was one. */
bool cmd_probe_refused(struct json_object *result);
/* The DEVICE operands of probe and wipe, argv[optind..argc): checked (at least one, at most
 * PROTOCOL_DEVICES_MAX, none empty and, with distinct, none named twice), then made absolute
 * (cmd_probe_absolute()). Returns -1 with *ret (free() it) holding the *n paths, or the exit
 * status of the error it reported. */
int cmd_probe_operands(const struct cmd_entry *self, int argc, char **argv, bool distinct, char ***ret,
                       size_t *n);
/* The device paths as the daemon must get them: absolute. A relative path is joined to this
 * process's working directory, where the user typed it (the daemon's is another, and it refuses
 * relative paths). Returns 0 with *ret one malloc'd block (free() it) holding n strings, or an
 * exit status after printing one line. */
int cmd_probe_absolute(char *const *devices, size_t n, char ***ret);
/* Build {"op":op,"devices":[devices[n]]}: the probe request, and the start of wipe's submit.
 * NULL on ENOMEM; the caller owns the result. */
struct json_object *cmd_probe_request(enum protocol_op op, char *const *devices, size_t n);
/* Ask the daemon to probe devices[n], on a connection of its own that is closed on return. Returns
 * 0 with *ret owning {"devices":[PROBE...]} (the reply without "id" and "ok"), checked to hold one
 * object per device, each with a boolean "wipeable"; or an exit status after printing one line,
 * with *ret NULL. */
int cmd_probe_devices(const struct wipectl_options *opts, char *const *devices, size_t n, struct json_object **ret);

/* output.c */

/* What a JSON object describes; selects its text rendering. */
enum output_kind {
        OUTPUT_JOBS,                    /* {"jobs":[JOB...]}: a table */
        OUTPUT_SUBMITTED,               /* {"jobs":[{"id","device"}...]}: "ID DEVICE" lines */
        OUTPUT_JOB,                     /* {"job":JOB}: one job, as a table row */
        OUTPUT_ENDED,                   /* {"jobs":[JOB...]}: "job 4: /dev/loop3: done" lines (wait) */
        OUTPUT_REPORT,                  /* REPORT: readable report */
        OUTPUT_VERSION,                 /* {"client":"..","daemon":{...}} */
        OUTPUT_PROBE,                   /* {"devices":[PROBE...]}: one block per device */
        OUTPUT_METHODS,                 /* {"methods":[...]}: the wipe methods */
};

/* --bytes (main.c sets it): text shows sizes as byte counts instead of IEC units. */
extern bool output_raw_bytes;
/* A size for people: "1.00 GiB", or "1073741824" with --bytes. Returns buf. */
const char *output_size(char *buf, size_t n, uint64_t bytes);
/* A size with its exact count: "1.00 GiB (1073741824 bytes)", or "1073741824 bytes" with --bytes.
 * Returns buf. */
const char *output_size_exact(char *buf, size_t n, uint64_t bytes);
/* Print o on stdout: as pretty JSON when json, else as the text for kind. 0 or -EIO. */
int output_render(enum output_kind kind, struct json_object *o, bool json);
/* output_render() for a command's result: returns WIPECTL_EXIT_OK, or WIPECTL_EXIT_FAILURE after
 * printing "wipectl: stdout: write error" (also when o is NULL, an object that could not be made). */
int output_print(enum output_kind kind, struct json_object *o, bool json);
/* Flush what was printed on stdout: WIPECTL_EXIT_OK, or WIPECTL_EXIT_FAILURE after printing
 * "wipectl: stdout: write error" (a full disk, a closed pipe). */
int output_flush(void);
/* Take the reply of an op and return the object a command prints: the reply without "id" and
 * "ok" (a new reference; NULL on ENOMEM). */
struct json_object *output_from_reply(struct json_object *reply);
/* Field readers that tolerate absence: the default when absent or of the wrong type. */
const char *output_get_string(struct json_object *o, const char *key, const char *def);
int64_t output_get_int(struct json_object *o, const char *key, int64_t def);
/* An integer that may use all 64 bits unsigned (a seed); def when absent, negative or not an
 * integer. */
uint64_t output_get_u64(struct json_object *o, const char *key, uint64_t def);
double output_get_double(struct json_object *o, const char *key, double def);
/* The error of a JOB or REPORT object as one line naming the device first,
 * "/dev/loop3: write failed at ...: Input/output error (EIO)"; NULL when it has none. */
const char *output_error_line(struct json_object *o, char *buf, size_t n);
/* The job state a status or report names (common/vocab.h), _JOB_STATE_MAX for NULL or a word this
 * wipectl does not know. */
enum job_state output_state_of(const char *state);
/* The verification mode a status or report names ("none", "sample", "last", "all"),
 * _VERIFY_MODE_MAX for anything else. */
enum verify_mode output_mode_of(const char *mode);
/* A JOB object's numbers formatted for people; the table and the progress lines share them. */
struct output_job_text {
        char percent[16];               /* "45.2%", "-" when the size is unknown */
        char done[32];                  /* bytes done, IEC units (output_size()) */
        char total[32];                 /* bytes total, IEC units (output_size()) */
        char rate[32];                  /* current rate, or the average once ended */
        char eta[32];                   /* "-" when unknown or ended */
        char phase[48];                 /* "pass 2/3" writing, "flush 2/3", "verify 3/3" */
        char size[32];                  /* the device's size (output_size()); "-" when unknown */
};
/* Percent, bytes and ETA count all the work of a job (every pass's writes and the planned
 * verification reads: bytes_done of bytes_total), not the device's size. */
void output_job_text(struct json_object *job, struct output_job_text *t);
/* The device size of a JOB or REPORT object in bytes: its "size", else its identity's, else -1. */
/* Field name of o, else its deprecated name old (a daemon or a stored report of the release
 * before, wiped(8) NAMES AND UNITS), else def. */
int64_t output_get_int_or(struct json_object *o, const char *name, const char *old, int64_t def);
/* A job's id: "job", or "id" from a daemon before NAMES AND UNITS; -1 without either. */
int64_t output_job_id(struct json_object *job);
int64_t output_device_size(struct json_object *o);
/* Copy s into buf (n bytes) fit for a terminal: control characters become \xNN, so that a label
 * or a model string cannot move the cursor; with quote, the result is in double quotes and '"'
 * and '\\' are escaped too. NULL s gives "-". Returns buf, cut to n. */
const char *output_escape(const char *s, bool quote, char *buf, size_t n);
/* Characters of a UTF-8 string as a terminal counts them, near enough: bytes that do not continue
 * a sequence. The table and the view align their columns by it. */
size_t output_width(const char *s);

#define OUTPUT_CELL 256                 /* bytes of one table cell, '\0' included */
/* A table of text cells printed with its columns aligned (lsblk-like): row 0 is the header. */
struct output_table {
        size_t columns;
        size_t rows;                    /* rows below the header */
        const bool *right;              /* per column: right-aligned; NULL: all left */
        char (*cells)[OUTPUT_CELL];     /* (rows + 1) * columns cells, row-major */
};
/* Allocate a table of rows rows below header[columns]. 0 or -ENOMEM. Free with
 * output_table_done(), which accepts a table that failed to initialise. */
int output_table_init(struct output_table *t, const char *const *header, const bool *right, size_t columns,
                      size_t rows);
/* The cell at row (1..rows; 0 is the header) and column, to fill with snprintf(.., OUTPUT_CELL, ..). */
char *output_table_cell(struct output_table *t, size_t row, size_t column);
/* Print the table on stdout, each line after indent; cells padded to the widest of their column
 * (counted in UTF-8 characters), the last column not padded. */
void output_table_print(const struct output_table *t, const char *indent);
void output_table_done(struct output_table *t);

/* output-report.c */

/* A REPORT object as text: the job, its host, method and passes with their verification, the
 * Verification section, bad ranges, errors and history, the device's identity and signatures,
 * and whether the report is signed. Fields that older reports lack are left out. */
void output_report_text(struct json_object *report);
/* The result of "report --check" ({"file","valid","key_id","job","state","node","serial","host",
 * "this_host_key","error"}) as text, when valid: "FILE: valid signature (ed25519, key ID): job 12,
 * /dev/loop3 (serial X), done, host NAME", and whether this host's key signed it when known.
 * Nothing for an invalid report: its error goes to stderr, from the caller. */
void output_report_check_text(struct json_object *check);
/* The record fields a submit gave ("asset_tag", "batch", "customer", "note", "destination",
 * "operator", "verifier") of o, one "Label: value" line each after indent; "not recorded" for
 * what o lacks (a dry run's plan, a report). planned: o is a dry run's plan, whose batch is not
 * the one a submit will get: no batch line. */
void output_record_text(struct json_object *o, const char *indent, bool planned);

/* output-method.c */

/* Write the pass names[n] on one line of at most width characters (when it can be), runs of one
 * pass shortened, "4x random", and the middle left out when still too long,
 * "4x random, 0x55, ... (23 more) ..., 0xdb6db6, 4x random". The full list when width is 0.
 * Returns buf. */
const char *output_pass_summary(const char *const *names, size_t n, size_t width, char *buf, size_t size);
/* The same for a JSON array of pass names ("pass_list") or of pass objects with "pattern"
 * ("passes"). Returns buf; "-" for a missing or empty array. */
const char *output_pass_summary_json(struct json_object *list, size_t width, char *buf, size_t size);
/* The canonical names of passes[n] ("random", "0x55") as a JSON array of strings, as submit's
 * "passes" and the methods listing hold them; NULL on ENOMEM. */
struct json_object *output_pass_array(const struct pass *passes, size_t n);
/* A verification mode in words, "sample (10%)", "last", from a JOB's "verify" object or the
 * REPORT's "verification" one. Returns buf. */
const char *output_verify_mode(struct json_object *verify, char *buf, size_t n);
/* {"methods":[...]} as text: one block per method, legacy ones marked, and the note on them. */
void output_methods_text(struct json_object *methods);

/* output-smart.c: drive health (a probe's "smart", a report's "smart_before" and "smart_after"). */
/* One line of a SMART snapshot: "PASSED, 12345 power-on hours, 0 reallocated, 0 pending", "no
 * SMART (loop device)", "not available (smartctl timed out)", "not recorded" (NULL). Returns buf. */
const char *output_smart_summary(struct json_object *smart, char *buf, size_t n);
/* The probe's "Health:" line, the label padded to width (indent included); none without "smart". */
void output_smart_probe(struct json_object *probe, const char *indent, int width);
/* The report's "Health before", "Health after" and "Health policy" lines. */
void output_smart_report(struct json_object *rep);

/* output-device.c: the IDENTITY, SIG, PART and PROBE objects of the daemon as text. */
/* Append to buf (n bytes, *l used) as snprintf would, never past the end. */
__attribute__((format(printf, 4, 5))) void output_append(char *buf, size_t n, size_t *l, const char *fmt, ...);

/* All probes of {"devices":[PROBE...]}: for each a heading ("/dev/loop3: wipeable", or why not),
 * its identity, signatures, partition table and partitions. */
void output_probe_text(struct json_object *devices);
/* The lines of an IDENTITY object, each "<indent><Label:>  value" with labels padded to width. */
void output_identity_text(struct json_object *identity, const char *indent, int width);
/* A table of SIG objects (type, usage, offset, label, UUID) after indent; nothing when empty. */
void output_signatures_text(struct json_object *signatures, const char *indent);
/* One line describing a device for a confirmation: node (and the path when it differs), size,
 * model and serial (or the loop device's backing file), and what it holds, e.g.
 * "/dev/loop3: 256 MiB, loop device over /dev/shm/a.img, gpt: 2 partitions (ext4 \"data\", swap)".
 * Returns buf. */
const char *output_device_summary(struct json_object *probe, char *buf, size_t n);
/* What an IDENTITY object names in a few words for a table cell: "MODEL (SERIAL)", or
 * "loop /dev/shm/a.img", or "-". Returns buf. */
const char *output_identity_short(struct json_object *identity, char *buf, size_t n);
/* The refusal of a PROBE object as one line naming the device first, as the daemon wrote it
 * ("/dev/loop3: refusing: is read-only"); NULL when the device is not refused. */
const char *output_refusal_line(struct json_object *probe, char *buf, size_t n);

/* view.c */

/* The display of jobs while they are waited for: live on a terminal (the alternate screen,
 * redrawn in place), else plain lines without escape codes. Lives on the caller's stack. */
struct view {
        FILE *out;                      /* NULL: not started, or ended */
        struct json_object *jobs;       /* [JOB...] shown (borrowed; updated in place by the caller) */
        bool live;                      /* out is a terminal */
        bool on_screen;                 /* live: the alternate screen shows the view */
        bool released;                  /* live: left by view_release(); no coming back */
        bool dirty;                     /* live: jobs changed since the last redraw */
        bool force;                     /* live: redraw at once (a state change, a resize) */
        int64_t period_ms;              /* plain: between two lines of a running job */
        int64_t last_ms;                /* live: last redraw; plain: last lines */
        int64_t *final;                 /* plain: ids of the jobs whose final line has been printed */
        size_t n_final;                 /* entries in final */
        size_t final_size;              /* room in final */
};
/* Whether a view on out is live: out is a terminal and TERM is not "dumb". */
bool view_live(FILE *out);
/* Show jobs (an array of JOB objects, borrowed until view_end()) on out: live (view_live()),
 * drawn at once; else one plain line per job now, and one per running job every period_ms.
 * 0 or -ENOMEM. Every other view_*() call accepts a view that was not started. */
int view_start(struct view *v, FILE *out, struct json_object *jobs, int64_t period_ms);
/* job (an element of the jobs) changed: state, for a change of state, pass or phase (a line of
 * its own off a terminal, a redraw at once on one), else its progress (the next redraw). */
void view_changed(struct view *v, struct json_object *job, bool state);
/* The terminal was resized or came back (SIGWINCH, SIGCONT): redraw at once. */
void view_resize(struct view *v);
/* Milliseconds until view_tick() has something to do; -1 when nothing is due. */
int view_timeout(const struct view *v);
/* Redraw, or print the lines of running jobs, when due. */
void view_tick(struct view *v);
/* Leave the terminal as it was (SIGTSTP), and come back (after SIGCONT). */
void view_suspend(struct view *v);
void view_resume(struct view *v);
/* Stop showing: live, the last frame (every job) is printed on the normal screen; plain, when
 * ended (every job has ended), the final line of each job not yet printed and the summary. */
void view_end(struct view *v, bool ended);
/* Give the terminal back before an error message (wipectl_error() calls it): leave the live view
 * on the screen, if any, printing its last frame. */
void view_release(void);

/* watch.c */

/* What to watch and how to show it (watch and wait; wipe and verify through watch_finish()). */
struct watch_settings {
        const int64_t *ids;             /* the jobs */
        size_t n;                       /* 0: every job that has not ended */
        int64_t interval_ms;            /* progress events; 0: 500 live, 1000 plain, else the daemon's */
        FILE *view;                     /* where to show the jobs (view.c), or NULL */
        bool events;                    /* print every event on stdout, one JSON object per line */
};
/* How every wait (watch, wait, wipe, verify) follows its jobs; set by the options below. */
#define WATCH_RECONNECT_DEFAULT_MS 60000        /* --reconnect-timeout */
#define WATCH_RECONNECT_MAX_MS 86400000
#define WATCH_PROGRESS_DEFAULT_MS 60000         /* --progress-interval */
#define WATCH_PROGRESS_MAX_MS 86400000
struct watch_tuning {
        int64_t reconnect_ms;           /* how long to get the daemon back, and a job it resumes going
                                         * again, after a restart; 0: give up at once */
        int64_t progress_ms;            /* plain lines (off a terminal): a running job's line at least
                                         * this often, and at each tenth of its work */
};
extern struct watch_tuning watch_tuning;
/* The getopt_long() entries of the options of every wait, their values, and their help lines.
 * cmd_getopt() takes them itself (watch_option()) for a command whose table has them. */
enum { WATCH_ARG_RECONNECT = 0x400, WATCH_ARG_PROGRESS };
#define WATCH_LONG_OPTIONS \
        { "reconnect-timeout", required_argument, NULL, WATCH_ARG_RECONNECT }, \
        { "progress-interval", required_argument, NULL, WATCH_ARG_PROGRESS }
#define WATCH_OPTIONS_HELP \
        "  --reconnect-timeout SECONDS\n" \
        "                       when wiped restarts, how long to reconnect and wait for the jobs\n" \
        "                       to resume before ending 8, interrupted (default 60; 0: at once)\n" \
        "  --progress-interval SECONDS\n" \
        "                       off a terminal, a line per running job this often and at every\n" \
        "                       10 % (default 60)\n"
/* Take option opt (WATCH_ARG_*) with its argument arg for command self: -1 when taken, else the
 * exit status of a usage error (printed). */
int watch_option(const struct cmd_entry *self, int opt, const char *arg);
/* Parse seconds as a plain decimal number ("60", "0.5") into *ms, from min_ms to max_ms.
 * 0 or -EINVAL. */
int watch_parse_seconds(const char *s, int64_t min_ms, int64_t max_ms, int64_t *ms);
/* Watch jobs on the connected client c until every one has ended: send the watch request, then
 * follow its events, showing them as s says; Ctrl-C stops the wait (the jobs keep running). Closes
 * c. Returns -1 when every job has ended; else what every wait (watch, wait, wipe, verify) returns
 * when it did not see that: after Ctrl-C, with json and no events printed (s->events), the jobs as
 * last seen as one JSON document on stdout, then one line on stderr that tells how to reach the
 * jobs still running, and WIPECTL_EXIT_DETACHED; a lost connection (reported), its exit status. In
 * every case *status owns the jobs as last seen ({"jobs":[JOB...]}), or NULL when none were. */
int watch_wait(struct client *c, const struct watch_settings *s, bool json, struct json_object **status);
/* The exit status for jobs that ended ({"jobs":[JOB...]}), printing each failed job's error on
 * stderr: 0 when all are done, 6 when one failed, else 7 when one was cancelled, else 8 when one
 * was interrupted; 1 for anything else. */
int watch_outcome(struct json_object *status);
/* holder is a reply that holds a JOB as "job" (pause, cancel): when the job is still stopping,
 * wait on a connection of its own until it has stopped (its device closed) and put the job as it
 * is then in holder. Returns 0, or an exit status after printing one line. */
int watch_until_stopped(const struct wipectl_options *opts, struct json_object *holder);
/* What wipe and verify do after the daemon accepted their jobs ids[n] with reply on the connected
 * client c: with no_wait, print the reply (without "id" and "ok") as kind and return at once;
 * else watch the jobs with the view on stdout (with --json: on stderr if it is a terminal, else
 * none), Ctrl-C detaching, then print {"jobs":[JOB...]} with --json and every job's error on
 * stderr. Closes c; reply stays the caller's. Returns the exit status (watch_outcome(), 130 after a
 * detach, or that of a lost connection or of output_print()). */
int watch_finish(struct client *c, const struct wipectl_options *opts, bool no_wait, struct json_object *reply,
                 enum output_kind kind, const int64_t *ids, size_t n);
