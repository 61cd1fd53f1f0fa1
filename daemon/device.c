/* Devices, as the rest of the daemon sees them: device_probe() looks at a device without writing
 * (its identity, signatures, partitions, and every reason it must not be wiped), device_open()
 * probes it, refuses it if needed and opens it exclusively for the wipe, making sure it is still
 * the device probed. The facts come from device-sysfs.c, device-mount.c, device-blkid.c and
 * device-identity.c, the refusals from device-policy.c.
 * Runs on the main thread (probe, submit). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fs.h>

#include "cleanup.h"
#include "device-private.h"
#include "protocol.h"
#include "utf8.h"

int device_probe(const char *path, device_wiper_fn *wiper, struct device_probe *p) {
        _cleanup_free_ char *node = NULL;
        struct stat st;

        *p = (struct device_probe) {};
        p->path = strdup(path);
        if (!p->path)
                return -ENOMEM;

        node = realpath(path, NULL);
        if (!node) {
                int e = errno;

                if (asprintf(&p->refusal_msg, "%s: %s", path, e == ENOENT ? "does not exist" : strerror(e)) < 0)
                        return -ENOMEM;
                p->refusal = -e;
                return 0;
        }
        /* A name that is not UTF-8 could not even be shown in a reply as it is. */
        if (!utf8_valid(node, strlen(node))) {
                p->refusal = -EINVAL;
                p->id.node = utf8_sanitize_dup(node);
                if (asprintf(&p->refusal_msg, "%s: refusing: the device's name is not valid UTF-8",
                             p->id.node ? p->id.node : path) < 0)
                        return -ENOMEM;
                return 0;
        }
        if (stat(node, &st) < 0) {
                p->refusal = -errno;
                p->id.node = strdup(node);
                if (asprintf(&p->refusal_msg, "%s: %s", node, strerror(errno)) < 0)
                        return -ENOMEM;
                return 0;
        }
        if (!S_ISBLK(st.st_mode)) {
                const char *what = S_ISDIR(st.st_mode) ? "is a directory" :
                                   S_ISREG(st.st_mode) ? "is a regular file" :
                                   S_ISCHR(st.st_mode) ? "is a character device" :
                                   S_ISFIFO(st.st_mode) ? "is a FIFO" :
                                   S_ISSOCK(st.st_mode) ? "is a socket" : "is not a device";

                p->refusal = S_ISDIR(st.st_mode) ? -EISDIR : -ENOTBLK;
                p->id.node = strdup(node);
                if (asprintf(&p->refusal_msg, "%s: refusing: %s, not a block device", node, what) < 0)
                        return -ENOMEM;
                return 0;
        }

        p->id.node = strdup(node);
        if (!p->id.node)
                return -ENOMEM;
        return device_probe_node(p, node, st.st_rdev, wiper, true);
}

int device_probe_node(struct device_probe *p, const char *node, dev_t rdev, device_wiper_fn *wiper, bool firmware) {
        _cleanup_close_ int fd = -1;
        struct devset family = {};
        struct part_node *pn = NULL;
        size_t n_pn = 0;

        /* The system's own disks are refused before anything else, even before opening them. */
        devset_add(&family, rdev);
        pn = sysfs_partitions(rdev, &family, &n_pn);
        {
                struct devset below = {};
                struct devset lower = {};

                lower_devices(rdev, &lower, 0);
                for (size_t i = 0; i < lower.n; i++)
                        if (lower.v[i] != rdev)
                                devset_add(&below, lower.v[i]);
                below.oom |= lower.oom;
                device_check_system(p, rdev, &family, &below);
                free(lower.v);
                free(below.v);
        }
        /* Then what the administrator excluded, still before opening it. */
        device_check_config(p, node);

        fd = open(node, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) {
                refuse(p, -errno, "cannot open: %s", strerror(errno));
                part_nodes_free(pn, n_pn);
                free(family.v);
                return 0;
        }
        free(p->id.node);
        p->id.node = NULL;
        p->have_identity = true;
        identity_read(&p->id, fd, node, rdev);
        if (!p->id.node || !p->id.name || !p->id.by_id) {
                part_nodes_free(pn, n_pn);
                free(family.v);
                return -ENOMEM;
        }
        if (firmware) {
                sysfs_erase_read(rdev, &p->erase);
                if (fw_probe(fd, &p->id, &p->firmware) < 0) {
                        part_nodes_free(pn, n_pn);
                        free(family.v);
                        return -ENOMEM;
                }
        }
        if (p->id.size > 0) {
                (void) signatures_scan(fd, &p->sigs, &p->n_sigs);
                partitions_scan(p, fd, pn, n_pn);
        }
        device_check(p, wiper, pn, n_pn, &family);
        part_nodes_free(pn, n_pn);
        free(family.v);
        return 0;
}

