/* The SCSI firmware module (daemon/fw-scsi.c) without a device: its CDBs byte for byte, the
 * Supported VPD Pages page, REPORT SUPPORTED OPERATION CODES answers (one command and the whole
 * list), sense data in both formats with and without a progress indication, the JSON; then
 * fw_scsi_is_ata() and fw_scsi_probe() against a scripted device: fw_sg_io() is wrapped
 * (-Wl,--wrap=fw_sg_io), the wrapper checks that every command sent only reads and answers as
 * the device of the test would. Then the commands that erase, fw_scsi_sanitize_start() and
 * fw_scsi_sanitize_status(), against a device scripted answer by answer (fake.erase), which
 * records what was sent. Linked with the daemon's library. */
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

#include "daemon.h"
#include "firmware.h"
#include "fw-scsi.h"

/* The scripted device. */
struct fake {
        bool on;                        /* off: the real fw_sg_io() */
        int err;                        /* the ioctl fails: -errno */
        bool descriptor_sense;          /* sense data in the descriptor format, else fixed */
        bool no_vpd;                    /* INQUIRY of a VPD page: ILLEGAL REQUEST */
        bool ata;                       /* page 89h listed */
        bool rsoc_refused;              /* REPORT SUPPORTED OPERATION CODES: INVALID COMMAND OPERATION CODE */
        bool rsoc_invalid_field;        /* ... refused as INVALID FIELD IN CDB (other MAINTENANCE IN are known) */
        bool one_refused;               /* reporting options 001b and 010b: INVALID FIELD IN CDB */
        bool ignores_option;            /* answers every reporting option with the whole list */
        bool format;                    /* FORMAT UNIT supported */
        unsigned sanitize;              /* bit n: SANITIZE service action n supported */
        int unit_attentions;            /* the next commands answered UNIT ATTENTION */
        int progress;                   /* >= 0: a sanitize in progress, NOT READY with this progress */
        unsigned calls;
        /* fake.erase: SANITIZE and REQUEST SENSE allowed; each command takes the next answer and
         * is recorded in sent[]. */
        bool erase;
        struct answer {
                int err;                /* the ioctl fails: -errno */
                int status;
                uint8_t sense[32];      /* into the sense buffer */
                size_t sense_len;
                uint8_t data[64];       /* data in */
                size_t data_len;
        } answers[4];
        unsigned n_answers;
        struct sent {
                uint8_t cdb[16];
                size_t cdb_len;
                uint8_t data[64];       /* data out (dir > 0) */
                size_t len;
                int dir;
        } sent[4];
};
static struct fake fake;

int __real_fw_sg_io(int fd, const uint8_t *cdb, size_t cdb_len, void *data, size_t len, int dir, uint8_t *sense,
                    size_t sense_len, size_t *sense_got, unsigned timeout_ms, int *status, size_t *resid);
int __wrap_fw_sg_io(int fd, const uint8_t *cdb, size_t cdb_len, void *data, size_t len, int dir, uint8_t *sense,
                    size_t sense_len, size_t *sense_got, unsigned timeout_ms, int *status, size_t *resid);

/* Sense data of key/asc/ascq in the fake's format, with progress when >= 0. */
static void fake_sense(uint8_t *sense, size_t sense_len, size_t *sense_got, uint8_t key, uint8_t asc, uint8_t ascq,
                       int progress) {
        uint8_t s[32] = {0};
        size_t n;

        if (fake.descriptor_sense) {
                s[0] = 0x72, s[1] = key, s[2] = asc, s[3] = ascq;
                n = 8;
                if (progress >= 0) {
                        uint8_t d[8] = { 0x02, 0x06, 0, 0, 0x80, (uint8_t) (progress >> 8), (uint8_t) progress, 0 };
                        memcpy(s + 8, d, 8);
                        n += 8;
                }
                s[7] = (uint8_t) (n - 8);
        } else {
                s[0] = 0x70, s[2] = key, s[7] = 10, s[12] = asc, s[13] = ascq;
                if (progress >= 0)
                        s[15] = 0x80, s[16] = (uint8_t) (progress >> 8), s[17] = (uint8_t) progress;
                n = 18;
        }
        n = n < sense_len ? n : sense_len;
        memcpy(sense, s, n);
        *sense_got = n;
}

/* The whole list (reporting option 000b) into out: INQUIRY, READ(10), what the fake supports. */
static size_t fake_list(uint8_t *out, size_t len) {
        uint8_t l[256] = {0};
        size_t n = 4;

        l[n] = 0x12, l[n + 7] = 6, n += 8;
        l[n] = 0x28, l[n + 7] = 10, n += 8;
        if (fake.format)
                l[n] = 0x04, l[n + 7] = 6, n += 8;
        for (unsigned sa = 0; sa < 32; sa++)
                if (fake.sanitize & (1u << sa)) {
                        l[n] = 0x48, l[n + 3] = (uint8_t) sa, l[n + 5] = 0x01, l[n + 7] = 10;
                        n += 8;
                }
        l[3] = (uint8_t) (n - 4);
        n = n < len ? n : len;
        memcpy(out, l, n);
        return n;
}

/* The next scripted answer to a SANITIZE or REQUEST SENSE (fake.erase), recording the command. */
static int fake_erase(const uint8_t *cdb, size_t cdb_len, void *data, size_t len, int dir, uint8_t *sense,
                      size_t sense_len, size_t *sense_got, unsigned timeout_ms, int *status, size_t *resid) {
        unsigned i = fake.calls - 1;
        const struct answer *a;
        struct sent *w;

        assert_true(i < fake.n_answers);
        a = &fake.answers[i];
        w = &fake.sent[i];
        assert_true(cdb[0] == 0x48 || cdb[0] == 0x03);
        assert_true(timeout_ms > 0);
        assert_true(cdb_len <= sizeof(w->cdb) && (dir <= 0 || len <= sizeof(w->data)));
        memcpy(w->cdb, cdb, cdb_len);
        w->cdb_len = cdb_len;
        w->len = len;
        w->dir = dir;
        if (dir > 0)
                memcpy(w->data, data, len);
        else
                assert_true(len == 0 || dir < 0);
        if (a->err)
                return a->err;
        *status = a->status;
        assert_true(a->sense_len <= sense_len);
        memcpy(sense, a->sense, a->sense_len);
        *sense_got = a->sense_len;
        if (dir < 0) {
                assert_true(a->data_len <= len);
                memset(data, 0xee, len);
                memcpy(data, a->data, a->data_len);
                *resid = len - a->data_len;
        } else {
                *resid = 0;
        }
        return 0;
}

