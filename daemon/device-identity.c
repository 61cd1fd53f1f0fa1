/* What a device is (struct device_identity): read through an open descriptor, sysfs, udev and
 * libblkid's topology; compared with another identity (is it still the same device?) and with one
 * a client confirmed; found again among the present devices; rendered as JSON.
 * Runs on the main thread (probe, open, submit, resume, status). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <blkid/blkid.h>

#include "cleanup.h"
#include "device-private.h"
#include "utf8.h"

/* Strings from devices (labels, names, firmware strings) are any bytes: they are kept as valid
 * UTF-8, so that what they show in a reply, a record or a report is JSON text. */
char *dup_or_null(const char *s) {
        return s && *s ? utf8_sanitize(strdup(s)) : NULL;
}

/* Fill the identity of the block device node (rdev) from an O_RDONLY fd, sysfs, udev, libblkid. */
void identity_read(struct device_identity *id, int fd, const char *node, dev_t rdev) {
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
        /* A partition has no queue of its own: its disk's says. */
        id->rotational = sysfs_flag(whole_disk(rdev), "queue/rotational");
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
        if (!id->serial)
                id->serial = sysfs_vpd_serial(whole_disk(rdev));
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

/* The identity fields a confirmation is held to: what names one device and cannot change while it
 * stays the same device. Links, flags and topology may change; they are not compared. */
static const char *const expect_compared[] = {
        "node", "major", "minor", "size", "size_bytes", "logical_sector", "physical_sector", "vendor", "model",
        "serial", "wwn", "partition", "loop",
};
/* Every member an identity has (device_identity_json()); an expectation holds only these. */
static const char *const expect_known[] = {
        "node", "name", "major", "minor", "size", "size_bytes", "logical_sector", "physical_sector", "minimum_io",
        "optimal_io",
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
                bool number = strcmp(k, "major") == 0 || strcmp(k, "minor") == 0 || strcmp(k, "size") == 0 || strcmp(k, "size_bytes") == 0 ||
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

struct json_object *json_str(const char *s) {
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
        /* "size" is the deprecated name of size_bytes (wiped(8), NAMES AND UNITS): both for one
         * release. An expectation from an older wipectl has only "size". */
        json_object_object_add(o, "size_bytes", json_object_new_uint64(id->size));
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
