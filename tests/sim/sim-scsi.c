/* drivesim: the SCSI side of SG_IO (the sg v3 interface, sg_io_hdr with interface 'S').
 *
 * A "scsi" drive is a direct-access block device (SPC-4, SBC-3): INQUIRY (SPC-4 6.6) with the
 * Supported VPD Pages (7.8.14) and Unit Serial Number (7.8.15) pages, REPORT SUPPORTED OPERATION
 * CODES (6.35), SANITIZE (SBC-3 5.30), FORMAT UNIT (5.3), TEST UNIT READY (SPC-4 6.47), REQUEST
 * SENSE (6.39) and READ CAPACITY (16) (SBC-3 5.16). While a sanitize runs, commands other than
 * INQUIRY, REPORT LUNS and REQUEST SENSE end in NOT READY, LOGICAL UNIT NOT READY, SANITIZE IN
 * PROGRESS (04h/1Bh) with the progress in the sense key specific field (SPC-4 4.5.2.4.4); after a
 * failed sanitize, in MEDIUM ERROR, SANITIZE COMMAND FAILED (31h/03h) until one succeeds or the
 * EXIT FAILURE MODE service action.
 *
 * An "ata" drive is what the kernel's SCSI/ATA translation shows (SAT-4): INQUIRY with the ATA
 * Information VPD page (89h), and ATA PASS-THROUGH (12) and (16), which sim-ata.c executes. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <scsi/sg.h>

#include "sim.h"

#define GOOD 0x00
#define CHECK_CONDITION 0x02
#define NOT_READY 0x2
#define MEDIUM_ERROR 0x3
#define ILLEGAL_REQUEST 0x5

static void put_be16(uint8_t *p, unsigned v) {
        p[0] = (uint8_t) (v >> 8);
        p[1] = (uint8_t) v;
}

static void put_be32(uint8_t *p, uint32_t v) {
        put_be16(p, v >> 16);
        put_be16(p + 2, v & 0xffff);
}

static unsigned get_be16(const uint8_t *p) {
        return (unsigned) p[0] << 8 | p[1];
}

/* Sense data (SPC-4 4.5): descriptor format (4.5.2) or fixed format (4.5.3); sks >= 0: a
 * progress indication in the sense key specific field. Returns CHECK CONDITION. */
int sim_scsi_sense(uint8_t *s, unsigned *len, int key, int asc, int ascq, bool desc, int sks) {
        memset(s, 0, 32);
        if (desc) {
                s[0] = 0x72;
                s[1] = (uint8_t) key;
                s[2] = (uint8_t) asc;
                s[3] = (uint8_t) ascq;
                *len = 8;
                if (sks >= 0) {
                        /* Sense key specific sense data descriptor (4.5.2.5) */
                        uint8_t *p = s + 8;

                        p[0] = 0x02;
                        p[1] = 0x06;
                        p[4] = 0x80;    /* SKSV */
                        put_be16(p + 5, (unsigned) sks);
                        *len += 8;
                }
                s[7] = (uint8_t) (*len - 8);
        } else {
                s[0] = 0x70;
                s[2] = (uint8_t) key;
                s[7] = 10;
                s[12] = (uint8_t) asc;
                s[13] = (uint8_t) ascq;
                if (sks >= 0) {
                        s[15] = 0x80;
                        put_be16(s + 16, (unsigned) sks);
                }
                *len = 18;
        }
        return CHECK_CONDITION;
}

