/* wiped: what a drive's firmware can do to erase itself (NVMe sanitize and Format NVM, ATA security
 * erase and sanitize, SCSI SANITIZE and FORMAT UNIT), as probe shows it.
 *
 * firmware.c finds the command set a device speaks (by asking it, not by its name: an NVMe
 * namespace answers NVME_IOCTL_ID; a SCSI device answers SG_IO, and one with the ATA Information
 * VPD page (89h) is an ATA drive behind the kernel's SCSI/ATA translation), refuses firmware
 * commands where they are unsafe (behind a USB bridge), and hands the device to the command set's
 * module: fw-nvme.c (through libnvme), fw-ata.c (ATA PASS-THROUGH over SG_IO), fw-scsi.c (SCSI
 * CDBs over SG_IO). Each module fills its part of struct fw_caps and turns it into JSON; nothing
 * here writes to a device. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;
struct device_identity;

enum fw_command_set {
        FW_SET_NONE,                    /* no firmware erase commands reach the device */
        FW_SET_NVME,
        FW_SET_ATA,                     /* ATA, through SG_IO ATA PASS-THROUGH (SAT) */
        FW_SET_SCSI,
};

/* A time the drive estimates, in seconds: -1 when it does not say. */
typedef int64_t fw_seconds;

/* NVMe: Identify Controller (NVMe Base Specification 2.0, 5.17.2.1), Identify Namespace, and the
 * Sanitize Status log page (5.16.1.25). */
struct fw_nvme_caps {
        uint32_t nsid;                  /* this namespace (NVME_IOCTL_ID) */
        char *controller;               /* its controller's character device, e.g. /dev/nvme0; NULL unknown */
        char **namespaces;              /* block devices of every namespace on the controller, NULL-terminated */
        uint32_t max_namespaces;        /* NN */
        /* SANICAP */
        bool sanitize_crypto, sanitize_block, sanitize_overwrite;
        bool sanitize_no_dealloc_inhibited; /* NDI: the No-Deallocate After Sanitize bit is refused */
        /* OACS bit 1, FNA */
        bool format;                    /* Format NVM supported */
        bool format_all_namespaces;     /* FNA bit 0: a format acts on every namespace */
        bool erase_all_namespaces;      /* FNA bit 1: a secure erase acts on every namespace */
        bool format_crypto;             /* FNA bit 2: crypto erase as a secure erase setting */
        /* Sanitize Status log page; est_*: -1 when the drive does not report them */
        bool have_sanitize_log;
        uint16_t sanitize_progress;     /* SPROG: of 65536 */
        uint16_t sanitize_status;       /* SSTAT */
        fw_seconds est_overwrite, est_block, est_crypto;
};

/* ATA: IDENTIFY DEVICE words (ACS-3 7.12.7), READ NATIVE MAX ADDRESS EXT, DCO IDENTIFY. */
struct fw_ata_caps {
        /* The security feature set: word 82 bit 1, word 128 */
        bool security_supported, security_enabled, security_locked, security_frozen;
        bool security_count_expired, enhanced_erase_supported;
        fw_seconds erase_time, enhanced_erase_time;  /* words 89 and 90 */
        /* The sanitize feature set: word 59 bits 12..15 */
        bool sanitize_supported, sanitize_crypto, sanitize_block, sanitize_overwrite;
        /* A host protected area (word 82 bit 10) and a device configuration overlay (word 83 bit 11) */
        bool hpa_supported, dco_supported;
        bool lba48;                     /* 48-bit addresses (word 83 bit 10): the EXT commands */
        uint64_t current_max;           /* sectors the host sees (words 100..103, or 60..61) */
        uint64_t native_max;            /* READ NATIVE MAX ADDRESS (EXT): 0 when not read */
        uint64_t dco_max;               /* DEVICE CONFIGURATION IDENTIFY: 0 when not read */
};

/* SCSI: REPORT SUPPORTED OPERATION CODES (SPC-4 6.35) for SANITIZE (SBC-3 5.30) and FORMAT UNIT. */
struct fw_scsi_caps {
        bool rsoc_supported;            /* the device answers REPORT SUPPORTED OPERATION CODES */
        bool sanitize_overwrite, sanitize_block, sanitize_crypto, sanitize_exit_failure;
        bool format_unit;
};

struct fw_caps {
        enum fw_command_set set;
        char *refused;                  /* why firmware commands are refused, or NULL */
        char *error;                    /* what could not be read, or NULL (the rest is what was) */
        struct fw_nvme_caps nvme;
        struct fw_ata_caps ata;
        struct fw_scsi_caps scsi;
};

/* firmware.c */
/* What the firmware of the device open (read-only) at fd can do to erase it. Never writes. 0, or
 * -ENOMEM; what the device did not answer is in c->error. */
int fw_probe(int fd, const struct device_identity *id, struct fw_caps *c);
void fw_caps_done(struct fw_caps *c);
struct json_object *fw_caps_json(const struct fw_caps *c);
/* The command set's name: "none", "nvme", "ata", "scsi". */
const char *fw_command_set_name(enum fw_command_set s);

