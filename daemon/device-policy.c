/* Every reason a device must not be written. A wiper's worst bug is the wrong disk, so the checks
 * are layered: the running system's devices, the configuration's allow and deny patterns, mount
 * table, swap, holders, our own jobs, read-only, size, and finally the exclusive open itself; the
 * first reason found is the one reported. The facts come from device-sysfs.c, device-mount.c and
 * the identity; this file judges them.
 * Runs on the main thread (probe, submit). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "daemon-config.h"
#include "device-private.h"

void refuse(struct device_probe *p, int error, const char *fmt, ...) {
        _cleanup_free_ char *reason = NULL;
        va_list ap;

        if (p->refusal)
                return; /* the first reason is the one reported */
        va_start(ap, fmt);
        if (vasprintf(&reason, fmt, ap) < 0)
                reason = NULL;
        va_end(ap);
        p->refusal = error;
        if (asprintf(&p->refusal_msg, "%s: refusing: %s", p->id.node ? p->id.node : p->path,
                     reason ? reason : strerror(-error)) < 0)
                p->refusal_msg = NULL;
}

/* The running system: the devices under / and /boot, through any stacking, and their disks. */
void device_check_system(struct device_probe *p, dev_t rdev, const struct devset *family,
                         const struct devset *below) {
        struct devset system = {};

        lower_devices(mount_point_device("/"), &system, 0);
        lower_devices(mount_point_device("/boot"), &system, 0);
        if (system.oom || family->oom || below->oom)
                refuse(p, -ENOMEM, "cannot check what uses it: out of memory");
        for (size_t i = 0; i < family->n; i++)
                if (devset_has(&system, family->v[i])) {
                        refuse(p, -EBUSY, "holds the running system's root or /boot");
                        break;
                }
        if (devset_has(&system, whole_disk(rdev)))
                refuse(p, -EBUSY, "is on the disk that holds the running system's root or /boot");
        for (size_t i = 0; i < below->n; i++)
                if (devset_has(&system, below->v[i])) {
                        refuse(p, -EBUSY, "is built on a device of the running system's root or /boot");
                        break;
                }
        free(system.v);
}

/* The configuration's allow and deny patterns (wiped(8) CONFIGURATION), against the resolved
 * node and its /dev/disk links. */
void device_check_config(struct device_probe *p, const char *node) {
        char **links = disk_links(node);
        char msg[PATH_MAX + 64];

        if (!links) {
                refuse(p, -ENOMEM, "cannot check the configuration's patterns: out of memory");
                return;
        }
        if (config_check_device(node, links, msg, sizeof(msg)) < 0)
                refuse(p, -EACCES, "%s", msg);
        for (size_t i = 0; links[i]; i++)
                free(links[i]);
        free(links);
}

/* The kernel name of partition dev of the device ("loop3p1"), or NULL. */
static const char *part_name(const struct part_node *pn, size_t n_pn, dev_t dev) {
        for (size_t i = 0; i < n_pn; i++)
                if (pn[i].dev == dev)
                        return pn[i].name;
        return NULL;
}

/* Every other reason the block device in p must not be written. */
void device_check(struct device_probe *p, device_wiper_fn *wiper, const struct part_node *pn, size_t n_pn,
                  struct devset *family) {
        _cleanup_free_ char *mnt = NULL, *holder = NULL;
        uint64_t busy;
        dev_t which = 0;
        int r;

        busy = wiper ? wiper(p->id.rdev) : 0;
        if (busy)
                refuse(p, -EBUSY, "already being wiped by job %" PRIu64, busy);

        mnt = mount_find(family, &which);
        if (mnt) {
                const char *pname = part_name(pn, n_pn, which);

                if (which == p->id.rdev || !pname)
                        refuse(p, -EBUSY, "is mounted on %s", mnt);
                else
                        refuse(p, -EBUSY, "its partition /dev/%s is mounted on %s", pname, mnt);
        }
        which = swap_find(family);
        if (which) {
                const char *pname = part_name(pn, n_pn, which);

                if (which == p->id.rdev || !pname)
                        refuse(p, -EBUSY, "is active swap");
                else
                        refuse(p, -EBUSY, "its partition /dev/%s is active swap", pname);
        }
        for (size_t i = 0; i < family->n && !holder; i++) {
                holder = holder_find(family->v[i]);
                if (holder)
                        refuse(p, -EBUSY, "is held by %s%s", holder,
                               family->v[i] == p->id.rdev ? "" : " (through a partition)");
        }
        {
                char user[300];

                if (loop_user_find(family, user, sizeof(user)))
                        refuse(p, -EBUSY, "is the backing device of %s", user);
        }
        {
                struct devset below = {};
                _cleanup_free_ char *bmnt = NULL;
                char name[64];

                device_below(p, &below);
                bmnt = mount_find(&below, &which);
                if (bmnt)
                        refuse(p, -EBUSY, "is built on %s, which is mounted on %s", dev_name(which, name, sizeof(name)), bmnt);
                which = swap_find(&below);
                if (which)
                        refuse(p, -EBUSY, "is built on %s, which is active swap", dev_name(which, name, sizeof(name)));
                free(below.v);
        }
        if (p->id.read_only)
                refuse(p, -EROFS, "is read-only");
        if (p->id.size == 0)
                refuse(p, -ENXIO, "has zero size (no media)");
        else if (p->id.logical_sector < 512 || p->id.size % p->id.logical_sector != 0)
                refuse(p, -EINVAL, "size %" PRIu64 " is not a multiple of the sector size %u", p->id.size,
                       p->id.logical_sector);

        /* Last: whoever else holds it exclusively (a mounter we did not see, a partitioner...).
         * Not for a listing: its O_EXCL open, however short, would make another program's own
         * exclusive open (mkfs, mount, cryptsetup) fail with EBUSY at that moment. */
        if (!p->refusal && !p->no_exclusive_open) {
                r = open(p->id.node, O_RDONLY | O_EXCL | O_CLOEXEC);
                if (r < 0 && errno == EBUSY)
                        refuse(p, -EBUSY, "is open exclusively by another program");
                else if (r >= 0)
                        close(r);
        }
}
