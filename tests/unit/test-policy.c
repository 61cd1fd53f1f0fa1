/* The bay policies' files and matching (daemon/policy.c), without a device or a daemon: what a
 * policy file gives, every problem of a bad one as "FILE:LINE: message" with a did-you-mean, that
 * a policy without a match criterion is refused, and which identities a policy matches (every
 * criterion given must hold, the values of one key are ORed, a partition never matches). Linked
 * with the daemon's library. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "daemon.h"

static int parse(struct policy *p, const char *text, char *err, size_t n) {
        return policy_parse(p, "bay", "/etc/wiped/policies.d/bay.conf", text, strlen(text), err, n);
}

static void test_parse(void **state) {
        const char *text =
                "# bays 1 to 4 of the front cage\n"
                "match = /dev/disk/by-path/pci-0000:00:1f.2-ata-[1-4]\n"
                "match = /dev/disk/by-path/pci-0000:00:1f.2-ata-[1-4].0\n"
                "transport = sata, usb\n"
                "  rotational = yes\r\n"
                "min-size = 100G\n"
                "max-size = 20T\n"
                "model = ST*\n"
                "serial = Z*\n"
                "content = any\n"
                "method = random-zero\n"
                "verify = sample=5\n"
                "cipher = chacha20\n"
                "max-rate = 200M\n"
                "hook = /usr/bin/ledctl locate={device}\n"
                "hook-timeout = 30\n"
                "enabled = no\n"
                "existing = wipe\n"
                "settle = 0.5\n";
        struct policy p;
        char err[1024];

        (void) state;
        assert_int_equal(parse(&p, text, err, sizeof(err)), 0);
        assert_string_equal(p.name, "bay");
        assert_int_equal(p.n_match, 2);
        assert_string_equal(p.match[1], "/dev/disk/by-path/pci-0000:00:1f.2-ata-[1-4].0");
        assert_int_equal(p.n_transport, 2);
        assert_string_equal(p.transport[0], "sata");
        assert_string_equal(p.transport[1], "usb");
        assert_int_equal(p.rotational, 1);
        assert_int_equal(p.min_size, 100ull << 30);
        assert_int_equal(p.max_size, 20ull << 40);
        assert_string_equal(p.model[0], "ST*");
        assert_string_equal(p.serial[0], "Z*");
        assert_true(p.content_any);
        assert_string_equal(p.method, "random-zero");
        assert_string_equal(p.verify, "sample=5");
        assert_string_equal(p.cipher, "chacha20");
        assert_true(p.have_max_rate);
        assert_int_equal(p.max_rate, 200000000);
        assert_string_equal(p.hook, "/usr/bin/ledctl locate={device}");
        assert_true(p.hook_timeout == 30);
        assert_false(p.enabled);
        assert_true(p.existing_wipe);
        assert_true(p.settle == 0.5);
        policy_done(&p);

        /* The defaults: content empty, enabled, existing ignore, settle 2 s, the daemon's wipe. */
        assert_int_equal(parse(&p, "serial = WD-*\n", err, sizeof(err)), 0);
        assert_false(p.content_any);
        assert_true(p.enabled);
        assert_false(p.existing_wipe);
        assert_true(p.settle == POLICY_SETTLE_DEFAULT);
        assert_int_equal(p.rotational, -1);
        assert_null(p.method);
        assert_null(p.verify);
        assert_false(p.have_max_rate);
        policy_done(&p);
}

static void test_errors(void **state) {
        struct policy p;
        char err[2048];

        (void) state;
        /* Every problem at once, one a line, with the file and line. */
        assert_int_equal(parse(&p,
                               "mach = /dev/sd*\n"              /* 1: a typo */
                               "backing-file = /x/*.img\n"
                               "content = some\n"               /* 3 */
                               "transport = sata, usbb\n"       /* 4 */
                               "settle = -1\n"                  /* 5 */
                               "method = nope\n"                /* 6 */
                               "settle = 3\n"
                               "settle = 4\n"                   /* 8: a duplicate */
                               "match = dev/sd*\n"              /* 9: not absolute */
                               "no equals sign\n",              /* 10 */
                               err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "/etc/wiped/policies.d/bay.conf:1: unknown key \"mach\"; did you mean match?"));
        assert_non_null(strstr(err, "bay.conf:3: content = some: expected empty"));
        assert_non_null(strstr(err, "bay.conf:4: transport = sata, usbb: unknown transport \"usbb\"; did you mean usb?"));
        assert_non_null(strstr(err, "bay.conf:5: settle = -1: invalid time"));
        assert_non_null(strstr(err, "bay.conf:6: method = nope: unknown method"));
        assert_non_null(strstr(err, "bay.conf:8: duplicate key \"settle\" (first set on line 7)"));
        assert_non_null(strstr(err, "bay.conf:9: match = dev/sd*: not an absolute path pattern"));
        assert_non_null(strstr(err, "bay.conf:10: expected \"key = value\""));
        policy_done(&p);

        /* Never every disk: a policy without a match criterion is an error. */
        assert_int_equal(parse(&p, "method = zero\ncontent = any\n", err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "bay.conf: no match criterion"));
        policy_done(&p);
        assert_int_equal(parse(&p, "", err, sizeof(err)), -EINVAL);
        policy_done(&p);
        /* rotational and the sizes alone name no disk. */
        assert_int_equal(parse(&p, "rotational = yes\nmin-size = 1T\ncontent = any\n", err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "bay.conf: no match criterion that names disks"));
        policy_done(&p);
        assert_int_equal(parse(&p, "serial = x\nmin-size = 2T\nmax-size = 1T\n", err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "bay.conf:3: max-size is below min-size"));
        policy_done(&p);

        /* A bad name (the file name without .conf). */
        assert_int_equal(policy_parse(&p, "a b", "/x/a b.conf", "serial = x\n", 11, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "invalid policy name"));
        policy_done(&p);
        assert_true(policy_name_valid("front-cage_1.bay@host"));
        assert_false(policy_name_valid(".hidden"));
        assert_false(policy_name_valid("a/b"));
        assert_false(policy_name_valid(""));
}

