/* NVMe: what the controller and namespace can do to erase themselves (firmware.h), through libnvme.
 *
 * Two admin commands, both reads (NVM Express Base Specification 2.0): Identify with CNS 01h,
 * the Identify Controller data structure (5.17.2.1), for SANICAP, OACS, FNA and NN; and, when the
 * controller supports the Sanitize command, Get Log Page for the Sanitize Status log page, log
 * identifier 81h (5.16.1.25), for the state of the last sanitize and the drive's time estimates.
 * libnvme 1.3 sends both through NVME_IOCTL_ADMIN_CMD on the namespace's file descriptor.
 * The probe sends nothing that changes the drive.
 *
 * Then the commands that erase, sent from a job's firmware thread (firmware.h): Sanitize (5.24),
 * followed with the same log page, and Format NVM (5.14) with a secure erase setting, which keeps
 * the namespace's format as Identify Namespace (CNS 00h, 5.17.2.1) reports it.
 *
 * Which controller the namespace is on, and which other namespaces share it (a sanitize, and a
 * format where FNA says so, acts on all of them), come from sysfs: the parent device of the
 * namespace's block device is its controller (nvmeX), or, with native NVMe multipath, its NVM
 * subsystem (nvme-subsysN), which links to its controllers. */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <json-c/json.h>
#include <libnvme.h>

#include "cleanup.h"
#include "daemon.h"
#include "firmware.h"
#include "fw-nvme.h"

/* The Sanitize Status log page's "no time period is reported" (5.16.1.25). */
#define FW_NVME_NO_ESTIMATE UINT32_C(0xffffffff)

void fw_nvme_caps_from_id_ctrl(const struct nvme_id_ctrl *id, struct fw_nvme_caps *c) {
        uint32_t sanicap = le32toh(id->sanicap);
        uint16_t oacs = le16toh(id->oacs);

        /* SANICAP (Identify Controller bytes 331:328): bits 0..2 the sanitize actions the
         * controller supports, bit 29 No-Deallocate Inhibited. */
        c->sanitize_crypto = sanicap & NVME_CTRL_SANICAP_CES;
        c->sanitize_block = sanicap & NVME_CTRL_SANICAP_BES;
        c->sanitize_overwrite = sanicap & NVME_CTRL_SANICAP_OWS;
        c->sanitize_no_dealloc_inhibited = sanicap & NVME_CTRL_SANICAP_NDI;
        /* OACS (bytes 257:256) bit 1: the Format NVM command is supported. FNA (byte 524): bit 0,
         * a format applies to every namespace; bit 1, a secure erase (from a format or not)
         * applies to every namespace; bit 2, cryptographic erase is a secure erase setting the
         * format takes. */
        c->format = oacs & NVME_CTRL_OACS_FORMAT;
        c->format_all_namespaces = id->fna & NVME_CTRL_FNA_FMT_ALL_NAMESPACES;
        c->erase_all_namespaces = id->fna & NVME_CTRL_FNA_SEC_ALL_NAMESPACES;
        c->format_crypto = id->fna & NVME_CTRL_FNA_CRYPTO_ERASE;
        /* NN (bytes 519:516): the largest namespace identifier the controller may have. */
        c->max_namespaces = le32toh(id->nn);
}

/* An estimate in seconds, or -1 for FFFFFFFFh. 0 is a real value: the operation is expected to
 * finish in the background when the Sanitize command that starts it completes. */
static fw_seconds fw_nvme_estimate(uint32_t v) {
        return v == FW_NVME_NO_ESTIMATE ? -1 : (fw_seconds) v;
}

void fw_nvme_caps_from_sanitize_log(const struct nvme_sanitize_log_page *log, struct fw_nvme_caps *c) {
        c->have_sanitize_log = true;
        c->sanitize_progress = le16toh(log->sprog);
        c->sanitize_status = le16toh(log->sstat);
        /* ETO is for an overwrite of 16 passes. The No-Deallocate variants (ETOND, ETBEND,
         * ETCEND) apply only when NODMMAS is 10b and a sanitize asks for no deallocation: not
         * shown. */
        c->est_overwrite = fw_nvme_estimate(le32toh(log->eto));
        c->est_block = fw_nvme_estimate(le32toh(log->etbe));
        c->est_crypto = fw_nvme_estimate(le32toh(log->etce));
}

