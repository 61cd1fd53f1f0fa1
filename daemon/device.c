/* Devices: what a device is (identity), what is on it (libblkid signatures and partitions), and
 * every reason it must not be written. A wiper's worst bug is the wrong disk, so the checks are
 * layered: the running system's devices, the configuration's allow and deny patterns, mount
 * table, swap, holders, our own jobs, read-only, size, and finally the exclusive open itself; the
 * first reason found is the one reported.
 * Runs on the main thread (probe, submit) and on a worker (the probe after a wipe). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <blkid/blkid.h>

#include "cleanup.h"
#include "strutil.h"
#include "daemon-config.h"
#include "daemon.h"
#include "protocol.h"
#include "utf8.h"

/* A small set of device numbers. */
struct devset {
        dev_t *v;
        size_t n, cap;
        bool oom;               /* a device could not be added: the set cannot be trusted */
};

static void devset_add(struct devset *s, dev_t d) {
        dev_t *v;

        for (size_t i = 0; i < s->n; i++)
                if (s->v[i] == d)
                        return;
        if (s->n == s->cap) {
                v = realloc(s->v, (s->cap ? s->cap * 2 : 8) * sizeof(*v));
                if (!v) {
                        s->oom = true;
                        return;
                }
                s->v = v;
                s->cap = s->cap ? s->cap * 2 : 8;
        }
        s->v[s->n++] = d;
}

static bool devset_has(const struct devset *s, dev_t d) {
        for (size_t i = 0; i < s->n; i++)
                if (s->v[i] == d)
                        return true;
        return false;
}

/* Read /sys/dev/block/M:m/<attr> into a malloc'd string without trailing white space; NULL when
 * missing or empty. */
static char *sysfs_read(dev_t d, const char *attr) {
        char path[PATH_MAX], buf[4096];
        size_t n;
        FILE *f;

        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/%s", major(d), minor(d), attr);
        f = fopen(path, "re");
        if (!f)
                return NULL;
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ' || buf[n - 1] == '\0'))
                buf[--n] = '\0';
        {
                char *p = buf;

                while (*p == ' ')
                        p++;
                /* Model and serial strings come from the device's firmware: any bytes. */
                return *p ? utf8_sanitize(strdup(p)) : NULL;
        }
}

static bool sysfs_flag(dev_t d, const char *attr) {
        _cleanup_free_ char *s = sysfs_read(d, attr);

        return s && strcmp(s, "0") != 0;
}

/* A partition of a disk as the kernel knows it. */
struct part_node {
        char *name;             /* loop3p1 */
        int number;             /* its partition number */
        dev_t dev;
};

static void part_nodes_free(struct part_node *v, size_t n) {
        for (size_t i = 0; v && i < n; i++)
                free(v[i].name);
        free(v);
}

/* The partitions of whole disk d, from sysfs; added to devs too. */
static struct part_node *sysfs_partitions(dev_t d, struct devset *devs, size_t *n_ret) {
        struct part_node *v = NULL;
        char path[PATH_MAX];
        struct dirent *de;
        size_t n = 0;
        DIR *dir;

        *n_ret = 0;
        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major(d), minor(d));
        dir = opendir(path);
        if (!dir)
                return NULL;
        while ((de = readdir(dir))) {
                _cleanup_free_ char *num = NULL, *devno = NULL;
                char attr[PATH_MAX];
                struct part_node *nv;
                dev_t pd;

                if (de->d_name[0] == '.' || strlen(de->d_name) > 200)
                        continue;
                if (snprintf(attr, sizeof(attr), "%s/partition", de->d_name) >= (int) sizeof(attr))
                        continue;
                num = sysfs_read(d, attr);
                if (snprintf(attr, sizeof(attr), "%s/dev", de->d_name) >= (int) sizeof(attr))
                        continue;
                devno = sysfs_read(d, attr);
                if (!num || parse_devno(devno, &pd) < 0)
                        continue;
                devset_add(devs, pd);
                nv = realloc(v, (n + 1) * sizeof(*nv));
                if (!nv) {
                        devs->oom = true;
                        break;
                }
                v = nv;
                v[n] = (struct part_node) { .name = strdup(de->d_name), .number = atoi(num), .dev = pd };
                if (!v[n].name) {
                        devs->oom = true;
                        break;
                }
                n++;
        }
        closedir(dir);
        *n_ret = n;
        return v;
}

/* The whole disk of a partition, or d itself. */
static dev_t whole_disk(dev_t d) {
        char path[PATH_MAX];

        if (!sysfs_flag(d, "partition"))
                return d;
        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../dev", major(d), minor(d));
        {
                FILE *f = fopen(path, "re");
                char buf[32];
                dev_t w;

                if (!f)
                        return d;
                if (fgets(buf, sizeof(buf), f) && (buf[strcspn(buf, "\n")] = '\0', parse_devno(buf, &w) == 0)) {
                        fclose(f);
                        return w;
                }
                fclose(f);
        }
        return d;
}

