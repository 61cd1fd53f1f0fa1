/* Formatting of sizes, rates and durations for people. Pure functions, no allocation. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* "1.00 GiB", "512 B". Returns buf. */
char *units_size(char *buf, size_t n, uint64_t bytes);
/* Decimal rate, "1234.5 MB/s". Returns buf. */
char *units_rate(char *buf, size_t n, double bytes_per_s);
/* "2h13m", "4m05s", "45s", "-" for negative (unknown). Returns buf. */
char *units_duration(char *buf, size_t n, int64_t seconds);
/* one when n is 1, else many: "1 thread", "2 threads". */
const char *units_plural(int64_t n, const char *one, const char *many);
/* Parse "64M", "1G", "4096", "1MiB" into bytes (binary multiples). 0 or -EINVAL/-ERANGE. */
int units_parse_size(const char *s, uint64_t *ret);
/* Parse a rate in bytes per second: "200M", "200MB/s", "1.5G" (decimal: k, M, G, T = 10^3..10^12),
 * "64MiB" (binary), "0" (no limit). 0 or -EINVAL/-ERANGE. */
int units_parse_rate(const char *s, uint64_t *ret);