const char *fw_nvme_sanitize_status_name(uint16_t sstat) {
        /* SSTAT bits 2:0, Sanitize Operation Status (5.16.1.25); 5h to 7h are reserved. */
        switch ((sstat >> NVME_SANITIZE_SSTAT_STATUS_SHIFT) & NVME_SANITIZE_SSTAT_STATUS_MASK) {
        case NVME_SANITIZE_SSTAT_STATUS_NEVER_SANITIZED:
                return "never";
        case NVME_SANITIZE_SSTAT_STATUS_COMPLETE_SUCCESS:
                return "completed";
        case NVME_SANITIZE_SSTAT_STATUS_IN_PROGESS:
                return "in progress";
        case NVME_SANITIZE_SSTAT_STATUS_COMPLETED_FAILED:
                return "failed";
        case NVME_SANITIZE_SSTAT_STATUS_ND_COMPLETE_SUCCESS:
                return "completed without deallocation";
        }
        return NULL;
}

/* Whether name is prefix followed by one or more digits, and then end (or, with rest, the rest of
 * the name in *rest). */
static bool fw_nvme_name_number(const char *name, const char *prefix, const char **rest) {
        size_t n = strlen(prefix);

        if (strncmp(name, prefix, n) != 0 || !isdigit((unsigned char) name[n]))
                return false;
        name += n;
        while (isdigit((unsigned char) *name))
                name++;
        if (rest) {
                *rest = name;
                return true;
        }
        return *name == '\0';
}

/* nvmeX: a controller's device. */
static bool fw_nvme_is_controller(const char *name) {
        return fw_nvme_name_number(name, "nvme", NULL);
}

/* nvmeXnY: a namespace's block device (not nvmeXcYnZ, the hidden path of a multipath namespace,
 * nor nvmeXnYpZ, a partition). */
static bool fw_nvme_is_namespace(const char *name) {
        const char *rest;

        return fw_nvme_name_number(name, "nvme", &rest) && fw_nvme_name_number(rest, "n", NULL);
}

static int fw_nvme_name_cmp(const void *a, const void *b) {
        return strverscmp(*(char *const *) a, *(char *const *) b);
}

/* The namespaces in the sysfs directory dir (a controller's or a subsystem's) as block device
 * nodes, sorted, NULL-terminated, into *ret; with subsystem, also the lowest-numbered controller
 * it links to into *ctrl (its name, NULL when none). 0 or -errno. */
static int fw_nvme_scan(const char *dir, bool subsystem, char ***ret, char **ctrl) {
        DIR *d = opendir(dir);
        struct dirent *e;
        char **v = NULL, **nv;
        size_t n = 0;
        int r = 0;

        *ret = NULL;
        *ctrl = NULL;
        if (!d)
                return -errno;
        v = calloc(1, sizeof(*v));
        if (!v) {
                r = -ENOMEM;
                goto out;
        }
        while ((e = readdir(d))) {
                if (subsystem && fw_nvme_is_controller(e->d_name)) {
                        if (*ctrl && strverscmp(e->d_name, *ctrl) >= 0)
                                continue;
                        free(*ctrl);
                        *ctrl = strdup(e->d_name);
                        if (!*ctrl) {
                                r = -ENOMEM;
                                goto out;
                        }
                        continue;
                }
                if (!fw_nvme_is_namespace(e->d_name))
                        continue;
                nv = realloc(v, (n + 2) * sizeof(*v));
                if (!nv) {
                        r = -ENOMEM;
                        goto out;
                }
                v = nv;
                if (asprintf(&v[n], "/dev/%s", e->d_name) < 0) {
                        v[n] = NULL;
                        r = -ENOMEM;
                        goto out;
                }
                v[++n] = NULL;
        }
        qsort(v, n, sizeof(*v), fw_nvme_name_cmp);
        *ret = v;
        v = NULL;
out:
        closedir(d);
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
        if (r < 0) {
                free(*ctrl);
                *ctrl = NULL;
        }
        return r;
}

