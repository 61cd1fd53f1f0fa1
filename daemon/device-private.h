/* wiped: declarations shared by the device files only (device.c and device-*.c), grouped by file.
 * The rest of the daemon knows devices through daemon.h. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "daemon.h"

/* device-sysfs.c */
/* A small set of device numbers. */
struct devset {
        dev_t *v;
        size_t n, cap;
        bool oom;               /* a device could not be added: the set cannot be trusted */
};

void devset_add(struct devset *s, dev_t d);
bool devset_has(const struct devset *s, dev_t d);
char *sysfs_read(dev_t d, const char *attr);
bool sysfs_flag(dev_t d, const char *attr);
/* The erase offloads of block device d (a partition's are its disk's), from its queue limits. */
void sysfs_erase_read(dev_t d, struct device_erase *e);

/* A partition of a disk as the kernel knows it. */
struct part_node {
        char *name;             /* loop3p1 */
        int number;             /* its partition number */
        dev_t dev;
};

void part_nodes_free(struct part_node *v, size_t n);
struct part_node *sysfs_partitions(dev_t d, struct devset *devs, size_t *n_ret);
/* The serial number in the SCSI Unit Serial Number VPD page (80h) the kernel keeps for a SCSI or
 * ATA disk (device/vpd_pg80), or NULL: where udev is not running, the only place it is. */
char *sysfs_vpd_serial(dev_t d);
dev_t whole_disk(dev_t d);
void lower_devices(dev_t d, struct devset *s, unsigned depth);
char *holder_find(dev_t d);

/* KEY=VALUE properties and S: links from the udev database of d. */
struct udev_props {
        char *serial, *serial_short, *wwn, *model, *vendor, *bus;
        char **links;           /* /dev/... symlinks, NULL-terminated */
};

void udev_props_done(struct udev_props *u);
void udev_read(dev_t d, struct udev_props *u);
char **by_id_links(const char *node);
char *transport_of(const struct device_identity *id, const char *bus);
char **disk_links(const char *node);
const char *dev_name(dev_t d, char *buf, size_t n);
void device_below(const struct device_probe *p, struct devset *below);

/* device.c */
/* The probe of the block device node (device number rdev) into p (path and id.node set by the
 * caller): the system's and the configuration's refusals before it is opened, then read-only its
 * identity, with firmware its erase offloads and firmware capabilities, its signatures and
 * partitions, and the last refusals (device_check()). 0 (a refusal is in p), or -ENOMEM. */
int device_probe_node(struct device_probe *p, const char *node, dev_t rdev, device_wiper_fn *wiper, bool firmware);
bool loop_user_find(const struct devset *set, char *buf, size_t n);

/* device-mount.c */
char *mount_find(const struct devset *set, dev_t *which);
dev_t mount_point_device(const char *path);
dev_t swap_find(const struct devset *set);

/* device-blkid.c */
int signatures_scan(int fd, struct device_signature **ret, size_t *n_ret);
void partitions_scan(struct device_probe *p, int fd, const struct part_node *pn, size_t n_pn);

/* device-identity.c */
char *dup_or_null(const char *s);
void identity_read(struct device_identity *id, int fd, const char *node, dev_t rdev);
struct json_object *json_str(const char *s);

/* device-policy.c */
void refuse(struct device_probe *p, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void device_check_system(struct device_probe *p, dev_t rdev, const struct devset *family,
                         const struct devset *below);
void device_check_config(struct device_probe *p, const char *node);
void device_check(struct device_probe *p, device_wiper_fn *wiper, const struct part_node *pn, size_t n_pn,
                  struct devset *family);
