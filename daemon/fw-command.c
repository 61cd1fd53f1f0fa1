/* Firmware erase commands: which command a method sends to a drive (resolved at submit from what
 * the probe found), and the dispatch to the command set's module (fw-nvme.c, fw-ata.c, fw-scsi.c)
 * for the thread that runs a firmware step (fw-step.c). firmware.h has the contracts. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "daemon.h"
#include "firmware.h"
#include "fw-ata.h"

#define FW_FORMAT_TIMEOUT_S (4 * 3600)  /* Format NVM of a drive that gives no estimate */
#define FW_ERASE_TIMEOUT_S (12 * 3600)  /* ATA security erase of a drive that gives no estimate */
#define FW_NO_ACTION "the drive does not support this sanitize action"

static const char *const action_names[] = {
        [FW_ACTION_NONE] = "none",
        [FW_ACTION_SANITIZE_CRYPTO] = "sanitize-crypto",
        [FW_ACTION_SANITIZE_BLOCK] = "sanitize-block",
        [FW_ACTION_SANITIZE_OVERWRITE] = "sanitize-overwrite",
        [FW_ACTION_NVME_FORMAT] = "nvme-format",
        [FW_ACTION_ATA_SECURITY_ERASE] = "ata-secure-erase",
};

const char *fw_action_name(enum fw_action a) {
        return (unsigned) a < sizeof(action_names) / sizeof(action_names[0]) ? action_names[a] : "none";
}

enum fw_action fw_action_from_name(const char *name) {
        for (unsigned a = 0; name && a < sizeof(action_names) / sizeof(action_names[0]); a++)
                if (strcmp(action_names[a], name) == 0)
                        return (enum fw_action) a;
        return FW_ACTION_NONE;
}

const char *fw_run_state_name(enum fw_run_state s) {
        switch (s) {
        case FW_RUN_RUNNING:
                return "running";
        case FW_RUN_DONE:
                return "done";
        case FW_RUN_FAILED:
                return "failed";
        case FW_RUN_UNKNOWN:
                break;
        }
        return "unknown";
}

bool fw_action_background(enum fw_action a) {
        return a == FW_ACTION_SANITIZE_CRYPTO || a == FW_ACTION_SANITIZE_BLOCK || a == FW_ACTION_SANITIZE_OVERWRITE;
}

/* Why the device takes no firmware command at all, or NULL. */
static const char *fw_unreachable(const struct fw_caps *caps) {
        if (caps->refused)
                return caps->refused;
        if (caps->set == FW_SET_NONE)
                return "the device answers no firmware erase command (it is not an NVMe, ATA or SCSI drive)";
        return NULL;
}

static int fw_refuse(char *err, size_t err_len, const char *action, const char *why) {
        snprintf(err, err_len, "%s: %s", action, why);
        return -EOPNOTSUPP;
}

/* Sanitize: which actions the drive's command set lists. */
static bool fw_sanitize_has(const struct fw_caps *caps, enum fw_action a) {
        switch (caps->set) {
        case FW_SET_NVME:
                return a == FW_ACTION_SANITIZE_CRYPTO ? caps->nvme.sanitize_crypto :
                       a == FW_ACTION_SANITIZE_BLOCK ? caps->nvme.sanitize_block : caps->nvme.sanitize_overwrite;
        case FW_SET_ATA:
                return caps->ata.sanitize_supported &&
                       (a == FW_ACTION_SANITIZE_CRYPTO ? caps->ata.sanitize_crypto :
                        a == FW_ACTION_SANITIZE_BLOCK ? caps->ata.sanitize_block : caps->ata.sanitize_overwrite);
        case FW_SET_SCSI:
                return a == FW_ACTION_SANITIZE_CRYPTO ? caps->scsi.sanitize_crypto :
                       a == FW_ACTION_SANITIZE_BLOCK ? caps->scsi.sanitize_block : caps->scsi.sanitize_overwrite;
        case FW_SET_NONE:
                break;
        }
        return false;
}

