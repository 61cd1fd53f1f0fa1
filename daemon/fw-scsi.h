/* wiped: SCSI bytes without a device (fw-scsi.c). The CDBs the SCSI module sends and the decoding
 * of what comes back, as pure functions: tests/unit/test-fw-scsi.c checks them byte for byte, and
 * fw_scsi_sanitize_status() uses the sense decoding to follow a SANITIZE (its progress comes back
 * in the sense data of REQUEST SENSE or of any command refused while it runs). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Operation codes (SPC-4, SBC-4) */
enum {
        FW_SCSI_REQUEST_SENSE = 0x03,
        FW_SCSI_FORMAT_UNIT = 0x04,
        FW_SCSI_INQUIRY = 0x12,
        FW_SCSI_SANITIZE = 0x48,
        FW_SCSI_MAINTENANCE_IN = 0xa3,
        FW_SCSI_SA_REPORT_SUPPORTED_OPCODES = 0x0c, /* MAINTENANCE IN service action */
};

/* SANITIZE service actions (SBC-4 5.30) */
enum {
        FW_SCSI_SANITIZE_OVERWRITE = 0x01,
        FW_SCSI_SANITIZE_BLOCK_ERASE = 0x02,
        FW_SCSI_SANITIZE_CRYPTO_ERASE = 0x03,
        FW_SCSI_SANITIZE_EXIT_FAILURE = 0x1f,
};

/* REPORT SUPPORTED OPERATION CODES reporting options (SPC-4 6.35.1) */
enum {
        FW_SCSI_RSOC_ALL = 0,           /* every command the device supports */
        FW_SCSI_RSOC_ONE = 1,           /* one command, by operation code */
        FW_SCSI_RSOC_ONE_SA = 2,        /* one command, by operation code and service action */
};

/* VPD pages (SPC-4 7.8, SAT-4 12.4.2) */
enum {
        FW_SCSI_VPD_SUPPORTED = 0x00,
        FW_SCSI_VPD_ATA_INFORMATION = 0x89,
};

/* SCSI status (SAM-5 5.3) and sense keys (SPC-4 4.5.6) */
enum {
        FW_SCSI_STATUS_GOOD = 0x00,
        FW_SCSI_STATUS_CHECK_CONDITION = 0x02,
};
enum {
        FW_SCSI_SK_NO_SENSE = 0x0,
        FW_SCSI_SK_NOT_READY = 0x2,
        FW_SCSI_SK_MEDIUM_ERROR = 0x3,
        FW_SCSI_SK_ILLEGAL_REQUEST = 0x5,
        FW_SCSI_SK_UNIT_ATTENTION = 0x6,
};

/* Sense data, either format (SPC-4 4.5). */
struct fw_scsi_sense {
        uint8_t response_code;          /* 70h/71h fixed, 72h/73h descriptor (current/deferred) */
        uint8_t key, asc, ascq;         /* asc, ascq 0 when the sense data is too short for them */
        int32_t progress;               /* of 65536, or -1 when the sense data carries none */
        uint8_t progress_key, progress_asc, progress_ascq; /* the operation the progress is about */
};

/* INQUIRY (SPC-4 6.6): the standard data (evpd false, page 0) or VPD page `page`, alloc bytes. */
void fw_scsi_cdb_inquiry(uint8_t cdb[6], bool evpd, uint8_t page, uint16_t alloc);
/* REPORT SUPPORTED OPERATION CODES (SPC-4 6.35), without command timeouts (RCTD 0): reporting
 * option `option` for opcode and service action sa (where the option takes them), alloc bytes. */
void fw_scsi_cdb_rsoc(uint8_t cdb[12], uint8_t option, uint8_t opcode, uint16_t sa, uint32_t alloc);
/* SANITIZE (SBC-4 5.30.1, 10 bytes): service action sa, IMMED, AUSE, ZNR 0, a parameter list of
 * plen bytes. */
