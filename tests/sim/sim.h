/* drivesim: a drive simulator at the ioctl boundary, for the tests (tests/sim/README.md).
 *
 * libdrivesim.so is loaded with LD_PRELOAD into a program (the daemon under test, or nvme-cli,
 * hdparm and sg3_utils to check the simulator itself). It interposes ioctl(): for a file
 * descriptor of a block device named in the configuration (env DRIVESIM_CONFIG) it answers the
 * ioctls an NVMe, ATA (behind SAT) or SCSI drive would, from the specifications; everything else
 * goes to the real ioctl. Each drive's state lives in a file of its own in the directory named by
 * env DRIVESIM_STATE, so that it outlives the processes that ask (a daemon SIGKILLed during a
 * sanitize and restarted finds the drive still sanitizing, then done).
 *
 * sim.c: interposition, configuration, state file, time and the erase itself; sim-nvme.c,
 * sim-ata.c, sim-scsi.c: one command set each. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum sim_type { SIM_NVME, SIM_ATA, SIM_SCSI };

/* Sanitize actions a drive supports (config "sanitize = crypto block overwrite"). */
#define SIM_SAN_CRYPTO    0x1
#define SIM_SAN_BLOCK     0x2
#define SIM_SAN_OVERWRITE 0x4

/* One simulated drive, as configured: what it is and can do, and its state at first use. */
struct sim_conf {
        char path[128];                 /* the section name: the device losetup printed */
        dev_t rdev;
        enum sim_type type;
        char model[41], serial[21], firmware[9], vendor[9];
        uint64_t bytes;                 /* the loop device's size, read at first use */
        unsigned sanitize;              /* SIM_SAN_* */
        bool sanitize_fail;             /* every sanitize ends in failure (data left as it was) */
        bool sanitize_stuck;            /* every sanitize stops progressing at 10% and never ends */
        bool sanitize_frozen;           /* ATA: in the sanitize frozen state (SD1) at first use */
        bool sanitize_antifreeze;       /* ATA: SANITIZE ANTIFREEZE LOCK EXT supported */
        double sanitize_seconds;        /* how long any sanitize takes */
        double format_seconds;          /* NVMe Format NVM, SCSI FORMAT UNIT */
        int erase_pattern;              /* byte a block erase or user-data erase leaves */
        /* NVMe */
        bool format;                    /* OACS bit 1 */
        unsigned fna;                   /* FNA bits 0..2 */
        bool ndi;                       /* SANICAP NDI */
        int64_t est_overwrite, est_block, est_crypto; /* seconds, -1: no estimate */
        /* ATA */
        bool security, enhanced;        /* security feature set, enhanced erase */
        double erase_seconds, enhanced_erase_seconds; /* how long SECURITY ERASE UNIT takes */
        char user_password[33], master_password[33];
        bool master_maximum;            /* master password capability Maximum */
        bool locked, frozen, count_expired; /* state at first use (locked needs user_password) */
        bool hpa, dco, lba48;
        uint64_t native_sectors;        /* READ NATIVE MAX ADDRESS: default the device's size */
        uint64_t dco_sectors;           /* DCO IDENTIFY maximum: default native_sectors */
        /* SCSI */
        bool rsoc, format_unit;
};

/* What changes, kept in the drive's state file (written atomically on every change). */
enum sim_op { SIM_OP_NONE, SIM_OP_SANITIZE, SIM_OP_FORMAT, SIM_OP_SECURITY_ERASE };
enum sim_fill { SIM_FILL_PATTERN, SIM_FILL_RANDOM };

struct sim_state {
        /* The operation running, if any: what it will leave on the medium and when it ends. */
        int op;                         /* enum sim_op */
        int64_t op_start_ms, op_end_ms; /* CLOCK_REALTIME */
        int op_action;                  /* NVMe SANACT / SES, ATA SANITIZE feature, SCSI service action */
        uint32_t op_cdw10;              /* NVMe: SCDW10 of the log page */
        int op_fill;                    /* enum sim_fill */
        uint8_t op_pattern[512];        /* repeated over the medium (SIM_FILL_PATTERN) */
        unsigned op_pattern_len;        /* bytes of op_pattern: 1 (a byte), 4 (a 32-bit pattern), up to 512 */
        unsigned op_passes;
        bool op_invert;                 /* invert the pattern between passes */
        bool op_fail, op_stuck;
        bool op_ause;                   /* AUSE (NVMe, SCSI) or FAILURE MODE (ATA): a failure may be left
                                         * by Exit Failure Mode (or CLEAR SANITIZE OPERATION FAILED) */
        /* Sanitize: the last one's outcome (NVMe SSTAT bits 2:0 values) */
        int san_status;                 /* 0 never, 1 done, 2 running, 3 failed */
        bool san_failure_mode;          /* failed: only sanitize commands work */
        bool san_exit_allowed;          /* the failed one had op_ause: Exit Failure Mode leaves it */
        int san_passes_done;
        bool san_frozen, san_antifreeze;
        /* ATA security (ACS-3 4.18): enabled/locked/frozen give SEC1..SEC6 */
        bool sec_enabled, sec_locked, sec_frozen, sec_expired;
        int sec_attempts;               /* password attempts left (5 after power-on) */
        char user_pw[33], master_pw[33]; /* 32 bytes each, kept as given (NUL padded) */
        bool master_maximum;
        bool erase_prepared;            /* the command before was SECURITY ERASE PREPARE */
        bool native_read;               /* the command before was READ NATIVE MAX ADDRESS */
        uint64_t current_sectors;       /* what the host may address (HPA: below native) */
        uint64_t native_sectors;        /* READ NATIVE MAX (a DCO: below dco_sectors until restored) */
        bool format_done;               /* SCSI: a FORMAT UNIT ran */
};

struct sim_drive {
        const struct sim_conf *conf;
        struct sim_state st;
        bool dirty;                     /* st changed: written back when the command ends */
};

/* sim.c */
int64_t sim_now_ms(void);
/* Called by each command set at the start of every command: completes an operation whose time is
 * up (erasing the medium as the drive would). */
void sim_settle(struct sim_drive *d);
/* The running operation's progress in 0..65535, and whether one runs. */
unsigned sim_progress(const struct sim_drive *d);
bool sim_busy(const struct sim_drive *d);
/* Start an operation of d->st.op_* that ends after seconds (stuck: never). */
void sim_start(struct sim_drive *d, int op, double seconds);
/* Block the caller until the running synchronous operation ends (SECURITY ERASE UNIT, Format NVM,
 * a SCSI command without IMMED), then settle. */
void sim_wait(struct sim_drive *d);
void sim_copy_string(uint8_t *dst, size_t len, const char *s);

/* sim-nvme.c, sim-ata.c, sim-scsi.c: one ioctl of the drive; returns what ioctl() returns (errno
 * set on -1). */
int sim_nvme_ioctl(struct sim_drive *d, unsigned long req, void *arg);
int sim_sg_io(struct sim_drive *d, void *hdr);
int sim_ata_command(struct sim_drive *d, const uint8_t *cdb, void *data, unsigned len, int dir, uint8_t *sense,
                    unsigned *sense_len);
void sim_ata_vpd89(struct sim_drive *d, uint8_t *p);
/* A SCSI result: status and fixed or descriptor sense (sim-scsi.c). */
int sim_scsi_sense(uint8_t *sense, unsigned *len, int key, int asc, int ascq, bool desc, int sks);