/* Standard INQUIRY data (SPC-4 6.6.2) and the VPD pages of both kinds of drive. */
static int inquiry(struct sim_drive *d, const uint8_t *cdb, uint8_t *buf, unsigned *n, uint8_t *sense,
                   unsigned *sense_len) {
        const struct sim_conf *c = d->conf;
        bool ata = c->type == SIM_ATA;

        memset(buf, 0, 600);
        if (!(cdb[1] & 1)) {
                if (cdb[2])
                        return sim_scsi_sense(sense, sense_len, ILLEGAL_REQUEST, 0x24, 0, false, -1);
                buf[0] = 0x00;          /* direct access block device */
                buf[2] = 0x06;          /* SPC-4 */
                buf[3] = 0x02;          /* response data format 2 */
                buf[4] = 96 - 5;
                /* libata names an ATA drive's vendor "ATA" and puts the model in the product */
                sim_copy_string(buf + 8, 8, ata ? "ATA" : c->vendor);
                sim_copy_string(buf + 16, 16, c->model);
                sim_copy_string(buf + 32, 4, c->firmware);
                *n = 96;
                return GOOD;
        }
        buf[1] = cdb[2];
        switch (cdb[2]) {
        case 0x00:
                /* Supported VPD Pages (7.8.14) */
                buf[4] = 0x00;
                buf[5] = 0x80;
                buf[6] = ata ? 0x89 : 0xb1;
                put_be16(buf + 2, 3);
                *n = 7;
                return GOOD;
        case 0x80:
                /* Unit Serial Number (7.8.15) */
                put_be16(buf + 2, 20);
                sim_copy_string(buf + 4, 20, c->serial);
                *n = 24;
                return GOOD;
        case 0x89:
                if (!ata)
                        break;
                sim_ata_vpd89(d, buf);
                *n = 572;
                return GOOD;
        case 0xb1:
                if (ata)
                        break;
                /* Block Device Characteristics (SBC-3 6.6.2): non-rotating medium */
                put_be16(buf + 2, 0x3c);
                put_be16(buf + 4, 1);
                *n = 64;
                return GOOD;
        }
        return sim_scsi_sense(sense, sense_len, ILLEGAL_REQUEST, 0x24, 0, false, -1);
}

/* One REPORT SUPPORTED OPERATION CODES command descriptor (SPC-4 6.35.3). */
struct rsoc_cmd {
        uint8_t op;
        uint16_t sa;
        bool has_sa;
        uint8_t cdb_len;
        bool supported;
};

static size_t rsoc_table(const struct sim_conf *c, struct rsoc_cmd *t) {
        size_t n = 0;
        bool any = c->sanitize != 0;

        t[n++] = (struct rsoc_cmd) { 0x00, 0, false, 6, true };    /* TEST UNIT READY */
        t[n++] = (struct rsoc_cmd) { 0x03, 0, false, 6, true };    /* REQUEST SENSE */
        t[n++] = (struct rsoc_cmd) { 0x04, 0, false, 6, c->format_unit }; /* FORMAT UNIT */
        t[n++] = (struct rsoc_cmd) { 0x12, 0, false, 6, true };    /* INQUIRY */
        t[n++] = (struct rsoc_cmd) { 0x48, 1, true, 10, (c->sanitize & SIM_SAN_OVERWRITE) != 0 };
        t[n++] = (struct rsoc_cmd) { 0x48, 2, true, 10, (c->sanitize & SIM_SAN_BLOCK) != 0 };
        t[n++] = (struct rsoc_cmd) { 0x48, 3, true, 10, (c->sanitize & SIM_SAN_CRYPTO) != 0 };
        t[n++] = (struct rsoc_cmd) { 0x48, 0x1f, true, 10, any };  /* EXIT FAILURE MODE */
        t[n++] = (struct rsoc_cmd) { 0x9e, 0x10, true, 16, true }; /* READ CAPACITY (16) */
        t[n++] = (struct rsoc_cmd) { 0xa3, 0x0c, true, 12, true }; /* REPORT SUPPORTED OPERATION CODES */
        return n;
}

