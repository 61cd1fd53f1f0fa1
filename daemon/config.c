/* The configuration in effect: read at start-up, merged with the command line (which wins), read
 * again on SIGHUP. Settings that shape the pool, the socket or the state directory are fixed for
 * the life of the process; the defaults of a submit, the device patterns, checkpointing, resuming
 * and the history's age follow the file. */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chunk.h"
#include "daemon-config.h"
#include "protocol.h"

_Static_assert(CONFFILE_THREADS_MAX == WIPED_THREADS_MAX, "thread bound of the file and the daemon");
_Static_assert(CONFFILE_BUFFERS_MAX == WIPED_BUFFERS_MAX, "buffer bound of the file and the daemon");
_Static_assert(CONFFILE_QUEUE_DEPTH_MAX == WIPED_QD_MAX, "queue depth bound of the file and the daemon");
_Static_assert(CONFFILE_HOOK_MAX_RUNNING_MAX == HOOK_MAX_RUNNING_MAX, "hook bound of the file and the daemon");
_Static_assert(WIPED_CHUNK_SIZE_DEFAULT == CHUNK_SIZE_DEFAULT, "default chunk size of the file and the planner");

static struct {
        char *path;                     /* the file: --config, or the default */
        bool required;                  /* --config was given: the file must exist */
        bool found;                     /* the file existed when last read */
        struct conffile cmdline;        /* command line and environment: over the file */
        struct conffile cur;            /* in effect */
        enum verify_mode verify;        /* cur.verify, parsed */
        double verify_percent;
} config;

/* The checks conffile cannot make itself: the verification syntax and the group's existence. */
static int config_check(enum conffile_key key, const char *value, char *msg, size_t len) {
        enum verify_mode mode;
        double percent;

        if (key == CONFFILE_VERIFY && verify_mode_parse(value, &mode, &percent) < 0) {
                snprintf(msg, len, "unknown verification (none, sample, sample=PCT, last, all)");
                return -EINVAL;
        }
        if (key == CONFFILE_SOCKET_GROUP && strspn(value, "0123456789") != strlen(value) && !getgrnam(value)) {
                snprintf(msg, len, "no such group");
                return -EINVAL;
        }
        return 0;
}

/* Fill every key the sources left unset with the daemon's default. 0 or -ENOMEM. */
static int config_defaults(struct conffile *c) {
        const char *sock = PROTOCOL_SOCKET_DEFAULT;

        if (!c->set[CONFFILE_THREADS]) {
                long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

                c->threads = ncpu < 1 ? 1 : ncpu > WIPED_THREADS_MAX ? WIPED_THREADS_MAX : (unsigned) ncpu;
        }
        if (!c->set[CONFFILE_BUFFERS])
                c->buffers = WIPED_BUFFERS;
        if (!c->set[CONFFILE_IO_SIZE])
                c->io_size = 1u << 20;
        if (!c->set[CONFFILE_CHUNK_SIZE])
                c->chunk_size = WIPED_CHUNK_SIZE_DEFAULT;
        if (!c->set[CONFFILE_CHECKPOINT_INTERVAL])
                c->checkpoint_interval = WIPED_CHECKPOINT_INTERVAL_DEFAULT;
        if (!c->set[CONFFILE_CHECKPOINT_BYTES])
                c->checkpoint_bytes = WIPED_CHECKPOINT_BYTES_DEFAULT;
        if (!c->set[CONFFILE_MAX_BAD])
                c->max_bad = WIPED_MAX_BAD_DEFAULT;
        if (!c->set[CONFFILE_CLIENT_TIMEOUT])
                c->client_timeout = WIPED_CLIENT_TIMEOUT_DEFAULT;
        if (!c->set[CONFFILE_WORKER_POLICY])
                c->worker_policy = WIPED_WORKER_POLICY_DEFAULT;
        if (!c->set[CONFFILE_WORKER_NICE])
                c->worker_nice = WIPED_WORKER_NICE_DEFAULT;
        if (!c->set[CONFFILE_HOOK_TIMEOUT])
                c->hook_timeout = HOOK_TIMEOUT_DEFAULT;
        if (!c->set[CONFFILE_HOOK_MAX_RUNNING])
                c->hook_max_running = HOOK_MAX_RUNNING_DEFAULT;
        if (!c->set[CONFFILE_SMART_TIMEOUT])
                c->smart_timeout = SMART_TIMEOUT_DEFAULT;
        if (!c->set[CONFFILE_METRICS_INTERVAL])
                c->metrics_interval = WIPED_METRICS_INTERVAL_DEFAULT;
        if (!c->set[CONFFILE_METRICS_ENDED_MAX_AGE])
                c->metrics_ended_max_age = WIPED_METRICS_ENDED_MAX_AGE_DEFAULT;
        if (!c->set[CONFFILE_REPORT_TIMEOUT])
                c->report_timeout = WIPED_REPORT_TIMEOUT_DEFAULT;
        if (!c->set[CONFFILE_REPORT_RETRY_MAX_INTERVAL])
                c->report_retry_max_interval = WIPED_REPORT_RETRY_MAX_INTERVAL_DEFAULT;
        /* resume (auto) and history-max-age (0: forever) default to their zero values. */
        if ((!c->socket && !(c->socket = strdup(sock))) ||
            (!c->state_dir && !(c->state_dir = strdup(WIPED_STATE_DIR_DEFAULT))) ||
            (!c->method && !(c->method = strdup("random"))) ||
            (!c->smartctl && !(c->smartctl = strdup("smartctl"))) ||
            (!c->smart_policy && !(c->smart_policy = strdup("flag"))) ||
            (!c->verify && !(c->verify = strdup("sample"))))
                return -ENOMEM;
        /* The read-only socket: beside the control socket unless configured (or "none"). */
        if (!c->status_socket && !(c->status_socket = protocol_status_socket_path(c->socket)))
                return -ENOMEM;
        return 0;
}

