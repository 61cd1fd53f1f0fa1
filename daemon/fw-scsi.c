/* SCSI: what a SCSI drive's firmware can do to erase itself (firmware.h), through SG_IO, and the
 * SANITIZE that does it.
 *
 * - fw_scsi_is_ata(): the Supported VPD Pages page (SPC-4 7.8.16) lists the ATA Information page
 *   (89h, SAT-4 12.4.2) for an ATA drive behind a SCSI/ATA translation layer (libata, a SAT HBA).
 * - fw_scsi_probe(): REPORT SUPPORTED OPERATION CODES (SPC-4 6.35) one command at a time: FORMAT
 *   UNIT (SBC-4 5.3) by operation code, SANITIZE (SBC-4 5.30) by each service action. A device
 *   that refuses those reporting options is asked for its whole list of commands instead, as
 *   sg_opcodes does by default; one that refuses the command itself has rsoc_supported false and
 *   the rest unknown. The probe sends only INQUIRY and REPORT SUPPORTED OPERATION CODES, which
 *   read; scsi_read() refuses any other command, so that a mistake there cannot change a drive.
 * - fw_scsi_sanitize_start(): SANITIZE (SBC-3/SBC-4 5.30) with IMMED, as sg_sanitize sends it;
 *   fw_scsi_sanitize_status(): REQUEST SENSE (SPC-4 6.39), whose sense data says whether a
 *   sanitize runs (with its progress), failed, or nothing is pending. Only these two functions
 *   send anything other than the probe's commands (scsi_erase_cmd()).
 * The bytes (CDBs, answers, sense data) are built and decoded by the pure functions at the top
 * (fw-scsi.h). */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "daemon.h"
#include "firmware.h"
#include "fw-scsi.h"

/* Long enough for a busy drive to answer a command that reads; the kernel's default is 60 s. */
#define FW_SCSI_TIMEOUT_MS 20000
/* The Supported VPD Pages allocation: a multiple of 4 under 256, as sg_vpd uses (some devices
 * refuse odd lengths). */
#define FW_SCSI_VPD_ALLOC 252
/* A one-command answer: 4 bytes, a CDB of at most 32 (variable length), 12 of timeouts. */
#define FW_SCSI_RSOC_ONE_ALLOC 64
/* The all-commands list: 8 bytes a command (20 with timeouts, which are not asked for), room for
 * 2000; sg_opcodes asks for 8 KiB. */
#define FW_SCSI_RSOC_ALL_ALLOC 16384

