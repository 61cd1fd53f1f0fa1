/* The ATA module's byte-level half (daemon/fw-ata.c), without a device: the ATA PASS-THROUGH (16)
 * CDBs byte for byte against SAT-4's layout, the sense data the SCSI/ATA translation returns
 * (descriptor and fixed format, as libata builds them), IDENTIFY DEVICE and DCO IDENTIFY data,
 * the erase time encodings, the refusals and the JSON; then the probe against a drive simulated
 * at the SG_IO helper (fw_sg_io, wrapped by the linker). Linked with the daemon's library. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "firmware.h"
#include "fw-ata.h"

static void cdb_is(const uint8_t *cdb, const uint8_t *want) {
        for (int i = 0; i < FW_ATA_CDB_LEN; i++) {
                if (cdb[i] != want[i])
                        fail_msg("CDB byte %d: %02x, want %02x", i, cdb[i], want[i]);
        }
}

/* SAT-4 table 197: byte 1 PROTOCOL << 1 | EXTEND, byte 2 CK_COND 20h, T_DIR 08h, BYTE_BLOCK 04h,
 * T_LENGTH 02h (in COUNT); FEATURE 7:0 byte 4, COUNT 7:0 byte 6, DEVICE 13, COMMAND 14. */
static void test_cdbs(void **state) {
        uint8_t cdb[FW_ATA_CDB_LEN];

        (void) state;
        /* IDENTIFY DEVICE: PIO data-in (4), one 512-byte block, no CK_COND. */
        fw_ata_cdb_identify(cdb);
        cdb_is(cdb, (const uint8_t[]) { 0x85, 0x08, 0x0e, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0x00, 0xec, 0 });
        /* DEVICE CONFIGURATION IDENTIFY: B1h with FEATURE C2h, PIO data-in, one block. */
        fw_ata_cdb_dco_identify(cdb);
        cdb_is(cdb, (const uint8_t[]) { 0x85, 0x08, 0x0e, 0, 0xc2, 0, 0x01, 0, 0, 0, 0, 0, 0, 0x00, 0xb1, 0 });
        /* READ NATIVE MAX ADDRESS EXT: non-data (3), EXTEND, CK_COND, DEVICE LBA bit. */
        fw_ata_cdb_read_native_max(cdb, true);
        cdb_is(cdb, (const uint8_t[]) { 0x85, 0x07, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x27, 0 });
        /* READ NATIVE MAX ADDRESS: the same without EXTEND. */
        fw_ata_cdb_read_native_max(cdb, false);
        cdb_is(cdb, (const uint8_t[]) { 0x85, 0x06, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0xf8, 0 });
        /* GET NATIVE MAX ADDRESS EXT: 78h with FEATURE 0000h, 48-bit, non-data, CK_COND. */
        fw_ata_cdb_get_native_max(cdb);
        cdb_is(cdb, (const uint8_t[]) { 0x85, 0x07, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x78, 0 });
}

/* Descriptor-format sense as libata builds it for a CK_COND command: RECOVERED ERROR, ATA
 * PASS-THROUGH INFORMATION AVAILABLE, and the ATA Status Return descriptor (SAT-4 table 205). */
static void test_sense_descriptor(void **state) {
        struct fw_ata_result r;
        /* READ NATIVE MAX ADDRESS EXT returning 1234_5678_9ABCh: LBA 31:24 in byte 6, 7:0 in 7,
         * 39:32 in 8, 15:8 in 9, 47:40 in 10, 23:16 in 11. */
        const uint8_t ok[] = { 0x72, 0x01, 0x00, 0x1d, 0, 0, 0, 0x0e,
                               0x09, 0x0c, 0x01, 0x00, 0x00, 0x00, 0x56, 0xbc, 0x34, 0x9a, 0x12, 0x78, 0x40, 0x50 };
        /* Another descriptor first (information, 0Ch bytes), then the ATA one. */
        const uint8_t two[] = { 0x72, 0x01, 0x00, 0x1d, 0, 0, 0, 0x1a,
                                0x00, 0x0a, 0x80, 0, 1, 2, 3, 4, 5, 6, 7, 8,
                                0x09, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x33, 0x00, 0x22, 0x00, 0x11, 0x4e, 0x50 };
        /* An abort: ABORTED COMMAND, Status ERR (51h), Error ABRT (04h). */
        const uint8_t abrt[] = { 0x72, 0x0b, 0x00, 0x00, 0, 0, 0, 0x0e,
                                 0x09, 0x0c, 0x00, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x51 };
        /* The descriptor runs past the sense returned: no registers. */
        const uint8_t cut[] = { 0x72, 0x01, 0x00, 0x1d, 0, 0, 0, 0x0e, 0x09, 0x0c, 0x01, 0x00, 0x00 };
        /* The translation refused the CDB: ILLEGAL REQUEST, INVALID FIELD IN CDB. */
        const uint8_t illegal[] = { 0x72, 0x05, 0x24, 0x00, 0, 0, 0, 0 };

        (void) state;
        assert_int_equal(fw_ata_sense_decode(ok, sizeof(ok), &r), 0);
        assert_true(r.extend);
        assert_false(r.lba_incomplete);
        assert_int_equal(r.status, 0x50);
        assert_int_equal(r.device, 0x40);
        assert_true(r.lba == 0x123456789abcULL);
        assert_false(fw_ata_aborted(&r));
        assert_true(fw_ata_native_max_sectors(&r, true) == 0x123456789abdULL);

        /* Without EXTEND only LBA 23:0 and the device's bits 27:24 count (28-bit command). */
        assert_int_equal(fw_ata_sense_decode(two, sizeof(two), &r), 0);
        assert_false(r.extend);
        assert_true(r.lba == 0x112233);
        assert_true(fw_ata_native_max_sectors(&r, false) == 0x0e112234ULL);

        assert_int_equal(fw_ata_sense_decode(abrt, sizeof(abrt), &r), 0);
        assert_true(fw_ata_aborted(&r));
        assert_int_equal(r.error, 0x04);

        assert_int_equal(fw_ata_sense_decode(cut, sizeof(cut), &r), -ENODATA);
        assert_int_equal(fw_ata_sense_decode(illegal, sizeof(illegal), &r), -EOPNOTSUPP);
        assert_int_equal(fw_ata_sense_decode(ok, 0, &r), -ENODATA);
        assert_int_equal(fw_ata_sense_decode((const uint8_t[]) { 0x7f, 0, 0, 0, 0, 0, 0, 0 }, 8, &r), -ENODATA);
}

/* Fixed-format sense (SAT-4 table 201): ERROR, STATUS, DEVICE, COUNT in bytes 3..6; EXTEND, COUNT
 * UPPER NONZERO, LBA UPPER NONZERO in byte 8; LBA 7:0, 15:8, 23:16 in bytes 9..11. */
