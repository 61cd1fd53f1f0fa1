/* ATA: what the drive can do to erase itself (firmware.h), read through SG_IO with ATA
 * PASS-THROUGH (16) (SAT-4 12.2.2), the way hdparm and smartctl reach a SATA drive behind the
 * kernel's SCSI/ATA translation (libata) or a SAS HBA's.
 *
 * Three commands, each of which only reads: IDENTIFY DEVICE (ACS-3 7.12) for the security and
 * sanitize feature sets and the capacity the host sees; READ NATIVE MAX ADDRESS (EXT) (ACS-3
 * 7.33, 7.34, obsolete since ACS-4) or, on a drive with the Accessible Max Address Configuration
 * feature set instead of the HPA one, GET NATIVE MAX ADDRESS EXT (ACS-3 7.6.2), for the native
 * capacity; DEVICE CONFIGURATION IDENTIFY (ACS-3 7.9.4) for the capacity a device configuration
 * overlay hides. The native max address comes back in the registers, so those commands are sent
 * with CK_COND set and the registers read from the sense data. Everything byte-level is in pure
 * functions (fw-ata.h) that the unit tests check without a device.
 *
 * Then the commands that erase, which a job's firmware thread sends (firmware.h): SANITIZE DEVICE
 * (ACS-3 7.38) and its status, the security erase (ACS-3 4.18, 7.41-7.46: SET PASSWORD, ERASE
 * PREPARE, ERASE UNIT, with the password removed again when the erase is not reached), and SET
 * MAX ADDRESS (ACS-2 7.51/7.53) to remove a host protected area before a wipe. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <openssl/crypto.h>

#include "daemon.h"
#include "firmware.h"
#include "fw-ata.h"

/* ATA PASS-THROUGH (16), SAT-4 12.2.2.1 table 197:
 *   byte 0    85h
 *   byte 1    MULTIPLE_COUNT (7:5), PROTOCOL (4:1), EXTEND (0)
 *   byte 2    OFF_LINE (7:6), CK_COND (5), T_TYPE (4), T_DIR (3), BYTE_BLOCK (2), T_LENGTH (1:0)
 *   byte 3/4  FEATURE (15:8) / (7:0)
 *   byte 5/6  COUNT (15:8) / (7:0)
 *   byte 7/8  LBA (31:24) / (7:0)
 *   byte 9/10 LBA (39:32) / (15:8)
 *   byte 11/12 LBA (47:40) / (23:16)
 *   byte 13   DEVICE, byte 14 COMMAND, byte 15 CONTROL
 * The high-order bytes (3, 5, 7, 9, 11) are only sent with EXTEND (a 48-bit command). */
#define SAT_ATA_PASS_THROUGH_16 0x85
#define SAT_PROTOCOL_NON_DATA 3         /* SAT-4 table 198 */
#define SAT_PROTOCOL_PIO_DATA_IN 4
#define SAT_PROTOCOL_PIO_DATA_OUT 5
#define SAT_CK_COND 0x20
#define SAT_T_DIR_IN 0x08
#define SAT_BYTE_BLOCK 0x04             /* the transfer length is in blocks (T_TYPE 0: 512 bytes) */
#define SAT_T_LENGTH_COUNT 0x02         /* the transfer length is in the COUNT field */
#define ATA_DEVICE_LBA 0x40             /* DEVICE bit 6: LBA addressing, set by READ NATIVE MAX */

#define ATA_TIMEOUT_MS 15000

struct ata_tf {
        uint16_t feature, count;
        uint64_t lba;
        uint8_t device, command;
};

static void ata_cdb(uint8_t cdb[FW_ATA_CDB_LEN], unsigned protocol, bool ext, uint8_t byte2, const struct ata_tf *tf) {
        memset(cdb, 0, FW_ATA_CDB_LEN);
        cdb[0] = SAT_ATA_PASS_THROUGH_16;
        cdb[1] = (uint8_t) (protocol << 1 | (ext ? 1 : 0));
        cdb[2] = byte2;
        cdb[4] = (uint8_t) tf->feature;
        cdb[6] = (uint8_t) tf->count;
        cdb[8] = (uint8_t) tf->lba;
        cdb[10] = (uint8_t) (tf->lba >> 8);
        cdb[12] = (uint8_t) (tf->lba >> 16);
        if (ext) {
                cdb[3] = (uint8_t) (tf->feature >> 8);
                cdb[5] = (uint8_t) (tf->count >> 8);
                cdb[7] = (uint8_t) (tf->lba >> 24);
                cdb[9] = (uint8_t) (tf->lba >> 32);
                cdb[11] = (uint8_t) (tf->lba >> 40);
        }
        cdb[13] = tf->device;
        cdb[14] = tf->command;
}

/* A PIO data-in command of one 512-byte block. Without CK_COND, as hdparm sends IDENTIFY: the
 * data is what it returns, and some translations do not both move data and return sense. */
static void ata_cdb_pio_in(uint8_t cdb[FW_ATA_CDB_LEN], uint8_t command, uint16_t feature) {
        ata_cdb(cdb, SAT_PROTOCOL_PIO_DATA_IN, false, SAT_T_DIR_IN | SAT_BYTE_BLOCK | SAT_T_LENGTH_COUNT,
                &(struct ata_tf) { .feature = feature, .count = 1, .command = command });
}

void fw_ata_cdb_identify(uint8_t cdb[FW_ATA_CDB_LEN]) {
        ata_cdb_pio_in(cdb, FW_ATA_IDENTIFY, 0);
}

void fw_ata_cdb_dco_identify(uint8_t cdb[FW_ATA_CDB_LEN]) {
        ata_cdb_pio_in(cdb, FW_ATA_DCO, FW_ATA_DCO_IDENTIFY);
}

void fw_ata_cdb_read_native_max(uint8_t cdb[FW_ATA_CDB_LEN], bool ext) {
        ata_cdb(cdb, SAT_PROTOCOL_NON_DATA, ext, SAT_CK_COND,
                &(struct ata_tf) { .device = ATA_DEVICE_LBA,
                                   .command = ext ? FW_ATA_READ_NATIVE_MAX_EXT : FW_ATA_READ_NATIVE_MAX });
}

void fw_ata_cdb_get_native_max(uint8_t cdb[FW_ATA_CDB_LEN]) {
        ata_cdb(cdb, SAT_PROTOCOL_NON_DATA, true, SAT_CK_COND,
                &(struct ata_tf) { .feature = FW_ATA_AMAC_GET_NATIVE_MAX, .device = ATA_DEVICE_LBA,
                                   .command = FW_ATA_AMAC });
}