/* Report each line of err (conffile's problems, one a line): on out when given (--check-config:
 * plain lines), else in the log. */
static void config_errors(const char *err, FILE *out) {
        const char *p = err;

        while (*p) {
                size_t n = strcspn(p, "\n");

                if (out)
                        fprintf(out, "%.*s\n", (int) n, p);
                else
                        log_error("%.*s", (int) n, p);
                p += n + (p[n] ? 1 : 0);
        }
}

/* Read the file (a missing default file reads as empty: *found false) and build the settings it
 * gives with the command line over it and the defaults under both, into *ret. On an error
 * reports every problem (config_errors(): on out, or logged) and returns -errno; *ret is to be
 * conffile_done() in any case. */
static int config_build(struct conffile *ret, bool *found, FILE *out) {
        struct conffile file;
        char err[8192] = "";
        int r;

        *ret = (struct conffile) {};
        *found = false;
        r = conffile_load(&file, config.path, config_check, err, sizeof(err));
        if (r == -ENOENT && !config.required) {
                log_debug("%s: missing: the defaults apply", config.path);
                r = 0;
        } else if (r < 0) {
                config_errors(r == -ENOMEM ? "out of memory reading the configuration" : err, out);
                conffile_done(&file);
                return r;
        } else
                *found = true;
        r = conffile_merge(ret, &file);
        if (r >= 0)
                r = conffile_merge(ret, &config.cmdline);
        if (r >= 0)
                r = config_defaults(ret);
        conffile_done(&file);
        if (r < 0)
                log_error("out of memory reading the configuration");
        return r;
}

/* Make c the configuration in effect (taking it over). */
static void config_install(struct conffile *c, bool found) {
        conffile_done(&config.cur);
        config.cur = *c;
        *c = (struct conffile) {};
        config.found = found;
        /* Checked when read (config_check): it parses. */
        if (verify_mode_parse(config.cur.verify, &config.verify, &config.verify_percent) < 0) {
                config.verify = VERIFY_SAMPLE;
                config.verify_percent = SAMPLE_PERCENT_DEFAULT;
        }
}

/* Start over with the file at path (NULL: the default, which may be absent) and the command
 * line's settings (taken from *cmdline). 0 or -ENOMEM. */
static int config_begin(const char *path, struct conffile *cmdline) {
        config_free();
        config.required = path != NULL;
        config.path = strdup(path ? path : WIPED_CONFIG_DEFAULT);
        if (!config.path)
                return -ENOMEM;
        config.cmdline = *cmdline;
        *cmdline = (struct conffile) {};
        return 0;
}

/* config_begin(), then build the settings (problems to errs, or the log when NULL) and put them
 * in effect; *found: the file exists. 0 or -errno. */
static int config_enter(const char *path, struct conffile *cmdline, FILE *errs, bool *found) {
        struct conffile next;
        int r;

        r = config_begin(path, cmdline);
        if (r < 0)
                return r;
        r = config_build(&next, found, errs);
        if (r >= 0)
                config_install(&next, *found);
        conffile_done(&next);
        return r;
}

int config_load(const char *path, struct conffile *cmdline) {
        bool found;

        return config_enter(path, cmdline, NULL, &found);
}

