/* drivesim: an ATA drive behind SCSI/ATA translation, from ACS-3 (and SAT-4 for the transport).
 *
 * ATA PASS-THROUGH (12) and (16) (SAT-4 12.2.2, 12.2.3) carry: IDENTIFY DEVICE (ACS-3 7.12), READ
 * NATIVE MAX ADDRESS (EXT) and SET MAX ADDRESS (EXT) (ACS-3 Annex / ATA8-ACS 7.31, 7.50: the host
 * protected area), DEVICE CONFIGURATION IDENTIFY and RESTORE (ATA8-ACS 7.9), the security feature
 * set (ACS-3 4.18, 7.41..7.46: SET PASSWORD, UNLOCK, ERASE PREPARE, ERASE UNIT, FREEZE LOCK,
 * DISABLE PASSWORD, with the state machine SEC1..SEC6 and the password attempt counter) and the
 * sanitize feature set (ACS-3 4.17, 7.38: CRYPTO SCRAMBLE EXT, BLOCK ERASE EXT, OVERWRITE EXT,
 * SANITIZE FREEZE LOCK EXT, SANITIZE ANTIFREEZE LOCK EXT, SANITIZE STATUS EXT).
 *
 * The outcome goes back as the kernel's libata reports it: GOOD, or with CK_COND (or an error)
 * CHECK CONDITION with descriptor format sense data holding the ATA Status Return descriptor
 * (SAT-4 12.2.2.6): RECOVERED ERROR, ATA PASS-THROUGH INFORMATION AVAILABLE (00h/1Dh) on success,
 * ABORTED COMMAND on an error (ERR in the status, ABRT or IDNF in the error field). */
#define _GNU_SOURCE
#include <string.h>

#include "sim.h"

#define ATA_DRDY 0x40
#define ATA_ERR 0x01
#define ATA_ABRT 0x04
#define ATA_IDNF 0x10

/* The task file of a command and of its result. */
struct ata_tf {
        uint16_t features, count;
        uint64_t lba;
        uint8_t device, command;
        uint8_t status, error;
};

/* Sanitize Device Error Reason in LBA 7:0 (ACS-3 Table 98) */
#define SAN_REASON_UNSUCCESSFUL 0x01
#define SAN_REASON_UNSUPPORTED 0x02
#define SAN_REASON_FROZEN 0x03
#define SAN_REASON_ANTIFREEZE 0x04

static int abort_cmd(struct ata_tf *tf, uint8_t error) {
        tf->status = ATA_DRDY | ATA_ERR;
        tf->error = error;
        return -1;
}

/* A string in IDENTIFY words: two characters a word, the first in the high byte. */
static void id_string(uint16_t *w, size_t words, const char *s) {
        uint8_t buf[64];

        sim_copy_string(buf, words * 2, s);
        for (size_t i = 0; i < words; i++)
                w[i] = (uint16_t) (buf[2 * i] << 8 | buf[2 * i + 1]);
}

/* Words 89 and 90: the time in units of 2 minutes, bit 15 clear (the short format, bits 7:0;
 * 255 means more than 508 minutes), 0 when not reported. */
static uint16_t erase_time_word(double seconds) {
        unsigned units = (unsigned) ((seconds + 119) / 120);

        if (units < 1)
                units = 1;
        return (uint16_t) (units > 254 ? 255 : units);
}

static void integrity(uint8_t *p) {
        uint8_t sum = 0xa5;

        /* Word 255 (ACS-3 7.12.7.88): signature A5h, then the checksum that makes the 512 bytes
         * sum to 0 modulo 256 */
        p[510] = 0xa5;
        for (int i = 0; i < 510; i++)
                sum = (uint8_t) (sum + p[i]);
        p[511] = (uint8_t) -sum;
}