/* Add d, the devices it is built on (slaves/, recursively) and their whole disks. */
static void lower_devices(dev_t d, struct devset *s, unsigned depth) {
        char path[PATH_MAX];
        struct dirent *de;
        DIR *dir;

        if (depth > 16 || devset_has(s, d))
                return;
        devset_add(s, d);
        devset_add(s, whole_disk(d));
        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/slaves", major(d), minor(d));
        dir = opendir(path);
        if (!dir)
                return;
        while ((de = readdir(dir))) {
                char attr[PATH_MAX];
                dev_t sd;
                FILE *f;
                char buf[32];

                if (de->d_name[0] == '.')
                        continue;
                if (snprintf(attr, sizeof(attr), "%s/%s/dev", path, de->d_name) >= (int) sizeof(attr))
                        continue;
                f = fopen(attr, "re");
                if (!f)
                        continue;
                if (fgets(buf, sizeof(buf), f) && (buf[strcspn(buf, "\n")] = '\0', parse_devno(buf, &sd) == 0))
                        lower_devices(sd, s, depth + 1);
                fclose(f);
        }
        closedir(dir);
}

/* Decode the octal escapes of /proc/self/mountinfo and /proc/swaps fields in place. */
static void unescape(char *s) {
        char *o = s;

        for (; *s; s++) {
                if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
                        *o++ = (char) (((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
                        s += 3;
                } else
                        *o++ = *s;
        }
        *o = '\0';
}

/* The device number behind a mountinfo entry: its major:minor, or for file systems with an
 * anonymous device number (btrfs) the block device named as its source. 0 when none. */
static dev_t mount_device(const char *devno, const char *source) {
        struct stat st;
        dev_t d = 0;

        if (parse_devno(devno, &d) == 0 && major(d) != 0)
                return d;
        if (source && source[0] == '/' && stat(source, &st) == 0 && S_ISBLK(st.st_mode))
                return st.st_rdev;
        return 0;
}

/* Find a mount of any device in set: returns its mount point (malloc'd) and the device. */
static char *mount_find(const struct devset *set, dev_t *which) {
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        char *found = NULL;
        FILE *f = fopen("/proc/self/mountinfo", "re");

        if (!f)
                return NULL;
        while (!found && getline(&line, &cap, f) > 0) {
                char *save = NULL, *field[6] = {}, *sep, *source = NULL;
                unsigned i = 0;
                dev_t d;

                sep = strstr(line, " - ");
                if (sep) {
                        char *q = sep + 3, *fs_save = NULL;

                        strtok_r(q, " ", &fs_save);            /* fstype */
                        source = strtok_r(NULL, " ", &fs_save);
                        *sep = '\0';
                }
                for (char *t = strtok_r(line, " ", &save); t && i < 6; t = strtok_r(NULL, " ", &save))
                        field[i++] = t;
                if (i < 5)
                        continue;
                if (source)
                        unescape(source);
                d = mount_device(field[2], source);
                if (d && devset_has(set, d)) {
                        unescape(field[4]);
                        found = utf8_sanitize(strdup(field[4]));
                        *which = d;
                }
        }
        fclose(f);
        return found;
}

/* The device number of the file system mounted at path (as mountinfo names it), or 0. */
static dev_t mount_point_device(const char *path) {
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        dev_t result = 0;
        FILE *f = fopen("/proc/self/mountinfo", "re");

        if (!f)
                return 0;
        while (getline(&line, &cap, f) > 0) {
                char *save = NULL, *field[6] = {}, *sep, *source = NULL;
                unsigned i = 0;

                sep = strstr(line, " - ");
                if (sep) {
                        char *fs_save = NULL;

                        strtok_r(sep + 3, " ", &fs_save);
                        source = strtok_r(NULL, " ", &fs_save);
                        *sep = '\0';
                }
                for (char *t = strtok_r(line, " ", &save); t && i < 6; t = strtok_r(NULL, " ", &save))
                        field[i++] = t;
                if (i < 5)
                        continue;
                unescape(field[4]);
                if (strcmp(field[4], path) == 0) {
                        if (source)
                                unescape(source);
                        result = mount_device(field[2], source); /* the last (topmost) mount wins */
                }
        }
        fclose(f);
        return result;
}

/* Whether any device in set is active swap: 0 when none, else that device. */
static dev_t swap_find(const struct devset *set) {
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        dev_t found = 0;
        FILE *f = fopen("/proc/swaps", "re");

        if (!f)
                return 0;
        while (!found && getline(&line, &cap, f) > 0) {
                char *sp = strpbrk(line, " \t");
                struct stat st;

                if (line[0] != '/' || !sp)
                        continue;
                *sp = '\0';
                unescape(line);
                if (stat(line, &st) == 0 && S_ISBLK(st.st_mode) && devset_has(set, st.st_rdev))
                        found = st.st_rdev;
        }
        fclose(f);
        return found;
}

/* The kernel name of partition dev of the device ("loop3p1"), or NULL. */
static const char *part_name(const struct part_node *pn, size_t n_pn, dev_t dev) {
        for (size_t i = 0; i < n_pn; i++)
                if (pn[i].dev == dev)
                        return pn[i].name;
        return NULL;
}

/* The first holder of d ("dm-0"), described as "dm-0 (device-mapper 'name')"; NULL when none. */
static char *holder_find(dev_t d) {
        char path[PATH_MAX];
        struct dirent *de;
        char *found = NULL;
        DIR *dir;

        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/holders", major(d), minor(d));
        dir = opendir(path);
        if (!dir)
                return NULL;
        while (!found && (de = readdir(dir))) {
                char attr[PATH_MAX], name[256] = "";
                FILE *f;

                if (de->d_name[0] == '.')
                        continue;
                if (strncmp(de->d_name, "dm-", 3) == 0) {
                        if (snprintf(attr, sizeof(attr), "/sys/class/block/%s/dm/name", de->d_name) >= (int) sizeof(attr))
                                continue;
                        f = fopen(attr, "re");
                        if (f) {
                                if (fgets(name, sizeof(name), f))
                                        name[strcspn(name, "\n")] = '\0';
                                fclose(f);
                        }
                        if (asprintf(&found, "%s (device-mapper '%s')", de->d_name, name) < 0)
                                found = NULL;
                } else if (strncmp(de->d_name, "md", 2) == 0) {
                        if (asprintf(&found, "%s (md RAID)", de->d_name) < 0)
                                found = NULL;
                } else
                        found = strdup(de->d_name);
        }
        closedir(dir);
        return found;
}

/* KEY=VALUE properties and S: links from the udev database of d. */
struct udev_props {
        char *serial, *serial_short, *wwn, *model, *vendor, *bus;
        char **links;           /* /dev/... symlinks, NULL-terminated */
};

static void udev_props_done(struct udev_props *u) {
        free(u->serial);
        free(u->serial_short);
        free(u->wwn);
        free(u->model);
        free(u->vendor);
        free(u->bus);
        for (size_t i = 0; u->links && u->links[i]; i++)
                free(u->links[i]);
        free(u->links);
}

static void udev_read(dev_t d, struct udev_props *u) {
        _cleanup_free_ char *line = NULL;
        char path[64];
        size_t cap = 0, n = 0;
        ssize_t len;
        FILE *f;

        snprintf(path, sizeof(path), "/run/udev/data/b%u:%u", major(d), minor(d));
        f = fopen(path, "re");
        if (!f)
                return;
        while ((len = getline(&line, &cap, f)) > 0) {
                static const struct { const char *key; size_t off; } keys[] = {
                        { "E:ID_SERIAL=", offsetof(struct udev_props, serial) },
                        { "E:ID_SERIAL_SHORT=", offsetof(struct udev_props, serial_short) },
                        { "E:ID_WWN=", offsetof(struct udev_props, wwn) },
                        { "E:ID_MODEL=", offsetof(struct udev_props, model) },
                        { "E:ID_VENDOR=", offsetof(struct udev_props, vendor) },
                        { "E:ID_BUS=", offsetof(struct udev_props, bus) },
                };

                if (line[len - 1] == '\n')
                        line[len - 1] = '\0';
                for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
                        size_t kl = strlen(keys[i].key);
                        char **dst = (char **) ((char *) u + keys[i].off);

                        if (strncmp(line, keys[i].key, kl) == 0 && !*dst && line[kl])
                                *dst = utf8_sanitize(strdup(line + kl));
                }
                if (strncmp(line, "S:", 2) == 0) {
                        char **v = realloc(u->links, (n + 2) * sizeof(*v));

                        if (!v)
                                continue;
                        u->links = v;
                        if (asprintf(&v[n], "/dev/%s", line + 2) >= 0 && (v[n] = utf8_sanitize(v[n])))
                                n++;
                        v[n] = NULL;
                }
        }
        fclose(f);
}

/* Links in /dev/disk/by-id resolving to node, NULL-terminated (never NULL unless ENOMEM). */
static char **by_id_links(const char *node) {
        char **v = calloc(1, sizeof(*v));
        struct dirent *de;
        size_t n = 0;
        DIR *dir;

        if (!v)
                return NULL;
        dir = opendir("/dev/disk/by-id");
        if (!dir)
                return v;
        while ((de = readdir(dir))) {
                char path[PATH_MAX];
                _cleanup_free_ char *real = NULL;
                char **nv;

                if (de->d_name[0] == '.')
                        continue;
                if (snprintf(path, sizeof(path), "/dev/disk/by-id/%s", de->d_name) >= (int) sizeof(path))
                        continue;
                real = realpath(path, NULL);
                if (!real || strcmp(real, node) != 0)
                        continue;
                nv = realloc(v, (n + 2) * sizeof(*nv));
                if (!nv)
                        break;
                v = nv;
                v[n] = utf8_sanitize(strdup(path));
                if (v[n])
                        n++;
                v[n] = NULL;
        }
        closedir(dir);
        return v;
}

/* The transport, from the device's place in sysfs. */
static char *transport_of(const struct device_identity *id, const char *bus) {
        char path[PATH_MAX];
        _cleanup_free_ char *real = NULL;

        if (id->is_loop)
                return strdup("loop");
        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major(id->rdev), minor(id->rdev));
        real = realpath(path, NULL);
        if (real) {
                if (strstr(real, "/nvme"))
                        return strdup("nvme");
                if (strstr(real, "/usb"))
                        return strdup("usb");
                if (strstr(real, "/ata"))
                        return strdup("sata");
                if (strstr(real, "/mmc"))
                        return strdup("mmc");
                if (strstr(real, "/virtio"))
                        return strdup(strstr(real, "/host") ? "scsi" : "virtio");
                if (strstr(real, "/host"))
                        return strdup("scsi");
        }
        return bus ? strdup(bus) : NULL;
}

