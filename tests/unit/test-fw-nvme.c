/* The NVMe probe's decoding (daemon/fw-nvme.c), without a device: an Identify Controller data
 * structure and a Sanitize Status log page laid out byte by byte as a controller sends them
 * (little-endian), the fields and the JSON made from them, and the controller and namespaces
 * found in a fake sysfs tree (a controller's, a multipath subsystem's, and none). Then the commands
 * that erase, against a controller scripted in place of libnvme's functions (--wrap): what they
 * send, how a status reads, the Sanitize Status log page as a fw_status. Linked with the daemon's
 * library. */
#include "config.h"

#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <stdbool.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <libnvme.h>

#include "daemon.h"
#include "firmware.h"
#include "fw-nvme.h"

/* The offsets the spec gives (NVMe Base 2.0, Identify Controller 5.17.2.1 and Sanitize Status
 * 5.16.1.25): the raw buffers below rely on libnvme's structs having them. */
static void test_layout(void **state) {
        assert_int_equal(sizeof(struct nvme_id_ctrl), 4096);
        assert_int_equal(offsetof(struct nvme_id_ctrl, oacs), 256);
        assert_int_equal(offsetof(struct nvme_id_ctrl, sanicap), 328);
        assert_int_equal(offsetof(struct nvme_id_ctrl, nn), 516);
        assert_int_equal(offsetof(struct nvme_id_ctrl, fna), 524);
        assert_int_equal(sizeof(struct nvme_sanitize_log_page), 512);
        assert_int_equal(offsetof(struct nvme_sanitize_log_page, sprog), 0);
        assert_int_equal(offsetof(struct nvme_sanitize_log_page, sstat), 2);
        assert_int_equal(offsetof(struct nvme_sanitize_log_page, eto), 8);
        assert_int_equal(offsetof(struct nvme_sanitize_log_page, etbe), 12);
        assert_int_equal(offsetof(struct nvme_sanitize_log_page, etce), 16);
}

static void put_le16(uint8_t *p, uint16_t v) {
        p[0] = v & 0xff;
        p[1] = v >> 8;
}

static void put_le32(uint8_t *p, uint32_t v) {
        for (int i = 0; i < 4; i++)
                p[i] = (v >> (8 * i)) & 0xff;
}

static void id_ctrl_from(const uint8_t *raw, struct nvme_id_ctrl *id) {
        memcpy(id, raw, sizeof(*id));
}

static void test_id_ctrl(void **state) {
        static uint8_t raw[4096];
        struct nvme_id_ctrl id;
        struct fw_nvme_caps c = { 0 };

        /* SANICAP: crypto erase and overwrite, NDI (bit 29), NODMMAS 01b (bit 30). */
        put_le32(raw + 328, (1u << 0) | (1u << 2) | (1u << 29) | (1u << 30));
        /* OACS: Security Send/Receive (bit 0), Format NVM (bit 1), Namespace Management (bit 3),
         * and bit 8 (Doorbell Buffer Config) in the high byte. */
        put_le16(raw + 256, 0x010b);
        put_le32(raw + 516, 0x00010400);        /* NN: 66560 */
        raw[524] = 0x06;                        /* FNA: secure erase on all, crypto erase */
        /* Fields around them, that must not leak in. */
        raw[255] = 0xff;
        raw[258] = 0xff;
        raw[327] = 0xff;
        raw[332] = 0xff;
        raw[523] = 0xff;
        raw[525] = 0xff;
        id_ctrl_from(raw, &id);
        fw_nvme_caps_from_id_ctrl(&id, &c);
        assert_true(c.sanitize_crypto);
        assert_false(c.sanitize_block);
        assert_true(c.sanitize_overwrite);
        assert_true(c.sanitize_no_dealloc_inhibited);
        assert_true(c.format);
        assert_false(c.format_all_namespaces);
        assert_true(c.erase_all_namespaces);
        assert_true(c.format_crypto);
        assert_int_equal(c.max_namespaces, 66560);
        assert_false(c.have_sanitize_log);

        /* Block erase only, no Format NVM (OACS bit 1 clear, other bits set), FNA bit 0 only. */
        memset(raw, 0, sizeof(raw));
        put_le32(raw + 328, 1u << 1);
        put_le16(raw + 256, 0xfffd);
        put_le32(raw + 516, 1);
        raw[524] = 0x09;                        /* FNA bits 0 and 3 */
        id_ctrl_from(raw, &id);
        fw_nvme_caps_from_id_ctrl(&id, &c);
        assert_false(c.sanitize_crypto);
        assert_true(c.sanitize_block);
        assert_false(c.sanitize_overwrite);
        assert_false(c.sanitize_no_dealloc_inhibited);
        assert_false(c.format);
        assert_true(c.format_all_namespaces);
        assert_false(c.erase_all_namespaces);
        assert_false(c.format_crypto);
        assert_int_equal(c.max_namespaces, 1);

        /* A controller without either (QEMU 7.2's: no SANICAP). */
        memset(raw, 0, sizeof(raw));
        put_le16(raw + 256, 0x0002);
        put_le32(raw + 516, 256);
        id_ctrl_from(raw, &id);
        fw_nvme_caps_from_id_ctrl(&id, &c);
        assert_false(c.sanitize_crypto || c.sanitize_block || c.sanitize_overwrite);
        assert_true(c.format);
        assert_int_equal(c.max_namespaces, 256);
}

