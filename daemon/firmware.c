/* What a drive's firmware can do to erase itself: which command set the device speaks, whether
 * firmware commands may be sent to it at all, and the command set's module for the rest
 * (firmware.h). Runs on the main thread, within a probe; sends only commands that read.
 *
 * The command set is found by asking the device, as nvme-cli, hdparm and smartctl do, not from
 * its transport's name: an NVMe namespace answers NVME_IOCTL_ID with its namespace id; a device
 * that answers SG_IO is SCSI, and one whose ATA Information VPD page (SAT-4 12.4.2) is there is an
 * ATA drive behind the kernel's SCSI/ATA translation (libata) or a SAT bridge. The transport only
 * refuses: behind a USB bridge nothing is sent (bridges are known to mistranslate, lock or brick
 * drives on security and sanitize commands), nor to a partition (firmware erase acts on the whole
 * drive, so it is probed on the disk). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/nvme_ioctl.h>
#include <scsi/sg.h>
#include <json-c/json.h>

#include "daemon.h"
#include "firmware.h"

const char *fw_command_set_name(enum fw_command_set s) {
        switch (s) {
        case FW_SET_NVME:
                return "nvme";
        case FW_SET_ATA:
                return "ata";
        case FW_SET_SCSI:
                return "scsi";
        case FW_SET_NONE:
                break;
        }
        return "none";
}

int fw_sg_io(int fd, const uint8_t *cdb, size_t cdb_len, void *data, size_t len, int dir, uint8_t *sense,
             size_t sense_len, size_t *sense_got, unsigned timeout_ms, int *status, size_t *resid) {
        sg_io_hdr_t h = {
                .interface_id = 'S',
                .cmd_len = (unsigned char) cdb_len,
                .cmdp = (unsigned char *) cdb,
                .dxfer_direction = dir < 0 ? SG_DXFER_FROM_DEV : dir > 0 ? SG_DXFER_TO_DEV : SG_DXFER_NONE,
                .dxferp = len ? data : NULL,
                .dxfer_len = (unsigned) len,
                .sbp = sense,
                .mx_sb_len = (unsigned char) (sense_len > 255 ? 255 : sense_len),
                .timeout = timeout_ms,
        };

        if (cdb_len == 0 || cdb_len > 16)
                return -EINVAL;
        if (ioctl(fd, SG_IO, &h) < 0)
                return -errno;
        /* The host adapter or driver could not deliver it: as good as not sent. */
        if (h.host_status != 0 || ((h.driver_status & 0x0f) != 0 && (h.driver_status & 0x0f) != 0x08 /* SENSE */))
                return -EIO;
        if (sense_got)
                *sense_got = h.sb_len_wr;
        if (resid)
                *resid = h.resid > 0 ? (size_t) h.resid : 0;
        *status = h.status;
        return 0;
}

/* A module's result r: -ENOMEM as it is; else what it could not read, err (taken) when it said,
 * else what failed and why, into c->error. A module may have read the rest: its caps stay. 0 or
 * -ENOMEM. */
static int fw_error(struct fw_caps *c, char *err, const char *what, int r) {
        if (r == -ENOMEM) {
                free(err);
                return r;
        }
        if (!err && r < 0 && asprintf(&err, "%s: %s", what, strerror(-r)) < 0)
                return -ENOMEM;
        free(c->error);
        c->error = err;
        return 0;
}

int fw_probe(int fd, const struct device_identity *id, struct fw_caps *c) {
        char *err = NULL;
        int r;

        *c = (struct fw_caps) {};
        if (id->transport && strcmp(id->transport, "usb") == 0) {
                c->refused = strdup("behind a USB bridge: firmware erase commands through USB bridges are known to "
                                    "lock or brick drives, and are never sent");
                return c->refused ? 0 : -ENOMEM;
        }
        if (id->partition > 0) {
                c->refused = strdup("a partition: firmware erase acts on the whole drive (probe the disk)");
                return c->refused ? 0 : -ENOMEM;
        }
        /* A loop device answers neither (ENOTTY): two ioctls. The drive simulator of the tests
         * (tests/sim) answers them at the ioctl boundary for a loop device it was given. */
        r = ioctl(fd, NVME_IOCTL_ID);
        if (r > 0) {
                c->set = FW_SET_NVME;
                r = fw_nvme_probe(fd, (uint32_t) r, id, &c->nvme, &err);
                return fw_error(c, err, "NVMe", r);
        }

        r = fw_scsi_is_ata(fd);
        if (r < 0)
                /* No SG_IO (ENOTTY, EINVAL: loop, virtio, mmc, ...): no firmware commands reach it. */
                return 0;
        if (r > 0) {
                c->set = FW_SET_ATA;
                r = fw_ata_probe(fd, &c->ata, &err);
                return fw_error(c, err, "ATA", r);
        }
        c->set = FW_SET_SCSI;
        r = fw_scsi_probe(fd, &c->scsi, &err);
        return fw_error(c, err, "SCSI", r);
}

void fw_caps_done(struct fw_caps *c) {
        if (!c)
                return;
        free(c->refused);
        free(c->error);
        fw_nvme_caps_done(&c->nvme);
        *c = (struct fw_caps) {};
}

/* What each firmware method would send to this drive now, or why it would be refused:
 * {"sanitize": {"command": "sanitize-crypto"} or {"refused": "..."}, ..., "purge": ...}. */
static struct json_object *fw_methods_json(const struct fw_caps *c) {
        static const char *const names[] = { "sanitize", "sanitize-crypto", "sanitize-block", "sanitize-overwrite",
                                             "nvme-format", "ata-secure-erase", "purge" };
        struct json_object *o = json_object_new_object();

        for (size_t i = 0; o && i < sizeof(names) / sizeof(names[0]); i++) {
                struct json_object *m = json_object_new_object();
                struct fw_command cmd;
                char why[768];
                int r;

                if (i == 0 || i + 1 == sizeof(names) / sizeof(names[0]))
                        r = fw_resolve_best(c, i == 0, &cmd, why, sizeof(why));
                else {
                        r = fw_resolve(c, fw_action_from_name(names[i]), &cmd, why, sizeof(why));
                        /* The reason without the method's name in front. */
                        if (r < 0 && strncmp(why, names[i], strlen(names[i])) == 0 && why[strlen(names[i])] == ':')
                                memmove(why, why + strlen(names[i]) + 2, strlen(why + strlen(names[i]) + 2) + 1);
                }
                if (r == 0)
                        json_object_object_add(m, "command", json_object_new_string(fw_action_name(cmd.action)));
                else
                        json_object_object_add(m, "refused", json_object_new_string(why));
                json_object_object_add(o, names[i], m);
        }
        return o;
}

struct json_object *fw_caps_json(const struct fw_caps *c) {
        struct json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "command_set", json_object_new_string(fw_command_set_name(c->set)));
        json_object_object_add(o, "refused", c->refused ? json_object_new_string(c->refused) : NULL);
        json_object_object_add(o, "error", c->error ? json_object_new_string(c->error) : NULL);
        json_object_object_add(o, "nvme", c->set == FW_SET_NVME ? fw_nvme_json(&c->nvme) : NULL);
        json_object_object_add(o, "ata", c->set == FW_SET_ATA ? fw_ata_json(&c->ata) : NULL);
        json_object_object_add(o, "scsi", c->set == FW_SET_SCSI ? fw_scsi_json(&c->scsi) : NULL);
        json_object_object_add(o, "methods", fw_methods_json(c));
        return o;
}