/* Sense data (SPC-4 4.5): response codes 70h/71h fixed, 72h/73h descriptor. */
#define SENSE_KEY_RECOVERED_ERROR 0x01
#define SENSE_KEY_ILLEGAL_REQUEST 0x05
#define SENSE_DESC_ATA_STATUS_RETURN 0x09       /* SAT-4 12.2.5, table 205 */

/* The ATA Status Return descriptor (SAT-4 table 205): 09h, 0Ch, EXTEND (bit 0), ERROR, COUNT
 * 15:8, COUNT 7:0, LBA 31:24, LBA 7:0, LBA 39:32, LBA 15:8, LBA 47:40, LBA 23:16, DEVICE, STATUS.
 * Without EXTEND the high-order bytes are not valid. */
static void sense_ata_status_return(const uint8_t *d, struct fw_ata_result *r) {
        r->extend = d[2] & 0x01;
        r->error = d[3];
        r->count = d[5];
        r->lba = (uint64_t) d[7] | (uint64_t) d[9] << 8 | (uint64_t) d[11] << 16;
        if (r->extend) {
                r->count |= (uint16_t) (d[4] << 8);
                r->lba |= (uint64_t) d[6] << 24 | (uint64_t) d[8] << 32 | (uint64_t) d[10] << 40;
        }
        r->device = d[12];
        r->status = d[13];
}

int fw_ata_sense_decode(const uint8_t *sense, size_t len, struct fw_ata_result *r) {
        uint8_t code, key;

        *r = (struct fw_ata_result) {};
        if (len < 8)
                return -ENODATA;
        code = sense[0] & 0x7f;
        if (code == 0x72 || code == 0x73) {
                size_t end = 8 + (size_t) sense[7];

                key = sense[1] & 0x0f;
                if (key == SENSE_KEY_ILLEGAL_REQUEST)
                        return -EOPNOTSUPP;
                if (end > len)
                        end = len;
                /* Each descriptor: type, additional length, then that many bytes. */
                for (size_t at = 8; at + 2 <= end; at += 2 + (size_t) sense[at + 1]) {
                        if (sense[at] == SENSE_DESC_ATA_STATUS_RETURN && sense[at + 1] >= 0x0c && at + 14 <= end) {
                                sense_ata_status_return(sense + at, r);
                                return 0;
                        }
                }
                return -ENODATA;
        }
        if (code == 0x70 || code == 0x71) {
                /* Fixed format (SAT-4 12.2.2.6, table 201): INFORMATION bytes 3..6 are ERROR,
                 * STATUS, DEVICE, COUNT 7:0; COMMAND-SPECIFIC INFORMATION byte 8 holds EXTEND
                 * (7), COUNT UPPER NONZERO (6), LBA UPPER NONZERO (5) and the log index, bytes
                 * 9..11 LBA 7:0, 15:8, 23:16. What is above bit 23 of the LBA is lost. */
                if (len < 12 || (size_t) sense[7] + 8 < 12)
                        return -ENODATA;
                key = sense[2] & 0x0f;
                if (key == SENSE_KEY_ILLEGAL_REQUEST)
                        return -EOPNOTSUPP;
                /* ATA PASS-THROUGH INFORMATION AVAILABLE (00h/1Dh), or a command that ended in
                 * error, whose registers are there when a Status is. */
                if (!(key == SENSE_KEY_RECOVERED_ERROR && len >= 14 && sense[12] == 0x00 && sense[13] == 0x1d) &&
                    sense[4] == 0)
                        return -ENODATA;
                r->error = sense[3];
                r->status = sense[4];
                r->device = sense[5];
                r->count = sense[6];
                r->extend = sense[8] & 0x80;
                r->lba_incomplete = r->extend && (sense[8] & 0x20);
                r->lba = (uint64_t) sense[9] | (uint64_t) sense[10] << 8 | (uint64_t) sense[11] << 16;
                return 0;
        }
        return -ENODATA;
}

bool fw_ata_aborted(const struct fw_ata_result *r) {
        return (r->status & FW_ATA_STATUS_ERR) && (r->error & FW_ATA_ERROR_ABRT);
}

uint64_t fw_ata_native_max_sectors(const struct fw_ata_result *r, bool ext) {
        uint64_t lba = ext ? r->lba & 0xffffffffffffULL : (r->lba & 0xffffff) | (uint64_t) (r->device & 0x0f) << 24;

        return lba + 1;
}

uint16_t fw_ata_word(const uint8_t *data, unsigned i) {
        return (uint16_t) (data[2 * i] | data[2 * i + 1] << 8);
}

int fw_ata_integrity(const uint8_t data[FW_ATA_DATA_LEN]) {
        uint8_t sum = 0;

        if (data[510] != 0xa5)
                return 0;
        for (size_t i = 0; i < FW_ATA_DATA_LEN; i++)
                sum = (uint8_t) (sum + data[i]);
        return sum == 0 ? 0 : -EBADMSG;
}

fw_seconds fw_ata_erase_time(uint16_t w) {
        unsigned v;

        if (w & 0x8000) {
                /* ACS-3: bit 15 set, bits 14:0 in units of 2 minutes, 7FFFh "more than 65532". */
                v = w & 0x7fff;
                if (v == 0x7fff)
                        v = 32766;
        } else {
                /* ATA8-ACS and hdparm: bits 7:0 in units of 2 minutes, FFh "more than 508". */
                v = w & 0xff;
                if (v == 0xff)
                        v = 254;
        }
        return v == 0 ? -1 : (fw_seconds) v * 2 * 60;
}

/* Words 82..84 are valid when word 83 bits 15:14 are 01b (ACS-3 7.12.7.40); 119 likewise. */
static bool identify_valid(const uint8_t *id, unsigned w) {
        return (fw_ata_word(id, w) & 0xc000) == 0x4000;
}

bool fw_ata_identify_lba48(const uint8_t id[FW_ATA_DATA_LEN]) {
        return identify_valid(id, 83) && (fw_ata_word(id, 83) & (1u << 10));
}

bool fw_ata_identify_amac(const uint8_t id[FW_ATA_DATA_LEN]) {
        return identify_valid(id, 119) && (fw_ata_word(id, 119) & (1u << 8));
}