static void test_match(void **state) {
        char *links[] = { "/dev/disk/by-id/ata-ST4000_Z1X2", "/dev/disk/by-path/pci-0000:00:1f.2-ata-3",
                          "/dev/disk/by-uuid/1234", NULL };
        struct device_identity id = {
                .node = "/dev/sdc", .size = 4000ull << 30, .rotational = true, .transport = "sata",
                .model = "ST4000DM004", .serial = "Z1X2",
        };
        struct device_identity loop = {
                .node = "/dev/loop3", .size = 8 << 20, .transport = "loop", .is_loop = true,
                .backing_file = "/dev/shm/t/z-1.img",
        };
        struct policy p;
        char err[512];

        (void) state;
        assert_int_equal(parse(&p, "match = /dev/disk/by-path/pci-0000:00:1f.2-ata-[1-4]\n"
                                   "transport = usb, sata\nrotational = yes\nmin-size = 1T\nmax-size = 8T\n"
                                   "model = ST*\nserial = Q*\nserial = Z*\n", err, sizeof(err)), 0);
        assert_null(policy_match(&p, &id, links));
        /* Each criterion can fail alone. */
        assert_string_equal(policy_match(&p, &id, NULL), "match");
        id.transport = "nvme";
        assert_string_equal(policy_match(&p, &id, links), "transport");
        id.transport = "sata";
        id.rotational = false;
        assert_string_equal(policy_match(&p, &id, links), "rotational");
        id.rotational = true;
        id.size = 500ull << 30;
        assert_string_equal(policy_match(&p, &id, links), "min-size");
        id.size = 10ull << 40;
        assert_string_equal(policy_match(&p, &id, links), "max-size");
        id.size = 4000ull << 30;
        id.model = "WDC WD40";
        assert_string_equal(policy_match(&p, &id, links), "model");
        id.model = NULL;                        /* unknown: no pattern matches it */
        assert_string_equal(policy_match(&p, &id, links), "model");
        id.model = "ST4000DM004";
        id.serial = "A1";
        assert_string_equal(policy_match(&p, &id, links), "serial");
        id.serial = "Z1X2";
        /* A partition never. */
        id.partition = 1;
        assert_string_equal(policy_match(&p, &id, links), "a partition");
        id.partition = 0;
        assert_null(policy_match(&p, &id, links));
        policy_done(&p);

        /* match: the node or a by-id/by-path link, '*' not crossing '/'; other links do not count. */
        assert_int_equal(parse(&p, "match = /dev/disk/by-uuid/*\n", err, sizeof(err)), 0);
        assert_string_equal(policy_match(&p, &id, links), "match");
        policy_done(&p);
        assert_int_equal(parse(&p, "match = /dev/*\n", err, sizeof(err)), 0);
        assert_null(policy_match(&p, &id, NULL));
        policy_done(&p);
        assert_int_equal(parse(&p, "match = /dev/disk/*\n", err, sizeof(err)), 0);
        assert_string_equal(policy_match(&p, &id, links), "match");
        policy_done(&p);
        assert_int_equal(parse(&p, "match = /dev/disk/by-id/ata-ST4000_*\n", err, sizeof(err)), 0);
        assert_null(policy_match(&p, &id, links));
        policy_done(&p);

        /* backing-file: loop devices only, by their backing file. */
        assert_int_equal(parse(&p, "backing-file = /dev/shm/t/z-*.img\n", err, sizeof(err)), 0);
        assert_null(policy_match(&p, &loop, NULL));
        loop.backing_file = "/dev/shm/t/sub/z-1.img";
        assert_string_equal(policy_match(&p, &loop, NULL), "backing-file");
        loop.backing_file = "/dev/shm/other/z-1.img";
        assert_string_equal(policy_match(&p, &loop, NULL), "backing-file");
        assert_string_equal(policy_match(&p, &id, links), "backing-file");
        policy_done(&p);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse),
                cmocka_unit_test(test_errors),
                cmocka_unit_test(test_match),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
