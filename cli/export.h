/* wipectl report --all: the signed reports the daemon keeps, selected, paged through the
 * "reports" request (wiped(8) PROTOCOL "reports"), and written as JSON lines or CSV for
 * asset-management systems (wipectl(1) "EXPORT"). */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>

struct wipectl_options;

/* Which reports: every field is a filter, all must match. */
struct export_selection {
        int64_t since;                  /* ended at or after (unix seconds); -1: any */
        int64_t until;                  /* ended before; -1: any */
        const char *batch;              /* the submission's "batch"; NULL: any */
        const int64_t *jobs;            /* these jobs only (n_jobs of them); NULL: any */
        size_t n_jobs;
        uint64_t limit;                 /* reports per request; 0: the daemon's page (PROTOCOL_REPORTS_MAX) */
};

enum export_format {
        EXPORT_JSONL,                   /* one signed report a line, as "report --check" accepts it */
        EXPORT_CSV,                     /* a header and one row a report, the columns of EXPORT_CSV_COLUMNS */
};

/* Ask the daemon (on opts->socket_path) for the reports of sel, page by page until one is not
 * truncated, each next page from the last report's end and job; a report id seen before is left
 * out. Returns WIPECTL_EXIT_OK with *reports (signed reports, each a reference the caller puts) and
 * *ids (their report ids, malloc'd strings) of *n entries, oldest first; free them with
 * export_free(). When the daemon named report files it could not read, they are reported on stderr
 * one a line, the arrays are still filled with the others, and WIPECTL_EXIT_FAILURE is returned:
 * the caller writes what it got and exits with that. Any other failure: its exit status (the error
 * printed), *reports and *ids NULL, *n 0. */
int export_select(const struct wipectl_options *opts, const struct export_selection *sel,
                  struct json_object ***reports, char ***ids, size_t *n);
void export_free(struct json_object **reports, char **ids, size_t n);

/* Write reports[n] (ids[n] their report ids) to f in format. 0 or -EIO (a write failed). */
int export_write(FILE *f, enum export_format format, struct json_object *const *reports, char *const *ids, size_t n);
/* report --all: export_select() and export_write() to stdout. Returns an exit status. */
int export_run(const struct wipectl_options *opts, const struct export_selection *sel, enum export_format format);
/* The CSV header: the columns in order, comma-separated, without a newline. */
#define EXPORT_CSV_COLUMNS "report_id,job,batch,host,machine_id,dmi_serial,device,model,serial,wwn,media_type," \
        "manufacturer,size_bytes,asset_tag,customer,destination,method,category,technique,state,overall_status," \
        "exceptions,verification_method,verification_result,started_at,ended_at,duration_s,operator_name," \
        "operator_organization,verifier_name,smart_before_passed,smart_after_passed,power_on_hours," \
        "signature_key_id,tool"