/* Strings from devices (labels, names, firmware strings) are any bytes: they are kept as valid
 * UTF-8, so that what they show in a reply, a record or a report is JSON text. */
static char *dup_or_null(const char *s) {
        return s && *s ? utf8_sanitize(strdup(s)) : NULL;
}

/* Fill the identity of the block device node (rdev) from an O_RDONLY fd, sysfs, udev, libblkid. */
static void identity_read(struct device_identity *id, int fd, const char *node, dev_t rdev) {
        struct udev_props u = {};
        struct loop_info64 li;
        unsigned pss = 0;
        uint64_t size = 0;
        int lss = 0, ro = 0;
        blkid_probe pr;
        const char *slash = strrchr(node, '/');

        id->node = strdup(node);
        id->name = strdup(slash ? slash + 1 : node);
        id->rdev = rdev;
        if (ioctl(fd, BLKGETSIZE64, &size) == 0)
                id->size = size;
        if (ioctl(fd, BLKSSZGET, &lss) == 0)
                id->logical_sector = (uint32_t) lss;
        if (ioctl(fd, BLKPBSZGET, &pss) == 0)
                id->physical_sector = pss;
        id->read_only = (ioctl(fd, BLKROGET, &ro) == 0 && ro) || sysfs_flag(rdev, "ro");
        id->rotational = sysfs_flag(rdev, "queue/rotational");
        id->removable = sysfs_flag(rdev, "removable");
        if (sysfs_flag(rdev, "partition")) {
                _cleanup_free_ char *num = sysfs_read(rdev, "partition"), *start = sysfs_read(rdev, "start");

                /* A partition is its disk's identity plus where it is on the disk. */
                id->partition = num ? atoi(num) : 0;
                id->part_start = start ? strtoull(start, NULL, 10) : 0;
        }

        pr = blkid_new_probe();
        if (pr) {
                blkid_topology tp;

                if (blkid_probe_set_device(pr, fd, 0, 0) == 0 && (tp = blkid_probe_get_topology(pr))) {
                        id->minimum_io = (uint32_t) blkid_topology_get_minimum_io_size(tp);
                        id->optimal_io = (uint32_t) blkid_topology_get_optimal_io_size(tp);
                        id->alignment_offset = (int32_t) blkid_topology_get_alignment_offset(tp);
                }
                blkid_free_probe(pr);
        }

        if (ioctl(fd, LOOP_GET_STATUS64, &li) == 0) {
                _cleanup_free_ char *bf = sysfs_read(rdev, "loop/backing_file");

                id->is_loop = true;
                id->backing_file = bf ? TAKE_PTR(bf) : utf8_sanitize(strndup((const char *) li.lo_file_name, LO_NAME_SIZE));
                id->backing_inode = li.lo_inode;
                id->backing_dev = (dev_t) li.lo_device;
        }

        udev_read(rdev, &u);
        id->model = dup_or_null(u.model);
        if (!id->model) {
                _cleanup_free_ char *m = sysfs_read(rdev, "device/model");

                id->model = TAKE_PTR(m);
        }
        id->vendor = dup_or_null(u.vendor);
        if (!id->vendor) {
                _cleanup_free_ char *v = sysfs_read(rdev, "device/vendor");

                id->vendor = TAKE_PTR(v);
        }
        id->serial = dup_or_null(u.serial_short ? u.serial_short : u.serial);
        if (!id->serial) {
                _cleanup_free_ char *s = sysfs_read(rdev, "device/serial");

                id->serial = s ? TAKE_PTR(s) : sysfs_read(rdev, "serial");
        }
        id->wwn = dup_or_null(u.wwn);
        if (!id->wwn) {
                _cleanup_free_ char *w = sysfs_read(rdev, "device/wwid");

                id->wwn = w ? TAKE_PTR(w) : sysfs_read(rdev, "wwid");
        }
        id->transport = transport_of(id, u.bus);
        id->by_id = by_id_links(node);
        udev_props_done(&u);
}