/* IDENTIFY DEVICE data (ACS-3 7.12.7), little-endian words. */
static void identify(struct sim_drive *d, uint8_t *out) {
        const struct sim_conf *c = d->conf;
        const struct sim_state *s = &d->st;
        uint16_t w[256] = {};
        uint64_t cur = s->current_sectors;

        w[0] = 0x0040;                  /* fixed, ATA device */
        id_string(w + 10, 10, c->serial);
        id_string(w + 23, 4, c->firmware);
        id_string(w + 27, 20, c->model);
        w[47] = 0x8010;
        w[49] = 0x0300;                 /* LBA and DMA supported */
        w[50] = 0x4000;
        w[53] = 0x0006;                 /* words 64..70 and 88 valid */
        /* Word 59: sanitize feature set (bit 12), CRYPTO SCRAMBLE EXT (13), OVERWRITE EXT (14),
         * BLOCK ERASE EXT (15), SANITIZE ANTIFREEZE LOCK EXT (10) */
        if (c->sanitize) {
                w[59] |= 1u << 12;
                if (c->sanitize & SIM_SAN_CRYPTO)
                        w[59] |= 1u << 13;
                if (c->sanitize & SIM_SAN_OVERWRITE)
                        w[59] |= 1u << 14;
                if (c->sanitize & SIM_SAN_BLOCK)
                        w[59] |= 1u << 15;
                if (c->sanitize_antifreeze)
                        w[59] |= 1u << 10;
        }
        w[60] = (uint16_t) (cur > 0x0fffffff ? 0xffff : cur & 0xffff);
        w[61] = (uint16_t) (cur > 0x0fffffff ? 0x0fff : cur >> 16);
        w[63] = 0x0007;
        w[64] = 0x0003;
        w[80] = 0x07f0;                 /* ATA/ATAPI-4 .. ACS-3 */
        /* Words 82..87: supported and enabled feature sets. Bit 14 of 83, 84, 87 is always one. */
        w[82] = (uint16_t) (1u << 14 | (c->security ? 1u << 1 : 0) | (c->hpa ? 1u << 10 : 0));
        w[83] = (uint16_t) (1u << 14 | (c->lba48 ? 1u << 10 : 0) | (c->dco ? 1u << 11 : 0));
        w[84] = 1u << 14;
        w[85] = (uint16_t) (1u << 14 | (s->sec_enabled ? 1u << 1 : 0) | (c->hpa ? 1u << 10 : 0));
        w[86] = (uint16_t) (1u << 15 | (c->lba48 ? 1u << 10 : 0) | (c->dco ? 1u << 11 : 0));
        w[87] = 1u << 14;
        w[88] = 0x203f;
        if (c->security) {
                w[89] = erase_time_word(c->erase_seconds);
                w[90] = c->enhanced ? erase_time_word(c->enhanced_erase_seconds) : 0;
                w[92] = 0xfffe;         /* master password identifier */
                /* Word 128 (7.12.7.59): supported 0, enabled 1, locked 2, frozen 3, count
                 * expired 4, enhanced erase supported 5, master password capability 8 */
                w[128] = (uint16_t) (1u | (s->sec_enabled ? 1u << 1 : 0) | (s->sec_locked ? 1u << 2 : 0) |
                                     (s->sec_frozen ? 1u << 3 : 0) | (s->sec_expired ? 1u << 4 : 0) |
                                     (c->enhanced ? 1u << 5 : 0) |
                                     (s->sec_enabled && s->master_maximum ? 1u << 8 : 0));
        }
        if (c->lba48) {
                w[100] = (uint16_t) cur;
                w[101] = (uint16_t) (cur >> 16);
                w[102] = (uint16_t) (cur >> 32);
                w[103] = (uint16_t) (cur >> 48);
        }
        w[106] = 0x4000;                /* one 512-byte logical sector a physical one */
        w[119] = 1u << 14;
        w[120] = 1u << 14;
        w[217] = 1;                     /* non-rotating medium */
        for (int i = 0; i < 255; i++) {
                out[2 * i] = (uint8_t) w[i];
                out[2 * i + 1] = (uint8_t) (w[i] >> 8);
        }
        integrity(out);
}

