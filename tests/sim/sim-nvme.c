/* drivesim: an NVMe namespace (nsid 1) and its controller, from the NVMe Base Specification 2.0:
 * NVME_IOCTL_ID, and through NVME_IOCTL_ADMIN_CMD or NVME_IOCTL_ADMIN64_CMD (libnvme 1.3 submits
 * its admin commands with the first; both are taken) Identify (5.17: CNS 00h namespace, 01h
 * controller), Get Log Page (5.16) with the Sanitize Status log (5.16.1.25), Sanitize (5.24) and
 * Format NVM (5.14). The layouts are libnvme's structures (nvme/types.h), which follow the
 * specification's figures.
 *
 * The return value is the kernel's: 0, the completion's status field (SCT << 8 | SC, with the DNR
 * bit 14) when the controller refused it, or -1 with errno when it never got there. */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/nvme_ioctl.h>
#include <nvme/types.h>

#include "sim.h"

/* Status values (Figure 101 generic, Figure 102 command specific) with DNR. */
#define ST(sct, sc) ((int) (NVME_SC_DNR | (sct) << 8 | (sc)))
#define ST_INVALID_OPCODE ST(0, NVME_SC_INVALID_OPCODE)
#define ST_INVALID_FIELD ST(0, NVME_SC_INVALID_FIELD)
#define ST_SANITIZE_FAILED ST(0, NVME_SC_SANITIZE_FAILED)
#define ST_SANITIZE_IN_PROGRESS ST(0, NVME_SC_SANITIZE_IN_PROGRESS)
#define ST_INVALID_FORMAT ST(1, NVME_SC_INVALID_FORMAT)
#define ST_INVALID_NS ST(0, NVME_SC_INVALID_NS)

/* Sanitize CDW10 (Figure 372) */
#define SANITIZE_AUSE (1u << 3)
#define SANITIZE_OIPBP (1u << 8)
#define SANITIZE_NDAS (1u << 9)

/* An estimate in seconds as the log page has it: FFFFFFFFh when there is none. */
static uint32_t estimate(int64_t s) {
        return s < 0 ? 0xffffffffu : (uint32_t) s;
}

static int identify_ctrl(struct sim_drive *d, struct nvme_id_ctrl *id) {
        const struct sim_conf *c = d->conf;
        uint32_t sanicap = 0;

        memset(id, 0, sizeof *id);
        id->vid = htole16(0x1b36);      /* as QEMU's emulated controller */
        id->ssvid = htole16(0x1af4);
        sim_copy_string((uint8_t *) id->sn, sizeof id->sn, c->serial);
        sim_copy_string((uint8_t *) id->mn, sizeof id->mn, c->model);
        sim_copy_string((uint8_t *) id->fr, sizeof id->fr, c->firmware);
        id->ver = htole32(0x00020000);  /* 2.0 */
        id->oacs = htole16(c->format ? NVME_CTRL_OACS_FORMAT : 0);
        /* SANICAP (Figure 275): CES bit 0, BES bit 1, OWS bit 2, NDI bit 29 */
        if (c->sanitize & SIM_SAN_CRYPTO)
                sanicap |= NVME_CTRL_SANICAP_CES;
        if (c->sanitize & SIM_SAN_BLOCK)
                sanicap |= NVME_CTRL_SANICAP_BES;
        if (c->sanitize & SIM_SAN_OVERWRITE)
                sanicap |= NVME_CTRL_SANICAP_OWS;
        if (c->ndi)
                sanicap |= NVME_CTRL_SANICAP_NDI;
        id->sanicap = htole32(sanicap);
        id->sqes = 0x66;
        id->cqes = 0x44;
        id->nn = htole32(1);
        id->fna = (uint8_t) c->fna;    /* FNS bit 0, SENS bit 1, CRYES bit 2 */
        id->lpa = NVME_CTRL_LPA_EXTENDED;
        snprintf(id->subnqn, sizeof id->subnqn, "nqn.2014-08.org.nvmexpress:uuid:drivesim-%s", c->serial);
        return 0;
}

static int identify_ns(struct sim_drive *d, struct nvme_id_ns *ns) {
        uint64_t n = d->conf->bytes / 512;

        memset(ns, 0, sizeof *ns);
        ns->nsze = ns->ncap = ns->nuse = htole64(n);
        ns->nlbaf = 0;                  /* one LBA format (0's based) */
        ns->flbas = 0;
        ns->lbaf[0].ds = 9;             /* 512-byte blocks, no metadata */
        return 0;
}