void device_identity_done(struct device_identity *id) {
        if (!id)
                return;
        free(id->node);
        free(id->name);
        free(id->transport);
        free(id->vendor);
        free(id->model);
        free(id->serial);
        free(id->wwn);
        free(id->backing_file);
        for (size_t i = 0; id->by_id && id->by_id[i]; i++)
                free(id->by_id[i]);
        free(id->by_id);
        *id = (struct device_identity) {};
}

void device_signatures_free(struct device_signature *s, size_t n) {
        for (size_t i = 0; s && i < n; i++) {
                free(s[i].type);
                free(s[i].usage);
                free(s[i].label);
                free(s[i].uuid);
        }
        free(s);
}

static char *probe_value(blkid_probe pr, const char *name) {
        const char *v = NULL;

        if (blkid_probe_lookup_value(pr, name, &v, NULL) < 0 || !v || !*v)
                return NULL;
        return dup_or_null(v);
}

/* Every signature on the device open at fd, as wipefs lists them. 0 or -errno. */
static int signatures_scan(int fd, struct device_signature **ret, size_t *n_ret) {
        struct device_signature *v = NULL;
        size_t n = 0;
        blkid_probe pr = blkid_new_probe();

        if (!pr)
                return -ENOMEM;
        if (blkid_probe_set_device(pr, fd, 0, 0) < 0) {
                blkid_free_probe(pr);
                return -EIO;
        }
        blkid_probe_enable_superblocks(pr, 1);
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_MAGIC | BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE |
                                                      BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID | BLKID_SUBLKS_BADCSUM);
        blkid_probe_enable_partitions(pr, 1);
        blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC | BLKID_PARTS_FORCE_GPT);

        /* Each call returns the next result of the chains; wipefs walks them the same way. */
        while (blkid_do_probe(pr) == 0 && n < 64) {
                struct device_signature s = { .written = -1 };
                _cleanup_free_ char *off = NULL;
                struct device_signature *nv;

                s.type = probe_value(pr, "TYPE");
                if (s.type) {
                        s.usage = probe_value(pr, "USAGE");
                        s.label = probe_value(pr, "LABEL");
                        s.uuid = probe_value(pr, "UUID");
                        off = probe_value(pr, "SBMAGIC_OFFSET");
                } else {
                        s.type = probe_value(pr, "PTTYPE");
                        if (!s.type)
                                continue;
                        s.usage = strdup("partition_table");
                        s.uuid = probe_value(pr, "PTUUID");
                        off = probe_value(pr, "PTMAGIC_OFFSET");
                }
                if (!s.usage)
                        s.usage = strdup("other");
                s.offset = off ? strtoull(off, NULL, 10) : 0;
                nv = realloc(v, (n + 1) * sizeof(*nv));
                if (!nv) {
                        free(s.type);
                        free(s.usage);
                        free(s.label);
                        free(s.uuid);
                        break;
                }
                v = nv;
                v[n++] = s;
                /* A dry-run wipe steps the probe back so that the next call finds the signatures
                 * that this one hid (the backup GPT header, a protective MBR), as wipefs lists
                 * them. Nothing is written: dryrun, and the fd is read-only. */
                (void) blkid_do_wipe(pr, 1);
        }
        blkid_free_probe(pr);
        *ret = v;
        *n_ret = n;
        return 0;
}