void fw_scsi_cdb_sanitize(uint8_t cdb[10], uint8_t sa, bool immed, bool ause, uint16_t plen);
/* The OVERWRITE parameter list (SBC-4 5.30.2.2) in p[8]: INVERT 0, TEST 0, OVERWRITE COUNT passes
 * (1..31), a 4-byte INITIALIZATION PATTERN, pattern big-endian. Its length: 8. */
#define FW_SCSI_OVERWRITE_PARAMS_LEN 8
void fw_scsi_sanitize_overwrite_params(uint8_t p[FW_SCSI_OVERWRITE_PARAMS_LEN], unsigned passes, uint32_t pattern);
/* REQUEST SENSE (SPC-4 6.39): descriptor format when desc, alloc bytes (at most 252 as SPC-4
 * advises: the field is one byte). */
void fw_scsi_cdb_request_sense(uint8_t cdb[6], bool desc, uint8_t alloc);

/* Whether the Supported VPD Pages page (SPC-4 7.8.16) in buf[len] (the bytes received) lists
 * page: 1 or 0; -EBADMSG when buf is no such page. */
int fw_scsi_vpd_lists(const uint8_t *buf, size_t len, uint8_t page);

/* The SUPPORT field (0..7) of a one-command REPORT SUPPORTED OPERATION CODES answer (SPC-4
 * 6.35.3) in buf[len] for opcode; -EBADMSG when buf is not one (too short, or its CDB usage data
 * is for another command: a device that ignored the reporting option). */
int fw_scsi_rsoc_one(const uint8_t *buf, size_t len, uint8_t opcode);
/* Whether a SUPPORT field says supported: 011b (as a standard says) or 101b (vendor specific). */
bool fw_scsi_rsoc_support_ok(int support);
/* Whether the all-commands answer (SPC-4 6.35.2) in buf[len] lists opcode (with service action sa
 * when has_sa): 1 or 0; -EMSGSIZE when not found in a list that did not fit in buf; -EBADMSG. */
int fw_scsi_rsoc_all_find(const uint8_t *buf, size_t len, uint8_t opcode, bool has_sa, uint16_t sa);

/* Decode the sense data in sense[len] (the bytes received), fixed or descriptor format, into *s:
 * 0, or -EBADMSG when it is no sense data. The progress is the sense-key specific progress
 * indication (SKSV set, sense key NO SENSE or NOT READY: SPC-4 4.5.2.4.4), else the first
 * another-progress-indication descriptor (0Ah, SPC-4 4.5.2.6). */
int fw_scsi_sense_decode(const uint8_t *sense, size_t len, struct fw_scsi_sense *s);
/* The progress in sense[len], of 65536 (0..65535); -ENODATA when it has none, -EBADMSG. */
int fw_scsi_sense_progress(const uint8_t *sense, size_t len);
/* Whether the sense says a sanitize is in progress: NOT READY, LOGICAL UNIT NOT READY, SANITIZE
 * IN PROGRESS (04h/1Bh), or a progress indication about that. */
bool fw_scsi_sense_sanitizing(const struct fw_scsi_sense *s);
/* The sense key's name (SPC-4 table 48), e.g. "ILLEGAL REQUEST". */
const char *fw_scsi_sense_key_name(uint8_t key);
/* The name of the additional sense code asc/ascq (SPC-4 annex D) for the few this module meets,
 * e.g. "INVALID FIELD IN CDB"; NULL for the others. */
const char *fw_scsi_asc_name(uint8_t asc, uint8_t ascq);
/* The sense in words into buf[len]: "ILLEGAL REQUEST, INVALID FIELD IN CDB (24h/00h)", or the key
 * with "ASC/ASCQ 3Dh/00h" when the code has no name here; then ", progress n/65536" when it has
 * one. The length snprintf() returns. */
int fw_scsi_sense_words(char *buf, size_t len, const struct fw_scsi_sense *s);
