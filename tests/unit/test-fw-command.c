/* Which firmware erase command a method sends (daemon/fw-command.c), without a device: fw_resolve
 * and fw_resolve_best from capabilities made by hand (what the probe would have read), the
 * command's JSON as recorded and read back, and the names. Linked with the daemon's library. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "daemon.h"
#include "firmware.h"

#define NSID 7
#define HALF_DAY (12 * 3600)            /* an ATA security erase's timeout without an estimate */
#define FORMAT_TIMEOUT (4 * 3600)       /* Format NVM's */
#define NO_ACTION "the drive does not support this sanitize action"

static const enum fw_action sanitizes[] = {
        FW_ACTION_SANITIZE_CRYPTO, FW_ACTION_SANITIZE_BLOCK, FW_ACTION_SANITIZE_OVERWRITE,
};
static const enum fw_action all_actions[] = {
        FW_ACTION_NONE, FW_ACTION_SANITIZE_CRYPTO, FW_ACTION_SANITIZE_BLOCK, FW_ACTION_SANITIZE_OVERWRITE,
        FW_ACTION_NVME_FORMAT, FW_ACTION_ATA_SECURITY_ERASE,
};
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* An NVMe namespace whose controller can do nothing (SANICAP 0, OACS bit 1 clear), no estimates;
 * an ATA drive with neither feature set; a SCSI device that lists no SANITIZE. */
static struct fw_caps nvme_caps(void) {
        return (struct fw_caps) { .set = FW_SET_NVME,
                                  .nvme = { .nsid = NSID, .est_overwrite = -1, .est_block = -1, .est_crypto = -1 } };
}

static struct fw_caps ata_caps(void) {
        return (struct fw_caps) { .set = FW_SET_ATA, .ata = { .erase_time = -1, .enhanced_erase_time = -1 } };
}

static struct fw_caps scsi_caps(void) {
        return (struct fw_caps) { .set = FW_SET_SCSI, .scsi = { .rsoc_supported = true } };
}

/* Set the sanitize bit of action a in caps' command set. */
static void set_sanitize(struct fw_caps *caps, enum fw_action a, bool on) {
        bool *nvme = a == FW_ACTION_SANITIZE_CRYPTO ? &caps->nvme.sanitize_crypto :
                     a == FW_ACTION_SANITIZE_BLOCK ? &caps->nvme.sanitize_block : &caps->nvme.sanitize_overwrite;
        bool *ata = a == FW_ACTION_SANITIZE_CRYPTO ? &caps->ata.sanitize_crypto :
                    a == FW_ACTION_SANITIZE_BLOCK ? &caps->ata.sanitize_block : &caps->ata.sanitize_overwrite;
        bool *scsi = a == FW_ACTION_SANITIZE_CRYPTO ? &caps->scsi.sanitize_crypto :
                     a == FW_ACTION_SANITIZE_BLOCK ? &caps->scsi.sanitize_block : &caps->scsi.sanitize_overwrite;

        *(caps->set == FW_SET_NVME ? nvme : caps->set == FW_SET_ATA ? ata : scsi) = on;
}

/* fw_resolve must refuse action on caps with exactly the message "<action>: why". */
static void expect_refused(const struct fw_caps *caps, enum fw_action action, const char *why) {
        struct fw_command c;
        char err[512], want[512];

        memset(&c, 0x5a, sizeof(c));
        err[0] = '\0';
        snprintf(want, sizeof(want), "%s: %s", fw_action_name(action), why);
        if (fw_resolve(caps, action, &c, err, sizeof(err)) != -EOPNOTSUPP)
                fail_msg("%s on a %s drive: not refused", fw_action_name(action), fw_command_set_name(caps->set));
        assert_string_equal(err, want);
        /* What it would have sent is still named, with nothing else in it. */
        assert_int_equal(c.set, caps->set);
        assert_int_equal(c.action, action);
        assert_int_equal(c.estimate, -1);
        assert_int_equal(c.timeout_s, 0);
        assert_int_equal(c.password[0], '\0');
}

/* fw_resolve must accept action on caps; the command in *c. */
static void expect_resolved(const struct fw_caps *caps, enum fw_action action, struct fw_command *c) {
        char err[512] = "";

        memset(c, 0x5a, sizeof(*c));
        if (fw_resolve(caps, action, c, err, sizeof(err)) != 0)
                fail_msg("%s on a %s drive: refused: %s", fw_action_name(action), fw_command_set_name(caps->set), err);
        assert_int_equal(c->set, caps->set);
        assert_int_equal(c->action, action);
        /* What the daemon chooses later, or never: zero as resolved. */
        assert_false(c->ause);
        assert_int_equal(c->overwrite_pattern, 0);
        assert_int_equal(c->password[0], '\0');
}

/* ---- fw_resolve --------------------------------------------------------------------------------- */

