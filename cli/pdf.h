/* The PDF certificate of sanitization (wipectl report --pdf): one A4 page per drive from its
 * signed report, after a batch summary when there are several, drawn with cairo's PDF surface,
 * pango for the text and libqrencode for the QR code of the report's hash.
 *
 * The hash on a certificate (and in its QR code, as 64 lower-case hex digits and nothing else)
 * is the report ID: the SHA-256 of the report file's bytes, STATE_DIR/reports/JOB.json. The daemon
 * writes that file as report_render() of the signed report (sign.h), so the SHA-256 of
 * report_render() of the object the report op returns is the same hash: an auditor recomputes it
 * with "sha256sum /var/lib/wiped/reports/JOB.json", or "wipectl --json report JOB | sha256sum".
 * Built only with HAVE_PDF (configure --disable-pdf leaves it out). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <json-c/json.h>

#define PDF_HASH_SIZE 65                /* 64 hex digits and '\0' */
#define PDF_NOT_RECORDED "not recorded" /* what an absent field shows */

struct pdf_options {
        bool summary_only;              /* the batch summary only, no page per drive */
        time_t generated_at;            /* printed in every page's footer */
        const char *key_path;           /* the public key file the check command names; NULL: the
                                         * host-key.pub next to the report's reports/ directory */
};

/* pdf-format.c: the pieces of text that need no drawing. */

/* UNIX seconds as ISO 8601 UTC, "2026-12-02T11:36:49Z" ("?" when it cannot be shown). Returns buf. */
const char *pdf_format_time(time_t t, char *buf, size_t n);
/* Seconds as "2 h 03 min 04 s (7384.0 s)", "4 min 05 s (245.0 s)" or "12.5 s". Returns buf. */
const char *pdf_format_duration(double s, char *buf, size_t n);
/* The public key file that the check command of the report file file names: o->key_path when set
 * (o may be NULL), else host-key.pub of the state directory whose reports/ holds the file
 * ("/srv/w/reports/3.json": "/srv/w/host-key.pub"), else /var/lib/wiped/host-key.pub. Returns buf. */
const char *pdf_format_key_path(const struct pdf_options *o, const char *file, char *buf, size_t n);

/* The report ID of a signed report object: the lower-case hex SHA-256 of report_render(report),
 * which is the bytes of its file. 0, -ENOMEM or -EIO. */
int pdf_report_hash(struct json_object *report, char out[PDF_HASH_SIZE]);

/* Write the certificates of reports[n] (signed REPORT objects, borrowed) to path ("-": standard
 * output), replacing it atomically (a temporary file in its directory, then rename). report_ids[i]
 * is report i's report ID when known (the SHA-256 of its file, 64 hex digits), NULL to compute it
 * with pdf_report_hash(); report_ids itself may be NULL. With n > 1 (or o->summary_only) the batch
 * summary comes first. 0, or -errno (-EINVAL for n == 0, -EIO when cairo failed). */
int pdf_write(const char *path, struct json_object *const *reports, const char *const *report_ids, size_t n,
              const struct pdf_options *o);
