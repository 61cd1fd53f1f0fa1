/* NVMe: what the controller and namespace can do to erase themselves (firmware.h), through libnvme.
 *
 * Two admin commands, both reads (NVM Express Base Specification 2.0): Identify with CNS 01h,
 * the Identify Controller data structure (5.17.2.1), for SANICAP, OACS, FNA and NN; and, when the
 * controller supports the Sanitize command, Get Log Page for the Sanitize Status log page, log
 * identifier 81h (5.16.1.25), for the state of the last sanitize and the drive's time estimates.
 * libnvme 1.3 sends both through NVME_IOCTL_ADMIN_CMD on the namespace's file descriptor.
 * Nothing here sends a command that changes the drive.
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
