/* wiped: the byte-level half of the ATA module (fw-ata.c), pure functions without a device so
 * that the unit tests (tests/unit/test-fw-ata.c) check them byte for byte: the ATA PASS-THROUGH
 * (16) CDBs of the commands the probe sends (SAT-4 12.2.2), the sense data they come back with
 * (SAT-4 12.2.2.6 and 12.2.5: descriptor format with the ATA Status Return descriptor, or fixed
 * format with the ATA PASS-THROUGH information), and the IDENTIFY DEVICE (ACS-3 7.12.7) and
 * DEVICE CONFIGURATION IDENTIFY (ACS-3 7.9.4) data; then the commands that erase (SANITIZE
 * DEVICE, the security feature set) and the one that removes a host protected area (SET MAX
 * ADDRESS), whose CDBs and data blocks are built here too. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "firmware.h"

#define FW_ATA_CDB_LEN 16
#define FW_ATA_DATA_LEN 512             /* IDENTIFY DEVICE and DCO IDENTIFY: one 512-byte block */

/* ATA commands (ACS-3 table 29) and the one feature code the probe uses. */
#define FW_ATA_IDENTIFY 0xec
#define FW_ATA_READ_NATIVE_MAX 0xf8
#define FW_ATA_READ_NATIVE_MAX_EXT 0x27
#define FW_ATA_AMAC 0x78                /* ACCESSIBLE MAX ADDRESS CONFIGURATION */
#define FW_ATA_AMAC_GET_NATIVE_MAX 0x0000
#define FW_ATA_DCO 0xb1                 /* DEVICE CONFIGURATION OVERLAY */
#define FW_ATA_DCO_IDENTIFY 0xc2
#define FW_ATA_DCO_RESTORE 0xc0
#define FW_ATA_SET_MAX 0xf9
#define FW_ATA_SET_MAX_EXT 0x37
#define FW_ATA_SANITIZE 0xb4            /* SANITIZE DEVICE (7.38), its feature codes: */
#define FW_ATA_SANITIZE_STATUS 0x0000
#define FW_ATA_SANITIZE_CRYPTO 0x0011
#define FW_ATA_SANITIZE_BLOCK 0x0012
#define FW_ATA_SANITIZE_OVERWRITE 0x0014
#define FW_ATA_SECURITY_SET_PASSWORD 0xf1
#define FW_ATA_SECURITY_UNLOCK 0xf2
#define FW_ATA_SECURITY_ERASE_PREPARE 0xf3
#define FW_ATA_SECURITY_ERASE_UNIT 0xf4
#define FW_ATA_SECURITY_DISABLE_PASSWORD 0xf6

/* The Status and Error fields (ACS-3 6.2, 6.3). */
#define FW_ATA_STATUS_ERR 0x01
#define FW_ATA_STATUS_DF 0x20
#define FW_ATA_ERROR_ABRT 0x04

/* What an ATA command left in the registers, as the SCSI/ATA translation returned it in the sense
 * data. */
struct fw_ata_result {
        uint8_t status, error, device;
        uint16_t count;
        uint64_t lba;                   /* LBA 47:0 (27:0 of a 28-bit command with device bits 3:0) */
        bool extend;                    /* the registers of a 48-bit command came back */
        bool lba_incomplete;            /* fixed-format sense: LBA 47:24 were not zero, and are lost */
};

/* The ATA PASS-THROUGH (16) CDB for each command the probe sends (SAT-4 12.2.2.1, table 197). */
void fw_ata_cdb_identify(uint8_t cdb[FW_ATA_CDB_LEN]);
/* READ NATIVE MAX ADDRESS EXT (ext, 48-bit) or READ NATIVE MAX ADDRESS (28-bit), CK_COND set. */
void fw_ata_cdb_read_native_max(uint8_t cdb[FW_ATA_CDB_LEN], bool ext);
/* GET NATIVE MAX ADDRESS EXT (ACCESSIBLE MAX ADDRESS CONFIGURATION, ACS-3 7.6.2), CK_COND set. */
void fw_ata_cdb_get_native_max(uint8_t cdb[FW_ATA_CDB_LEN]);
void fw_ata_cdb_dco_identify(uint8_t cdb[FW_ATA_CDB_LEN]);

/* The ATA registers in the sense data sense[len] of an ATA PASS-THROUGH command, into *r. 0;
 * -ENODATA when the sense carries none (no sense, or sense of another kind); -EOPNOTSUPP when the
 * translation refused the CDB itself (ILLEGAL REQUEST: no ATA command was sent). */
int fw_ata_sense_decode(const uint8_t *sense, size_t len, struct fw_ata_result *r);
/* Whether the drive aborted the command (Status ERR, Error ABRT): the command or the feature is
 * not supported, or the drive's state forbids it. */
bool fw_ata_aborted(const struct fw_ata_result *r);
/* The number of sectors up to the native max address that a READ NATIVE MAX ADDRESS (EXT) or a
 * GET NATIVE MAX ADDRESS EXT left in r (ext: a 48-bit command): the max address + 1. */
uint64_t fw_ata_native_max_sectors(const struct fw_ata_result *r, bool ext);

/* Word i of IDENTIFY (or DCO IDENTIFY) data: little-endian 16-bit words (ACS-3 7.12.7.1). */
uint16_t fw_ata_word(const uint8_t *data, unsigned i);
/* The integrity word 255 (ACS-3 7.12.7.97): when its signature A5h is there, the checksum makes
 * the 512 bytes sum to 0 mod 256. 0 (right, or no signature), -EBADMSG. */
