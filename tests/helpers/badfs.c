/* badfs BACKING MOUNTPOINT [--bad FIRST:COUNT]... [--sector SIZE] [--verbose]: a FUSE file system
 * with one file, "disk", whose bytes are those of the regular file BACKING, except that a read or
 * a write touching one of the bad sectors fails whole with EIO, as a disk's would: nothing of a
 * failed write reaches BACKING. FIRST and COUNT count sectors of SIZE bytes (default 512).
 *
 * The integration tests attach a loop device to MOUNTPOINT/disk to get a block device with real,
 * reproducible bad sectors (tests/integration/bad-sectors.sh). "disk" is opened with direct_io, so
 * every I/O of the loop device reaches this process (no page cache in between). badfs runs in the
 * foreground and single-threaded; SIGTERM or SIGINT unmounts and ends it (exit 0). With --verbose
 * each refused I/O is logged to stderr. Exit status: 0, 1 when FUSE failed, 2 on a usage error. */
#define FUSE_USE_VERSION 31

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BADFS_FILE "disk"               /* the one file, at the root */
#define BADFS_MAX_RANGES 256            /* --bad options accepted */

struct badfs_range {
        uint64_t first;                 /* first bad sector */
        uint64_t count;                 /* bad sectors from there, > 0 */
};

/* The file system's state: set up in main() before fuse_main(), read-only afterwards. */
static struct {
        int fd;                         /* BACKING, read-write */
        uint64_t sector;                /* bytes per sector of --bad */
        struct badfs_range bad[BADFS_MAX_RANGES];
        size_t n_bad;
        bool verbose;                   /* log each refused I/O */
} badfs = { .fd = -1, .sector = 512 };

/* Whether the byte range [offset, offset + length) touches a bad sector. */
static bool badfs_touches_bad(uint64_t offset, uint64_t length) {
        if (length == 0)
                return false;
        for (size_t i = 0; i < badfs.n_bad; i++) {
                uint64_t start = badfs.bad[i].first * badfs.sector;
                uint64_t end = (badfs.bad[i].first + badfs.bad[i].count) * badfs.sector;

                if (start < offset + length && end > offset)
                        return true;
        }
        return false;
}

/* -EIO (logged with --verbose) when the I/O touches a bad sector, else 0. */
static int badfs_check(const char *what, off_t offset, size_t length) {
        if (!badfs_touches_bad((uint64_t) offset, length))
                return 0;
        if (badfs.verbose)
                fprintf(stderr, "badfs: EIO: %s of %zu bytes at offset %jd\n", what, length, (intmax_t) offset);
        return -EIO;
}

static void *badfs_init(struct fuse_conn_info *conn, struct fuse_config *cfg) {
        /* No page cache and no attribute caching to speak of: every I/O of the loop device comes
         * here, and the size is always the backing file's. */
        cfg->direct_io = 1;
        cfg->kernel_cache = 0;
        cfg->attr_timeout = 0;
        cfg->entry_timeout = 0;
        cfg->negative_timeout = 0;
        return NULL;
}

static int badfs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
        struct stat backing;

        memset(st, 0, sizeof(*st));
        if (strcmp(path, "/") == 0) {
                st->st_mode = S_IFDIR | 0755;
                st->st_nlink = 2;
                return 0;
        }
        if (strcmp(path, "/" BADFS_FILE) != 0)
                return -ENOENT;
        if (fstat(badfs.fd, &backing) < 0)
                return -errno;
        st->st_mode = S_IFREG | 0600;
        st->st_nlink = 1;
        st->st_size = backing.st_size;
        st->st_blocks = backing.st_blocks;
        st->st_mtim = backing.st_mtim;
        st->st_ctim = backing.st_ctim;
        st->st_atim = backing.st_atim;
        return 0;
}

static int badfs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t offset,
                         struct fuse_file_info *fi, enum fuse_readdir_flags flags) {
        if (strcmp(path, "/") != 0)
                return -ENOTDIR;
        fill(buf, ".", NULL, 0, 0);
        fill(buf, "..", NULL, 0, 0);
        fill(buf, BADFS_FILE, NULL, 0, 0);
        return 0;
}

static int badfs_open(const char *path, struct fuse_file_info *fi) {
        if (strcmp(path, "/" BADFS_FILE) != 0)
                return -ENOENT;
        if (fi->flags & O_TRUNC)
                return -EPERM;
        fi->direct_io = 1;
        fi->keep_cache = 0;
        return 0;
}

/* Reads and writes go whole or fail whole: a short count would read as end of file. */
static int badfs_read(const char *path, char *buf, size_t size, off_t offset, struct fuse_file_info *fi) {
        size_t done = 0;
        int r;

        r = badfs_check("read", offset, size);
        if (r < 0)
                return r;
        while (done < size) {
                ssize_t n = pread(badfs.fd, buf + done, size - done, offset + (off_t) done);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;                  /* end of the backing file */
                done += (size_t) n;
        }
        return (int) done;
}