/* The Sanitize Status log page (5.16.1.25, Figure 287). */
static void sanitize_log(struct sim_drive *d, struct nvme_sanitize_log_page *l) {
        const struct sim_conf *c = d->conf;
        const struct sim_state *s = &d->st;
        uint16_t sstat;

        memset(l, 0, sizeof *l);
        if (s->op == SIM_OP_SANITIZE)
                sstat = NVME_SANITIZE_SSTAT_STATUS_IN_PROGESS;
        else
                sstat = (uint16_t) (s->san_status == 1 ? NVME_SANITIZE_SSTAT_STATUS_COMPLETE_SUCCESS :
                                    s->san_status == 3 ? NVME_SANITIZE_SSTAT_STATUS_COMPLETED_FAILED :
                                    NVME_SANITIZE_SSTAT_STATUS_NEVER_SANITIZED);
        /* Overwrite passes completed, bits 7:3 */
        sstat |= (uint16_t) ((s->san_passes_done & 0x1f) << 3);
        l->sstat = htole16(sstat);
        /* SPROG: FFFFh when no sanitize runs */
        l->sprog = htole16((uint16_t) (s->op == SIM_OP_SANITIZE ? sim_progress(d) : 0xffff));
        l->scdw10 = htole32(s->op_cdw10);
        l->eto = htole32(estimate(c->sanitize & SIM_SAN_OVERWRITE ? c->est_overwrite : -1));
        l->etbe = htole32(estimate(c->sanitize & SIM_SAN_BLOCK ? c->est_block : -1));
        l->etce = htole32(estimate(c->sanitize & SIM_SAN_CRYPTO ? c->est_crypto : -1));
        l->etond = l->etbend = l->etcend = htole32(0xffffffffu);
}

static int get_log_page(struct sim_drive *d, uint32_t cdw10, uint32_t cdw11, uint32_t cdw12, void *data,
                        uint32_t len) {
        struct nvme_sanitize_log_page l;
        uint8_t lid = cdw10 & 0xff;
        /* NUMDL bits 31:16 of CDW10, NUMDU bits 15:0 of CDW11: dwords, 0's based */
        uint64_t want = ((uint64_t) ((cdw11 & 0xffff) << 16 | cdw10 >> 16) + 1) * 4;
        uint64_t off = (uint64_t) cdw12;

        if (lid != NVME_LOG_LID_SANITIZE)
                return ST_INVALID_FIELD;        /* Invalid Log Page: no other log here */
        if (want > len || off >= sizeof l)
                return ST_INVALID_FIELD;
        sanitize_log(d, &l);
        if (want > sizeof l - off)
                want = sizeof l - off;
        memset(data, 0, len);
        memcpy(data, (uint8_t *) &l + off, want);
        return 0;
}

/* Sanitize (5.24, Figure 372): SANACT bits 2:0, AUSE bit 3, OWPASS bits 7:4, OIPBP bit 8, NDAS
 * bit 9 of CDW10; the overwrite pattern in CDW11. */
static int sanitize(struct sim_drive *d, uint32_t cdw10, uint32_t cdw11) {
        const struct sim_conf *c = d->conf;
        struct sim_state *s = &d->st;
        unsigned sanact = cdw10 & 7, bit;

        if (s->op == SIM_OP_SANITIZE)
                return ST_SANITIZE_IN_PROGRESS;
        switch (sanact) {
        case NVME_SANITIZE_SANACT_EXIT_FAILURE:
                /* Leaves the failure mode (8.21) when the failed sanitize had AUSE set
                 * (unrestricted completion mode); after one in restricted completion mode only a
                 * sanitize that succeeds does. The log keeps the failed status. */
                if (s->san_failure_mode && !s->san_exit_allowed)
                        return ST_SANITIZE_FAILED;
                s->san_failure_mode = false;
                d->dirty = true;
                return 0;
        case NVME_SANITIZE_SANACT_START_BLOCK_ERASE:
                bit = SIM_SAN_BLOCK;
                break;
        case NVME_SANITIZE_SANACT_START_OVERWRITE:
                bit = SIM_SAN_OVERWRITE;
                break;
        case NVME_SANITIZE_SANACT_START_CRYPTO_ERASE:
                bit = SIM_SAN_CRYPTO;
                break;
        default:
                return ST_INVALID_FIELD;
        }
        /* An action the controller does not support (SANICAP): Invalid Field in Command */
        if (!(c->sanitize & bit))
                return ST_INVALID_FIELD;
        if ((cdw10 & SANITIZE_NDAS) && c->ndi)
                return ST_INVALID_FIELD;
        s->op_cdw10 = cdw10;
        s->op_ause = cdw10 & SANITIZE_AUSE;
        s->op_action = (int) sanact;
        s->op_fail = c->sanitize_fail;
        s->op_stuck = c->sanitize_stuck;
        s->op_invert = false;
        s->op_passes = 1;
        if (bit == SIM_SAN_CRYPTO) {
                s->op_fill = SIM_FILL_RANDOM;
        } else if (bit == SIM_SAN_BLOCK) {
                s->op_fill = SIM_FILL_PATTERN;
                s->op_pattern[0] = (uint8_t) c->erase_pattern;
                s->op_pattern_len = 1;
        } else {
                /* OWPASS 0 means 16 passes */
                s->op_passes = (cdw10 >> 4 & 0xf) ? (cdw10 >> 4 & 0xf) : 16;
                s->op_invert = cdw10 & SANITIZE_OIPBP;
                s->op_fill = SIM_FILL_PATTERN;
                uint32_t le = htole32(cdw11);
                memcpy(s->op_pattern, &le, 4);
                s->op_pattern_len = 4;
        }
        s->san_passes_done = 0;
        sim_start(d, SIM_OP_SANITIZE, c->sanitize_seconds);
        return 0;
}

