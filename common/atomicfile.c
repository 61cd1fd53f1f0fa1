/* Files replaced whole or not at all (atomicfile.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/stat.h>

#include "atomicfile.h"

int atomic_write_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode, bool noreplace) {
        const char *p = data;
        char tmp[256];
        size_t off = 0;
        int fd, r = 0;

        if (snprintf(tmp, sizeof(tmp), ".%s.tmp", name) >= (int) sizeof(tmp))
                return -ENAMETOOLONG;
        /* A leftover of a crash goes: the new file is ours alone, never a link. */
        (void) unlinkat(dirfd, tmp, 0);
        fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        while (off < len && r == 0) {
                ssize_t n = write(fd, p + off, len - off);

                if (n < 0 && errno != EINTR)
                        r = -errno;
                else if (n == 0)
                        r = -EIO;
                else if (n > 0)
                        off += (size_t) n;
        }
        /* The umask must not change the mode asked for (a public key is 0644). */
        if (r == 0 && fchmod(fd, mode) < 0)
                r = -errno;
        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && noreplace && renameat2(dirfd, tmp, dirfd, name, RENAME_NOREPLACE) < 0) {
                r = -errno;
                /* File systems without RENAME_NOREPLACE: link(2) never replaces either. */
                if ((r == -EINVAL || r == -ENOSYS) && linkat(dirfd, tmp, dirfd, name, 0) == 0) {
                        (void) unlinkat(dirfd, tmp, 0);
                        r = 0;
                } else if (r == -EINVAL || r == -ENOSYS)
                        r = -errno;
        } else if (r == 0 && !noreplace && renameat(dirfd, tmp, dirfd, name) < 0)
                r = -errno;
        if (r == 0 && fsync(dirfd) < 0)
                r = -errno;
        if (r < 0)
                (void) unlinkat(dirfd, tmp, 0);
        return r;
}