static uint64_t words64(const uint8_t *data, unsigned first) {
        uint64_t v = 0;

        for (unsigned i = 4; i-- > 0;)
                v = v << 16 | fw_ata_word(data, first + i);
        return v;
}

int fw_ata_identify_decode(const uint8_t id[FW_ATA_DATA_LEN], struct fw_ata_caps *c) {
        uint16_t w59 = fw_ata_word(id, 59), w82 = fw_ata_word(id, 82), w83 = fw_ata_word(id, 83);
        uint16_t w128 = fw_ata_word(id, 128);
        bool cmds = identify_valid(id, 83), s;

        if (fw_ata_word(id, 0) & 0x8000)
                return -EMEDIUMTYPE;
        if (fw_ata_integrity(id) < 0)
                return -EBADMSG;

        /* Security (ACS-3 4.18, word 82 bit 1 and word 128) */
        c->security_supported = (cmds && (w82 & (1u << 1))) || (w128 & 0x0001);
        s = c->security_supported;
        c->security_enabled = s && (w128 & 0x0002);
        c->security_locked = s && (w128 & 0x0004);
        c->security_frozen = s && (w128 & 0x0008);
        c->security_count_expired = s && (w128 & 0x0010);
        c->enhanced_erase_supported = s && (w128 & 0x0020);
        c->erase_time = s ? fw_ata_erase_time(fw_ata_word(id, 89)) : -1;
        c->enhanced_erase_time = c->enhanced_erase_supported ? fw_ata_erase_time(fw_ata_word(id, 90)) : -1;

        /* Sanitize (ACS-3 4.17, word 59 bits 12..15) */
        c->sanitize_supported = w59 & (1u << 12);
        c->sanitize_crypto = c->sanitize_supported && (w59 & (1u << 13));
        c->sanitize_overwrite = c->sanitize_supported && (w59 & (1u << 14));
        c->sanitize_block = c->sanitize_supported && (w59 & (1u << 15));

        /* Host protected area and device configuration overlay */
        c->hpa_supported = cmds && (w82 & (1u << 10));
        c->dco_supported = cmds && (w83 & (1u << 11));

        /* What the host sees: words 230..233 when word 69 bit 3 says they are there (ACS-3
         * 7.12.7.30), words 100..103 with 48-bit addressing, else words 60..61. */
        c->current_max = 0;
        if (fw_ata_identify_lba48(id)) {
                if (fw_ata_word(id, 69) & (1u << 3))
                        c->current_max = words64(id, 230);
                if (c->current_max == 0)
                        c->current_max = words64(id, 100);
        }
        if (c->current_max == 0)
                c->current_max = (uint64_t) fw_ata_word(id, 61) << 16 | fw_ata_word(id, 60);
        return 0;
}

uint64_t fw_ata_dco_max_sectors(const uint8_t dco[FW_ATA_DATA_LEN]) {
        uint64_t max = words64(dco, 3);

        if (fw_ata_integrity(dco) < 0 || max == 0)
                return 0;
        return max + 1;
}

const char *fw_ata_security_erase_refusal(const struct fw_ata_caps *c) {
        if (!c->security_supported)
                return "the security feature set is not supported";
        if (c->security_locked)
                return "security locked: the drive is locked with a password we do not know";
        if (c->security_count_expired)
                return "security count expired: after too many wrong passwords the drive refuses "
                       "SECURITY ERASE UNIT until it is power-cycled";
        if (c->security_frozen)
                return "security frozen: the drive refuses SECURITY ERASE UNIT until it is power-cycled "
                       "(the firmware or the operating system froze it at boot)";
        /* Setting our own temporary password would replace the owner's. */
        if (c->security_enabled)
                return "security enabled: a user password is set already, and setting a temporary one would "
                       "replace it (remove it first: hdparm --security-disable)";
        return NULL;
}

const char *fw_ata_sanitize_refusal(const struct fw_ata_caps *c) {
        if (!c->sanitize_supported)
                return "the sanitize feature set is not supported";
        if (c->security_locked)
                return "security locked: the drive aborts SANITIZE until it is unlocked";
        return NULL;
}

/* One command through SG_IO; its registers into *r when the sense has them (*have). 0, or -errno
 * with *err what went wrong (the drive aborting it is -EIO with r showing ABRT). */
static int ata_command_dir(int fd, const uint8_t *cdb, void *data, size_t len, int dir, unsigned timeout_ms,
                           struct fw_ata_result *r, bool *have, const char *what, char **err) {
        uint8_t sense[64] = {};
        size_t sense_got = 0, resid = 0;
        int status = 0, r2;

        *have = false;
        r2 = fw_sg_io(fd, cdb, FW_ATA_CDB_LEN, data, len, dir, sense, sizeof(sense), &sense_got, timeout_ms, &status,
                      &resid);
        if (r2 < 0) {
                if (asprintf(err, "%s: %s", what, strerror(-r2)) < 0)
                        *err = NULL;
                return r2;
        }
        if (sense_got > 0) {
                r2 = fw_ata_sense_decode(sense, sense_got, r);
                if (r2 == -EOPNOTSUPP) {
                        if (asprintf(err, "%s: the SCSI/ATA translation refused the command", what) < 0)
                                *err = NULL;
                        return -EOPNOTSUPP;
                }
                *have = r2 == 0;
        }
        if (*have && (r->status & (FW_ATA_STATUS_ERR | FW_ATA_STATUS_DF))) {
                if (asprintf(err, "%s: %s (ATA status %02Xh, error %02Xh)", what,
                             fw_ata_aborted(r) ? "aborted by the drive" : "failed", r->status, r->error) < 0)
                        *err = NULL;
                return -EIO;
        }
        /* CHECK CONDITION is how a CK_COND command returns its registers; otherwise it is an
         * error the sense did not explain in ATA terms. */
        if (status != 0 && !(status == 2 && *have)) {
                if (asprintf(err, "%s: SCSI status %02Xh", what, (unsigned) status) < 0)
                        *err = NULL;
                return -EIO;
        }
        if (data && resid != 0) {
                if (asprintf(err, "%s: %zu of %zu bytes not %s", what, resid, len, dir > 0 ? "sent" : "returned") < 0)
                        *err = NULL;
                return -EIO;
        }
        return 0;
}

/* A command that reads (data: data-in) or moves nothing, with the usual timeout. */
static int ata_command(int fd, const uint8_t *cdb, void *data, size_t len, struct fw_ata_result *r, bool *have,
                       const char *what, char **err) {
        return ata_command_dir(fd, cdb, data, len, data ? -1 : 0, ATA_TIMEOUT_MS, r, have, what, err);
}

