/* Opening a device to wipe: resolve it, refuse what must never be written, read its size and
 * topology. Full probing and identity (signatures, serials, holders) come with the safety issue;
 * this is the floor every job stands on. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/fs.h>
#include <blkid/blkid.h>

#include "cleanup.h"
#include "daemon.h"

static int read_sysfs_u64(dev_t rdev, const char *attr, uint64_t *ret) {
        char path[PATH_MAX], buf[64];
        FILE *f;

        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/%s", major(rdev), minor(rdev), attr);
        f = fopen(path, "re");
        if (!f)
                return -errno;
        if (!fgets(buf, sizeof(buf), f)) {
                fclose(f);
                return -EIO;
        }
        fclose(f);
        *ret = strtoull(buf, NULL, 10);
        return 0;
}

/* Whether dev is the device behind the mount point, or the whole disk of its partition. */
static bool device_holds_mount(dev_t dev, const char *mount_point) {
        _cleanup_free_ char *parent = NULL, *whole = NULL;
        char path[PATH_MAX];
        struct stat st;

        if (stat(mount_point, &st) < 0 || major(st.st_dev) == 0)
                return false;
        if (st.st_dev == dev)
                return true;
        /* /sys/dev/block/M:m of a partition resolves to .../block/sda/sda1; its parent is the disk. */
        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/..", major(st.st_dev), minor(st.st_dev));
        parent = realpath(path, NULL);
        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major(dev), minor(dev));
        whole = realpath(path, NULL);
        return parent && whole && strcmp(parent, whole) == 0;
}

int device_open(const char *path, struct device_info *info, char *err, size_t err_len) {
        _cleanup_free_ char *node = NULL;
        _cleanup_close_ int fd = -1;
        struct stat st;
        uint64_t size = 0, rot = 0;
        int ro = 0, lss = 0;
        unsigned pss = 0;
        blkid_probe pr;

        *info = (struct device_info) {};

        node = realpath(path, NULL);
        if (!node) {
                snprintf(err, err_len, "%s: %s", path, strerror(errno));
                return -errno;
        }
        if (stat(node, &st) < 0) {
                snprintf(err, err_len, "%s: %s", node, strerror(errno));
                return -errno;
        }
        if (!S_ISBLK(st.st_mode)) {
                snprintf(err, err_len, "%s: refusing: not a block device", node);
                return -ENOTBLK;
        }
        if (device_holds_mount(st.st_rdev, "/") || device_holds_mount(st.st_rdev, "/boot")) {
                snprintf(err, err_len, "%s: refusing: holds the running system's root or /boot", node);
                return -EBUSY;
        }
        if (job_find_active_rdev(st.st_rdev)) {
                snprintf(err, err_len, "%s: refusing: already being wiped by job %" PRIu64, node,
                         job_find_active_rdev(st.st_rdev)->id);
                return -EBUSY;
        }

        fd = open(node, O_RDWR | O_EXCL | O_DIRECT | O_CLOEXEC);
        if (fd < 0) {
                if (errno == EBUSY)
                        snprintf(err, err_len, "%s: refusing: device is in use (mounted, swap or held by another device)", node);
                else
                        snprintf(err, err_len, "%s: cannot open: %s", node, strerror(errno));
                return -errno;
        }
        if (ioctl(fd, BLKROGET, &ro) < 0 || ioctl(fd, BLKGETSIZE64, &size) < 0 ||
            ioctl(fd, BLKSSZGET, &lss) < 0 || ioctl(fd, BLKPBSZGET, &pss) < 0) {
                snprintf(err, err_len, "%s: cannot read geometry: %s", node, strerror(errno));
                return -errno;
        }
        if (ro) {
                snprintf(err, err_len, "%s: refusing: device is read-only", node);
                return -EROFS;
        }
        if (size == 0) {
                snprintf(err, err_len, "%s: refusing: device has no media or zero size", node);
                return -ENXIO;
        }
        if (lss < 512 || size % (uint64_t) lss != 0) {
                snprintf(err, err_len, "%s: refusing: size %" PRIu64 " is not a multiple of the sector size %d", node, size, lss);
                return -EINVAL;
        }

        info->size = size;
        info->logical_sector = (uint32_t) lss;
        info->physical_sector = pss;
        info->rdev = st.st_rdev;

        pr = blkid_new_probe();
        if (pr) {
                blkid_topology tp;

                if (blkid_probe_set_device(pr, fd, 0, 0) == 0 && (tp = blkid_probe_get_topology(pr))) {
                        info->minimum_io = (uint32_t) blkid_topology_get_minimum_io_size(tp);
                        info->optimal_io = (uint32_t) blkid_topology_get_optimal_io_size(tp);
                }
                blkid_free_probe(pr);
        }
        if (read_sysfs_u64(st.st_rdev, "queue/rotational", &rot) == 0)
                info->rotational = rot != 0;

        info->node = TAKE_PTR(node);
        return TAKE_FD(fd);
}

void device_info_done(struct device_info *info) {
        if (!info)
                return;
        free(info->node);
        info->node = NULL;
}