static void test_sanitize_log(void **state) {
        static uint8_t raw[512];
        struct nvme_sanitize_log_page log;
        struct fw_nvme_caps c = { .est_overwrite = 7, .est_block = 7, .est_crypto = 7 };

        put_le16(raw + 0, 0x8000);              /* SPROG: half */
        /* SSTAT: in progress (2h), 3 overwrite passes completed (bits 7:3), global data erased
         * (bit 8). */
        put_le16(raw + 2, 0x0002 | (3 << 3) | (1 << 8));
        put_le32(raw + 4, 0x00000002);          /* SCDW10: not used */
        put_le32(raw + 8, 0xffffffff);          /* ETO: not reported */
        put_le32(raw + 12, 0x00012345);         /* ETBE */
        put_le32(raw + 16, 0);                  /* ETCE: done when the command completes */
        put_le32(raw + 20, 1);                  /* ETOND..ETCEND: not used */
        put_le32(raw + 24, 1);
        put_le32(raw + 28, 1);
        memcpy(&log, raw, sizeof(log));
        fw_nvme_caps_from_sanitize_log(&log, &c);
        assert_true(c.have_sanitize_log);
        assert_int_equal(c.sanitize_progress, 0x8000);
        assert_int_equal(c.sanitize_status, 0x011a);
        assert_int_equal(c.est_overwrite, -1);
        assert_int_equal(c.est_block, 0x12345);
        assert_int_equal(c.est_crypto, 0);

        /* The largest estimate that is one: FFFFFFFEh seconds, not negative. */
        put_le32(raw + 8, 0xfffffffe);
        put_le32(raw + 12, 0xffffffff);
        put_le32(raw + 16, 0xffffffff);
        memcpy(&log, raw, sizeof(log));
        fw_nvme_caps_from_sanitize_log(&log, &c);
        assert_int_equal(c.est_overwrite, INT64_C(0xfffffffe));
        assert_int_equal(c.est_block, -1);
        assert_int_equal(c.est_crypto, -1);
}

static void test_status_names(void **state) {
        assert_string_equal(fw_nvme_sanitize_status_name(0), "never");
        assert_string_equal(fw_nvme_sanitize_status_name(1), "completed");
        assert_string_equal(fw_nvme_sanitize_status_name(2), "in progress");
        assert_string_equal(fw_nvme_sanitize_status_name(3), "failed");
        assert_string_equal(fw_nvme_sanitize_status_name(4), "completed without deallocation");
        assert_null(fw_nvme_sanitize_status_name(5));
        assert_null(fw_nvme_sanitize_status_name(6));
        assert_null(fw_nvme_sanitize_status_name(7));
        /* Only bits 2:0 are the status. */
        assert_string_equal(fw_nvme_sanitize_status_name(0x0109), "completed");
        assert_string_equal(fw_nvme_sanitize_status_name(0xfff8), "never");
}

/* The value at a dotted path of o, which must be there (NULL: a JSON null). */
static struct json_object *at(struct json_object *o, const char *path) {
        char buf[128], *save = NULL;
        struct json_object *v = o;

        assert_true(strlen(path) < sizeof(buf));
        strcpy(buf, path);
        for (char *k = strtok_r(buf, ".", &save); k; k = strtok_r(NULL, ".", &save)) {
                assert_non_null(v);
                if (!json_object_object_get_ex(v, k, &v))
                        fail_msg("%s: no %s", path, k);
        }
        return v;
}

static void is_bool(struct json_object *o, const char *path, bool want) {
        struct json_object *v = at(o, path);

        assert_true(json_object_is_type(v, json_type_boolean));
        assert_int_equal(json_object_get_boolean(v), want);
}

static void is_int(struct json_object *o, const char *path, int64_t want) {
        struct json_object *v = at(o, path);

        assert_true(json_object_is_type(v, json_type_int));
        assert_int_equal(json_object_get_int64(v), want);
}

static void is_string(struct json_object *o, const char *path, const char *want) {
        struct json_object *v = at(o, path);

        assert_true(json_object_is_type(v, json_type_string));
        assert_string_equal(json_object_get_string(v), want);
}

static void is_null(struct json_object *o, const char *path) {
        assert_null(at(o, path));
}

