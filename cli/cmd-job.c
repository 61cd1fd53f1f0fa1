/* wipectl status, list, report, version: one request, one reply, one rendering; and
 * report --check, which checks a signed report file here, without the daemon. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "export.h"
#include "sign.h"
#include "when.h"
#include "wipectl.h"

#define CMD_JOB_RECENT_S 3600              /* list: jobs that ended this long ago at most */
#define CMD_JOB_HOST_PUB "/var/lib/wiped/" SIGN_PUB_FILE /* this host's key (wiped's default state dir) */

/* Print o as JSON on stdout in the form of a report file (report_render()), so that a signed
 * report printed this way passes "report --check": as the daemon signed it, without the
 * "format_version" of wipectl's other documents. Returns an exit status. */
static int cmd_job_print_json(struct json_object *o) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0;

        text = report_render(o, &len);
        if (!text) {
                wipectl_error("report: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        wipectl_json_printed();
        if (fwrite(text, 1, len, stdout) != len || fflush(stdout) == EOF || ferror(stdout)) {
                wipectl_error("stdout: write error");
                return WIPECTL_EXIT_FAILURE;
        }
        return WIPECTL_EXIT_OK;
}

/* Send request, and print the reply as kind: the reply without "id" and "ok", or, when unwrap is
 * set, the object under that key. Returns an exit status. */
/* How long wipectl report waits for the signed report of a job that has just ended: the daemon's
 * smart-timeout (60 s at most) and a few ticks. */
#define CMD_JOB_REPORT_WAIT_S 65

/* Whether a report reply says the job's signed report is still to come. */
static bool cmd_job_report_pending(struct json_object *reply) {
        struct json_object *v;

        return json_object_object_get_ex(reply, "report_pending", &v) && json_object_is_type(v, json_type_boolean) &&
               json_object_get_boolean(v);
}

static int cmd_job_run(const struct wipectl_options *opts, struct json_object *request, enum output_kind kind,
                       const char *unwrap) {
        _cleanup_json_ struct json_object *reply = NULL, *result = NULL;
        struct client c = CLIENT_INIT;
        struct json_object *inner = NULL;
        int r;

        if (!request) {
                wipectl_error("request: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        r = client_connect_call(&c, opts->socket_path, request, &reply);
        /* A job that has just ended gets its signed report a moment later, once the drive health
         * after it is in (smart-timeout at most): asked again meanwhile, so that the report of a job
         * that shows an end is the signed one. */
        for (time_t deadline = time(NULL) + CMD_JOB_REPORT_WAIT_S;
             r == WIPECTL_EXIT_OK && kind == OUTPUT_REPORT && cmd_job_report_pending(reply) &&
             time(NULL) < deadline;) {
                (void) nanosleep(&(struct timespec) { .tv_nsec = 200 * 1000 * 1000 }, NULL);
                client_close(&c);
                json_object_put(reply);
                reply = NULL;
                r = client_connect_call(&c, opts->socket_path, request, &reply);
        }
        if (r != WIPECTL_EXIT_OK)
                return r;
        client_close(&c);

        if (unwrap) {
                if (!json_object_object_get_ex(reply, unwrap, &inner) || !json_object_is_type(inner, json_type_object)) {
                        wipectl_error("%s: reply without \"%s\"", opts->socket_path, unwrap);
                        return WIPECTL_EXIT_FAILURE;
                }
                result = json_object_get(inner);
        } else
                result = output_from_reply(reply);
        /* A signed report is printed byte for byte as the daemon wrote its file. */
        if (kind == OUTPUT_REPORT && opts->json && json_object_object_get_ex(result, "signature", NULL))
                return cmd_job_print_json(result);
        return output_print(kind, result, opts->json);
}

/* A request for op with "job": the single JOB argument. NULL with *status set on a usage error. */
static struct json_object *cmd_job_one(const struct cmd_entry *self, enum protocol_op op, int argc, char **argv,
                                       int *status) {
        struct json_object *req;
        int64_t id;

        *status = cmd_operand_job(self, argc, argv, &id);
        if (*status >= 0)
                return NULL;
        req = protocol_request_new(0, op);
        if (req && json_object_object_add(req, "job", json_object_new_int64(id)) < 0) {
                json_object_put(req);
                req = NULL;
        }
        *status = req ? WIPECTL_EXIT_OK : WIPECTL_EXIT_FAILURE;
        if (!req)
                wipectl_error("%s: out of memory", self->name);
        return req;
}

static int cmd_job_status_exec(const struct cmd_entry *self, const struct wipectl_options *opts, int argc,
                               char **argv) {
        _cleanup_json_ struct json_object *request = NULL;
        _cleanup_free_ int64_t *ids = NULL;
        size_t n;
        int r;

        r = cmd_options(self, argc, argv, NULL, NULL);
        if (r >= 0)
                return r;
        r = cmd_operand_jobs(self, argc, argv, &ids, &n);
        if (r >= 0)
                return r;
        request = client_request_jobs(PROTOCOL_OP_STATUS, ids, n);
        if (!request) {
                wipectl_error("status: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        return cmd_job_run(opts, request, OUTPUT_JOBS, NULL);
}

/* {"jobs":[...]} of a list reply: every job when all, else those that have not ended and those
 * that ended within CMD_JOB_RECENT_S (interrupted ones always). A new object, NULL on ENOMEM. */
static struct json_object *cmd_job_list_filter(struct json_object *reply, bool all) {
        _cleanup_json_ struct json_object *result = json_object_new_object();
        struct json_object *jobs = NULL, *kept = json_object_new_array();
        double now = (double) time(NULL);

        if (!result || !kept || json_object_object_add(result, "jobs", kept) < 0) {
                json_object_put(kept);
                return NULL;
        }
        if (!json_object_object_get_ex(reply, "jobs", &jobs) || !json_object_is_type(jobs, json_type_array))
                return TAKE_PTR(result);
        for (size_t i = 0; i < json_object_array_length(jobs); i++) {
                struct json_object *job = json_object_array_get_idx(jobs, i);
                double ended = output_get_double(job, "ended_at", -1);
                const char *state = output_get_string(job, "state", "");

                /* An interrupted job waits for someone: it stays listed. */
                if (!all && job_state_name_is_final(state) && output_state_of(state) != JOB_INTERRUPTED && ended >= 0 &&
                    now - ended > CMD_JOB_RECENT_S)
                        continue;
                if (json_object_array_add(kept, json_object_get(job)) < 0) {
                        json_object_put(job);
                        return NULL;
                }
        }
        return TAKE_PTR(result);
}

static int cmd_job_list_exec(const struct cmd_entry *self, const struct wipectl_options *opts, int argc,
                             char **argv) {
        static const struct option all_option = { "all", no_argument, NULL, 'a' };
        _cleanup_json_ struct json_object *request = NULL, *reply = NULL, *result = NULL;
        struct client c = CLIENT_INIT;
        bool all = false;
        int r;

        r = cmd_options(self, argc, argv, &all_option, &all);
        if (r >= 0)
                return r;
        if (optind < argc)
                return cmd_usage_error(self, "unexpected argument '%s'", argv[optind]);
        request = protocol_request_new(0, PROTOCOL_OP_LIST);
        if (!request) {
                wipectl_error("list: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        r = client_connect_call(&c, opts->socket_path, request, &reply);
        if (r != WIPECTL_EXIT_OK)
                return r;
        client_close(&c);
        result = cmd_job_list_filter(reply, all);
        return output_print(OUTPUT_JOBS, result, opts->json);
}

/* Read the report file path ("-": standard input) into *text. 0, -EFBIG (more than
 * REPORT_FILE_MAX bytes), or an exit status after printing why it cannot be read. */
static int cmd_job_report_read(const char *path, const char *name, char **text, size_t *len) {
        bool in = strcmp(path, "-") == 0;
        int fd = in ? STDIN_FILENO : open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
        int r;

        if (fd < 0) {
                wipectl_error("%s: cannot read: %s", name, strerror(errno));
                return WIPECTL_EXIT_FAILURE;
        }
        r = report_read_fd(fd, text, len);
        if (!in)
                close(fd);
        if (r < 0 && r != -EFBIG) {
                wipectl_error("%s: cannot read: %s", name, strerror(-r));
                return WIPECTL_EXIT_FAILURE;
        }
        return r;
}

/* A JSON string of s, or null for NULL. */
static struct json_object *cmd_job_string_or_null(const char *s) {
        return s ? json_object_new_string(s) : NULL;
}

/* The result of a check as the object report --check prints (wipectl(1) "JSON OUTPUT"): res holds
 * what a verified signature covers (r is 0 or -ENOKEY), this_host is 1, 0 or -1 (unknown). NULL on
 * ENOMEM. */
static struct json_object *cmd_job_check_result(const char *path, int r, const struct report_check *res,
                                                int this_host, const char *error) {
        _cleanup_json_ struct json_object *o = json_object_new_object();
        bool known = r == 0 || r == -ENOKEY;

        if (!o || json_object_object_add(o, "file", json_object_new_string(path)) < 0 ||
            json_object_object_add(o, "valid", json_object_new_boolean(r == 0)) < 0 ||
            json_object_object_add(o, "key_id", known ? json_object_new_string(res->key_id) : NULL) < 0 ||
            json_object_object_add(o, "job", known && res->job >= 0 ? json_object_new_int64(res->job) : NULL) < 0 ||
            json_object_object_add(o, "state", cmd_job_string_or_null(res->state)) < 0 ||
            json_object_object_add(o, "node", cmd_job_string_or_null(res->node)) < 0 ||
            json_object_object_add(o, "serial", cmd_job_string_or_null(res->serial)) < 0 ||
            json_object_object_add(o, "host", cmd_job_string_or_null(res->hostname)) < 0 ||
            json_object_object_add(o, "this_host_key",
                                   this_host >= 0 ? json_object_new_boolean(this_host) : NULL) < 0 ||
            json_object_object_add(o, "error", cmd_job_string_or_null(error)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* report --check PATH [--key KEY]: check a report file locally, without the daemon. Returns 0
 * when valid, 9 when it fails its check (the reason on stderr, "FILE: INVALID: ..."), 1 when it
 * or the key cannot be read. */
static int cmd_job_report_check(const struct wipectl_options *opts, const char *path, const char *key) {
        _cleanup_json_ struct json_object *result = NULL;
        _cleanup_free_ char *text = NULL;
        const char *name = strcmp(path, "-") == 0 ? "stdin" : path;
        uint8_t want[SIGN_PUB_SIZE], host[SIGN_PUB_SIZE];
        struct report_check res = { .job = -1 };
        int r, this_host = -1, status;
        char err[512], shown[512], reason[768];
        size_t len = 0;

        if (key) {
                r = sign_pub_load(key, want);
                if (r == -EBADMSG || r == -EFBIG)
                        wipectl_error("%s: not an Ed25519 public key in PEM form", key);
                else if (r < 0)
                        wipectl_error("%s: cannot read: %s", key, strerror(-r));
                if (r < 0)
                        return WIPECTL_EXIT_FAILURE;
        }
        r = cmd_job_report_read(path, name, &text, &len);
        if (r > 0)
                return r;
        if (r == -EFBIG)
                snprintf(err, sizeof(err), "larger than %d MiB: not a report", REPORT_FILE_MAX >> 20);
        else
                r = report_check(text, len, key ? want : NULL, &res, err, sizeof(err));
        if (r == -ENOKEY)
                snprintf(err, sizeof(err), "signed by key %s, not by the key in %s", res.key_id, key);
        /* Without --key, whether this host signed it is said, never required: the report may come
         * from elsewhere. */
        if (!key && r == 0 && sign_pub_load(CMD_JOB_HOST_PUB, host) == 0)
                this_host = memcmp(host, res.public_key, SIGN_PUB_SIZE) == 0;

        switch (r) {
        case 0:
                status = WIPECTL_EXIT_OK;
                break;
        case -EFBIG:
        case -EBADMSG:
        case -EKEYREJECTED:
        case -ENOKEY:
                status = WIPECTL_EXIT_CHECK_FAILED;
                break;
        default:
                report_check_done(&res);
                wipectl_error("%s: cannot check: %s", name, strerror(-r));
                return WIPECTL_EXIT_FAILURE;
        }
        result = cmd_job_check_result(path, r, &res, this_host, r == 0 ? NULL : err);
        report_check_done(&res);
        if (!result) {
                wipectl_error("report: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        if (opts->json && output_print(OUTPUT_JOBS, result, true) != WIPECTL_EXIT_OK)
                return WIPECTL_EXIT_FAILURE;
        if (!opts->json) {
                output_report_check_text(result);
                if (output_flush() != WIPECTL_EXIT_OK)
                        return WIPECTL_EXIT_FAILURE;
        }
        if (r < 0) {
                output_escape(err, false, reason, sizeof(reason));
                wipectl_error("%s: INVALID: %s", output_escape(name, false, shown, sizeof(shown)), reason);
        }
        return status;
}

/* What report --all was given (export.c does the rest). */
struct cmd_job_export {
        bool all;
        const char *since, *until, *batch, *format, *page_size;
};

/* A WHEN argument of option name in *ret. -1 when fine, else the exit status of the usage error. */
static int cmd_job_when(const struct cmd_entry *self, const char *name, const char *s, int64_t *ret) {
        int r = when_parse(s, time(NULL), ret);

        if (r < 0)
                return cmd_usage_error(self, "%s '%s': %s (give @UNIX-SECONDS, 2026-12-01, 2026-12-01T10:00[Z|+01:00] "
                                       "or 7d, 24h, 30m ago)", name, s,
                                       r == -ERANGE ? "out of range" : "not a time");
        return -1;
}

/* report --all [--since WHEN] [--until WHEN] [--batch ID] [--format jsonl|csv] [JOB...]; with pdf
 * (--pdf FILE), the certificates of the reports selected instead. */
static int cmd_job_report_all(const struct cmd_entry *self, const struct wipectl_options *opts,
                              const struct cmd_job_export *e, struct cmd_report_pdf *pdf, int argc, char **argv) {
        struct export_selection sel = { .since = -1, .until = -1, .batch = e->batch };
        enum export_format format = EXPORT_JSONL;
        _cleanup_free_ int64_t *jobs = NULL;
        int r;

        if (pdf && e->format)
                return cmd_usage_error(self, "--format and --pdf exclude each other");
        if (e->format && strcmp(e->format, "csv") == 0)
                format = EXPORT_CSV;
        else if (e->format && strcmp(e->format, "jsonl") != 0)
                return cmd_usage_error(self, "--format '%s': not jsonl or csv", e->format);
        /* --json asks for JSON: the JSON lines, each report as the daemon signed it. */
        if (opts->json && format == EXPORT_CSV)
                return cmd_usage_error(self, "--json and --format csv exclude each other");
        if (e->since && (r = cmd_job_when(self, "--since", e->since, &sel.since)) >= 0)
                return r;
        if (e->until && (r = cmd_job_when(self, "--until", e->until, &sel.until)) >= 0)
                return r;
        if (e->batch && !*e->batch)
                return cmd_usage_error(self, "--batch: empty");
        if (e->page_size) {
                char *end;

                errno = 0;
                sel.limit = strtoull(e->page_size, &end, 10);
                if (errno || e->page_size[0] < '0' || e->page_size[0] > '9' || *end || sel.limit < 1 ||
                    sel.limit > PROTOCOL_REPORTS_MAX)
                        return cmd_usage_error(self, "--page-size '%s': not from 1 to %d", e->page_size,
                                               PROTOCOL_REPORTS_MAX);
        }
        r = cmd_operand_jobs(self, argc, argv, &jobs, &sel.n_jobs);
        if (r >= 0)
                return r;
        sel.jobs = jobs;
        if (pdf) {
                pdf->select = &sel;
                optind = argc;  /* the JOBs are in the selection */
                return cmd_report_pdf(self, opts, pdf, argc, argv);
        }
        return export_run(opts, &sel, format);
}

static int cmd_job_report_exec(const struct cmd_entry *self, const struct wipectl_options *opts, int argc,
                               char **argv) {
        /* Values above any char: "--keys=x" or "--check" without a file are reported by name. */
        enum { OPT_KEYS = 0x100, OPT_CHECK, OPT_KEY, OPT_PDF, OPT_SUMMARY_ONLY };
        /* report --all's. */
        enum { OPT_ALL = 0x180, OPT_SINCE, OPT_UNTIL, OPT_BATCH, OPT_FORMAT, OPT_PAGE_SIZE };
        static const struct option options[] = {
                { "pdf", required_argument, NULL, OPT_PDF },
                { "summary-only", no_argument, NULL, OPT_SUMMARY_ONLY },
                { "keys", no_argument, NULL, OPT_KEYS },
                { "check", required_argument, NULL, OPT_CHECK },
                { "key", required_argument, NULL, OPT_KEY },
                { "all", no_argument, NULL, OPT_ALL },
                { "since", required_argument, NULL, OPT_SINCE },
                { "until", required_argument, NULL, OPT_UNTIL },
                { "batch", required_argument, NULL, OPT_BATCH },
                { "format", required_argument, NULL, OPT_FORMAT },
                { "page-size", required_argument, NULL, OPT_PAGE_SIZE },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_json_ struct json_object *request = NULL;
        const char *check = NULL, *key = NULL;
        struct cmd_report_pdf pdf = {};
        bool keys = false;
        struct cmd_job_export export = {};
        int opt, r;

        while ((opt = cmd_getopt(argc, argv, ":h", options)) >= 0)
                switch (opt) {
                case OPT_ALL:
                        export.all = true;
                        break;
                case OPT_SINCE:
                        export.since = optarg;
                        break;
                case OPT_UNTIL:
                        export.until = optarg;
                        break;
                case OPT_BATCH:
                        export.batch = optarg;
                        break;
                case OPT_FORMAT:
                        export.format = optarg;
                        break;
                case OPT_PAGE_SIZE:
                        export.page_size = optarg;
                        break;
                case OPT_KEYS:
                        keys = true;
                        break;
                case OPT_CHECK:
                        check = optarg;
                        break;
                case OPT_KEY:
                        key = optarg;
                        break;
                case OPT_PDF:
                        pdf.file = optarg;
                        break;
                case OPT_SUMMARY_ONLY:
                        pdf.summary_only = true;
                        break;
                default:
                        return cmd_option_other(self, argv, opt);
                }
        if (pdf.summary_only && !pdf.file)
                return cmd_usage_error(self, "--summary-only needs --pdf");
        if (export.all) {
                if (keys || check || key)
                        return cmd_usage_error(self, "--all excludes --keys, --check and --key");
                return cmd_job_report_all(self, opts, &export, pdf.file ? &pdf : NULL, argc, argv);
        }
        if (export.since || export.until || export.batch || export.format || export.page_size)
                return cmd_usage_error(self, "--since, --until, --batch, --format and --page-size need --all");
        if (pdf.file) {
                if (keys)
                        return cmd_usage_error(self, "--keys and --pdf exclude each other (a certificate holds no keys)");
                pdf.check = check;
                pdf.key = key;
                return cmd_report_pdf(self, opts, &pdf, argc, argv);
        }
        if (check) {
                if (keys)
                        return cmd_usage_error(self, "--keys and --check exclude each other");
                if (optind < argc)
                        return cmd_usage_error(self, "unexpected argument '%s' (--check takes no job)", argv[optind]);
                if (!*check || (key && !*key))
                        return cmd_usage_error(self, "empty file name");
                return cmd_job_report_check(opts, check, key);
        }
        if (key)
                return cmd_usage_error(self, "--key needs --check");
        request = cmd_job_one(self, PROTOCOL_OP_REPORT, argc, argv, &r);
        if (!request)
                return r;
        if (json_object_object_add(request, "keys", json_object_new_boolean(keys)) < 0) {
                wipectl_error("report: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        return cmd_job_run(opts, request, OUTPUT_REPORT, "report");
}

/* The client's version always; the daemon's when it answers. */
static int cmd_job_version_exec(const struct cmd_entry *self, const struct wipectl_options *opts, int argc,
                                char **argv) {
        _cleanup_json_ struct json_object *reply = NULL, *result = NULL;
        struct client c = CLIENT_INIT;
        int r, status = WIPECTL_EXIT_OK;

        r = cmd_options(self, argc, argv, NULL, NULL);
        if (r >= 0)
                return r;
        if (optind < argc)
                return cmd_usage_error(self, "unexpected argument '%s'", argv[optind]);

        result = json_object_new_object();
        if (!result || json_object_object_add(result, "client", json_object_new_string(PACKAGE_VERSION)) < 0) {
                wipectl_error("version: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        r = client_connect(&c, opts->socket_path);
        if (r >= 0)
                r = client_call_simple(&c, PROTOCOL_OP_VERSION, &reply);
        if (r < 0)
                status = client_translate_errno(&c, r);
        client_close(&c);
        if (reply) {
                struct json_object *daemon = output_from_reply(reply);
                int64_t protocol = output_get_int(reply, "protocol", -1);

                if (protocol != PROTOCOL_VERSION)
                        wipectl_error("%s: wiped speaks protocol %" PRId64 ", wipectl speaks %d", opts->socket_path,
                                      protocol, PROTOCOL_VERSION);

                if (!daemon || json_object_object_add(result, "daemon", daemon) < 0) {
                        json_object_put(daemon);
                        wipectl_error("version: out of memory");
                        return WIPECTL_EXIT_FAILURE;
                }
        }
        if (output_print(OUTPUT_VERSION, result, opts->json) != WIPECTL_EXIT_OK)
                return WIPECTL_EXIT_FAILURE;
        return status;
}

const struct cmd_entry cmd_status_entry = {
        .name = "status",
        .args = "[JOB...]",
        .summary = "Show the given jobs, or all jobs",
        .exec = cmd_job_status_exec,
};

const struct cmd_entry cmd_list_entry = {
        .name = "list",
        .args = "[--all]",
        .summary = "Show the jobs running and those that ended in the last hour, oldest first",
        .help = "  --all                every job the daemon remembers\n",
        .exec = cmd_job_list_exec,
};

const struct cmd_entry cmd_report_entry = {
        .name = "report",
        .args = "[--keys] JOB | --check FILE [--key PEMFILE] | --all [--since WHEN] [--until WHEN] [--batch ID] "
                "[--format jsonl|csv | --pdf FILE [--summary-only]] [JOB...] | --pdf FILE [--summary-only] JOB... | "
                "--pdf FILE --check FILE [--key PEMFILE]",
        .summary = "Show the wipe report of a job, check the signature of a report file, export reports or "
                   "make certificates",
        .help = "  --keys               include each pass's key and the openssl command that checks\n"
                "                       the device (needs root)\n"
                "  --check FILE         check a report file (\"-\": standard input) instead: its\n"
                "                       signature and that not a byte changed; no daemon needed\n"
                "  --key PEMFILE        with --check: require the key of this public key file\n"
                "                       (a copy of " CMD_JOB_HOST_PUB ")\n"
                "  --all                export the signed reports the daemon keeps (forgotten jobs'\n"
                "                       too; with JOBs, theirs), oldest first, one a line\n"
                "  --since WHEN         with --all: those that ended at or after WHEN (@UNIX-SECONDS,\n"
                "                       2026-12-01, 2026-12-01T10:00[Z|+01:00] local unless zoned,\n"
                "                       or 7d, 24h, 30m ago)\n"
                "  --until WHEN         with --all: those that ended before WHEN\n"
                "  --batch ID           with --all: those of one submission\n"
                "  --format FORMAT      with --all: jsonl (JSON lines, the default; each line passes\n"
                "                       --check) or csv (a header, then a row a report: wipectl(1)\n"
                "                       EXPORT)\n"
                "  --page-size N        with --all: reports per request (1-1000, default 1000)\n"
                "  --pdf FILE           write the certificate of sanitization of each JOB (\"-\":\n"
                "                       standard output), after a batch summary when there are\n"
                "                       several; with --check, of that report file once checked\n"
                "  --summary-only       with --pdf: the batch summary only\n"
                "                       (--pdf with --all: of the reports --all selects)\n",
        .exec = cmd_job_report_exec,
};

const struct cmd_entry cmd_version_entry = {
        .name = "version",
        .args = "",
        .summary = "Show the versions of wipectl and wiped",
        .exec = cmd_job_version_exec,
};
