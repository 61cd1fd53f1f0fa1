/* Points in time as people write them on a command line (wipectl(1) "report --all --since WHEN"):
 * unix seconds, an ISO 8601 date or date-time, or a span ago. Pure: no allocation, no logging; the
 * only outside input is the time zone (TZ) for times without a zone. */
#pragma once

#include <stdint.h>
#include <time.h>

/* Parse s into unix seconds in *ret. Accepted forms:
 *   "@1764672000"                  unix seconds
 *   "2026-12-01"                   midnight at the start of that day, local time
 *   "2026-12-01T10:00", "2026-12-01 10:00:30"
 *                                  local time (mktime(), daylight saving as it applies then)
 *   the same followed by "Z", "+01:00", "-0500" or "+01"
 *                                  in UTC, or at that offset from it
 *   "7d", "24h", "30m", "90s", "2w"
 *                                  that long before now
 *   "now"                          now
 * Returns 0, -EINVAL when s is none of these (or names no real date: 2026-02-30, 24:00) or
 * -ERANGE when the result is before 1970 or does not fit. */
int when_parse(const char *s, time_t now, int64_t *ret);