static void test_sense_fixed(void **state) {
        struct fw_ata_result r;
        uint8_t s[18] = { 0x70, 0x00, 0x01, 0x00, 0x50, 0x40, 0x00, 0x0a,
                          0x80, 0xbc, 0x9a, 0x78, 0x00, 0x1d, 0x00, 0x00, 0x00, 0x00 };

        (void) state;
        /* 48-bit, nothing above bit 23: complete. */
        assert_int_equal(fw_ata_sense_decode(s, sizeof(s), &r), 0);
        assert_true(r.extend);
        assert_false(r.lba_incomplete);
        assert_int_equal(r.status, 0x50);
        assert_true(r.lba == 0x789abc);
        assert_true(fw_ata_native_max_sectors(&r, true) == 0x789abd);

        /* LBA UPPER NONZERO: the upper bits are lost. */
        s[8] = 0xa0;
        assert_int_equal(fw_ata_sense_decode(s, sizeof(s), &r), 0);
        assert_true(r.lba_incomplete);

        /* 28-bit READ NATIVE MAX ADDRESS at 0FFF_FFFFh: bits 27:24 in DEVICE. */
        s[8] = 0x00;
        s[5] = 0x4f;
        s[9] = s[10] = s[11] = 0xff;
        assert_int_equal(fw_ata_sense_decode(s, sizeof(s), &r), 0);
        assert_false(r.lba_incomplete);
        assert_true(fw_ata_native_max_sectors(&r, false) == 0x10000000ULL);

        /* What a Linux kernel of 2024 returned to hdparm -C (CHECK POWER MODE, CK_COND), fixed
         * format with VALID: status 50h, count FFh (active or idle). */
        assert_int_equal(fw_ata_sense_decode((const uint8_t[]) { 0xf0, 0x00, 0x01, 0x00, 0x50, 0x00, 0xff, 0x0a, 0x00,
                                                                 0x00, 0x00, 0x00, 0x00, 0x1d, 0x00, 0x00, 0x00, 0x00 },
                                             18, &r),
                         0);
        assert_int_equal(r.status, 0x50);
        assert_int_equal(r.count, 0xff);
        assert_false(r.extend);
        assert_false(fw_ata_aborted(&r));

        /* An abort in fixed format: ABORTED COMMAND, no 00h/1Dh, but the registers are there. */
        s[2] = 0x0b;
        s[3] = 0x04;
        s[4] = 0x51;
        s[12] = s[13] = 0;
        assert_int_equal(fw_ata_sense_decode(s, sizeof(s), &r), 0);
        assert_true(fw_ata_aborted(&r));

        /* Sense with neither 00h/1Dh nor a Status: not ATA registers. */
        s[3] = s[4] = 0;
        assert_int_equal(fw_ata_sense_decode(s, sizeof(s), &r), -ENODATA);
        /* ILLEGAL REQUEST: refused by the translation. */
        s[2] = 0x05;
        assert_int_equal(fw_ata_sense_decode(s, sizeof(s), &r), -EOPNOTSUPP);
        /* Too short for the command-specific information. */
        assert_int_equal(fw_ata_sense_decode(s, 10, &r), -ENODATA);
}

static void test_erase_time(void **state) {
        (void) state;
        assert_int_equal(fw_ata_erase_time(0x0000), -1);
        assert_int_equal(fw_ata_erase_time(0x0001), 2 * 60);
        assert_int_equal(fw_ata_erase_time(0x0035), 106 * 60);         /* "106min" in hdparm */
        assert_int_equal(fw_ata_erase_time(0x00ff), 508 * 60);         /* "more than 508 min" */
        assert_int_equal(fw_ata_erase_time(0x1235), 106 * 60);         /* bits 14:8 reserved */
        /* ACS-3 extended format: bit 15, then 14:0 in 2 minutes. */
        assert_int_equal(fw_ata_erase_time(0x8000), -1);
        assert_int_equal(fw_ata_erase_time(0x8100), 256 * 2 * 60);
        assert_int_equal(fw_ata_erase_time(0xffff), (int64_t) 65532 * 60);
}

static void word_set(uint8_t *d, unsigned w, uint16_t v) {
        d[2 * w] = (uint8_t) v;
        d[2 * w + 1] = (uint8_t) (v >> 8);
}

/* Word 255: signature A5h and the checksum that makes the 512 bytes sum to zero. */
static void sign(uint8_t *d) {
        uint8_t sum = 0;

        d[510] = 0xa5;
        for (int i = 0; i < 511; i++)
                sum = (uint8_t) (sum + d[i]);
        d[511] = (uint8_t) -sum;
}

/* A 48-bit drive with security (frozen, enhanced erase, 106 and 2 minutes), sanitize (crypto and
 * block), HPA and DCO, of 1000215216 sectors. */
static void identify_ssd(uint8_t *id) {
        memset(id, 0, FW_ATA_DATA_LEN);
        word_set(id, 0, 0x0040);
        word_set(id, 59, 0xb101);               /* sanitize, crypto, block; not overwrite */
        word_set(id, 60, 0xffff);
        word_set(id, 61, 0x0fff);
        word_set(id, 82, 0x746b);               /* bit 1 security, bit 10 HPA */
        word_set(id, 83, 0x7d09);               /* valid, bit 10 48-bit, bit 11 DCO */
        word_set(id, 89, 0x0035);
        word_set(id, 90, 0x0001);
        word_set(id, 100, (uint16_t) 1000215216u);
        word_set(id, 101, (uint16_t) (1000215216u >> 16));
        word_set(id, 128, 0x0029);              /* supported, frozen, enhanced */
        sign(id);
}

static void test_identify(void **state) {
        uint8_t id[FW_ATA_DATA_LEN];
        struct fw_ata_caps c = {};

        (void) state;
        identify_ssd(id);
        assert_int_equal(fw_ata_integrity(id), 0);
        assert_int_equal(fw_ata_identify_decode(id, &c), 0);
        assert_true(c.security_supported);
        assert_false(c.security_enabled);
        assert_false(c.security_locked);
        assert_true(c.security_frozen);
        assert_false(c.security_count_expired);
        assert_true(c.enhanced_erase_supported);
        assert_int_equal(c.erase_time, 106 * 60);
        assert_int_equal(c.enhanced_erase_time, 2 * 60);
        assert_true(c.sanitize_supported);
        assert_true(c.sanitize_crypto);
        assert_true(c.sanitize_block);
        assert_false(c.sanitize_overwrite);
        assert_true(c.hpa_supported);
        assert_true(c.dco_supported);
        assert_true(fw_ata_identify_lba48(id));
        assert_false(fw_ata_identify_amac(id));
        assert_true(c.current_max == 1000215216u);
        assert_string_equal(fw_ata_security_erase_refusal(&c),
                            "security frozen: the drive refuses SECURITY ERASE UNIT until it is power-cycled "
                            "(the firmware or the operating system froze it at boot)");
        assert_null(fw_ata_sanitize_refusal(&c));

        /* A bit flipped: the checksum catches it. */
        id[2 * 128] ^= 0x08;
        assert_int_equal(fw_ata_integrity(id), -EBADMSG);
        assert_int_equal(fw_ata_identify_decode(id, &c), -EBADMSG);
        /* No signature: nothing to check (older drives). */
        id[510] = 0;
        assert_int_equal(fw_ata_identify_decode(id, &c), 0);
        assert_false(c.security_frozen);
        assert_null(fw_ata_security_erase_refusal(&c));

        /* Locked with the count expired: locked is what the operator must know first. */
        identify_ssd(id);
        word_set(id, 128, 0x0017);
        sign(id);
        assert_int_equal(fw_ata_identify_decode(id, &c), 0);
        assert_true(c.security_locked && c.security_enabled && c.security_count_expired);
        assert_false(c.enhanced_erase_supported);
        assert_int_equal(c.enhanced_erase_time, -1);
        assert_string_equal(fw_ata_security_erase_refusal(&c),
                            "security locked: the drive is locked with a password we do not know");
        assert_string_equal(fw_ata_sanitize_refusal(&c),
                            "security locked: the drive aborts SANITIZE until it is unlocked");
        word_set(id, 128, 0x0013);
        sign(id);
        assert_int_equal(fw_ata_identify_decode(id, &c), 0);
        assert_non_null(strstr(fw_ata_security_erase_refusal(&c), "count expired"));

        /* Word 83 not valid (FFFFh): words 82..84 say nothing, word 128 still tells security;
         * without 48-bit the capacity is words 60..61. */
        identify_ssd(id);
        word_set(id, 83, 0xffff);
        word_set(id, 128, 0x0001);
        sign(id);
        assert_int_equal(fw_ata_identify_decode(id, &c), 0);
        assert_true(c.security_supported);
        assert_false(c.hpa_supported);
        assert_false(c.dco_supported);
        assert_false(fw_ata_identify_lba48(id));
        assert_true(c.current_max == 0x0fffffff);

        /* Extended Number of User Addressable Sectors (word 69 bit 3): words 230..233. */
        identify_ssd(id);
        word_set(id, 69, 0x0008);
        word_set(id, 230, 0x0000);
        word_set(id, 231, 0x0000);
        word_set(id, 232, 0x0001);
        sign(id);
        assert_int_equal(fw_ata_identify_decode(id, &c), 0);
        assert_true(c.current_max == 1ULL << 32);

        /* No security, no sanitize, AMAC instead of HPA (word 119 bit 8, valid). */
        identify_ssd(id);
        word_set(id, 59, 0x0101);
        word_set(id, 82, 0x7069);
        word_set(id, 128, 0x0000);
        word_set(id, 119, 0x4100);
        sign(id);
        assert_int_equal(fw_ata_identify_decode(id, &c), 0);
        assert_false(c.security_supported);
        assert_false(c.security_frozen);
        assert_int_equal(c.erase_time, -1);
        assert_false(c.sanitize_supported || c.sanitize_crypto || c.sanitize_block);
        assert_false(c.hpa_supported);
        assert_true(fw_ata_identify_amac(id));
        assert_string_equal(fw_ata_security_erase_refusal(&c), "the security feature set is not supported");
        assert_string_equal(fw_ata_sanitize_refusal(&c), "the sanitize feature set is not supported");

        /* An ATAPI device's data. */
        word_set(id, 0, 0x8580);
        sign(id);
        assert_int_equal(fw_ata_identify_decode(id, &c), -EMEDIUMTYPE);
}