int fw_nvme_sysfs_topology(const char *sysroot, dev_t rdev, char **controller, char ***namespaces) {
        _cleanup_free_ char *link = NULL, *dir = NULL, *ctrl = NULL;
        char **ns = NULL;
        const char *base;
        bool subsystem;
        int r;

        *controller = NULL;
        *namespaces = NULL;
        if (asprintf(&link, "%s/dev/block/%u:%u/device", sysroot, major(rdev), minor(rdev)) < 0) {
                link = NULL;
                return -ENOMEM;
        }
        dir = realpath(link, NULL);
        if (!dir)
                /* No parent device: not a disk the kernel's NVMe driver made. */
                return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
        base = strrchr(dir, '/');
        base = base ? base + 1 : dir;
        if (fw_nvme_is_controller(base))
                subsystem = false;
        else if (fw_nvme_name_number(base, "nvme-subsys", NULL))
                subsystem = true;
        else
                return 0;

        r = fw_nvme_scan(dir, subsystem, &ns, &ctrl);
        if (r < 0)
                return r;
        if (!subsystem) {
                ctrl = strdup(base);
                if (!ctrl) {
                        for (size_t i = 0; ns[i]; i++)
                                free(ns[i]);
                        free(ns);
                        return -ENOMEM;
                }
        }
        if (ctrl && asprintf(controller, "/dev/%s", ctrl) < 0) {
                *controller = NULL;
                for (size_t i = 0; ns[i]; i++)
                        free(ns[i]);
                free(ns);
                return -ENOMEM;
        }
        *namespaces = ns;
        return 0;
}

/* Adds "what: why" to *err, after what is there ("; " between): r is -errno, or the NVMe status
 * the controller completed the command with (> 0). Returns the error the probe reports: r, or
 * -EIO for an NVMe status; -ENOMEM (and *err freed) when the note cannot be made. */
static int fw_nvme_note(char **err, const char *what, int r) {
        char *s;
        int n;

        if (r > 0)
                n = asprintf(&s, "%s%s%s: %s (NVMe status 0x%x)", *err ? *err : "", *err ? "; " : "", what,
                             nvme_status_to_string(r, false), (unsigned) r);
        else
                n = asprintf(&s, "%s%s%s: %s", *err ? *err : "", *err ? "; " : "", what, strerror(-r));
        free(*err);
        *err = NULL;
        if (n < 0)
                return -ENOMEM;
        *err = s;
        return r > 0 ? -EIO : r;
}

/* -errno after libnvme returned -1 (never 0). */
static int fw_nvme_errno(void) {
        return errno > 0 ? -errno : -EIO;
}

int fw_nvme_probe(int fd, uint32_t nsid, const struct device_identity *id, struct fw_nvme_caps *c, char **err) {
        struct nvme_id_ctrl ctrl;
        struct nvme_sanitize_log_page log;
        int r, ret = 0;

        *err = NULL;
        *c = (struct fw_nvme_caps) {
                .nsid = nsid,
                .est_overwrite = -1,
                .est_block = -1,
                .est_crypto = -1,
        };

        r = fw_nvme_sysfs_topology("/sys", id->rdev, &c->controller, &c->namespaces);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                ret = fw_nvme_note(err, "sysfs", r);
        if (ret == -ENOMEM)
                return ret;

        /* libnvme returns -1 with errno when the command did not reach the controller, or the
         * status the controller completed it with. */
        memset(&ctrl, 0, sizeof(ctrl));
        r = nvme_identify_ctrl(fd, &ctrl);
        if (r != 0) {
                r = fw_nvme_note(err, "Identify Controller", r < 0 ? fw_nvme_errno() : r);
                return ret < 0 && r != -ENOMEM ? ret : r;
        }
        fw_nvme_caps_from_id_ctrl(&ctrl, c);

        /* The log page is there when the Sanitize command is, that is when any sanitize action
         * is supported. RAE set: reading it must not clear a sanitize completion event that
         * someone else is waiting for (Get Log Page, Retain Asynchronous Event, 5.16). */
        if (!c->sanitize_crypto && !c->sanitize_block && !c->sanitize_overwrite)
                return ret;
        memset(&log, 0, sizeof(log));
        r = nvme_get_log_sanitize(fd, true, &log);
        if (r != 0) {
                /* What Identify Controller said stands: only the log's part is missing. */
                r = fw_nvme_note(err, "Sanitize Status log page", r < 0 ? fw_nvme_errno() : r);
                return ret < 0 && r != -ENOMEM ? ret : r;
        }
        fw_nvme_caps_from_sanitize_log(&log, c);
        return ret;
}

