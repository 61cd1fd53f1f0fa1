/* A job's firmware side at submit (main thread): the firmware erase passes resolved into the
 * drive's own commands (sanitize and purge into the strongest it has, purge's fallback), the
 * namespaces such a command also erases checked, and an ATA drive's hidden area restored, refused
 * or recorded (hidden-area). Nothing here runs a firmware erase: fw-step.c does, on its thread. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/sysmacros.h>
#include <linux/fs.h>

#include "daemon-config.h"
#include "daemon.h"
#include "fw-ata.h"
#include "job-private.h"

/* The firmware action of a pass that names one. */
static enum fw_action pass_fw_action(enum pass_op op) {
        switch (op) {
        case PASS_OP_SANITIZE_CRYPTO:
                return FW_ACTION_SANITIZE_CRYPTO;
        case PASS_OP_SANITIZE_BLOCK:
                return FW_ACTION_SANITIZE_BLOCK;
        case PASS_OP_SANITIZE_OVERWRITE:
                return FW_ACTION_SANITIZE_OVERWRITE;
        case PASS_OP_NVME_FORMAT:
                return FW_ACTION_NVME_FORMAT;
        case PASS_OP_ATA_SECURE_ERASE:
                return FW_ACTION_ATA_SECURITY_ERASE;
        default:
                return FW_ACTION_NONE;
        }
}

static enum pass_op fw_action_pass_op(enum fw_action a) {
        switch (a) {
        case FW_ACTION_SANITIZE_CRYPTO:
                return PASS_OP_SANITIZE_CRYPTO;
        case FW_ACTION_SANITIZE_BLOCK:
                return PASS_OP_SANITIZE_BLOCK;
        case FW_ACTION_SANITIZE_OVERWRITE:
                return PASS_OP_SANITIZE_OVERWRITE;
        case FW_ACTION_NVME_FORMAT:
                return PASS_OP_NVME_FORMAT;
        case FW_ACTION_ATA_SECURITY_ERASE:
                return PASS_OP_ATA_SECURE_ERASE;
        case FW_ACTION_NONE:
                break;
        }
        return PASS_OP_WRITE;
}

/* A command that acts on every namespace of an NVMe controller: every other namespace must pass
 * the refusals a wipe of it would meet, and is then held open O_EXCL (job->ns_fds) until the job
 * ends, so that nothing mounts or claims it before the command is sent. 0, or -EBUSY with the
 * ones that do not pass in err, or -ENOMEM. */
int job_hold_namespaces(struct job *job, const struct device_probe *probe, const struct fw_command *c, char *err,
                        size_t err_len) {
        char **ns = probe->firmware.nvme.namespaces;
        const char *node = job->info.node;
        size_t used = 0, n = 0;
        int *fds, r = 0;

        if (!c->all_namespaces || !ns || job->n_ns_fds > 0)
                return 0;
        while (ns[n])
                n++;
        fds = calloc(n ? n : 1, sizeof(*fds));
        if (!fds)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                struct device_probe other;
                const char *why = NULL;
                int fd = -1;

                fds[i] = -1;
                if (strcmp(ns[i], node) == 0 || strcmp(ns[i], probe->id.node) == 0)
                        continue;
                if (device_probe(ns[i], job_wiping, &other) < 0) {
                        device_probe_done(&other);
                        r = -ENOMEM;
                        break;
                }
                if (other.refusal)
                        why = other.refusal_msg ? other.refusal_msg : ns[i];
                else if ((fd = open(ns[i], O_RDONLY | O_EXCL | O_CLOEXEC)) < 0)
                        why = errno == EBUSY ? "is open exclusively by another program" : strerror(errno);
                if (why) {
                        if (r == 0)
                                used = (size_t) snprintf(err, err_len, "%s: refusing %s: it acts on every namespace of the "
                                                         "controller, and not all of them may be wiped:", node,
                                                         fw_action_name(c->action));
                        if (used < err_len)
                                used += (size_t) snprintf(err + used, err_len - used, " %s%s%s", other.refusal ? "" : ns[i],
                                                          other.refusal ? "" : ": ", why);
                        r = -EBUSY;
                }
                fds[i] = fd;
                device_probe_done(&other);
        }
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        if (fds[i] >= 0)
                                close(fds[i]);
                free(fds);
                return r;
        }
        pthread_mutex_lock(&job->lock);
        job->ns_fds = fds;
        job->n_ns_fds = n;
        pthread_mutex_unlock(&job->lock);
        return 0;
}