static uint16_t be16(const uint8_t *p) {
        return (uint16_t) (p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p) {
        return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

void fw_scsi_cdb_inquiry(uint8_t cdb[6], bool evpd, uint8_t page, uint16_t alloc) {
        cdb[0] = FW_SCSI_INQUIRY;
        cdb[1] = evpd ? 0x01 : 0x00;    /* EVPD */
        cdb[2] = evpd ? page : 0;       /* PAGE CODE: zero for the standard data */
        cdb[3] = (uint8_t) (alloc >> 8);
        cdb[4] = (uint8_t) alloc;
        cdb[5] = 0;                     /* CONTROL */
}

void fw_scsi_cdb_rsoc(uint8_t cdb[12], uint8_t option, uint8_t opcode, uint16_t sa, uint32_t alloc) {
        memset(cdb, 0, 12);
        cdb[0] = FW_SCSI_MAINTENANCE_IN;
        cdb[1] = FW_SCSI_SA_REPORT_SUPPORTED_OPCODES;
        cdb[2] = option & 0x07;         /* RCTD (bit 7) 0, REPORTING OPTIONS */
        if (option != FW_SCSI_RSOC_ALL)
                cdb[3] = opcode;        /* REQUESTED OPERATION CODE */
        if (option == FW_SCSI_RSOC_ONE_SA) {
                cdb[4] = (uint8_t) (sa >> 8); /* REQUESTED SERVICE ACTION */
                cdb[5] = (uint8_t) sa;
        }
        cdb[6] = (uint8_t) (alloc >> 24); /* ALLOCATION LENGTH */
        cdb[7] = (uint8_t) (alloc >> 16);
        cdb[8] = (uint8_t) (alloc >> 8);
        cdb[9] = (uint8_t) alloc;
}

void fw_scsi_cdb_sanitize(uint8_t cdb[10], uint8_t sa, bool immed, bool ause, uint16_t plen) {
        memset(cdb, 0, 10);
        cdb[0] = FW_SCSI_SANITIZE;
        /* Byte 1: IMMED (bit 7), ZNR (bit 6, SBC-4; 0), AUSE (bit 5), SERVICE ACTION (4..0). */
        cdb[1] = (uint8_t) ((immed ? 0x80 : 0) | (ause ? 0x20 : 0) | (sa & 0x1f));
        cdb[7] = (uint8_t) (plen >> 8); /* PARAMETER LIST LENGTH */
        cdb[8] = (uint8_t) plen;
}

void fw_scsi_sanitize_overwrite_params(uint8_t p[FW_SCSI_OVERWRITE_PARAMS_LEN], unsigned passes, uint32_t pattern) {
        /* Byte 0: INVERT (bit 7) 0, TEST (6..5) 0 (a real overwrite), OVERWRITE COUNT (4..0);
         * byte 1 reserved; bytes 2..3 INITIALIZATION PATTERN LENGTH; the pattern from byte 4. */
        p[0] = (uint8_t) (passes & 0x1f);
        p[1] = 0;
        p[2] = 0;
        p[3] = 4;
        p[4] = (uint8_t) (pattern >> 24);
        p[5] = (uint8_t) (pattern >> 16);
        p[6] = (uint8_t) (pattern >> 8);
        p[7] = (uint8_t) pattern;
}

void fw_scsi_cdb_request_sense(uint8_t cdb[6], bool desc, uint8_t alloc) {
        memset(cdb, 0, 6);
        cdb[0] = FW_SCSI_REQUEST_SENSE;
        cdb[1] = desc ? 0x01 : 0x00;    /* DESC */
        cdb[4] = alloc;                 /* ALLOCATION LENGTH */
}

int fw_scsi_vpd_lists(const uint8_t *buf, size_t len, uint8_t page) {
        size_t n;

        /* Byte 1 the page code, bytes 2..3 the page length, then one byte a page. */
        if (len < 4 || buf[1] != FW_SCSI_VPD_SUPPORTED)
                return -EBADMSG;
        n = be16(buf + 2);
        if (n > len - 4)
                n = len - 4;
        for (size_t i = 0; i < n; i++)
                if (buf[4 + i] == page)
                        return 1;
        return 0;
}

int fw_scsi_rsoc_one(const uint8_t *buf, size_t len, uint8_t opcode) {
        int support;

        /* Byte 1: CTDP (bit 7), SUPPORT (bits 2..0); bytes 2..3 the CDB SIZE, then the CDB USAGE
         * DATA, whose first byte is the operation code. The data after byte 1 is only valid when
         * the command is supported. */
        if (len < 2)
                return -EBADMSG;
        support = buf[1] & 0x07;
        if (!fw_scsi_rsoc_support_ok(support))
                return support;
        if (len < 4 || be16(buf + 2) == 0)
                return -EBADMSG;
        if (len >= 5 && buf[4] != opcode)
                return -EBADMSG;
        return support;
}

bool fw_scsi_rsoc_support_ok(int support) {
        return support == 3 || support == 5;
}

int fw_scsi_rsoc_all_find(const uint8_t *buf, size_t len, uint8_t opcode, bool has_sa, uint16_t sa) {
        size_t end, off;

        /* Bytes 0..3: the COMMAND DATA LENGTH; then one 8-byte descriptor a command (byte 0 the
         * operation code, bytes 2..3 its service action, byte 5 CTDP (bit 1) and SERVACTV (bit 0)),
         * each followed by a 12-byte command timeouts descriptor when its CTDP is set. */
        if (len < 4)
                return -EBADMSG;
        end = be32(buf) > len - 4 ? len : 4 + (size_t) be32(buf);
        for (off = 4; off + 8 <= end; off += 8 + (buf[off + 5] & 0x02 ? 12 : 0)) {
                const uint8_t *d = buf + off;
                bool sa_valid = d[5] & 0x01;

                if (d[0] != opcode)
                        continue;
                if (!has_sa || (sa_valid && be16(d + 2) == sa))
                        return 1;
        }
        return 4 + (size_t) be32(buf) > len ? -EMSGSIZE : 0;
}

/* The descriptor of type `type` in the descriptor-format sense data sense[len] (SPC-4 4.5.2.1),
 * whole within len, or NULL. */
static const uint8_t *sense_descriptor(const uint8_t *sense, size_t len, uint8_t type) {
        for (size_t off = 8; off + 2 <= len; off += 2 + (size_t) sense[off + 1]) {
                if (off + 2 + sense[off + 1] > len)
                        break;
                if (sense[off] == type)
                        return sense + off;
        }
        return NULL;
}

int fw_scsi_sense_decode(const uint8_t *sense, size_t len, struct fw_scsi_sense *s) {
        const uint8_t *d;

        *s = (struct fw_scsi_sense) { .progress = -1 };
        if (len < 1)
                return -EBADMSG;
        s->response_code = sense[0] & 0x7f; /* bit 7: VALID in the fixed format */
        /* Byte 7 says how many bytes follow it: the rest is padding. */
        if (len >= 8 && len > 8 + (size_t) sense[7])
                len = 8 + (size_t) sense[7];
        switch (s->response_code) {
        case 0x70:
        case 0x71:
                /* Fixed (SPC-4 4.5.3): byte 2 the sense key, 12..13 ASC/ASCQ, 15..17 the sense-key
                 * specific information (byte 15 bit 7 SKSV). */
                if (len < 3)
                        return -EBADMSG;
                s->key = sense[2] & 0x0f;
                if (len >= 14) {
                        s->asc = sense[12];
                        s->ascq = sense[13];
                }
                if (len >= 18 && (sense[15] & 0x80) &&
                    (s->key == FW_SCSI_SK_NO_SENSE || s->key == FW_SCSI_SK_NOT_READY))
                        s->progress = be16(sense + 16);
                break;
        case 0x72:
        case 0x73:
                /* Descriptor (SPC-4 4.5.2): bytes 1..3 the sense key, ASC, ASCQ; descriptors from
                 * byte 8. The sense-key specific one (02h) as in the fixed format from its byte 4;
                 * another progress indication (0Ah) names its own operation. */
                if (len < 4)
                        return -EBADMSG;
                s->key = sense[1] & 0x0f;
                s->asc = sense[2];
                s->ascq = sense[3];
                d = sense_descriptor(sense, len, 0x02);
                if (d && d[1] >= 6 && (d[4] & 0x80) &&
                    (s->key == FW_SCSI_SK_NO_SENSE || s->key == FW_SCSI_SK_NOT_READY)) {
                        s->progress = be16(d + 5);
                        break;
                }
                d = sense_descriptor(sense, len, 0x0a);
                if (d && d[1] >= 6) {
                        s->progress = be16(d + 6);
                        s->progress_key = d[2] & 0x0f;
                        s->progress_asc = d[3];
                        s->progress_ascq = d[4];
                }
                return 0;
        default:
                return -EBADMSG;
        }
        if (s->progress >= 0) {
                s->progress_key = s->key;
                s->progress_asc = s->asc;
                s->progress_ascq = s->ascq;
        }
        return 0;
}

int fw_scsi_sense_progress(const uint8_t *sense, size_t len) {
        struct fw_scsi_sense s;
        int r = fw_scsi_sense_decode(sense, len, &s);

        if (r < 0)
                return r;
        return s.progress >= 0 ? s.progress : -ENODATA;
}

bool fw_scsi_sense_sanitizing(const struct fw_scsi_sense *s) {
        if (s->key == FW_SCSI_SK_NOT_READY && s->asc == 0x04 && s->ascq == 0x1b)
                return true;
        return s->progress >= 0 && s->progress_key == FW_SCSI_SK_NOT_READY && s->progress_asc == 0x04 &&
               s->progress_ascq == 0x1b;
}

const char *fw_scsi_sense_key_name(uint8_t key) {
        static const char *const names[16] = {
                "NO SENSE", "RECOVERED ERROR", "NOT READY", "MEDIUM ERROR", "HARDWARE ERROR",
                "ILLEGAL REQUEST", "UNIT ATTENTION", "DATA PROTECT", "BLANK CHECK", "VENDOR SPECIFIC",
                "COPY ABORTED", "ABORTED COMMAND", "RESERVED (0Ch)", "VOLUME OVERFLOW", "MISCOMPARE",
                "COMPLETED",
        };
        return names[key & 0x0f];
}

const char *fw_scsi_asc_name(uint8_t asc, uint8_t ascq) {
        static const struct {
                uint8_t asc, ascq;
                const char *name;
        } names[] = {
                { 0x00, 0x00, "NO ADDITIONAL SENSE INFORMATION" },
                { 0x00, 0x16, "OPERATION IN PROGRESS" },
                { 0x04, 0x00, "LOGICAL UNIT NOT READY, CAUSE NOT REPORTABLE" },
                { 0x04, 0x04, "LOGICAL UNIT NOT READY, FORMAT IN PROGRESS" },
                { 0x04, 0x1b, "LOGICAL UNIT NOT READY, SANITIZE IN PROGRESS" },
                { 0x1a, 0x00, "PARAMETER LIST LENGTH ERROR" },
                { 0x20, 0x00, "INVALID COMMAND OPERATION CODE" },
                { 0x24, 0x00, "INVALID FIELD IN CDB" },
                { 0x26, 0x00, "INVALID FIELD IN PARAMETER LIST" },
                { 0x27, 0x00, "WRITE PROTECTED" },
                { 0x29, 0x00, "POWER ON, RESET, OR BUS DEVICE RESET OCCURRED" },
                { 0x2c, 0x00, "COMMAND SEQUENCE ERROR" },
                { 0x31, 0x00, "MEDIUM FORMAT CORRUPTED" },
                { 0x31, 0x03, "SANITIZE COMMAND FAILED" },
                { 0x3a, 0x00, "MEDIUM NOT PRESENT" },
        };

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (names[i].asc == asc && names[i].ascq == ascq)
                        return names[i].name;
        return NULL;
}

int fw_scsi_sense_words(char *buf, size_t len, const struct fw_scsi_sense *s) {
        const char *name = fw_scsi_asc_name(s->asc, s->ascq);
        const char *key = fw_scsi_sense_key_name(s->key);
        int n;

        if (name)
                n = snprintf(buf, len, "%s, %s (%02Xh/%02Xh)", key, name, (unsigned) s->asc, (unsigned) s->ascq);
        else
                n = snprintf(buf, len, "%s, ASC/ASCQ %02Xh/%02Xh", key, (unsigned) s->asc, (unsigned) s->ascq);
        if (n >= 0 && s->progress >= 0)
                n += snprintf(buf + ((size_t) n < len ? (size_t) n : len), (size_t) n < len ? len - (size_t) n : 0,
                              ", progress %d/65536", (int) s->progress);
        return n;
}

/* One command that reads data into buf[len]. The SCSI status (GOOD, CHECK CONDITION...), with
 * *got the bytes received and *sense the sense data decoded (response_code 0 when there is
 * none); or -errno when it did not reach the device. A UNIT ATTENTION (a reset, a changed mode:
 * news, not an answer) is passed over once. Only INQUIRY and MAINTENANCE IN (REPORT SUPPORTED
 * OPERATION CODES) go out: -EPERM for anything else. */
static int scsi_read(int fd, const uint8_t *cdb, size_t cdb_len, uint8_t *buf, size_t len, size_t *got,
                     struct fw_scsi_sense *sense) {
        for (int attempt = 0;; attempt++) {
                uint8_t sb[96];
                size_t sb_got = 0, resid = 0;
                int status = 0, r;

                if (!(cdb[0] == FW_SCSI_INQUIRY ||
                      (cdb[0] == FW_SCSI_MAINTENANCE_IN && (cdb[1] & 0x1f) == FW_SCSI_SA_REPORT_SUPPORTED_OPCODES)))
                        return -EPERM;
                memset(buf, 0, len);
                r = fw_sg_io(fd, cdb, cdb_len, buf, len, -1, sb, sizeof(sb), &sb_got, FW_SCSI_TIMEOUT_MS, &status,
                             &resid);
                if (r < 0)
                        return r;
                *got = resid < len ? len - resid : 0;
                if (fw_scsi_sense_decode(sb, sb_got < sizeof(sb) ? sb_got : sizeof(sb), sense) < 0)
                        *sense = (struct fw_scsi_sense) { .progress = -1 };
                status &= 0x7e;         /* the status byte's reserved bits */
                if (status == FW_SCSI_STATUS_CHECK_CONDITION && sense->key == FW_SCSI_SK_UNIT_ATTENTION &&
                    attempt == 0)
                        continue;
                return status;
        }
}

/* *err: the message fmt makes. r, or -ENOMEM when there is no memory for the message. */
__attribute__((format(printf, 3, 4)))
static int scsi_err(char **err, int r, const char *fmt, ...) {
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(err, fmt, ap);
        va_end(ap);
        if (n < 0) {
                *err = NULL;
                return -ENOMEM;
        }
        return r;
}

/* *err: "what: how the device answered" for a status that is neither GOOD nor an answer the
 * caller understands. r, or -ENOMEM. */
static int scsi_fail(char **err, const char *what, int status, const struct fw_scsi_sense *s, int r) {
        if (status != FW_SCSI_STATUS_CHECK_CONDITION)
                return scsi_err(err, r, "%s: SCSI status 0x%02x", what, (unsigned) status);
        if (s->response_code == 0)
                return scsi_err(err, r, "%s: CHECK CONDITION without sense data", what);
        if (fw_scsi_sense_sanitizing(s) && s->progress >= 0)
                return scsi_err(err, r, "%s: a sanitize is in progress (%u%% done)", what,
                                (unsigned) ((uint64_t) s->progress * 100 / 65536));
        return scsi_err(err, r, "%s: %s, ASC/ASCQ %02Xh/%02Xh", what, fw_scsi_sense_key_name(s->key),
                        (unsigned) s->asc, (unsigned) s->ascq);
}

int fw_scsi_is_ata(int fd) {
        uint8_t cdb[6], page[FW_SCSI_VPD_ALLOC];
        struct fw_scsi_sense sense;
        size_t got = 0;
        int r;

        fw_scsi_cdb_inquiry(cdb, true, FW_SCSI_VPD_SUPPORTED, sizeof(page));
        r = scsi_read(fd, cdb, sizeof(cdb), page, sizeof(page), &got, &sense);
        if (r < 0)
                return r;
        /* A device without VPD pages refuses the page (CHECK CONDITION): a SCSI device, not ATA. */
        if (r == FW_SCSI_STATUS_CHECK_CONDITION)
                return 0;
        if (r != FW_SCSI_STATUS_GOOD)
                return -EIO;
        /* A malformed page is no sign of ATA either: the device answered SG_IO, so it is SCSI. */
        return fw_scsi_vpd_lists(page, got, FW_SCSI_VPD_ATA_INFORMATION) == 1;
}

/* What fw_scsi_probe() asks about, and where the answer goes. */
struct scsi_query {
        const char *name;
        uint8_t opcode;
        bool has_sa;
        uint16_t sa;
        size_t field;                   /* offsetof the bool in struct fw_scsi_caps */
};

static const struct scsi_query scsi_queries[] = {
        { "FORMAT UNIT", FW_SCSI_FORMAT_UNIT, false, 0, offsetof(struct fw_scsi_caps, format_unit) },
        { "SANITIZE OVERWRITE", FW_SCSI_SANITIZE, true, FW_SCSI_SANITIZE_OVERWRITE,
          offsetof(struct fw_scsi_caps, sanitize_overwrite) },
        { "SANITIZE BLOCK ERASE", FW_SCSI_SANITIZE, true, FW_SCSI_SANITIZE_BLOCK_ERASE,
          offsetof(struct fw_scsi_caps, sanitize_block) },
        { "SANITIZE CRYPTOGRAPHIC ERASE", FW_SCSI_SANITIZE, true, FW_SCSI_SANITIZE_CRYPTO_ERASE,
          offsetof(struct fw_scsi_caps, sanitize_crypto) },
        { "SANITIZE EXIT FAILURE MODE", FW_SCSI_SANITIZE, true, FW_SCSI_SANITIZE_EXIT_FAILURE,
          offsetof(struct fw_scsi_caps, sanitize_exit_failure) },
};

static bool *scsi_field(struct fw_scsi_caps *c, const struct scsi_query *q) {
        return (bool *) ((char *) c + q->field);
}

static bool scsi_illegal_request(int status, const struct fw_scsi_sense *s) {
        return status == FW_SCSI_STATUS_CHECK_CONDITION && s->key == FW_SCSI_SK_ILLEGAL_REQUEST;
}

/* The whole list of commands (reporting option 000b): c filled, 1; 0 when the device refuses
 * REPORT SUPPORTED OPERATION CODES; -errno (*err: what). */
static int scsi_probe_all(int fd, struct fw_scsi_caps *c, char **err) {
        static const char what[] = "REPORT SUPPORTED OPERATION CODES (all commands)";
        struct fw_scsi_sense sense;
        uint8_t cdb[12], *buf;
        size_t got = 0;
        int r;

        buf = malloc(FW_SCSI_RSOC_ALL_ALLOC);
        if (!buf)
                return -ENOMEM;
        fw_scsi_cdb_rsoc(cdb, FW_SCSI_RSOC_ALL, 0, 0, FW_SCSI_RSOC_ALL_ALLOC);
        r = scsi_read(fd, cdb, sizeof(cdb), buf, FW_SCSI_RSOC_ALL_ALLOC, &got, &sense);
        if (r < 0) {
                r = scsi_err(err, r, "%s: %s", what, strerror(-r));
                goto out;
        }
        if (scsi_illegal_request(r, &sense)) {
                r = 0;
                goto out;
        }
        if (r != FW_SCSI_STATUS_GOOD) {
                r = scsi_fail(err, what, r, &sense, -EIO);
                goto out;
        }
        for (size_t i = 0; i < sizeof(scsi_queries) / sizeof(scsi_queries[0]); i++) {
                const struct scsi_query *q = &scsi_queries[i];

                r = fw_scsi_rsoc_all_find(buf, got, q->opcode, q->has_sa, q->sa);
                if (r < 0) {
                        r = scsi_err(err, r, "%s: %s", what,
                                     r == -EMSGSIZE ? "the list is longer than 16 KiB" : "malformed answer");
                        goto out;
                }
                *scsi_field(c, q) = r == 1;
        }
        c->rsoc_supported = true;
        r = 1;
out:
        free(buf);
        return r;
}

int fw_scsi_probe(int fd, struct fw_scsi_caps *c, char **err) {
        int r;

        *err = NULL;
        *c = (struct fw_scsi_caps) {};
        for (size_t i = 0; i < sizeof(scsi_queries) / sizeof(scsi_queries[0]); i++) {
                const struct scsi_query *q = &scsi_queries[i];
                uint8_t cdb[12], buf[FW_SCSI_RSOC_ONE_ALLOC];
                struct fw_scsi_sense sense;
                char what[96];
                size_t got = 0;

                snprintf(what, sizeof(what), "REPORT SUPPORTED OPERATION CODES (%s)", q->name);
                fw_scsi_cdb_rsoc(cdb, q->has_sa ? FW_SCSI_RSOC_ONE_SA : FW_SCSI_RSOC_ONE, q->opcode, q->sa,
                                 sizeof(buf));
                r = scsi_read(fd, cdb, sizeof(cdb), buf, sizeof(buf), &got, &sense);
                if (r < 0)
                        return scsi_err(err, r, "%s: %s", what, strerror(-r));
                /* ILLEGAL REQUEST: the command itself (INVALID COMMAND OPERATION CODE, or INVALID
                 * FIELD IN CDB on the service action of MAINTENANCE IN, which other commands
                 * share) or this reporting option is refused: the whole list tells which. */
                if (scsi_illegal_request(r, &sense))
                        goto list;
                if (r != FW_SCSI_STATUS_GOOD)
                        return scsi_fail(err, what, r, &sense, -EIO);
                r = fw_scsi_rsoc_one(buf, got, q->opcode);
                if (r < 0)
                        return scsi_err(err, r, "%s: malformed answer", what);
                /* SUPPORT 000b, "data about the requested command is not currently available",
                 * is also what a device that ignored the reporting option and sent its whole list
                 * seems to say (bytes 0..3 are then the list's length): the list tells. */
                if (r == 0)
                        goto list;
                *scsi_field(c, q) = fw_scsi_rsoc_support_ok(r);
        }
        c->rsoc_supported = true;
        return 0;

list:
        *c = (struct fw_scsi_caps) {};
        r = scsi_probe_all(fd, c, err);
        return r < 0 ? r : 0;
}

struct json_object *fw_scsi_json(const struct fw_scsi_caps *c) {
        struct json_object *o = json_object_new_object(), *san = NULL;

        if (!o)
                return NULL;
        json_object_object_add(o, "report_supported_opcodes", json_object_new_boolean(c->rsoc_supported));
        /* Without REPORT SUPPORTED OPERATION CODES the device's commands are unknown: null. */
        if (c->rsoc_supported) {
                san = json_object_new_object();
                if (!san) {
                        json_object_put(o);
                        return NULL;
                }
                json_object_object_add(san, "overwrite", json_object_new_boolean(c->sanitize_overwrite));
                json_object_object_add(san, "block", json_object_new_boolean(c->sanitize_block));
                json_object_object_add(san, "crypto", json_object_new_boolean(c->sanitize_crypto));
                json_object_object_add(san, "exit_failure", json_object_new_boolean(c->sanitize_exit_failure));
        }
        json_object_object_add(o, "sanitize", san);
        json_object_object_add(o, "format_unit", c->rsoc_supported ? json_object_new_boolean(c->format_unit) : NULL);
        return o;
}

/* ---- The commands that erase ---- */

/* SANITIZE with IMMED returns once the drive checked the command; REQUEST SENSE answers at once. */
#define FW_SCSI_ERASE_TIMEOUT_MS 30000
/* REQUEST SENSE allocation: the most SPC-4 (6.39) says sense data can take. */
#define FW_SCSI_REQUEST_SENSE_ALLOC 252

/* err[len]: the message fmt makes (nothing when there is no buffer). */
__attribute__((format(printf, 3, 4)))
static void scsi_say(char *err, size_t len, const char *fmt, ...) {
        va_list ap;

        if (!err || len == 0)
                return;
        va_start(ap, fmt);
        vsnprintf(err, len, fmt, ap);
        va_end(ap);
}

/* One SANITIZE or REQUEST SENSE: data of len bytes out (dir > 0), in (dir < 0) or none. The
 * SCSI status, with *sense the sense data of a CHECK CONDITION decoded (response_code 0 when
 * there is none) and *got the bytes received; or -errno when it did not reach the device. A UNIT
 * ATTENTION is passed over once (the command was not run: SAM-5 5.14). Anything but SANITIZE and
 * REQUEST SENSE: -EPERM, as scsi_read() does for the probe. */
static int scsi_erase_cmd(int fd, const uint8_t *cdb, size_t cdb_len, void *data, size_t len, int dir,
                          struct fw_scsi_sense *sense, size_t *got) {
        if (cdb[0] != FW_SCSI_SANITIZE && cdb[0] != FW_SCSI_REQUEST_SENSE)
                return -EPERM;
        for (int attempt = 0;; attempt++) {
                uint8_t sb[96];
                size_t sb_got = 0, resid = 0;
                int status = 0, r;

                if (dir < 0)
                        memset(data, 0, len);
                r = fw_sg_io(fd, cdb, cdb_len, data, len, dir, sb, sizeof(sb), &sb_got, FW_SCSI_ERASE_TIMEOUT_MS,
                             &status, &resid);
                if (r < 0)
                        return r;
                *got = dir < 0 && resid < len ? len - resid : 0;
                if (fw_scsi_sense_decode(sb, sb_got < sizeof(sb) ? sb_got : sizeof(sb), sense) < 0)
                        *sense = (struct fw_scsi_sense) { .progress = -1 };
                status &= 0x7e;
                if (status == FW_SCSI_STATUS_CHECK_CONDITION && sense->key == FW_SCSI_SK_UNIT_ATTENTION &&
                    attempt == 0)
                        continue;
                return status;
        }
}

/* The SANITIZE service action (SBC-4 5.30.1, table 63) of an action; -EINVAL for the others. */
static int scsi_sanitize_sa(enum fw_action a) {
        switch (a) {
        case FW_ACTION_SANITIZE_OVERWRITE:
                return FW_SCSI_SANITIZE_OVERWRITE;
        case FW_ACTION_SANITIZE_BLOCK:
                return FW_SCSI_SANITIZE_BLOCK_ERASE;
        case FW_ACTION_SANITIZE_CRYPTO:
                return FW_SCSI_SANITIZE_CRYPTO_ERASE;
        default:
                return -EINVAL;
        }
}

/* As sg_sanitize sends it (its default, IMMED set): SANITIZE with a parameter list only for
 * OVERWRITE. The drive checks the command and returns; the sanitize runs on, and REQUEST SENSE
 * (fw_scsi_sanitize_status) follows it. A CHECK CONDITION is -EIO with the sense in words in err,
 * except a sanitize already in progress (NOT READY, 04h/1Bh, SBC-4 4.11.2): -EBUSY, so that the
 * caller can tell it from a refusal. RECOVERED ERROR means the command completed (SPC-4 4.5.6). */
int fw_scsi_sanitize_start(int fd, const struct fw_command *c, char *err, size_t err_len) {
        uint8_t cdb[10], params[FW_SCSI_OVERWRITE_PARAMS_LEN];
        struct fw_scsi_sense sense;
        char words[128];
        uint16_t plen = 0;
        size_t got = 0;
        int sa, r;

        sa = scsi_sanitize_sa(c->action);
        if (sa < 0) {
                scsi_say(err, err_len, "SANITIZE: action %d is not a sanitize", (int) c->action);
                return -EINVAL;
        }
        if (sa == FW_SCSI_SANITIZE_OVERWRITE) {
                /* OVERWRITE COUNT is 5 bits, and 0 is reserved. */
                if (c->overwrite_passes < 1 || c->overwrite_passes > 31) {
                        scsi_say(err, err_len, "SANITIZE: overwrite count %u is not in 1..31", c->overwrite_passes);
                        return -EINVAL;
                }
                fw_scsi_sanitize_overwrite_params(params, c->overwrite_passes, c->overwrite_pattern);
                plen = sizeof(params);
        }
        fw_scsi_cdb_sanitize(cdb, (uint8_t) sa, true, c->ause, plen);
        r = scsi_erase_cmd(fd, cdb, sizeof(cdb), plen ? params : NULL, plen, plen ? 1 : 0, &sense, &got);
        if (r < 0) {
                scsi_say(err, err_len, "SANITIZE: %s", strerror(-r));
                return r;
        }
        if (r == FW_SCSI_STATUS_GOOD)
                return 0;
        if (r != FW_SCSI_STATUS_CHECK_CONDITION) {
                scsi_say(err, err_len, "SANITIZE: SCSI status %02Xh", (unsigned) r);
                return -EIO;
        }
        if (sense.response_code == 0) {
                scsi_say(err, err_len, "SANITIZE: CHECK CONDITION without sense data");
                return -EIO;
        }
        if (sense.key == 0x1 /* RECOVERED ERROR */)
                return 0;
        fw_scsi_sense_words(words, sizeof(words), &sense);
        scsi_say(err, err_len, "SANITIZE: %s", words);
        return fw_scsi_sense_sanitizing(&sense) ? -EBUSY : -EIO;
}

static bool scsi_sanitize_failed(const struct fw_scsi_sense *s) {
        return s->asc == 0x31 && s->ascq == 0x03;
}

/* REQUEST SENSE (SPC-4 6.39), descriptor format first (as sg_sanitize polls), fixed when the
 * device refuses DESC. The sense data it returns (with GOOD) is the state:
 * - NOT READY, 04h/1Bh SANITIZE IN PROGRESS (SBC-4 4.11.2), or a progress indication about it:
 *   RUNNING, with the progress indication (SKSV; of 65536) when there is one, else -1;
 * - 31h/03h SANITIZE COMMAND FAILED (MEDIUM ERROR, SBC-4 4.11.3): FAILED;
 * - NO SENSE, 00h/00h: DONE. A drive that never ran a sanitize says the same (SBC keeps no record
 *   of one that completed): DONE here means "no sanitize running nor failed", and the caller, who
 *   knows it sent one, reads it as that one's completion;
 * - anything else: UNKNOWN, with the sense in s->text.
 * s->text always names the sense key and ASC/ASCQ. A CHECK CONDITION of REQUEST SENSE itself
 * that says sanitizing or failed counts the same; other CHECK CONDITIONs are -EIO (err). */
int fw_scsi_sanitize_status(int fd, struct fw_status *s, char *err, size_t err_len) {
        uint8_t cdb[6], buf[FW_SCSI_REQUEST_SENSE_ALLOC];
        struct fw_scsi_sense cc, sense;
        bool desc = true;
        size_t got = 0;
        int r;

        *s = (struct fw_status) { .state = FW_RUN_UNKNOWN, .fraction = -1 };
        for (;;) {
                fw_scsi_cdb_request_sense(cdb, desc, sizeof(buf));
                r = scsi_erase_cmd(fd, cdb, sizeof(cdb), buf, sizeof(buf), -1, &cc, &got);
                if (r < 0) {
                        scsi_say(err, err_len, "REQUEST SENSE: %s", strerror(-r));
                        return r;
                }
                if (r == FW_SCSI_STATUS_CHECK_CONDITION && desc && cc.key == FW_SCSI_SK_ILLEGAL_REQUEST &&
                    cc.asc == 0x24 && cc.ascq == 0x00) {
                        desc = false;
                        continue;
                }
                break;
        }
        if (r == FW_SCSI_STATUS_CHECK_CONDITION) {
                char words[128];

                if (cc.response_code == 0) {
                        scsi_say(err, err_len, "REQUEST SENSE: CHECK CONDITION without sense data");
                        return -EIO;
                }
                if (!fw_scsi_sense_sanitizing(&cc) && !scsi_sanitize_failed(&cc)) {
                        fw_scsi_sense_words(words, sizeof(words), &cc);
                        scsi_say(err, err_len, "REQUEST SENSE: %s", words);
                        return -EIO;
                }
                sense = cc;
        } else if (r != FW_SCSI_STATUS_GOOD) {
                scsi_say(err, err_len, "REQUEST SENSE: SCSI status %02Xh", (unsigned) r);
                return -EIO;
        } else if (fw_scsi_sense_decode(buf, got, &sense) < 0) {
                scsi_say(err, err_len, "REQUEST SENSE: no sense data in the answer (%zu bytes)", got);
                return -EBADMSG;
        }
        fw_scsi_sense_words(s->text, sizeof(s->text), &sense);
        if (fw_scsi_sense_sanitizing(&sense)) {
                s->state = FW_RUN_RUNNING;
                if (sense.progress >= 0)
                        s->fraction = sense.progress / 65536.0;
        } else if (scsi_sanitize_failed(&sense)) {
                s->state = FW_RUN_FAILED;
        } else if (sense.key == FW_SCSI_SK_NO_SENSE && sense.asc == 0 && sense.ascq == 0 && sense.progress < 0) {
                s->state = FW_RUN_DONE;
        }
        return 0;
}
