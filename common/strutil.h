/* Small text conversions shared by the daemon's records, reports and device facts. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* n bytes as 2n lower-case hex digits and a NUL into out (2n + 1 bytes). */
void hex_encode(char *out, const uint8_t *in, size_t n);
/* Lower-case hex digits (an even number, at most 2 * max) into bytes: 0 with *n, or -EINVAL. */
int hex_decode(const char *s, uint8_t *out, size_t max, size_t *n);
/* "MAJOR:MINOR" (decimal, nothing around it) into a device number: 0, or -EINVAL. */
int parse_devno(const char *s, dev_t *ret);
/* s without the blanks (space, tab, CR, FF, VT) at either end, in place: the configuration
 * files' "key = value" lines. */
char *strip_blanks(char *s);
/* Free a NULL-terminated list of strings and the strings (NULL: nothing). */
void strv_free(char **v);
/* Append a copy of s to the NULL-terminated list *v of *n entries. 0 or -ENOMEM. */
int strv_append(char ***v, size_t *n, const char *s);