/* The ATA Information VPD page (SAT-4 12.4.2), with the IDENTIFY DEVICE data at byte 60. */
void sim_ata_vpd89(struct sim_drive *d, uint8_t *p) {
        memset(p, 0, 572);
        p[1] = 0x89;
        p[2] = 0x02;
        p[3] = 0x38;
        sim_copy_string(p + 8, 8, "linux");
        sim_copy_string(p + 16, 16, "libata");
        sim_copy_string(p + 32, 4, "1.00");
        /* The device signature: a Register - Device to Host FIS (SATA 10.5.4) */
        p[36] = 0x34;
        p[38] = 0x50;
        p[40] = 0x01;
        p[48] = 0x01;
        p[56] = 0xec;
        identify(d, p + 60);
}

/* DEVICE CONFIGURATION IDENTIFY data (ATA8-ACS 7.9.5): revision 2, the maximum LBA in words
 * 3..6, what may be restricted in word 7 (HPA bit 8? here: security 3, HPA 7, 48-bit 8). */
static void dco_identify(struct sim_drive *d, uint8_t *out) {
        const struct sim_conf *c = d->conf;
        uint16_t w[256] = {};
        uint64_t last = c->dco_sectors - 1;

        w[0] = 0x0002;
        w[1] = 0x0007;
        w[2] = 0x003f;
        w[3] = (uint16_t) last;
        w[4] = (uint16_t) (last >> 16);
        w[5] = (uint16_t) (last >> 32);
        w[6] = (uint16_t) (last >> 48);
        w[7] = (uint16_t) ((c->security ? 1u << 3 : 0) | (c->hpa ? 1u << 7 : 0) | (c->lba48 ? 1u << 8 : 0));
        for (int i = 0; i < 255; i++) {
                out[2 * i] = (uint8_t) w[i];
                out[2 * i + 1] = (uint8_t) (w[i] >> 8);
        }
        integrity(out);
}

/* A password from a security command's data: identifier (word 0 bit 0: master) and 32 bytes. */
static bool password_ok(struct sim_drive *d, const uint8_t *data, bool unlock_or_disable) {
        struct sim_state *s = &d->st;
        bool master = data[0] & 1;
        const char *want = master ? s->master_pw : s->user_pw;

        /* With Maximum master password capability the master password only erases (4.18.4.3) */
        if (master && unlock_or_disable && s->master_maximum && s->sec_enabled)
                return false;
        if (!master && !s->sec_enabled)
                return false;
        return memcmp(data + 2, want, 32) == 0;
}

/* A wrong password: one attempt fewer; at none, the count expired until a power cycle (4.18.8). */
static int wrong_password(struct sim_drive *d, struct ata_tf *tf) {
        struct sim_state *s = &d->st;

        if (s->sec_attempts > 0)
                s->sec_attempts--;
        if (s->sec_attempts == 0)
                s->sec_expired = true;
        d->dirty = true;
        return abort_cmd(tf, ATA_ABRT);
}