/* The value of key k of c as a line of the file; a key not set and without a default as a
 * comment, which the file reads as none. */
static void config_print_key(FILE *out, const struct conffile *c, enum conffile_key k) {
        const char *name = conffile_key_name(k);
        char buf[1024];

        if (conffile_key_is_list(k)) {
                char *const *v = k == CONFFILE_ALLOW ? c->allow : k == CONFFILE_DENY ? c->deny : NULL;

                /* A header's value may be a secret (Authorization): its name only. */
                if (k == CONFFILE_REPORT_HEADER) {
                        v = c->report_header;
                        for (size_t i = 0; v && v[i]; i++)
                                fprintf(out, "%s = %.*s: (value not shown)\n", name, (int) strcspn(v[i], ":"), v[i]);
                        if (v && v[0])
                                return;
                }
                if (!v || !v[0])
                        fprintf(out, "# %s = (none)\n", name);
                for (size_t i = 0; v && v[i]; i++)
                        fprintf(out, "%s = %s\n", name, v[i]);
                return;
        }
        conffile_format(c, k, buf, sizeof(buf));
        if (strcmp(buf, "(none)") != 0)
                fprintf(out, "%s = %s\n", name, buf);
        else if (k == CONFFILE_PURGE_FALLBACK)
                fprintf(out, "%s = %s\n", name, config_purge_fallback());
        else if (k == CONFFILE_HIDDEN_AREA)
                fprintf(out, "%s = %s\n", name, config_hidden_area());
        else if (k == CONFFILE_KEYSTREAM_BACKEND)
                fprintf(out, "%s = auto\n", name);
        else if (k == CONFFILE_POLICY_DIR)
                fprintf(out, "%s = %s\n", name, WIPED_POLICY_DIR_DEFAULT);
        else if (k == CONFFILE_POLICY_EVENTS)
                fprintf(out, "%s = auto\n", name);
        else
                fprintf(out, "# %s = (not set)\n", name);
}

int config_test(const char *path, struct conffile *cmdline) {
        bool found;
        int r;

        r = config_enter(path, cmdline, stderr, &found);
        if (r < 0) {
                if (config.path)        /* NULL: config_begin() ran out of memory */
                        fprintf(stderr, "%s: configuration NOT OK\n", config.path);
                return r;
        }
        printf("# The settings in effect: %s%s, the command line over it, the defaults under both.\n",
               config.path, found ? "" : " (missing)");
        for (unsigned k = 0; k < _CONFFILE_KEY_MAX; k++)
                config_print_key(stdout, &config.cur, (enum conffile_key) k);
        if (fflush(stdout) != 0)
                return -EIO;
        /* The bay policies are part of the configuration: a bad one is a bad configuration. */
        r = policy_check_dir(config.cur.policy_dir ? config.cur.policy_dir : WIPED_POLICY_DIR_DEFAULT, stderr);
        if (r < 0) {
                fprintf(stderr, "%s: configuration NOT OK (policies)\n", config.path);
                return r;
        }
        fprintf(stderr, "%s: %sconfiguration OK\n", config.path, found ? "" : "missing: the defaults apply; ");
        return 0;
}

const struct conffile *config_settings(void) {
        return &config.cur;
}

/* "PATH:LINE" of where next set key k, or "PATH" when the file does not set it. */
static const char *config_where(const struct conffile *next, enum conffile_key k, char *buf, size_t n) {
        if (next->line[k] && !config.cmdline.set[k])
                snprintf(buf, n, "%s:%u", config.path, next->line[k]);
        else
                snprintf(buf, n, "%s", config.path);
        return buf;
}

/* Keep the value of key k of cur in next (a setting that needs a restart). Strings move, so that
 * a pointer taken from config_settings() at start-up stays valid. */