int __wrap_fw_sg_io(int fd, const uint8_t *cdb, size_t cdb_len, void *data, size_t len, int dir, uint8_t *sense,
                    size_t sense_len, size_t *sense_got, unsigned timeout_ms, int *status, size_t *resid) {
        uint8_t *out = data;
        size_t n = 0;

        if (!fake.on)
                return __real_fw_sg_io(fd, cdb, cdb_len, data, len, dir, sense, sense_len, sense_got, timeout_ms,
                                       status, resid);
        fake.calls++;
        if (fake.erase)
                return fake_erase(cdb, cdb_len, data, len, dir, sense, sense_len, sense_got, timeout_ms, status,
                                  resid);
        /* Only commands that read: INQUIRY, REPORT SUPPORTED OPERATION CODES, data in. */
        assert_true(dir < 0);
        assert_true(timeout_ms > 0);
        assert_true(cdb[0] == 0x12 || (cdb[0] == 0xa3 && cdb[1] == 0x0c));
        assert_int_equal(cdb_len, cdb[0] == 0x12 ? 6 : 12);
        if (fake.err)
                return fake.err;
        *sense_got = 0;
        *status = 0x02;
        memset(data, 0xee, len);        /* what the device does not write is not to be read */
        if (fake.unit_attentions > 0) {
                fake.unit_attentions--;
                fake_sense(sense, sense_len, sense_got, 0x6, 0x29, 0x00, -1);
        } else if (fake.progress >= 0 && cdb[0] != 0x12) {
                fake_sense(sense, sense_len, sense_got, 0x2, 0x04, 0x1b, fake.progress);
        } else if (cdb[0] == 0x12) {
                uint8_t page[16] = { 0x00, 0x00, 0x00, 0, 0x00, 0x80, 0x83 };

                assert_int_equal(cdb[1], 0x01);
                assert_int_equal(cdb[2], 0x00);
                if (fake.no_vpd) {
                        fake_sense(sense, sense_len, sense_got, 0x5, 0x24, 0x00, -1);
                } else {
                        n = 7;
                        if (fake.ata)
                                page[n++] = 0x89;
                        page[3] = (uint8_t) (n - 4);
                        memcpy(out, page, n);
                        *status = 0;
                }
        } else if (fake.rsoc_refused) {
                fake_sense(sense, sense_len, sense_got, 0x5, 0x20, 0x00, -1);
        } else if (fake.rsoc_invalid_field) {
                fake_sense(sense, sense_len, sense_got, 0x5, 0x24, 0x00, -1);
        } else if ((cdb[2] & 7) == 0 || fake.ignores_option) {
                n = fake_list(out, len);
                *status = 0;
        } else if (fake.one_refused) {
                fake_sense(sense, sense_len, sense_got, 0x5, 0x24, 0x00, -1);
        } else {
                bool sup = cdb[3] == 0x04 ? fake.format : cdb[3] == 0x48 && (fake.sanitize & (1u << cdb[5]));

                assert_int_equal(cdb[2], cdb[3] == 0x48 ? 2 : 1);
                out[0] = 0;
                out[1] = sup ? (cdb[5] == 0x03 ? 5 : 3) : 1;
                out[2] = 0, out[3] = cdb[3] == 0x48 ? 10 : 6;
                out[4] = cdb[3];
                n = 4 + out[3];
                *status = 0;
        }
        *resid = len - n;
        return 0;
}

static void cdb_is(const uint8_t *got, const uint8_t *want, size_t n) {
        assert_memory_equal(got, want, n);
}

static void test_cdbs(void **state) {
        uint8_t cdb[12];

        (void) state;
        fw_scsi_cdb_inquiry(cdb, true, 0x00, 252);
        cdb_is(cdb, (const uint8_t[]) { 0x12, 0x01, 0x00, 0x00, 0xfc, 0x00 }, 6);
        fw_scsi_cdb_inquiry(cdb, true, 0x89, 572);
        cdb_is(cdb, (const uint8_t[]) { 0x12, 0x01, 0x89, 0x02, 0x3c, 0x00 }, 6);
        /* The standard data: no page code even when one is given. */
        fw_scsi_cdb_inquiry(cdb, false, 0x89, 36);
        cdb_is(cdb, (const uint8_t[]) { 0x12, 0x00, 0x00, 0x00, 0x24, 0x00 }, 6);

        memset(cdb, 0xff, sizeof(cdb));
        fw_scsi_cdb_rsoc(cdb, FW_SCSI_RSOC_ONE, FW_SCSI_FORMAT_UNIT, 0x1234, 64);
        cdb_is(cdb, (const uint8_t[]) { 0xa3, 0x0c, 0x01, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00 }, 12);
        fw_scsi_cdb_rsoc(cdb, FW_SCSI_RSOC_ONE_SA, FW_SCSI_SANITIZE, FW_SCSI_SANITIZE_OVERWRITE, 64);
        cdb_is(cdb, (const uint8_t[]) { 0xa3, 0x0c, 0x02, 0x48, 0x00, 0x01, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00 }, 12);
        fw_scsi_cdb_rsoc(cdb, FW_SCSI_RSOC_ONE_SA, FW_SCSI_SANITIZE, FW_SCSI_SANITIZE_BLOCK_ERASE, 64);
        cdb_is(cdb, (const uint8_t[]) { 0xa3, 0x0c, 0x02, 0x48, 0x00, 0x02, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00 }, 12);
        fw_scsi_cdb_rsoc(cdb, FW_SCSI_RSOC_ONE_SA, FW_SCSI_SANITIZE, FW_SCSI_SANITIZE_CRYPTO_ERASE, 64);
        cdb_is(cdb, (const uint8_t[]) { 0xa3, 0x0c, 0x02, 0x48, 0x00, 0x03, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00 }, 12);
        fw_scsi_cdb_rsoc(cdb, FW_SCSI_RSOC_ONE_SA, FW_SCSI_SANITIZE, FW_SCSI_SANITIZE_EXIT_FAILURE, 64);
        cdb_is(cdb, (const uint8_t[]) { 0xa3, 0x0c, 0x02, 0x48, 0x00, 0x1f, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00 }, 12);
        /* The whole list: no operation code nor service action; a 4-byte allocation length. */
        fw_scsi_cdb_rsoc(cdb, FW_SCSI_RSOC_ALL, 0x48, 3, 0x12345678);
        cdb_is(cdb, (const uint8_t[]) { 0xa3, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x12, 0x34, 0x56, 0x78, 0x00, 0x00 }, 12);
}

static void test_vpd(void **state) {
        const uint8_t sata[] = { 0x00, 0x00, 0x00, 0x07, 0x00, 0x80, 0x83, 0x89, 0xb0, 0xb1, 0xb2 };
        const uint8_t sas[] = { 0x00, 0x00, 0x00, 0x05, 0x00, 0x80, 0x83, 0x86, 0x87, 0x00, 0x00 };
        const uint8_t other[] = { 0x00, 0x83, 0x00, 0x02, 0x00, 0x89 };

        (void) state;
        assert_int_equal(fw_scsi_vpd_lists(sata, sizeof(sata), 0x89), 1);
        assert_int_equal(fw_scsi_vpd_lists(sata, sizeof(sata), 0x00), 1);
        assert_int_equal(fw_scsi_vpd_lists(sas, sizeof(sas), 0x89), 0);
        /* Only the bytes received count, and only the page length of them. */
        assert_int_equal(fw_scsi_vpd_lists(sata, 7, 0x89), 0);
        assert_int_equal(fw_scsi_vpd_lists((const uint8_t[]) { 0, 0, 0, 2, 0x00, 0x80, 0x89 }, 7, 0x89), 0);
        assert_int_equal(fw_scsi_vpd_lists(sata, 4, 0x89), 0);
        /* Not the Supported VPD Pages page, or too short for one. */
        assert_int_equal(fw_scsi_vpd_lists(other, sizeof(other), 0x89), -EBADMSG);
        assert_int_equal(fw_scsi_vpd_lists(sata, 3, 0x89), -EBADMSG);
        assert_int_equal(fw_scsi_vpd_lists(sata, 0, 0x89), -EBADMSG);
}