void fw_nvme_caps_done(struct fw_nvme_caps *c) {
        if (!c)
                return;
        free(c->controller);
        for (size_t i = 0; c->namespaces && c->namespaces[i]; i++)
                free(c->namespaces[i]);
        free(c->namespaces);
        c->controller = NULL;
        c->namespaces = NULL;
}

static struct json_object *fw_nvme_json_estimate(fw_seconds s) {
        return s < 0 ? NULL : json_object_new_int64(s);
}

static struct json_object *fw_nvme_json_sanitize(const struct fw_nvme_caps *c) {
        struct json_object *o = json_object_new_object(), *est;
        const char *status = c->have_sanitize_log ? fw_nvme_sanitize_status_name(c->sanitize_status) : NULL;
        bool in_progress = status && strcmp(status, "in progress") == 0;

        if (!o)
                return NULL;
        json_object_object_add(o, "crypto", json_object_new_boolean(c->sanitize_crypto));
        json_object_object_add(o, "block", json_object_new_boolean(c->sanitize_block));
        json_object_object_add(o, "overwrite", json_object_new_boolean(c->sanitize_overwrite));
        json_object_object_add(o, "no_dealloc_inhibited", json_object_new_boolean(c->sanitize_no_dealloc_inhibited));
        /* The rest is the Sanitize Status log page: null when it was not read. */
        json_object_object_add(o, "log_read", json_object_new_boolean(c->have_sanitize_log));
        json_object_object_add(o, "status", status ? json_object_new_string(status) : NULL);
        /* SPROG counts in 65536ths, and only while a sanitize runs (else FFFFh). */
        json_object_object_add(o, "progress_percent",
                               in_progress ? json_object_new_int((int) ((uint32_t) c->sanitize_progress * 100 >> 16))
                                           : NULL);
        /* SSTAT bits 7:3, Overwrite Passes Completed; bit 8, Global Data Erased: no user data
         * has been written since the last sanitize (or since manufacture), as far as the
         * controller knows. */
        json_object_object_add(o, "overwrite_passes_completed",
                               c->have_sanitize_log
                                       ? json_object_new_int((c->sanitize_status >> NVME_SANITIZE_SSTAT_COMPLETED_PASSES_SHIFT) &
                                                             NVME_SANITIZE_SSTAT_COMPLETED_PASSES_MASK)
                                       : NULL);
        json_object_object_add(o, "global_data_erased",
                               c->have_sanitize_log
                                       ? json_object_new_boolean((c->sanitize_status & NVME_SANITIZE_SSTAT_GLOBAL_DATA_ERASED) != 0)
                                       : NULL);
        est = json_object_new_object();
        if (est) {
                json_object_object_add(est, "overwrite", fw_nvme_json_estimate(c->have_sanitize_log ? c->est_overwrite : -1));
                json_object_object_add(est, "block", fw_nvme_json_estimate(c->have_sanitize_log ? c->est_block : -1));
                json_object_object_add(est, "crypto", fw_nvme_json_estimate(c->have_sanitize_log ? c->est_crypto : -1));
        }
        json_object_object_add(o, "estimates_s", est);
        return o;
}

struct json_object *fw_nvme_json(const struct fw_nvme_caps *c) {
        struct json_object *o = json_object_new_object(), *ns = NULL, *f;