void device_probe_done(struct device_probe *p) {
        if (!p)
                return;
        free(p->path);
        device_identity_done(&p->id);
        fw_caps_done(&p->firmware);
        device_signatures_free(p->sigs, p->n_sigs);
        free(p->pt_type);
        free(p->pt_uuid);
        for (size_t i = 0; i < p->n_parts; i++) {
                struct device_partition *dp = &p->parts[i];

                free(dp->node);
                free(dp->type);
                free(dp->name);
                free(dp->uuid);
                free(dp->fs_type);
                free(dp->fs_label);
                free(dp->fs_uuid);
                free(dp->mountpoint);
        }
        free(p->parts);
        free(p->refusal_msg);
        *p = (struct device_probe) {};
}

int device_open(const char *path, device_wiper_fn *wiper, struct device_probe *p, char *err, size_t err_len) {
        _cleanup_close_ int fd = -1;
        struct stat st;
        uint64_t size = 0;
        int r;

        r = device_probe(path, wiper, p);
        if (r < 0) {
                snprintf(err, err_len, "%s: cannot probe: %s", path, strerror(-r));
                return r;
        }
        if (p->refusal) {
                snprintf(err, err_len, "%s", p->refusal_msg ? p->refusal_msg : strerror(-p->refusal));
                return p->refusal;
        }
        fd = open(p->id.node, O_RDWR | O_EXCL | O_DIRECT | O_CLOEXEC);
        if (fd < 0) {
                r = -errno;
                if (r == -EBUSY)
                        snprintf(err, err_len, "%s: refusing: is open exclusively by another program", p->id.node);
                else
                        snprintf(err, err_len, "%s: cannot open: %s", p->id.node, strerror(-r));
                return r;
        }
        /* The node we opened must be the device we probed (a name can be swapped in between, a
         * loop device detached and attached to another file): what it is, read again through the
         * descriptor we hold. Held exclusively, a loop device keeps its backing file. */
        if (fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != p->id.rdev ||
            ioctl(fd, BLKGETSIZE64, &size) < 0 || size != p->id.size) {
                snprintf(err, err_len, "%s: refusing: the device changed while it was being opened", p->id.node);
                return -ESTALE;
        }
        {
                struct device_identity now = {};
                const char *what = NULL;
                bool same;

                identity_read(&now, fd, p->id.node, st.st_rdev);
                if (!now.node || !now.name) {
                        device_identity_done(&now);
                        snprintf(err, err_len, "%s: cannot open: out of memory", p->id.node);
                        return -ENOMEM;
                }
                same = device_identity_same(&p->id, &now, true, &what);
                device_identity_done(&now);
                if (!same) {
                        snprintf(err, err_len, "%s: refusing: the device changed while it was being opened (%s)",
                                 p->id.node, what);
                        return -ESTALE;
                }
        }
        return TAKE_FD(fd);
}

/* JSON rendering: see wipectl(1) for the schema. */

/* A byte count from sysfs: null when sysfs does not say (-1). */
static struct json_object *device_bytes_json(int64_t v) {
        return v >= 0 ? json_object_new_int64(v) : NULL;
}

/* Whether a limit allows the operation at all: null when sysfs does not say (-1). */
static struct json_object *device_limit_json(int64_t max) {
        return max >= 0 ? json_object_new_boolean(max > 0) : NULL;
}