static void test_dco(void **state) {
        uint8_t d[FW_ATA_DATA_LEN] = {};

        (void) state;
        word_set(d, 0, 0x0002);
        word_set(d, 3, 0x6daf);                 /* maximum LBA 3B9E_6DAFh */
        word_set(d, 4, 0x3b9e);
        sign(d);
        assert_true(fw_ata_dco_max_sectors(d) == 0x3b9e6db0ULL);
        d[6] ^= 1;
        assert_true(fw_ata_dco_max_sectors(d) == 0);
        memset(d, 0, sizeof(d));
        assert_true(fw_ata_dco_max_sectors(d) == 0);
}

static void test_json(void **state) {
        uint8_t id[FW_ATA_DATA_LEN];
        struct fw_ata_caps c = { .erase_time = -1, .enhanced_erase_time = -1 };
        struct json_object *o, *v;

        (void) state;
        /* Nothing read: every value null. */
        o = fw_ata_json(&c);
        assert_non_null(o);
        assert_true(json_object_object_get_ex(o, "security", &v));
        assert_string_equal(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
                            "{\"supported\":null,\"enabled\":null,\"locked\":null,\"frozen\":null,"
                            "\"count_expired\":null,\"enhanced_erase\":null,\"erase_time_s\":null,"
                            "\"enhanced_erase_time_s\":null,\"erase_refused\":null}");
        assert_true(json_object_object_get_ex(o, "hidden_area", &v));
        assert_string_equal(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
                            "{\"hpa_supported\":null,\"dco_supported\":null,\"current_max_sectors\":null,"
                            "\"native_max_sectors\":null,\"dco_max_sectors\":null,\"hpa_hidden_sectors\":null,"
                            "\"dco_hidden_sectors\":null,\"hidden_sectors\":null}");
        json_object_put(o);

        /* A drive with an HPA of 1000 sectors and a DCO hiding 24 more. */
        identify_ssd(id);
        assert_int_equal(fw_ata_identify_decode(id, &c), 0);
        c.native_max = 1000215216u + 1000;
        c.dco_max = 1000215216u + 1024;
        o = fw_ata_json(&c);
        assert_non_null(o);
        assert_true(json_object_object_get_ex(o, "security", &v));
        assert_string_equal(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
                            "{\"supported\":true,\"enabled\":false,\"locked\":false,\"frozen\":true,"
                            "\"count_expired\":false,\"enhanced_erase\":true,\"erase_time_s\":6360,"
                            "\"enhanced_erase_time_s\":120,\"erase_refused\":\"security frozen: the drive refuses "
                            "SECURITY ERASE UNIT until it is power-cycled (the firmware or the operating system "
                            "froze it at boot)\"}");
        assert_true(json_object_object_get_ex(o, "sanitize", &v));
        assert_string_equal(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
                            "{\"supported\":true,\"crypto\":true,\"block\":true,\"overwrite\":false,\"refused\":null}");
        assert_true(json_object_object_get_ex(o, "hidden_area", &v));
        assert_string_equal(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
                            "{\"hpa_supported\":true,\"dco_supported\":true,\"current_max_sectors\":1000215216,"
                            "\"native_max_sectors\":1000216216,\"dco_max_sectors\":1000216240,"
                            "\"hpa_hidden_sectors\":1000,\"dco_hidden_sectors\":24,\"hidden_sectors\":1024}");
        json_object_put(o);
}

/* A drive at the SG_IO helper's boundary (the test is linked with --wrap=fw_sg_io): what each
 * command returns, and the commands the probe sent. */
static struct drive {
        uint8_t identify[FW_ATA_DATA_LEN], dco[FW_ATA_DATA_LEN];
        bool identify_aborts, identify_short, dco_aborts, native_aborts;
        bool fixed_sense;                       /* fixed-format sense, as Linux >= 6.10 by default */
        uint64_t native_max_lba;
        uint8_t sent[16];                       /* COMMAND of each CDB */
        unsigned n_sent;
        /* The commands that erase: each CDB, its direction, timeout and data-out block. */
        uint8_t cdb[16][FW_ATA_CDB_LEN], block[16][FW_ATA_DATA_LEN];
        int dir[16];
        unsigned timeout_ms[16];
        bool aborts[256];                       /* these commands abort */
        uint8_t abort_reason;                   /* SANITIZE: LBA 7:0 of an abort */
        /* Security as word 128 reports it (sec_model: IDENTIFY's word 128 follows these). */
        bool sec_model, sec_enabled, sec_locked, sec_frozen;
        uint8_t password[32];
        /* SANITIZE STATUS EXT: the registers it returns, and whether it aborts. */
        uint16_t san_count;
        uint64_t san_lba;
        bool san_abort;
} drive;
static bool drive_lba_echo;                     /* aborts leave the LBA as sent (kept over drive_reset) */