int fw_resolve(const struct fw_caps *caps, enum fw_action action, struct fw_command *c, char *err, size_t err_len) {
        const char *name = fw_action_name(action), *why = fw_unreachable(caps);

        *c = (struct fw_command) { .set = caps->set, .action = action, .estimate = -1 };
        if (why)
                return fw_refuse(err, err_len, name, why);
        switch (action) {
        case FW_ACTION_SANITIZE_CRYPTO:
        case FW_ACTION_SANITIZE_BLOCK:
        case FW_ACTION_SANITIZE_OVERWRITE:
                if (caps->set == FW_SET_ATA && (why = fw_ata_sanitize_refusal(&caps->ata)))
                        return fw_refuse(err, err_len, name, why);
                if (!fw_sanitize_has(caps, action))
                        return fw_refuse(err, err_len, name, FW_NO_ACTION);
                /* One overwrite pass of zeros: what NIST SP 800-88 asks, and what reads back. */
                if (action == FW_ACTION_SANITIZE_OVERWRITE)
                        c->overwrite_passes = 1;
                if (caps->set == FW_SET_NVME) {
                        c->nsid = caps->nvme.nsid;
                        c->all_namespaces = true;       /* a sanitize acts on the whole NVM subsystem's controller */
                        c->estimate = action == FW_ACTION_SANITIZE_CRYPTO ? caps->nvme.est_crypto :
                                      action == FW_ACTION_SANITIZE_BLOCK ? caps->nvme.est_block : caps->nvme.est_overwrite;
                }
                return 0;
        case FW_ACTION_NVME_FORMAT:
                if (caps->set != FW_SET_NVME)
                        return fw_refuse(err, err_len, name, "not an NVMe drive");
                if (!caps->nvme.format)
                        return fw_refuse(err, err_len, name, "the controller does not support Format NVM (OACS bit 1)");
                c->nsid = caps->nvme.nsid;
                /* Crypto erase where the controller supports it as a secure erase setting (FNA
                 * bit 2), else user data erase; never SES 0. */
                c->ses = caps->nvme.format_crypto ? 2 : 1;
                c->all_namespaces = caps->nvme.format_all_namespaces || caps->nvme.erase_all_namespaces;
                c->timeout_s = FW_FORMAT_TIMEOUT_S;
                return 0;
        case FW_ACTION_ATA_SECURITY_ERASE:
                if (caps->set != FW_SET_ATA)
                        return fw_refuse(err, err_len, name, "not an ATA drive");
                if ((why = fw_ata_security_erase_refusal(&caps->ata)))
                        return fw_refuse(err, err_len, name, why);
                c->enhanced = caps->ata.enhanced_erase_supported;
                c->estimate = c->enhanced ? caps->ata.enhanced_erase_time : caps->ata.erase_time;
                /* The drive's own estimate, twice over and ten minutes more, or half a day. */
                c->timeout_s = c->estimate > 0 ? (unsigned) (2 * c->estimate + 600) : FW_ERASE_TIMEOUT_S;
                return 0;
        case FW_ACTION_NONE:
                break;
        }
        return fw_refuse(err, err_len, name, "no such firmware command");
}

int fw_resolve_best(const struct fw_caps *caps, bool sanitize_only, struct fw_command *c, char *err, size_t err_len) {
        static const enum fw_action order[] = {
                FW_ACTION_SANITIZE_CRYPTO, FW_ACTION_SANITIZE_BLOCK, FW_ACTION_SANITIZE_OVERWRITE,
                FW_ACTION_NVME_FORMAT, FW_ACTION_ATA_SECURITY_ERASE,
        };
        char why[3][256];
        unsigned n = sanitize_only ? 3 : 5;
        const char *unreachable = fw_unreachable(caps);

        if (unreachable) {
                snprintf(err, err_len, "%s", unreachable);
                return -EOPNOTSUPP;
        }
        for (unsigned i = 0; i < n; i++) {
                char e[256];

                const char *name = fw_action_name(order[i]), *reason = e;
                size_t k = strlen(name);

                if (fw_resolve(caps, order[i], c, e, sizeof(e)) == 0)
                        return 0;
                /* The reason without the action's name in front. */
                if (strncmp(e, name, k) == 0 && e[k] == ':' && e[k + 1] == ' ')
                        reason = e + k + 2;
                /* Keep one reason per kind of command: sanitize (the drive's state, if that is
                 * why, rather than an action it lacks), format, security erase. */
                if (i >= 3)
                        snprintf(why[i - 2], sizeof(why[0]), "%s", e);
                else if (!strstr(e, FW_NO_ACTION))
                        snprintf(why[0], sizeof(why[0]), "%s", reason);
                else if (i == 0)
                        snprintf(why[0], sizeof(why[0]), "the drive supports no sanitize action");
        }
        if (sanitize_only)
                snprintf(err, err_len, "%s", why[0]);
        else
                snprintf(err, err_len, "no firmware erase: sanitize: %s; %s; %s", why[0], why[1], why[2]);
        return -EOPNOTSUPP;
}