/* Add what to the message in *err ("; " between), and free what. */
static void error_add(char **err, char *what) {
        char *s;

        if (!what)
                return;
        if (!*err) {
                *err = what;
                return;
        }
        if (asprintf(&s, "%s; %s", *err, what) >= 0) {
                free(*err);
                *err = s;
        }
        free(what);
}

/* The native max: READ NATIVE MAX ADDRESS EXT (48-bit) or READ NATIVE MAX ADDRESS with the HPA
 * feature set, GET NATIVE MAX ADDRESS EXT with the AMAC one. Fixed-format sense loses LBA bits
 * 47:24 (libata returns it for a CK_COND command that succeeded when the control mode page's
 * D_SENSE is 0, as some 2024 kernels did until the change was reverted; SAT-2 and later SATLs
 * may): then the 28-bit command is asked too, which gives bits 27:0, right for a drive of fewer
 * than 2^28 sectors; above that the native max stays unknown and the error says why. */
static int ata_native_max(int fd, const uint8_t *id, struct fw_ata_caps *c, char **err) {
        struct fw_ata_result r;
        uint8_t cdb[FW_ATA_CDB_LEN];
        bool have, ext, amac = !c->hpa_supported;
        const char *what;
        int ret;

        ext = amac || fw_ata_identify_lba48(id);
        if (amac) {
                fw_ata_cdb_get_native_max(cdb);
                what = "GET NATIVE MAX ADDRESS EXT";
        } else {
                fw_ata_cdb_read_native_max(cdb, ext);
                what = ext ? "READ NATIVE MAX ADDRESS EXT" : "READ NATIVE MAX ADDRESS";
        }
        ret = ata_command(fd, cdb, NULL, 0, &r, &have, what, err);
        if (ret < 0)
                return ret;
        if (!have)
                return asprintf(err, "%s: no ATA registers came back in the sense data", what) < 0 ? -ENOMEM : -EIO;
        if (!r.lba_incomplete) {
                c->native_max = fw_ata_native_max_sectors(&r, ext);
                return 0;
        }
        if (amac)
                return asprintf(err, "%s: the native max address is above 2^24 sectors and the fixed-format sense "
                                     "data lost its upper bits", what) < 0 ? -ENOMEM : -EIO;
        fw_ata_cdb_read_native_max(cdb, false);
        ret = ata_command(fd, cdb, NULL, 0, &r, &have, "READ NATIVE MAX ADDRESS", err);
        if (ret < 0)
                return ret;
        if (!have || ((r.device & 0x0f) == 0x0f && (r.lba & 0xffffff) == 0xffffff))
                return asprintf(err, "%s: the native max address is above 2^28 sectors and the fixed-format sense "
                                     "data lost its upper bits", what) < 0 ? -ENOMEM : -EIO;
        c->native_max = fw_ata_native_max_sectors(&r, false);
        return 0;
}

int fw_ata_probe(int fd, struct fw_ata_caps *c, char **err) {
        uint8_t id[FW_ATA_DATA_LEN] = {}, dco[FW_ATA_DATA_LEN] = {}, cdb[FW_ATA_CDB_LEN];
        struct fw_ata_result r;
        char *what = NULL;
        bool have;
        int ret, first = 0;

        *err = NULL;
        *c = (struct fw_ata_caps) { .erase_time = -1, .enhanced_erase_time = -1 };
        fw_ata_cdb_identify(cdb);
        ret = ata_command(fd, cdb, id, sizeof(id), &r, &have, "IDENTIFY DEVICE", err);
        if (ret < 0)
                return *err ? ret : -ENOMEM;
        ret = fw_ata_identify_decode(id, c);
        if (ret < 0) {
                *c = (struct fw_ata_caps) { .erase_time = -1, .enhanced_erase_time = -1 };
                if (asprintf(err, "IDENTIFY DEVICE: %s", ret == -EBADMSG ? "the checksum of its data is wrong" :
                                                         "not an ATA device's data") < 0)
                        return -ENOMEM;
                return ret;
        }

        c->lba48 = fw_ata_identify_lba48(id);
        if (c->hpa_supported || fw_ata_identify_amac(id)) {
                ret = ata_native_max(fd, id, c, &what);
                if (ret == -ENOMEM)
                        return ret;
                if (ret < 0) {
                        first = ret;
                        error_add(err, what);
                        what = NULL;
                }
        }

        if (c->dco_supported) {
                /* A drive that aborts it (DCO frozen by DEVICE CONFIGURATION FREEZE LOCK, or not
                 * supported after all) reports no overlay: not an error. */
                fw_ata_cdb_dco_identify(cdb);
                ret = ata_command(fd, cdb, dco, sizeof(dco), &r, &have, "DEVICE CONFIGURATION IDENTIFY", &what);
                if (ret == -EIO && have && fw_ata_aborted(&r)) {
                        free(what);
                        what = NULL;
                } else if (ret < 0) {
                        first = first ? first : ret;
                        error_add(err, what);
                        what = NULL;
                } else {
                        c->dco_max = fw_ata_dco_max_sectors(dco);
                        if (c->dco_max == 0) {
                                first = first ? first : -EBADMSG;
                                error_add(err, strdup("DEVICE CONFIGURATION IDENTIFY: its data is not valid"));
                        }
                }
        }
        return first;
}

static struct json_object *json_bool_if(bool known, bool v) {
        return known ? json_object_new_boolean(v) : NULL;
}

static struct json_object *json_seconds(fw_seconds s) {
        return s >= 0 ? json_object_new_int64(s) : NULL;
}

static struct json_object *json_sectors(uint64_t n) {
        return n ? json_object_new_int64((int64_t) n) : NULL;
}

/* The sectors beyond below that max holds (0 when none), or null when max was not read (0). */
static struct json_object *json_hidden(uint64_t max, uint64_t below) {
        if (max == 0)
                return NULL;
        return json_object_new_int64(max > below ? (int64_t) (max - below) : 0);
}

static struct json_object *json_string_or_null(const char *s) {
        return s ? json_object_new_string(s) : NULL;
}

/* Every value IDENTIFY did not give (current_max 0: it was not read) or that does not apply
 * (the state of an unsupported feature set) is null. */