/* The sense of a CK_COND command, or of an abort, for registers lba/status/error. */
static size_t drive_sense(uint8_t *sense, bool ext, uint64_t lba, uint8_t status, uint8_t error) {
        bool abort = status & FW_ATA_STATUS_ERR;

        if (drive.fixed_sense) {
                uint8_t s[18] = { 0x70, 0, abort ? 0x0b : 0x01, error, status, 0x40, 0, 0x0a };

                if (ext) {
                        s[8] = 0x80 | ((lba >> 24) ? 0x20 : 0);
                } else {
                        s[5] = (uint8_t) (0x40 | ((lba >> 24) & 0x0f));
                }
                s[9] = (uint8_t) lba;
                s[10] = (uint8_t) (lba >> 8);
                s[11] = (uint8_t) (lba >> 16);
                s[13] = abort ? 0x00 : 0x1d;
                memcpy(sense, s, sizeof(s));
                return sizeof(s);
        }
        uint8_t s[22] = { 0x72, abort ? 0x0b : 0x01, 0, abort ? 0x00 : 0x1d, 0, 0, 0, 0x0e, 0x09, 0x0c,
                          ext ? 1 : 0, error, 0, 0, (uint8_t) (lba >> 24), (uint8_t) lba, (uint8_t) (lba >> 32),
                          (uint8_t) (lba >> 8), (uint8_t) (lba >> 40), (uint8_t) (lba >> 16),
                          (uint8_t) (ext ? 0x40 : 0x40 | ((lba >> 24) & 0x0f)), status };
        memcpy(sense, s, sizeof(s));
        return sizeof(s);
}

int __real_fw_sg_io(int fd, const uint8_t *cdb, size_t cdb_len, void *data, size_t len, int dir, uint8_t *sense,
                    size_t sense_len, size_t *sense_got, unsigned timeout_ms, int *status, size_t *resid);
int __wrap_fw_sg_io(int fd, const uint8_t *cdb, size_t cdb_len, void *data, size_t len, int dir, uint8_t *sense,
                    size_t sense_len, size_t *sense_got, unsigned timeout_ms, int *status, size_t *resid);
/* fd -1 is the simulated drive; a real descriptor goes to the real helper. */
int __wrap_fw_sg_io(int fd, const uint8_t *cdb, size_t cdb_len, void *data, size_t len, int dir, uint8_t *sense,
                    size_t sense_len, size_t *sense_got, unsigned timeout_ms, int *status, size_t *resid) {
        bool ext = cdb[1] & 1;

        if (fd >= 0)
                return __real_fw_sg_io(fd, cdb, cdb_len, data, len, dir, sense, sense_len, sense_got, timeout_ms,
                                       status, resid);
        assert_int_equal(cdb_len, FW_ATA_CDB_LEN);
        assert_int_equal(cdb[0], 0x85);
        assert_true(sense_len >= 22);
        unsigned n = drive.n_sent;

        if (n < sizeof(drive.sent)) {
                drive.sent[n] = cdb[14];
                memcpy(drive.cdb[n], cdb, FW_ATA_CDB_LEN);
                drive.dir[n] = dir;
                drive.timeout_ms[n] = timeout_ms;
                if (dir > 0 && len == FW_ATA_DATA_LEN)
                        memcpy(drive.block[n], data, len);
                drive.n_sent++;
        }
        *sense_got = 0;
        *resid = 0;
        *status = 0;
        if (drive.aborts[cdb[14]]) {
                uint64_t lba = drive.abort_reason;

                /* A drive that leaves the LBA it was sent. */
                if (drive_lba_echo)
                        lba = (uint64_t) cdb[8] | (uint64_t) cdb[10] << 8 | (uint64_t) cdb[12] << 16 |
                              (uint64_t) cdb[7] << 24 | (uint64_t) cdb[9] << 32 | (uint64_t) cdb[11] << 40;
                *status = 2;
                *sense_got = drive_sense(sense, ext, lba, 0x51, FW_ATA_ERROR_ABRT);
                *resid = len;
                return 0;
        }
        switch (cdb[14]) {
        case FW_ATA_IDENTIFY:
        case FW_ATA_DCO: {
                bool id = cdb[14] == FW_ATA_IDENTIFY;

                assert_int_equal(dir, -1);
                assert_int_equal(len, FW_ATA_DATA_LEN);
                if (id ? drive.identify_aborts : drive.dco_aborts) {
                        *status = 2;
                        *sense_got = drive_sense(sense, false, 0, 0x51, FW_ATA_ERROR_ABRT);
                        *resid = len;
                        return 0;
                }
                if (id && drive.sec_model) {
                        word_set(drive.identify, 128, (uint16_t) (0x0021 | (drive.sec_enabled ? 0x02 : 0) |
                                                                  (drive.sec_locked ? 0x04 : 0) |
                                                                  (drive.sec_frozen ? 0x08 : 0)));
                        sign(drive.identify);
                }
                memcpy(data, id ? drive.identify : drive.dco, len);
                if (id && drive.identify_short)
                        *resid = 256;
                return 0;
        }
        case FW_ATA_READ_NATIVE_MAX:
        case FW_ATA_READ_NATIVE_MAX_EXT:
        case FW_ATA_AMAC: {
                uint64_t lba = drive.native_max_lba;

                assert_int_equal(dir, 0);
                assert_null(data);
                assert_true(cdb[2] & 0x20);
                *status = 2;
                if (drive.native_aborts) {
                        *sense_got = drive_sense(sense, ext, 0, 0x51, FW_ATA_ERROR_ABRT);
                        return 0;
                }
                if (!ext && lba > 0x0fffffff)
                        lba = 0x0fffffff;
                *sense_got = drive_sense(sense, ext, lba, 0x50, 0);
                return 0;
        }
        case FW_ATA_SET_MAX:
        case FW_ATA_SET_MAX_EXT:
                assert_int_equal(dir, 0);
                return 0;
        case FW_ATA_SANITIZE:
                assert_int_equal(dir, 0);
                assert_true(ext);
                assert_true(cdb[2] & 0x20);
                *status = 2;
                if (cdb[4] != 0) {
                        *sense_got = drive_sense(sense, true, 0, 0x50, 0);
                        return 0;
                }
                *sense_got = drive_sense(sense, true, drive.san_lba, drive.san_abort ? 0x51 : 0x50,
                                         drive.san_abort ? FW_ATA_ERROR_ABRT : 0);
                /* The ATA Status Return descriptor's COUNT (bytes 12, 13 of the sense). */
                sense[12] = (uint8_t) (drive.san_count >> 8);
                sense[13] = (uint8_t) drive.san_count;
                return 0;
        case FW_ATA_SECURITY_ERASE_PREPARE:
                assert_int_equal(dir, 0);
                return 0;
        case FW_ATA_SECURITY_SET_PASSWORD:
        case FW_ATA_SECURITY_UNLOCK:
        case FW_ATA_SECURITY_ERASE_UNIT:
        case FW_ATA_SECURITY_DISABLE_PASSWORD: {
                const uint8_t *b = data;
                bool right = memcmp(b + 2, drive.password, 32) == 0;

                assert_int_equal(dir, 1);
                assert_int_equal(len, FW_ATA_DATA_LEN);
                if (cdb[14] == FW_ATA_SECURITY_SET_PASSWORD) {
                        drive.sec_enabled = true;
                        memcpy(drive.password, b + 2, 32);
                        return 0;
                }
                if (!right || (drive.sec_locked && cdb[14] != FW_ATA_SECURITY_UNLOCK)) {
                        *status = 2;
                        *sense_got = drive_sense(sense, false, 0, 0x51, FW_ATA_ERROR_ABRT);
                        return 0;
                }
                if (cdb[14] == FW_ATA_SECURITY_UNLOCK)
                        drive.sec_locked = false;
                else
                        drive.sec_enabled = false;
                return 0;
        }
        }
        fail_msg("unexpected ATA command %02x", cdb[14]);
        return -EIO;
}

