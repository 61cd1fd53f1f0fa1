/* wipectl report --pdf FILE: the certificate of sanitization of jobs (their signed reports, from
 * the daemon's report op) or of a report file checked here first (--check). The drawing is pdf.c's;
 * this file gets the reports and says what it wrote. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "export.h"
#include "sign.h"
#include "wipectl.h"
#if HAVE_PDF
#include "pdf.h"
#endif

#if HAVE_PDF

/* Say what was written: "FILE: 3 certificates" (text), or {"file","jobs","report_ids"} (--json).
 * Nothing when the PDF itself went to stdout. */
static int cmd_pdf_done(const struct wipectl_options *opts, const struct cmd_report_pdf *a,
                        struct json_object *const *reports, const char *const *ids, size_t n) {
        _cleanup_json_ struct json_object *o = NULL;
        struct json_object *jobs, *rids;

        if (strcmp(a->file, "-") == 0)
                return WIPECTL_EXIT_OK;
        if (!opts->json) {
                if (a->summary_only)
                        printf("%s: written: batch summary of %zu job%s\n", a->file, n, n == 1 ? "" : "s");
                else
                        printf("%s: written: %s%zu certificate%s\n", a->file, n > 1 ? "batch summary and " : "", n,
                               n == 1 ? "" : "s");
                return output_flush();
        }
        o = json_object_new_object();
        jobs = json_object_new_array();
        rids = json_object_new_array();
        if (!o || json_object_object_add(o, "file", json_object_new_string(a->file)) < 0 ||
            json_object_object_add(o, "jobs", jobs) < 0) {
                json_object_put(rids);
                wipectl_error("report: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        if (json_object_object_add(o, "report_ids", rids) < 0) {
                wipectl_error("report: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        for (size_t i = 0; i < n; i++) {
                char hash[PDF_HASH_SIZE] = "";
                bool known = (ids && ids[i]) || pdf_report_hash(reports[i], hash) == 0;

                json_object_array_add(jobs, json_object_new_int64(output_get_int(reports[i], "job", -1)));
                json_object_array_add(rids, known ? json_object_new_string(ids && ids[i] ? ids[i] : hash) : NULL);
        }
        return output_print(OUTPUT_JOBS, o, true);
}

static int cmd_pdf_write(const struct wipectl_options *opts, const struct cmd_report_pdf *a,
                         struct json_object *const *reports, const char *const *ids, size_t n) {
        struct pdf_options po = {
                .summary_only = a->summary_only,
                .generated_at = time(NULL),
                .key_path = a->key,
        };
        int r;

        r = pdf_write(a->file, reports, ids, n, &po);
        if (r < 0) {
                wipectl_error("%s: cannot write the PDF: %s", strcmp(a->file, "-") == 0 ? "stdout" : a->file,
                              r == -EIO ? "cairo could not draw it" : strerror(-r));
                return WIPECTL_EXIT_FAILURE;
        }
        return cmd_pdf_done(opts, a, reports, ids, n);
}

/* --check FILE: the report file, its signature checked (with --key, against that key), then its
 * certificate; its report ID that of the report file (of the file read, or of the file whose export line it is). */
static int cmd_pdf_check(const struct wipectl_options *opts, const struct cmd_report_pdf *a) {
        _cleanup_json_ struct json_object *rep = NULL;
        _cleanup_free_ char *text = NULL;
        const char *name = strcmp(a->check, "-") == 0 ? "stdin" : a->check;
        uint8_t want[SIGN_PUB_SIZE];
        struct report_check res = { .job = -1 };
        char err[512], hash[PDF_HASH_SIZE];
        const char *ids[1] = { hash };
        size_t len = 0;
        int fd, r;

        if (a->key) {
                r = sign_pub_load(a->key, want);
                if (r < 0) {
                        wipectl_error("%s: %s", a->key, r == -EBADMSG || r == -EFBIG ? "not an Ed25519 public key in PEM form"
                                                                                      : strerror(-r));
                        return WIPECTL_EXIT_FAILURE;
                }
        }
        fd = strcmp(a->check, "-") == 0 ? STDIN_FILENO : open(a->check, O_RDONLY | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) {
                wipectl_error("%s: cannot read: %s", name, strerror(errno));
                return WIPECTL_EXIT_FAILURE;
        }
        r = report_read_fd(fd, &text, &len);
        if (fd != STDIN_FILENO)
                close(fd);
        if (r == -EFBIG) {
                wipectl_error("%s: INVALID: larger than %d MiB: not a report", name, REPORT_FILE_MAX >> 20);
                return WIPECTL_EXIT_CHECK_FAILED;
        }
        if (r < 0) {
                wipectl_error("%s: cannot read: %s", name, strerror(-r));
                return WIPECTL_EXIT_FAILURE;
        }
        r = report_check(text, len, a->key ? want : NULL, &res, err, sizeof(err));
        if (r == -ENOKEY)
                snprintf(err, sizeof(err), "signed by key %s, not by the key in %s", res.key_id, a->key);
        report_check_done(&res);
        if (r == -ENOMEM) {
                wipectl_error("%s: out of memory", name);
                return WIPECTL_EXIT_FAILURE;
        }
        /* No certificate for a report that does not check: it would certify nothing. */
        if (r < 0) {
                wipectl_error("%s: INVALID: %s: no certificate made", name, err);
                return WIPECTL_EXIT_CHECK_FAILED;
        }
        rep = json_tokener_parse(text);
        if (!rep) {
                wipectl_error("%s: out of memory", name);
                return WIPECTL_EXIT_FAILURE;
        }
        /* The report ID is the hash of the report file as the daemon wrote it. A line of an export
         * (the one-line form report_check() also accepts) hashes otherwise; but either form is
         * exactly a rendering of the object, so the file's form rendered again is the file's bytes. */
        if (pdf_report_hash(rep, hash) < 0) {
                wipectl_error("%s: cannot hash it", name);
                return WIPECTL_EXIT_FAILURE;
        }
        return cmd_pdf_write(opts, a, &rep, ids, 1);
}

/* How long a job that has ended may go without its signed report: the daemon writes it on a tick
 * once the drive's health after the wipe is read (smartctl, smart-timeout: 30 s by default). */
#define CMD_PDF_REPORT_WAIT_S 65

/* Whether state (of a report) is one a job ends in: its signed report follows. */
static bool cmd_pdf_ended(const char *state) {
        return state && (strcmp(state, "done") == 0 || strcmp(state, "done-with-errors") == 0 ||
                         strcmp(state, "failed") == 0 || strcmp(state, "cancelled") == 0);
}

/* The signed report of job id, asked on the connected client c, in *ret. -1 when it is there, else
 * the exit status of the error reported. Only signed reports: a job that has not ended has none,
 * and a certificate of a wipe still running would certify nothing. A job that has just ended
 * ("wipectl wipe DEV && wipectl report --pdf OUT JOB") gets its signed report a moment after:
 * waited for. */
static int cmd_pdf_fetch(struct client *c, const char *socket_path, int64_t id, struct json_object **ret) {
        time_t deadline = time(NULL) + CMD_PDF_REPORT_WAIT_S;

        for (;;) {
                _cleanup_json_ struct json_object *req = protocol_request_new(0, PROTOCOL_OP_REPORT), *reply = NULL;
                struct json_object *rep = NULL;
                const char *state;
                int r;

                if (!req || json_object_object_add(req, "job", json_object_new_int64(id)) < 0) {
                        wipectl_error("report: out of memory");
                        return WIPECTL_EXIT_FAILURE;
                }
                r = client_call(c, req, &reply);
                if (r < 0)
                        return client_translate_errno(c, r);
                if (!json_object_object_get_ex(reply, "report", &rep) || !json_object_is_type(rep, json_type_object)) {
                        wipectl_error("%s: reply without \"report\"", socket_path);
                        return WIPECTL_EXIT_FAILURE;
                }
                if (json_object_object_get_ex(rep, "signature", NULL)) {
                        *ret = json_object_get(rep);
                        return -1;
                }
                state = output_get_string(rep, "state", NULL);
                if (!cmd_pdf_ended(state)) {
                        wipectl_error("job %" PRId64 ": its report is not signed yet (the job has not ended): no certificate",
                                      id);
                        return WIPECTL_EXIT_FAILURE;
                }
                /* The daemon says whether it is still to come (not when writing it failed). */
                if (json_object_object_get_ex(reply, "report_pending", &rep) && !json_object_get_boolean(rep)) {
                        wipectl_error("job %" PRId64 ": %s, but the daemon could not write its signed report (its log "
                                      "says why): no certificate", id, state);
                        return WIPECTL_EXIT_FAILURE;
                }
                if (time(NULL) >= deadline) {
                        wipectl_error("job %" PRId64 ": %s, but its signed report is not written yet after %d s (the "
                                      "daemon's log says why): no certificate", id, state, CMD_PDF_REPORT_WAIT_S);
                        return WIPECTL_EXIT_FAILURE;
                }
                (void) nanosleep(&(struct timespec) { .tv_nsec = 200 * 1000 * 1000 }, NULL);
        }
}

/* JOB...: each job's report from the daemon, on one connection, then their certificates. */
static int cmd_pdf_jobs(const struct cmd_entry *self, const struct wipectl_options *opts,
                        const struct cmd_report_pdf *a, int argc, char **argv) {
        struct json_object **reports = NULL;
        struct client c = CLIENT_INIT;
        int64_t *ids = NULL;
        size_t n = 0, got = 0;
        int r, status;

        status = cmd_operand_jobs(self, argc, argv, &ids, &n);
        if (status >= 0)
                return status;
        if (n == 0)
                return cmd_usage_error(self, "no job given");
        reports = calloc(n, sizeof(*reports));
        if (!reports) {
                wipectl_error("report: out of memory");
                status = WIPECTL_EXIT_FAILURE;
                goto out;
        }
        r = client_connect(&c, opts->socket_path);
        if (r < 0) {
                status = client_translate_errno(&c, r);
                goto out;
        }
        for (; got < n; got++) {
                status = cmd_pdf_fetch(&c, opts->socket_path, ids[got], &reports[got]);
                if (status >= 0)
                        goto out;
        }
        client_close(&c);
        status = cmd_pdf_write(opts, a, reports, NULL, n);
out:
        client_close(&c);
        for (size_t i = 0; i < got; i++)
                json_object_put(reports[i]);
        free(reports);
        free(ids);
        return status;
}

/* --all [--since ...]: the reports export_select() pages through, with their report ids. When some
 * report files were unreadable (named on stderr), the others are still certified, and the exit
 * status says so. */
static int cmd_pdf_select(const struct wipectl_options *opts, const struct cmd_report_pdf *a) {
        struct json_object **reports = NULL;
        char **ids = NULL;
        size_t n = 0;
        int status, r;

        status = export_select(opts, a->select, &reports, &ids, &n);
        if (status != WIPECTL_EXIT_OK && !reports)
                return status;
        if (n == 0) {
                wipectl_error("report --pdf --all: no report matches: nothing written");
                export_free(reports, ids, n);
                return WIPECTL_EXIT_FAILURE;
        }
        r = cmd_pdf_write(opts, a, reports, (const char *const *) ids, n);
        export_free(reports, ids, n);
        return r != WIPECTL_EXIT_OK ? r : status;
}

int cmd_report_pdf(const struct cmd_entry *self, const struct wipectl_options *opts, const struct cmd_report_pdf *a,
                   int argc, char **argv) {
        if (!*a->file)
                return cmd_usage_error(self, "empty file name");
        /* --quiet sends stdout to /dev/null: the PDF would go there. */
        if (opts->quiet && !opts->json && strcmp(a->file, "-") == 0)
                return cmd_usage_error(self, "--quiet and --pdf - exclude each other (the PDF is the output)");
        if (a->check) {
                if (optind < argc)
                        return cmd_usage_error(self, "unexpected argument '%s' (--check takes no job)", argv[optind]);
                if (!*a->check || (a->key && !*a->key))
                        return cmd_usage_error(self, "empty file name");
                return cmd_pdf_check(opts, a);
        }
        if (a->key)
                return cmd_usage_error(self, "--key needs --check");
        if (a->select)
                return cmd_pdf_select(opts, a);
        return cmd_pdf_jobs(self, opts, a, argc, argv);
}

#else

int cmd_report_pdf(const struct cmd_entry *self, const struct wipectl_options *opts, const struct cmd_report_pdf *a,
                   int argc, char **argv) {
        wipectl_error("report --pdf: this wipectl was built without PDF support (configure --disable-pdf)");
        return WIPECTL_EXIT_FAILURE;
}

#endif