        if (!o)
                return NULL;
        json_object_object_add(o, "nsid", json_object_new_int64(c->nsid));
        json_object_object_add(o, "controller", c->controller ? json_object_new_string(c->controller) : NULL);
        if (c->namespaces) {
                ns = json_object_new_array();
                for (size_t i = 0; ns && c->namespaces[i]; i++)
                        json_object_array_add(ns, json_object_new_string(c->namespaces[i]));
        }
        json_object_object_add(o, "namespaces", ns);
        json_object_object_add(o, "max_namespaces", json_object_new_int64(c->max_namespaces));
        json_object_object_add(o, "sanitize", fw_nvme_json_sanitize(c));
        f = json_object_new_object();
        if (f) {
                json_object_object_add(f, "supported", json_object_new_boolean(c->format));
                json_object_object_add(f, "all_namespaces", json_object_new_boolean(c->format_all_namespaces));
                json_object_object_add(f, "erase_all_namespaces", json_object_new_boolean(c->erase_all_namespaces));
                json_object_object_add(f, "crypto_erase", json_object_new_boolean(c->format_crypto));
        }
        json_object_object_add(o, "format", f);
        return o;
}

/* ---- The commands that erase: Sanitize (5.24) and Format NVM (5.14), and the Sanitize Status
 * log page (5.16.1.25) that follows a sanitize. ---- */

/* The Sanitize Status log page's SPROG counts in 65536ths (5.16.1.25). */
#define FW_NVME_SPROG_ONE 65536u

/* Puts "what: why" into err: status is what libnvme returned, the completion's status field
 * (> 0) or -1 with errno. Returns -EIO for a status, else -errno. */
static int fw_nvme_command_error(const char *what, int status, char *err, size_t err_len) {
        const char *s;
        size_t len;
        int r;

        if (status < 0) {
                r = fw_nvme_errno();
                snprintf(err, err_len, "%s: %s", what, strerror(-r));
                return r;
        }
        /* The kernel returns the completion's Status field without its phase tag: SCT in bits
         * 10:8 and SC in bits 7:0 (the code shown), CRD, More and DNR above (4.6.1). libnvme's
         * words are "Name: explanation"; the name is enough here. */
        s = nvme_status_to_string(status, false);
        len = strcspn(s, ":");
        snprintf(err, err_len, "%s: %.*s (status %04Xh)", what, (int) len, s,
                 (unsigned) status & (NVME_SCT_MASK << NVME_SCT_SHIFT | NVME_SC_MASK));
        return -EIO;
}

/* a: the Sanitize command for c (fd not set). 0, or -EINVAL (err) for what cannot be sent. */
static int fw_nvme_sanitize_args(const struct fw_command *c, struct nvme_sanitize_nvm_args *a, char *err, size_t err_len) {
        *a = (struct nvme_sanitize_nvm_args) {
                .args_size = sizeof(*a),
                .fd = -1,
                /* AUSE set: after a failure, Exit Failure Mode (or any sanitize) leaves the
                 * failure; clear: only a sanitize that completes does (8.21). */
                .ause = c->ause,
                /* No-Deallocate After Sanitize clear: the controller deallocates what it erased,
                 * which every controller supports (with NDI set it refuses the other). */
                .nodas = false,
        };
        switch (c->action) {
        case FW_ACTION_SANITIZE_CRYPTO:
                a->sanact = NVME_SANITIZE_SANACT_START_CRYPTO_ERASE;
                return 0;
        case FW_ACTION_SANITIZE_BLOCK:
                a->sanact = NVME_SANITIZE_SANACT_START_BLOCK_ERASE;
                return 0;
        case FW_ACTION_SANITIZE_OVERWRITE:
                if (c->overwrite_passes < 1 || c->overwrite_passes > 16) {
                        snprintf(err, err_len, "Sanitize: %u overwrite passes (1 to 16)", c->overwrite_passes);
                        return -EINVAL;
                }
                a->sanact = NVME_SANITIZE_SANACT_START_OVERWRITE;
                /* OWPASS is 4 bits: 0 means 16 passes. OIPBP clear: every pass writes the
                 * pattern as it is, not inverted between passes. */
                a->owpass = (uint8_t) (c->overwrite_passes & 0xf);
                a->ovrpat = c->overwrite_pattern;
                a->oipbp = false;
                return 0;
        default:
                snprintf(err, err_len, "Sanitize: action %d is not a sanitize action", c->action);
                return -EINVAL;
        }
}