/* NVMe sanitize: each action with and without each SANICAP bit; what it is sent with. */
static void test_nvme_sanitize(void **state) {
        (void) state;
        for (unsigned bits = 0; bits < 8; bits++) {
                struct fw_caps caps = nvme_caps();

                caps.nvme.sanitize_crypto = bits & 1;
                caps.nvme.sanitize_block = bits & 2;
                caps.nvme.sanitize_overwrite = bits & 4;
                caps.nvme.est_crypto = 10;
                caps.nvme.est_block = 200;
                caps.nvme.est_overwrite = 3000;
                /* Format NVM's own settings do not matter to a sanitize. */
                caps.nvme.format = true;
                caps.nvme.format_crypto = true;
                for (size_t i = 0; i < N(sanitizes); i++) {
                        struct fw_command c;

                        if (!(bits & (1u << i))) {
                                expect_refused(&caps, sanitizes[i], NO_ACTION);
                                continue;
                        }
                        expect_resolved(&caps, sanitizes[i], &c);
                        assert_int_equal(c.nsid, NSID);
                        /* A sanitize acts on the controller: every namespace, whatever FNA says. */
                        assert_true(c.all_namespaces);
                        assert_int_equal(c.estimate, i == 0 ? 10 : i == 1 ? 200 : 3000);
                        assert_int_equal(c.overwrite_passes, sanitizes[i] == FW_ACTION_SANITIZE_OVERWRITE ? 1 : 0);
                        assert_int_equal(c.ses, 0);
                        assert_false(c.enhanced);
                        assert_int_equal(c.timeout_s, 0);
                }
        }
}

/* A controller without the Sanitize Status log page's estimates: none in the command either. */
static void test_nvme_sanitize_no_estimate(void **state) {
        struct fw_caps caps = nvme_caps();
        struct fw_command c;

        (void) state;
        caps.nvme.sanitize_crypto = caps.nvme.sanitize_block = caps.nvme.sanitize_overwrite = true;
        for (size_t i = 0; i < N(sanitizes); i++) {
                expect_resolved(&caps, sanitizes[i], &c);
                assert_int_equal(c.estimate, -1);
        }
}

/* Format NVM: refused without OACS bit 1; SES 2 with FNA bit 2, else 1 (never 0); every namespace
 * when FNA bit 0 or bit 1 says so. */
static void test_nvme_format(void **state) {
        struct fw_caps caps = nvme_caps();
        struct fw_command c;

        (void) state;
        caps.nvme.format_crypto = true;
        caps.nvme.sanitize_crypto = true;
        expect_refused(&caps, FW_ACTION_NVME_FORMAT, "the controller does not support Format NVM (OACS bit 1)");
        caps.nvme.format = true;
        for (unsigned fna = 0; fna < 8; fna++) {
                caps.nvme.format_all_namespaces = fna & 1;
                caps.nvme.erase_all_namespaces = fna & 2;
                caps.nvme.format_crypto = fna & 4;
                expect_resolved(&caps, FW_ACTION_NVME_FORMAT, &c);
                assert_int_equal(c.nsid, NSID);
                assert_int_equal(c.ses, fna & 4 ? 2 : 1);
                assert_int_equal(c.all_namespaces, (fna & 3) != 0);
                assert_int_equal(c.timeout_s, FORMAT_TIMEOUT);
                assert_int_equal(c.estimate, -1);
                assert_int_equal(c.overwrite_passes, 0);
                assert_false(c.enhanced);
        }
        /* Not an NVMe drive. */
        caps = ata_caps();
        caps.ata.security_supported = true;
        expect_refused(&caps, FW_ACTION_NVME_FORMAT, "not an NVMe drive");
        caps = scsi_caps();
        caps.scsi.format_unit = true;
        expect_refused(&caps, FW_ACTION_NVME_FORMAT, "not an NVMe drive");
}

/* ATA sanitize: the feature set (word 59 bit 12) and the action's bit both; refused while security
 * is locked; frozen does not matter to it. */
static void test_ata_sanitize(void **state) {
        (void) state;
        for (unsigned bits = 0; bits < 16; bits++) {
                struct fw_caps caps = ata_caps();

                caps.ata.sanitize_supported = bits & 8;
                caps.ata.sanitize_crypto = bits & 1;
                caps.ata.sanitize_block = bits & 2;
                caps.ata.sanitize_overwrite = bits & 4;
                caps.ata.security_supported = caps.ata.security_frozen = true;
                caps.ata.erase_time = 60;
                for (size_t i = 0; i < N(sanitizes); i++) {
                        struct fw_command c;

                        if (!(bits & 8)) {
                                expect_refused(&caps, sanitizes[i], "the sanitize feature set is not supported");
                                continue;
                        }
                        if (!(bits & (1u << i))) {
                                expect_refused(&caps, sanitizes[i], NO_ACTION);
                                continue;
                        }
                        expect_resolved(&caps, sanitizes[i], &c);
                        assert_int_equal(c.nsid, 0);
                        assert_false(c.all_namespaces);
                        /* ATA gives no sanitize estimate (the erase times are the security erase's). */
                        assert_int_equal(c.estimate, -1);
                        assert_int_equal(c.timeout_s, 0);
                        assert_int_equal(c.overwrite_passes, sanitizes[i] == FW_ACTION_SANITIZE_OVERWRITE ? 1 : 0);
                        assert_false(c.enhanced);
                }
        }
}

static void test_ata_sanitize_locked(void **state) {
        struct fw_caps caps = ata_caps();

        (void) state;
        caps.ata.sanitize_supported = caps.ata.sanitize_crypto = caps.ata.sanitize_block = true;
        caps.ata.sanitize_overwrite = true;
        caps.ata.security_supported = caps.ata.security_enabled = caps.ata.security_locked = true;
        for (size_t i = 0; i < N(sanitizes); i++)
                expect_refused(&caps, sanitizes[i], "security locked: the drive aborts SANITIZE until it is unlocked");
        /* The feature set missing is said first. */
        caps.ata.sanitize_supported = false;
        expect_refused(&caps, FW_ACTION_SANITIZE_CRYPTO, "the sanitize feature set is not supported");
}

/* ATA security erase: refused when not supported, locked, count expired or frozen; enhanced
 * where supported, with the drive's estimate for that mode; timeout 2 * estimate + 600 s, else
 * half a day. */