static void config_keep(struct conffile *next, struct conffile *cur, enum conffile_key k) {
        char **a = NULL, **b = NULL, *t;

        switch (k) {
        case CONFFILE_THREADS:
                next->threads = cur->threads;
                break;
        case CONFFILE_BUFFERS:
                next->buffers = cur->buffers;
                break;
        case CONFFILE_IO_SIZE:
                next->io_size = cur->io_size;
                break;
        case CONFFILE_QUEUE_DEPTH:
                next->queue_depth = cur->queue_depth;
                break;
        case CONFFILE_MAX_RATE:
                next->max_rate = cur->max_rate;
                break;
        case CONFFILE_WORKER_POLICY:
                next->worker_policy = cur->worker_policy;
                break;
        case CONFFILE_WORKER_NICE:
                next->worker_nice = cur->worker_nice;
                break;
        case CONFFILE_SOCKET:
                a = &next->socket, b = &cur->socket;
                break;
        case CONFFILE_STATE_DIR:
                a = &next->state_dir, b = &cur->state_dir;
                break;
        case CONFFILE_SOCKET_GROUP:
                a = &next->socket_group, b = &cur->socket_group;
                break;
        case CONFFILE_STATUS_SOCKET:
                a = &next->status_socket, b = &cur->status_socket;
                break;
        case CONFFILE_KEYSTREAM_BACKEND:
                a = &next->keystream_backend, b = &cur->keystream_backend;
                break;
        case CONFFILE_POLICY_EVENTS:
                a = &next->policy_events, b = &cur->policy_events;
                break;
        case CONFFILE_METRICS_LISTEN:
                a = &next->metrics_listen, b = &cur->metrics_listen;
                break;
        case CONFFILE_METRICS_TEXTFILE:
                a = &next->metrics_textfile, b = &cur->metrics_textfile;
                break;
        /* The delivery thread took its copies at start; these show what it uses. */
        case CONFFILE_REPORT_URL:
                a = &next->report_url, b = &cur->report_url;
                break;
        case CONFFILE_REPORT_CA_FILE:
                a = &next->report_ca_file, b = &cur->report_ca_file;
                break;
        case CONFFILE_REPORT_CLIENT_CERT:
                a = &next->report_client_cert, b = &cur->report_client_cert;
                break;
        case CONFFILE_REPORT_CLIENT_KEY:
                a = &next->report_client_key, b = &cur->report_client_key;
                break;
        case CONFFILE_REPORT_HEADER: {
                char **v = next->report_header;
                size_t n = next->n_report_header;

                next->report_header = cur->report_header;
                next->n_report_header = cur->n_report_header;
                cur->report_header = v;
                cur->n_report_header = n;
                break;
        }
        case CONFFILE_REPORT_TIMEOUT:
                next->report_timeout = cur->report_timeout;
                break;
        case CONFFILE_REPORT_RETRY_MAX_INTERVAL:
                next->report_retry_max_interval = cur->report_retry_max_interval;
                break;
        default:
                return;
        }
        if (a) {
                t = *a;
                *a = *b;
                *b = t;
        }
        next->set[k] = cur->set[k];
        next->line[k] = cur->line[k];
}

int config_reload(void) {
        struct conffile next;
        unsigned changed = 0;
        bool found;
        int r;

        if (!config.path)
                return -EINVAL;
        r = config_build(&next, &found, NULL);
        if (r < 0) {
                log_error("%s: not reloaded: the previous configuration stays in effect", config.path);
                conffile_done(&next);
                return r;
        }
        if (found != config.found)
                log_info("%s: %s", config.path, found ? "read" : "missing now: the defaults apply");
        for (unsigned i = 0; i < _CONFFILE_KEY_MAX; i++) {
                enum conffile_key k = (enum conffile_key) i;
                char where[1200], was[512], now[512];

                if (!conffile_same(&config.cur, &next, k)) {
                        config_where(&next, k, where, sizeof(where));
                        conffile_format(&config.cur, k, was, sizeof(was));
                        conffile_format(&next, k, now, sizeof(now));
                        /* A header's value may be a secret: never in the log. */
                        if (k == CONFFILE_REPORT_HEADER) {
                                snprintf(was, sizeof(was), "(not shown)");
                                snprintf(now, sizeof(now), "(not shown)");
                        }
                        if (!conffile_key_reloads(k))
                                log_warning("%s: %s = %s: needs a restart, %s stays in effect", where,
                                            conffile_key_name(k), now, was);
                        else {
                                log_info("%s: %s = %s (was %s)", where, conffile_key_name(k), now, was);
                                changed++;
                        }
                }
                if (!conffile_key_reloads(k))
                        config_keep(&next, &config.cur, k);
        }
        config_install(&next, found);
        log_info("%s: reloaded (%u setting%s changed)", config.path, changed, changed == 1 ? "" : "s");
        return 0;
}

const char *config_path(void) {
        return config.found ? config.path : NULL;
}

const char *config_purge_fallback(void) {
        return config.cur.purge_fallback ? config.cur.purge_fallback : "random";
}

const char *config_hidden_area(void) {
        return config.cur.hidden_area ? config.cur.hidden_area : "restore";
}

const char *config_method(void) {
        return config.cur.method ? config.cur.method : "random";
}