void job_release_namespaces(struct job *job) {
        int *fds;
        size_t n;

        pthread_mutex_lock(&job->lock);
        fds = job->ns_fds;
        n = job->n_ns_fds;
        job->ns_fds = NULL;
        job->n_ns_fds = 0;
        pthread_mutex_unlock(&job->lock);
        for (size_t i = 0; i < n; i++)
                if (fds[i] >= 0)
                        close(fds[i]);
        free(fds);
}

/* Resolve the firmware erase passes for this drive: sanitize and purge into the strongest command
 * it has (purge: or its fallback pass), every other into its command, each checked against what
 * the probe found. 0, or -errno with why in err (nothing was sent to the drive). */
int job_resolve_firmware(struct job *job, const struct device_probe *probe, char *err, size_t err_len) {
        for (unsigned i = 0; i < job->n_passes; i++) {
                struct job_pass *p = &job->passes[i];
                enum pass_op op = p->pass.op;
                struct fw_command c;
                char why[768];
                int r;

                if (!pass_op_firmware(op))
                        continue;
                if (op == PASS_OP_SANITIZE || op == PASS_OP_PURGE)
                        r = fw_resolve_best(&probe->firmware, op == PASS_OP_SANITIZE, &c, why, sizeof(why));
                else
                        r = fw_resolve(&probe->firmware, pass_fw_action(op), &c, why, sizeof(why));
                if (r < 0 && op == PASS_OP_PURGE) {
                        const char *fb = config_purge_fallback();

                        if (strcmp(fb, "refuse") == 0) {
                                snprintf(err, err_len, "%s: refusing purge: %s (and purge-fallback is refuse)",
                                         job->info.node, why);
                                return r;
                        }
                        /* The fallback writes: Clear, not Purge, and the report says so. */
                        if (pass_parse(fb, &p->pass) < 0 || pass_op_firmware(p->pass.op)) {
                                snprintf(err, err_len, "%s: refusing purge: the fallback \"%s\" is not a pass", job->info.node, fb);
                                return -EINVAL;
                        }
                        free(job->purge_fallback);
                        if (asprintf(&job->purge_fallback, "%s; pass %u is the fallback %s (NIST SP 800-88 Clear)", why,
                                     i + 1, fb) < 0) {
                                job->purge_fallback = NULL;
                                return -ENOMEM;
                        }
                        continue;
                }
                if (r < 0) {
                        /* why names the action: "nvme-format: not an NVMe drive". */
                        if (op == PASS_OP_SANITIZE)
                                snprintf(err, err_len, "%s: refusing sanitize: %s", job->info.node, why);
                        else
                                snprintf(err, err_len, "%s: refusing %s", job->info.node, why);
                        return r;
                }
                r = job_hold_namespaces(job, probe, &c, err, err_len);
                if (r < 0)
                        return r;
                if (c.action == FW_ACTION_ATA_SECURITY_ERASE) {
                        uint8_t b[8];

                        /* A temporary user password of its own, recorded before it is set. */
                        if (getrandom(b, sizeof(b), 0) != sizeof(b))
                                return errno ? -errno : -EIO;
                        snprintf(c.password, sizeof(c.password), "wiped-%02x%02x%02x%02x%02x%02x%02x%02x", b[0], b[1],
                                 b[2], b[3], b[4], b[5], b[6], b[7]);
                }
                p->pass.op = fw_action_pass_op(c.action);
                p->fw.cmd = c;
        }
        return 0;
}

/* An ATA drive's hidden area, by the configuration's hidden-area: a host protected area restored
 * to the native max (READ NATIVE MAX ADDRESS and SET MAX ADDRESS, permanent, as hdparm -N p) and
 * the kernel told to read the disk's size again; or the submit refused; or only recorded. A device
 * configuration overlay, or a limit set by ACCESSIBLE MAX ADDRESS CONFIGURATION, is not undone
 * here (their commands can change more than the size): refused unless hidden-area is ignore.
 * Decides only: the restore itself is job_hidden_restore(), once the whole submit passed. */
