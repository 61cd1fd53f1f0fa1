/* Strict UTF-8 (RFC 3629): what every string the daemon reads from a client or sends to one must
 * be, so that every line on the socket is valid JSON text. Both sides link this file; it never
 * logs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Whether s[0..len) is well-formed UTF-8: no overlong forms, no surrogates (U+D800..U+DFFF),
 * nothing above U+10FFFF, no stray continuation or cut sequence. NUL bytes are allowed here. */
bool utf8_valid(const char *s, size_t len);
/* The length of the valid UTF-8 sequence at s[0..len), or 0 when s does not start one. */
size_t utf8_sequence(const char *s, size_t len);
/* A malloc'd copy of the NUL-terminated s with every byte that is not part of a valid sequence
 * replaced by U+FFFD; NULL for NULL or on ENOMEM. */
char *utf8_sanitize_dup(const char *s);
/* s itself when it is valid UTF-8 (the common case), else a repaired copy as above with s freed;
 * NULL for NULL or on ENOMEM (s is freed then too). */
char *utf8_sanitize(char *s);
/* Whether s[0..len) is text a person typed for a record (an asset tag, a name): well-formed UTF-8
 * without control characters (C0, DEL, C1: a line break or an escape sequence would forge lines of
 * a log or of the printed report), nor U+2028, U+2029 (line breaks too) or the bidi embeddings,
 * overrides and isolates U+202A..U+202E, U+2066..U+2069 (which show "TAG-1234" as "TAG-4321"). */
bool utf8_text_valid(const char *s, size_t len);