static void test_ata_security_erase(void **state) {
        static const struct {
                bool enhanced_supported;
                fw_seconds erase_time, enhanced_time;
                bool enhanced;
                fw_seconds estimate;
                unsigned timeout;
        } cases[] = {
                { false, -1, -1, false, -1, HALF_DAY },
                { false, 0, -1, false, 0, HALF_DAY },      /* 0: no time to go by either */
                { false, 120, -1, false, 120, 840 },
                { false, 120, 60, false, 120, 840 },       /* the enhanced time unused */
                { false, 508 * 60, -1, false, 508 * 60, 2 * 508 * 60 + 600 },
                { true, 120, 60, true, 60, 720 },
                { true, 120, -1, true, -1, HALF_DAY },     /* the normal time is not the enhanced one's */
                { true, -1, 7200, true, 7200, 15000 },
                { true, 65532 * 60, 65532 * 60, true, 65532 * 60, 2 * 65532 * 60 + 600 }, /* word 90 at most */
        };
        struct fw_caps caps;
        struct fw_command c;

        (void) state;
        for (size_t i = 0; i < N(cases); i++) {
                caps = ata_caps();
                caps.ata.security_supported = true;
                caps.ata.enhanced_erase_supported = cases[i].enhanced_supported;
                caps.ata.erase_time = cases[i].erase_time;
                caps.ata.enhanced_erase_time = cases[i].enhanced_time;
                expect_resolved(&caps, FW_ACTION_ATA_SECURITY_ERASE, &c);
                assert_int_equal(c.enhanced, cases[i].enhanced);
                assert_int_equal(c.estimate, cases[i].estimate);
                if (c.timeout_s != cases[i].timeout)
                        fail_msg("case %zu: timeout %u, expected %u", i, c.timeout_s, cases[i].timeout);
                assert_int_equal(c.nsid, 0);
                assert_int_equal(c.ses, 0);
                assert_int_equal(c.overwrite_passes, 0);
                assert_false(c.all_namespaces);
        }

        /* Each reason alone, then in the order the module says them. */
        caps = ata_caps();
        caps.ata.sanitize_supported = caps.ata.sanitize_crypto = true;     /* not what is asked */
        expect_refused(&caps, FW_ACTION_ATA_SECURITY_ERASE, "the security feature set is not supported");
        caps.ata.security_supported = true;
        caps.ata.security_frozen = true;
        expect_refused(&caps, FW_ACTION_ATA_SECURITY_ERASE,
                       "security frozen: the drive refuses SECURITY ERASE UNIT until it is power-cycled "
                       "(the firmware or the operating system froze it at boot)");
        caps.ata.security_frozen = false;
        caps.ata.security_count_expired = true;
        expect_refused(&caps, FW_ACTION_ATA_SECURITY_ERASE,
                       "security count expired: after too many wrong passwords the drive refuses "
                       "SECURITY ERASE UNIT until it is power-cycled");
        caps.ata.security_count_expired = false;
        caps.ata.security_enabled = caps.ata.security_locked = true;
        expect_refused(&caps, FW_ACTION_ATA_SECURITY_ERASE,
                       "security locked: the drive is locked with a password we do not know");
        caps.ata.security_frozen = caps.ata.security_count_expired = true;
        expect_refused(&caps, FW_ACTION_ATA_SECURITY_ERASE,
                       "security locked: the drive is locked with a password we do not know");
        caps.ata.security_supported = false;
        expect_refused(&caps, FW_ACTION_ATA_SECURITY_ERASE, "the security feature set is not supported");

        /* Not an ATA drive. */
        caps = nvme_caps();
        caps.nvme.format = true;
        expect_refused(&caps, FW_ACTION_ATA_SECURITY_ERASE, "not an ATA drive");
        caps = scsi_caps();
        expect_refused(&caps, FW_ACTION_ATA_SECURITY_ERASE, "not an ATA drive");
}

/* SCSI SANITIZE: each service action as REPORT SUPPORTED OPERATION CODES listed it. */
static void test_scsi_sanitize(void **state) {
        (void) state;
        for (unsigned bits = 0; bits < 8; bits++) {
                struct fw_caps caps = scsi_caps();

                caps.scsi.format_unit = true;
                for (size_t i = 0; i < N(sanitizes); i++)
                        set_sanitize(&caps, sanitizes[i], bits & (1u << i));
                for (size_t i = 0; i < N(sanitizes); i++) {
                        struct fw_command c;

                        if (!(bits & (1u << i))) {
                                expect_refused(&caps, sanitizes[i], NO_ACTION);
                                continue;
                        }
                        expect_resolved(&caps, sanitizes[i], &c);
                        assert_int_equal(c.nsid, 0);
                        assert_false(c.all_namespaces);
                        assert_int_equal(c.estimate, -1);
                        assert_int_equal(c.timeout_s, 0);
                        assert_int_equal(c.overwrite_passes, sanitizes[i] == FW_ACTION_SANITIZE_OVERWRITE ? 1 : 0);
                }
        }
        /* The sanitize bits of the other command sets are not the SCSI ones. */
        {
                struct fw_caps caps = scsi_caps();

                caps.nvme.sanitize_crypto = caps.ata.sanitize_supported = caps.ata.sanitize_crypto = true;
                expect_refused(&caps, FW_ACTION_SANITIZE_CRYPTO, NO_ACTION);
        }
}

/* A device firmware commands are refused on (behind a USB bridge), or that speaks none: every
 * action refused with the reason; no action at all refused too. */
