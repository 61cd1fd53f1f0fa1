/* Drive health (smart.h): smartctl run with posix_spawn and a timeout, its JSON read into a
 * snapshot, and the snapshots of a job: before it writes (at the submit, on the main thread: a
 * refusal must be known before the submit answers; every drive of the submit at once, so the
 * submit waits smart-timeout at most), and after it ended (a thread of its own: the main thread
 * goes on, and the report waits for it). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "clock.h"
#include "daemon-config.h"
#include "daemon.h"
#include "job-private.h"
#include "smart.h"

#define log_warning(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)

static const char *const policy_names[_SMART_POLICY_MAX] = {
        [SMART_POLICY_IGNORE] = "ignore",
        [SMART_POLICY_FLAG] = "flag",
        [SMART_POLICY_REFUSE] = "refuse",
};

const char *smart_policy_name(enum smart_policy p) {
        return (unsigned) p < _SMART_POLICY_MAX ? policy_names[p] : NULL;
}

int smart_policy_from_name(const char *name, enum smart_policy *ret) {
        for (unsigned p = 0; name && p < _SMART_POLICY_MAX; p++)
                if (strcmp(name, policy_names[p]) == 0) {
                        *ret = (enum smart_policy) p;
                        return 0;
                }
        return -EINVAL;
}

/* ---- parsing: pure ---- */

/* Every member of a snapshot, in order, the numbers null: the caller fills in what it knows. */
static struct json_object *snapshot_new(bool available, const char *reason, const char *tool, int64_t checked_at) {
        static const char *const numbers[] = { "power_on_hours", "reallocated_sectors", "pending_sectors",
                                               "offline_uncorrectable", "nvme_percentage_used", "nvme_media_errors",
                                               "nvme_critical_warning", "temperature_c" };
        struct json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        if (json_add(o, "available", json_object_new_boolean(available)) < 0 ||
            (reason && json_add(o, "reason", json_object_new_string(reason)) < 0) ||
            json_object_object_add(o, "tool", tool ? json_object_new_string(tool) : NULL) < 0 ||
            json_add(o, "checked_at", json_object_new_int64(checked_at)) < 0 ||
            json_object_object_add(o, "passed", NULL) < 0) {
                json_object_put(o);
                return NULL;
        }
        for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++)
                if (json_object_object_add(o, numbers[i], NULL) < 0) {
                        json_object_put(o);
                        return NULL;
                }
        return o;
}

struct json_object *smart_unavailable(const char *reason, const char *tool, int64_t checked_at) {
        return snapshot_new(false, reason, tool, checked_at);
}

/* The member path (a NULL-terminated list of keys) of o, or NULL. */
static struct json_object *get_path(struct json_object *o, const char *const *keys) {
        for (; o && *keys; keys++)
                if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, *keys, &o))
                        return NULL;
        return o;
}

#define PATH(o, ...) get_path(o, (const char *const[]) { __VA_ARGS__, NULL })