/* One SCSI command through SG_IO: cdb, data of len bytes in (dir < 0: from the device), out
 * (dir > 0) or none (dir 0), sense into sense[sense_len] (its length in *sense_got), timeout in
 * ms. 0 with *status the SCSI status (0 GOOD, 2 CHECK CONDITION, ...), or -errno when the command
 * did not reach the device (-ENOTTY: the device does not take SG_IO). *resid: bytes not moved. */
int fw_sg_io(int fd, const uint8_t *cdb, size_t cdb_len, void *data, size_t len, int dir, uint8_t *sense,
             size_t sense_len, size_t *sense_got, unsigned timeout_ms, int *status, size_t *resid);

/* fw-nvme.c: fill c from the namespace at fd (nsid known). 0 or -errno (err: what failed). */
int fw_nvme_probe(int fd, uint32_t nsid, const struct device_identity *id, struct fw_nvme_caps *c, char **err);
void fw_nvme_caps_done(struct fw_nvme_caps *c);
struct json_object *fw_nvme_json(const struct fw_nvme_caps *c);

/* fw-ata.c: fill c from the ATA drive behind SG_IO at fd. 0 or -errno (err: what failed). */
int fw_ata_probe(int fd, struct fw_ata_caps *c, char **err);
struct json_object *fw_ata_json(const struct fw_ata_caps *c);

/* fw-scsi.c: whether the SCSI device at fd is an ATA drive behind SAT (the ATA Information VPD
 * page): 1, 0, or -errno. */
int fw_scsi_is_ata(int fd);
/* fill c from the SCSI device at fd. 0 or -errno (err: what failed). */
int fw_scsi_probe(int fd, struct fw_scsi_caps *c, char **err);
struct json_object *fw_scsi_json(const struct fw_scsi_caps *c);

/* ---- Firmware erase commands: what the methods sanitize*, nvme-format, ata-secure-erase and
 * purge send. A job resolves its method into one struct fw_command at submit (fw_resolve), records
 * it, and a thread of its own sends it (fw_start) and follows it (fw_status): never the main
 * thread, never a worker. ---- */

enum fw_action {
        FW_ACTION_NONE,
        FW_ACTION_SANITIZE_CRYPTO,      /* NVMe SANACT 100b, ATA CRYPTO SCRAMBLE EXT, SCSI CRYPTOGRAPHIC ERASE */
        FW_ACTION_SANITIZE_BLOCK,       /* NVMe SANACT 010b, ATA BLOCK ERASE EXT, SCSI BLOCK ERASE */
        FW_ACTION_SANITIZE_OVERWRITE,   /* NVMe SANACT 011b, ATA OVERWRITE EXT, SCSI OVERWRITE */
        FW_ACTION_NVME_FORMAT,          /* NVMe Format NVM with a secure erase setting (SES 1 or 2) */
        FW_ACTION_ATA_SECURITY_ERASE,   /* ATA SECURITY SET PASSWORD, ERASE PREPARE, ERASE UNIT */
};

#define FW_PASSWORD_LEN 32              /* an ATA password: 32 bytes */

/* One firmware erase command, with every parameter as it is sent (and recorded). */
struct fw_command {
        enum fw_command_set set;
        enum fw_action action;
        uint32_t nsid;                  /* NVMe: the namespace (Format NVM); sanitize acts on the controller */
        unsigned ses;                   /* NVMe Format NVM: 1 user data erase, 2 cryptographic erase */
        bool enhanced;                  /* ATA security erase: enhanced mode */
        unsigned overwrite_passes;      /* sanitize overwrite: 1..16 (NVMe OWPASS, ATA and SCSI counts) */
        uint32_t overwrite_pattern;     /* sanitize overwrite: the 32-bit pattern */
        bool ause;                      /* sanitize: Allow Unrestricted Sanitize Exit (NVMe AUSE, ATA
                                         * FAILURE MODE, SCSI AUSE); false: after a failure only a
                                         * sanitize that succeeds leaves the failure mode */
        char password[FW_PASSWORD_LEN + 1]; /* ATA security erase: the temporary user password
                                         * (printable, NUL-padded to 32 bytes on the wire) */
        unsigned timeout_s;             /* a command that blocks (format, security erase): how long the
                                         * kernel waits for it */
        fw_seconds estimate;            /* how long the drive says it takes; -1: it does not say */
        bool all_namespaces;            /* NVMe: it acts on every namespace of the controller */
};

/* Where a drive's firmware erase stands, as the drive tells it. */
enum fw_run_state {
        FW_RUN_UNKNOWN,                 /* the drive keeps no status for this command (format,
                                         * security erase), or never ran one */
        FW_RUN_RUNNING,
        FW_RUN_DONE,                    /* the latest one completed without error */
        FW_RUN_FAILED,                  /* the latest one failed (the drive may be in failure mode) */
};

struct fw_status {
        enum fw_run_state state;
        double fraction;                /* of a running one, 0..1; -1 when the drive does not say */
        char text[160];                 /* the drive's own status in words, with its codes, e.g.
                                         * "SSTAT 0002h: in progress, SPROG 6554/65536" */
};