static int security(struct sim_drive *d, struct ata_tf *tf, const uint8_t *data, unsigned len, bool prepared) {
        const struct sim_conf *c = d->conf;
        struct sim_state *s = &d->st;
        bool needs_data = tf->command == 0xf1 || tf->command == 0xf2 || tf->command == 0xf4 || tf->command == 0xf6;

        if (!c->security || (needs_data && len < 512))
                return abort_cmd(tf, ATA_ABRT);
        /* Frozen (SEC2, SEC6): everything but FREEZE LOCK aborts */
        if (s->sec_frozen && tf->command != 0xf5)
                return abort_cmd(tf, ATA_ABRT);
        switch (tf->command) {
        case 0xf1:                      /* SECURITY SET PASSWORD (7.45) */
                if (s->sec_locked)
                        return abort_cmd(tf, ATA_ABRT);
                if (data[0] & 1) {
                        memcpy(s->master_pw, data + 2, 32);
                } else {
                        memcpy(s->user_pw, data + 2, 32);
                        s->sec_enabled = true;
                        s->master_maximum = data[1] & 1;        /* word 0 bit 8 */
                }
                d->dirty = true;
                return 0;
        case 0xf2:                      /* SECURITY UNLOCK (7.46) */
                if (s->sec_expired)
                        return abort_cmd(tf, ATA_ABRT);
                if (!s->sec_enabled)
                        return 0;
                if (!password_ok(d, data, true))
                        return wrong_password(d, tf);
                if (s->sec_locked) {
                        s->sec_locked = false;
                        d->dirty = true;
                }
                return 0;
        case 0xf3:                      /* SECURITY ERASE PREPARE (7.43) */
                s->erase_prepared = true;
                d->dirty = true;
                return 0;
        case 0xf4: {                    /* SECURITY ERASE UNIT (7.44) */
                bool enhanced = data[0] & 2;

                if (!prepared || s->sec_expired || (enhanced && !c->enhanced))
                        return abort_cmd(tf, ATA_ABRT);
                if (!password_ok(d, data, false))
                        return wrong_password(d, tf);
                /* Normal erase: the drive's erase pattern over the user data; enhanced: a
                 * vendor pattern, here data that looks random (as a new media key leaves) */
                s->op_fill = enhanced ? SIM_FILL_RANDOM : SIM_FILL_PATTERN;
                s->op_pattern[0] = (uint8_t) c->erase_pattern;
                s->op_pattern_len = 1;
                s->op_passes = 1;
                s->op_invert = s->op_fail = s->op_stuck = false;
                s->op_action = enhanced;
                sim_start(d, SIM_OP_SECURITY_ERASE, enhanced ? c->enhanced_erase_seconds : c->erase_seconds);
                /* The command completes when the erase does. */
                sim_wait(d);
                return 0;
        }
        case 0xf5:                      /* SECURITY FREEZE LOCK (7.44): SEC1 -> SEC2, SEC5 -> SEC6 */
                if (s->sec_locked)
                        return abort_cmd(tf, ATA_ABRT);
                if (!s->sec_frozen) {
                        s->sec_frozen = true;
                        d->dirty = true;
                }
                return 0;
        case 0xf6:                      /* SECURITY DISABLE PASSWORD (7.42): SEC5 -> SEC1 */
                if (s->sec_locked || s->sec_expired)
                        return abort_cmd(tf, ATA_ABRT);
                if (!s->sec_enabled)
                        return 0;
                if (!password_ok(d, data, true))
                        return wrong_password(d, tf);
                s->sec_enabled = false;
                memset(s->user_pw, 0, sizeof s->user_pw);
                d->dirty = true;
                return 0;
        }
        return abort_cmd(tf, ATA_ABRT);
}