static void test_rsoc_one(void **state) {
        /* SANITIZE supported as a standard says: CDB size 10, usage data from the opcode. */
        const uint8_t std[] = { 0x00, 0x03, 0x00, 0x0a, 0x48, 0x1f, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0x07 };
        const uint8_t vendor[] = { 0x00, 0x05, 0x00, 0x06, 0x04, 0xff, 0x00, 0x00, 0x00, 0x07 };
        /* Supported, with command timeouts (CTDP) and bits of SPC-5's byte 1 set. */
        const uint8_t ctdp[] = { 0x00, 0x83 | 0x18, 0x00, 0x06, 0x04, 0xff, 0x00, 0x00, 0x00, 0x07,
                                 0x00, 0x0a, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
        const uint8_t unsupported[] = { 0x00, 0x01, 0xee, 0xee, 0xee, 0xee };
        const uint8_t unknown[] = { 0x00, 0x00, 0xee, 0xee };
        /* The all-commands list where one command was asked. */
        const uint8_t list[] = { 0x00, 0x00, 0x00, 0x10, 0x12, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x06 };

        (void) state;
        assert_int_equal(fw_scsi_rsoc_one(std, sizeof(std), 0x48), 3);
        assert_true(fw_scsi_rsoc_support_ok(3));
        assert_int_equal(fw_scsi_rsoc_one(vendor, sizeof(vendor), 0x04), 5);
        assert_true(fw_scsi_rsoc_support_ok(5));
        assert_int_equal(fw_scsi_rsoc_one(ctdp, sizeof(ctdp), 0x04), 3);
        assert_int_equal(fw_scsi_rsoc_one(unsupported, sizeof(unsupported), 0x48), 1);
        assert_false(fw_scsi_rsoc_support_ok(1));
        assert_int_equal(fw_scsi_rsoc_one(unknown, 2, 0x48), 0);
        assert_false(fw_scsi_rsoc_support_ok(0));
        for (int s = 0; s < 8; s++)
                assert_int_equal(fw_scsi_rsoc_support_ok(s), s == 3 || s == 5);
        /* The whole list reads as SUPPORT 000b (its length's high bytes): fw_scsi_probe() then
         * reads a list. */
        assert_int_equal(fw_scsi_rsoc_one(list, sizeof(list), 0x04), 0);
        /* Usage data of another command, or none. */
        assert_int_equal(fw_scsi_rsoc_one(std, sizeof(std), 0x04), -EBADMSG);
        assert_int_equal(fw_scsi_rsoc_one((const uint8_t[]) { 0x00, 0x03, 0x00, 0x00 }, 4, 0x04), -EBADMSG);
        assert_int_equal(fw_scsi_rsoc_one(std, 3, 0x48), -EBADMSG);
        assert_int_equal(fw_scsi_rsoc_one(std, 1, 0x48), -EBADMSG);
        assert_int_equal(fw_scsi_rsoc_one(std, 0, 0x48), -EBADMSG);
}

static void test_rsoc_all(void **state) {
        /* INQUIRY; FORMAT UNIT with command timeouts (CTDP); SANITIZE 01h and 03h (SERVACTV);
         * a service action 02h of another command. */
        const uint8_t l[] = {
                0x00, 0x00, 0x00, 0x34,
                0x12, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x06,
                0x04, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x06,
                0x00, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3c, 0x00, 0x00, 0x0e, 0x10,
                0x48, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x0a,
                0x48, 0x00, 0x00, 0x03, 0x00, 0x01, 0x00, 0x0a,
                0x9e, 0x00, 0x00, 0x02, 0x00, 0x01, 0x00, 0x10,
        };
        /* SANITIZE listed without SERVACTV: which service actions is not said. */
        const uint8_t nosa[] = { 0x00, 0x00, 0x00, 0x08, 0x48, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x0a };

        (void) state;
        assert_int_equal(fw_scsi_rsoc_all_find(l, sizeof(l), 0x12, false, 0), 1);
        assert_int_equal(fw_scsi_rsoc_all_find(l, sizeof(l), 0x04, false, 0), 1);
        assert_int_equal(fw_scsi_rsoc_all_find(l, sizeof(l), 0x48, true, 0x01), 1);
        assert_int_equal(fw_scsi_rsoc_all_find(l, sizeof(l), 0x48, true, 0x02), 0);
        assert_int_equal(fw_scsi_rsoc_all_find(l, sizeof(l), 0x48, true, 0x03), 1);
        assert_int_equal(fw_scsi_rsoc_all_find(l, sizeof(l), 0x48, true, 0x1f), 0);
        assert_int_equal(fw_scsi_rsoc_all_find(l, sizeof(l), 0x28, false, 0), 0);
        /* The timeouts descriptor's bytes are not read as a command (its 0x3c, 0x0e...). */
        assert_int_equal(fw_scsi_rsoc_all_find(l, sizeof(l), 0x3c, false, 0), 0);
        assert_int_equal(fw_scsi_rsoc_all_find(nosa, sizeof(nosa), 0x48, true, 0x02), 0);
        assert_int_equal(fw_scsi_rsoc_all_find(nosa, sizeof(nosa), 0x48, false, 0), 1);
        /* Cut short: what is there is found; what is not, unknown. */
        assert_int_equal(fw_scsi_rsoc_all_find(l, 40, 0x48, true, 0x01), 1);
        assert_int_equal(fw_scsi_rsoc_all_find(l, 40, 0x48, true, 0x03), -EMSGSIZE);
        assert_int_equal(fw_scsi_rsoc_all_find(l, 4, 0x04, false, 0), -EMSGSIZE);
        /* An empty list; no header. */
        assert_int_equal(fw_scsi_rsoc_all_find((const uint8_t[]) { 0, 0, 0, 0 }, 4, 0x04, false, 0), 0);
        assert_int_equal(fw_scsi_rsoc_all_find(l, 3, 0x04, false, 0), -EBADMSG);
}

static void test_sense_fixed(void **state) {
        /* NOT READY, LOGICAL UNIT NOT READY, SANITIZE IN PROGRESS; SKSV, progress 8000h. */
        uint8_t san[18] = { 0x70, 0x00, 0x02, 0, 0, 0, 0, 0x0a, 0, 0, 0, 0, 0x04, 0x1b, 0x00, 0x80, 0x80, 0x00 };
        /* ILLEGAL REQUEST, INVALID FIELD IN CDB, SKSV with a field pointer (C/D, byte 1). */
        const uint8_t ill[18] = { 0xf0, 0x00, 0x05, 0, 0, 0, 0, 0x0a, 0, 0, 0, 0, 0x24, 0x00, 0x00, 0xc0, 0x00, 0x01 };
        struct fw_scsi_sense s;

        (void) state;
        assert_int_equal(fw_scsi_sense_decode(san, sizeof(san), &s), 0);
        assert_int_equal(s.response_code, 0x70);
        assert_int_equal(s.key, FW_SCSI_SK_NOT_READY);
        assert_int_equal(s.asc, 0x04);
        assert_int_equal(s.ascq, 0x1b);
        assert_int_equal(s.progress, 32768);
        assert_true(fw_scsi_sense_sanitizing(&s));
        assert_int_equal(fw_scsi_sense_progress(san, sizeof(san)), 32768);
        san[16] = 0xff, san[17] = 0xff;
        assert_int_equal(fw_scsi_sense_progress(san, sizeof(san)), 65535);
        /* Deferred (71h) as well. */
        san[0] = 0x71;
        assert_int_equal(fw_scsi_sense_progress(san, sizeof(san)), 65535);
        /* SKSV clear: no progress, still sanitizing. */
        san[15] = 0x00;
        assert_int_equal(fw_scsi_sense_decode(san, sizeof(san), &s), 0);
        assert_int_equal(s.progress, -1);
        assert_true(fw_scsi_sense_sanitizing(&s));
        assert_int_equal(fw_scsi_sense_progress(san, sizeof(san)), -ENODATA);
        /* The additional length stops before the sense-key specific bytes: they are not there. */
        san[15] = 0x80, san[7] = 6;
        assert_int_equal(fw_scsi_sense_decode(san, sizeof(san), &s), 0);
        assert_int_equal(s.asc, 0x04);
        assert_int_equal(s.progress, -1);
        /* Cut short before ASC: the key alone. */
        san[7] = 10;
        assert_int_equal(fw_scsi_sense_decode(san, 8, &s), 0);
        assert_int_equal(s.key, FW_SCSI_SK_NOT_READY);
        assert_int_equal(s.asc, 0);
        assert_false(fw_scsi_sense_sanitizing(&s));

        /* A field pointer is no progress; VALID (bit 7) is not part of the response code. */
        assert_int_equal(fw_scsi_sense_decode(ill, sizeof(ill), &s), 0);
        assert_int_equal(s.response_code, 0x70);
        assert_int_equal(s.key, FW_SCSI_SK_ILLEGAL_REQUEST);
        assert_int_equal(s.asc, 0x24);
        assert_int_equal(s.progress, -1);
        assert_false(fw_scsi_sense_sanitizing(&s));
        assert_int_equal(fw_scsi_sense_progress(ill, sizeof(ill)), -ENODATA);
        /* NO SENSE with a progress (a FORMAT UNIT polled by REQUEST SENSE). */
        uint8_t fmt[18] = { 0x70, 0x00, 0x00, 0, 0, 0, 0, 0x0a, 0, 0, 0, 0, 0x04, 0x04, 0x00, 0x80, 0x40, 0x00 };
        assert_int_equal(fw_scsi_sense_decode(fmt, sizeof(fmt), &s), 0);
        assert_int_equal(s.progress, 16384);
        assert_false(fw_scsi_sense_sanitizing(&s));

        /* Not sense data. */
        assert_int_equal(fw_scsi_sense_decode(san, 0, &s), -EBADMSG);
        assert_int_equal(fw_scsi_sense_decode(san, 2, &s), -EBADMSG);
        assert_int_equal(fw_scsi_sense_decode((const uint8_t[]) { 0x00, 0x00, 0x02, 0 }, 4, &s), -EBADMSG);
        assert_int_equal(fw_scsi_sense_progress((const uint8_t[]) { 0x7f, 0, 0, 0 }, 4), -EBADMSG);
}

static void test_sense_descriptor(void **state) {
        /* NOT READY 04h/1Bh; an information descriptor (00h), then the sense-key specific one
         * (02h) with SKSV and progress 4000h. */
        const uint8_t san[] = { 0x72, 0x02, 0x04, 0x1b, 0, 0, 0, 0x14,
                                0x00, 0x0a, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34,
                                0x02, 0x06, 0x00, 0x00, 0x80, 0x40, 0x00, 0x00 };
        /* UNIT ATTENTION with another progress indication (0Ah) of a sanitize: progress C000h. */
        const uint8_t other[] = { 0x72, 0x06, 0x29, 0x00, 0, 0, 0, 0x08,
                                  0x0a, 0x06, 0x02, 0x04, 0x1b, 0x00, 0xc0, 0x00 };
        /* ILLEGAL REQUEST with a field pointer descriptor: no progress. */
        const uint8_t ill[] = { 0x72, 0x05, 0x20, 0x00, 0, 0, 0, 0x08,
                                0x02, 0x06, 0x00, 0x00, 0xc0, 0x00, 0x01, 0x00 };
        /* A descriptor running past the data received: not read. */
        const uint8_t cut[] = { 0x73, 0x02, 0x04, 0x1b, 0, 0, 0, 0x08, 0x02, 0x06, 0x00, 0x00, 0x80, 0x40 };
        /* SKSV clear in 02h, and 0Ah present: the 0Ah one. */
        const uint8_t both[] = { 0x72, 0x02, 0x04, 0x1b, 0, 0, 0, 0x10,
                                 0x02, 0x06, 0x00, 0x00, 0x00, 0x11, 0x11, 0x00,
                                 0x0a, 0x06, 0x02, 0x04, 0x1b, 0x00, 0x22, 0x22 };
        struct fw_scsi_sense s;

        (void) state;
        assert_int_equal(fw_scsi_sense_decode(san, sizeof(san), &s), 0);
        assert_int_equal(s.response_code, 0x72);
        assert_int_equal(s.key, FW_SCSI_SK_NOT_READY);
        assert_int_equal(s.asc, 0x04);
        assert_int_equal(s.ascq, 0x1b);
        assert_int_equal(s.progress, 0x4000);
        assert_true(fw_scsi_sense_sanitizing(&s));
        assert_int_equal(fw_scsi_sense_progress(san, sizeof(san)), 0x4000);
        /* Padding after the additional length is ignored; the descriptors cut off are not read. */
        assert_int_equal(fw_scsi_sense_progress(san, 20), -ENODATA);

        assert_int_equal(fw_scsi_sense_decode(other, sizeof(other), &s), 0);
        assert_int_equal(s.key, FW_SCSI_SK_UNIT_ATTENTION);
        assert_int_equal(s.progress, 0xc000);
        assert_int_equal(s.progress_key, FW_SCSI_SK_NOT_READY);
        assert_int_equal(s.progress_asc, 0x04);
        assert_int_equal(s.progress_ascq, 0x1b);
        assert_true(fw_scsi_sense_sanitizing(&s));

        assert_int_equal(fw_scsi_sense_decode(ill, sizeof(ill), &s), 0);
        assert_int_equal(s.key, FW_SCSI_SK_ILLEGAL_REQUEST);
        assert_int_equal(s.asc, 0x20);
        assert_int_equal(s.progress, -1);
        assert_false(fw_scsi_sense_sanitizing(&s));

        assert_int_equal(fw_scsi_sense_decode(cut, sizeof(cut), &s), 0);
        assert_int_equal(s.response_code, 0x73);
        assert_int_equal(s.progress, -1);
        assert_true(fw_scsi_sense_sanitizing(&s));

        assert_int_equal(fw_scsi_sense_progress(both, sizeof(both)), 0x2222);
        /* Header only; shorter than the header. */
        assert_int_equal(fw_scsi_sense_progress(san, 8), -ENODATA);
        assert_int_equal(fw_scsi_sense_decode(san, 4, &s), 0);
        assert_int_equal(s.asc, 0x04);
        assert_int_equal(fw_scsi_sense_decode(san, 3, &s), -EBADMSG);
        assert_string_equal(fw_scsi_sense_key_name(5), "ILLEGAL REQUEST");
        assert_string_equal(fw_scsi_sense_key_name(2), "NOT READY");
}

static void json_is(const struct fw_scsi_caps *c, const char *want) {
        struct json_object *o = fw_scsi_json(c);

        assert_non_null(o);
        assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), want);
        json_object_put(o);
}