int job_hidden_area(const struct device_probe *probe, struct job_hidden_area *h, char *err, size_t err_len) {
        const struct fw_ata_caps *a = &probe->firmware.ata;
        const char *policy = config_hidden_area(), *node = probe->id.node;
        uint64_t hpa, dco;

        *h = (struct job_hidden_area) {};
        if (probe->firmware.set != FW_SET_ATA || a->current_max == 0)
                return 0;
        hpa = a->native_max > a->current_max ? a->native_max - a->current_max : 0;
        dco = a->native_max && a->dco_max > a->native_max ? a->dco_max - a->native_max : 0;
        if (!hpa && !dco)
                return 0;
        *h = (struct job_hidden_area) { .found = true, .current_max = a->current_max, .native_max = a->native_max,
                                        .dco_max = a->dco_max, .size_before = probe->id.size,
                                        .size_after = probe->id.size };
        if (strcmp(policy, "ignore") == 0) {
                snprintf(h->action, sizeof(h->action), "ignored");
                log_warning("%s: %" PRIu64 " sectors hidden (%s; hidden-area = ignore): they are not wiped", node,
                            hpa + dco, hpa ? "a host protected area" : "a device configuration overlay");
                return 0;
        }
        if (strcmp(policy, "refuse") == 0) {
                snprintf(err, err_len, "%s: refusing: %s hides %" PRIu64 " sectors (current max %" PRIu64 ", native max %"
                         PRIu64 "%s) and hidden-area is refuse", node, hpa ? "a host protected area" :
                         "a device configuration overlay", hpa + dco, a->current_max, a->native_max,
                         dco ? ", and a device configuration overlay hides more" : "");
                return -EBUSY;
        }
        if (hpa && !a->hpa_supported) {
                snprintf(err, err_len, "%s: refusing: an accessible max address configuration hides %" PRIu64 " sectors; "
                         "wiped does not send SET ACCESSIBLE MAX ADDRESS (hdparm -N does); hidden-area = ignore wipes "
                         "what is visible", node, hpa);
                return -EBUSY;
        }
        /* Restored only once every device of the submit passed every check (job_hidden_restore):
         * the host protected area first (the drive refuses to drop an overlay while one is set). */
        h->restore_pending = true;
        h->hpa_pending = hpa > 0;
        h->dco_pending = dco > 0;
        h->lba48 = a->lba48;
        return 0;
}

int job_hidden_restore(struct job *job, char *err, size_t err_len) {
        struct job_hidden_area *h = &job->hidden;
        const char *node = job->info.node;
        uint64_t size = 0, max;
        char e[512], path[64];
        int r, sfd;

        if (!h->restore_pending)
                return 0;
        h->restore_pending = false;
        r = h->hpa_pending ? fw_ata_restore_native_max(job->fd, h->native_max, h->lba48, e, sizeof(e)) : 0;
        if (r < 0) {
                snprintf(err, err_len, "%s: refusing: a host protected area hides %" PRIu64 " sectors and cannot be "
                         "restored: %s", node, h->native_max - h->current_max, e);
                return r;
        }
        r = h->dco_pending ? fw_ata_dco_restore(job->fd, e, sizeof(e)) : 0;
        if (r < 0) {
                snprintf(err, err_len, "%s: refusing: a device configuration overlay hides %" PRIu64 " sectors and cannot "
                         "be removed: %s%s", node, h->dco_max - h->native_max, e,
                         h->hpa_pending ? " (the host protected area was restored)" : "");
                return r;
        }
        snprintf(h->action, sizeof(h->action), "restored");
        /* The kernel reads the disk's size again (sd: its device's rescan). */
        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/device/rescan", major(job->info.rdev), minor(job->info.rdev));
        sfd = open(path, O_WRONLY | O_CLOEXEC);
        if (sfd >= 0) {
                (void) !write(sfd, "1", 1);
                close(sfd);
        }
        if (ioctl(job->fd, BLKGETSIZE64, &size) == 0)
                h->size_after = size;
        max = h->dco_pending && h->dco_max > h->native_max ? h->dco_max : h->native_max;
        if (h->size_after < max * job->info.logical_sector)
                snprintf(h->note, sizeof(h->note), "the kernel sees %" PRIu64 " bytes, not the %" PRIu64 " the drive has "
                         "now: the restored sectors are not overwritten (a firmware erase covers them)", h->size_after,
                         max * job->info.logical_sector);
        log_warning("%s: %s%s%s of %" PRIu64 " sectors restored (maximum now %" PRIu64 ")%s%s", node,
                    h->hpa_pending ? "a host protected area" : "", h->hpa_pending && h->dco_pending ? " and " : "",
                    h->dco_pending ? "a device configuration overlay" : "", max - h->current_max, max,
                    h->note[0] ? ": " : "", h->note);
        return 0;
}