/* A count smartctl gives as a JSON integer (never negative): into the snapshot's key. */
static int put_count(struct json_object *snap, const char *key, struct json_object *v) {
        if (!v || !json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
                return 0;
        return json_add(snap, key, json_object_new_int64(json_object_get_int64(v)));
}

/* The raw value of the ATA attribute id in smartctl's attribute table, or NULL. */
static struct json_object *ata_raw(struct json_object *root, int id) {
        struct json_object *table = PATH(root, "ata_smart_attributes", "table");

        if (!table || !json_object_is_type(table, json_type_array))
                return NULL;
        for (size_t i = 0; i < json_object_array_length(table); i++) {
                struct json_object *a = json_object_array_get_idx(table, i), *v = PATH(a, "id");

                if (v && json_object_is_type(v, json_type_int) && json_object_get_int(v) == id)
                        return PATH(a, "raw", "value");
        }
        return NULL;
}

/* smartctl's first error message without the device's name in front ("/dev/loop0: Unable to
 * detect device type" gives "Unable to detect device type"), or NULL. */
static const char *first_error(struct json_object *root, char *buf, size_t len) {
        struct json_object *msgs = PATH(root, "smartctl", "messages");

        if (!msgs || !json_object_is_type(msgs, json_type_array))
                return NULL;
        for (size_t i = 0; i < json_object_array_length(msgs); i++) {
                struct json_object *m = json_object_array_get_idx(msgs, i);
                struct json_object *s = PATH(m, "string"), *sev = PATH(m, "severity");
                const char *text, *colon;

                if (!s || !json_object_is_type(s, json_type_string))
                        continue;
                if (sev && json_object_is_type(sev, json_type_string) &&
                    strcmp(json_object_get_string(sev), "error") != 0)
                        continue;
                text = json_object_get_string(s);
                colon = strstr(text, ": ");
                if (text[0] == '/' && colon)
                        text = colon + 2;
                snprintf(buf, len, "%s", text);
                /* One line of it. */
                buf[strcspn(buf, "\n")] = '\0';
                return buf;
        }
        return NULL;
}

struct json_object *smart_parse(const char *json, size_t len, int exit_status, int64_t checked_at) {
        _cleanup_json_ struct json_object *root = NULL;
        struct json_object *o, *v, *ver, *health;
        struct json_tokener *tok;
        char tool[64] = "smartctl", why[256], msg[200];
        bool any;

        tok = json_tokener_new();
        if (!tok)
                return NULL;
        if (len <= INT32_MAX)
                root = json_tokener_parse_ex(tok, json, (int) len);
        /* Garbage after the object (or no end to it) is not smartctl's output either. */
        if (root && (json_tokener_get_error(tok) != json_tokener_success || json_tokener_get_parse_end(tok) < len)) {
                size_t rest = json_tokener_get_parse_end(tok);

                while (rest < len && (json[rest] == ' ' || json[rest] == '\n' || json[rest] == '\t' || json[rest] == '\r'))
                        rest++;
                if (rest < len) {
                        json_object_put(root);
                        root = NULL;
                }
        }
        json_tokener_free(tok);
        if (!root || !json_object_is_type(root, json_type_object) || !PATH(root, "smartctl"))
                return smart_unavailable("smartctl output unreadable", NULL, checked_at);

        ver = PATH(root, "smartctl", "version");
        if (ver && json_object_is_type(ver, json_type_array) && json_object_array_length(ver) >= 2)
                snprintf(tool, sizeof(tool), "smartctl %d.%d", json_object_get_int(json_object_array_get_idx(ver, 0)),
                         json_object_get_int(json_object_array_get_idx(ver, 1)));
        if (exit_status < 0 && (v = PATH(root, "smartctl", "exit_status")) && json_object_is_type(v, json_type_int))
                exit_status = json_object_get_int(v);

        health = PATH(root, "smart_status", "passed");
        any = (health && json_object_is_type(health, json_type_boolean)) || PATH(root, "ata_smart_attributes") ||
              PATH(root, "nvme_smart_health_information_log") || PATH(root, "scsi_grown_defect_list");
        if (!any) {
                v = PATH(root, "smart_support", "available");
                if (v && json_object_is_type(v, json_type_boolean) && !json_object_get_boolean(v))
                        snprintf(why, sizeof(why), "no SMART: the device does not support it");
                else if ((v = PATH(root, "smart_support", "enabled")) && json_object_is_type(v, json_type_boolean) &&
                         !json_object_get_boolean(v))
                        snprintf(why, sizeof(why), "no SMART: disabled on the device");
                else if (first_error(root, msg, sizeof(msg)))
                        snprintf(why, sizeof(why), "no SMART: %s", msg);
                else
                        snprintf(why, sizeof(why), "no SMART data (smartctl exit status %d)", exit_status);
                return smart_unavailable(why, tool, checked_at);
        }

        o = snapshot_new(true, NULL, tool, checked_at);
        if (!o)
                return NULL;
        /* smartctl's own verdict; exit status bit 3 is "DISK FAILING" where the JSON has none. */
        if (health && json_object_is_type(health, json_type_boolean)) {
                if (json_add(o, "passed", json_object_new_boolean(json_object_get_boolean(health))) < 0)
                        goto oom;
        } else if (exit_status >= 0 && (exit_status & 8)) {
                if (json_add(o, "passed", json_object_new_boolean(false)) < 0)
                        goto oom;
        }
        v = PATH(root, "power_on_time", "hours");
        if (!v)
                v = PATH(root, "nvme_smart_health_information_log", "power_on_hours");
        if (put_count(o, "power_on_hours", v) < 0 ||
            put_count(o, "reallocated_sectors", ata_raw(root, 5)) < 0 ||
            put_count(o, "pending_sectors", ata_raw(root, 197)) < 0 ||
            put_count(o, "offline_uncorrectable", ata_raw(root, 198)) < 0 ||
            put_count(o, "nvme_percentage_used", PATH(root, "nvme_smart_health_information_log", "percentage_used")) < 0 ||
            put_count(o, "nvme_media_errors", PATH(root, "nvme_smart_health_information_log", "media_errors")) < 0 ||
            put_count(o, "nvme_critical_warning", PATH(root, "nvme_smart_health_information_log", "critical_warning")) < 0)
                goto oom;
        /* A SCSI drive's grown defects are its reallocated blocks. */
        if (!ata_raw(root, 5) && put_count(o, "reallocated_sectors", PATH(root, "scsi_grown_defect_list")) < 0)
                goto oom;
        v = PATH(root, "temperature", "current");
        if (v && json_object_is_type(v, json_type_int) &&
            json_add(o, "temperature_c", json_object_new_int64(json_object_get_int64(v))) < 0)
                goto oom;
        return o;
oom:
        json_object_put(o);
        return NULL;
}

bool smart_failed(struct json_object *o) {
        struct json_object *p;

        return o && json_object_object_get_ex(o, "passed", &p) && p && json_object_is_type(p, json_type_boolean) &&
               !json_object_get_boolean(p);
}

const char *smart_kind(const char *name, const char *transport) {
        static const struct {
                const char *prefix, *kind;
        } kinds[] = {
                { "loop", "loop device" }, { "zram", "zram device" }, { "dm-", "device-mapper device" },
                { "md", "md RAID device" }, { "nbd", "network block device" }, { "ram", "RAM disk" },
        };

        if (transport && strcmp(transport, "loop") == 0)
                return "loop device";
        for (size_t i = 0; name && i < sizeof(kinds) / sizeof(kinds[0]); i++)
                if (strncmp(name, kinds[i].prefix, strlen(kinds[i].prefix)) == 0)
                        return kinds[i].kind;
        return NULL;
}

/* ---- running smartctl ---- */

/* One smartctl being run. */
struct smart_proc {
        pid_t pid;                      /* 0: not started (spawn_error) */
        int fd;                         /* its stdout; -1 at its end */
        int spawn_error;                /* errno of posix_spawn */
        char *buf;                      /* its output */
        size_t len, cap;
        bool overflow;                  /* more than SMART_OUTPUT_MAX */
        bool exited;
        bool timed_out;
        int status;                     /* waitpid's */
};

/* The program to run: a path as given, or a name found in PATH or the sbin directories (where
 * Debian puts smartctl; a daemon started without them in PATH still finds it). */
static char *smart_find(const char *program) {
        const char *path = getenv("PATH");
        _cleanup_free_ char *dirs = NULL;
        char *save = NULL;

        if (strchr(program, '/'))
                return strdup(program);
        if (asprintf(&dirs, "%s:/usr/local/sbin:/usr/sbin:/sbin", path && *path ? path : "/usr/bin:/bin") < 0)
                return NULL;
        for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
                char *p;

                if (asprintf(&p, "%s/%s", *d ? d : ".", program) < 0)
                        return NULL;
                if (access(p, X_OK) == 0)
                        return p;
                free(p);
        }
        errno = ENOENT;
        return NULL;
}