static void test_json(void **state) {
        struct fw_scsi_caps c = { .rsoc_supported = true, .sanitize_block = true, .sanitize_crypto = true,
                                  .sanitize_exit_failure = true, .format_unit = true };

        (void) state;
        json_is(&c, "{\"report_supported_opcodes\":true,\"sanitize\":{\"overwrite\":false,\"block\":true,"
                    "\"crypto\":true,\"exit_failure\":true},\"format_unit\":true}");
        c = (struct fw_scsi_caps) {};
        json_is(&c, "{\"report_supported_opcodes\":false,\"sanitize\":null,\"format_unit\":null}");
}

static int fake_reset(void **state) {
        (void) state;
        fake = (struct fake) { .on = true, .progress = -1 };
        return 0;
}

static void test_is_ata(void **state) {
        (void) state;
        fake.ata = true;
        assert_int_equal(fw_scsi_is_ata(-1), 1);
        fake.ata = false;
        assert_int_equal(fw_scsi_is_ata(-1), 0);
        /* No VPD pages: a SCSI device all the same. */
        fake.no_vpd = true;
        assert_int_equal(fw_scsi_is_ata(-1), 0);
        fake.descriptor_sense = true;
        assert_int_equal(fw_scsi_is_ata(-1), 0);
        /* A unit attention is passed over once, not twice. */
        fake.no_vpd = false, fake.ata = true, fake.unit_attentions = 1, fake.calls = 0;
        assert_int_equal(fw_scsi_is_ata(-1), 1);
        assert_int_equal(fake.calls, 2);
        fake.unit_attentions = 2;
        assert_int_equal(fw_scsi_is_ata(-1), 0);
        /* SG_IO refused. */
        fake.err = -ENOTTY;
        assert_int_equal(fw_scsi_is_ata(-1), -ENOTTY);
}