static void test_json(void **state) {
        static uint8_t raw[4096];
        struct nvme_id_ctrl id;
        struct nvme_sanitize_log_page log;
        struct fw_nvme_caps c = { .nsid = 2, .est_overwrite = -1, .est_block = -1, .est_crypto = -1 };
        struct json_object *o, *ns;

        put_le32(raw + 328, 0x00000003);        /* crypto and block erase */
        put_le16(raw + 256, 0x0002);
        put_le32(raw + 516, 32);
        raw[524] = 0x07;
        id_ctrl_from(raw, &id);
        fw_nvme_caps_from_id_ctrl(&id, &c);
        c.controller = strdup("/dev/nvme0");
        c.namespaces = calloc(3, sizeof(*c.namespaces));
        assert_non_null(c.namespaces);
        c.namespaces[0] = strdup("/dev/nvme0n1");
        c.namespaces[1] = strdup("/dev/nvme0n2");

        /* The log page not read (refused): its part is null. */
        o = fw_nvme_json(&c);
        assert_non_null(o);
        is_int(o, "nsid", 2);
        is_string(o, "controller", "/dev/nvme0");
        ns = at(o, "namespaces");
        assert_true(json_object_is_type(ns, json_type_array));
        assert_int_equal(json_object_array_length(ns), 2);
        assert_string_equal(json_object_get_string(json_object_array_get_idx(ns, 0)), "/dev/nvme0n1");
        assert_string_equal(json_object_get_string(json_object_array_get_idx(ns, 1)), "/dev/nvme0n2");
        is_int(o, "max_namespaces", 32);
        is_bool(o, "sanitize.crypto", true);
        is_bool(o, "sanitize.block", true);
        is_bool(o, "sanitize.overwrite", false);
        is_bool(o, "sanitize.no_dealloc_inhibited", false);
        is_bool(o, "sanitize.log_read", false);
        is_null(o, "sanitize.status");
        is_null(o, "sanitize.progress_percent");
        is_null(o, "sanitize.overwrite_passes_completed");
        is_null(o, "sanitize.global_data_erased");
        is_null(o, "sanitize.estimates_s.overwrite");
        is_null(o, "sanitize.estimates_s.block");
        is_null(o, "sanitize.estimates_s.crypto");
        is_bool(o, "format.supported", true);
        is_bool(o, "format.all_namespaces", true);
        is_bool(o, "format.erase_all_namespaces", true);
        is_bool(o, "format.crypto_erase", true);
        json_object_put(o);

        /* A sanitize at a quarter (4000h of 10000h), one estimate not reported. */
        memset(raw, 0, 512);
        put_le16(raw + 0, 0x4000);
        put_le16(raw + 2, 0x0002);
        put_le32(raw + 8, 0xffffffff);
        put_le32(raw + 12, 3600);
        put_le32(raw + 16, 2);
        memcpy(&log, raw, sizeof(log));
        fw_nvme_caps_from_sanitize_log(&log, &c);
        o = fw_nvme_json(&c);
        assert_non_null(o);
        is_bool(o, "sanitize.log_read", true);
        is_string(o, "sanitize.status", "in progress");
        is_int(o, "sanitize.progress_percent", 25);
        is_int(o, "sanitize.overwrite_passes_completed", 0);
        is_bool(o, "sanitize.global_data_erased", false);
        is_null(o, "sanitize.estimates_s.overwrite");
        is_int(o, "sanitize.estimates_s.block", 3600);
        is_int(o, "sanitize.estimates_s.crypto", 2);
        json_object_put(o);

        /* Completed: SPROG is FFFFh and means nothing; global data erased. */
        memset(raw, 0, 4);
        put_le16(raw + 0, 0xffff);
        put_le16(raw + 2, 0x0101);
        memcpy(&log, raw, sizeof(log));
        fw_nvme_caps_from_sanitize_log(&log, &c);
        o = fw_nvme_json(&c);
        assert_non_null(o);
        is_string(o, "sanitize.status", "completed");
        is_null(o, "sanitize.progress_percent");
        is_bool(o, "sanitize.global_data_erased", true);
        json_object_put(o);

        /* Reserved status 7h: no name. */
        put_le16(raw + 2, 0x0007);
        memcpy(&log, raw, sizeof(log));
        fw_nvme_caps_from_sanitize_log(&log, &c);
        o = fw_nvme_json(&c);
        assert_non_null(o);
        is_null(o, "sanitize.status");
        json_object_put(o);

        fw_nvme_caps_done(&c);
        assert_null(c.controller);
        assert_null(c.namespaces);
        fw_nvme_caps_done(&c);
        fw_nvme_caps_done(NULL);

        /* Nothing from sysfs: controller and namespaces null. */
        o = fw_nvme_json(&c);
        assert_non_null(o);
        is_null(o, "controller");
        is_null(o, "namespaces");
        json_object_put(o);
}

/* A fake sysfs tree in a directory of the test's own. */
static char root[PATH_MAX];

static void mkdirs(const char *rel) {
        char p[PATH_MAX];
        size_t n = (size_t) snprintf(p, sizeof(p), "%s/%s", root, rel);

        assert_true(n < sizeof(p));
        for (char *s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
                *s = '\0';
                assert_true(mkdir(p, 0755) == 0 || errno == EEXIST);
                *s = '/';
        }
        assert_true(mkdir(p, 0755) == 0 || errno == EEXIST);
}

static void mklink(const char *target, const char *rel) {
        char p[PATH_MAX];
        size_t n = (size_t) snprintf(p, sizeof(p), "%s/%s", root, rel);

        assert_true(n < sizeof(p));
        assert_int_equal(symlink(target, p), 0);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path);
}