int fw_start(int fd, const struct fw_command *c, char *err, size_t err_len) {
        switch (c->set) {
        case FW_SET_NVME:
                if (c->action == FW_ACTION_NVME_FORMAT)
                        return fw_nvme_format(fd, c, err, err_len);
                if (fw_action_background(c->action))
                        return fw_nvme_sanitize_start(fd, c, err, err_len);
                break;
        case FW_SET_ATA:
                if (c->action == FW_ACTION_ATA_SECURITY_ERASE)
                        return fw_ata_security_erase(fd, c, err, err_len);
                if (fw_action_background(c->action))
                        return fw_ata_sanitize_start(fd, c, err, err_len);
                break;
        case FW_SET_SCSI:
                if (fw_action_background(c->action))
                        return fw_scsi_sanitize_start(fd, c, err, err_len);
                break;
        case FW_SET_NONE:
                break;
        }
        snprintf(err, err_len, "%s: not a command of this drive's command set (%s)", fw_action_name(c->action),
                 fw_command_set_name(c->set));
        return -EOPNOTSUPP;
}

int fw_status(int fd, const struct fw_command *c, struct fw_status *s, char *err, size_t err_len) {
        *s = (struct fw_status) { .state = FW_RUN_UNKNOWN, .fraction = -1 };
        if (!fw_action_background(c->action))
                return 0;
        switch (c->set) {
        case FW_SET_NVME:
                return fw_nvme_sanitize_status(fd, s, err, err_len);
        case FW_SET_ATA:
                return fw_ata_sanitize_status(fd, s, err, err_len);
        case FW_SET_SCSI:
                return fw_scsi_sanitize_status(fd, s, err, err_len);
        case FW_SET_NONE:
                break;
        }
        return 0;
}

/* The parameters each command is sent with, by name, as the specifications call them. */
struct json_object *fw_command_json(const struct fw_command *c, bool with_password) {
        struct json_object *o = json_object_new_object();
        bool sanitize = fw_action_background(c->action);

        if (!o)
                return NULL;
        json_object_object_add(o, "action", json_object_new_string(fw_action_name(c->action)));
        json_object_object_add(o, "command_set", json_object_new_string(fw_command_set_name(c->set)));
        if (c->set == FW_SET_NVME) {
                json_object_object_add(o, "nsid", json_object_new_int64(c->nsid));
                json_object_object_add(o, "all_namespaces", json_object_new_boolean(c->all_namespaces));
        }
        if (sanitize) {
                /* NVMe SANACT; ATA SANITIZE DEVICE feature; SCSI SANITIZE service action. */
                static const char *const nvme_sanact[] = { "", "100b crypto erase", "010b block erase", "011b overwrite" };
                static const char *const ata_feature[] = { "", "0011h CRYPTO SCRAMBLE EXT", "0012h BLOCK ERASE EXT",
                                                           "0014h OVERWRITE EXT" };
                static const char *const scsi_sa[] = { "", "03h CRYPTOGRAPHIC ERASE", "02h BLOCK ERASE", "01h OVERWRITE" };
                unsigned k = c->action - FW_ACTION_SANITIZE_CRYPTO + 1;

                json_object_object_add(o, "command", json_object_new_string(
                        c->set == FW_SET_NVME ? "Sanitize (NVMe 5.24)" : c->set == FW_SET_ATA ?
                        "SANITIZE DEVICE (ATA B4h)" : "SANITIZE (SCSI 48h, IMMED)"));
                json_object_object_add(o, c->set == FW_SET_NVME ? "sanact" : c->set == FW_SET_ATA ? "feature" :
                                       "service_action", json_object_new_string(
                        c->set == FW_SET_NVME ? nvme_sanact[k] : c->set == FW_SET_ATA ? ata_feature[k] : scsi_sa[k]));
                json_object_object_add(o, c->set == FW_SET_ATA ? "failure_mode" : "ause", json_object_new_boolean(c->ause));
                if (c->action == FW_ACTION_SANITIZE_OVERWRITE) {
                        char pat[16];

                        snprintf(pat, sizeof(pat), "0x%08x", c->overwrite_pattern);
                        json_object_object_add(o, "overwrite_passes", json_object_new_int(c->overwrite_passes));
                        json_object_object_add(o, "overwrite_pattern", json_object_new_string(pat));
                }
        } else if (c->action == FW_ACTION_NVME_FORMAT) {
                json_object_object_add(o, "command", json_object_new_string("Format NVM (NVMe 5.14)"));
                json_object_object_add(o, "ses", json_object_new_int(c->ses));
                json_object_object_add(o, "ses_name", json_object_new_string(c->ses == 2 ? "cryptographic erase" :
                                                                             "user data erase"));
        } else if (c->action == FW_ACTION_ATA_SECURITY_ERASE) {
                json_object_object_add(o, "command", json_object_new_string(
                        "SECURITY SET PASSWORD, SECURITY ERASE PREPARE, SECURITY ERASE UNIT (ATA F1h, F3h, F4h)"));
                json_object_object_add(o, "enhanced", json_object_new_boolean(c->enhanced));
                json_object_object_add(o, "password", json_object_new_string("user, temporary, removed after"));
                if (with_password)
                        json_object_object_add(o, "temporary_password", json_object_new_string(c->password));
        }
        if (c->timeout_s)
                json_object_object_add(o, "timeout_s", json_object_new_int64(c->timeout_s));
        json_object_object_add(o, "drive_estimate_s", c->estimate >= 0 ? json_object_new_int64(c->estimate) : NULL);
        return o;
}