/* fw_scsi_probe() must fill c, return 0 and set no error. */
static void probe_ok(struct fw_scsi_caps *c) {
        char *err = (char *) "unset";

        memset(c, 0xff, sizeof(*c));
        assert_int_equal(fw_scsi_probe(-1, c, &err), 0);
        assert_null(err);
}

static void test_probe(void **state) {
        struct fw_scsi_caps c;

        (void) state;
        /* One command at a time: FORMAT UNIT and each service action, five commands. */
        fake.format = true, fake.sanitize = 1u << 2 | 1u << 3 | 1u << 0x1f;
        probe_ok(&c);
        assert_int_equal(fake.calls, 5);
        assert_true(c.rsoc_supported);
        assert_true(c.format_unit);
        assert_false(c.sanitize_overwrite);
        assert_true(c.sanitize_block);
        assert_true(c.sanitize_crypto); /* answered 101b, vendor specific */
        assert_true(c.sanitize_exit_failure);

        fake.format = false, fake.sanitize = 1u << 1, fake.descriptor_sense = true, fake.unit_attentions = 1;
        probe_ok(&c);
        assert_true(c.rsoc_supported);
        assert_false(c.format_unit);
        assert_true(c.sanitize_overwrite);
        assert_false(c.sanitize_block || c.sanitize_crypto || c.sanitize_exit_failure);

        /* The reporting options refused: the whole list. */
        fake.one_refused = true, fake.format = true, fake.sanitize = 1u << 3, fake.calls = 0;
        probe_ok(&c);
        assert_int_equal(fake.calls, 2);
        assert_true(c.rsoc_supported);
        assert_true(c.format_unit);
        assert_true(c.sanitize_crypto);
        assert_false(c.sanitize_overwrite || c.sanitize_block || c.sanitize_exit_failure);

        /* A device that answers every reporting option with its whole list: its length reads as
         * SUPPORT 000b, and the list is read as one. */
        fake.one_refused = false, fake.ignores_option = true, fake.format = false, fake.calls = 0;
        fake.sanitize = 1u << 1 | 1u << 2 | 1u << 0x1f;
        probe_ok(&c);
        assert_int_equal(fake.calls, 2);
        assert_true(c.rsoc_supported);
        assert_false(c.format_unit || c.sanitize_crypto);
        assert_true(c.sanitize_overwrite && c.sanitize_block && c.sanitize_exit_failure);

        /* REPORT SUPPORTED OPERATION CODES refused, either way: unknown, not an error. */
        fake.rsoc_refused = true;
        probe_ok(&c);
        assert_false(c.rsoc_supported);
        assert_false(c.format_unit || c.sanitize_overwrite || c.sanitize_block || c.sanitize_crypto);
        fake.rsoc_refused = false, fake.rsoc_invalid_field = true, fake.descriptor_sense = false;
        probe_ok(&c);
        assert_false(c.rsoc_supported);
}

static void test_probe_errors(void **state) {
        struct fw_scsi_caps c;
        char *err = NULL;

        (void) state;
        /* A sanitize in progress refuses the command: said, with its progress. */
        fake.progress = 0x8000;
        assert_int_equal(fw_scsi_probe(-1, &c, &err), -EIO);
        assert_non_null(err);
        assert_string_equal(err, "REPORT SUPPORTED OPERATION CODES (FORMAT UNIT): a sanitize is in progress (50% done)");
        assert_false(c.rsoc_supported);
        free(err);

        /* Unit attention after unit attention. */
        fake.progress = -1, fake.unit_attentions = 2;
        assert_int_equal(fw_scsi_probe(-1, &c, &err), -EIO);
        assert_string_equal(err, "REPORT SUPPORTED OPERATION CODES (FORMAT UNIT): UNIT ATTENTION, ASC/ASCQ 29h/00h");
        free(err);

        fake.err = -EIO;
        assert_int_equal(fw_scsi_probe(-1, &c, &err), -EIO);
        assert_string_equal(err, "REPORT SUPPORTED OPERATION CODES (FORMAT UNIT): Input/output error");
        free(err);
}