static void test_unreachable(void **state) {
        static const char none[] = "the device answers no firmware erase command (it is not an NVMe, ATA or SCSI drive)";
        static char bridge[] = "behind a USB bridge: firmware commands are not passed on safely";
        struct fw_caps caps;
        struct fw_command c;
        char small[12];

        (void) state;
        /* Everything supported, but refused. */
        caps = nvme_caps();
        caps.nvme.sanitize_crypto = caps.nvme.sanitize_block = caps.nvme.sanitize_overwrite = true;
        caps.nvme.format = true;
        caps.refused = bridge;
        for (size_t i = 0; i < N(all_actions); i++)
                expect_refused(&caps, all_actions[i], bridge);
        caps = ata_caps();
        caps.ata.security_supported = caps.ata.sanitize_supported = caps.ata.sanitize_block = true;
        caps.refused = bridge;
        for (size_t i = 0; i < N(all_actions); i++)
                expect_refused(&caps, all_actions[i], bridge);
        caps.set = FW_SET_NONE;
        caps.refused = NULL;
        for (size_t i = 0; i < N(all_actions); i++)
                expect_refused(&caps, all_actions[i], none);

        /* No action, or one out of range, on a drive that could do everything. */
        caps = nvme_caps();
        caps.nvme.sanitize_crypto = caps.nvme.format = true;
        expect_refused(&caps, FW_ACTION_NONE, "no such firmware command");
        expect_refused(&caps, (enum fw_action) 99, "no such firmware command");

        /* A short message buffer: cut, never overrun (ASan watches). */
        memset(small, 'x', sizeof(small));
        assert_int_equal(fw_resolve(&caps, FW_ACTION_ATA_SECURITY_ERASE, &c, small, sizeof(small)), -EOPNOTSUPP);
        assert_int_equal(strlen(small), sizeof(small) - 1);
        assert_memory_equal(small, "ata-secure-", sizeof(small) - 1);
}

/* ---- fw_resolve_best ---------------------------------------------------------------------------- */

static void expect_best(const struct fw_caps *caps, bool sanitize_only, enum fw_action want) {
        struct fw_command c, direct;
        char err[1024] = "", err2[512];

        if (fw_resolve_best(caps, sanitize_only, &c, err, sizeof(err)) != 0)
                fail_msg("best of a %s drive: refused: %s", fw_command_set_name(caps->set), err);
        if (c.action != want)
                fail_msg("best of a %s drive: %s, expected %s", fw_command_set_name(caps->set),
                         fw_action_name(c.action), fw_action_name(want));
        /* The same command as asked for by name. */
        assert_int_equal(fw_resolve(caps, want, &direct, err2, sizeof(err2)), 0);
        assert_int_equal(c.set, direct.set);
        assert_int_equal(c.nsid, direct.nsid);
        assert_int_equal(c.ses, direct.ses);
        assert_int_equal(c.enhanced, direct.enhanced);
        assert_int_equal(c.overwrite_passes, direct.overwrite_passes);
        assert_int_equal(c.timeout_s, direct.timeout_s);
        assert_int_equal(c.estimate, direct.estimate);
        assert_int_equal(c.all_namespaces, direct.all_namespaces);
}

static void expect_best_refused(const struct fw_caps *caps, bool sanitize_only, const char *want) {
        struct fw_command c;
        char err[1024] = "";

        if (fw_resolve_best(caps, sanitize_only, &c, err, sizeof(err)) != -EOPNOTSUPP)
                fail_msg("best of a %s drive: %s, expected a refusal", fw_command_set_name(caps->set),
                         fw_action_name(c.action));
        assert_string_equal(err, want);
}

/* The order: sanitize crypto, block, overwrite, then Format NVM, then ATA security erase. */
static void test_best_order(void **state) {
        struct fw_caps caps;

        (void) state;
        /* NVMe: each sanitize bit set with all the weaker ones, and Format NVM. */
        caps = nvme_caps();
        caps.nvme.format = true;
        caps.nvme.sanitize_crypto = caps.nvme.sanitize_block = caps.nvme.sanitize_overwrite = true;
        expect_best(&caps, false, FW_ACTION_SANITIZE_CRYPTO);
        expect_best(&caps, true, FW_ACTION_SANITIZE_CRYPTO);
        caps.nvme.sanitize_crypto = false;
        expect_best(&caps, false, FW_ACTION_SANITIZE_BLOCK);
        caps.nvme.sanitize_block = false;
        expect_best(&caps, false, FW_ACTION_SANITIZE_OVERWRITE);
        expect_best(&caps, true, FW_ACTION_SANITIZE_OVERWRITE);
        caps.nvme.sanitize_overwrite = false;
        expect_best(&caps, false, FW_ACTION_NVME_FORMAT);
        /* Crypto and overwrite without block: crypto; block and overwrite: block. */
        caps.nvme.sanitize_crypto = caps.nvme.sanitize_overwrite = true;
        expect_best(&caps, false, FW_ACTION_SANITIZE_CRYPTO);
        caps.nvme.sanitize_crypto = false;
        caps.nvme.sanitize_block = true;
        expect_best(&caps, true, FW_ACTION_SANITIZE_BLOCK);

        /* ATA: sanitize before security erase. */
        caps = ata_caps();
        caps.ata.security_supported = caps.ata.enhanced_erase_supported = true;
        caps.ata.enhanced_erase_time = 600;
        expect_best(&caps, false, FW_ACTION_ATA_SECURITY_ERASE);
        caps.ata.sanitize_supported = caps.ata.sanitize_overwrite = true;
        expect_best(&caps, false, FW_ACTION_SANITIZE_OVERWRITE);
        caps.ata.sanitize_block = true;
        expect_best(&caps, false, FW_ACTION_SANITIZE_BLOCK);
        caps.ata.sanitize_crypto = true;
        expect_best(&caps, false, FW_ACTION_SANITIZE_CRYPTO);
        /* Frozen: sanitize still, security erase not. */
        caps.ata.security_frozen = true;
        expect_best(&caps, false, FW_ACTION_SANITIZE_CRYPTO);

        /* SCSI. */
        caps = scsi_caps();
        caps.scsi.sanitize_overwrite = caps.scsi.sanitize_block = true;
        expect_best(&caps, false, FW_ACTION_SANITIZE_BLOCK);
        expect_best(&caps, true, FW_ACTION_SANITIZE_BLOCK);
}