/* Start program --json=c -i -H -A node with a small fixed environment: stdout a pipe to us, stderr
 * /dev/null, a process group of its own, so that a script's children die with it (spawn_piped). */
static void proc_start(struct smart_proc *p, const char *path, const char *node) {
        static char *const env[] = { (char *) "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                                     (char *) "LC_ALL=C", NULL };
        char *argv[] = { (char *) path, (char *) "--json=c", (char *) "-i", (char *) "-H", (char *) "-A",
                         (char *) node, NULL };
        int r;

        p->fd = -1;
        r = spawn_piped(path, argv, env, false, &p->pid, &p->fd);
        if (r < 0) {
                p->fd = -1;
                p->pid = 0;
                p->spawn_error = -r;
        }
}

/* Read what there is of p's output; at its end (or past SMART_OUTPUT_MAX) close it. */
static void proc_read(struct smart_proc *p) {
        for (;;) {
                ssize_t k;

                if (p->cap - p->len < 4096) {
                        size_t cap = p->cap ? p->cap * 2 : 16384;
                        char *b;

                        if (cap > SMART_OUTPUT_MAX + 4096)
                                cap = SMART_OUTPUT_MAX + 4096;
                        if (cap - p->len < 1) {
                                p->overflow = true;
                                break;
                        }
                        b = realloc(p->buf, cap);
                        if (!b) {
                                p->overflow = true;
                                break;
                        }
                        p->buf = b;
                        p->cap = cap;
                }
                k = read(p->fd, p->buf + p->len, p->cap - p->len);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0 && errno == EAGAIN)
                        return;
                if (k <= 0)
                        break;
                p->len += (size_t) k;
                if (p->len > SMART_OUTPUT_MAX) {
                        p->overflow = true;
                        break;
                }
                /* One read a wake-up: the others get their turn. */
                return;
        }
        close(p->fd);
        p->fd = -1;
}