void config_verify(enum verify_mode *mode, double *percent) {
        if (!config.cur.verify) {
                *mode = VERIFY_SAMPLE;
                *percent = SAMPLE_PERCENT_DEFAULT;
                return;
        }
        *mode = config.verify;
        *percent = config.verify_percent;
}

enum keystream_cipher config_cipher(void) {
        return config.cur.cipher;
}

int config_check_device(const char *node, char *const *links, char *msg, size_t len) {
        const char *pattern = NULL;

        switch (conffile_match_device(&config.cur, node, links, &pattern)) {
        case CONFFILE_DENIED:
                snprintf(msg, len, "denied by the configuration (deny = %s)", pattern);
                return -EACCES;
        case CONFFILE_NOT_ALLOWED:
                snprintf(msg, len, "denied by the configuration (matches no allow pattern)");
                return -EACCES;
        default:
                return 0;
        }
}

int config_socket_group(gid_t *ret) {
        const char *name = config.cur.socket_group;
        struct group *g;
        char *end;

        if (!name)
                return 0;
        g = getgrnam(name);
        if (g) {
                *ret = g->gr_gid;
                return 1;
        }
        errno = 0;
        *ret = (gid_t) strtoul(name, &end, 10);
        if (*name && !*end && !errno)
                return 1;
        log_error("socket-group %s: no such group", name);
        return -ENOENT;
}

int config_json_add(struct json_object *o) {
        const struct conffile *c = &config.cur;
        const char *path = config_path();

        if (json_object_object_add(o, "config", path ? json_object_new_string(path) : NULL) < 0 ||
            json_object_object_add(o, "method", json_object_new_string(config_method())) < 0 ||
            json_object_object_add(o, "purge_fallback", json_object_new_string(config_purge_fallback())) < 0 ||
            json_object_object_add(o, "hidden_area", json_object_new_string(config_hidden_area())) < 0 ||
            json_object_object_add(o, "verify", json_object_new_string(c->verify ? c->verify : "sample")) < 0 ||
            json_object_object_add(o, "cipher", json_object_new_string(keystream_cipher_name(c->cipher))) < 0 ||
            json_object_object_add(o, "keystream_backend", json_object_new_string(c->keystream_backend ?
                                                                                  c->keystream_backend : "auto")) < 0 ||
            json_object_object_add(o, "chunk_size", json_object_new_int64((int64_t) c->chunk_size)) < 0 ||
            json_object_object_add(o, "checkpoint_interval_s", json_object_new_double(c->checkpoint_interval)) < 0 ||
            json_object_object_add(o, "checkpoint_bytes", json_object_new_int64((int64_t) c->checkpoint_bytes)) < 0 ||
            json_object_object_add(o, "resume", json_object_new_string(c->resume_manual ? "manual" : "auto")) < 0 ||
            json_object_object_add(o, "history_max_age_days", json_object_new_int64(c->history_max_age_days)) < 0 ||
            json_object_object_add(o, "max_bad_bytes", json_object_new_int64((int64_t) c->max_bad)) < 0 ||
            /* Deprecated: max_bad_bytes (wiped(8) NAMES AND UNITS), sent for one release more. */
            json_object_object_add(o, "max_bad", json_object_new_int64((int64_t) c->max_bad)) < 0 ||
            json_object_object_add(o, "client_timeout_s", json_object_new_int64(c->client_timeout)) < 0)
                return -ENOMEM;
        /* Hooks (wiped(8) HOOKS): whether one is set, not the command (it may hold a secret, and
         * the read-only socket's clients see this), and how many run and wait now. */
        if (json_object_object_add(o, "job_end_hook", json_object_new_boolean(c->job_end_hook && *c->job_end_hook)) < 0 ||
            json_object_object_add(o, "hook_timeout_s", json_object_new_int64(c->hook_timeout)) < 0 ||
            json_object_object_add(o, "hook_max_running", json_object_new_int64(c->hook_max_running)) < 0 ||
            hook_counts_json_add(o) < 0)
                return -ENOMEM;
        /* Drive health (wiped(8) DRIVE HEALTH). */
        if (json_object_object_add(o, "smartctl", json_object_new_string(c->smartctl ? c->smartctl : "smartctl")) < 0 ||
            json_object_object_add(o, "smart_timeout_s", json_object_new_int64(c->smart_timeout)) < 0 ||
            json_object_object_add(o, "smart_policy", json_object_new_string(c->smart_policy ? c->smart_policy :
                                                                             "flag")) < 0)
                return -ENOMEM;
        return 0;
}

void config_free(void) {
        free(config.path);
        conffile_done(&config.cmdline);
        conffile_done(&config.cur);
        config = (typeof(config)) {};
}