/* Why none: one reason per kind (sanitize, format, security erase); sanitize_only stops after
 * sanitize; a drive's state is kept as the sanitize reason rather than "no action". */
static void test_best_refused(void **state) {
        static char bridge[] = "behind a USB bridge";
        struct fw_caps caps;

        (void) state;
        caps = nvme_caps();
        expect_best_refused(&caps, false, "no firmware erase: sanitize: the drive supports no sanitize action; "
                            "nvme-format: the controller does not support Format NVM (OACS bit 1); "
                            "ata-secure-erase: not an ATA drive");
        expect_best_refused(&caps, true, "the drive supports no sanitize action");
        /* Format NVM there, but only sanitize asked for. */
        caps.nvme.format = caps.nvme.format_crypto = true;
        expect_best_refused(&caps, true, "the drive supports no sanitize action");
        expect_best(&caps, false, FW_ACTION_NVME_FORMAT);

        caps = scsi_caps();
        caps.scsi.format_unit = true;
        expect_best_refused(&caps, false, "no firmware erase: sanitize: the drive supports no sanitize action; "
                            "nvme-format: not an NVMe drive; ata-secure-erase: not an ATA drive");
        expect_best_refused(&caps, true, "the drive supports no sanitize action");

        /* ATA with the sanitize feature set but no action in it, security frozen. */
        caps = ata_caps();
        caps.ata.sanitize_supported = true;
        caps.ata.security_supported = caps.ata.security_frozen = true;
        expect_best_refused(&caps, false, "no firmware erase: sanitize: the drive supports no sanitize action; "
                            "nvme-format: not an NVMe drive; ata-secure-erase: security frozen: the drive "
                            "refuses SECURITY ERASE UNIT until it is power-cycled (the firmware or the "
                            "operating system froze it at boot)");

        /* ATA without the sanitize feature set: that is the reason given. */
        caps = ata_caps();
        expect_best_refused(&caps, true, "the sanitize feature set is not supported");

        /* A locked ATA drive: the lock is why, for sanitize as for security erase. */
        caps = ata_caps();
        caps.ata.sanitize_supported = caps.ata.sanitize_crypto = caps.ata.sanitize_block = true;
        caps.ata.security_supported = caps.ata.security_enabled = caps.ata.security_locked = true;
        expect_best_refused(&caps, false, "no firmware erase: sanitize: security locked: the drive "
                            "aborts SANITIZE until it is unlocked; nvme-format: not an NVMe drive; "
                            "ata-secure-erase: security locked: the drive is locked with a password we do not know");
        expect_best_refused(&caps, true, "security locked: the drive aborts "
                            "SANITIZE until it is unlocked");

        /* Refused, or no command set: that alone. */
        caps = nvme_caps();
        caps.nvme.sanitize_crypto = caps.nvme.format = true;
        caps.refused = bridge;
        expect_best_refused(&caps, false, bridge);
        expect_best_refused(&caps, true, bridge);
        caps = (struct fw_caps) { .set = FW_SET_NONE };
        expect_best_refused(&caps, false,
                            "the device answers no firmware erase command (it is not an NVMe, ATA or SCSI drive)");
}

/* ---- names ------------------------------------------------------------------------------------- */

static void test_names(void **state) {
        static const char *const names[] = {
                "none", "sanitize-crypto", "sanitize-block", "sanitize-overwrite", "nvme-format", "ata-secure-erase",
        };

        (void) state;
        for (size_t i = 0; i < N(all_actions); i++) {
                assert_string_equal(fw_action_name(all_actions[i]), names[i]);
                assert_int_equal(fw_action_from_name(names[i]), all_actions[i]);
                assert_int_equal(fw_action_from_name(fw_action_name(all_actions[i])), all_actions[i]);
        }
        assert_string_equal(fw_action_name((enum fw_action) 6), "none");
        assert_string_equal(fw_action_name((enum fw_action) -1), "none");
        assert_int_equal(fw_action_from_name(NULL), FW_ACTION_NONE);
        assert_int_equal(fw_action_from_name(""), FW_ACTION_NONE);
        assert_int_equal(fw_action_from_name("sanitize"), FW_ACTION_NONE);
        assert_int_equal(fw_action_from_name("purge"), FW_ACTION_NONE);
        assert_int_equal(fw_action_from_name("Sanitize-crypto"), FW_ACTION_NONE);
        assert_int_equal(fw_action_from_name("sanitize-crypto "), FW_ACTION_NONE);

        assert_string_equal(fw_run_state_name(FW_RUN_UNKNOWN), "unknown");
        assert_string_equal(fw_run_state_name(FW_RUN_RUNNING), "running");
        assert_string_equal(fw_run_state_name(FW_RUN_DONE), "done");
        assert_string_equal(fw_run_state_name(FW_RUN_FAILED), "failed");
        assert_string_equal(fw_run_state_name((enum fw_run_state) 42), "unknown");
}