struct json_object *fw_ata_json(const struct fw_ata_caps *c) {
        struct json_object *o = json_object_new_object(), *sec, *san, *hid;
        bool id = c->current_max != 0, s = id && c->security_supported, z = id && c->sanitize_supported;
        uint64_t native = c->native_max > c->dco_max ? c->native_max : c->dco_max;

        sec = json_object_new_object();
        san = json_object_new_object();
        hid = json_object_new_object();
        if (!o || !sec || !san || !hid) {
                json_object_put(o);
                json_object_put(sec);
                json_object_put(san);
                json_object_put(hid);
                return NULL;
        }
        json_object_object_add(sec, "supported", json_bool_if(id, c->security_supported));
        json_object_object_add(sec, "enabled", json_bool_if(s, c->security_enabled));
        json_object_object_add(sec, "locked", json_bool_if(s, c->security_locked));
        json_object_object_add(sec, "frozen", json_bool_if(s, c->security_frozen));
        json_object_object_add(sec, "count_expired", json_bool_if(s, c->security_count_expired));
        json_object_object_add(sec, "enhanced_erase", json_bool_if(s, c->enhanced_erase_supported));
        json_object_object_add(sec, "erase_time_s", json_seconds(c->erase_time));
        json_object_object_add(sec, "enhanced_erase_time_s", json_seconds(c->enhanced_erase_time));
        json_object_object_add(sec, "erase_refused", json_string_or_null(id ? fw_ata_security_erase_refusal(c) : NULL));
        json_object_object_add(o, "security", sec);

        json_object_object_add(san, "supported", json_bool_if(id, c->sanitize_supported));
        json_object_object_add(san, "crypto", json_bool_if(z, c->sanitize_crypto));
        json_object_object_add(san, "block", json_bool_if(z, c->sanitize_block));
        json_object_object_add(san, "overwrite", json_bool_if(z, c->sanitize_overwrite));
        json_object_object_add(san, "refused", json_string_or_null(id ? fw_ata_sanitize_refusal(c) : NULL));
        json_object_object_add(o, "sanitize", san);

        json_object_object_add(hid, "hpa_supported", json_bool_if(id, c->hpa_supported));
        json_object_object_add(hid, "dco_supported", json_bool_if(id, c->dco_supported));
        json_object_object_add(hid, "current_max_sectors", json_sectors(c->current_max));
        json_object_object_add(hid, "native_max_sectors", json_sectors(c->native_max));
        json_object_object_add(hid, "dco_max_sectors", json_sectors(c->dco_max));
        /* Hidden behind a host protected area: native - current; behind an overlay: DCO max -
         * native; in all: the larger max of the two read - current. */
        json_object_object_add(hid, "hpa_hidden_sectors", json_hidden(id ? c->native_max : 0, c->current_max));
        json_object_object_add(hid, "dco_hidden_sectors", json_hidden(c->native_max ? c->dco_max : 0, c->native_max));
        json_object_object_add(hid, "hidden_sectors", json_hidden(id ? native : 0, c->current_max));
        json_object_object_add(o, "hidden_area", hid);
        return o;
}

/* ---- Commands that erase ---- */

/* SANITIZE DEVICE COUNT bit 4 (ACS-3 7.38.2.3.3): FAILURE MODE; OVERWRITE EXT bit 7 INVERT
 * PATTERN, bits 3:0 OVERWRITE PASS COUNT. The signatures in LBA: "Cryp", "BkEr", and "OW" in
 * LBA 47:32 for OVERWRITE EXT, whose pattern is in LBA 31:0. */
#define SANITIZE_FAILURE_MODE 0x0010
#define SANITIZE_SIGNATURE_CRYPTO 0x43727970ULL
#define SANITIZE_SIGNATURE_BLOCK 0x426b4572ULL
#define SANITIZE_SIGNATURE_OVERWRITE 0x4f57ULL
/* SANITIZE STATUS EXT outputs (ACS-3 7.38.8.4): COUNT bits 15..12; LBA 15:0 the progress in
 * 65536ths; on an abort LBA 7:0 the reason. */
#define SANITIZE_COMPLETED 0x8000
#define SANITIZE_IN_PROGRESS 0x4000
#define SANITIZE_FROZEN 0x2000
#define SANITIZE_ANTIFREEZE 0x1000
#define SANITIZE_REASON_UNSUPPORTED 0x02

/* The security commands' data, word 0 (ACS-3 7.45.4, 7.44.4, 7.46.4, 7.42.4). */
#define SECURITY_CONTROL_MASTER 0x0001  /* IDENTIFIER: the master password (else the user's) */
#define SECURITY_CONTROL_ENHANCED 0x0002 /* ERASE UNIT: enhanced erase */
#define SECURITY_CONTROL_MAXIMUM 0x0100 /* SET PASSWORD: master password capability Maximum */

/* SET MAX ADDRESS COUNT bit 0: the value survives a power cycle (hdparm -N p sets it). */
#define SET_MAX_NON_VOLATILE 0x0001

void fw_ata_cdb_sanitize(uint8_t cdb[FW_ATA_CDB_LEN], uint16_t feature, uint16_t count, uint64_t lba) {
        ata_cdb(cdb, SAT_PROTOCOL_NON_DATA, true, SAT_CK_COND,
                &(struct ata_tf) { .feature = feature, .count = count, .lba = lba, .command = FW_ATA_SANITIZE });
}

int fw_ata_sanitize_fields(const struct fw_command *c, uint16_t *feature, uint16_t *count, uint64_t *lba) {
        *count = c->ause ? SANITIZE_FAILURE_MODE : 0;
        switch (c->action) {
        case FW_ACTION_SANITIZE_CRYPTO:
                *feature = FW_ATA_SANITIZE_CRYPTO;
                *lba = SANITIZE_SIGNATURE_CRYPTO;
                return 0;
        case FW_ACTION_SANITIZE_BLOCK:
                *feature = FW_ATA_SANITIZE_BLOCK;
                *lba = SANITIZE_SIGNATURE_BLOCK;
                return 0;
        case FW_ACTION_SANITIZE_OVERWRITE:
                if (c->overwrite_passes < 1 || c->overwrite_passes > 16)
                        return -EINVAL;
                *feature = FW_ATA_SANITIZE_OVERWRITE;
                /* 16 passes are written as 0 in the 4-bit field. INVERT is left clear: the command
                 * has no setting for it. */
                *count |= (uint16_t) (c->overwrite_passes & 0x0f);
                *lba = SANITIZE_SIGNATURE_OVERWRITE << 32 | c->overwrite_pattern;
                return 0;
        default:
                return -EINVAL;
        }
}

