/* Devices as the kernel and udev describe them: attributes in sysfs, the partitions the kernel
 * knows, whole disks, the devices a device is built on (slaves/) and those built on it (holders/),
 * loop devices' backing files, the udev database's properties and the /dev/disk links, the queue
 * limits of the block layer's erase offloads; and the sets of device numbers these walks fill.
 * Facts only: what they mean for a wipe is decided in device-policy.c.
 * Runs on the main thread (probe, open, resume). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cleanup.h"
#include "strutil.h"
#include "device-private.h"
#include "utf8.h"

void devset_add(struct devset *s, dev_t d) {
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

bool devset_has(const struct devset *s, dev_t d) {
        for (size_t i = 0; i < s->n; i++)
                if (s->v[i] == d)
                        return true;
        return false;
}

/* Read /sys/dev/block/M:m/<attr> into a malloc'd string without trailing white space; NULL when
 * missing or empty. */
char *sysfs_read(dev_t d, const char *attr) {
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

char *sysfs_vpd_serial(dev_t d) {
        char path[PATH_MAX];
        uint8_t buf[256];
        size_t n, len;
        ssize_t r;
        int fd;

        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/device/vpd_pg80", major(d), minor(d));
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        r = read(fd, buf, sizeof(buf));
        close(fd);
        /* SPC-4 7.8.16: page code 80h, then the page length and the serial number, in ASCII,
         * padded with blanks (right-aligned by some, left by others). */
        if (r < 4 || buf[1] != 0x80)
                return NULL;
        n = (size_t) r;
        len = (size_t) buf[2] << 8 | buf[3];
        if (len > n - 4)
                len = n - 4;
        while (len > 0 && (buf[4 + len - 1] == ' ' || buf[4 + len - 1] == '\0'))
                len--;
        n = 0;
        while (n < len && buf[4 + n] == ' ')
                n++;
        if (n == len)
                return NULL;
        {
                char *s = strndup((const char *) buf + 4 + n, len - n);

                return s ? utf8_sanitize(s) : NULL;
        }
}

bool sysfs_flag(dev_t d, const char *attr) {
        _cleanup_free_ char *s = sysfs_read(d, attr);

        return s && strcmp(s, "0") != 0;
}

/* A non-negative number in /sys/dev/block/M:m/<attr>, or -1 when the file is missing or holds
 * something else. */
static int64_t sysfs_number(dev_t d, const char *attr) {
        _cleanup_free_ char *s = sysfs_read(d, attr);
        unsigned long long v;
        char *end = NULL;

        if (!s || *s < '0' || *s > '9')
                return -1;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno || *end || v > INT64_MAX)
                return -1;
        return (int64_t) v;
}

void sysfs_erase_read(dev_t d, struct device_erase *e) {
        /* A partition has no queue/ of its own: the limits are its disk's. */
        dev_t disk = whole_disk(d);

        e->discard_max = sysfs_number(disk, "queue/discard_max_bytes");
        e->discard_granularity = sysfs_number(disk, "queue/discard_granularity");
        e->write_zeroes_max = sysfs_number(disk, "queue/write_zeroes_max_bytes");
        e->write_zeroes_unmap_max = sysfs_number(disk, "queue/write_zeroes_unmap_max_bytes");
}

void part_nodes_free(struct part_node *v, size_t n) {
        for (size_t i = 0; v && i < n; i++)
                free(v[i].name);
        free(v);
}

/* The partitions of whole disk d, from sysfs; added to devs too. */
struct part_node *sysfs_partitions(dev_t d, struct devset *devs, size_t *n_ret) {
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
dev_t whole_disk(dev_t d) {
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
void lower_devices(dev_t d, struct devset *s, unsigned depth) {
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

/* The first holder of d ("dm-0"), described as "dm-0 (device-mapper 'name')"; NULL when none. */
char *holder_find(dev_t d) {
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

void udev_props_done(struct udev_props *u) {
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

void udev_read(dev_t d, struct udev_props *u) {
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
char **by_id_links(const char *node) {
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
char *transport_of(const struct device_identity *id, const char *bus) {
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

/* Every link in the directories /dev/disk/by-* (by-id, by-path, by-uuid, by-label, ...) that
 * resolves to node, NULL-terminated; NULL on ENOMEM. */
char **disk_links(const char *node) {
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

/* The kernel name of block device d ("sda2"), into buf. */
const char *dev_name(dev_t d, char *buf, size_t n) {
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
void device_below(const struct device_probe *p, struct devset *below) {
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
bool loop_user_find(const struct devset *set, char *buf, size_t n) {
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