int device_signatures_read(const char *node, struct device_signature **ret, size_t *n) {
        _cleanup_close_ int fd = open(node, O_RDONLY | O_CLOEXEC);

        *ret = NULL;
        *n = 0;
        if (fd < 0)
                return -errno;
        /* Drop cached blocks so that the probe reads what is on the device now. */
        (void) ioctl(fd, BLKFLSBUF, 0);
        (void) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        return signatures_scan(fd, ret, n);
}

/* The partition table and partitions (with the file system inside each) of the device at fd. */
static void partitions_scan(struct device_probe *p, int fd, const struct part_node *pn, size_t n_pn) {
        blkid_probe pr = blkid_new_probe();
        blkid_partlist ls;
        blkid_parttable tab;
        int n;

        if (!pr)
                return;
        if (blkid_probe_set_device(pr, fd, 0, 0) < 0)
                goto out;
        blkid_probe_enable_superblocks(pr, 0);
        blkid_probe_enable_partitions(pr, 1);
        blkid_probe_set_partitions_flags(pr, BLKID_PARTS_ENTRY_DETAILS);
        ls = blkid_probe_get_partitions(pr);
        if (!ls || !(tab = blkid_partlist_get_table(ls)))
                goto out;
        p->pt_type = dup_or_null(blkid_parttable_get_type(tab));
        p->pt_uuid = dup_or_null(blkid_parttable_get_id(tab));
        n = blkid_partlist_numof_partitions(ls);
        if (n <= 0 || !(p->parts = calloc((size_t) n, sizeof(*p->parts))))
                goto out;
        for (int i = 0; i < n; i++) {
                blkid_partition par = blkid_partlist_get_partition(ls, i);
                struct device_partition *dp = &p->parts[p->n_parts];
                blkid_probe fp;
                char buf[16];


                if (!par)
                        continue;
                p->n_parts++;
                dp->number = blkid_partition_get_partno(par);
                dp->start = (uint64_t) blkid_partition_get_start(par) * 512;
                dp->size = (uint64_t) blkid_partition_get_size(par) * 512;
                if (blkid_partition_get_type_string(par))
                        dp->type = dup_or_null(blkid_partition_get_type_string(par));
                else {
                        snprintf(buf, sizeof(buf), "0x%x", (unsigned) blkid_partition_get_type(par));
                        dp->type = strdup(buf);
                }
                dp->name = dup_or_null(blkid_partition_get_name(par));
                dp->uuid = dup_or_null(blkid_partition_get_uuid(par));
                for (size_t k = 0; k < n_pn; k++)
                        if (pn[k].number == dp->number) {
                                struct devset one = {};
                                struct stat st;
                                dev_t which;

                                /* The kernel's node for it, where /dev has one. */
                                if (asprintf(&dp->node, "/dev/%s", pn[k].name) < 0)
                                        dp->node = NULL;
                                else if (stat(dp->node, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != pn[k].dev) {
                                        free(dp->node);
                                        dp->node = NULL;
                                }
                                devset_add(&one, pn[k].dev);
                                dp->mountpoint = mount_find(&one, &which);
                                free(one.v);
                                break;
                        }
                /* The file system inside: probe the partition's range of the whole device. */
                fp = blkid_new_probe();
                if (fp && blkid_probe_set_device(fp, fd, (blkid_loff_t) dp->start, (blkid_loff_t) dp->size) == 0) {
                        blkid_probe_enable_superblocks(fp, 1);
                        blkid_probe_set_superblocks_flags(fp, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID);
                        if (blkid_do_safeprobe(fp) == 0) {
                                dp->fs_type = probe_value(fp, "TYPE");
                                dp->fs_label = probe_value(fp, "LABEL");
                                dp->fs_uuid = probe_value(fp, "UUID");
                        }
                }
                blkid_free_probe(fp);
        }
out:
        blkid_free_probe(pr);
}

static void refuse(struct device_probe *p, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void refuse(struct device_probe *p, int error, const char *fmt, ...) {
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
static void device_check_system(struct device_probe *p, dev_t rdev, const struct devset *family,
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

/* Every link in the directories /dev/disk/by-* (by-id, by-path, by-uuid, by-label, ...) that
 * resolves to node, NULL-terminated; NULL on ENOMEM. */
static char **disk_links(const char *node) {
        static const char top[] = "/dev/disk";
        char **v = calloc(1, sizeof(*v));
        struct dirent *de;
        bool oom = false;
        size_t n = 0;
        DIR *dir;

        if (!v)
                return NULL;
        dir = opendir(top);
        if (!dir)
                return v;
        while (!oom && (de = readdir(dir))) {
                char sub[PATH_MAX];
                struct dirent *le;
                DIR *ld;

                if (strncmp(de->d_name, "by-", 3) != 0 ||
                    snprintf(sub, sizeof(sub), "%s/%s", top, de->d_name) >= (int) sizeof(sub) || !(ld = opendir(sub)))
                        continue;
                while (!oom && (le = readdir(ld))) {
                        char path[PATH_MAX];
                        _cleanup_free_ char *real = NULL;
                        char **nv;

                        if (le->d_name[0] == '.' ||
                            snprintf(path, sizeof(path), "%s/%s", sub, le->d_name) >= (int) sizeof(path))
                                continue;
                        real = realpath(path, NULL);
                        if (!real || strcmp(real, node) != 0)
                                continue;
                        nv = realloc(v, (n + 2) * sizeof(*nv));
                        if (nv)
                                v = nv;
                        if (!nv || !(v[n] = strdup(path)))
                                oom = true;
                        else
                                v[++n] = NULL;
                }
                closedir(ld);
        }
        closedir(dir);
        if (oom) {
                for (size_t i = 0; i < n; i++)
                        free(v[i]);
                free(v);
                return NULL;
        }
        return v;
}

/* The configuration's allow and deny patterns (wiped(8) CONFIGURATION), against the resolved
 * node and its /dev/disk links. */
static void device_check_config(struct device_probe *p, const char *node) {
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

/* The kernel name of block device d ("sda2"), into buf. */
static const char *dev_name(dev_t d, char *buf, size_t n) {
        char path[64];
        _cleanup_free_ char *real = NULL;

        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major(d), minor(d));
        real = realpath(path, NULL);
        if (real && strrchr(real, '/'))
                snprintf(buf, n, "/dev/%s", strrchr(real, '/') + 1);
        else
                snprintf(buf, n, "%u:%u", major(d), minor(d));
        return buf;
}

/* What the device is built on, other than itself: the devices under it (slaves/, recursively),
 * their disks, and for a loop device the block device it reads and writes, if any. */
static void device_below(const struct device_probe *p, struct devset *below) {
        struct devset lower = {};
        struct stat st;

        lower_devices(p->id.rdev, &lower, 0);
        if (p->id.is_loop && p->id.backing_file && stat(p->id.backing_file, &st) == 0 && S_ISBLK(st.st_mode))
                lower_devices(st.st_rdev, &lower, 0);
        for (size_t i = 0; i < lower.n; i++)
                if (lower.v[i] != p->id.rdev)
                        devset_add(below, lower.v[i]);
        below->oom |= lower.oom;
        free(lower.v);
}

/* A loop device whose backing file is one of the devices in set (loop devices claim nothing and
 * leave no holders/ link). Its name into buf, or false. */
static bool loop_user_find(const struct devset *set, char *buf, size_t n) {
        struct dirent *de;
        bool found = false;
        DIR *dir = opendir("/sys/block");

        if (!dir)
                return false;
        while (!found && (de = readdir(dir))) {
                char path[PATH_MAX];
                char *bf = NULL;
                struct stat st;
                FILE *f;

                if (strncmp(de->d_name, "loop", 4) != 0 ||
                    snprintf(path, sizeof(path), "/sys/block/%s/loop/backing_file", de->d_name) >= (int) sizeof(path))
                        continue;
                f = fopen(path, "re");
                if (!f)
                        continue;
                {
                        size_t cap = 0;
                        ssize_t l = getline(&bf, &cap, f);

                        if (l > 0 && bf[l - 1] == '\n')
                                bf[l - 1] = '\0';
                }
                fclose(f);
                if (bf && stat(bf, &st) == 0 && S_ISBLK(st.st_mode) && devset_has(set, st.st_rdev)) {
                        if (snprintf(buf, n, "/dev/%s", de->d_name) >= (int) n)
                                snprintf(buf, n, "a loop device");
                        found = true;
                }
                free(bf);
        }
        closedir(dir);
        return found;
}

/* Every other reason the block device in p must not be written. */
static void device_check(struct device_probe *p, device_wiper_fn *wiper, const struct part_node *pn, size_t n_pn,
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

        /* Last: whoever else holds it exclusively (a mounter we did not see, a partitioner...). */
        if (!p->refusal) {
                r = open(p->id.node, O_RDONLY | O_EXCL | O_CLOEXEC);
                if (r < 0 && errno == EBUSY)
                        refuse(p, -EBUSY, "is open exclusively by another program");
                else if (r >= 0)
                        close(r);
        }
}

int device_probe(const char *path, device_wiper_fn *wiper, struct device_probe *p) {
        _cleanup_free_ char *node = NULL;
        _cleanup_close_ int fd = -1;
        struct devset family = {};
        struct part_node *pn = NULL;
        size_t n_pn = 0;
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

        /* The system's own disks are refused before anything else, even before opening them. */
        devset_add(&family, st.st_rdev);
        pn = sysfs_partitions(st.st_rdev, &family, &n_pn);
        p->id.node = strdup(node);
        {
                struct devset below = {};
                struct devset lower = {};

                lower_devices(st.st_rdev, &lower, 0);
                for (size_t i = 0; i < lower.n; i++)
                        if (lower.v[i] != st.st_rdev)
                                devset_add(&below, lower.v[i]);
                below.oom |= lower.oom;
                device_check_system(p, st.st_rdev, &family, &below);
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
        identity_read(&p->id, fd, node, st.st_rdev);
        if (!p->id.node || !p->id.name || !p->id.by_id) {
                part_nodes_free(pn, n_pn);
                free(family.v);
                return -ENOMEM;
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

/* The identity fields a confirmation is held to: what names one device and cannot change while it
 * stays the same device. Links, flags and topology may change; they are not compared. */
static const char *const expect_compared[] = {
        "node", "major", "minor", "size", "logical_sector", "physical_sector", "vendor", "model", "serial", "wwn",
        "partition", "loop",
};
/* Every member an identity has (device_identity_json()); an expectation holds only these. */
static const char *const expect_known[] = {
        "node", "name", "major", "minor", "size", "logical_sector", "physical_sector", "minimum_io", "optimal_io",
        "alignment_offset", "rotational", "removable", "read_only", "transport", "vendor", "model", "serial", "wwn",
        "by_id", "partition", "loop",
};

int device_expect_check(struct json_object *expect, char *err, size_t err_len) {
        static const char *const required[] = { "node", "major", "minor", "size" };

        if (!json_object_is_type(expect, json_type_object)) {
                snprintf(err, err_len, "must be an identity object (as probe returns it)");
                return -EINVAL;
        }
        json_object_object_foreach(expect, key, val) {
                bool known = false;

                (void) val;
                for (size_t i = 0; !known && i < sizeof(expect_known) / sizeof(expect_known[0]); i++)
                        known = strcmp(key, expect_known[i]) == 0;
                if (!known) {
                        snprintf(err, err_len, "has an unknown member \"%.64s\"", key);
                        return -EINVAL;
                }
        }
        for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
                struct json_object *v = NULL;

                if (!json_object_object_get_ex(expect, required[i], &v) || !v) {
                        snprintf(err, err_len, "needs \"%s\"", required[i]);
                        return -EINVAL;
                }
        }
        /* The compared members have the types an identity gives them (a string or null for the
         * names, a non-negative integer for the numbers, an object or null for partition and
         * loop): anything else is a malformed request, not another device. */
        for (size_t i = 0; i < sizeof(expect_compared) / sizeof(expect_compared[0]); i++) {
                const char *k = expect_compared[i];
                struct json_object *v = NULL;
                bool number = strcmp(k, "major") == 0 || strcmp(k, "minor") == 0 || strcmp(k, "size") == 0 ||
                              strcmp(k, "logical_sector") == 0 || strcmp(k, "physical_sector") == 0;
                bool object = strcmp(k, "partition") == 0 || strcmp(k, "loop") == 0;
                bool ok;

                if (!json_object_object_get_ex(expect, k, &v))
                        continue;
                if (number)
                        ok = json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0;
                else
                        ok = (!v && strcmp(k, "node") != 0) ||
                             json_object_is_type(v, object ? json_type_object : json_type_string);
                if (!ok) {
                        snprintf(err, err_len, "has \"%s\" of the wrong type", k);
                        return -EINVAL;
                }
        }
        return 0;
}

int device_expect_match(const struct device_identity *id, struct json_object *expect, char *what, size_t what_len) {
        _cleanup_json_ struct json_object *now = device_identity_json(id);

        if (!now)
                return -ENOMEM;
        for (size_t i = 0; i < sizeof(expect_compared) / sizeof(expect_compared[0]); i++) {
                const char *k = expect_compared[i];
                struct json_object *want = NULL, *got = NULL;

                /* Absent: not compared (a client that knows less); null: there must be none. */
                if (!json_object_object_get_ex(expect, k, &want))
                        continue;
                json_object_object_get_ex(now, k, &got);
                if (!json_object_equal(want, got)) {
                        const int f = JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE;
                        const char *w = want ? json_object_to_json_string_ext(want, f) : "null";

                        snprintf(what, what_len, "its %s is %s, not %.200s as confirmed", k,
                                 got ? json_object_to_json_string_ext(got, f) : "null", w);
                        return -ESTALE;
                }
        }
        return 0;
}

/* JSON renderings: see wipectl(1) for the schema. */

static struct json_object *json_str(const char *s) {
        return s ? json_object_new_string(s) : NULL;
}

struct json_object *device_identity_json(const struct device_identity *id) {
        struct json_object *o = json_object_new_object(), *links = json_object_new_array();

        if (!o || !links) {
                json_object_put(o);
                json_object_put(links);
                return NULL;
        }
        json_object_object_add(o, "node", json_str(id->node));
        json_object_object_add(o, "name", json_str(id->name));
        json_object_object_add(o, "major", json_object_new_int((int) major(id->rdev)));
        json_object_object_add(o, "minor", json_object_new_int((int) minor(id->rdev)));
        json_object_object_add(o, "size", json_object_new_uint64(id->size));
        json_object_object_add(o, "logical_sector", json_object_new_int64(id->logical_sector));
        json_object_object_add(o, "physical_sector", json_object_new_int64(id->physical_sector));
        json_object_object_add(o, "minimum_io", json_object_new_int64(id->minimum_io));
        json_object_object_add(o, "optimal_io", json_object_new_int64(id->optimal_io));
        json_object_object_add(o, "alignment_offset", json_object_new_int64(id->alignment_offset));
        json_object_object_add(o, "rotational", json_object_new_boolean(id->rotational));
        json_object_object_add(o, "removable", json_object_new_boolean(id->removable));
        json_object_object_add(o, "read_only", json_object_new_boolean(id->read_only));
        json_object_object_add(o, "transport", json_str(id->transport));
        json_object_object_add(o, "vendor", json_str(id->vendor));
        json_object_object_add(o, "model", json_str(id->model));
        json_object_object_add(o, "serial", json_str(id->serial));
        json_object_object_add(o, "wwn", json_str(id->wwn));
        for (size_t i = 0; id->by_id && id->by_id[i]; i++)
                json_object_array_add(links, json_object_new_string(id->by_id[i]));
        json_object_object_add(o, "by_id", links);
        if (id->partition > 0) {
                struct json_object *pt = json_object_new_object();

                json_object_object_add(pt, "number", json_object_new_int(id->partition));
                json_object_object_add(pt, "start", json_object_new_uint64(id->part_start));
                json_object_object_add(o, "partition", pt);
        }
        if (id->is_loop) {
                struct json_object *l = json_object_new_object();
                char devno[32];

                snprintf(devno, sizeof(devno), "%u:%u", major(id->backing_dev), minor(id->backing_dev));
                json_object_object_add(l, "backing_file", json_str(id->backing_file));
                json_object_object_add(l, "backing_inode", json_object_new_uint64(id->backing_inode));
                json_object_object_add(l, "backing_device", json_object_new_string(devno));
                json_object_object_add(o, "loop", l);
        }
        return o;
}

struct json_object *device_signatures_json(const struct device_signature *s, size_t n) {
        struct json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < n; i++) {
                struct json_object *o = json_object_new_object();

                json_object_object_add(o, "type", json_str(s[i].type));
                json_object_object_add(o, "usage", json_str(s[i].usage));
                json_object_object_add(o, "label", json_str(s[i].label));
                json_object_object_add(o, "uuid", json_str(s[i].uuid));
                json_object_object_add(o, "offset", json_object_new_uint64(s[i].offset));
                /* After a wipe: whether the bytes there are the last pass's own (a chance match). */
                if (s[i].written >= 0)
                        json_object_object_add(o, "matches_last_pass", json_object_new_boolean(s[i].written));
                json_object_array_add(a, o);
        }
        return a;
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

/* ---- finding a device again by what it is ---- */

bool device_identity_same(const struct device_identity *a, const struct device_identity *b, bool same_number,
                          const char **what) {
#define SAME_STR(x, y) ((!(x) && !(y)) || ((x) && (y) && strcmp((x), (y)) == 0))
        if (same_number && a->rdev != b->rdev)
                *what = "device number";
        else if (a->size != b->size)
                *what = "size";
        else if (a->logical_sector != b->logical_sector || a->physical_sector != b->physical_sector)
                *what = "sector size";
        else if (!SAME_STR(a->model, b->model))
                *what = "model";
        else if (!SAME_STR(a->serial, b->serial))
                *what = "serial";
        else if (!SAME_STR(a->wwn, b->wwn))
                *what = "WWN";
        else if (a->partition != b->partition || a->part_start != b->part_start)
                *what = "partition number or start";
        else if (a->is_loop != b->is_loop || a->backing_inode != b->backing_inode || a->backing_dev != b->backing_dev ||
                 !SAME_STR(a->backing_file, b->backing_file))
                *what = "loop backing file";
        else
                return true;
        return false;
#undef SAME_STR
}

bool device_identity_strong(const struct device_identity *id) {
        return (id->serial && *id->serial) || (id->wwn && *id->wwn) || (id->is_loop && id->backing_file && id->backing_inode);
}

int device_identity_of(const char *path, struct device_identity *id) {
        _cleanup_close_ int fd = -1;
        struct stat st;

        *id = (struct device_identity) {};
        /* Read-only and shared: looking does not disturb a device someone else holds. */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISBLK(st.st_mode))
                return -ENOTBLK;
        identity_read(id, fd, path, st.st_rdev);
        return id->node && id->name ? 0 : -ENOMEM;
}

int device_find_identity(const struct device_identity *want, char **ret) {
        _cleanup_free_ char *found = NULL;
        DIR *d = opendir("/sys/class/block");
        struct dirent *e;
        unsigned matches = 0;

        if (!d)
                return -errno;
        while ((e = readdir(d))) {
                struct device_identity id;
                char path[PATH_MAX], node[PATH_MAX];
                const char *what;
                unsigned long long sectors;
                FILE *f;
                int ok;

                if (e->d_name[0] == '.')
                        continue;
                /* The size first: most devices are told apart without opening them. */
                snprintf(path, sizeof(path), "/sys/class/block/%s/size", e->d_name);
                f = fopen(path, "re");
                if (!f)
                        continue;
                ok = fscanf(f, "%llu", &sectors) == 1;
                fclose(f);
                if (!ok || sectors * 512ULL != want->size)
                        continue;
                snprintf(node, sizeof(node), "/dev/%s", e->d_name);
                if (device_identity_of(node, &id) < 0) {
                        device_identity_done(&id);
                        continue;
                }
                if (device_identity_same(want, &id, false, &what)) {
                        matches++;
                        if (!found)
                                found = strdup(node);
                }
                device_identity_done(&id);
        }
        closedir(d);
        if (matches == 0)
                return -ENODEV;
        if (matches > 1)
                return -ENOTUNIQ;
        if (!found)
                return -ENOMEM;
        *ret = TAKE_PTR(found);
        return 0;
}
