/* The block devices of the machine, as `wipectl devices` shows them: what lsblk lists by default
 * (every disk and loop device in /sys/block with a size, RAM disks aside, and their partitions),
 * each with what is on it and the daemon's own answer to "may it be wiped, and if not, why", from
 * the same checks a submit makes (device-policy.c).
 * Looking never disturbs: a device is opened read-only, never for writing, no firmware command is
 * sent (the firmware capabilities are left to probe), and, unlike a probe and a submit, nothing
 * is opened O_EXCL: anyone may list, as often as they like, and an exclusive open of ours would
 * make another program's (mkfs, mount, cryptsetup) fail at that instant. So a device that another
 * program holds open exclusively, without a holder or a mount, is listed wipeable and refused at
 * submit; each row says so ("exclusive_checked": false).
 * Runs on the main thread (the devices request). */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cleanup.h"
#include "device-private.h"
#include "protocol.h"
#include "strutil.h"

/* Probe the block device node (device number rdev) as device_probe() does, but without asking
 * its firmware anything and without the exclusive open. 0 (a refusal is in p), or -ENOMEM. */
static int list_probe(const char *node, dev_t rdev, device_wiper_fn *wiper, struct device_probe *p) {
        *p = (struct device_probe) { .no_exclusive_open = true };
        p->path = strdup(node);
        p->id.node = strdup(node);
        if (!p->path || !p->id.node)
                return -ENOMEM;
        return device_probe_node(p, node, rdev, wiper, false);
}

/* What is on a probed device, in a word as lsblk's FSTYPE/PTTYPE: its first file system, RAID,
 * LVM or crypto signature, else its partition table type; NULL when nothing was found. */
static const char *list_content(const struct device_probe *p) {
        for (size_t i = 0; i < p->n_sigs; i++)
                if (p->sigs[i].usage && strcmp(p->sigs[i].usage, "partition_table") != 0)
                        return p->sigs[i].type;
        if (p->pt_type)
                return p->pt_type;
        return p->n_sigs > 0 ? p->sigs[0].type : NULL;
}

/* The row of the device node (device number rdev), a disk or a partition. NULL on ENOMEM. */
static struct json_object *list_row(const char *node, dev_t rdev, bool partition, device_wiper_fn *wiper) {
        struct device_probe p;
        _cleanup_json_ struct json_object *o = NULL;
        _cleanup_free_ char *mnt = NULL, *holder = NULL;
        struct devset self = {};
        dev_t which = 0;
        const char *name = strrchr(node, '/') ? strrchr(node, '/') + 1 : node;

        if (list_probe(node, rdev, wiper, &p) < 0) {
                device_probe_done(&p);
                return NULL;
        }
        o = json_object_new_object();
        if (!o) {
                device_probe_done(&p);
                return NULL;
        }
        devset_add(&self, rdev);
        mnt = mount_find(&self, &which);
        if (!mnt && swap_find(&self))
                mnt = strdup("[SWAP]");
        free(self.v);
        holder = holder_find(rdev);

        json_object_object_add(o, "name", json_str(name));
        json_object_object_add(o, "node", json_str(node));
        json_object_object_add(o, "type", json_object_new_string(partition ? "part" : p.id.is_loop ? "loop" : "disk"));
        if (p.have_identity)
                json_object_object_add(o, "size_bytes", json_object_new_uint64(p.id.size));
        else {
                /* Not opened (no node, or refused before): sysfs still knows its size. */
                _cleanup_free_ char *sectors = sysfs_read(rdev, "size");

                json_object_object_add(o, "size_bytes", sectors ? json_object_new_uint64(strtoull(sectors, NULL, 10) * 512) : NULL);
        }
        json_object_object_add(o, "model", json_str(p.id.model));
        json_object_object_add(o, "serial", json_str(p.id.serial));
        json_object_object_add(o, "transport", json_str(p.id.transport));
        json_object_object_add(o, "rotational", json_object_new_boolean(p.have_identity ? p.id.rotational :
                                                                        sysfs_flag(whole_disk(rdev), "queue/rotational")));
        json_object_object_add(o, "read_only", p.have_identity ? json_object_new_boolean(p.id.read_only) : NULL);
        json_object_object_add(o, "backing_file", json_str(p.id.backing_file));
        json_object_object_add(o, "content", json_str(list_content(&p)));
        json_object_object_add(o, "signatures", device_signatures_json(p.sigs, p.n_sigs));
        json_object_object_add(o, "holder", json_str(holder));
        json_object_object_add(o, "mountpoint", json_str(mnt));
        json_object_object_add(o, "wipeable", json_object_new_boolean(p.refusal == 0));
        json_object_object_add(o, "exclusive_checked", json_object_new_boolean(false));
        if (p.refusal) {
                struct json_object *e = json_object_new_object();

                json_object_object_add(e, "code", json_object_new_string(protocol_errno_name(p.refusal)));
                json_object_object_add(e, "message", json_str(p.refusal_msg));
                json_object_object_add(o, "refusal", e);
        } else
                json_object_object_add(o, "refusal", NULL);
        device_probe_done(&p);
        return TAKE_PTR(o);
}