/* The ERASE object: what the block layer offers for erasing without writing the data. */
static struct json_object *device_erase_json(const struct device_erase *e, const struct fw_caps *fw) {
        struct json_object *o = json_object_new_object(), *d = json_object_new_object(), *z = json_object_new_object();

        if (!o || !d || !z) {
                json_object_put(o);
                json_object_put(d);
                json_object_put(z);
                return NULL;
        }
        json_object_object_add(d, "supported", device_limit_json(e->discard_max));
        json_object_object_add(d, "max_bytes", device_bytes_json(e->discard_max));
        json_object_object_add(d, "granularity", device_bytes_json(e->discard_granularity));
        json_object_object_add(o, "discard", d);
        json_object_object_add(z, "offloaded", device_limit_json(e->write_zeroes_max));
        json_object_object_add(z, "max_bytes", device_bytes_json(e->write_zeroes_max));
        json_object_object_add(z, "unmap_max_bytes", device_bytes_json(e->write_zeroes_unmap_max));
        json_object_object_add(o, "write_zeroes", z);
        /* Unknown until a BLKSECDISCARD is tried: sysfs does not tell. */
        json_object_object_add(o, "secure_discard", NULL);
        json_object_object_add(o, "firmware", fw_caps_json(fw));
        return o;
}

struct json_object *device_probe_json(const struct device_probe *p) {
        struct json_object *o = json_object_new_object(), *parts;

        if (!o)
                return NULL;
        json_object_object_add(o, "path", json_str(p->path));
        json_object_object_add(o, "node", json_str(p->id.node));
        json_object_object_add(o, "wipeable", json_object_new_boolean(p->refusal == 0));
        if (p->refusal) {
                struct json_object *e = json_object_new_object();

                json_object_object_add(e, "code", json_object_new_string(protocol_errno_name(p->refusal)));
                json_object_object_add(e, "message", json_str(p->refusal_msg));
                json_object_object_add(o, "refusal", e);
        }
        json_object_object_add(o, "identity", p->have_identity ? device_identity_json(&p->id) : NULL);
        json_object_object_add(o, "erase", p->have_identity ? device_erase_json(&p->erase, &p->firmware) : NULL);
        json_object_object_add(o, "signatures", device_signatures_json(p->sigs, p->n_sigs));
        if (p->pt_type) {
                struct json_object *t = json_object_new_object();

                json_object_object_add(t, "type", json_str(p->pt_type));
                json_object_object_add(t, "uuid", json_str(p->pt_uuid));
                json_object_object_add(o, "partition_table", t);
        } else
                json_object_object_add(o, "partition_table", NULL);
        parts = json_object_new_array();
        for (size_t i = 0; parts && i < p->n_parts; i++) {
                const struct device_partition *dp = &p->parts[i];
                struct json_object *j = json_object_new_object();

                json_object_object_add(j, "number", json_object_new_int(dp->number));
                json_object_object_add(j, "node", json_str(dp->node));
                json_object_object_add(j, "start", json_object_new_uint64(dp->start));
                json_object_object_add(j, "size", json_object_new_uint64(dp->size));
                json_object_object_add(j, "type", json_str(dp->type));
                json_object_object_add(j, "name", json_str(dp->name));
                json_object_object_add(j, "uuid", json_str(dp->uuid));
                if (dp->fs_type) {
                        struct json_object *fs = json_object_new_object();

                        json_object_object_add(fs, "type", json_str(dp->fs_type));
                        json_object_object_add(fs, "label", json_str(dp->fs_label));
                        json_object_object_add(fs, "uuid", json_str(dp->fs_uuid));
                        json_object_object_add(j, "filesystem", fs);
                } else
                        json_object_object_add(j, "filesystem", NULL);
                json_object_object_add(j, "mountpoint", json_str(dp->mountpoint));
                json_object_array_add(parts, j);
        }
        json_object_object_add(o, "partitions", parts);
        return o;
}