void smart_run(const char *program, unsigned timeout_s, const char *const *nodes, const char *const *kinds,
               size_t n, struct json_object **out) {
        _cleanup_free_ struct smart_proc *procs = calloc(n, sizeof(*procs));
        _cleanup_free_ struct pollfd *pfd = calloc(n, sizeof(*pfd));
        _cleanup_free_ char *path = NULL;
        double deadline = mono_s() + timeout_s;
        int64_t now = (int64_t) real_s();
        /* A submit or probe waits here on the main thread, which the watchdog hears from. */
        bool main_thread = gettid() == getpid();
        size_t i, running = 0;

        if (!procs || !pfd) {
                for (i = 0; i < n; i++)
                        out[i] = NULL;
                return;
        }
        path = smart_find(program);
        for (i = 0; i < n; i++) {
                procs[i].fd = -1;
                if (!path)
                        procs[i].spawn_error = errno ? errno : ENOENT;
                else
                        proc_start(&procs[i], path, nodes[i]);
                if (procs[i].fd >= 0)
                        (void) fcntl(procs[i].fd, F_SETFL, O_NONBLOCK);
                if (procs[i].pid > 0)
                        running++;
        }
        /* Their output until each closes it and exits, or the deadline. */
        while (running > 0) {
                double left = deadline - mono_s();
                size_t np = 0;

                /* Several runs in one go (bay policies starting a job each in one tick) may
                 * outlast the watchdog's interval; each run is bounded by timeout_s. */
                if (main_thread)
                        server_watchdog_alive();
                for (i = 0; i < n; i++) {
                        struct smart_proc *p = &procs[i];

                        if (p->pid > 0 && !p->exited && p->fd < 0) {
                                pid_t w = waitpid(p->pid, &p->status, WNOHANG);

                                if (w == p->pid || (w < 0 && errno == ECHILD)) {
                                        p->exited = true;
                                        running--;
                                }
                        }
                }
                if (running == 0)
                        break;
                if (left <= 0) {
                        for (i = 0; i < n; i++) {
                                struct smart_proc *p = &procs[i];

                                if (p->pid <= 0 || p->exited)
                                        continue;
                                p->timed_out = true;
                                (void) kill(-p->pid, SIGKILL);
                                (void) kill(p->pid, SIGKILL);
                                while (waitpid(p->pid, &p->status, 0) < 0 && errno == EINTR)
                                        ;
                                p->exited = true;
                                if (p->fd >= 0) {
                                        close(p->fd);
                                        p->fd = -1;
                                }
                        }
                        break;
                }
                for (i = 0; i < n; i++)
                        if (procs[i].fd >= 0)
                                pfd[np++] = (struct pollfd) { .fd = procs[i].fd, .events = POLLIN };
                /* No pipe open: a process that closed its output and has not exited yet. */
                if (np == 0) {
                        (void) nanosleep(&(struct timespec) { .tv_nsec = 10 * 1000 * 1000 }, NULL);
                        continue;
                }
                /* poll() itself failing (ENOMEM): the runs end now, killed and reaped as at the
                 * deadline, not left running with nobody to wait for them. */
                if (poll(pfd, np, left > 1.0 ? 1000 : (int) (left * 1000) + 1) < 0 && errno != EINTR) {
                        deadline = 0;
                        continue;
                }
                for (i = 0; i < n; i++)
                        for (size_t k = 0; procs[i].fd >= 0 && k < np; k++)
                                if (pfd[k].fd == procs[i].fd && pfd[k].revents) {
                                        proc_read(&procs[i]);
                                        break;
                                }
        }

        for (i = 0; i < n; i++) {
                struct smart_proc *p = &procs[i];
                char why[256];

                if (p->fd >= 0)
                        close(p->fd);
                if (p->pid <= 0) {
                        if (p->spawn_error == ENOENT && !strchr(program, '/'))
                                snprintf(why, sizeof(why), "%s not installed", program);
                        else
                                snprintf(why, sizeof(why), "cannot run %s: %s", program, strerror(p->spawn_error));
                        out[i] = smart_unavailable(why, NULL, now);
                } else if (p->timed_out) {
                        out[i] = smart_unavailable("smartctl timed out", NULL, now);
                } else if (p->overflow) {
                        out[i] = smart_unavailable("smartctl output unreadable", NULL, now);
                } else if (WIFSIGNALED(p->status)) {
                        snprintf(why, sizeof(why), "smartctl killed by signal %d", WTERMSIG(p->status));
                        out[i] = smart_unavailable(why, NULL, now);
                } else {
                        out[i] = smart_parse(p->buf ? p->buf : "", p->len, WEXITSTATUS(p->status), now);
                }
                /* A device that cannot have SMART says what it is. */
                if (out[i] && kinds && kinds[i]) {
                        struct json_object *a, *r;

                        if (json_object_object_get_ex(out[i], "available", &a) && !json_object_get_boolean(a) &&
                            json_object_object_get_ex(out[i], "reason", &r) &&
                            strncmp(json_object_get_string(r), "no SMART", 8) == 0) {
                                snprintf(why, sizeof(why), "no SMART: %s", kinds[i]);
                                json_object_object_add(out[i], "reason", json_object_new_string(why));
                        }
                }
                free(p->buf);
        }
}