/* SANITIZE DEVICE (7.38): the subcommand in FEATURE, a signature in LBA 31:0 (or 47:32). */
static int sanitize(struct sim_drive *d, struct ata_tf *tf) {
        const struct sim_conf *c = d->conf;
        struct sim_state *s = &d->st;
        unsigned bit = 0;

        if (!c->sanitize)
                return abort_cmd(tf, ATA_ABRT);
        if (tf->features == 0x0000) {
                /* SANITIZE STATUS EXT (7.38.6): COUNT bit 15 completed without error, 14 in
                 * progress, 13 frozen, 12 antifreeze; LBA 15:0 the progress */
                bool running = s->op == SIM_OP_SANITIZE;
                bool failed = !running && s->san_status == 3;

                /* CLEAR SANITIZE OPERATION FAILED (COUNT bit 0): only when the failed command
                 * had FAILURE MODE set */
                if (failed && (tf->count & 1) && s->san_exit_allowed) {
                        s->san_failure_mode = false;
                        s->san_status = 0;
                        d->dirty = true;
                        failed = false;
                }
                tf->count = (uint16_t) ((s->san_status == 1 && !running ? 1u << 15 : 0) | (running ? 1u << 14 : 0) |
                                        (s->san_frozen ? 1u << 13 : 0) | (s->san_antifreeze ? 1u << 12 : 0));
                tf->lba = running ? sim_progress(d) : 0xffff;
                if (failed) {
                        tf->lba = SAN_REASON_UNSUCCESSFUL;
                        tf->status = ATA_DRDY | ATA_ERR;
                        tf->error = ATA_ABRT;
                        return -1;
                }
                return 0;
        }
        if (s->op == SIM_OP_SANITIZE)
                return abort_cmd(tf, ATA_ABRT);
        switch (tf->features) {
        case 0x0011:                    /* CRYPTO SCRAMBLE EXT (7.38.2): "Cryp" */
                if ((tf->lba & 0xffffffff) != 0x43727970)
                        return abort_cmd(tf, ATA_ABRT);
                bit = SIM_SAN_CRYPTO;
                break;
        case 0x0012:                    /* BLOCK ERASE EXT (7.38.3): "BkEr" */
                if ((tf->lba & 0xffffffff) != 0x426b4572)
                        return abort_cmd(tf, ATA_ABRT);
                bit = SIM_SAN_BLOCK;
                break;
        case 0x0014:                    /* OVERWRITE EXT (7.38.4): "OW" in LBA 47:32, the pattern in 31:0 */
                if ((tf->lba >> 32) != 0x4f57)
                        return abort_cmd(tf, ATA_ABRT);
                bit = SIM_SAN_OVERWRITE;
                break;
        case 0x0020:                    /* SANITIZE FREEZE LOCK EXT (7.38.5): "FrLk" */
                if ((tf->lba & 0xffffffff) != 0x46724c6b)
                        return abort_cmd(tf, ATA_ABRT);
                if (s->san_antifreeze) {
                        tf->lba = SAN_REASON_ANTIFREEZE;
                        return abort_cmd(tf, ATA_ABRT);
                }
                s->san_frozen = true;
                d->dirty = true;
                return 0;
        case 0x0040:                    /* SANITIZE ANTIFREEZE LOCK EXT (7.38.1): "Anti" */
                if ((tf->lba & 0xffffffff) != 0x416e7469 || !c->sanitize_antifreeze)
                        return abort_cmd(tf, ATA_ABRT);
                s->san_antifreeze = true;
                d->dirty = true;
                return 0;
        default:
                tf->lba = SAN_REASON_UNSUPPORTED;
                return abort_cmd(tf, ATA_ABRT);
        }
        if (!(c->sanitize & bit)) {
                tf->lba = SAN_REASON_UNSUPPORTED;
                return abort_cmd(tf, ATA_ABRT);
        }
        if (s->san_frozen) {
                tf->lba = SAN_REASON_FROZEN;
                return abort_cmd(tf, ATA_ABRT);
        }
        s->op_passes = 1;
        s->op_invert = false;
        if (bit == SIM_SAN_CRYPTO) {
                s->op_fill = SIM_FILL_RANDOM;
        } else if (bit == SIM_SAN_BLOCK) {
                s->op_fill = SIM_FILL_PATTERN;
                s->op_pattern[0] = (uint8_t) c->erase_pattern;
                s->op_pattern_len = 1;
        } else {
                uint32_t p = (uint32_t) tf->lba;

                /* COUNT: INVERT PATTERN bit 7, OVERWRITE PASS COUNT bits 3:0 (0: 16 passes) */
                s->op_passes = (tf->count & 0xf) ? (tf->count & 0xf) : 16;
                s->op_invert = tf->count & 0x80;
                s->op_fill = SIM_FILL_PATTERN;
                for (int i = 0; i < 4; i++)
                        s->op_pattern[i] = (uint8_t) (p >> (8 * i));
                s->op_pattern_len = 4;
        }
        /* FAILURE MODE, COUNT bit 4: whether SANITIZE STATUS EXT may clear a failure */
        s->op_action = tf->features;
        s->op_ause = tf->count & 0x10;
        s->op_fail = c->sanitize_fail;
        s->op_stuck = c->sanitize_stuck;
        s->san_passes_done = 0;
        sim_start(d, SIM_OP_SANITIZE, c->sanitize_seconds);
        return 0;
}