const char *fw_ata_sanitize_reason(uint8_t reason) {
        switch (reason) {
        case 0x00:
                return "reason not reported";
        case 0x01:
                return "sanitize command unsuccessful";
        case 0x02:
                return "invalid or unsupported SANITIZE DEVICE feature";
        case 0x03:
                return "the device is in the sanitize frozen state";
        case 0x04:
                return "SANITIZE FREEZE LOCK EXT failed: sanitize antifreeze lock";
        default:
                return "reserved reason";
        }
}

void fw_ata_sanitize_status_decode(const struct fw_ata_result *r, bool aborted, struct fw_status *s) {
        uint16_t count = r->count;
        unsigned progress = (unsigned) (r->lba & 0xffff);
        const char *extra = (count & SANITIZE_FROZEN) && (count & SANITIZE_ANTIFREEZE) ? ", frozen, antifreeze"
                            : (count & SANITIZE_FROZEN)                                ? ", frozen"
                            : (count & SANITIZE_ANTIFREEZE)                            ? ", antifreeze"
                                                                                       : "";

        *s = (struct fw_status) { .state = FW_RUN_UNKNOWN, .fraction = -1 };
        if (aborted) {
                s->state = FW_RUN_FAILED;
                snprintf(s->text, sizeof(s->text), "ABRT, reason %02Xh: %s (COUNT %04Xh%s)", (unsigned) (r->lba & 0xff),
                         fw_ata_sanitize_reason((uint8_t) r->lba), count, extra);
        } else if (count & SANITIZE_IN_PROGRESS) {
                /* Checked before COMPLETED: that bit speaks of the previous operation. */
                s->state = FW_RUN_RUNNING;
                s->fraction = progress / 65536.0;
                snprintf(s->text, sizeof(s->text), "COUNT %04Xh: in progress%s, LBA 15:0 %u/65536", count, extra,
                         progress);
        } else if (count & SANITIZE_COMPLETED) {
                s->state = FW_RUN_DONE;
                snprintf(s->text, sizeof(s->text), "COUNT %04Xh: completed without error%s", count, extra);
        } else {
                snprintf(s->text, sizeof(s->text), "COUNT %04Xh: none in progress, none completed without error%s",
                         count, extra);
        }
}

/* The message in msg (taken) or ret's, into err[err_len]; returns ret. */
static int error_out(int ret, char *msg, char *err, size_t err_len) {
        if (err_len > 0)
                snprintf(err, err_len, "%s", msg ? msg : strerror(-ret));
        free(msg);
        return ret;
}

static const char *sanitize_name(uint16_t feature) {
        switch (feature) {
        case FW_ATA_SANITIZE_CRYPTO:
                return "SANITIZE CRYPTO SCRAMBLE EXT";
        case FW_ATA_SANITIZE_BLOCK:
                return "SANITIZE BLOCK ERASE EXT";
        case FW_ATA_SANITIZE_OVERWRITE:
                return "SANITIZE OVERWRITE EXT";
        default:
                return "SANITIZE STATUS EXT";
        }
}

int fw_ata_sanitize_start(int fd, const struct fw_command *c, char *err, size_t err_len) {
        uint8_t cdb[FW_ATA_CDB_LEN];
        struct fw_ata_result r;
        uint16_t feature, count;
        uint64_t lba;
        char *msg = NULL, *s;
        bool have;
        int ret;

        if (fw_ata_sanitize_fields(c, &feature, &count, &lba) < 0)
                return error_out(-EINVAL, strdup("SANITIZE DEVICE: not a sanitize action, or overwrite passes not 1..16"),
                                 err, err_len);
        fw_ata_cdb_sanitize(cdb, feature, count, lba);
        ret = ata_command(fd, cdb, NULL, 0, &r, &have, sanitize_name(feature), &msg);
        /* An abort says why in LBA 7:0, LBA 47:8 reserved (ACS-3 7.38.2.4). A drive that left
         * the LBA as sent (the signature still there) gave no reason: none is named. */
        if (ret == -EIO && have && fw_ata_aborted(&r) && msg && (r.lba >> 8) == 0) {
                if (asprintf(&s, "%s, reason %02Xh: %s", msg, (unsigned) (r.lba & 0xff),
                             fw_ata_sanitize_reason((uint8_t) r.lba)) >= 0) {
                        free(msg);
                        msg = s;
                }
        }
        return ret < 0 ? error_out(ret, msg, err, err_len) : 0;
}

int fw_ata_sanitize_status(int fd, struct fw_status *s, char *err, size_t err_len) {
        uint8_t cdb[FW_ATA_CDB_LEN];
        struct fw_ata_result r;
        char *msg = NULL;
        bool have;
        int ret;

        *s = (struct fw_status) { .state = FW_RUN_UNKNOWN, .fraction = -1 };
        /* COUNT 0: CLEAR SANITIZE OPERATION FAILED not set, a failure stays for the operator. */
        fw_ata_cdb_sanitize(cdb, FW_ATA_SANITIZE_STATUS, 0, 0);
        ret = ata_command(fd, cdb, NULL, 0, &r, &have, "SANITIZE STATUS EXT", &msg);
        if (ret == -EIO && have && fw_ata_aborted(&r)) {
                if ((r.lba & 0xff) == SANITIZE_REASON_UNSUPPORTED)
                        return error_out(-EOPNOTSUPP, msg, err, err_len);
                free(msg);
                fw_ata_sanitize_status_decode(&r, true, s);
                return 0;
        }
        if (ret < 0)
                return error_out(ret, msg, err, err_len);
        if (!have)
                return error_out(-EIO, strdup("SANITIZE STATUS EXT: no ATA registers came back in the sense data"), err,
                                 err_len);
        fw_ata_sanitize_status_decode(&r, false, s);
        return 0;
}

void fw_ata_cdb_security(uint8_t cdb[FW_ATA_CDB_LEN], uint8_t command) {
        if (command == FW_ATA_SECURITY_ERASE_PREPARE) {
                ata_cdb(cdb, SAT_PROTOCOL_NON_DATA, false, 0, &(struct ata_tf) { .command = command });
                return;
        }
        /* T_DIR 0: to the device. */
        ata_cdb(cdb, SAT_PROTOCOL_PIO_DATA_OUT, false, SAT_BYTE_BLOCK | SAT_T_LENGTH_COUNT,
                &(struct ata_tf) { .count = 1, .command = command });
}

