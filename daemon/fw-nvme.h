/* fw-nvme.c's parts that need no device: decoding what the controller returned, and finding the
 * controller and its namespaces in sysfs. Private to fw-nvme.c and its unit test
 * (tests/unit/test-fw-nvme.c). */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "firmware.h"

struct nvme_id_ctrl;
struct nvme_sanitize_log_page;

/* c's SANICAP, OACS (Format NVM), FNA and NN fields from an Identify Controller data structure as
 * the controller sent it (little-endian). Touches nothing else in c. */
void fw_nvme_caps_from_id_ctrl(const struct nvme_id_ctrl *id, struct fw_nvme_caps *c);

/* c's Sanitize Status fields (SPROG, SSTAT, ETO, ETBE, ETCE; an estimate of FFFFFFFFh becomes -1)
 * from the log page as the controller sent it, and have_sanitize_log. */
void fw_nvme_caps_from_sanitize_log(const struct nvme_sanitize_log_page *log, struct fw_nvme_caps *c);

/* The name of the most recent sanitize operation's status in SSTAT bits 2:0: "never",
 * "completed", "in progress", "failed", "completed without deallocation", or NULL (reserved). */
const char *fw_nvme_sanitize_status_name(uint16_t sstat);

/* The controller character device (/dev/nvmeX) and the sorted, NULL-terminated block devices of
 * every namespace on it (/dev/nvmeXnY) for the namespace block device rdev, from the sysfs mounted
 * at sysroot ("/sys"). Both NULL, and 0, when sysfs shows no NVMe controller above rdev (a loop
 * device the drive simulator answers for). 0 or -errno; the caller owns *controller and
 * *namespaces (fw_nvme_caps_done frees them). */
int fw_nvme_sysfs_topology(const char *sysroot, dev_t rdev, char **controller, char ***namespaces);