/* Format NVM (5.14, Figure 322): LBAF bits 3:0 (and LBAFU 13:12), SES bits 11:9. Runs to its end
 * before it completes. */
static int format_nvm(struct sim_drive *d, uint32_t nsid, uint32_t cdw10) {
        const struct sim_conf *c = d->conf;
        struct sim_state *s = &d->st;
        unsigned lbaf = (cdw10 & 0xf) | (cdw10 >> 8 & 0x30), ses = cdw10 >> 9 & 7;

        if (!c->format)
                return ST_INVALID_OPCODE;
        if (nsid != 1 && nsid != 0xffffffffu)
                return ST_INVALID_NS;
        if (lbaf != 0)
                return ST_INVALID_FORMAT;
        if (ses > 2 || (ses == 2 && !(c->fna & 4)))
                return ST_INVALID_FIELD;
        s->op_cdw10 = 0;
        s->op_fail = s->op_stuck = false;
        s->op_passes = 1;
        s->op_invert = false;
        s->op_action = (int) ses;
        if (ses == 2) {
                s->op_fill = SIM_FILL_RANDOM;
        } else {
                /* SES 0 erases nothing: what was there stays (a format that only remaps); SES 1
                 * leaves the drive's erase pattern. */
                s->op_fill = SIM_FILL_PATTERN;
                s->op_pattern[0] = (uint8_t) c->erase_pattern;
                s->op_pattern_len = 1;
        }
        if (ses == 0)
                return 0;
        sim_start(d, SIM_OP_FORMAT, c->format_seconds);
        sim_wait(d);
        return 0;
}

static int admin(struct sim_drive *d, uint8_t opcode, uint32_t nsid, uint32_t cdw10, uint32_t cdw11,
                 uint32_t cdw12, void *data, uint32_t len, uint64_t *result) {
        struct sim_state *s = &d->st;

        *result = 0;
        if (len && !data) {
                errno = EFAULT;
                return -1;
        }
        sim_settle(d);
        switch (opcode) {
        case nvme_admin_identify: {
                uint8_t cns = cdw10 & 0xff;

                if (len < NVME_IDENTIFY_DATA_SIZE)
                        return ST_INVALID_FIELD;
                if (cns == NVME_IDENTIFY_CNS_CTRL)
                        return identify_ctrl(d, data);
                if (cns == NVME_IDENTIFY_CNS_NS) {
                        if (nsid != 1)
                                return ST_INVALID_NS;
                        return identify_ns(d, data);
                }
                if (cns == NVME_IDENTIFY_CNS_NS_ACTIVE_LIST) {
                        memset(data, 0, len);
                        if (nsid < 1)
                                ((uint32_t *) data)[0] = htole32(1);
                        return 0;
                }
                return ST_INVALID_FIELD;
        }
        case nvme_admin_get_log_page:
                return get_log_page(d, cdw10, cdw11, cdw12, data, len);
        case nvme_admin_sanitize_nvm:
                return sanitize(d, cdw10, cdw11);
        case nvme_admin_format_nvm:
                /* 8.21: while a sanitize runs, or after one failed in restricted mode, commands
                 * other than these are aborted */
                if (s->op == SIM_OP_SANITIZE)
                        return ST_SANITIZE_IN_PROGRESS;
                if (s->san_failure_mode)
                        return ST_SANITIZE_FAILED;
                return format_nvm(d, nsid, cdw10);
        default:
                if (s->op == SIM_OP_SANITIZE)
                        return ST_SANITIZE_IN_PROGRESS;
                return ST_INVALID_OPCODE;
        }
}

int sim_nvme_ioctl(struct sim_drive *d, unsigned long req, void *arg) {
        uint64_t result;
        int r;

        if (req == NVME_IOCTL_ID)
                return 1;
        if (req == NVME_IOCTL_ADMIN_CMD) {
                struct nvme_passthru_cmd *c = arg;

                r = admin(d, c->opcode, c->nsid, c->cdw10, c->cdw11, c->cdw12, (void *) (uintptr_t) c->addr,
                          c->data_len, &result);
                c->result = (uint32_t) result;
                return r;
        }
        if (req == NVME_IOCTL_ADMIN64_CMD) {
                struct nvme_passthru_cmd64 *c = arg;

                r = admin(d, c->opcode, c->nsid, c->cdw10, c->cdw11, c->cdw12, (void *) (uintptr_t) c->addr,
                          c->data_len, &result);
                c->result = result;
                return r;
        }
        errno = ENOTTY;
        return -1;
}