static int rsoc(struct sim_drive *d, const uint8_t *cdb, uint8_t *buf, unsigned *n, uint8_t *sense,
                unsigned *sense_len) {
        struct rsoc_cmd t[16];
        size_t nt = rsoc_table(d->conf, t), i;
        unsigned options = cdb[2] & 7, op = cdb[3], sa = get_be16(cdb + 4);

        if (!d->conf->rsoc)
                return sim_scsi_sense(sense, sense_len, ILLEGAL_REQUEST, 0x20, 0, false, -1);
        memset(buf, 0, 4096);
        if (options == 0) {
                /* All commands (6.35.3): a 4-byte header and 8-byte descriptors */
                unsigned len = 0;

                for (i = 0; i < nt; i++) {
                        uint8_t *p = buf + 4 + len;

                        if (!t[i].supported)
                                continue;
                        p[0] = t[i].op;
                        put_be16(p + 2, t[i].sa);
                        p[5] = t[i].has_sa ? 1 : 0;     /* SERVACTV */
                        put_be16(p + 6, t[i].cdb_len);
                        len += 8;
                }
                put_be32(buf, len);
                *n = 4 + len;
                return GOOD;
        }
        if (options != 1 && options != 2)
                return sim_scsi_sense(sense, sense_len, ILLEGAL_REQUEST, 0x24, 0, false, -1);
        /* One command (6.35.4): SUPPORT 001b not supported, 011b supported as the standard says.
         * Option 001b for a command with service actions, or 010b for one without: INVALID FIELD
         * IN CDB. */
        for (i = 0; i < nt; i++) {
                if (t[i].op != op)
                        continue;
                if (options == 1 && t[i].has_sa)
                        return sim_scsi_sense(sense, sense_len, ILLEGAL_REQUEST, 0x24, 0, false, -1);
                if (options == 2 && !t[i].has_sa)
                        return sim_scsi_sense(sense, sense_len, ILLEGAL_REQUEST, 0x24, 0, false, -1);
                if (options == 2 && t[i].sa != sa)
                        continue;
                break;
        }
        if (i == nt || !t[i].supported) {
                buf[1] = 1;
                *n = 4;
                return GOOD;
        }
        buf[1] = 3;
        put_be16(buf + 2, t[i].cdb_len);
        /* CDB usage data: the opcode, then the bits a command may use (all of them here) */
        buf[4] = t[i].op;
        memset(buf + 5, 0xff, t[i].cdb_len - 1u);
        if (t[i].has_sa)
                buf[5] = (uint8_t) (0xe0 | t[i].sa);
        *n = 4 + t[i].cdb_len;
        return GOOD;
}

/* SANITIZE (SBC-3 5.30): IMMED bit 7 and AUSE bit 5 of byte 1, service action bits 4:0,
 * parameter list length bytes 7..8 (the overwrite parameters, 5.30.2.2). */
static int sanitize(struct sim_drive *d, const uint8_t *cdb, const uint8_t *data, unsigned len, uint8_t *sense,
                    unsigned *sense_len) {
        const struct sim_conf *c = d->conf;
        struct sim_state *s = &d->st;
        unsigned sa = cdb[1] & 0x1f, plen = get_be16(cdb + 7), bit;
        bool immed = cdb[1] & 0x80;

        switch (sa) {
        case 0x01:
                bit = SIM_SAN_OVERWRITE;
                break;
        case 0x02:
                bit = SIM_SAN_BLOCK;
                break;
        case 0x03:
                bit = SIM_SAN_CRYPTO;
                break;
        case 0x1f:
                /* EXIT FAILURE MODE: only after a sanitize that failed with AUSE set (5.30.1) */
                if (!c->sanitize || (s->san_failure_mode && !s->san_exit_allowed))
                        return sim_scsi_sense(sense, sense_len, ILLEGAL_REQUEST, 0x24, 0, false, -1);
                s->san_failure_mode = false;
                d->dirty = true;
                return GOOD;
        default:
                return sim_scsi_sense(sense, sense_len, ILLEGAL_REQUEST, 0x24, 0, false, -1);
        }
        if (!(c->sanitize & bit))
                return sim_scsi_sense(sense, sense_len, ILLEGAL_REQUEST, 0x24, 0, false, -1);
        s->op_passes = 1;
        s->op_invert = false;
        if (bit == SIM_SAN_OVERWRITE) {
                unsigned plen2;

                /* Parameter list: INVERT bit 7 and OVERWRITE COUNT bits 4:0 of byte 0, the
                 * pattern length in bytes 2..3, the pattern from byte 4 */
                if (plen < 5 || len < plen)
                        return sim_scsi_sense(sense, sense_len, ILLEGAL_REQUEST, 0x24, 0, false, -1);
                plen2 = get_be16(data + 2);
                if (plen2 == 0 || plen2 > 512 || plen2 + 4 != plen || (data[0] & 0x1f) == 0)
                        return sim_scsi_sense(sense, sense_len, ILLEGAL_REQUEST, 0x26, 0, false, -1);
                s->op_invert = data[0] & 0x80;
                s->op_passes = data[0] & 0x1f;
                memcpy(s->op_pattern, data + 4, plen2);
                s->op_pattern_len = plen2;
                s->op_fill = SIM_FILL_PATTERN;
        } else if (plen) {
                return sim_scsi_sense(sense, sense_len, ILLEGAL_REQUEST, 0x24, 0, false, -1);
        } else if (bit == SIM_SAN_BLOCK) {
                s->op_fill = SIM_FILL_PATTERN;
                s->op_pattern[0] = (uint8_t) c->erase_pattern;
                s->op_pattern_len = 1;
        } else {
                s->op_fill = SIM_FILL_RANDOM;
        }
        s->op_action = (int) sa;
        s->op_ause = cdb[1] & 0x20;
        s->op_fail = c->sanitize_fail;
        s->op_stuck = c->sanitize_stuck;
        s->san_passes_done = 0;
        sim_start(d, SIM_OP_SANITIZE, c->sanitize_seconds);
        if (!immed) {
                /* Without IMMED the command completes when the sanitize does. */
                sim_wait(d);
                if (d->st.san_failure_mode)
                        return sim_scsi_sense(sense, sense_len, MEDIUM_ERROR, 0x31, 0x03, false, -1);
        }
        return GOOD;
}