static void drive_reset(void) {
        memset(&drive, 0, sizeof(drive));
        identify_ssd(drive.identify);
        word_set(drive.dco, 0, 0x0002);
        word_set(drive.dco, 3, (uint16_t) (1000215216u + 1023));
        word_set(drive.dco, 4, (uint16_t) ((1000215216u + 1023) >> 16));
        sign(drive.dco);
        drive.native_max_lba = 1000215216u + 999;
}

static void sent_is(const char *want) {
        char got[64] = "";

        for (unsigned i = 0; i < drive.n_sent; i++)
                snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%02x", i ? " " : "", drive.sent[i]);
        assert_string_equal(got, want);
}

/* The probe against the simulated drive: the commands it sends, what it fills, what it reports. */
static void test_probe(void **state) {
        struct fw_ata_caps c;
        char *err = NULL;

        (void) state;
        /* Descriptor sense: everything read. */
        drive_reset();
        assert_int_equal(fw_ata_probe(-1, &c, &err), 0);
        assert_null(err);
        sent_is("ec 27 b1");
        assert_true(c.security_frozen);
        assert_true(c.current_max == 1000215216u);
        assert_true(c.native_max == 1000215216u + 1000);
        assert_true(c.dco_max == 1000215216u + 1024);

        /* Fixed sense, a native max between 2^24 and 2^28 sectors: EXT loses the upper bits,
         * the 28-bit command gives them. */
        drive_reset();
        drive.fixed_sense = true;
        drive.native_max_lba = 0x0c7fffff;
        assert_int_equal(fw_ata_probe(-1, &c, &err), 0);
        assert_null(err);
        sent_is("ec 27 f8 b1");
        assert_true(c.native_max == 0x0c800000);
        /* Above 2^28 (this 500 GB drive): not knowable through fixed sense; said so, DCO still
         * read. */
        drive.n_sent = 0;
        drive.native_max_lba = 1000215216u + 999;
        assert_int_equal(fw_ata_probe(-1, &c, &err), -EIO);
        assert_non_null(err);
        assert_string_equal(err, "READ NATIVE MAX ADDRESS EXT: the native max address is above 2^28 sectors and the "
                                 "fixed-format sense data lost its upper bits");
        free(err);
        err = NULL;
        sent_is("ec 27 f8 b1");
        assert_true(c.native_max == 0);
        assert_true(c.dco_max == 1000215216u + 1024);
        /* Fixed sense, a small drive: complete in one command. */
        drive.n_sent = 0;
        drive.native_max_lba = 0x00abcdef;
        assert_int_equal(fw_ata_probe(-1, &c, &err), 0);
        sent_is("ec 27 b1");
        assert_true(c.native_max == 0x00abcdf0);

        /* DCO IDENTIFY aborted (DCO frozen): no overlay, no error. */
        drive_reset();
        drive.dco_aborts = true;
        assert_int_equal(fw_ata_probe(-1, &c, &err), 0);
        assert_null(err);
        assert_true(c.dco_max == 0);
        assert_true(c.native_max == 1000215216u + 1000);

        /* READ NATIVE MAX ADDRESS EXT aborted: reported, the rest read. */
        drive_reset();
        drive.native_aborts = true;
        assert_int_equal(fw_ata_probe(-1, &c, &err), -EIO);
        assert_string_equal(err, "READ NATIVE MAX ADDRESS EXT: aborted by the drive (ATA status 51h, error 04h)");
        free(err);
        err = NULL;
        assert_true(c.native_max == 0);
        assert_true(c.dco_max == 1000215216u + 1024);
        assert_true(c.security_supported);

        /* Without 48-bit: the 28-bit command; without HPA and DCO but with AMAC: GET NATIVE MAX. */
        drive_reset();
        word_set(drive.identify, 83, 0x4000 | (1u << 11));
        word_set(drive.identify, 60, 0xffff);
        word_set(drive.identify, 61, 0x0fff);
        sign(drive.identify);
        drive.native_max_lba = 0x0ffffffe;
        assert_int_equal(fw_ata_probe(-1, &c, &err), 0);
        sent_is("ec f8 b1");
        assert_true(c.current_max == 0x0fffffff);
        assert_true(c.native_max == 0x0fffffff);
        drive_reset();
        word_set(drive.identify, 82, 0x7069);
        word_set(drive.identify, 83, 0x7509);
        word_set(drive.identify, 119, 0x4100);
        sign(drive.identify);
        assert_int_equal(fw_ata_probe(-1, &c, &err), 0);
        sent_is("ec 78");
        assert_true(c.native_max == 1000215216u + 1000);

        /* IDENTIFY aborted, short, or with a bad checksum: nothing else is sent. */
        drive_reset();
        drive.identify_aborts = true;
        assert_int_equal(fw_ata_probe(-1, &c, &err), -EIO);
        assert_string_equal(err, "IDENTIFY DEVICE: aborted by the drive (ATA status 51h, error 04h)");
        free(err);
        err = NULL;
        sent_is("ec");
        assert_true(c.current_max == 0);
        drive_reset();
        drive.identify_short = true;
        assert_int_equal(fw_ata_probe(-1, &c, &err), -EIO);
        assert_string_equal(err, "IDENTIFY DEVICE: 256 of 512 bytes not returned");
        free(err);
        err = NULL;
        drive_reset();
        drive.identify[200] ^= 1;
        assert_int_equal(fw_ata_probe(-1, &c, &err), -EBADMSG);
        assert_string_equal(err, "IDENTIFY DEVICE: the checksum of its data is wrong");
        free(err);
        sent_is("ec");
        assert_true(c.current_max == 0);
        assert_false(c.security_supported);
}

/* The CDBs of the commands that erase, byte for byte (SAT-4 table 197; ACS-3 7.38, 7.41-7.46;
 * ACS-2 7.51, 7.53), and the security commands' block. */