void fw_ata_security_block(uint8_t data[FW_ATA_DATA_LEN], uint16_t control, const char *password) {
        memset(data, 0, FW_ATA_DATA_LEN);
        data[0] = (uint8_t) control;
        data[1] = (uint8_t) (control >> 8);
        memcpy(data + 2, password, strnlen(password, FW_PASSWORD_LEN));
}

static const char *security_name(uint8_t command) {
        switch (command) {
        case FW_ATA_SECURITY_SET_PASSWORD:
                return "SECURITY SET PASSWORD";
        case FW_ATA_SECURITY_UNLOCK:
                return "SECURITY UNLOCK";
        case FW_ATA_SECURITY_ERASE_PREPARE:
                return "SECURITY ERASE PREPARE";
        case FW_ATA_SECURITY_ERASE_UNIT:
                return "SECURITY ERASE UNIT";
        default:
                return "SECURITY DISABLE PASSWORD";
        }
}

/* One security command with the user password in its block (none for ERASE PREPARE); what went
 * wrong added to *msg, *aborted whether the drive aborted it. 0 or -errno. */
static int security_send(int fd, uint8_t command, uint16_t control, const char *password, unsigned timeout_ms,
                         char **msg, bool *aborted) {
        uint8_t cdb[FW_ATA_CDB_LEN], data[FW_ATA_DATA_LEN];
        struct fw_ata_result r;
        char *what = NULL;
        bool have, out = command != FW_ATA_SECURITY_ERASE_PREPARE;
        int ret;

        fw_ata_cdb_security(cdb, command);
        fw_ata_security_block(data, control, password);
        ret = ata_command_dir(fd, cdb, out ? data : NULL, out ? sizeof(data) : 0, out ? 1 : 0, timeout_ms, &r, &have,
                              security_name(command), &what);
        OPENSSL_cleanse(data, sizeof(data));
        *aborted = ret == -EIO && have && fw_ata_aborted(&r);
        if (ret < 0)
                error_add(msg, what ? what : strdup(security_name(command)));
        return ret;
}

/* IDENTIFY DEVICE into c. 0 or -errno (added to *msg). */
static int security_identify(int fd, struct fw_ata_caps *c, char **msg) {
        uint8_t cdb[FW_ATA_CDB_LEN], id[FW_ATA_DATA_LEN] = {};
        struct fw_ata_result r;
        char *what = NULL;
        bool have;
        int ret;

        *c = (struct fw_ata_caps) { .erase_time = -1, .enhanced_erase_time = -1 };
        fw_ata_cdb_identify(cdb);
        ret = ata_command(fd, cdb, id, sizeof(id), &r, &have, "IDENTIFY DEVICE", &what);
        if (ret == 0) {
                ret = fw_ata_identify_decode(id, c);
                if (ret < 0)
                        what = strdup(ret == -EBADMSG ? "IDENTIFY DEVICE: the checksum of its data is wrong"
                                                      : "IDENTIFY DEVICE: not an ATA device's data");
        }
        if (ret < 0)
                error_add(msg, what ? what : strdup("IDENTIFY DEVICE"));
        return ret;
}

/* Remove the user password when security is enabled (ACS-3 4.18: SEC4 -UNLOCK-> SEC5 -DISABLE
 * PASSWORD-> SEC1). 1 removed, 0 security not enabled, -errno (what failed added to *msg). */
static int security_remove(int fd, const char *password, char **msg) {
        struct fw_ata_caps c;
        bool aborted;
        int ret;

        ret = security_identify(fd, &c, msg);
        if (ret < 0)
                return ret;
        if (!c.security_supported || !c.security_enabled)
                return 0;
        if (c.security_frozen) {
                error_add(msg, strdup("security frozen with a password set: the drive refuses SECURITY UNLOCK and "
                                      "DISABLE PASSWORD until it is power-cycled"));
                return -EBUSY;
        }
        if (c.security_count_expired) {
                error_add(msg, strdup("security count expired with a password set: the drive refuses SECURITY "
                                      "UNLOCK and DISABLE PASSWORD until it is power-cycled"));
                return -EBUSY;
        }
        if (c.security_locked) {
                ret = security_send(fd, FW_ATA_SECURITY_UNLOCK, 0, password, ATA_TIMEOUT_MS, msg, &aborted);
                if (ret < 0)
                        return ret;
        }
        ret = security_send(fd, FW_ATA_SECURITY_DISABLE_PASSWORD, 0, password, ATA_TIMEOUT_MS, msg, &aborted);
        return ret < 0 ? ret : 1;
}

/* After a step that failed with the password set: remove it, the failure's ret returned. */
static int security_undo(int fd, const char *password, int ret, char *msg, char *err, size_t err_len) {
        int r = security_remove(fd, password, &msg);

        if (r < 0)
                error_add(&msg, strdup("the temporary user password is still set"));
        else if (r > 0)
                error_add(&msg, strdup("the temporary user password was removed"));
        return error_out(ret, msg, err, err_len);
}

