/* The fixed set of __attribute__((cleanup)) helpers. Variables are always initialised; ownership
 * is handed on with TAKE_PTR / TAKE_FD. Never mixed with goto cleanup in one function. */
#pragma once

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <json-c/json.h>

static inline void freep(void *p) { free(*(void **) p); }
static inline void closep(int *fd) { if (*fd >= 0) { int e = errno; close(*fd); errno = e; } }
static inline void json_object_putp(struct json_object **o) { if (*o) json_object_put(*o); }

#define _cleanup_free_ __attribute__((cleanup(freep)))
#define _cleanup_close_ __attribute__((cleanup(closep)))
#define _cleanup_json_ __attribute__((cleanup(json_object_putp)))

#define TAKE_PTR(p) ({ __typeof__(p) _p = (p); (p) = NULL; _p; })
#define TAKE_FD(fd) ({ int _fd = (fd); (fd) = -1; _fd; })