/* Commands a drive in the sanitize operation state takes (ACS-3 4.17.5, Table 19, shortened). */
static bool allowed_while_sanitizing(const struct ata_tf *tf) {
        return tf->command == 0xec || (tf->command == 0xb4 && tf->features == 0) || tf->command == 0x2f ||
               tf->command == 0xe5 || tf->command == 0xb0;
}

static int ata_execute(struct sim_drive *d, struct ata_tf *tf, uint8_t *data, unsigned len) {
        const struct sim_conf *c = d->conf;
        struct sim_state *s = &d->st;
        bool prepared = s->erase_prepared, native = s->native_read;

        /* ERASE PREPARE and READ NATIVE MAX arm only the command right after them */
        if (s->erase_prepared || s->native_read) {
                s->erase_prepared = s->native_read = false;
                d->dirty = true;
        }
        tf->status = ATA_DRDY;
        tf->error = 0;
        if ((s->op == SIM_OP_SANITIZE || s->san_failure_mode) && !allowed_while_sanitizing(tf) &&
            tf->command != 0xb4)
                return abort_cmd(tf, ATA_ABRT);
        switch (tf->command) {
        case 0xec:                      /* IDENTIFY DEVICE */
                if (len < 512)
                        return abort_cmd(tf, ATA_ABRT);
                identify(d, data);
                return 0;
        case 0x27:                      /* READ NATIVE MAX ADDRESS EXT */
        case 0xf8:                      /* READ NATIVE MAX ADDRESS */
                if (!c->hpa || (tf->command == 0x27 && !c->lba48))
                        return abort_cmd(tf, ATA_ABRT);
                tf->lba = s->native_sectors - 1;
                if (tf->command == 0xf8) {
                        if (tf->lba > 0x0fffffff)
                                tf->lba = 0x0fffffff;
                        tf->device = (uint8_t) (0x40 | (tf->lba >> 24 & 0xf));
                        tf->lba &= 0xffffff;
                }
                s->native_read = true;
                d->dirty = true;
                return 0;
        case 0x37:                      /* SET MAX ADDRESS EXT */
        case 0xf9: {                    /* SET MAX ADDRESS (FEATURE 0 only) */
                uint64_t lba = tf->lba;

                if (!c->hpa || !native || (tf->command == 0xf9 && tf->features != 0))
                        return abort_cmd(tf, ATA_ABRT);
                if (tf->command == 0xf9)
                        lba = (tf->lba & 0xffffff) | (uint64_t) (tf->device & 0xf) << 24;
                if (lba >= s->native_sectors)
                        return abort_cmd(tf, ATA_IDNF);
                /* COUNT bit 0 (VOLATILE) is taken as given: the new maximum stays either way. */
                s->current_sectors = lba + 1;
                d->dirty = true;
                return 0;
        }
        case 0xb1:                      /* DEVICE CONFIGURATION */
                if (!c->dco)
                        return abort_cmd(tf, ATA_ABRT);
                if ((tf->features & 0xff) == 0xc2) {
                        if (len < 512)
                                return abort_cmd(tf, ATA_ABRT);
                        dco_identify(d, data);
                        return 0;
                }
                /* DEVICE CONFIGURATION RESTORE (ATA8-ACS 7.9.4): aborted while a host protected
                 * area is set; else the factory maximum (and no overlay) again. */
                if ((tf->features & 0xff) == 0xc0) {
                        if (s->current_sectors < s->native_sectors)
                                return abort_cmd(tf, ATA_ABRT);
                        s->native_sectors = s->current_sectors = c->dco_sectors;
                        d->dirty = true;
                        return 0;
                }
                return abort_cmd(tf, ATA_ABRT);
        case 0xf1: case 0xf2: case 0xf3: case 0xf4: case 0xf5: case 0xf6:
                return security(d, tf, data, len, prepared);
        case 0xb4:
                return sanitize(d, tf);
        case 0x2f:                      /* READ LOG EXT (7.24): the General Purpose Log Directory only */
                if ((tf->lba & 0xff) != 0 || len < 512)
                        return abort_cmd(tf, ATA_ABRT);
                memset(data, 0, 512);
                data[0] = 0x01;         /* GPL version 1, no logs listed */
                return 0;
        case 0xe5:                      /* CHECK POWER MODE: active */
                tf->count = 0xff;
                return 0;
        }
        return abort_cmd(tf, ATA_ABRT);
}