/* The configured program, or NULL when smartctl = none. */
static const char *config_program(void) {
        const char *s = config_settings()->smartctl;

        if (!s || !*s)
                return "smartctl";
        return strcmp(s, "none") == 0 ? NULL : s;
}

static unsigned config_timeout(void) {
        unsigned t = config_settings()->smart_timeout;

        return t ? t : SMART_TIMEOUT_DEFAULT;
}

static enum smart_policy config_policy(void) {
        enum smart_policy p = SMART_POLICY_FLAG;

        (void) smart_policy_from_name(config_settings()->smart_policy, &p);
        return p;
}

#define DISABLED "SMART disabled by configuration"

/* A string member of o, or NULL. */
static const char *get_str(struct json_object *o, const char *key) {
        struct json_object *v;

        return o && json_object_object_get_ex(o, key, &v) && v && json_object_is_type(v, json_type_string) ?
               json_object_get_string(v) : NULL;
}

void smart_probe_add(struct json_object *devices) {
        size_t n = devices ? json_object_array_length(devices) : 0, k = 0;
        _cleanup_free_ const char **nodes = calloc(n ? n : 1, sizeof(*nodes));
        _cleanup_free_ const char **kinds = calloc(n ? n : 1, sizeof(*kinds));
        _cleanup_free_ struct json_object **out = calloc(n ? n : 1, sizeof(*out));
        _cleanup_free_ size_t *at = calloc(n ? n : 1, sizeof(*at));
        const char *program = config_program();

        if (!nodes || !kinds || !out || !at)
                return;
        for (size_t i = 0; i < n; i++) {
                struct json_object *p = json_object_array_get_idx(devices, i), *id = NULL;

                if (!p)
                        continue;
                json_object_object_add(p, "smart", NULL);
                /* A block device has an identity (its node resolved). */
                if (!json_object_object_get_ex(p, "identity", &id) || !id || !get_str(id, "node"))
                        continue;
                nodes[k] = get_str(id, "node");
                kinds[k] = smart_kind(get_str(id, "name"), get_str(id, "transport"));
                at[k++] = i;
        }
        if (k == 0)
                return;
        if (!program)
                for (size_t i = 0; i < k; i++)
                        out[i] = smart_unavailable(DISABLED, NULL, (int64_t) real_s());
        else
                smart_run(program, config_timeout(), nodes, kinds, k, out);
        for (size_t i = 0; i < k; i++)
                json_object_object_add(json_object_array_get_idx(devices, at[i]), "smart", out[i]);
}