/* FORMAT UNIT (SBC-3 5.3) without a parameter list: the medium is initialized (the drive's erase
 * pattern). With IMMED and FMTDATA the drive would return at once; here it runs to its end. */
static int format_unit(struct sim_drive *d, const uint8_t *cdb, uint8_t *sense, unsigned *sense_len) {
        struct sim_state *s = &d->st;

        if (!d->conf->format_unit)
                return sim_scsi_sense(sense, sense_len, ILLEGAL_REQUEST, 0x20, 0, false, -1);
        s->op_fill = SIM_FILL_PATTERN;
        s->op_pattern[0] = (uint8_t) d->conf->erase_pattern;
        s->op_pattern_len = 1;
        s->op_passes = 1;
        s->op_invert = s->op_fail = s->op_stuck = false;
        sim_start(d, SIM_OP_FORMAT, d->conf->format_seconds);
        sim_wait(d);
        return GOOD;
}

/* The answer to a command while the drive cannot take it: sanitize running or failed. */
static int not_ready(struct sim_drive *d, uint8_t *sense, unsigned *sense_len, bool desc) {
        if (d->st.op == SIM_OP_SANITIZE)
                return sim_scsi_sense(sense, sense_len, NOT_READY, 0x04, 0x1b, desc, (int) sim_progress(d));
        if (d->st.op == SIM_OP_FORMAT)
                return sim_scsi_sense(sense, sense_len, NOT_READY, 0x04, 0x04, desc, (int) sim_progress(d));
        return sim_scsi_sense(sense, sense_len, MEDIUM_ERROR, 0x31, 0x03, desc, -1);
}