static void test_erase_cdbs(void **state) {
        struct fw_command c = { .set = FW_SET_ATA, .action = FW_ACTION_SANITIZE_CRYPTO };
        uint8_t cdb[FW_ATA_CDB_LEN], block[FW_ATA_DATA_LEN];
        uint16_t feature, count;
        uint64_t lba;

        (void) state;
        /* CRYPTO SCRAMBLE EXT: 48-bit non-data (07h), CK_COND (20h), FEATURE 0011h, LBA "Cryp". */
        assert_int_equal(fw_ata_sanitize_fields(&c, &feature, &count, &lba), 0);
        fw_ata_cdb_sanitize(cdb, feature, count, lba);
        cdb_is(cdb, (const uint8_t[]) { 0x85, 0x07, 0x20, 0x00, 0x11, 0, 0x00, 0x43, 0x70, 0, 0x79, 0, 0x72, 0, 0xb4, 0 });
        /* BLOCK ERASE EXT with FAILURE MODE (COUNT bit 4): LBA "BkEr". */
        c.action = FW_ACTION_SANITIZE_BLOCK;
        c.ause = true;
        assert_int_equal(fw_ata_sanitize_fields(&c, &feature, &count, &lba), 0);
        fw_ata_cdb_sanitize(cdb, feature, count, lba);
        cdb_is(cdb, (const uint8_t[]) { 0x85, 0x07, 0x20, 0x00, 0x12, 0, 0x10, 0x42, 0x72, 0, 0x45, 0, 0x6b, 0, 0xb4, 0 });
        /* OVERWRITE EXT, 3 passes, pattern A5A5_0F0Fh in LBA 31:0, "OW" in LBA 47:32. */
        c.action = FW_ACTION_SANITIZE_OVERWRITE;
        c.ause = false;
        c.overwrite_passes = 3;
        c.overwrite_pattern = 0xa5a50f0f;
        assert_int_equal(fw_ata_sanitize_fields(&c, &feature, &count, &lba), 0);
        assert_true(lba == 0x4f57a5a50f0fULL);
        fw_ata_cdb_sanitize(cdb, feature, count, lba);
        cdb_is(cdb, (const uint8_t[]) { 0x85, 0x07, 0x20, 0x00, 0x14, 0, 0x03, 0xa5, 0x0f, 0x57, 0x0f, 0x4f, 0xa5, 0, 0xb4, 0 });
        /* 16 passes are 0 in the 4-bit field; 0 and 17 are refused. */
        c.overwrite_passes = 16;
        c.ause = true;
        assert_int_equal(fw_ata_sanitize_fields(&c, &feature, &count, &lba), 0);
        assert_int_equal(count, 0x0010);
        c.overwrite_passes = 0;
        assert_int_equal(fw_ata_sanitize_fields(&c, &feature, &count, &lba), -EINVAL);
        c.overwrite_passes = 17;
        assert_int_equal(fw_ata_sanitize_fields(&c, &feature, &count, &lba), -EINVAL);
        c.action = FW_ACTION_NVME_FORMAT;
        assert_int_equal(fw_ata_sanitize_fields(&c, &feature, &count, &lba), -EINVAL);
        /* SANITIZE STATUS EXT: FEATURE 0, COUNT 0 (no CLEAR SANITIZE OPERATION FAILED). */
        fw_ata_cdb_sanitize(cdb, 0, 0, 0);
        cdb_is(cdb, (const uint8_t[]) { 0x85, 0x07, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xb4, 0 });

        /* Security with a password: PIO data-out (5 << 1 = 0Ah), T_DIR 0, BYTE_BLOCK, T_LENGTH in
         * COUNT (06h), COUNT 1, no CK_COND. */
        fw_ata_cdb_security(cdb, 0xf1);
        cdb_is(cdb, (const uint8_t[]) { 0x85, 0x0a, 0x06, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0, 0xf1, 0 });
        fw_ata_cdb_security(cdb, 0xf2);
        cdb_is(cdb, (const uint8_t[]) { 0x85, 0x0a, 0x06, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0, 0xf2, 0 });
        fw_ata_cdb_security(cdb, 0xf4);
        cdb_is(cdb, (const uint8_t[]) { 0x85, 0x0a, 0x06, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0, 0xf4, 0 });
        fw_ata_cdb_security(cdb, 0xf6);
        cdb_is(cdb, (const uint8_t[]) { 0x85, 0x0a, 0x06, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0, 0xf6, 0 });
        /* ERASE PREPARE: non-data, 28-bit. */
        fw_ata_cdb_security(cdb, 0xf3);
        cdb_is(cdb, (const uint8_t[]) { 0x85, 0x06, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf3, 0 });

        /* The block: word 0 little-endian, then the characters in order (as hdparm copies the
         * string), NUL-padded to 32 bytes, the rest zero. */
        memset(block, 0xee, sizeof(block));
        fw_ata_security_block(block, 0x0102, "Secret-7");
        assert_int_equal(block[0], 0x02);
        assert_int_equal(block[1], 0x01);
        assert_memory_equal(block + 2, "Secret-7", 8);
        for (int i = 10; i < FW_ATA_DATA_LEN; i++)
                if (block[i] != 0)
                        fail_msg("block byte %d: %02x", i, block[i]);
        /* 32 characters fill the field; a 33rd is never read. */
        fw_ata_security_block(block, 0, "0123456789abcdef0123456789ABCDEFxyz");
        assert_memory_equal(block + 2, "0123456789abcdef0123456789ABCDEF", 32);
        assert_int_equal(block[34], 0);

        /* SET MAX ADDRESS EXT to 1234_5678_9ABCh: non-data 48-bit, COUNT 1 (non-volatile), DEVICE
         * LBA; SET MAX ADDRESS to 0ABC_DEF0h: LBA 27:24 in DEVICE bits 3:0, FEATURE 0. */
        fw_ata_cdb_set_max(cdb, 0x123456789abcULL, true);
        cdb_is(cdb, (const uint8_t[]) { 0x85, 0x07, 0x00, 0, 0, 0, 0x01, 0x56, 0xbc, 0x34, 0x9a, 0x12, 0x78, 0x40, 0x37, 0 });
        fw_ata_cdb_set_max(cdb, 0x0abcdef0ULL, false);
        cdb_is(cdb, (const uint8_t[]) { 0x85, 0x06, 0x00, 0, 0, 0, 0x01, 0, 0xf0, 0, 0xde, 0, 0xbc, 0x4a, 0xf9, 0 });
        /* DEVICE CONFIGURATION RESTORE: non-data, FEATURE C0h, command B1h. */
        fw_ata_cdb_dco_restore(cdb);
        cdb_is(cdb, (const uint8_t[]) { 0x85, 0x06, 0x00, 0, 0xc0, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0xb1, 0 });
}

static void drive_security(void) {
        drive_reset();
        drive.sec_model = true;
}

/* SANITIZE DEVICE through the scripted drive: the CDB sent, an abort with its reason. */
static void test_sanitize_start(void **state) {
        struct fw_command c = { .set = FW_SET_ATA, .action = FW_ACTION_SANITIZE_OVERWRITE, .overwrite_passes = 2,
                                .overwrite_pattern = 0x11223344, .ause = true };
        char err[256] = "";

        (void) state;
        drive_reset();
        assert_int_equal(fw_ata_sanitize_start(-1, &c, err, sizeof(err)), 0);
        sent_is("b4");
        cdb_is(drive.cdb[0], (const uint8_t[]) { 0x85, 0x07, 0x20, 0x00, 0x14, 0, 0x12, 0x11, 0x44, 0x57, 0x33, 0x4f,
                                                 0x22, 0, 0xb4, 0 });
        assert_int_equal(drive.dir[0], 0);

        /* Frozen: ABRT with reason 03h in LBA 7:0. */
        drive_reset();
        drive.aborts[0xb4] = true;
        drive.abort_reason = 0x03;
        c.action = FW_ACTION_SANITIZE_CRYPTO;
        assert_int_equal(fw_ata_sanitize_start(-1, &c, err, sizeof(err)), -EIO);
        assert_string_equal(err, "SANITIZE CRYPTO SCRAMBLE EXT: aborted by the drive (ATA status 51h, error 04h), "
                                 "reason 03h: the device is in the sanitize frozen state");

        /* An abort with the LBA as it was sent (the signature): no reason named. */
        drive_reset();
        drive.aborts[0xb4] = true;
        drive.abort_reason = 0x72;
        drive_lba_echo = true;
        assert_int_equal(fw_ata_sanitize_start(-1, &c, err, sizeof(err)), -EIO);
        assert_string_equal(err, "SANITIZE CRYPTO SCRAMBLE EXT: aborted by the drive (ATA status 51h, error 04h)");
        drive_lba_echo = false;

        /* Not a sanitize: nothing sent. */
        drive_reset();
        c.action = FW_ACTION_ATA_SECURITY_ERASE;
        assert_int_equal(fw_ata_sanitize_start(-1, &c, err, sizeof(err)), -EINVAL);
        sent_is("");
        /* A small buffer takes what fits. */
        drive.aborts[0xb4] = true;
        c.action = FW_ACTION_SANITIZE_BLOCK;
        assert_int_equal(fw_ata_sanitize_start(-1, &c, err, 9), -EIO);
        assert_string_equal(err, "SANITIZE");
}

