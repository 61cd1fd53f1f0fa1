/* Files replaced whole or not at all: what the daemon keeps (job records, reports, the host key)
 * is never seen torn, and never written through a link someone planted. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Write len bytes of data to dirfd/name atomically with the given mode: a temporary file
 * ".NAME.tmp" (O_EXCL|O_NOFOLLOW, mode 0600 until it is complete, then mode regardless of the
 * umask), fsync, rename, fsync of the directory. With noreplace an existing dirfd/name is never
 * replaced (-EEXIST). 0 or -errno; nothing is left behind on failure. */
int atomic_write_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode, bool noreplace);