static void test_sanitize_cdbs(void **state) {
        uint8_t cdb[10], p[FW_SCSI_OVERWRITE_PARAMS_LEN];

        (void) state;
        memset(cdb, 0xff, sizeof(cdb));
        fw_scsi_cdb_sanitize(cdb, FW_SCSI_SANITIZE_OVERWRITE, true, true, 8);
        cdb_is(cdb, (const uint8_t[]) { 0x48, 0xa1, 0, 0, 0, 0, 0, 0x00, 0x08, 0 }, 10);
        fw_scsi_cdb_sanitize(cdb, FW_SCSI_SANITIZE_BLOCK_ERASE, true, false, 0);
        cdb_is(cdb, (const uint8_t[]) { 0x48, 0x82, 0, 0, 0, 0, 0, 0, 0, 0 }, 10);
        fw_scsi_cdb_sanitize(cdb, FW_SCSI_SANITIZE_CRYPTO_ERASE, false, true, 0x1234);
        cdb_is(cdb, (const uint8_t[]) { 0x48, 0x23, 0, 0, 0, 0, 0, 0x12, 0x34, 0 }, 10);

        memset(p, 0xff, sizeof(p));
        fw_scsi_sanitize_overwrite_params(p, 1, 0);
        cdb_is(p, (const uint8_t[]) { 0x01, 0x00, 0x00, 0x04, 0, 0, 0, 0 }, 8);
        /* INVERT and TEST stay 0 whatever the count; the pattern big-endian. */
        fw_scsi_sanitize_overwrite_params(p, 31, 0xdeadbeef);
        cdb_is(p, (const uint8_t[]) { 0x1f, 0x00, 0x00, 0x04, 0xde, 0xad, 0xbe, 0xef }, 8);

        uint8_t rs[6];
        memset(rs, 0xff, sizeof(rs));
        fw_scsi_cdb_request_sense(rs, true, 252);
        cdb_is(rs, (const uint8_t[]) { 0x03, 0x01, 0, 0, 0xfc, 0 }, 6);
        fw_scsi_cdb_request_sense(rs, false, 18);
        cdb_is(rs, (const uint8_t[]) { 0x03, 0x00, 0, 0, 0x12, 0 }, 6);
}

static void test_sense_words(void **state) {
        struct fw_scsi_sense s = { .key = 5, .asc = 0x24, .ascq = 0x00, .progress = -1 };
        char w[128], small[12];

        (void) state;
        fw_scsi_sense_words(w, sizeof(w), &s);
        assert_string_equal(w, "ILLEGAL REQUEST, INVALID FIELD IN CDB (24h/00h)");
        s = (struct fw_scsi_sense) { .key = 5, .asc = 0x3d, .ascq = 0x00, .progress = -1 };
        fw_scsi_sense_words(w, sizeof(w), &s);
        assert_string_equal(w, "ILLEGAL REQUEST, ASC/ASCQ 3Dh/00h");
        s = (struct fw_scsi_sense) { .key = 2, .asc = 0x04, .ascq = 0x1b, .progress = 6554 };
        fw_scsi_sense_words(w, sizeof(w), &s);
        assert_string_equal(w, "NOT READY, LOGICAL UNIT NOT READY, SANITIZE IN PROGRESS (04h/1Bh), progress 6554/65536");
        /* Cut to the buffer, terminated. */
        assert_int_equal(fw_scsi_sense_words(small, sizeof(small), &s), (int) strlen(w));
        assert_string_equal(small, "NOT READY, ");
        assert_null(fw_scsi_asc_name(0x31, 0x01));
        assert_string_equal(fw_scsi_asc_name(0x31, 0x03), "SANITIZE COMMAND FAILED");
}

/* Sense data of key/asc/ascq into out, descriptor or fixed format, with progress when >= 0: its
 * length. */
static size_t mk_sense(uint8_t *out, bool desc, uint8_t key, uint8_t asc, uint8_t ascq, int progress) {
        bool saved = fake.descriptor_sense;
        size_t n = 0;

        fake.descriptor_sense = desc;
        fake_sense(out, 32, &n, key, asc, ascq, progress);
        fake.descriptor_sense = saved;
        return n;
}

/* The next answer: CHECK CONDITION with this sense. */
static void answer_check(bool desc, uint8_t key, uint8_t asc, uint8_t ascq, int progress) {
        struct answer *a = &fake.answers[fake.n_answers++];

        *a = (struct answer) { .status = 0x02 };
        a->sense_len = mk_sense(a->sense, desc, key, asc, ascq, progress);
}

/* The next answer: GOOD, with this sense as the data in (REQUEST SENSE). */
static void answer_data(bool desc, uint8_t key, uint8_t asc, uint8_t ascq, int progress) {
        struct answer *a = &fake.answers[fake.n_answers++];

        *a = (struct answer) { .status = 0 };
        a->data_len = mk_sense(a->data, desc, key, asc, ascq, progress);
}

static void answer_good(void) {
        fake.answers[fake.n_answers++] = (struct answer) { .status = 0 };
}

static int fake_erase_reset(void **state) {
        fake_reset(state);
        fake.erase = true;
        return 0;
}

/* fw_scsi_sanitize_start() of c against the answers scripted: its result, err as said. */
static int start(const struct fw_command *c, char *err, size_t len) {
        int r;

        fake.calls = 0;
        memset(fake.sent, 0, sizeof(fake.sent));
        strcpy(err, "unset");
        r = fw_scsi_sanitize_start(-1, c, err, len);
        fake.n_answers = 0;
        return r;
}

static void test_sanitize_start(void **state) {
        struct fw_command c = { .set = FW_SET_SCSI, .action = FW_ACTION_SANITIZE_OVERWRITE, .overwrite_passes = 3,
                                .overwrite_pattern = 0x11223344, .ause = true };
        char err[160];

        (void) state;
        /* OVERWRITE: IMMED, AUSE, service action 01h, an 8-byte parameter list out. */
        answer_good();
        assert_int_equal(start(&c, err, sizeof(err)), 0);
        assert_string_equal(err, "unset");
        assert_int_equal(fake.calls, 1);
        assert_int_equal(fake.sent[0].cdb_len, 10);
        cdb_is(fake.sent[0].cdb, (const uint8_t[]) { 0x48, 0xa1, 0, 0, 0, 0, 0, 0x00, 0x08, 0 }, 10);
        assert_true(fake.sent[0].dir > 0);
        assert_int_equal(fake.sent[0].len, 8);
        cdb_is(fake.sent[0].data, (const uint8_t[]) { 0x03, 0x00, 0x00, 0x04, 0x11, 0x22, 0x33, 0x44 }, 8);

        /* BLOCK ERASE without AUSE, CRYPTOGRAPHIC ERASE with: no parameter list, no data. */
        c = (struct fw_command) { .set = FW_SET_SCSI, .action = FW_ACTION_SANITIZE_BLOCK, .overwrite_passes = 5 };
        answer_good();
        assert_int_equal(start(&c, err, sizeof(err)), 0);
        cdb_is(fake.sent[0].cdb, (const uint8_t[]) { 0x48, 0x82, 0, 0, 0, 0, 0, 0, 0, 0 }, 10);
        assert_int_equal(fake.sent[0].dir, 0);
        assert_int_equal(fake.sent[0].len, 0);
        c.action = FW_ACTION_SANITIZE_CRYPTO, c.ause = true;
        answer_good();
        assert_int_equal(start(&c, err, sizeof(err)), 0);
        cdb_is(fake.sent[0].cdb, (const uint8_t[]) { 0x48, 0xa3, 0, 0, 0, 0, 0, 0, 0, 0 }, 10);
        assert_int_equal(fake.sent[0].len, 0);

        /* The count's range, 1..31; not a sanitize: refused before anything is sent. */
        c = (struct fw_command) { .set = FW_SET_SCSI, .action = FW_ACTION_SANITIZE_OVERWRITE, .overwrite_passes = 31 };
        answer_good();
        assert_int_equal(start(&c, err, sizeof(err)), 0);
        assert_int_equal(fake.sent[0].data[0], 0x1f);
        c.overwrite_passes = 0;
        assert_int_equal(start(&c, err, sizeof(err)), -EINVAL);
        assert_string_equal(err, "SANITIZE: overwrite count 0 is not in 1..31");
        c.overwrite_passes = 32;
        assert_int_equal(start(&c, err, sizeof(err)), -EINVAL);
        c.action = FW_ACTION_NVME_FORMAT;
        assert_int_equal(start(&c, err, sizeof(err)), -EINVAL);
        c.action = FW_ACTION_NONE;
        assert_int_equal(start(&c, err, sizeof(err)), -EINVAL);
        assert_int_equal(fake.calls, 0);
}