static int sysfs_setup(void **state) {
        const char *tmp = getenv("TMPDIR");

        snprintf(root, sizeof(root), "%s/test-fw-nvme.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(root))
                return -1;
        return 0;
}

static int sysfs_teardown(void **state) {
        return nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void free_list(char **v) {
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
}

/* Without multipath: the namespace's parent is its controller, which holds its namespaces (and,
 * with a multipath-capable kernel, hidden paths nvmeXcYnZ that are not block devices to list). */
static void test_sysfs_controller(void **state) {
        const char *ctrl = "devices/pci0000:00/0000:00:04.0/nvme/nvme1";
        const char *names[] = { "nvme1n1", "nvme1n10", "nvme1n2", "nvme1c1n3", "nvme1n2p1x", "power" };
        char rel[PATH_MAX], *controller = NULL, **ns = NULL;

        for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
                snprintf(rel, sizeof(rel), "%s/%s", ctrl, names[i]);
                mkdirs(rel);
        }
        snprintf(rel, sizeof(rel), "%s/nvme1n2/device", ctrl);
        mklink("../../nvme1", rel);
        mkdirs("dev/block");
        mklink("../../devices/pci0000:00/0000:00:04.0/nvme/nvme1/nvme1n2", "dev/block/259:3");

        assert_int_equal(fw_nvme_sysfs_topology(root, makedev(259, 3), &controller, &ns), 0);
        assert_non_null(controller);
        assert_string_equal(controller, "/dev/nvme1");
        assert_non_null(ns);
        assert_string_equal(ns[0], "/dev/nvme1n1");
        assert_string_equal(ns[1], "/dev/nvme1n2");
        assert_string_equal(ns[2], "/dev/nvme1n10");
        assert_null(ns[3]);
        free(controller);
        free_list(ns);
}

/* With native multipath: the namespace's parent is its NVM subsystem, which holds the namespaces
 * and links to the controllers (the lowest numbered is taken). */
static void test_sysfs_subsystem(void **state) {
        const char *subsys = "devices/virtual/nvme-subsystem/nvme-subsys0";
        char rel[PATH_MAX], *controller = NULL, **ns = NULL;

        mkdirs("devices/pci0000:00/0000:00:05.0/nvme/nvme12");
        mkdirs("devices/pci0000:00/0000:00:06.0/nvme/nvme3");
        snprintf(rel, sizeof(rel), "%s/nvme0n1", subsys);
        mkdirs(rel);
        snprintf(rel, sizeof(rel), "%s/nvme0n1/device", subsys);
        mklink("..", rel);
        snprintf(rel, sizeof(rel), "%s/nvme12", subsys);
        mklink("../../../pci0000:00/0000:00:05.0/nvme/nvme12", rel);
        snprintf(rel, sizeof(rel), "%s/nvme3", subsys);
        mklink("../../../pci0000:00/0000:00:06.0/nvme/nvme3", rel);
        snprintf(rel, sizeof(rel), "%s/subsysnqn", subsys);
        mkdirs(rel);
        mkdirs("dev/block");
        mklink("../../devices/virtual/nvme-subsystem/nvme-subsys0/nvme0n1", "dev/block/259:0");

        assert_int_equal(fw_nvme_sysfs_topology(root, makedev(259, 0), &controller, &ns), 0);
        assert_non_null(controller);
        assert_string_equal(controller, "/dev/nvme3");
        assert_non_null(ns);
        assert_string_equal(ns[0], "/dev/nvme0n1");
        assert_null(ns[1]);
        free(controller);
        free_list(ns);
}

/* A loop device (the drive simulator's) has no parent device; a SCSI disk's parent is no NVMe
 * controller; an unknown device number is not in sysfs: nothing, and no error. */
static void test_sysfs_none(void **state) {
        char *controller = (char *) "x", **ns = (char **) &controller;

        mkdirs("devices/virtual/block/loop0");
        mkdirs("devices/pci0000:00/0000:00:07.0/host0/target0:0:0/0:0:0:0/block/sda");
        mklink("../..", "devices/pci0000:00/0000:00:07.0/host0/target0:0:0/0:0:0:0/block/sda/device");
        mkdirs("dev/block");
        mklink("../../devices/virtual/block/loop0", "dev/block/7:0");
        mklink("../../devices/pci0000:00/0000:00:07.0/host0/target0:0:0/0:0:0:0/block/sda", "dev/block/8:0");

        assert_int_equal(fw_nvme_sysfs_topology(root, makedev(7, 0), &controller, &ns), 0);
        assert_null(controller);
        assert_null(ns);
        assert_int_equal(fw_nvme_sysfs_topology(root, makedev(8, 0), &controller, &ns), 0);
        assert_null(controller);
        assert_null(ns);
        assert_int_equal(fw_nvme_sysfs_topology(root, makedev(259, 99), &controller, &ns), 0);
        assert_null(controller);
        assert_null(ns);
        snprintf(root + strlen(root), sizeof(root) - strlen(root), "/nonexistent");
        assert_int_equal(fw_nvme_sysfs_topology(root, makedev(7, 0), &controller, &ns), 0);
        *strrchr(root, '/') = '\0';
        assert_null(controller);
        assert_null(ns);
}

/* The probe on something that is no NVMe device (a memfd: no device, and no ioctl reaches one)
 * fails at Identify Controller, says so, and leaves the caps empty but freeable. */
static void test_probe_not_nvme(void **state) {
        struct device_identity id = { .rdev = makedev(0, 0) };
        struct fw_nvme_caps c;
        char *err = (char *) "x";
        int fd = memfd_create("test-fw-nvme", MFD_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(fw_nvme_probe(fd, 1, &id, &c, &err), -ENOTTY);
        close(fd);
        assert_non_null(err);
        assert_non_null(strstr(err, "Identify Controller: "));
        assert_int_equal(c.nsid, 1);
        assert_null(c.controller);
        assert_null(c.namespaces);
        assert_false(c.have_sanitize_log);
        assert_int_equal(c.est_overwrite, -1);
        free(err);
        fw_nvme_caps_done(&c);
}

/* ---- The commands that erase, against a scripted controller. The wrappers record what
 * fw-nvme.c sends and answer as scripted; when no test scripts them (fake.on false) they pass the
 * call on to libnvme (test_probe_not_nvme). ---- */

int __real_nvme_identify(struct nvme_identify_args *args);
int __real_nvme_get_log_page(int fd, __u32 xfer_len, struct nvme_get_log_args *args);
int __real_nvme_sanitize_nvm(struct nvme_sanitize_nvm_args *args);
int __real_nvme_format_nvm(struct nvme_format_nvm_args *args);
int __wrap_nvme_identify(struct nvme_identify_args *args);
int __wrap_nvme_get_log_page(int fd, __u32 xfer_len, struct nvme_get_log_args *args);
int __wrap_nvme_sanitize_nvm(struct nvme_sanitize_nvm_args *args);
int __wrap_nvme_format_nvm(struct nvme_format_nvm_args *args);

static struct {
        bool on;
        /* What was sent, and how often. */
        unsigned identifies, logs, sanitizes, formats;
        struct nvme_identify_args identify;
        struct nvme_get_log_args log;
        uint32_t log_xfer;
        struct nvme_sanitize_nvm_args sanitize;
        struct nvme_format_nvm_args format;
        /* The answers: the status (or -1 with errno_ret), and the data. */
        int identify_ret, log_ret, command_ret, errno_ret;
        uint8_t id_ns[4096];
        uint8_t log_page[512];
} fake;

static int answer(int ret) {
        if (ret < 0)
                errno = fake.errno_ret;
        return ret;
}

int __wrap_nvme_identify(struct nvme_identify_args *args) {
        if (!fake.on)
                return __real_nvme_identify(args);
        fake.identifies++;
        fake.identify = *args;
        if (args->cns == NVME_IDENTIFY_CNS_NS && fake.identify_ret == 0)
                memcpy(args->data, fake.id_ns, sizeof(fake.id_ns));
        return answer(fake.identify_ret);
}

int __wrap_nvme_get_log_page(int fd, __u32 xfer_len, struct nvme_get_log_args *args) {
        if (!fake.on)
                return __real_nvme_get_log_page(fd, xfer_len, args);
        fake.logs++;
        fake.log = *args;
        fake.log_xfer = xfer_len;
        if (args->lid == NVME_LOG_LID_SANITIZE && args->len == sizeof(fake.log_page) && fake.log_ret == 0)
                memcpy(args->log, fake.log_page, sizeof(fake.log_page));
        return answer(fake.log_ret);
}

int __wrap_nvme_sanitize_nvm(struct nvme_sanitize_nvm_args *args) {
        if (!fake.on)
                return __real_nvme_sanitize_nvm(args);
        fake.sanitizes++;
        fake.sanitize = *args;
        return answer(fake.command_ret);
}

int __wrap_nvme_format_nvm(struct nvme_format_nvm_args *args) {
        if (!fake.on)
                return __real_nvme_format_nvm(args);
        fake.formats++;
        fake.format = *args;
        return answer(fake.command_ret);
}

static int fake_setup(void **state) {
        memset(&fake, 0, sizeof(fake));
        fake.on = true;
        return 0;
}

static int fake_teardown(void **state) {
        fake.on = false;
        return 0;
}

static void put_le64(uint8_t *p, uint64_t v) {
        for (int i = 0; i < 8; i++)
                p[i] = (v >> (8 * i)) & 0xff;
}

/* Identify Namespace's offsets (5.17.2.1) that the format reads. */
static void test_id_ns_layout(void **state) {
        assert_int_equal(sizeof(struct nvme_id_ns), 4096);
        assert_int_equal(offsetof(struct nvme_id_ns, nsze), 0);
        assert_int_equal(offsetof(struct nvme_id_ns, nlbaf), 25);
        assert_int_equal(offsetof(struct nvme_id_ns, flbas), 26);
        assert_int_equal(offsetof(struct nvme_id_ns, dps), 29);
        assert_int_equal(offsetof(struct nvme_id_ns, nulbaf), 82);
}

static void sanitize_ok(const struct fw_command *c) {
        char err[160] = "";

        fake.sanitizes = 0;
        assert_int_equal(fw_nvme_sanitize_start(7, c, err, sizeof(err)), 0);
        assert_int_equal(fake.sanitizes, 1);
        assert_int_equal(fake.sanitize.fd, 7);
        assert_int_equal(fake.sanitize.args_size, sizeof(struct nvme_sanitize_nvm_args));
        assert_null(fake.sanitize.result);
        assert_false(fake.sanitize.nodas);
        assert_false(fake.sanitize.oipbp);
        assert_string_equal(err, "");
}

static void test_sanitize_start(void **state) {
        struct fw_command c = { .set = FW_SET_NVME, .action = FW_ACTION_SANITIZE_CRYPTO, .ause = true,
                                .overwrite_passes = 5, .overwrite_pattern = 0x12345678 };
        char err[160] = "";

        /* Crypto erase, SANACT 100b: the overwrite settings are not sent. */
        sanitize_ok(&c);
        assert_int_equal(fake.sanitize.sanact, 4);
        assert_true(fake.sanitize.ause);
        assert_int_equal(fake.sanitize.owpass, 0);
        assert_int_equal(fake.sanitize.ovrpat, 0);

        /* Block erase, SANACT 010b, AUSE clear. */
        c.action = FW_ACTION_SANITIZE_BLOCK;
        c.ause = false;
        sanitize_ok(&c);
        assert_int_equal(fake.sanitize.sanact, 2);
        assert_false(fake.sanitize.ause);
        assert_int_equal(fake.sanitize.owpass, 0);

        /* Overwrite, SANACT 011b, with its passes and pattern. */
        c.action = FW_ACTION_SANITIZE_OVERWRITE;
        c.overwrite_pattern = 0xdeadbeef;
        sanitize_ok(&c);
        assert_int_equal(fake.sanitize.sanact, 3);
        assert_int_equal(fake.sanitize.owpass, 5);
        assert_int_equal(fake.sanitize.ovrpat, 0xdeadbeef);
        assert_false(fake.sanitize.ause);
        c.overwrite_passes = 1;
        sanitize_ok(&c);
        assert_int_equal(fake.sanitize.owpass, 1);
        c.overwrite_passes = 15;
        sanitize_ok(&c);
        assert_int_equal(fake.sanitize.owpass, 15);
        /* 16 passes are OWPASS 0h (5.24: a 4-bit field). */
        c.overwrite_passes = 16;
        sanitize_ok(&c);
        assert_int_equal(fake.sanitize.owpass, 0);

        /* What cannot be sent is not. */
        fake.sanitizes = 0;
        c.overwrite_passes = 0;
        assert_int_equal(fw_nvme_sanitize_start(7, &c, err, sizeof(err)), -EINVAL);
        assert_string_equal(err, "Sanitize: 0 overwrite passes (1 to 16)");
        c.overwrite_passes = 17;
        assert_int_equal(fw_nvme_sanitize_start(7, &c, err, sizeof(err)), -EINVAL);
        c.overwrite_passes = 3;
        c.action = FW_ACTION_NVME_FORMAT;
        assert_int_equal(fw_nvme_sanitize_start(7, &c, err, sizeof(err)), -EINVAL);
        c.action = FW_ACTION_NONE;
        assert_int_equal(fw_nvme_sanitize_start(7, &c, err, sizeof(err)), -EINVAL);
        assert_int_equal(fake.sanitizes, 0);
}

static void test_sanitize_errors(void **state) {
        struct fw_command c = { .set = FW_SET_NVME, .action = FW_ACTION_SANITIZE_CRYPTO };
        char err[160], small[12];

        /* As the kernel returns them: with DNR (bit 14) set. */
        fake.command_ret = 0x4002;
        assert_int_equal(fw_nvme_sanitize_start(3, &c, err, sizeof(err)), -EIO);
        assert_string_equal(err, "Sanitize: Invalid Field in Command (status 0002h)");
        fake.command_ret = 0x001d;
        assert_int_equal(fw_nvme_sanitize_start(3, &c, err, sizeof(err)), -EIO);
        assert_string_equal(err, "Sanitize: Sanitize In Progress (status 001Dh)");
        fake.command_ret = 0x401c;
        assert_int_equal(fw_nvme_sanitize_start(3, &c, err, sizeof(err)), -EIO);
        assert_string_equal(err, "Sanitize: Sanitize Failed (status 001Ch)");
        /* A command specific status (SCT 1h). */
        fake.command_ret = 0x410b;
        assert_int_equal(fw_nvme_sanitize_start(3, &c, err, sizeof(err)), -EIO);
        assert_non_null(strstr(err, "(status 010Bh)"));
        /* Not reaching the controller: -1 and errno. */
        fake.command_ret = -1;
        fake.errno_ret = ENOTTY;
        assert_int_equal(fw_nvme_sanitize_start(3, &c, err, sizeof(err)), -ENOTTY);
        assert_string_equal(err, "Sanitize: Inappropriate ioctl for device");
        fake.errno_ret = EINTR;
        assert_int_equal(fw_nvme_sanitize_start(3, &c, err, sizeof(err)), -EINTR);
        /* A short buffer is cut, not overrun. */
        fake.command_ret = 0x4002;
        assert_int_equal(fw_nvme_sanitize_start(3, &c, small, sizeof(small)), -EIO);
        assert_string_equal(small, "Sanitize: I");
        assert_int_equal(fw_nvme_sanitize_start(3, &c, NULL, 0), -EIO);
        assert_int_equal(fake.sanitizes, 8);
}

/* The status for a log page with SPROG sprog, SSTAT sstat and SCDW10 scdw10; checks the Get Log
 * Page sent. */
static void log_status_of(uint16_t sprog, uint16_t sstat, uint32_t scdw10, struct fw_status *s) {
        char err[160] = "";

        memset(fake.log_page, 0xee, sizeof(fake.log_page));
        put_le16(fake.log_page + 0, sprog);
        put_le16(fake.log_page + 2, sstat);
        put_le32(fake.log_page + 4, scdw10);
        fake.logs = 0;
        memset(s, 0x55, sizeof(*s));
        assert_int_equal(fw_nvme_sanitize_status(9, s, err, sizeof(err)), 0);
        assert_string_equal(err, "");
        assert_int_equal(fake.logs, 1);
        assert_int_equal(fake.log.fd, 9);
        assert_int_equal(fake.log.lid, NVME_LOG_LID_SANITIZE);
        assert_int_equal(fake.log.len, 512);
        assert_int_equal(fake.log.nsid, NVME_NSID_ALL);
        assert_int_equal(fake.log.lpo, 0);
        assert_true(fake.log.rae);
}

/* The same after a crypto erase (SANACT 100b) with AUSE (bit 3). */
static void log_status(uint16_t sprog, uint16_t sstat, struct fw_status *s) {
        log_status_of(sprog, sstat, 0x0000000c, s);
}

static void test_sanitize_status(void **state) {
        struct fw_status s;
        char err[160];

        log_status(0xffff, 0x0000, &s);
        assert_int_equal(s.state, FW_RUN_UNKNOWN);
        assert_true(s.fraction == -1);
        assert_string_equal(s.text, "SSTAT 0000h: never");

        log_status(0xffff, 0x0001, &s);
        assert_int_equal(s.state, FW_RUN_DONE);
        assert_true(s.fraction == -1);
        assert_string_equal(s.text, "SSTAT 0001h: completed");

        log_status(6554, 0x0002, &s);
        assert_int_equal(s.state, FW_RUN_RUNNING);
        assert_true(s.fraction == 6554.0 / 65536);
        assert_string_equal(s.text, "SSTAT 0002h: in progress, SPROG 6554/65536 (10%)");

        log_status(0, 0x0002, &s);
        assert_int_equal(s.state, FW_RUN_RUNNING);
        assert_true(s.fraction == 0);
        assert_string_equal(s.text, "SSTAT 0002h: in progress, SPROG 0/65536 (0%)");

        log_status(0xffff, 0x0002, &s);
        assert_true(s.fraction == 65535.0 / 65536);
        assert_string_equal(s.text, "SSTAT 0002h: in progress, SPROG 65535/65536 (99%)");

        log_status(0xffff, 0x0003, &s);
        assert_int_equal(s.state, FW_RUN_FAILED);
        assert_true(s.fraction == -1);
        assert_string_equal(s.text, "SSTAT 0003h: failed");

        log_status(0xffff, 0x0004, &s);
        assert_int_equal(s.state, FW_RUN_DONE);
        assert_string_equal(s.text, "SSTAT 0004h: completed without deallocation");

        for (uint16_t v = 5; v <= 7; v++) {
                char want[64];

                log_status(0x1234, v, &s);
                assert_int_equal(s.state, FW_RUN_UNKNOWN);
                assert_true(s.fraction == -1);
                snprintf(want, sizeof(want), "SSTAT %04Xh: reserved status %u", v, v);
                assert_string_equal(s.text, want);
        }

        /* An overwrite (SCDW10 SANACT 011b, with OWPASS and OIPBP around it): passes completed
         * (bits 7:3) while it runs and after; global data erased (bit 8). */
        log_status_of(0x8000, 0x0002 | 2 << 3, 0x00000313, &s);
        assert_int_equal(s.state, FW_RUN_RUNNING);
        assert_true(s.fraction == 0.5);
        assert_string_equal(s.text, "SSTAT 0012h: in progress, SPROG 32768/65536 (50%), 2 overwrite passes");
        log_status_of(0xffff, 0x0001 | 1 << 3 | 1 << 8, 0x00000013, &s);
        assert_int_equal(s.state, FW_RUN_DONE);
        assert_string_equal(s.text, "SSTAT 0109h: completed, 1 overwrite pass, global data erased");
        log_status_of(0xffff, 0x0003 | 31 << 3, 0x00000003, &s);
        assert_int_equal(s.state, FW_RUN_FAILED);
        assert_string_equal(s.text, "SSTAT 00FBh: failed, 31 overwrite passes");
        log_status_of(0xffff, 0x0001, 0x00000003, &s);
        assert_string_equal(s.text, "SSTAT 0001h: completed, 0 overwrite passes");
        /* After a crypto or block erase the passes field means nothing (a controller may leave
         * a count there): not shown. */
        log_status(0xffff, 0x0001 | 1 << 3 | 1 << 8, &s);
        assert_int_equal(s.state, FW_RUN_DONE);
        assert_string_equal(s.text, "SSTAT 0109h: completed, global data erased");
        log_status_of(0x4000, 0x0002 | 1 << 3, 0x00000002, &s);
        assert_string_equal(s.text, "SSTAT 000Ah: in progress, SPROG 16384/65536 (25%)");

        /* The page not read. */
        fake.log_ret = 0x4002;
        assert_int_equal(fw_nvme_sanitize_status(9, &s, err, sizeof(err)), -EIO);
        assert_string_equal(err, "Sanitize Status log page: Invalid Field in Command (status 0002h)");
        fake.log_ret = -1;
        fake.errno_ret = EIO;
        assert_int_equal(fw_nvme_sanitize_status(9, &s, err, sizeof(err)), -EIO);
        assert_string_equal(err, "Sanitize Status log page: Input/output error");
}

/* The Identify Namespace data the scripted controller answers: active (NSZE), with nlbaf + 1
 * formats plus nulbaf, FLBAS and DPS as given. */
static void id_ns(uint8_t nlbaf, uint8_t nulbaf, uint8_t flbas, uint8_t dps) {
        memset(fake.id_ns, 0, sizeof(fake.id_ns));
        put_le64(fake.id_ns + 0, 2048);
        fake.id_ns[25] = nlbaf;
        fake.id_ns[26] = flbas;
        fake.id_ns[29] = dps;
        fake.id_ns[82] = nulbaf;
}

static void format_ok(const struct fw_command *c) {
        char err[160] = "";

        fake.identifies = fake.formats = 0;
        assert_int_equal(fw_nvme_format(5, c, err, sizeof(err)), 0);
        assert_string_equal(err, "");
        assert_int_equal(fake.identifies, 1);
        assert_int_equal(fake.identify.fd, 5);
        assert_int_equal(fake.identify.cns, NVME_IDENTIFY_CNS_NS);
        assert_int_equal(fake.identify.nsid, c->nsid);
        assert_int_equal(fake.formats, 1);
        assert_int_equal(fake.format.fd, 5);
        assert_int_equal(fake.format.args_size, sizeof(struct nvme_format_nvm_args));
        assert_int_equal(fake.format.nsid, c->nsid);
        assert_int_equal(fake.format.ses, c->ses);
}

static void test_format(void **state) {
        struct fw_command c = { .set = FW_SET_NVME, .action = FW_ACTION_NVME_FORMAT, .nsid = 1, .ses = 1,
                                .timeout_s = 600 };

        /* The simplest namespace: one format, no metadata. */
        id_ns(0, 0, 0x00, 0x00);
        format_ok(&c);
        assert_int_equal(fake.format.timeout, 600000);
        assert_int_equal(fake.format.lbaf, 0);
        assert_int_equal(fake.format.lbafu, 0);
        assert_int_equal(fake.format.mset, NVME_FORMAT_MSET_SEPARATE);
        assert_int_equal(fake.format.pi, NVME_FORMAT_PI_DISABLE);
        assert_int_equal(fake.format.pil, NVME_FORMAT_PIL_LAST);

        /* Format 3 of 5 with metadata at the end of each block, protection information Type 1 in
         * its first bytes; a cryptographic erase of namespace 2. */
        c.nsid = 2;
        c.ses = 2;
        c.timeout_s = 1;
        id_ns(4, 0, 0x13, 0x09);
        format_ok(&c);
        assert_int_equal(fake.format.timeout, 1000);
        assert_int_equal(fake.format.lbaf, 3);
        assert_int_equal(fake.format.lbafu, 0);
        assert_int_equal(fake.format.mset, NVME_FORMAT_MSET_EXTENDED);
        assert_int_equal(fake.format.pi, NVME_FORMAT_PI_TYPE1);
        assert_int_equal(fake.format.pil, NVME_FORMAT_PIL_FIRST);

        /* NVMe 2.0's FLBAS bits 6:5 (index bits 5:4): format 50 of 64; Type 3 at the end. */
        id_ns(15, 48, 0x62, 0x03);
        format_ok(&c);
        assert_int_equal(fake.format.lbaf, 2);
        assert_int_equal(fake.format.lbafu, 3);
        assert_int_equal(fake.format.mset, NVME_FORMAT_MSET_SEPARATE);
        assert_int_equal(fake.format.pi, NVME_FORMAT_PI_TYPE3);
        assert_int_equal(fake.format.pil, NVME_FORMAT_PIL_LAST);

        /* A timeout beyond what milliseconds in 32 bits hold. */
        c.timeout_s = 5000000;
        format_ok(&c);
        assert_int_equal(fake.format.timeout, UINT32_MAX);
}

static void test_format_refused(void **state) {
        struct fw_command c = { .set = FW_SET_NVME, .action = FW_ACTION_NVME_FORMAT, .nsid = 1, .ses = 0,
                                .timeout_s = 60 };
        char err[160];

        /* SES 0 erases nothing, and 3 and above are reserved: nothing is sent, not even
         * Identify. */
        id_ns(0, 0, 0, 0);
        assert_int_equal(fw_nvme_format(5, &c, err, sizeof(err)), -EINVAL);
        assert_string_equal(err, "Format NVM: secure erase setting 0 (1 or 2)");
        c.ses = 3;
        assert_int_equal(fw_nvme_format(5, &c, err, sizeof(err)), -EINVAL);
        c.ses = 7;
        assert_int_equal(fw_nvme_format(5, &c, err, sizeof(err)), -EINVAL);
        /* Namespace 0 is none; FFFFFFFFh is all, which has no current format. */
        c.ses = 1;
        c.nsid = 0;
        assert_int_equal(fw_nvme_format(5, &c, err, sizeof(err)), -EINVAL);
        c.nsid = NVME_NSID_ALL;
        assert_int_equal(fw_nvme_format(5, &c, err, sizeof(err)), -EINVAL);
        assert_string_equal(err, "Format NVM: namespace FFFFFFFFh (one namespace)");
        assert_int_equal(fake.identifies, 0);
        assert_int_equal(fake.formats, 0);

        /* Identify data that names no format, or an inactive namespace: Identify only. */
        c.nsid = 1;
        id_ns(3, 0, 0x05, 0);
        assert_int_equal(fw_nvme_format(5, &c, err, sizeof(err)), -EIO);
        assert_string_equal(err, "Format NVM: namespace 1's FLBAS 05h names LBA format 5 of 4");
        id_ns(3, 0, 0x20, 0);
        assert_int_equal(fw_nvme_format(5, &c, err, sizeof(err)), -EIO);
        id_ns(0, 0, 0, 0);
        put_le64(fake.id_ns, 0);
        assert_int_equal(fw_nvme_format(5, &c, err, sizeof(err)), -ENODEV);
        assert_string_equal(err, "Format NVM: namespace 1 is not active");
        assert_int_equal(fake.identifies, 3);
        assert_int_equal(fake.formats, 0);
}

static void test_format_errors(void **state) {
        struct fw_command c = { .set = FW_SET_NVME, .action = FW_ACTION_NVME_FORMAT, .nsid = 1, .ses = 2,
                                .timeout_s = 60 };
        char err[160];

        /* Identify fails: no format. */
        fake.identify_ret = -1;
        fake.errno_ret = ENOTTY;
        assert_int_equal(fw_nvme_format(5, &c, err, sizeof(err)), -ENOTTY);
        assert_string_equal(err, "Identify Namespace: Inappropriate ioctl for device");
        fake.identify_ret = 0x400b;
        assert_int_equal(fw_nvme_format(5, &c, err, sizeof(err)), -EIO);
        assert_string_equal(err, "Identify Namespace: Invalid Namespace or Format (status 000Bh)");
        assert_int_equal(fake.formats, 0);

        /* The format refused. */
        fake.identify_ret = 0;
        id_ns(0, 0, 0, 0);
        fake.command_ret = 0x4002;
        assert_int_equal(fw_nvme_format(5, &c, err, sizeof(err)), -EIO);
        assert_string_equal(err, "Format NVM: Invalid Field in Command (status 0002h)");
        fake.command_ret = 0x410a;
        assert_int_equal(fw_nvme_format(5, &c, err, sizeof(err)), -EIO);
        assert_string_equal(err, "Format NVM: Invalid Format (status 010Ah)");
        fake.command_ret = 0x001d;
        assert_int_equal(fw_nvme_format(5, &c, err, sizeof(err)), -EIO);
        assert_string_equal(err, "Format NVM: Sanitize In Progress (status 001Dh)");
        fake.command_ret = -1;
        fake.errno_ret = EINTR;
        assert_int_equal(fw_nvme_format(5, &c, err, sizeof(err)), -EINTR);
        assert_string_equal(err, "Format NVM: Interrupted system call");
        assert_int_equal(fake.formats, 4);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_layout),
                cmocka_unit_test(test_id_ctrl),
                cmocka_unit_test(test_sanitize_log),
                cmocka_unit_test(test_status_names),
                cmocka_unit_test(test_json),
                cmocka_unit_test(test_probe_not_nvme),
                cmocka_unit_test_setup_teardown(test_sysfs_controller, sysfs_setup, sysfs_teardown),
                cmocka_unit_test_setup_teardown(test_sysfs_subsystem, sysfs_setup, sysfs_teardown),
                cmocka_unit_test_setup_teardown(test_sysfs_none, sysfs_setup, sysfs_teardown),
                cmocka_unit_test(test_id_ns_layout),
                cmocka_unit_test_setup_teardown(test_sanitize_start, fake_setup, fake_teardown),
                cmocka_unit_test_setup_teardown(test_sanitize_errors, fake_setup, fake_teardown),
                cmocka_unit_test_setup_teardown(test_sanitize_status, fake_setup, fake_teardown),
                cmocka_unit_test_setup_teardown(test_format, fake_setup, fake_teardown),
                cmocka_unit_test_setup_teardown(test_format_refused, fake_setup, fake_teardown),
                cmocka_unit_test_setup_teardown(test_format_errors, fake_setup, fake_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