/* ---- jobs ---- */

/* The snapshot after being taken. Only the thread writes it until done; the main thread then
 * joins it and takes result. */
struct smart_thread {
        pthread_t tid;
        atomic_bool done;
        char *program;
        unsigned timeout;
        char *node;
        const char *kind;               /* static */
        struct json_object *result;
};

static void smart_thread_free(struct smart_thread *t) {
        if (!t)
                return;
        pthread_join(t->tid, NULL);
        json_object_put(t->result);
        free(t->program);
        free(t->node);
        free(t);
}

static void *smart_thread_main(void *arg) {
        struct smart_thread *t = arg;
        const char *node = t->node;

        pthread_setname_np(pthread_self(), "wiped-smart");
        smart_run(t->program, t->timeout, &node, &t->kind, 1, &t->result);
        atomic_store(&t->done, true);
        return NULL;
}

static bool smart_checked(enum smart_policy p) {
        return p != SMART_POLICY_IGNORE;
}

/* The snapshot of a job that is not checked (ignore): no smartctl run. */
static struct json_object *smart_not_checked(void) {
        return smart_unavailable("not checked (smart-policy = ignore)", NULL, (int64_t) real_s());
}

int smart_jobs_before(struct job **made, size_t n, char *err, size_t err_len) {
        enum smart_policy policy = config_policy();
        const char *program = config_program();
        _cleanup_free_ const char **nodes = calloc(n ? n : 1, sizeof(*nodes));
        _cleanup_free_ const char **kinds = calloc(n ? n : 1, sizeof(*kinds));
        _cleanup_free_ struct json_object **out = calloc(n ? n : 1, sizeof(*out));
        size_t i;

        if (!nodes || !kinds || !out)
                return -ENOMEM;
        for (i = 0; i < n; i++) {
                made[i]->smart_policy = policy;
                nodes[i] = made[i]->info.node;
                kinds[i] = smart_kind(made[i]->info.name, made[i]->info.transport);
        }
        if (!smart_checked(policy))
                for (i = 0; i < n; i++)
                        out[i] = smart_not_checked();
        else if (!program)
                for (i = 0; i < n; i++)
                        out[i] = smart_unavailable(DISABLED, NULL, (int64_t) real_s());
        else
                smart_run(program, config_timeout(), nodes, kinds, n, out);
        for (i = 0; i < n; i++) {
                if (!out[i]) {
                        while (i < n)
                                json_object_put(out[i++]);
                        return -ENOMEM;
                }
                json_object_put(made[i]->smart_before);
                made[i]->smart_before = out[i];
                made[i]->smart_after_due = smart_checked(policy);
                /* Not checked after either: said once, now. */
                if (!smart_checked(policy) && !(made[i]->smart_after = smart_not_checked()))
                        return -ENOMEM;
        }
        for (i = 0; i < n; i++) {
                struct json_object *r;

                if (json_object_object_get_ex(made[i]->smart_before, "reason", &r))
                        log_info("%s: drive health: %s", made[i]->info.node, json_object_get_string(r));
                if (!smart_failed(made[i]->smart_before))
                        continue;
                if (policy == SMART_POLICY_REFUSE) {
                        snprintf(err, err_len, "%s: refusing: the drive failed its SMART health check (smartctl: "
                                 "overall-health FAILED) and smart-policy is refuse", made[i]->info.node);
                        return -EBUSY;
                }
                log_warning("%s: the drive failed its SMART health check (overall-health FAILED); wiped anyway "
                            "(smart-policy = flag): the report says so", made[i]->info.node);
        }
        return 0;
}

