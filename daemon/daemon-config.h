/* wiped: the configuration in effect (wiped(8) CONFIGURATION): the file, the command line over it,
 * the defaults under both; read again on SIGHUP. Main thread only. (Not "config.h": autoconf's
 * header has that name, and a daemon/config.h would hide it from every file of daemon/.) */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <json-c/json.h>

#include "conffile.h"
#include "daemon.h"

#define WIPED_CONFIG_DEFAULT "/etc/wiped/wiped.conf"
#define WIPED_POLICY_DIR_DEFAULT "/etc/wiped/policies.d"     /* policy-dir */
/* Defaults of the keys whose zero value is not their default. */
#define WIPED_CHUNK_SIZE_DEFAULT (64ull << 20)          /* chunk-size: common/chunk.h's CHUNK_SIZE_DEFAULT */
#define WIPED_CHECKPOINT_INTERVAL_DEFAULT 5.0           /* checkpoint-interval, seconds */
#define WIPED_CHECKPOINT_BYTES_DEFAULT (4ull << 30)     /* checkpoint-bytes */
#define WIPED_MAX_BAD_DEFAULT (16ull << 20)             /* max-bad */
#define WIPED_CLIENT_TIMEOUT_DEFAULT 60                 /* client-timeout, seconds */
/* worker-policy and worker-nice: see wiped(8) "OPTIONS" for the measurement behind them. */
#define WIPED_WORKER_POLICY_DEFAULT CONFFILE_POLICY_OTHER
#define WIPED_WORKER_NICE_DEFAULT 10
#define WIPED_METRICS_INTERVAL_DEFAULT 10.0             /* metrics-interval, seconds */
#define WIPED_METRICS_ENDED_MAX_AGE_DEFAULT 86400.0     /* metrics-ended-max-age, seconds */
#define WIPED_REPORT_TIMEOUT_DEFAULT 30.0               /* report-timeout, seconds */
#define WIPED_REPORT_RETRY_MAX_INTERVAL_DEFAULT 300.0   /* report-retry-max-interval, seconds */

/* Read the configuration file at path (NULL: WIPED_CONFIG_DEFAULT, which may be missing; a path
 * given must exist), put cmdline (the command line and environment: taken over and reset) over it
 * and the defaults under both. On an error logs "FILE:LINE: message" and returns -errno. */
int config_load(const char *path, struct conffile *cmdline);
/* wiped --check-config: read the configuration as config_load() does, print every problem of the
 * file on standard error ("FILE:LINE: message", one a line) or the settings in effect on standard
 * output (as lines of the file), and a verdict on standard error. Starts nothing. 0, or -errno
 * when the configuration does not parse or cannot be read. */
int config_test(const char *path, struct conffile *cmdline);
/* The settings in effect; every key has a value (socket_group NULL: none configured). The pointer
 * stays valid, the strings in it until the next config_reload(). Read the reloadable values
 * (chunk_size, checkpoint_interval, checkpoint_bytes, resume_manual, history_max_age_days) where
 * they are used, not once at start-up: a reload changes them in place. */
const struct conffile *config_settings(void);
/* Read the file again (SIGHUP). The reloadable keys take their new values at once and apply
 * where they are next read: method, verify, cipher, allow, deny and chunk-size from the next
 * request on, checkpoint-interval and checkpoint-bytes from a running job's next checkpoint,
 * resume and history-max-age when next consulted. A changed setting that needs a restart
 * (threads, buffers, io-size, queue-depth, max-rate, worker-policy, worker-nice, socket, state-dir,
 * socket-group, status-socket) keeps its
 * value, with a warning naming it. A file that does not parse changes nothing. Logs what it did;
 * returns 0 or -errno. */
int config_reload(void);
/* The file in effect, NULL when none was read (the default file is missing). */
const char *config_path(void);
/* Defaults of a submit that does not say: method name, verification, cipher. */
const char *config_method(void);
/* What purge does on a drive without firmware erase: "refuse", or a pass to write instead. */
const char *config_purge_fallback(void);
/* What a submit does with an ATA drive's hidden area (HPA, DCO): "restore" (the HPA; a DCO or an
 * accessible max address is refused), "refuse" or "ignore" (recorded only). */
const char *config_hidden_area(void);
void config_verify(enum verify_mode *mode, double *percent);
enum keystream_cipher config_cipher(void);
/* Whether the allow and deny patterns let the device at node (resolved) with the symlinks links
 * (NULL-terminated, may be NULL) be used: 0, or -EACCES with the reason in msg
 * ("denied by the configuration (deny = /dev/sd*)"). */
int config_check_device(const char *node, char *const *links, char *msg, size_t len);
/* The group of the socket the daemon creates: 1 with its gid in *ret when socket-group is set, 0
 * when not, -errno (logged) when the group cannot be found any more. */
int config_socket_group(gid_t *ret);
/* Add "config" (path or null), "method", "verify", "cipher", "chunk_size", "checkpoint_interval_s",
 * "checkpoint_bytes", "resume" ("auto", "manual") and "history_max_age_days" to o. 0 or -ENOMEM. */
int config_json_add(struct json_object *o);
void config_free(void);