/* fw-nvme.c (NVMe Base Specification 2.0; libnvme) */
/* Send Sanitize (5.24) with c's action, AUSE and overwrite settings. Returns once the controller
 * accepted it (the sanitize runs on in the background). 0, or -errno with the controller's status
 * in err ("Sanitize: Invalid Field in Command (status 0002h)"). */
int fw_nvme_sanitize_start(int fd, const struct fw_command *c, char *err, size_t err_len);
/* The Sanitize Status log page (5.16.1.25, RAE set) as a status. 0 or -errno (err). */
int fw_nvme_sanitize_status(int fd, struct fw_status *s, char *err, size_t err_len);
/* Format NVM (5.14) of c->nsid with LBAF the namespace's current one and SES c->ses (never 0),
 * waiting up to c->timeout_s. Blocks until the controller completes it. 0 or -errno (err). */
int fw_nvme_format(int fd, const struct fw_command *c, char *err, size_t err_len);

/* fw-ata.c (ACS-3; through SG_IO ATA PASS-THROUGH (16)) */
/* SANITIZE: CRYPTO SCRAMBLE EXT, BLOCK ERASE EXT or OVERWRITE EXT (7.38) with FAILURE MODE =
 * c->ause. Returns once the drive accepted it. 0 or -errno (err: the drive's status and error). */
int fw_ata_sanitize_start(int fd, const struct fw_command *c, char *err, size_t err_len);
/* SANITIZE STATUS EXT (7.38.8), without clearing a failure: running with its progress, done, or
 * failed with the reason in LBA 7:0. 0 or -errno (err). */
int fw_ata_sanitize_status(int fd, struct fw_status *s, char *err, size_t err_len);
/* SECURITY SET PASSWORD (user, c->password, master capability High), SECURITY ERASE PREPARE,
 * SECURITY ERASE UNIT (enhanced when c->enhanced) with that password, waiting up to c->timeout_s.
 * Blocks until the drive completes the erase, which leaves security disabled (SEC1). If the erase
 * is not reached or fails after the password was set, the password is removed again (SECURITY
 * DISABLE PASSWORD, after SECURITY UNLOCK if the drive locked) before returning. 0 or -errno
 * (err: every step that failed). */
int fw_ata_security_erase(int fd, const struct fw_command *c, char *err, size_t err_len);
/* After an interruption: if security is enabled and password is the user password, remove it
 * (UNLOCK if locked, then DISABLE PASSWORD). 1 when a password was removed, 0 when security was
 * not enabled (nothing to do), -errno when it is enabled and could not be removed (err). */
int fw_ata_security_cleanup(int fd, const char *password, char *err, size_t err_len);

/* fw-scsi.c (SBC-3 5.30; SPC-4 6.39 REQUEST SENSE) */
/* SANITIZE with IMMED set and c's service action and AUSE (OVERWRITE: a parameter list with
 * c->overwrite_passes and the 4-byte pattern). 0 or -errno (err: the sense in words). */
int fw_scsi_sanitize_start(int fd, const struct fw_command *c, char *err, size_t err_len);
/* REQUEST SENSE: running (NOT READY, 04h/1Bh) with the progress indicator, done (no sense), or
 * failed (MEDIUM ERROR, 31h/03h SANITIZE COMMAND FAILED). 0 or -errno (err). */
int fw_scsi_sanitize_status(int fd, struct fw_status *s, char *err, size_t err_len);

/* firmware.c: the command set's module for each action */
/* Which command the action with c's capabilities sends: c filled from caps, or -EOPNOTSUPP with
 * why not in err. */
int fw_resolve(const struct fw_caps *caps, enum fw_action action, struct fw_command *c, char *err, size_t err_len);
/* The strongest command the drive has: sanitize crypto, block, overwrite; and unless
 * sanitize_only, then Format NVM, then ATA security erase. 0, or -EOPNOTSUPP with why in err. */
int fw_resolve_best(const struct fw_caps *caps, bool sanitize_only, struct fw_command *c, char *err, size_t err_len);
/* Whether the action runs on in the drive after the command returns (sanitize) and is followed
 * with fw_status; the others block in fw_start until they end. */
bool fw_action_background(enum fw_action a);
/* Send the command (fw_*_start, or the blocking format and security erase). 0 or -errno (err). */
int fw_start(int fd, const struct fw_command *c, char *err, size_t err_len);
/* Where the command's operation stands on the drive (sanitize: its status; others: UNKNOWN). */
int fw_status(int fd, const struct fw_command *c, struct fw_status *s, char *err, size_t err_len);
const char *fw_action_name(enum fw_action a);
enum fw_action fw_action_from_name(const char *name);
/* The command with its parameters as reported (with_password: as recorded, with the ATA password). */
struct json_object *fw_command_json(const struct fw_command *c, bool with_password);
/* Read a recorded command back. 0 or -EINVAL. */
int fw_command_from_json(struct json_object *o, struct fw_command *c);
const char *fw_run_state_name(enum fw_run_state s);