int sim_ata_command(struct sim_drive *d, const uint8_t *cdb, void *data, unsigned len, int dir, uint8_t *sense,
                    unsigned *sense_len) {
        struct ata_tf tf = {};
        bool ext = false, ck_cond;
        uint8_t *desc;
        int r;

        /* SAT-4 12.2.2 (16) and 12.2.3 (12) */
        if (cdb[0] == 0x85) {
                ext = cdb[1] & 1;
                ck_cond = cdb[2] & 0x20;
                tf.features = (uint16_t) (cdb[4] | (ext ? cdb[3] << 8 : 0));
                tf.count = (uint16_t) (cdb[6] | (ext ? cdb[5] << 8 : 0));
                tf.lba = (uint64_t) cdb[8] | (uint64_t) cdb[10] << 8 | (uint64_t) cdb[12] << 16;
                if (ext)
                        tf.lba |= (uint64_t) cdb[7] << 24 | (uint64_t) cdb[9] << 32 | (uint64_t) cdb[11] << 40;
                tf.device = cdb[13];
                tf.command = cdb[14];
        } else {
                ck_cond = cdb[2] & 0x20;
                tf.features = cdb[3];
                tf.count = cdb[4];
                tf.lba = (uint64_t) cdb[5] | (uint64_t) cdb[6] << 8 | (uint64_t) cdb[7] << 16;
                tf.device = cdb[8];
                tf.command = cdb[9];
        }
        (void) dir;
        r = ata_execute(d, &tf, data, len);
        if (r == 0 && !ck_cond)
                return 0;
        /* Descriptor format sense with the ATA Status Return descriptor (SAT-4 12.2.2.6) */
        memset(sense, 0, 32);
        sense[0] = 0x72;
        sense[1] = r ? 0x0b : 0x01;     /* ABORTED COMMAND, or RECOVERED ERROR */
        sense[2] = 0x00;
        sense[3] = r ? 0x00 : 0x1d;     /* ATA PASS-THROUGH INFORMATION AVAILABLE */
        sense[7] = 14;
        desc = sense + 8;
        desc[0] = 0x09;
        desc[1] = 0x0c;
        desc[2] = ext ? 1 : 0;
        desc[3] = tf.error;
        desc[4] = (uint8_t) (tf.count >> 8);
        desc[5] = (uint8_t) tf.count;
        desc[6] = (uint8_t) (tf.lba >> 24);
        desc[7] = (uint8_t) tf.lba;
        desc[8] = (uint8_t) (tf.lba >> 32);
        desc[9] = (uint8_t) (tf.lba >> 8);
        desc[10] = (uint8_t) (tf.lba >> 40);
        desc[11] = (uint8_t) (tf.lba >> 16);
        desc[12] = tf.device;
        desc[13] = tf.status;
        *sense_len = 22;
        return 0x02;
}
