/* What libblkid finds on a device: every signature (as wipefs lists them), and the partition
 * table with the file system inside each partition. (The topology libblkid reports is read with
 * the identity, in device-identity.c.)
 * Runs on the main thread (probe); device_signatures_read() also runs where a job's last stage
 * ends (the flusher, a worker, or the main thread on resume): the probe after a wipe. Nothing is
 * shared between calls. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fs.h>
#include <blkid/blkid.h>

#include "cleanup.h"
#include "device-private.h"

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
int signatures_scan(int fd, struct device_signature **ret, size_t *n_ret) {
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
void partitions_scan(struct device_probe *p, int fd, const struct part_node *pn, size_t n_pn) {
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

/* JSON rendering: see wipectl(1) for the schema. */
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