int fw_ata_integrity(const uint8_t data[FW_ATA_DATA_LEN]);
/* A security erase time word (89 or 90, ACS-3 7.12.7.43/44) in seconds; -1 when not reported.
 * "More than" values (FFh in the 8-bit format, 7FFFh in the extended one) give their bound. */
fw_seconds fw_ata_erase_time(uint16_t w);
/* The capabilities IDENTIFY DEVICE data reports, into c (each field it gives; native_max and
 * dco_max are left alone). 0;
 * -EMEDIUMTYPE when the data is not an ATA device's (word 0 bit 15: ATAPI); -EBADMSG when its
 * checksum is wrong. */
int fw_ata_identify_decode(const uint8_t id[FW_ATA_DATA_LEN], struct fw_ata_caps *c);
/* Whether IDENTIFY says 48-bit addressing (word 83 bit 10, when words 82..83 are valid). */
bool fw_ata_identify_lba48(const uint8_t id[FW_ATA_DATA_LEN]);
/* Whether IDENTIFY says ACCESSIBLE MAX ADDRESS CONFIGURATION (word 119 bit 8, when valid). */
bool fw_ata_identify_amac(const uint8_t id[FW_ATA_DATA_LEN]);
/* The sectors DEVICE CONFIGURATION IDENTIFY data reports (words 3..6, the maximum LBA, + 1); 0
 * when the data is not valid (checksum, or no maximum). */
uint64_t fw_ata_dco_max_sectors(const uint8_t dco[FW_ATA_DATA_LEN]);

/* Why a SECURITY ERASE UNIT would be refused now, or NULL: not supported, frozen, locked, count
 * expired, or a password already set. Why a SANITIZE would be, or NULL: not supported, locked. */
const char *fw_ata_security_erase_refusal(const struct fw_ata_caps *c);
const char *fw_ata_sanitize_refusal(const struct fw_ata_caps *c);

/* ---- Commands that erase (ACS-3 7.38 SANITIZE DEVICE, 7.41-7.46 security) ---- */

/* SANITIZE DEVICE (48-bit, non-data, CK_COND so that the registers come back) with feature,
 * count and lba as given. */
void fw_ata_cdb_sanitize(uint8_t cdb[FW_ATA_CDB_LEN], uint16_t feature, uint16_t count, uint64_t lba);
/* The SANITIZE DEVICE fields that start c's action (7.38.2-7.38.4): feature, COUNT (FAILURE MODE
 * bit 4 from c->ause; OVERWRITE: pass count in bits 3:0, 0 for 16) and LBA (the signature, and
 * OVERWRITE's pattern in LBA 31:0). 0, or -EINVAL when c is not a sanitize or its passes are not
 * 1..16. */
int fw_ata_sanitize_fields(const struct fw_command *c, uint16_t *feature, uint16_t *count, uint64_t *lba);
/* What SANITIZE STATUS EXT (7.38.8) returned, into s: r its registers, aborted whether the drive
 * aborted it (then LBA 7:0 holds the reason). */
void fw_ata_sanitize_status_decode(const struct fw_ata_result *r, bool aborted, struct fw_status *s);
/* The Sanitize Device Error Reason (ACS-3 table 66) in words. */
const char *fw_ata_sanitize_reason(uint8_t reason);

/* A security command (7.41-7.46, 28-bit): the ones with a password are PIO data-out of one
 * 512-byte block (T_DIR 0, BYTE_BLOCK, T_LENGTH in COUNT = 1); ERASE PREPARE is non-data. */
void fw_ata_cdb_security(uint8_t cdb[FW_ATA_CDB_LEN], uint8_t command);
/* The 512-byte block of SET PASSWORD, UNLOCK, ERASE UNIT and DISABLE PASSWORD: word 0 control
 * (bit 0 master password, bit 1 enhanced erase, bit 8 master capability Maximum), the password
 * in bytes 2..33 as its characters in order, NUL-padded (as hdparm sends it), the rest zero. */
void fw_ata_security_block(uint8_t data[FW_ATA_DATA_LEN], uint16_t control, const char *password);

/* SET MAX ADDRESS EXT (ext) or SET MAX ADDRESS to max_lba (the last LBA to be accessible), COUNT
 * bit 0 set: the value stays over a power cycle (ACS-2 7.51, 7.53; hdparm -N p). */
void fw_ata_cdb_set_max(uint8_t cdb[FW_ATA_CDB_LEN], uint64_t max_lba, bool ext);
/* Remove a host protected area: READ NATIVE MAX ADDRESS (EXT), then at once SET MAX ADDRESS
 * (EXT) to native_max sectors (fw_ata_caps.native_max, the max address + 1), non-volatile. The
 * drive must still report native_max (else -ESTALE, nothing set). 0 or -errno (err). */
int fw_ata_restore_native_max(int fd, uint64_t native_max, bool ext, char *err, size_t err_len);
/* DEVICE CONFIGURATION RESTORE (ATA8-ACS 7.9.4): the drive drops its device configuration overlay,
 * and its maximum address (with the features the overlay hid) returns to the factory one. The
 * drive aborts it while a host protected area is set: restore that first. 0 or -errno (err). */
void fw_ata_cdb_dco_restore(uint8_t cdb[FW_ATA_CDB_LEN]);
int fw_ata_dco_restore(int fd, char *err, size_t err_len);