void smart_job_tick(struct job *job) {
        struct smart_thread *t = job->smart_thread;

        if (t) {
                if (!atomic_load(&t->done))
                        return;
                pthread_join(t->tid, NULL);
                pthread_mutex_lock(&job->lock);
                job->smart_after = TAKE_PTR(t->result);
                job->dirty = true;
                pthread_mutex_unlock(&job->lock);
                if (!job->smart_after)
                        job->smart_after = smart_unavailable("out of memory", NULL, (int64_t) real_s());
                /* A report written without it (at a forget, the daemon's stop): written again. */
                job->reported = false;
                job->smart_thread = NULL;
                free(t->program);
                free(t->node);
                free(t);
                return;
        }
        if (!job->smart_after_due || job->smart_after || !job->smart_before ||
            !state_ended(job_get_state(job)) || !atomic_load(&job->settled))
                return;
        if (!config_program()) {
                job->smart_after = smart_unavailable(DISABLED, NULL, (int64_t) real_s());
                job->reported = false;
                pthread_mutex_lock(&job->lock);
                job->dirty = true;
                pthread_mutex_unlock(&job->lock);
                return;
        }
        t = calloc(1, sizeof(*t));
        if (!t)
                return;         /* tried again at the next tick */
        t->program = strdup(config_program());
        t->node = strdup(job->info.node);
        t->timeout = config_timeout();
        t->kind = smart_kind(job->info.name, job->info.transport);
        if (!t->program || !t->node || pthread_create(&t->tid, NULL, smart_thread_main, t) != 0) {
                free(t->program);
                free(t->node);
                free(t);
                return;
        }
        job->smart_thread = t;
}

bool smart_job_settled(struct job *job) {
        return !job->smart_after_due || job->smart_after;
}

void smart_job_free(struct job *job) {
        smart_thread_free(job->smart_thread);
        job->smart_thread = NULL;
        json_object_put(job->smart_before);
        json_object_put(job->smart_after);
        job->smart_before = job->smart_after = NULL;
}

static struct json_object *ref(struct json_object *o) {
        return o ? json_object_get(o) : NULL;
}

void smart_report_add(struct job *job, struct json_object *o) {
        /* A job made before drive health has none of them. */
        if (!job->smart_before)
                return;
        json_add(o, "smart_policy", json_object_new_string(smart_policy_name(job->smart_policy)));
        json_object_object_add(o, "smart_before", ref(job->smart_before));
        json_object_object_add(o, "smart_after", ref(job->smart_after));
}

void smart_status_add(struct job *job, struct json_object *o) {
        json_object_object_add(o, "smart_before", ref(job->smart_before));
}

void smart_record_add(struct job *job, struct json_object *o) {
        struct json_object *s;

        if (!job->smart_before)
                return;
        s = json_object_new_object();
        if (!s)
                return;
        json_add(s, "policy", json_object_new_string(smart_policy_name(job->smart_policy)));
        json_object_object_add(s, "before", ref(job->smart_before));
        json_object_object_add(s, "after", ref(job->smart_after));
        json_object_object_add(s, "after_due", json_object_new_boolean(job->smart_after_due));
        json_object_object_add(o, "smart", s);
}

int smart_record_parse(struct json_object *rec, struct job *job) {
        struct json_object *s, *v, *b, *a;

        /* Since issue 20: absent from older records. */
        if (!json_object_object_get_ex(rec, "smart", &s) || !s)
                return 0;
        if (!json_object_is_type(s, json_type_object) || !json_object_object_get_ex(s, "policy", &v) ||
            !json_object_is_type(v, json_type_string) ||
            smart_policy_from_name(json_object_get_string(v), &job->smart_policy) < 0 ||
            !json_object_object_get_ex(s, "before", &b) || !json_object_is_type(b, json_type_object))
                return -EBADMSG;
        if (json_object_object_get_ex(s, "after", &a) && a && !json_object_is_type(a, json_type_object))
                return -EBADMSG;
        job->smart_before = json_object_get(b);
        job->smart_after = a ? json_object_get(a) : NULL;
        job->smart_after_due = json_object_object_get_ex(s, "after_due", &v) && json_object_get_boolean(v);
        return 0;
}