static int scsi_command(struct sim_drive *d, const uint8_t *cdb, unsigned cdb_len, uint8_t *data, unsigned len,
                        unsigned *n, uint8_t *sense, unsigned *sense_len) {
        const struct sim_conf *c = d->conf;
        bool blocked = d->st.op == SIM_OP_SANITIZE || d->st.san_failure_mode;

        switch (cdb[0]) {
        case 0x12:
                return inquiry(d, cdb, data, n, sense, sense_len);
        case 0x03: {
                /* REQUEST SENSE: GOOD, with the sense data in the data-in buffer; DESC bit 0 */
                uint8_t s[32];
                unsigned sl = 0;

                if (blocked || d->st.op == SIM_OP_FORMAT)
                        not_ready(d, s, &sl, cdb[1] & 1);
                else
                        sim_scsi_sense(s, &sl, 0, 0, 0, cdb[1] & 1, -1);
                memcpy(data, s, sl);
                *n = sl;
                return GOOD;
        }
        }
        if (c->type == SIM_ATA) {
                if (cdb[0] == 0x00)
                        return GOOD;
                return sim_scsi_sense(sense, sense_len, ILLEGAL_REQUEST, 0x20, 0, false, -1);
        }
        if (cdb[0] == 0x48 && d->st.op != SIM_OP_SANITIZE)
                return sanitize(d, cdb, data, len, sense, sense_len);
        if (blocked || d->st.op == SIM_OP_FORMAT)
                return not_ready(d, sense, sense_len, false);
        switch (cdb[0]) {
        case 0x00:
                return GOOD;
        case 0x04:
                return format_unit(d, cdb, sense, sense_len);
        case 0xa3:
                if ((cdb[1] & 0x1f) == 0x0c)
                        return rsoc(d, cdb, data, n, sense, sense_len);
                break;
        case 0x9e:
                if ((cdb[1] & 0x1f) == 0x10) {
                        /* READ CAPACITY (16): the last LBA and the block length */
                        uint64_t last = c->bytes / 512 - 1;

                        memset(data, 0, 32);
                        put_be32(data, (uint32_t) (last >> 32));
                        put_be32(data + 4, (uint32_t) last);
                        put_be32(data + 8, 512);
                        *n = 32;
                        return GOOD;
                }
                break;
        }
        (void) cdb_len;
        return sim_scsi_sense(sense, sense_len, ILLEGAL_REQUEST, 0x20, 0, false, -1);
}

int sim_sg_io(struct sim_drive *d, void *arg) {
        sg_io_hdr_t *h = arg;
        uint8_t cdb[16], buf[4096], sense[32];
        unsigned n = 0, sense_len = 0, len;
        int status;

        if (h->interface_id != 'S' || h->cmd_len < 6 || h->cmd_len > 16 || h->iovec_count) {
                errno = EINVAL;
                return -1;
        }
        memcpy(cdb, h->cmdp, h->cmd_len);
        len = h->dxfer_len < sizeof buf ? h->dxfer_len : sizeof buf;
        memset(buf, 0, sizeof buf);
        if (h->dxfer_direction == SG_DXFER_TO_DEV && len)
                memcpy(buf, h->dxferp, len);
        sim_settle(d);
        if (d->conf->type == SIM_ATA && (cdb[0] == 0x85 || cdb[0] == 0xa1)) {
                n = len;
                status = sim_ata_command(d, cdb, buf, len, h->dxfer_direction == SG_DXFER_TO_DEV ? 1 :
                                         h->dxfer_direction == SG_DXFER_FROM_DEV ? -1 : 0, sense, &sense_len);
        } else {
                status = scsi_command(d, cdb, h->cmd_len, buf, len, &n, sense, &sense_len);
        }
        if (h->dxfer_direction == SG_DXFER_FROM_DEV && h->dxfer_len) {
                unsigned m = n < h->dxfer_len ? n : h->dxfer_len;

                memcpy(h->dxferp, buf, m);
                h->resid = (int) (h->dxfer_len - m);
        } else {
                h->resid = 0;
        }
        h->status = (unsigned char) status;
        h->masked_status = (unsigned char) (status >> 1);
        h->msg_status = 0;
        h->host_status = 0;
        h->sb_len_wr = 0;
        h->driver_status = 0;
        h->info = status ? SG_INFO_CHECK : 0;
        h->duration = 1;
        if (status == CHECK_CONDITION && sense_len) {
                unsigned m = sense_len < h->mx_sb_len ? sense_len : h->mx_sb_len;

                if (h->sbp && m)
                        memcpy(h->sbp, sense, m);
                h->sb_len_wr = (unsigned char) m;
                h->driver_status = 0x08;        /* DRIVER_SENSE */
        }
        return 0;
}