int fw_nvme_sanitize_start(int fd, const struct fw_command *c, char *err, size_t err_len) {
        struct nvme_sanitize_nvm_args a;
        int r;

        r = fw_nvme_sanitize_args(c, &a, err, err_len);
        if (r < 0)
                return r;
        a.fd = fd;
        /* The controller completes the command once it has checked it; the sanitize runs on in
         * the background and the log page follows it. */
        r = nvme_sanitize_nvm(&a);
        if (r != 0)
                return fw_nvme_command_error("Sanitize", r, err, err_len);
        return 0;
}

/* s from the Sanitize Status log page as the controller sent it (little-endian). */
static void fw_nvme_status_from_log(const struct nvme_sanitize_log_page *log, struct fw_status *s) {
        uint16_t sprog = le16toh(log->sprog), sstat = le16toh(log->sstat);
        uint32_t scdw10 = le32toh(log->scdw10);
        unsigned passes = (sstat >> NVME_SANITIZE_SSTAT_COMPLETED_PASSES_SHIFT) & NVME_SANITIZE_SSTAT_COMPLETED_PASSES_MASK;
        unsigned status = (sstat >> NVME_SANITIZE_SSTAT_STATUS_SHIFT) & NVME_SANITIZE_SSTAT_STATUS_MASK;
        const char *name = fw_nvme_sanitize_status_name(sstat);
        size_t n;

        s->fraction = -1;
        switch (status) {
        case NVME_SANITIZE_SSTAT_STATUS_COMPLETE_SUCCESS:
        case NVME_SANITIZE_SSTAT_STATUS_ND_COMPLETE_SUCCESS:
                s->state = FW_RUN_DONE;
                break;
        case NVME_SANITIZE_SSTAT_STATUS_IN_PROGESS:
                s->state = FW_RUN_RUNNING;
                s->fraction = (double) sprog / FW_NVME_SPROG_ONE;
                break;
        case NVME_SANITIZE_SSTAT_STATUS_COMPLETED_FAILED:
                s->state = FW_RUN_FAILED;
                break;
        default:
                /* Never sanitized, or a reserved value. */
                s->state = FW_RUN_UNKNOWN;
                break;
        }

        if (name)
                n = (size_t) snprintf(s->text, sizeof(s->text), "SSTAT %04Xh: %s", (unsigned) sstat, name);
        else
                n = (size_t) snprintf(s->text, sizeof(s->text), "SSTAT %04Xh: reserved status %u", (unsigned) sstat,
                                      status);
        /* SPROG means something only while one runs (FFFFh otherwise). */
        if (s->state == FW_RUN_RUNNING && n < sizeof(s->text))
                n += (size_t) snprintf(s->text + n, sizeof(s->text) - n, ", SPROG %u/%u (%u%%)", (unsigned) sprog,
                                       FW_NVME_SPROG_ONE, (unsigned) ((uint32_t) sprog * 100 / FW_NVME_SPROG_ONE));
        /* Bits 7:3: overwrite passes completed, of the overwrite running or the last one; only
         * an overwrite defines them, so they are shown when SCDW10 (the Sanitize command's dword
         * 10 that started the operation SSTAT is about) has SANACT 011b. */
        if ((scdw10 & 0x7) == NVME_SANITIZE_SANACT_START_OVERWRITE && n < sizeof(s->text))
                n += (size_t) snprintf(s->text + n, sizeof(s->text) - n, ", %u overwrite pass%s", passes,
                                       passes == 1 ? "" : "es");
        /* Bit 8: no user data written since the last sanitize (or manufacture). */
        if ((sstat & NVME_SANITIZE_SSTAT_GLOBAL_DATA_ERASED) && n < sizeof(s->text))
                snprintf(s->text + n, sizeof(s->text) - n, ", global data erased");
}

int fw_nvme_sanitize_status(int fd, struct fw_status *s, char *err, size_t err_len) {
        struct nvme_sanitize_log_page log;
        int r;

        memset(&log, 0, sizeof(log));
        /* RAE set: reading the page must not clear the sanitize completion event that the
         * kernel or another host may be waiting for (5.16). */
        r = nvme_get_log_sanitize(fd, true, &log);
        if (r != 0)
                return fw_nvme_command_error("Sanitize Status log page", r, err, err_len);
        fw_nvme_status_from_log(&log, s);
        return 0;
}

/* a: the Format NVM command for c with the format namespace ns has now (fd not set). 0, or -errno
 * (err) when ns does not say which format that is. */