static void test_sanitize_start_errors(void **state) {
        struct fw_command c = { .set = FW_SET_SCSI, .action = FW_ACTION_SANITIZE_BLOCK };
        char err[160];

        (void) state;
        /* CHECK CONDITION: the sense in words, either format. */
        answer_check(false, 0x5, 0x24, 0x00, -1);
        assert_int_equal(start(&c, err, sizeof(err)), -EIO);
        assert_string_equal(err, "SANITIZE: ILLEGAL REQUEST, INVALID FIELD IN CDB (24h/00h)");
        c.action = FW_ACTION_SANITIZE_OVERWRITE, c.overwrite_passes = 1;
        answer_check(true, 0x5, 0x26, 0x00, -1);
        assert_int_equal(start(&c, err, sizeof(err)), -EIO);
        assert_string_equal(err, "SANITIZE: ILLEGAL REQUEST, INVALID FIELD IN PARAMETER LIST (26h/00h)");
        answer_check(true, 0x5, 0x3d, 0x00, -1);
        assert_int_equal(start(&c, err, sizeof(err)), -EIO);
        assert_string_equal(err, "SANITIZE: ILLEGAL REQUEST, ASC/ASCQ 3Dh/00h");
        answer_check(false, 0x3, 0x31, 0x03, -1);
        assert_int_equal(start(&c, err, sizeof(err)), -EIO);
        assert_string_equal(err, "SANITIZE: MEDIUM ERROR, SANITIZE COMMAND FAILED (31h/03h)");
        /* One already running: -EBUSY, with its progress. */
        answer_check(false, 0x2, 0x04, 0x1b, 6554);
        assert_int_equal(start(&c, err, sizeof(err)), -EBUSY);
        assert_string_equal(err, "SANITIZE: NOT READY, LOGICAL UNIT NOT READY, SANITIZE IN PROGRESS (04h/1Bh), "
                                 "progress 6554/65536");
        /* A unit attention is news, not an answer: sent again, once. */
        answer_check(true, 0x6, 0x29, 0x00, -1);
        answer_good();
        assert_int_equal(start(&c, err, sizeof(err)), 0);
        assert_int_equal(fake.calls, 2);
        assert_memory_equal(fake.sent[0].cdb, fake.sent[1].cdb, 10);
        assert_memory_equal(fake.sent[0].data, fake.sent[1].data, 8);
        answer_check(true, 0x6, 0x29, 0x00, -1);
        answer_check(true, 0x6, 0x29, 0x00, -1);
        assert_int_equal(start(&c, err, sizeof(err)), -EIO);
        assert_string_equal(err, "SANITIZE: UNIT ATTENTION, POWER ON, RESET, OR BUS DEVICE RESET OCCURRED (29h/00h)");
        /* RECOVERED ERROR: done. */
        answer_check(false, 0x1, 0x00, 0x00, -1);
        assert_int_equal(start(&c, err, sizeof(err)), 0);
        /* No sense data; another status; the ioctl refused. */
        fake.answers[fake.n_answers++] = (struct answer) { .status = 0x02 };
        assert_int_equal(start(&c, err, sizeof(err)), -EIO);
        assert_string_equal(err, "SANITIZE: CHECK CONDITION without sense data");
        fake.answers[fake.n_answers++] = (struct answer) { .status = 0x18 };
        assert_int_equal(start(&c, err, sizeof(err)), -EIO);
        assert_string_equal(err, "SANITIZE: SCSI status 18h");
        fake.answers[fake.n_answers++] = (struct answer) { .err = -ENOTTY };
        assert_int_equal(start(&c, err, sizeof(err)), -ENOTTY);
        assert_string_equal(err, "SANITIZE: Inappropriate ioctl for device");
        /* No room for a message: none written. */
        answer_check(false, 0x5, 0x24, 0x00, -1);
        fake.calls = 0;
        assert_int_equal(fw_scsi_sanitize_start(-1, &c, NULL, 0), -EIO);
        fake.n_answers = 0;
        /* A message cut to its buffer. */
        answer_check(false, 0x5, 0x24, 0x00, -1);
        assert_int_equal(start(&c, err, 12), -EIO);
        assert_string_equal(err, "SANITIZE: I");
}

/* fw_scsi_sanitize_status() against the answers scripted: its result into *s, err as said. */
static int status(struct fw_status *s, char *err, size_t len) {
        int r;

        fake.calls = 0;
        memset(fake.sent, 0, sizeof(fake.sent));
        strcpy(err, "unset");
        memset(s, 0xee, sizeof(*s));
        r = fw_scsi_sanitize_status(-1, s, err, len);
        fake.n_answers = 0;
        return r;
}