/* Sanitize runs on in the drive; Format NVM and security erase block until they end. */
static void test_background(void **state) {
        (void) state;
        assert_true(fw_action_background(FW_ACTION_SANITIZE_CRYPTO));
        assert_true(fw_action_background(FW_ACTION_SANITIZE_BLOCK));
        assert_true(fw_action_background(FW_ACTION_SANITIZE_OVERWRITE));
        assert_false(fw_action_background(FW_ACTION_NONE));
        assert_false(fw_action_background(FW_ACTION_NVME_FORMAT));
        assert_false(fw_action_background(FW_ACTION_ATA_SECURITY_ERASE));
        assert_false(fw_action_background((enum fw_action) 99));
}

/* ---- the command as JSON ------------------------------------------------------------------------ */

static void assert_command_equal(const struct fw_command *a, const struct fw_command *b) {
        assert_int_equal(a->set, b->set);
        assert_int_equal(a->action, b->action);
        assert_int_equal(a->nsid, b->nsid);
        assert_int_equal(a->ses, b->ses);
        assert_int_equal(a->enhanced, b->enhanced);
        assert_int_equal(a->overwrite_passes, b->overwrite_passes);
        assert_int_equal(a->overwrite_pattern, b->overwrite_pattern);
        assert_int_equal(a->ause, b->ause);
        assert_string_equal(a->password, b->password);
        assert_int_equal(a->timeout_s, b->timeout_s);
        assert_int_equal(a->estimate, b->estimate);
        assert_int_equal(a->all_namespaces, b->all_namespaces);
}

/* c as JSON, through its text (as a record holds it), read back. */
static int json_round_trip(const struct fw_command *c, bool with_password, struct fw_command *back, char **text) {
        struct json_object *o = fw_command_json(c, with_password), *parsed;
        int r;

        assert_non_null(o);
        *text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        assert_non_null(*text);
        json_object_put(o);
        parsed = json_tokener_parse(*text);
        assert_non_null(parsed);
        memset(back, 0x5a, sizeof(*back));
        r = fw_command_from_json(parsed, back);
        json_object_put(parsed);
        return r;
}