static int fw_nvme_format_args(const struct fw_command *c, const struct nvme_id_ns *ns,
                               struct nvme_format_nvm_args *a, char *err, size_t err_len) {
        unsigned index, count;

        if (le64toh(ns->nsze) == 0) {
                snprintf(err, err_len, "Format NVM: namespace %u is not active", (unsigned) c->nsid);
                return -ENODEV;
        }
        /* FLBAS (Identify Namespace byte 26): the format in use, its index in bits 3:0 and, from
         * NVMe 2.0 when there are more than 16 formats, bits 6:5 as the index's bits 5:4; bit 4,
         * metadata at the end of each block (extended) rather than in a buffer of its own.
         * NLBAF (byte 25) counts the formats from 0, NULBAF (byte 82) the unique attribute
         * formats listed after them (NVM Command Set Specification 1.0, Identify Namespace). */
        index = (ns->flbas & NVME_NS_FLBAS_LOWER_MASK) | (ns->flbas & NVME_NS_FLBAS_HIGHER_MASK) >> 1;
        count = (unsigned) ns->nlbaf + 1 + ns->nulbaf;
        if (index >= count || index >= sizeof(ns->lbaf) / sizeof(*ns->lbaf)) {
                snprintf(err, err_len, "Format NVM: namespace %u's FLBAS %02Xh names LBA format %u of %u",
                         (unsigned) c->nsid, (unsigned) ns->flbas, index, count);
                return -EIO;
        }
        *a = (struct nvme_format_nvm_args) {
                .args_size = sizeof(*a),
                .fd = -1,
                .timeout = c->timeout_s > UINT32_MAX / 1000 ? UINT32_MAX : c->timeout_s * 1000,
                .nsid = c->nsid,
                /* The namespace's format as it is (Format NVM dword 10: LBAF, MSET, PI, PIL,
                 * LBAFU), so that the format changes nothing but erases. */
                .lbaf = index & 0xf,
                .lbafu = index >> 4,
                .mset = ns->flbas & NVME_NS_FLBAS_META_EXT ? NVME_FORMAT_MSET_EXTENDED : NVME_FORMAT_MSET_SEPARATE,
                /* DPS (byte 29): bits 2:0 the protection information type, bit 3 set when it is
                 * in the first bytes of the metadata. */
                .pi = ns->dps & NVME_NS_DPS_PI_MASK,
                .pil = ns->dps & NVME_NS_DPS_PI_FIRST ? NVME_FORMAT_PIL_FIRST : NVME_FORMAT_PIL_LAST,
                .ses = c->ses,
        };
        return 0;
}

int fw_nvme_format(int fd, const struct fw_command *c, char *err, size_t err_len) {
        struct nvme_format_nvm_args a;
        struct nvme_id_ns ns;
        int r;

        /* SES 0 erases nothing: a format sent for erasing never has it. Checked before anything
         * is sent. */
        if (c->ses != NVME_FORMAT_SES_USER_DATA_ERASE && c->ses != NVME_FORMAT_SES_CRYPTO_ERASE) {
                snprintf(err, err_len, "Format NVM: secure erase setting %u (1 or 2)", c->ses);
                return -EINVAL;
        }
        /* One namespace: 0 names none, FFFFFFFFh all (whose Identify data has no format in
         * use). */
        if (c->nsid == 0 || c->nsid == NVME_NSID_ALL) {
                snprintf(err, err_len, "Format NVM: namespace %08Xh (one namespace)", (unsigned) c->nsid);
                return -EINVAL;
        }
        memset(&ns, 0, sizeof(ns));
        r = nvme_identify_ns(fd, c->nsid, &ns);
        if (r != 0)
                return fw_nvme_command_error("Identify Namespace", r, err, err_len);
        r = fw_nvme_format_args(c, &ns, &a, err, err_len);
        if (r < 0)
                return r;
        a.fd = fd;
        /* The ioctl returns when the controller completes the format, or the kernel gives up
         * after a.timeout (then the format may still run on in the controller). */
        r = nvme_format_nvm(&a);
        if (r != 0)
                return fw_nvme_command_error("Format NVM", r, err, err_len);
        return 0;
}