static void test_sanitize_status(void **state) {
        struct fw_status s;
        char err[160];

        (void) state;
        /* Running, descriptor format with a progress indication: REQUEST SENSE with DESC, 252. */
        answer_data(true, 0x2, 0x04, 0x1b, 0x8000);
        assert_int_equal(status(&s, err, sizeof(err)), 0);
        assert_string_equal(err, "unset");
        assert_int_equal(fake.calls, 1);
        assert_int_equal(fake.sent[0].cdb_len, 6);
        cdb_is(fake.sent[0].cdb, (const uint8_t[]) { 0x03, 0x01, 0x00, 0x00, 0xfc, 0x00 }, 6);
        assert_true(fake.sent[0].dir < 0);
        assert_int_equal(fake.sent[0].len, 252);
        assert_int_equal(s.state, FW_RUN_RUNNING);
        assert_true(s.fraction == 0.5);
        assert_string_equal(s.text, "NOT READY, LOGICAL UNIT NOT READY, SANITIZE IN PROGRESS (04h/1Bh), "
                                    "progress 32768/65536");
        /* Without a progress indication, in either format. */
        answer_data(true, 0x2, 0x04, 0x1b, -1);
        assert_int_equal(status(&s, err, sizeof(err)), 0);
        assert_int_equal(s.state, FW_RUN_RUNNING);
        assert_true(s.fraction == -1);
        assert_string_equal(s.text, "NOT READY, LOGICAL UNIT NOT READY, SANITIZE IN PROGRESS (04h/1Bh)");
        answer_data(false, 0x2, 0x04, 0x1b, -1);
        assert_int_equal(status(&s, err, sizeof(err)), 0);
        assert_int_equal(s.state, FW_RUN_RUNNING);
        assert_true(s.fraction == -1);
        /* Fixed format (a device that answers so despite DESC) with a progress indication. */
        answer_data(false, 0x2, 0x04, 0x1b, 0x4000);
        assert_int_equal(status(&s, err, sizeof(err)), 0);
        assert_int_equal(s.state, FW_RUN_RUNNING);
        assert_true(s.fraction == 0.25);

        /* Failed: MEDIUM ERROR, SANITIZE COMMAND FAILED. */
        answer_data(false, 0x3, 0x31, 0x03, -1);
        assert_int_equal(status(&s, err, sizeof(err)), 0);
        assert_int_equal(s.state, FW_RUN_FAILED);
        assert_true(s.fraction == -1);
        assert_string_equal(s.text, "MEDIUM ERROR, SANITIZE COMMAND FAILED (31h/03h)");
        answer_data(true, 0x3, 0x31, 0x03, -1);
        assert_int_equal(status(&s, err, sizeof(err)), 0);
        assert_int_equal(s.state, FW_RUN_FAILED);

        /* No sense: done (or never run: the caller knows which). */
        answer_data(true, 0x0, 0x00, 0x00, -1);
        assert_int_equal(status(&s, err, sizeof(err)), 0);
        assert_int_equal(s.state, FW_RUN_DONE);
        assert_true(s.fraction == -1);
        assert_string_equal(s.text, "NO SENSE, NO ADDITIONAL SENSE INFORMATION (00h/00h)");
        answer_data(false, 0x0, 0x00, 0x00, -1);
        assert_int_equal(status(&s, err, sizeof(err)), 0);
        assert_int_equal(s.state, FW_RUN_DONE);

        /* Anything else: unknown, said. A format in progress is not a sanitize. */
        answer_data(true, 0x2, 0x04, 0x04, 0x1000);
        assert_int_equal(status(&s, err, sizeof(err)), 0);
        assert_int_equal(s.state, FW_RUN_UNKNOWN);
        assert_true(s.fraction == -1);
        assert_string_equal(s.text, "NOT READY, LOGICAL UNIT NOT READY, FORMAT IN PROGRESS (04h/04h), "
                                    "progress 4096/65536");
        answer_data(false, 0x6, 0x29, 0x00, -1);
        assert_int_equal(status(&s, err, sizeof(err)), 0);
        assert_int_equal(s.state, FW_RUN_UNKNOWN);
        assert_string_equal(s.text, "UNIT ATTENTION, POWER ON, RESET, OR BUS DEVICE RESET OCCURRED (29h/00h)");
        answer_data(false, 0x0, 0x5d, 0x00, -1);
        assert_int_equal(status(&s, err, sizeof(err)), 0);
        assert_int_equal(s.state, FW_RUN_UNKNOWN);
        assert_string_equal(s.text, "NO SENSE, ASC/ASCQ 5Dh/00h");
}

static void test_sanitize_status_errors(void **state) {
        struct fw_status s;
        char err[160];

        (void) state;
        /* DESC refused: asked again in the fixed format. */
        answer_check(false, 0x5, 0x24, 0x00, -1);
        answer_data(false, 0x2, 0x04, 0x1b, 0xc000);
        assert_int_equal(status(&s, err, sizeof(err)), 0);
        assert_int_equal(fake.calls, 2);
        cdb_is(fake.sent[0].cdb, (const uint8_t[]) { 0x03, 0x01, 0x00, 0x00, 0xfc, 0x00 }, 6);
        cdb_is(fake.sent[1].cdb, (const uint8_t[]) { 0x03, 0x00, 0x00, 0x00, 0xfc, 0x00 }, 6);
        assert_int_equal(s.state, FW_RUN_RUNNING);
        assert_true(s.fraction == 0.75);
        /* A unit attention passed over once. */
        answer_check(true, 0x6, 0x29, 0x00, -1);
        answer_data(true, 0x0, 0x00, 0x00, -1);
        assert_int_equal(status(&s, err, sizeof(err)), 0);
        assert_int_equal(fake.calls, 2);
        assert_int_equal(s.state, FW_RUN_DONE);
        /* A CHECK CONDITION that says sanitizing or failed is the answer all the same. */
        answer_check(false, 0x2, 0x04, 0x1b, 0x2000);
        assert_int_equal(status(&s, err, sizeof(err)), 0);
        assert_int_equal(s.state, FW_RUN_RUNNING);
        assert_true(s.fraction == 0.125);
        answer_check(false, 0x3, 0x31, 0x03, -1);
        assert_int_equal(status(&s, err, sizeof(err)), 0);
        assert_int_equal(s.state, FW_RUN_FAILED);
        /* REQUEST SENSE itself refused; no sense data; another status; the ioctl refused. */
        answer_check(false, 0x5, 0x20, 0x00, -1);
        assert_int_equal(status(&s, err, sizeof(err)), -EIO);
        assert_string_equal(err, "REQUEST SENSE: ILLEGAL REQUEST, INVALID COMMAND OPERATION CODE (20h/00h)");
        assert_int_equal(s.state, FW_RUN_UNKNOWN);
        fake.answers[fake.n_answers++] = (struct answer) { .status = 0 };
        assert_int_equal(status(&s, err, sizeof(err)), -EBADMSG);
        assert_string_equal(err, "REQUEST SENSE: no sense data in the answer (0 bytes)");
        fake.answers[fake.n_answers++] = (struct answer) { .status = 0x08 };
        assert_int_equal(status(&s, err, sizeof(err)), -EIO);
        assert_string_equal(err, "REQUEST SENSE: SCSI status 08h");
        fake.answers[fake.n_answers++] = (struct answer) { .err = -EIO };
        assert_int_equal(status(&s, err, sizeof(err)), -EIO);
        assert_string_equal(err, "REQUEST SENSE: Input/output error");
}

/* A file takes no SG_IO: quickly -ENOTTY, through the real fw_sg_io(). */
static void test_no_sg_io(void **state) {
        char path[] = "/tmp/test-fw-scsi.XXXXXX";
        struct fw_scsi_caps c;
        char *err = NULL;
        int fd = mkstemp(path);

        (void) state;
        assert_true(fd >= 0);
        unlink(path);
        fake.on = false;
        assert_int_equal(fw_scsi_is_ata(fd), -ENOTTY);
        assert_int_equal(fw_scsi_probe(fd, &c, &err), -ENOTTY);
        assert_non_null(err);
        free(err);
        close(fd);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_cdbs),
                cmocka_unit_test(test_vpd),
                cmocka_unit_test(test_rsoc_one),
                cmocka_unit_test(test_rsoc_all),
                cmocka_unit_test(test_sense_fixed),
                cmocka_unit_test(test_sense_descriptor),
                cmocka_unit_test(test_json),
                cmocka_unit_test_setup(test_is_ata, fake_reset),
                cmocka_unit_test_setup(test_probe, fake_reset),
                cmocka_unit_test_setup(test_probe_errors, fake_reset),
                cmocka_unit_test_setup(test_no_sg_io, fake_reset),
                cmocka_unit_test(test_sanitize_cdbs),
                cmocka_unit_test(test_sense_words),
                cmocka_unit_test_setup(test_sanitize_start, fake_erase_reset),
                cmocka_unit_test_setup(test_sanitize_start_errors, fake_erase_reset),
                cmocka_unit_test_setup(test_sanitize_status, fake_erase_reset),
                cmocka_unit_test_setup(test_sanitize_status_errors, fake_erase_reset),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