static const char *json_string_of(struct json_object *o, const char *key) {
        struct json_object *v;

        return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

/* Every command fw_resolve makes, and the parameters set later (AUSE, a pattern, a password),
 * reads back the same. */
static void test_json_round_trip(void **state) {
        struct fw_command cmds[16], back;
        struct fw_caps caps;
        size_t n = 0;
        char err[512], *text;

        (void) state;
        caps = nvme_caps();
        caps.nvme.nsid = 0xfffffffe;
        caps.nvme.sanitize_crypto = caps.nvme.sanitize_block = caps.nvme.sanitize_overwrite = true;
        caps.nvme.est_crypto = 2;
        caps.nvme.est_overwrite = 86400;
        caps.nvme.format = true;
        for (size_t i = 0; i < N(sanitizes); i++)
                assert_int_equal(fw_resolve(&caps, sanitizes[i], &cmds[n++], err, sizeof(err)), 0);
        assert_int_equal(fw_resolve(&caps, FW_ACTION_NVME_FORMAT, &cmds[n++], err, sizeof(err)), 0);
        caps.nvme.format_crypto = caps.nvme.format_all_namespaces = true;
        assert_int_equal(fw_resolve(&caps, FW_ACTION_NVME_FORMAT, &cmds[n++], err, sizeof(err)), 0);
        caps = ata_caps();
        caps.ata.sanitize_supported = caps.ata.sanitize_crypto = caps.ata.sanitize_block = true;
        caps.ata.sanitize_overwrite = caps.ata.security_supported = true;
        caps.ata.erase_time = 7200;
        for (size_t i = 0; i < N(sanitizes); i++)
                assert_int_equal(fw_resolve(&caps, sanitizes[i], &cmds[n++], err, sizeof(err)), 0);
        assert_int_equal(fw_resolve(&caps, FW_ACTION_ATA_SECURITY_ERASE, &cmds[n++], err, sizeof(err)), 0);
        caps.ata.enhanced_erase_supported = true;
        assert_int_equal(fw_resolve(&caps, FW_ACTION_ATA_SECURITY_ERASE, &cmds[n++], err, sizeof(err)), 0);
        caps = scsi_caps();
        caps.scsi.sanitize_crypto = caps.scsi.sanitize_block = caps.scsi.sanitize_overwrite = true;
        for (size_t i = 0; i < N(sanitizes); i++)
                assert_int_equal(fw_resolve(&caps, sanitizes[i], &cmds[n++], err, sizeof(err)), 0);
        assert_int_equal(n, 13);

        for (size_t i = 0; i < n; i++) {
                struct fw_command c = cmds[i];

                for (unsigned variant = 0; variant < 2; variant++) {
                        if (variant) {
                                /* What the job sets after resolving. */
                                c.ause = fw_action_background(c.action);
                                if (c.action == FW_ACTION_SANITIZE_OVERWRITE) {
                                        c.overwrite_passes = 16;
                                        c.overwrite_pattern = 0xdeadbeef;
                                }
                        }
                        if (c.action == FW_ACTION_ATA_SECURITY_ERASE)
                                snprintf(c.password, sizeof(c.password), variant ? "wiped-0123456789abcdef" :
                                         "0123456789abcdef0123456789abcdef");
                        if (json_round_trip(&c, true, &back, &text) != 0)
                                fail_msg("command %zu (%s): does not read back: %s", i, fw_action_name(c.action), text);
                        assert_command_equal(&c, &back);
                        free(text);
                }
        }
}

/* What the JSON says, by the specifications' names. */
static void test_json_fields(void **state) {
        static const struct {
                enum fw_command_set set;
                enum fw_action action;
                const char *command, *key, *value, *ause_key;
        } cases[] = {
                { FW_SET_NVME, FW_ACTION_SANITIZE_CRYPTO, "Sanitize (NVMe 5.24)", "sanact", "100b crypto erase", "ause" },
                { FW_SET_NVME, FW_ACTION_SANITIZE_BLOCK, "Sanitize (NVMe 5.24)", "sanact", "010b block erase", "ause" },
                { FW_SET_NVME, FW_ACTION_SANITIZE_OVERWRITE, "Sanitize (NVMe 5.24)", "sanact", "011b overwrite", "ause" },
                { FW_SET_ATA, FW_ACTION_SANITIZE_CRYPTO, "SANITIZE DEVICE (ATA B4h)", "feature",
                  "0011h CRYPTO SCRAMBLE EXT", "failure_mode" },
                { FW_SET_ATA, FW_ACTION_SANITIZE_BLOCK, "SANITIZE DEVICE (ATA B4h)", "feature", "0012h BLOCK ERASE EXT",
                  "failure_mode" },
                { FW_SET_ATA, FW_ACTION_SANITIZE_OVERWRITE, "SANITIZE DEVICE (ATA B4h)", "feature", "0014h OVERWRITE EXT",
                  "failure_mode" },
                { FW_SET_SCSI, FW_ACTION_SANITIZE_CRYPTO, "SANITIZE (SCSI 48h, IMMED)", "service_action",
                  "03h CRYPTOGRAPHIC ERASE", "ause" },
                { FW_SET_SCSI, FW_ACTION_SANITIZE_BLOCK, "SANITIZE (SCSI 48h, IMMED)", "service_action", "02h BLOCK ERASE",
                  "ause" },
                { FW_SET_SCSI, FW_ACTION_SANITIZE_OVERWRITE, "SANITIZE (SCSI 48h, IMMED)", "service_action",
                  "01h OVERWRITE", "ause" },
        };
        struct json_object *o, *v;

        (void) state;
        for (size_t i = 0; i < N(cases); i++) {
                struct fw_command c = { .set = cases[i].set, .action = cases[i].action, .nsid = 1, .estimate = -1,
                                        .ause = true };

                if (c.action == FW_ACTION_SANITIZE_OVERWRITE) {
                        c.overwrite_passes = 3;
                        c.overwrite_pattern = 0xa5;
                }
                o = fw_command_json(&c, true);
                assert_non_null(o);
                assert_string_equal(json_string_of(o, "action"), fw_action_name(c.action));
                assert_string_equal(json_string_of(o, "command_set"), fw_command_set_name(c.set));
                assert_string_equal(json_string_of(o, "command"), cases[i].command);
                assert_string_equal(json_string_of(o, cases[i].key), cases[i].value);
                assert_true(json_object_object_get_ex(o, cases[i].ause_key, &v));
                assert_true(json_object_get_boolean(v));
                assert_int_equal(json_object_object_get_ex(o, "nsid", NULL), c.set == FW_SET_NVME);
                assert_int_equal(json_object_object_get_ex(o, "all_namespaces", NULL), c.set == FW_SET_NVME);
                if (c.action == FW_ACTION_SANITIZE_OVERWRITE) {
                        assert_string_equal(json_string_of(o, "overwrite_pattern"), "0x000000a5");
                        assert_true(json_object_object_get_ex(o, "overwrite_passes", &v));
                        assert_int_equal(json_object_get_int(v), 3);
                } else {
                        assert_false(json_object_object_get_ex(o, "overwrite_passes", NULL));
                }
                assert_false(json_object_object_get_ex(o, "timeout_s", NULL));
                assert_false(json_object_object_get_ex(o, "temporary_password", NULL));
                /* No estimate: null, there. */
                assert_true(json_object_object_get_ex(o, "drive_estimate_s", &v));
                assert_null(v);
                json_object_put(o);
        }

        {
                struct fw_command c = { .set = FW_SET_NVME, .action = FW_ACTION_NVME_FORMAT, .nsid = 3, .ses = 2,
                                        .timeout_s = FORMAT_TIMEOUT, .estimate = -1 };

                o = fw_command_json(&c, false);
                assert_string_equal(json_string_of(o, "command"), "Format NVM (NVMe 5.14)");
                assert_string_equal(json_string_of(o, "ses_name"), "cryptographic erase");
                assert_true(json_object_object_get_ex(o, "ses", &v));
                assert_int_equal(json_object_get_int(v), 2);
                assert_true(json_object_object_get_ex(o, "timeout_s", &v));
                assert_int_equal(json_object_get_int(v), FORMAT_TIMEOUT);
                assert_false(json_object_object_get_ex(o, "sanact", NULL));
                json_object_put(o);
                c.ses = 1;
                o = fw_command_json(&c, false);
                assert_string_equal(json_string_of(o, "ses_name"), "user data erase");
                json_object_put(o);
        }
}

/* The ATA password: recorded (with_password), never reported; a record without it is refused,
 * since the daemon could not remove the password it set. */
static void test_json_password(void **state) {
        static const char pw[] = "wiped-5ec7e75ec7e75ec7";
        struct fw_command c = { .set = FW_SET_ATA, .action = FW_ACTION_ATA_SECURITY_ERASE, .enhanced = true,
                                .timeout_s = 840, .estimate = 120 };
        struct fw_command back;
        struct json_object *o, *v;
        char *text;

        (void) state;
        snprintf(c.password, sizeof(c.password), "%s", pw);
        o = fw_command_json(&c, false);
        assert_non_null(o);
        assert_false(json_object_object_get_ex(o, "temporary_password", NULL));
        assert_null(strstr(json_object_to_json_string(o), pw));
        assert_string_equal(json_string_of(o, "command"),
                            "SECURITY SET PASSWORD, SECURITY ERASE PREPARE, SECURITY ERASE UNIT (ATA F1h, F3h, F4h)");
        assert_true(json_object_object_get_ex(o, "enhanced", &v));
        assert_true(json_object_get_boolean(v));
        assert_true(json_object_object_get_ex(o, "drive_estimate_s", &v));
        assert_int_equal(json_object_get_int64(v), 120);
        json_object_put(o);
        assert_int_equal(json_round_trip(&c, false, &back, &text), -EINVAL);
        free(text);

        o = fw_command_json(&c, true);
        assert_string_equal(json_string_of(o, "temporary_password"), pw);
        json_object_put(o);
        assert_int_equal(json_round_trip(&c, true, &back, &text), 0);
        assert_string_equal(back.password, pw);
        free(text);

        /* An empty password is no password. */
        c.password[0] = '\0';
        assert_int_equal(json_round_trip(&c, true, &back, &text), -EINVAL);
        free(text);

        /* Other commands have none to record, and need none. */
        c = (struct fw_command) { .set = FW_SET_ATA, .action = FW_ACTION_SANITIZE_CRYPTO, .estimate = -1 };
        o = fw_command_json(&c, true);
        assert_false(json_object_object_get_ex(o, "temporary_password", NULL));
        json_object_put(o);
        assert_int_equal(json_round_trip(&c, false, &back, &text), 0);
        free(text);
}

/* Records that do not name a command the daemon can send. */
static void test_json_bad(void **state) {
        static const char *const bad[] = {
                "[]",
                "\"sanitize-crypto\"",
                "{}",
                "{\"command_set\": \"nvme\"}",
                "{\"action\": \"sanitize-crypto\"}",
                "{\"action\": \"none\", \"command_set\": \"nvme\"}",
                "{\"action\": \"sanitize\", \"command_set\": \"nvme\"}",
                "{\"action\": \"purge\", \"command_set\": \"ata\"}",
                "{\"action\": \"sanitize-crypto\", \"command_set\": \"none\"}",
                "{\"action\": \"sanitize-crypto\", \"command_set\": \"NVMe\"}",
                "{\"action\": \"sanitize-crypto\", \"command_set\": \"sata\"}",
                "{\"action\": \"sanitize-crypto\", \"command_set\": 1}",
                /* Format NVM without a secure erase setting, or one that does not exist */
                "{\"action\": \"nvme-format\", \"command_set\": \"nvme\", \"nsid\": 1}",
                "{\"action\": \"nvme-format\", \"command_set\": \"nvme\", \"nsid\": 1, \"ses\": 0}",
                "{\"action\": \"nvme-format\", \"command_set\": \"nvme\", \"nsid\": 1, \"ses\": 3}",
                "{\"action\": \"nvme-format\", \"command_set\": \"nvme\", \"nsid\": 1, \"ses\": -1}",
                "{\"action\": \"nvme-format\", \"command_set\": \"nvme\", \"nsid\": 1, \"ses\": \"2\"}",
                /* A security erase without its password */
                "{\"action\": \"ata-secure-erase\", \"command_set\": \"ata\", \"enhanced\": true}",
                "{\"action\": \"ata-secure-erase\", \"command_set\": \"ata\", \"temporary_password\": \"\"}",
        };
        struct fw_command c;

        (void) state;
        for (size_t i = 0; i < N(bad); i++) {
                struct json_object *o = json_tokener_parse(bad[i]);

                assert_non_null(o);
                if (fw_command_from_json(o, &c) != -EINVAL)
                        fail_msg("%s: accepted", bad[i]);
                json_object_put(o);
        }
        assert_int_equal(fw_command_from_json(NULL, &c), -EINVAL);

        /* The least a good one needs; the rest defaults. */
        {
                struct json_object *o = json_tokener_parse("{\"action\": \"sanitize-block\", \"command_set\": \"scsi\"}");

                assert_int_equal(fw_command_from_json(o, &c), 0);
                assert_int_equal(c.set, FW_SET_SCSI);
                assert_int_equal(c.action, FW_ACTION_SANITIZE_BLOCK);
                assert_int_equal(c.estimate, -1);
                assert_int_equal(c.timeout_s, 0);
                assert_false(c.ause);
                json_object_put(o);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_nvme_sanitize),
                cmocka_unit_test(test_nvme_sanitize_no_estimate),
                cmocka_unit_test(test_nvme_format),
                cmocka_unit_test(test_ata_sanitize),
                cmocka_unit_test(test_ata_sanitize_locked),
                cmocka_unit_test(test_ata_security_erase),
                cmocka_unit_test(test_scsi_sanitize),
                cmocka_unit_test(test_unreachable),
                cmocka_unit_test(test_best_order),
                cmocka_unit_test(test_best_refused),
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_background),
                cmocka_unit_test(test_json_round_trip),
                cmocka_unit_test(test_json_fields),
                cmocka_unit_test(test_json_password),
                cmocka_unit_test(test_json_bad),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