/* SANITIZE STATUS EXT: every answer. */
static void test_sanitize_status(void **state) {
        struct fw_status s;
        char err[256] = "";

        (void) state;
        /* Completed without error (COUNT bit 15). */
        drive_reset();
        drive.san_count = 0x8000;
        drive.san_lba = 0xffff;
        assert_int_equal(fw_ata_sanitize_status(-1, &s, err, sizeof(err)), 0);
        sent_is("b4");
        cdb_is(drive.cdb[0], (const uint8_t[]) { 0x85, 0x07, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xb4, 0 });
        assert_int_equal(s.state, FW_RUN_DONE);
        assert_true(s.fraction == -1);
        assert_string_equal(s.text, "COUNT 8000h: completed without error");

        /* In progress (bit 14) at 1999h/65536, with bit 15 of an earlier one still set. */
        drive.san_count = 0xc000;
        drive.san_lba = 0x1999;
        assert_int_equal(fw_ata_sanitize_status(-1, &s, err, sizeof(err)), 0);
        assert_int_equal(s.state, FW_RUN_RUNNING);
        assert_true(s.fraction == 0x1999 / 65536.0);
        assert_string_equal(s.text, "COUNT C000h: in progress, LBA 15:0 6553/65536");

        /* Nothing set; frozen and antifreeze said. */
        drive.san_count = 0x3000;
        drive.san_lba = 0xffff;
        assert_int_equal(fw_ata_sanitize_status(-1, &s, err, sizeof(err)), 0);
        assert_int_equal(s.state, FW_RUN_UNKNOWN);
        assert_string_equal(s.text, "COUNT 3000h: none in progress, none completed without error, frozen, antifreeze");

        /* Failed: ABRT, the reason in LBA 7:0. */
        drive.san_count = 0;
        drive.san_abort = true;
        for (unsigned reason = 0; reason <= 5; reason++) {
                static const char *const text[] = {
                        "ABRT, reason 00h: reason not reported (COUNT 0000h)",
                        "ABRT, reason 01h: sanitize command unsuccessful (COUNT 0000h)",
                        NULL,
                        "ABRT, reason 03h: the device is in the sanitize frozen state (COUNT 0000h)",
                        "ABRT, reason 04h: SANITIZE FREEZE LOCK EXT failed: sanitize antifreeze lock (COUNT 0000h)",
                        "ABRT, reason 05h: reserved reason (COUNT 0000h)",
                };

                drive.san_lba = reason;
                if (reason == 2) {
                        /* Invalid or unsupported feature: the drive does not know the command. */
                        assert_int_equal(fw_ata_sanitize_status(-1, &s, err, sizeof(err)), -EOPNOTSUPP);
                        assert_string_equal(err, "SANITIZE STATUS EXT: aborted by the drive (ATA status 51h, error 04h)");
                        continue;
                }
                assert_int_equal(fw_ata_sanitize_status(-1, &s, err, sizeof(err)), 0);
                assert_int_equal(s.state, FW_RUN_FAILED);
                assert_true(s.fraction == -1);
                assert_string_equal(s.text, text[reason]);
        }

        /* The descriptor decoded alone. */
        fw_ata_sanitize_status_decode(&(struct fw_ata_result) { .count = 0x4000, .lba = 0x8000 }, false, &s);
        assert_true(s.fraction == 0.5);
}

static void password_is(unsigned i, uint16_t control, const char *pw) {
        uint8_t want[FW_ATA_DATA_LEN] = {};

        want[0] = (uint8_t) control;
        want[1] = (uint8_t) (control >> 8);
        memcpy(want + 2, pw, strlen(pw));
        assert_memory_equal(drive.block[i], want, FW_ATA_DATA_LEN);
        assert_int_equal(drive.dir[i], 1);
}

/* SECURITY SET PASSWORD, ERASE PREPARE, ERASE UNIT, and the password removed when the erase is
 * not reached or fails. */
static void test_security_erase(void **state) {
        struct fw_command c = { .set = FW_SET_ATA, .action = FW_ACTION_ATA_SECURITY_ERASE, .password = "wiped-1f2e",
                                .timeout_s = 7200 };
        char err[512] = "";

        (void) state;
        /* Normal erase: IDENTIFY, SET PASSWORD (user, High), PREPARE, ERASE UNIT with the
         * erase's timeout, IDENTIFY to check SEC1. */
        drive_security();
        assert_int_equal(fw_ata_security_erase(-1, &c, err, sizeof(err)), 0);
        sent_is("ec f1 f3 f4 ec");
        password_is(1, 0x0000, "wiped-1f2e");
        cdb_is(drive.cdb[1], (const uint8_t[]) { 0x85, 0x0a, 0x06, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0, 0xf1, 0 });
        cdb_is(drive.cdb[2], (const uint8_t[]) { 0x85, 0x06, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf3, 0 });
        assert_int_equal(drive.dir[2], 0);
        password_is(3, 0x0000, "wiped-1f2e");
        assert_int_equal(drive.timeout_ms[3], 7200 * 1000);
        assert_false(drive.sec_enabled);

        /* Enhanced: word 0 bit 1. */
        drive_security();
        c.enhanced = true;
        assert_int_equal(fw_ata_security_erase(-1, &c, err, sizeof(err)), 0);
        password_is(3, 0x0002, "wiped-1f2e");
        c.enhanced = false;

        /* ERASE UNIT aborts: DISABLE PASSWORD with the same password; both in err. */
        drive_security();
        drive.aborts[0xf4] = true;
        assert_int_equal(fw_ata_security_erase(-1, &c, err, sizeof(err)), -EIO);
        sent_is("ec f1 f3 f4 ec f6");
        password_is(5, 0x0000, "wiped-1f2e");
        assert_false(drive.sec_enabled);
        assert_string_equal(err, "SECURITY ERASE UNIT: aborted by the drive (ATA status 51h, error 04h); the temporary "
                                 "user password was removed");

        /* ERASE PREPARE aborts, and so does DISABLE PASSWORD: every failure said. */
        drive_security();
        drive.aborts[0xf3] = true;
        drive.aborts[0xf6] = true;
        assert_int_equal(fw_ata_security_erase(-1, &c, err, sizeof(err)), -EIO);
        sent_is("ec f1 f3 ec f6");
        assert_string_equal(err, "SECURITY ERASE PREPARE: aborted by the drive (ATA status 51h, error 04h); SECURITY "
                                 "DISABLE PASSWORD: aborted by the drive (ATA status 51h, error 04h); the temporary "
                                 "user password is still set");

        /* SET PASSWORD aborts: nothing was set, nothing to remove. */
        drive_security();
        drive.aborts[0xf1] = true;
        assert_int_equal(fw_ata_security_erase(-1, &c, err, sizeof(err)), -EIO);
        sent_is("ec f1");

        /* Frozen, or a password already set: refused before anything is sent. */
        drive_security();
        drive.sec_frozen = true;
        assert_int_equal(fw_ata_security_erase(-1, &c, err, sizeof(err)), -EBUSY);
        sent_is("ec");
        assert_non_null(strstr(err, "refused: security frozen"));
        drive_security();
        drive.sec_enabled = true;
        assert_int_equal(fw_ata_security_erase(-1, &c, err, sizeof(err)), -EBUSY);
        sent_is("ec");
        assert_string_equal(err, "SECURITY ERASE UNIT: refused: security enabled: a user password is set already, and "
                                 "setting a temporary one would replace it (remove it first: hdparm --security-disable)");

        /* Enhanced without support (word 128 bit 5 clear), no security at all. */
        drive_reset();
        word_set(drive.identify, 128, 0x0001);
        sign(drive.identify);
        c.enhanced = true;
        assert_int_equal(fw_ata_security_erase(-1, &c, err, sizeof(err)), -EOPNOTSUPP);
        c.enhanced = false;
        drive_reset();
        word_set(drive.identify, 82, 0x7469);
        word_set(drive.identify, 128, 0x0000);
        sign(drive.identify);
        assert_int_equal(fw_ata_security_erase(-1, &c, err, sizeof(err)), -EOPNOTSUPP);
        assert_string_equal(err, "SECURITY ERASE UNIT: refused: the security feature set is not supported");

        /* No password or no timeout: nothing sent. */
        drive_security();
        c.timeout_s = 0;
        assert_int_equal(fw_ata_security_erase(-1, &c, err, sizeof(err)), -EINVAL);
        c.timeout_s = 60;
        c.password[0] = '\0';
        assert_int_equal(fw_ata_security_erase(-1, &c, err, sizeof(err)), -EINVAL);
        sent_is("");
}