/* Natural order, as people number devices: a run of digits compares as a number, so loop2
 * comes before loop10 and nvme0n2 before nvme0n10. */
static int name_cmp(const void *a, const void *b) {
        const char *x = *(const char *const *) a, *y = *(const char *const *) b;

        while (*x && *y) {
                if (isdigit((unsigned char) *x) && isdigit((unsigned char) *y)) {
                        size_t lx, ly;
                        int d;

                        while (*x == '0' && isdigit((unsigned char) x[1]))
                                x++;
                        while (*y == '0' && isdigit((unsigned char) y[1]))
                                y++;
                        lx = strspn(x, "0123456789");
                        ly = strspn(y, "0123456789");
                        if (lx != ly)
                                return lx < ly ? -1 : 1;
                        d = strncmp(x, y, lx);
                        if (d)
                                return d;
                        x += lx;
                        y += ly;
                        continue;
                }
                if (*x != *y)
                        return (unsigned char) *x < (unsigned char) *y ? -1 : 1;
                x++;
                y++;
        }
        return *x ? 1 : *y ? -1 : 0;
}

static void list_names_free(char **v) {
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
}

/* The names of the entries of /sys/block, sorted; NULL-terminated, or NULL on error. */
static char **list_names(void) {
        DIR *dir = opendir("/sys/block");
        struct dirent *de;
        char **v = calloc(1, sizeof(*v));
        size_t n = 0;

        if (!dir || !v) {
                if (dir)
                        closedir(dir);
                free(v);
                return NULL;
        }
        while ((de = readdir(dir))) {
                char **nv;

                if (de->d_name[0] == '.')
                        continue;
                nv = realloc(v, (n + 2) * sizeof(*v));
                if (!nv)
                        goto fail;
                v = nv;
                v[n] = strdup(de->d_name);
                if (!v[n])
                        goto fail;
                v[++n] = NULL;
        }
        closedir(dir);
        qsort(v, n, sizeof(*v), name_cmp);
        return v;
fail:
        /* Not a shorter list: the caller says it could not list. */
        closedir(dir);
        list_names_free(v);
        return NULL;
}

/* The device number of /sys/block/name, 0 when unknown. */
static dev_t list_devno(const char *name) {
        char path[PATH_MAX];
        _cleanup_free_ char *s = NULL;
        FILE *f;
        size_t cap = 0;
        dev_t d = 0;

        snprintf(path, sizeof(path), "/sys/block/%s/dev", name);
        f = fopen(path, "re");
        if (!f)
                return 0;
        if (getline(&s, &cap, f) > 0) {
                s[strcspn(s, "\n")] = '\0';
                if (parse_devno(s, &d) < 0)
                        d = 0;
        }
        fclose(f);
        return d;
}

/* Whether the whole disk d has no size (an unattached loop device, an empty card reader). */
static bool list_empty(dev_t d) {
        _cleanup_free_ char *size = sysfs_read(d, "size");

        return !size || strtoull(size, NULL, 10) == 0;
}

struct json_object *device_list_json(device_wiper_fn *wiper) {
        _cleanup_json_ struct json_object *arr = json_object_new_array();
        char **names = list_names();
        int r = 0;

        if (!arr || !names) {
                list_names_free(names);
                return NULL;
        }
        for (size_t i = 0; names[i] && r == 0; i++) {
                struct json_object *row, *parts;
                struct part_node *pn = NULL;
                struct devset devs = {};
                size_t n_pn = 0;
                char node[PATH_MAX];
                dev_t d = list_devno(names[i]);

                /* RAM disks (major 1) are left out, as lsblk leaves them out by default. */
                if (d == 0 || major(d) == 1 || list_empty(d))
                        continue;
                snprintf(node, sizeof(node), "/dev/%s", names[i]);
                row = list_row(node, d, false, wiper);
                parts = json_object_new_array();
                if (!row || !parts) {
                        json_object_put(row);
                        json_object_put(parts);
                        r = -ENOMEM;
                        break;
                }
                pn = sysfs_partitions(d, &devs, &n_pn);
                for (size_t k = 0; k + 1 < n_pn; k++)       /* by partition number */
                        for (size_t m = k + 1; m < n_pn; m++)
                                if (pn[m].number < pn[k].number) {
                                        struct part_node t = pn[k];

                                        pn[k] = pn[m];
                                        pn[m] = t;
                                }
                for (size_t k = 0; k < n_pn; k++) {
                        struct json_object *prow;

                        snprintf(node, sizeof(node), "/dev/%s", pn[k].name);
                        prow = list_row(node, pn[k].dev, true, wiper);
                        if (!prow) {
                                r = -ENOMEM;
                                break;
                        }
                        json_object_array_add(parts, prow);
                }
                part_nodes_free(pn, n_pn);
                free(devs.v);
                json_object_object_add(row, "partitions", parts);
                json_object_array_add(arr, row);
        }
        list_names_free(names);
        return r < 0 ? NULL : TAKE_PTR(arr);
}

int device_probe_listed(const char *node, dev_t rdev, device_wiper_fn *wiper, struct device_probe *p) {
        return list_probe(node, rdev, wiper, p);
}

char **device_links(const char *node) {
        return disk_links(node);
}

void device_links_free(char **links) {
        list_names_free(links);
}
