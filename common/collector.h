/* The collector that reports are delivered to (wiped(8) "DELIVERY"): the pure parts, shared by the
 * configuration's checks, the daemon's delivery thread and the unit tests. Never logs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define COLLECTOR_BACKOFF_FIRST 5.0     /* seconds before the first retry; doubled per failure */
#define COLLECTOR_HEADERS_MAX 32        /* report-header lines */

/* Whether url is a collector URL wiped accepts: "http://" or "https://" (any case), a host part
 * that is not empty, no blank or control character anywhere. With host (may be NULL), the host
 * part without any "user:password@" into host (cut at host_len); *credentials (may be NULL) says
 * whether it had one. 0 or -EINVAL. */
int collector_url_parse(const char *url, char *host, size_t host_len, bool *credentials);
bool collector_url_valid(const char *url);
/* Whether line is a header wiped may add to its requests: "Name: value", the name an HTTP token,
 * the value not empty and without control characters, and the name none of those wiped sets
 * itself (Content-Type, Content-Length, Transfer-Encoding, Host, Idempotency-Key, X-Wiped-*),
 * which could otherwise break the collector's contract. */
bool collector_header_valid(const char *line);
/* The seconds to wait after the nth failure in a row (n >= 1): COLLECTOR_BACKOFF_FIRST doubled
 * per failure, at most max, less up to a quarter by jitter r (0 <= r < 1) so that many daemons
 * that lost one collector do not come back at the same moment. */
double collector_backoff(unsigned n, double max, double r);

enum collector_outcome {
        COLLECTOR_DELIVERED,            /* 2xx, or 409 Conflict: the collector has the report */
        COLLECTOR_RETRY,                /* anything else that may pass: 408, 429, 3xx, 5xx */
        COLLECTOR_REJECTED,             /* another 4xx: a problem of ours or the collector's
                                         * setup; retried all the same, but logged as an error */
};
/* What an HTTP status code means for a report that was sent. */
enum collector_outcome collector_outcome_of(long status);