int fw_ata_security_erase(int fd, const struct fw_command *c, char *err, size_t err_len) {
        struct fw_ata_caps caps;
        const char *refusal;
        unsigned timeout_ms;
        size_t len = strnlen(c->password, sizeof(c->password));
        char *msg = NULL;
        bool aborted;
        int ret;

        if (c->action != FW_ACTION_ATA_SECURITY_ERASE || len == 0 || len > FW_PASSWORD_LEN || c->timeout_s == 0)
                return error_out(-EINVAL, strdup("SECURITY ERASE UNIT: not a security erase, or no password, or no "
                                                 "timeout"), err, err_len);
        timeout_ms = c->timeout_s > UINT_MAX / 1000 ? UINT_MAX : c->timeout_s * 1000;

        /* The drive's state now, not at submit: a password of someone else's is never replaced
         * (SET PASSWORD in SEC5 would), and a refused erase sends nothing. */
        ret = security_identify(fd, &caps, &msg);
        if (ret < 0)
                return error_out(ret, msg, err, err_len);
        /* Not supported: -EOPNOTSUPP; a state the drive is in (frozen, locked, a password
         * set, count expired): -EBUSY. */
        refusal = fw_ata_security_erase_refusal(&caps);
        ret = caps.security_supported ? -EBUSY : -EOPNOTSUPP;
        if (!refusal && caps.security_enabled)
                refusal = "security enabled: the drive has a user password already";
        if (!refusal && c->enhanced && !caps.enhanced_erase_supported) {
                refusal = "the enhanced security erase is not supported";
                ret = -EOPNOTSUPP;
        }
        if (refusal) {
                if (asprintf(&msg, "SECURITY ERASE UNIT: refused: %s", refusal) < 0)
                        msg = NULL;
                return error_out(ret, msg, err, err_len);
        }

        /* User password, master password capability High (word 0 bit 8 clear): the master
         * password, if the drive has one, can still unlock it. */
        ret = security_send(fd, FW_ATA_SECURITY_SET_PASSWORD, 0, c->password, ATA_TIMEOUT_MS, &msg, &aborted);
        if (ret < 0) {
                /* Aborted: nothing was set. Otherwise whether it was is unknown: look. */
                if (aborted)
                        return error_out(ret, msg, err, err_len);
                return security_undo(fd, c->password, ret, msg, err, err_len);
        }
        /* ERASE UNIT must come right after ERASE PREPARE (ACS-3 7.43). */
        ret = security_send(fd, FW_ATA_SECURITY_ERASE_PREPARE, 0, c->password, ATA_TIMEOUT_MS, &msg, &aborted);
        if (ret == 0)
                ret = security_send(fd, FW_ATA_SECURITY_ERASE_UNIT, c->enhanced ? SECURITY_CONTROL_ENHANCED : 0,
                                    c->password, timeout_ms, &msg, &aborted);
        if (ret < 0)
                return security_undo(fd, c->password, ret, msg, err, err_len);

        /* A completed erase leaves SEC1 (ACS-3 7.44.1): check, so that a drive that kept the
         * password is not left locked at its next power-on. */
        ret = security_identify(fd, &caps, &msg);
        if (ret < 0)
                return error_out(ret, msg, err, err_len);
        if (caps.security_enabled) {
                error_add(&msg, strdup("SECURITY ERASE UNIT: completed, but security is still enabled"));
                return security_undo(fd, c->password, -EIO, msg, err, err_len);
        }
        free(msg);
        return 0;
}

int fw_ata_security_cleanup(int fd, const char *password, char *err, size_t err_len) {
        char *msg = NULL;
        int ret;

        if (!password || password[0] == '\0')
                return error_out(-EINVAL, strdup("SECURITY DISABLE PASSWORD: no password"), err, err_len);
        ret = security_remove(fd, password, &msg);
        if (ret < 0)
                return error_out(ret, msg, err, err_len);
        free(msg);
        return ret;
}

void fw_ata_cdb_set_max(uint8_t cdb[FW_ATA_CDB_LEN], uint64_t max_lba, bool ext) {
        struct ata_tf tf = { .count = SET_MAX_NON_VOLATILE, .device = ATA_DEVICE_LBA };

        if (ext) {
                tf.lba = max_lba & 0xffffffffffffULL;
                tf.command = FW_ATA_SET_MAX_EXT;
        } else {
                /* 28-bit: LBA 27:24 in DEVICE bits 3:0; FEATURE 00h is SET MAX ADDRESS itself. */
                tf.lba = max_lba & 0xffffff;
                tf.device |= (uint8_t) ((max_lba >> 24) & 0x0f);
                tf.command = FW_ATA_SET_MAX;
        }
        ata_cdb(cdb, SAT_PROTOCOL_NON_DATA, ext, 0, &tf);
}

int fw_ata_restore_native_max(int fd, uint64_t native_max, bool ext, char *err, size_t err_len) {
        const char *read_name = ext ? "READ NATIVE MAX ADDRESS EXT" : "READ NATIVE MAX ADDRESS";
        const char *set_name = ext ? "SET MAX ADDRESS EXT" : "SET MAX ADDRESS";
        uint8_t cdb[FW_ATA_CDB_LEN];
        struct fw_ata_result r;
        uint64_t got;
        char *msg = NULL;
        bool have, same;
        int ret;

        if (native_max == 0 || native_max > (ext ? 1ULL << 48 : 1ULL << 28))
                return error_out(-EINVAL, strdup("SET MAX ADDRESS: native max out of range"), err, err_len);
        /* SET MAX ADDRESS is taken only right after READ NATIVE MAX ADDRESS (ACS-2 7.51.1). */
        fw_ata_cdb_read_native_max(cdb, ext);
        ret = ata_command(fd, cdb, NULL, 0, &r, &have, read_name, &msg);
        if (ret < 0)
                return error_out(ret, msg, err, err_len);
        if (!have) {
                if (asprintf(&msg, "%s: no ATA registers came back in the sense data", read_name) < 0)
                        msg = NULL;
                return error_out(-EIO, msg, err, err_len);
        }
        got = fw_ata_native_max_sectors(&r, ext);
        /* Fixed-format sense lost LBA 47:24: compare what came back. */
        same = r.lba_incomplete ? ((got - 1) & 0xffffff) == ((native_max - 1) & 0xffffff) : got == native_max;
        if (!same) {
                if (asprintf(&msg, "%s: the drive's native max is now %llu sectors, not %llu: nothing set", read_name,
                             (unsigned long long) got, (unsigned long long) native_max) < 0)
                        msg = NULL;
                return error_out(-ESTALE, msg, err, err_len);
        }
        fw_ata_cdb_set_max(cdb, native_max - 1, ext);
        ret = ata_command(fd, cdb, NULL, 0, &r, &have, set_name, &msg);
        if (ret < 0)
                return error_out(ret, msg, err, err_len);
        return 0;
}

void fw_ata_cdb_dco_restore(uint8_t cdb[FW_ATA_CDB_LEN]) {
        ata_cdb(cdb, SAT_PROTOCOL_NON_DATA, false, 0,
                &(struct ata_tf) { .feature = FW_ATA_DCO_RESTORE, .device = ATA_DEVICE_LBA, .command = FW_ATA_DCO });
}

int fw_ata_dco_restore(int fd, char *err, size_t err_len) {
        uint8_t cdb[FW_ATA_CDB_LEN];
        struct fw_ata_result r;
        char *msg = NULL;
        bool have;
        int ret;

        fw_ata_cdb_dco_restore(cdb);
        ret = ata_command(fd, cdb, NULL, 0, &r, &have, "DEVICE CONFIGURATION RESTORE", &msg);
        return ret < 0 ? error_out(ret, msg, err, err_len) : 0;
}