/* After an interruption: the password removed, unlocking first when the drive locked. */
static void test_security_cleanup(void **state) {
        char err[512] = "";

        (void) state;
        /* Security not enabled: nothing to do. */
        drive_security();
        assert_int_equal(fw_ata_security_cleanup(-1, "wiped-1f2e", err, sizeof(err)), 0);
        sent_is("ec");

        /* Enabled with our password: DISABLE PASSWORD. */
        drive_security();
        drive.sec_enabled = true;
        memcpy(drive.password, "wiped-1f2e", 10);
        assert_int_equal(fw_ata_security_cleanup(-1, "wiped-1f2e", err, sizeof(err)), 1);
        sent_is("ec f6");
        password_is(1, 0x0000, "wiped-1f2e");
        assert_false(drive.sec_enabled);

        /* Locked (a power cycle during the erase): UNLOCK, then DISABLE PASSWORD. */
        drive_security();
        drive.sec_enabled = drive.sec_locked = true;
        memcpy(drive.password, "wiped-1f2e", 10);
        assert_int_equal(fw_ata_security_cleanup(-1, "wiped-1f2e", err, sizeof(err)), 1);
        sent_is("ec f2 f6");
        password_is(1, 0x0000, "wiped-1f2e");
        password_is(2, 0x0000, "wiped-1f2e");
        assert_false(drive.sec_enabled || drive.sec_locked);

        /* Someone else's password: UNLOCK aborts, DISABLE is not tried. */
        drive_security();
        drive.sec_enabled = drive.sec_locked = true;
        memcpy(drive.password, "other", 5);
        assert_int_equal(fw_ata_security_cleanup(-1, "wiped-1f2e", err, sizeof(err)), -EIO);
        sent_is("ec f2");
        assert_string_equal(err, "SECURITY UNLOCK: aborted by the drive (ATA status 51h, error 04h)");

        /* Frozen with a password: nothing sent, said why. */
        drive_security();
        drive.sec_enabled = drive.sec_frozen = true;
        assert_int_equal(fw_ata_security_cleanup(-1, "wiped-1f2e", err, sizeof(err)), -EBUSY);
        sent_is("ec");
        assert_non_null(strstr(err, "security frozen with a password set"));

        assert_int_equal(fw_ata_security_cleanup(-1, "", err, sizeof(err)), -EINVAL);
}

/* READ NATIVE MAX ADDRESS (EXT), then at once SET MAX ADDRESS (EXT) to the native max. */
static void test_restore_native_max(void **state) {
        char err[256] = "";

        (void) state;
        drive_reset();
        assert_int_equal(fw_ata_restore_native_max(-1, 1000215216u + 1000, true, err, sizeof(err)), 0);
        sent_is("27 37");
        cdb_is(drive.cdb[1], (const uint8_t[]) { 0x85, 0x07, 0x00, 0, 0, 0, 0x01, 0x3b, 0x97, 0, 0x16, 0, 0x9e, 0x40,
                                                 0x37, 0 });

        /* 28-bit. */
        drive_reset();
        drive.native_max_lba = 0x0abcdef0;
        assert_int_equal(fw_ata_restore_native_max(-1, 0x0abcdef1, false, err, sizeof(err)), 0);
        sent_is("f8 f9");
        cdb_is(drive.cdb[1], (const uint8_t[]) { 0x85, 0x06, 0x00, 0, 0, 0, 0x01, 0, 0xf0, 0, 0xde, 0, 0xbc, 0x4a,
                                                 0xf9, 0 });

        /* The drive reports another native max: nothing set. */
        drive_reset();
        assert_int_equal(fw_ata_restore_native_max(-1, 1000215216u, true, err, sizeof(err)), -ESTALE);
        sent_is("27");
        assert_string_equal(err, "READ NATIVE MAX ADDRESS EXT: the drive's native max is now 1000216216 sectors, not "
                                 "1000215216: nothing set");
        /* Fixed-format sense lost LBA 47:24: the bits there are compared. */
        drive_reset();
        drive.fixed_sense = true;
        assert_int_equal(fw_ata_restore_native_max(-1, 1000215216u + 1000, true, err, sizeof(err)), 0);
        sent_is("27 37");

        /* SET MAX aborted; READ NATIVE MAX aborted. */
        drive_reset();
        drive.aborts[0x37] = true;
        assert_int_equal(fw_ata_restore_native_max(-1, 1000215216u + 1000, true, err, sizeof(err)), -EIO);
        assert_string_equal(err, "SET MAX ADDRESS EXT: aborted by the drive (ATA status 51h, error 04h)");
        drive_reset();
        drive.native_aborts = true;
        assert_int_equal(fw_ata_restore_native_max(-1, 1000215216u + 1000, true, err, sizeof(err)), -EIO);
        sent_is("27");
        assert_int_equal(fw_ata_restore_native_max(-1, 0, true, err, sizeof(err)), -EINVAL);
}

/* A descriptor that takes no SG_IO (a regular file): the probe says IDENTIFY did not reach it,
 * and leaves nothing read. */
static void test_probe_no_sg_io(void **state) {
        char path[] = "/tmp/test-fw-ata-XXXXXX";
        struct fw_ata_caps c;
        char *err = NULL;
        int fd;

        (void) state;
        fd = mkstemp(path);
        assert_true(fd >= 0);
        unlink(path);
        assert_int_equal(fw_ata_probe(fd, &c, &err), -ENOTTY);
        assert_non_null(err);
        assert_non_null(strstr(err, "IDENTIFY DEVICE: "));
        assert_true(c.current_max == 0);
        assert_int_equal(c.erase_time, -1);
        free(err);
        close(fd);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_cdbs),
                cmocka_unit_test(test_sense_descriptor),
                cmocka_unit_test(test_sense_fixed),
                cmocka_unit_test(test_erase_time),
                cmocka_unit_test(test_identify),
                cmocka_unit_test(test_dco),
                cmocka_unit_test(test_json),
                cmocka_unit_test(test_probe),
                cmocka_unit_test(test_probe_no_sg_io),
                cmocka_unit_test(test_erase_cdbs),
                cmocka_unit_test(test_sanitize_start),
                cmocka_unit_test(test_sanitize_status),
                cmocka_unit_test(test_security_erase),
                cmocka_unit_test(test_security_cleanup),
                cmocka_unit_test(test_restore_native_max),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