static bool json_bool_of(struct json_object *o, const char *k) {
        struct json_object *v;

        return json_object_object_get_ex(o, k, &v) && json_object_get_boolean(v);
}

/* A member that must be a string: its text, or NULL. */
static const char *json_string_of(struct json_object *o, const char *k) {
        struct json_object *v;

        return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ?
               json_object_get_string(v) : NULL;
}

static int64_t json_int_of(struct json_object *o, const char *k, int64_t def) {
        struct json_object *v;

        return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : def;
}

int fw_command_from_json(struct json_object *o, struct fw_command *c) {
        const char *set, *action, *pattern, *password;

        *c = (struct fw_command) { .estimate = -1 };
        if (!json_object_is_type(o, json_type_object))
                return -EINVAL;
        action = json_string_of(o, "action");
        set = json_string_of(o, "command_set");
        if (!action || !set)
                return -EINVAL;
        c->action = fw_action_from_name(action);
        c->set = strcmp(set, "nvme") == 0 ? FW_SET_NVME : strcmp(set, "ata") == 0 ? FW_SET_ATA :
                 strcmp(set, "scsi") == 0 ? FW_SET_SCSI : FW_SET_NONE;
        if (c->action == FW_ACTION_NONE || c->set == FW_SET_NONE)
                return -EINVAL;
        c->nsid = (uint32_t) json_int_of(o, "nsid", 0);
        c->all_namespaces = json_bool_of(o, "all_namespaces");
        c->ses = (unsigned) json_int_of(o, "ses", 0);
        c->enhanced = json_bool_of(o, "enhanced");
        c->overwrite_passes = (unsigned) json_int_of(o, "overwrite_passes", 0);
        pattern = json_string_of(o, "overwrite_pattern");
        if (c->action == FW_ACTION_SANITIZE_OVERWRITE) {
                char *end;

                if (!pattern || c->overwrite_passes < 1 || c->overwrite_passes > 31)
                        return -EINVAL;
                errno = 0;
                c->overwrite_pattern = (uint32_t) strtoul(pattern, &end, 16);
                if (errno || *end)
                        return -EINVAL;
        }
        c->ause = json_bool_of(o, c->set == FW_SET_ATA ? "failure_mode" : "ause");
        c->timeout_s = (unsigned) json_int_of(o, "timeout_s", 0);
        c->estimate = json_int_of(o, "drive_estimate_s", -1);
        password = json_string_of(o, "temporary_password");
        if (password && strlen(password) <= FW_PASSWORD_LEN)
                snprintf(c->password, sizeof(c->password), "%s", password);
        if (c->action == FW_ACTION_NVME_FORMAT && c->ses != 1 && c->ses != 2)
                return -EINVAL;
        if (c->action == FW_ACTION_ATA_SECURITY_ERASE && !c->password[0])
                return -EINVAL;
        return 0;
}