static int badfs_write(const char *path, const char *buf, size_t size, off_t offset, struct fuse_file_info *fi) {
        size_t done = 0;
        int r;

        r = badfs_check("write", offset, size);
        if (r < 0)
                return r;
        while (done < size) {
                ssize_t n = pwrite(badfs.fd, buf + done, size - done, offset + (off_t) done);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                done += (size_t) n;
        }
        return (int) done;
}

static int badfs_fsync(const char *path, int datasync, struct fuse_file_info *fi) {
        return fdatasync(badfs.fd) < 0 ? -errno : 0;
}

static int badfs_truncate(const char *path, off_t size, struct fuse_file_info *fi) {
        return -EPERM;                          /* the disk has a fixed size */
}

static const struct fuse_operations badfs_ops = {
        .init = badfs_init,
        .getattr = badfs_getattr,
        .readdir = badfs_readdir,
        .open = badfs_open,
        .read = badfs_read,
        .write = badfs_write,
        .fsync = badfs_fsync,
        .truncate = badfs_truncate,
};

static void badfs_usage(FILE *f) {
        fprintf(f, "usage: badfs BACKING MOUNTPOINT [--bad FIRST:COUNT]... [--sector SIZE] [--verbose]\n");
}

/* Parse an unsigned decimal number that spans all of S into *v. 0 or -EINVAL. */
static int badfs_parse_u64(const char *s, uint64_t *v) {
        char *end = NULL;

        if (*s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        *v = strtoull(s, &end, 10);
        return errno || *end ? -EINVAL : 0;
}

/* Parse "FIRST:COUNT" into the next bad range. 0 or -EINVAL. */
static int badfs_parse_range(const char *arg) {
        const char *colon = strchr(arg, ':');
        struct badfs_range range;
        char first[32];

        if (!colon || (size_t) (colon - arg) >= sizeof(first) || badfs.n_bad == BADFS_MAX_RANGES)
                return -EINVAL;
        memcpy(first, arg, (size_t) (colon - arg));
        first[colon - arg] = '\0';
        if (badfs_parse_u64(first, &range.first) < 0 || badfs_parse_u64(colon + 1, &range.count) < 0 ||
            range.count == 0 || range.count > UINT64_MAX / 65536 ||
            range.first > UINT64_MAX / 65536 - range.count)
                return -EINVAL;
        badfs.bad[badfs.n_bad++] = range;
        return 0;
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "bad", required_argument, NULL, 'b' },
                { "sector", required_argument, NULL, 's' },
                { "verbose", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        char *fuse_argv[] = { argv[0], "-f", "-s", "-o", "fsname=badfs,subtype=badfs", NULL, NULL };
        const char *backing, *mountpoint;
        int c, r;

        while ((c = getopt_long(argc, argv, "b:s:vh", options, NULL)) != -1) {
                switch (c) {
                case 'b':
                        if (badfs_parse_range(optarg) < 0) {
                                fprintf(stderr, "badfs: --bad %s: expected FIRST:COUNT (sectors, COUNT > 0)\n", optarg);
                                return 2;
                        }
                        break;
                case 's':
                        if (badfs_parse_u64(optarg, &badfs.sector) < 0 || badfs.sector < 1 || badfs.sector > 65536) {
                                fprintf(stderr, "badfs: --sector %s: expected 1..65536 bytes\n", optarg);
                                return 2;
                        }
                        break;
                case 'v':
                        badfs.verbose = true;
                        break;
                case 'h':
                        badfs_usage(stdout);
                        return 0;
                default:
                        badfs_usage(stderr);
                        return 2;
                }
        }
        if (argc - optind != 2) {
                badfs_usage(stderr);
                return 2;
        }
        backing = argv[optind];
        mountpoint = argv[optind + 1];

        badfs.fd = open(backing, O_RDWR | O_CLOEXEC);
        if (badfs.fd < 0) {
                fprintf(stderr, "badfs: %s: %s\n", backing, strerror(errno));
                return 1;
        }
        if (badfs.verbose)
                for (size_t i = 0; i < badfs.n_bad; i++)
                        fprintf(stderr, "badfs: %s: sectors %" PRIu64 "..%" PRIu64 " of %" PRIu64 " bytes are bad\n",
                                backing, badfs.bad[i].first, badfs.bad[i].first + badfs.bad[i].count - 1,
                                badfs.sector);

        /* fuse_main() mounts, serves until SIGTERM, SIGINT or SIGHUP, then unmounts. */
        fuse_argv[5] = (char *) mountpoint;
        r = fuse_main(6, fuse_argv, &badfs_ops, NULL);
        close(badfs.fd);
        return r == 0 ? 0 : 1;
}
