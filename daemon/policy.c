/* Hot-plug bay policies (wiped(8) "BAY POLICIES"). A policy is a file NAME.conf in the policy
 * directory: which devices it matches, on what condition, and how it wipes them. The device
 * monitor (uevent.c) says when a whole disk appears or goes; a device that appeared stays pending
 * for its policy's settle time (the kernel's event comes before the partition scan, and a drive
 * being seated may flap), then it is probed again and, when it still matches, submitted as any
 * client's device is (job_submit(): every refusal applies). What each policy did is counted and
 * kept as its last events. Main thread only. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "cleanup.h"
#include "clock.h"
#include "conffile.h"
#include "daemon-config.h"
#include "daemon.h"
#include "method.h"
#include "strutil.h"
#include "units.h"
#include "vocab.h"

/* ---- the file ---- */

enum policy_key {
        PK_MATCH,
        PK_TRANSPORT,
        PK_ROTATIONAL,
        PK_MIN_SIZE,
        PK_MAX_SIZE,
        PK_MODEL,
        PK_SERIAL,
        PK_BACKING_FILE,
        PK_CONTENT,
        PK_METHOD,
        PK_VERIFY,
        PK_CIPHER,
        PK_MAX_RATE,
        PK_HOOK,
        PK_HOOK_TIMEOUT,
        PK_ENABLED,
        PK_EXISTING,
        PK_SETTLE,
        _PK_MAX,
};

static const char *const policy_keys[_PK_MAX] = {
        [PK_MATCH] = "match",
        [PK_TRANSPORT] = "transport",
        [PK_ROTATIONAL] = "rotational",
        [PK_MIN_SIZE] = "min-size",
        [PK_MAX_SIZE] = "max-size",
        [PK_MODEL] = "model",
        [PK_SERIAL] = "serial",
        [PK_BACKING_FILE] = "backing-file",
        [PK_CONTENT] = "content",
        [PK_METHOD] = "method",
        [PK_VERIFY] = "verify",
        [PK_CIPHER] = "cipher",
        [PK_MAX_RATE] = "max-rate",
        [PK_HOOK] = "hook",
        [PK_HOOK_TIMEOUT] = "hook-timeout",
        [PK_ENABLED] = "enabled",
        [PK_EXISTING] = "existing",
        [PK_SETTLE] = "settle",
};

static const char *const policy_transports[] = { "loop", "nvme", "sata", "usb", "scsi", "virtio", "mmc" };

static bool key_is_list(enum policy_key k) {
        return k == PK_MATCH || k == PK_TRANSPORT || k == PK_MODEL || k == PK_SERIAL || k == PK_BACKING_FILE;
}

bool policy_name_valid(const char *name) {
        size_t n = strlen(name);

        if (n == 0 || n > POLICY_NAME_MAX || name[0] == '.')
                return false;
        return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.@") == n;
}

void policy_done(struct policy *p) {
        if (!p)
                return;
        free(p->name);
        free(p->file);
        strv_free(p->match);
        strv_free(p->transport);
        strv_free(p->model);
        strv_free(p->serial);
        strv_free(p->backing);
        free(p->method);
        free(p->verify);
        free(p->cipher);
        free(p->hook);
        for (unsigned i = 0; i < POLICY_EVENTS_MAX; i++) {
                free(p->events[i].device);
                free(p->events[i].what);
        }
        *p = (struct policy) {};
}

/* Seconds from 0 to max: digits with at most one point. 0 or -EINVAL. */
static int parse_seconds(const char *s, double max, double *ret) {
        char *end;
        double v;

        if (!*s || strspn(s, "0123456789.") != strlen(s) || strchr(s, '.') != strrchr(s, '.'))
                return -EINVAL;
        errno = 0;
        v = strtod(s, &end);
        if (errno || *end || v < 0 || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

/* One of two words: *ret true for on, false for off. 0, or -EINVAL with hint in msg. */
static int parse_choice(const char *value, const char *on, const char *off, bool *ret, char *msg, size_t len,
                        const char *hint) {
        if (strcmp(value, on) != 0 && strcmp(value, off) != 0) {
                snprintf(msg, len, "%s", hint);
                return -EINVAL;
        }
        *ret = strcmp(value, on) == 0;
        return 0;
}

/* Set key k of p to value. 0, -EINVAL with the reason in msg, or -ENOMEM. */
static int policy_set(struct policy *p, enum policy_key k, const char *value, char *msg, size_t len) {
        enum verify_mode vm;
        bool b;
        enum keystream_cipher kc;
        char ***list = NULL;
        size_t *count = NULL;
        double pct;

        switch (k) {
        case PK_MATCH:
                if (value[0] != '/') {
                        snprintf(msg, len, "not an absolute path pattern (like /dev/disk/by-path/pci-0000:00:1f.2-ata-*)");
                        return -EINVAL;
                }
                list = &p->match, count = &p->n_match;
                break;
        case PK_BACKING_FILE:
                if (value[0] != '/') {
                        snprintf(msg, len, "not an absolute path pattern");
                        return -EINVAL;
                }
                list = &p->backing, count = &p->n_backing;
                break;
        case PK_MODEL:
                list = &p->model, count = &p->n_model;
                break;
        case PK_SERIAL:
                list = &p->serial, count = &p->n_serial;
                break;
        case PK_TRANSPORT: {
                /* "sata, usb" or one per line. */
                _cleanup_free_ char *copy = strdup(value);
                char *save = NULL;

                if (!copy)
                        return -ENOMEM;
                for (char *t = strtok_r(copy, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save)) {
                        bool known = false;

                        for (size_t i = 0; i < sizeof(policy_transports) / sizeof(*policy_transports); i++)
                                known |= strcmp(t, policy_transports[i]) == 0;
                        if (!known) {
                                const char *hint = conffile_suggest(t, policy_transports,
                                                                    sizeof(policy_transports) / sizeof(*policy_transports));

                                snprintf(msg, len, "unknown transport \"%.32s\"%s%s%s (loop, nvme, sata, usb, scsi, virtio, mmc)",
                                         t, hint ? "; did you mean " : "", hint ? hint : "", hint ? "?" : "");
                                return -EINVAL;
                        }
                        if (p->n_match + p->n_transport + p->n_model + p->n_serial + p->n_backing >= POLICY_PATTERNS_MAX) {
                                snprintf(msg, len, "more than %d match values", POLICY_PATTERNS_MAX);
                                return -EINVAL;
                        }
                        if (strv_append(&p->transport, &p->n_transport, t) < 0)
                                return -ENOMEM;
                }
                if (!p->n_transport) {
                        snprintf(msg, len, "no transport");
                        return -EINVAL;
                }
                return 0;
        }
        case PK_ROTATIONAL:
                if (parse_choice(value, "yes", "no", &b, msg, len, "expected yes or no") < 0)
                        return -EINVAL;
                p->rotational = b;
                return 0;
        case PK_MIN_SIZE:
        case PK_MAX_SIZE:
                if (units_parse_size(value, k == PK_MIN_SIZE ? &p->min_size : &p->max_size) < 0 ||
                    (k == PK_MAX_SIZE && p->max_size == 0)) {
                        snprintf(msg, len, "invalid size (like 500G, 4T, 1048576)");
                        return -EINVAL;
                }
                return 0;
        case PK_CONTENT:
                return parse_choice(value, "any", "empty", &p->content_any, msg, len,
                                    "expected empty (no signature at all) or any");
        case PK_METHOD: {
                const struct method *m = method_find(value);

                if (!m) {
                        snprintf(msg, len, "unknown method (see wipectl methods)");
                        return -EINVAL;
                }
                free(p->method);
                return (p->method = strdup(m->name)) ? 0 : -ENOMEM;
        }
        case PK_VERIFY:
                if (verify_mode_parse(value, &vm, &pct) < 0) {
                        snprintf(msg, len, "unknown verification (none, sample, sample=PCT, last, all)");
                        return -EINVAL;
                }
                free(p->verify);
                return (p->verify = strdup(value)) ? 0 : -ENOMEM;
        case PK_CIPHER:
                if (keystream_cipher_from_name(value, &kc) < 0) {
                        snprintf(msg, len, "unknown cipher (auto, aes-128-ctr, chacha20)");
                        return -EINVAL;
                }
                free(p->cipher);
                return (p->cipher = strdup(value)) ? 0 : -ENOMEM;
        case PK_MAX_RATE:
                if (units_parse_rate(value, &p->max_rate) < 0) {
                        snprintf(msg, len, "invalid rate (e.g. 200M for 200 MB/s, 0 for none)");
                        return -EINVAL;
                }
                p->have_max_rate = true;
                return 0;
        case PK_HOOK:
                /* Any command, run with /bin/sh -c as job-end-hook is (wiped(8) HOOKS). */
                free(p->hook);
                return (p->hook = strdup(value)) ? 0 : -ENOMEM;
        case PK_HOOK_TIMEOUT:
                if (parse_seconds(value, 86400, &p->hook_timeout) < 0 || p->hook_timeout <= 0) {
                        snprintf(msg, len, "invalid timeout (seconds, up to 86400)");
                        return -EINVAL;
                }
                return 0;
        case PK_ENABLED:
                return parse_choice(value, "yes", "no", &p->enabled, msg, len, "expected yes or no");
        case PK_EXISTING:
                return parse_choice(value, "wipe", "ignore", &p->existing_wipe, msg, len,
                                    "expected ignore (only devices that appear later) or wipe");
        case PK_SETTLE:
                if (parse_seconds(value, POLICY_SETTLE_MAX, &p->settle) < 0) {
                        snprintf(msg, len, "invalid time (seconds, 0..%d)", POLICY_SETTLE_MAX);
                        return -EINVAL;
                }
                return 0;
        default:
                return -EINVAL;
        }
        if (p->n_match + p->n_transport + p->n_model + p->n_serial + p->n_backing >= POLICY_PATTERNS_MAX) {
                snprintf(msg, len, "more than %d match values", POLICY_PATTERNS_MAX);
                return -EINVAL;
        }
        return strv_append(list, count, value);
}

/* Append "FILE:LINE: message" as a line of err. */
static void add_error(char *err, size_t err_len, size_t *used, const char *file, unsigned line, const char *fmt, ...)
        __attribute__((format(printf, 6, 7)));
static void add_error(char *err, size_t err_len, size_t *used, const char *file, unsigned line, const char *fmt, ...) {
        char msg[512];
        va_list ap;
        int w;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (*used >= err_len)
                return;
        if (line)
                w = snprintf(err + *used, err_len - *used, "%s%s:%u: %s", *used ? "\n" : "", file, line, msg);
        else
                w = snprintf(err + *used, err_len - *used, "%s%s: %s", *used ? "\n" : "", file, msg);
        *used += w > 0 ? (size_t) w : 0;
}

int policy_parse(struct policy *p, const char *name, const char *file, const char *text, size_t len, char *err,
                 size_t err_len) {
        unsigned set_line[_PK_MAX] = {};
        const char *s = text, *end = text + len;
        unsigned line = 0, errors = 0;
        size_t used = 0;

        *p = (struct policy) { .rotational = -1, .enabled = true, .settle = POLICY_SETTLE_DEFAULT };
        if (err_len)
                err[0] = '\0';
        p->name = strdup(name);
        p->file = strdup(file);
        if (!p->name || !p->file)
                return -ENOMEM;
        if (!policy_name_valid(name)) {
                add_error(err, err_len, &used, file, 0, "invalid policy name \"%.80s\" (letters, digits, -, _, ., @)", name);
                errors++;
        }
        while (s < end) {
                const char *eol = memchr(s, '\n', (size_t) (end - s));
                size_t n = eol ? (size_t) (eol - s) : (size_t) (end - s);
                _cleanup_free_ char *copy = NULL;
                char *l, *eq, *key, *value, msg[256] = "";
                int k = -1, r;

                line++;
                s += n + (eol ? 1 : 0);
                if (memchr(s - n - (eol ? 1 : 0), '\0', n)) {
                        add_error(err, err_len, &used, file, line, "contains a NUL byte");
                        errors++;
                        continue;
                }
                copy = strndup(s - n - (eol ? 1 : 0), n);
                if (!copy)
                        return -ENOMEM;
                l = strip_blanks(copy);
                if (!*l || *l == '#')
                        continue;
                eq = strchr(l, '=');
                if (!eq) {
                        add_error(err, err_len, &used, file, line, "expected \"key = value\", got \"%.64s\"", l);
                        errors++;
                        continue;
                }
                *eq = '\0';
                key = strip_blanks(l);
                value = strip_blanks(eq + 1);
                for (int i = 0; i < _PK_MAX; i++)
                        if (strcmp(key, policy_keys[i]) == 0)
                                k = i;
                if (k < 0) {
                        const char *hint = conffile_suggest(key, policy_keys, _PK_MAX);

                        if (hint)
                                add_error(err, err_len, &used, file, line, "unknown key \"%.64s\"; did you mean %s?", key, hint);
                        else
                                add_error(err, err_len, &used, file, line, "unknown key \"%.64s\"", key);
                        errors++;
                        continue;
                }
                if (set_line[k] && !key_is_list(k)) {
                        add_error(err, err_len, &used, file, line, "duplicate key \"%s\" (first set on line %u)",
                                  policy_keys[k], set_line[k]);
                        errors++;
                        continue;
                }
                if (!*value) {
                        add_error(err, err_len, &used, file, line, "%s: no value", policy_keys[k]);
                        errors++;
                        continue;
                }
                r = policy_set(p, (enum policy_key) k, value, msg, sizeof(msg));
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        add_error(err, err_len, &used, file, line, "%s = %.128s: %s", policy_keys[k], value, msg);
                        errors++;
                        continue;
                }
                if (!set_line[k])
                        set_line[k] = line;
        }
        /* Never "every disk": a policy names what it takes. rotational and the sizes only narrow a
         * choice: alone they would take any md, dm, zram or nbd disk of the right size too. */
        if (!errors && !p->n_match && !p->n_transport && !p->n_model && !p->n_serial && !p->n_backing) {
                add_error(err, err_len, &used, file, 0, "no match criterion that names disks (match, transport, "
                          "model, serial or backing-file; rotational and the sizes only narrow them): a policy "
                          "never matches every disk");
                errors++;
        }
        if (!errors && p->max_size && p->min_size > p->max_size) {
                add_error(err, err_len, &used, file, set_line[PK_MAX_SIZE], "max-size is below min-size");
                errors++;
        }
        return errors ? -EINVAL : 0;
}

/* ---- matching ---- */

static bool glob_any(char *const *patterns, const char *s, int flags) {
        for (size_t i = 0; s && patterns && patterns[i]; i++)
                if (fnmatch(patterns[i], s, flags) == 0)
                        return true;
        return false;
}

/* Whether one of patterns matches node or one of its by-id and by-path links. */
static bool match_node(char *const *patterns, const char *node, char *const *links) {
        if (glob_any(patterns, node, FNM_PATHNAME))
                return true;
        for (size_t i = 0; links && links[i]; i++)
                if ((strncmp(links[i], "/dev/disk/by-id/", 16) == 0 || strncmp(links[i], "/dev/disk/by-path/", 18) == 0) &&
                    glob_any(patterns, links[i], FNM_PATHNAME))
                        return true;
        return false;
}

const char *policy_match(const struct policy *p, const struct device_identity *id, char *const *links) {
        bool transport = false;

        if (id->partition)
                return "a partition";
        if (p->n_match && !match_node(p->match, id->node, links))
                return "match";
        for (size_t i = 0; i < p->n_transport; i++)
                transport |= id->transport && strcmp(id->transport, p->transport[i]) == 0;
        if (p->n_transport && !transport)
                return "transport";
        if (p->rotational >= 0 && (int) id->rotational != p->rotational)
                return "rotational";
        if (p->min_size && id->size < p->min_size)
                return "min-size";
        if (p->max_size && id->size > p->max_size)
                return "max-size";
        if (p->n_model && !glob_any(p->model, id->model, 0))
                return "model";
        if (p->n_serial && !glob_any(p->serial, id->serial, 0))
                return "serial";
        if (p->n_backing && (!id->is_loop || !glob_any(p->backing, id->backing_file, FNM_PATHNAME)))
                return "backing-file";
        return NULL;
}

/* ---- reading the directory ---- */

/* Read every NAME.conf of dir into a new array (*ret, *n, sorted by name). Problems go to out
 * when given, else to the log. 0; -EINVAL when a file does not parse or there are too many; or
 * another -errno. *ret is freed on error. */
static int policy_read_dir(const char *dir, FILE *out, struct policy **ret, size_t *n_ret) {
        struct dirent **names = NULL;
        struct policy *v = NULL;
        size_t n = 0;
        int k, r = 0;

        *ret = NULL;
        *n_ret = 0;
        k = scandir(dir, &names, NULL, alphasort);
        if (k < 0) {
                r = -errno;
                if (r == -ENOENT) {
                        /* No directory: no policies, as a missing default configuration is none. */
                        return 0;
                }
                if (out)
                        fprintf(out, "%s: %s\n", dir, strerror(-r));
                else
                        log_error("%s: cannot read the policies: %s", dir, strerror(-r));
                return r;
        }
        for (int i = 0; i < k; i++) {
                const char *fn = names[i]->d_name;
                size_t len = strlen(fn), sl = strlen(POLICY_FILE_SUFFIX);
                _cleanup_free_ char *path = NULL, *name = NULL, *text = NULL;
                char err[8192];
                struct stat st = {};
                FILE *f;
                size_t got;
                int q;

                if (fn[0] == '.' || len <= sl || strcmp(fn + len - sl, POLICY_FILE_SUFFIX) != 0)
                        continue;
                if (asprintf(&path, "%s/%s", dir, fn) < 0 || !(name = strndup(fn, len - sl))) {
                        r = -ENOMEM;
                        break;
                }
                if (n >= POLICIES_MAX) {
                        if (out)
                                fprintf(out, "%s: more than %d policies\n", path, POLICIES_MAX);
                        else
                                log_error("%s: more than %d policies", path, POLICIES_MAX);
                        r = -EINVAL;
                        continue;
                }
                /* Not blocking, and no terminal: a FIFO named *.conf would hang the main loop in
                 * open() at a reload, a device's open may act; neither is read (S_ISREG). */
                {
                        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

                        f = fd >= 0 ? fdopen(fd, "re") : NULL;
                        if (fd >= 0 && !f)
                                close(fd);
                }
                if (!f || fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > CONFFILE_SIZE_MAX ||
                    !(text = malloc((size_t) st.st_size + 1))) {
                        int e = !f ? errno : S_ISDIR(st.st_mode) ? EISDIR : !S_ISREG(st.st_mode) ? EINVAL :
                                st.st_size > CONFFILE_SIZE_MAX ? EFBIG : ENOMEM;
                        const char *why = e == EINVAL ? "not a regular file" : strerror(e);

                        if (f)
                                fclose(f);
                        if (out)
                                fprintf(out, "%s: %s\n", path, why);
                        else
                                log_error("%s: %s", path, why);
                        r = -e;
                        continue;
                }
                got = fread(text, 1, (size_t) st.st_size, f);
                fclose(f);
                {
                        struct policy *nv = realloc(v, (n + 1) * sizeof(*v));

                        if (!nv) {
                                r = -ENOMEM;
                                break;
                        }
                        v = nv;
                }
                q = policy_parse(&v[n], name, path, text, got, err, sizeof(err));
                n++;
                if (q == -ENOMEM) {
                        r = q;
                        break;
                }
                if (q < 0) {
                        for (const char *e = err; *e;) {
                                size_t m = strcspn(e, "\n");

                                if (out)
                                        fprintf(out, "%.*s\n", (int) m, e);
                                else
                                        log_error("%.*s", (int) m, e);
                                e += m + (e[m] ? 1 : 0);
                        }
                        r = -EINVAL;
                }
        }
        for (int i = 0; i < k; i++)
                free(names[i]);
        free(names);
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        policy_done(&v[i]);
                free(v);
                return r;
        }
        *ret = v;
        *n_ret = n;
        return 0;
}

int policy_check_dir(const char *dir, FILE *out) {
        struct policy *v;
        size_t n;
        int r;

        if (!dir || strcmp(dir, "none") == 0)
                return 0;
        r = policy_read_dir(dir, out, &v, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                policy_done(&v[i]);
        free(v);
        fprintf(stderr, "%s: %zu %s OK\n", dir, n, n == 1 ? "policy" : "policies");
        return 0;
}

/* ---- at run time ---- */

/* A whole disk that is present. */
struct present {
        dev_t devno;
        char name[64];
        uint64_t diskseq;               /* the kernel's number of its medium (0: none known) */
        double appeared;                /* CLOCK_MONOTONIC when it appeared; 0: there at start */
        uint64_t pending;               /* bit i: policies[i] waits for its settle time */
        uint64_t maybe;                 /* of them, those it met but for "match" when it appeared:
                                         * its /dev/disk links may come later (udev makes them
                                         * after the kernel's event); silent unless it matches */
        struct present *next;
};

static struct {
        struct pool *pool;
        struct policy *v;               /* the policies, by name */
        size_t n;
        bool started;
        const char *events;             /* "udev" or "kernel"; NULL: no monitor */
        struct present *present;
        unsigned n_pending;             /* present devices with a pending bit */
        struct json_object *states;     /* {"NAME": "paused"|"enabled"} set by pause and resume,
                                         * kept in STATE_DIR/POLICY_STATES_FILE across restarts */
} pol;

static void policy_event(struct policy *p, const char *device, uint64_t job, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void policy_event(struct policy *p, const char *device, uint64_t job, const char *fmt, ...) {
        struct policy_event *e = &p->events[p->next_event];
        va_list ap;

        free(e->device);
        free(e->what);
        *e = (struct policy_event) { .at = real_s(), .job = job, .device = strdup(device) };
        va_start(ap, fmt);
        if (vasprintf(&e->what, fmt, ap) < 0)
                e->what = NULL;
        va_end(ap);
        p->next_event = (p->next_event + 1) % POLICY_EVENTS_MAX;
        if (p->n_events < POLICY_EVENTS_MAX)
                p->n_events++;
}

static struct policy *policy_find_in(struct policy *v, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(v[i].name, name) == 0)
                        return &v[i];
        return NULL;
}

static struct policy *policy_find(const char *name) {
        return policy_find_in(pol.v, pol.n, name);
}

/* The job in the table on the device with identity id (any state), or NULL. */
static struct job *policy_job_of(const struct device_identity *id) {
        for (struct job *j = job_first(); j; j = j->next) {
                const char *what;

                if (device_identity_same(&j->info, id, !device_identity_strong(&j->info), &what))
                        return j;
        }
        return NULL;
}

/* What is on a probed device, in a word: its first signature, else its partition table; NULL when
 * libblkid found nothing at all. */
static const char *policy_content(const struct device_probe *pr) {
        if (pr->n_sigs > 0)
                return pr->sigs[0].type ? pr->sigs[0].type : "a signature";
        if (pr->pt_type)
                return pr->pt_type;
        if (pr->n_parts > 0)
                return "partitions";
        return NULL;
}

#define POLICY_CONTENT_SPAN (1u << 20)   /* bytes at each end of a disk that must read back */

/* Whether the areas where libblkid looks for signatures, the first and the last MiB of the disk,
 * can be read: libblkid takes a read error for "nothing there", and a disk whose first sectors
 * failed would pass for empty with its file system behind them. 0 or -errno. */
static int policy_ends_readable(const char *node, uint64_t size) {
        _cleanup_free_ char *buf = malloc(POLICY_CONTENT_SPAN);
        uint64_t len = size < POLICY_CONTENT_SPAN ? size : POLICY_CONTENT_SPAN;
        int fd, r = 0;

        if (!buf)
                return -ENOMEM;
        fd = open(node, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return -errno;
        for (int end = 0; end < 2 && r == 0; end++) {
                uint64_t off = end ? size - len : 0;

                for (uint64_t done = 0; done < len && r == 0;) {
                        ssize_t k = pread(fd, buf, (size_t) (len - done), (off_t) (off + done));

                        if (k < 0 && errno == EINTR)
                                continue;
                        if (k < 0)
                                r = -errno;
                        else if (k == 0)
                                r = -EIO;
                        else
                                done += (uint64_t) k;
                }
        }
        close(fd);
        return r;
}

/* The verdict of p on a probed device: NULL when p would wipe it now, else why not (into buf),
 * with *refused set when it is a refusal of the submit's checks. */
static const char *policy_verdict(const struct policy *p, const struct device_probe *pr, char *const *links,
                                  char *buf, size_t n, bool *refused) {
        const char *content, *crit;
        struct job *j;

        *refused = false;
        crit = policy_match(p, &pr->id, links);
        if (crit) {
                snprintf(buf, n, "does not match (%s)", crit);
                return buf;
        }
        j = policy_job_of(&pr->id);
        if (j) {
                snprintf(buf, n, "already has job %" PRIu64 " (%s)", j->id, job_state_name(job_get_state(j)));
                return buf;
        }
        if (pr->refusal) {
                *refused = true;
                snprintf(buf, n, "%s", pr->refusal_msg ? pr->refusal_msg : strerror(-pr->refusal));
                return buf;
        }
        content = policy_content(pr);
        if (content && !p->content_any) {
                snprintf(buf, n, "not empty (%s; content = empty)", content);
                return buf;
        }
        if (!p->content_any) {
                int r = policy_ends_readable(pr->id.node, pr->id.size);

                if (r < 0) {
                        snprintf(buf, n, "content unknown: its first or last MiB cannot be read (%s; content = empty)",
                                 strerror(-r));
                        return buf;
                }
        }
        return NULL;
}

/* The request of a policy's submit: its settings over the daemon's defaults. *passes is to be
 * freed. 0, or -errno with a message in err. */
static int policy_request(const struct policy *p, struct job_request *rq, struct pass **passes, char *err, size_t n) {
        const struct method *m = method_find(p->method ? p->method : config_method());
        int r;

        *rq = (struct job_request) {
                .cipher = config_cipher(),
                .chunk_size = config_settings()->chunk_size,
                .max_bad = config_settings()->max_bad,
                .max_rate = p->have_max_rate ? p->max_rate : 0,
        };
        if (!m)
                m = method_find("random");
        r = pass_list_parse(m->passes, passes, &rq->n_passes);
        if (r < 0) {
                snprintf(err, n, "method %s: %s", m->name, strerror(-r));
                return r;
        }
        rq->method = m->name;
        rq->passes = *passes;
        config_verify(&rq->verify, &rq->verify_percent);
        if (p->verify)
                (void) verify_mode_parse(p->verify, &rq->verify, &rq->verify_percent);
        if (p->cipher)
                (void) keystream_cipher_from_name(p->cipher, &rq->cipher);
        rq->policy = p->name;
        /* The policy's own end hook (NULL: the global job-end-hook) and its timeout (0: hook-timeout). */
        rq->end_hook = p->hook;
        rq->end_hook_timeout = p->hook_timeout;
        return 0;
}

/* Act on the device d for policy p, its settle time being over. */
static void policy_act(struct policy *p, struct present *d, bool maybe) {
        char node[80], why[600], err[600] = "";
        _cleanup_free_ struct pass *passes = NULL;
        _cleanup_json_ struct json_object *expect = NULL;
        struct device_probe pr;
        struct job_request rq;
        struct job *job = NULL;
        char **links = NULL;
        const char *no;
        bool refused;
        int r;

        snprintf(node, sizeof(node), "/dev/%s", d->name);
        r = device_probe_listed(node, d->devno, job_wiping, &pr);
        links = r < 0 ? NULL : device_links(node);
        if (r < 0 || !links) {
                device_probe_done(&pr);
                log_error("policy %s: %s: out of memory", p->name, node);
                return;
        }
        if (!pr.have_identity && maybe) {
                log_debug("policy %s: %s: %s", p->name, node, pr.refusal_msg ? pr.refusal_msg : "cannot be probed");
                goto out;
        }
        if (!pr.have_identity) {
                p->n_refused++;
                policy_event(p, node, 0, "refused: %s", pr.refusal_msg ? pr.refusal_msg : "cannot be probed");
                log_job(LOG_WARNING, LOG_EVENT_POLICY_REFUSED, 0, node, NULL, "policy %s: %s: refused: %s", p->name, node,
                        pr.refusal_msg ? pr.refusal_msg : "cannot be probed");
                goto out;
        }
        no = policy_verdict(p, &pr, links, why, sizeof(why), &refused);
        if (no && maybe && strncmp(no, "does not match", 14) == 0) {
                log_debug("policy %s: %s: %s", p->name, node, no);
                goto out;
        }
        if (no && strncmp(no, "does not match", 14) == 0) {
                /* It matched when it appeared: what changed is worth a line, not a count. */
                policy_event(p, node, 0, "not wiped: %s now", no);
                log_info("policy %s: %s: not wiped: %s now", p->name, node, no);
                goto out;
        }
        if (p->paused) {
                p->n_skipped++;
                policy_event(p, node, 0, "skipped: the policy is paused");
                log_job(LOG_INFO, LOG_EVENT_POLICY_SKIPPED, 0, node, pr.id.serial,
                        "policy %s: %s: skipped: the policy is paused", p->name, node);
                goto out;
        }
        if (no) {
                if (refused)
                        p->n_refused++;
                else
                        p->n_skipped++;
                policy_event(p, node, 0, "%s: %s", refused ? "refused" : "skipped", no);
                log_job(refused ? LOG_WARNING : LOG_INFO, refused ? LOG_EVENT_POLICY_REFUSED : LOG_EVENT_POLICY_SKIPPED, 0,
                        node, pr.id.serial, "policy %s: %s: %s: %s", p->name, node, refused ? "refused" : "skipped", no);
                goto out;
        }
        r = policy_request(p, &rq, &passes, err, sizeof(err));
        if (r >= 0) {
                const char *dev = node;

                /* The normal submit: it opens the device O_EXCL and checks everything again, and
                 * only the disk judged here (its identity, as a client confirms what it saw):
                 * another medium in its place since is refused. */
                expect = device_identity_json(&pr.id);
                rq.expect = &expect;
                r = expect ? job_submit(pol.pool, &dev, 1, &rq, &job, err, sizeof(err)) : -ENOMEM;
        }
        if (r < 0) {
                p->n_refused++;
                policy_event(p, node, 0, "refused: %s", *err ? err : strerror(-r));
                log_job(LOG_WARNING, LOG_EVENT_POLICY_REFUSED, 0, node, pr.id.serial, "policy %s: %s: refused: %s", p->name,
                        node, *err ? err : strerror(-r));
                goto out;
        }
        p->n_started++;
        policy_event(p, node, job->id, "job %" PRIu64 " started", job->id);
        log_info("policy %s: %s: job %" PRIu64 " started", p->name, node, job->id);
out:
        device_links_free(links);
        device_probe_done(&pr);
}

static struct present *present_find(dev_t devno) {
        for (struct present *d = pol.present; d; d = d->next)
                if (d->devno == devno)
                        return d;
        return NULL;
}

static void present_count_pending(void) {
        pol.n_pending = 0;
        for (struct present *d = pol.present; d; d = d->next)
                pol.n_pending += d->pending != 0;
}

/* Whether the /dev/disk links of a device are there to match: udev is not running (then there
 * never are any, beyond what is there), or the device has some. */
static bool policy_links_settled(const struct policy *p, char *const *links) {
        (void) p;
        return access("/run/udev/control", F_OK) < 0 || (links && links[0]);
}

/* The policies that take the device d (now present) into their settle time: those that match it
 * now, with the policy's existing rule. */
static void present_consider(struct present *d, bool at_load_only_new, const bool *is_new) {
        char node[80];
        struct device_identity id;
        char **links;

        /* Without policies a disk is only tracked: nothing opens it. */
        if (!pol.n)
                return;
        snprintf(node, sizeof(node), "/dev/%s", d->name);
        if (device_identity_of(node, &id) < 0) {
                log_debug("policies: %s: cannot read its identity: not considered", node);
                device_identity_done(&id);
                return;
        }
        links = device_links(node);
        for (size_t i = 0; links && i < pol.n; i++) {
                struct policy *p = &pol.v[i];
                const char *no = policy_match(p, &id, links);
                bool maybe = no && strcmp(no, "match") == 0 && !policy_links_settled(p, links);

                if ((at_load_only_new && !is_new[i]) || (no && !maybe))
                        continue;
                if (d->appeared <= p->loaded_mono && !p->existing_wipe) {
                        log_debug("policy %s: %s: present before the policy was loaded (existing = ignore)", p->name, node);
                        continue;
                }
                if (!(d->pending & (1ull << i)) && pol.n_pending >= POLICY_PENDING_MAX && !d->pending) {
                        p->n_skipped++;
                        policy_event(p, node, 0, "skipped: more than %d devices wait for their settle time", POLICY_PENDING_MAX);
                        log_warning("policy %s: %s: skipped: more than %d devices wait for their settle time", p->name, node,
                                    POLICY_PENDING_MAX);
                        continue;
                }
                if (!d->pending)
                        pol.n_pending++;
                d->pending |= 1ull << i;
                if (maybe) {
                        d->maybe |= 1ull << i;
                        log_debug("policy %s: %s appeared without a matching link yet: looked at again in %.1f s",
                                  p->name, node, p->settle);
                } else
                        log_info("policy %s: %s appeared and matches: acting on it in %.1f s unless it goes", p->name,
                                 node, p->settle);
        }
        device_links_free(links);
        device_identity_done(&id);
}

/* Whether the whole disk devno has a size now (an unattached loop device, an empty card reader
 * have none). */
static bool disk_has_size(const char *name) {
        char path[PATH_MAX], buf[32] = "";
        FILE *f;

        snprintf(path, sizeof(path), "/sys/class/block/%s/size", name);
        f = fopen(path, "re");
        if (!f)
                return false;
        if (!fgets(buf, sizeof(buf), f))
                buf[0] = '\0';
        fclose(f);
        return strtoull(buf, NULL, 10) > 0;
}

/* The device went (or lost its medium): forget it; a policy still waiting on it says so. */
static void present_gone(dev_t devno) {
        for (struct present **pp = &pol.present, *d; (d = *pp); pp = &d->next) {
                if (d->devno != devno)
                        continue;
                for (size_t i = 0; i < pol.n; i++)
                        if ((d->pending & ~d->maybe) & (1ull << i)) {
                                char node[80];

                                snprintf(node, sizeof(node), "/dev/%s", d->name);
                                pol.v[i].n_skipped++;
                                policy_event(&pol.v[i], node, 0, "gone within the settle time (%.1f s): not wiped",
                                             pol.v[i].settle);
                                log_job(LOG_INFO, LOG_EVENT_POLICY_SKIPPED, 0, node, NULL,
                                        "policy %s: %s: gone within the settle time (%.1f s): not wiped", pol.v[i].name,
                                        node, pol.v[i].settle);
                        }
                *pp = d->next;
                free(d);
                present_count_pending();
                return;
        }
}

/* The disk's diskseq (Linux 5.15): a number the kernel gives each medium it sees, never again
 * (a loop device's each attach); 0 when the kernel has none. */
static uint64_t disk_seq(const char *name) {
        char path[PATH_MAX], buf[32] = "";
        FILE *f;

        snprintf(path, sizeof(path), "/sys/class/block/%s/diskseq", name);
        f = fopen(path, "re");
        if (!f)
                return 0;
        if (!fgets(buf, sizeof(buf), f))
                buf[0] = '\0';
        fclose(f);
        return strtoull(buf, NULL, 10);
}

static void present_add(const char *name, dev_t devno, double appeared) {
        struct present *d = calloc(1, sizeof(*d));

        if (!d) {
                log_error("policies: %s: out of memory: not considered", name);
                return;
        }
        d->devno = devno;
        d->diskseq = disk_seq(name);
        d->appeared = appeared;
        snprintf(d->name, sizeof(d->name), "%s", name);
        d->next = pol.present;
        pol.present = d;
        if (appeared > 0)
                present_consider(d, false, NULL);
}

/* The whole disks present now (start-up): known, not new. */
static void present_scan(void) {
        DIR *dir = opendir("/sys/block");
        struct dirent *de;

        if (!dir)
                return;
        while ((de = readdir(dir))) {
                char path[PATH_MAX], buf[32] = "";
                FILE *f;
                dev_t d;

                if (de->d_name[0] == '.' || !disk_has_size(de->d_name))
                        continue;
                snprintf(path, sizeof(path), "/sys/block/%s/dev", de->d_name);
                f = fopen(path, "re");
                if (!f)
                        continue;
                if (fgets(buf, sizeof(buf), f)) {
                        buf[strcspn(buf, "\n")] = '\0';
                        if (parse_devno(buf, &d) == 0)
                                present_add(de->d_name, d, 0);
                }
                fclose(f);
        }
        closedir(dir);
}

/* The pauses and resumes of earlier runs (POLICY_STATES_FILE): a policy paused by hand stays
 * paused across a restart, whatever its enabled says. A missing or unreadable file is none. */
static void policy_states_load(void) {
        _cleanup_free_ char *path = NULL;
        struct json_object *o;

        if (asprintf(&path, "%s/%s", config_settings()->state_dir, POLICY_STATES_FILE) < 0)
                return;
        o = json_object_from_file(path);
        if (!o && access(path, F_OK) == 0)
                log_warning("%s: unreadable: the policies start as their files say", path);
        if (o && !json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                o = NULL;
        }
        pol.states = o ? o : json_object_new_object();
}

/* Record that the policy name is paused or not, for the next start. 0 or -errno (logged). */
static int policy_states_save(const char *name, bool paused) {
        const char *text;
        int r;

        if (!pol.states || json_object_object_add(pol.states, name, json_object_new_string(paused ? "paused" : "enabled")) < 0)
                return -ENOMEM;
        text = json_object_to_json_string_ext(pol.states, JSON_C_TO_STRING_PLAIN);
        r = state_write_atomic(config_settings()->state_dir, POLICY_STATES_FILE, text, strlen(text));
        if (r < 0)
                log_error("%s/%s: %s: the %s lasts until the daemon stops", config_settings()->state_dir,
                          POLICY_STATES_FILE, strerror(-r), paused ? "pause" : "resume");
        return r;
}

/* Install the policies v[0..n) read from the directory: a policy known by name keeps its run-time
 * state (paused, counters, events, when it was loaded); pending settle times follow their policy
 * by name; a new policy with existing = wipe takes the disks present now. Takes v. */
static void policy_install(struct policy *v, size_t n) {
        bool is_new[POLICIES_MAX] = {};
        double now = mono_s();
        bool any_new_existing = false;

        for (size_t i = 0; i < n; i++) {
                struct policy *old = policy_find(v[i].name);

                if (old) {
                        v[i].paused = old->paused;
                        v[i].loaded_mono = old->loaded_mono;
                        v[i].n_started = old->n_started;
                        v[i].n_refused = old->n_refused;
                        v[i].n_skipped = old->n_skipped;
                        memcpy(v[i].events, old->events, sizeof(v[i].events));
                        memset(old->events, 0, sizeof(old->events));
                        v[i].n_events = old->n_events;
                        v[i].next_event = old->next_event;
                } else {
                        const char *s = json_object_get_string(json_object_object_get(pol.states, v[i].name));

                        is_new[i] = true;
                        v[i].paused = s ? strcmp(s, "paused") == 0 : !v[i].enabled;
                        v[i].loaded_mono = now;
                        any_new_existing |= v[i].existing_wipe;
                        log_info("policy %s: loaded from %s%s", v[i].name, v[i].file,
                                 !v[i].paused ? "" : s ? " (paused, as wipectl policies pause left it)" : " (enabled = no: paused)");
                }
        }
        for (struct present *d = pol.present; d; d = d->next) {
                uint64_t moved = 0, maybe = 0;

                for (size_t i = 0; i < pol.n; i++) {
                        if (!(d->pending & (1ull << i)))
                                continue;
                        for (size_t k = 0; k < n; k++)
                                if (strcmp(v[k].name, pol.v[i].name) == 0) {
                                        moved |= 1ull << k;
                                        if (d->maybe & (1ull << i))
                                                maybe |= 1ull << k;
                                }
                }
                d->pending = moved;
                d->maybe = maybe;
        }
        for (size_t i = 0; i < pol.n; i++) {
                if (!policy_find_in(v, n, pol.v[i].name))
                        log_info("policy %s: removed", pol.v[i].name);
                policy_done(&pol.v[i]);
        }
        free(pol.v);
        pol.v = v;
        pol.n = n;
        present_count_pending();
        if (any_new_existing)
                for (struct present *d = pol.present; d; d = d->next)
                        present_consider(d, true, is_new);
}

/* The policy directory in effect, NULL for none. */
static const char *policy_dir(void) {
        const char *dir = config_settings()->policy_dir;

        if (!dir)
                dir = WIPED_POLICY_DIR_DEFAULT;
        return strcmp(dir, "none") == 0 ? NULL : dir;
}

/* Read the directory and install what it holds: 0, or -errno with nothing changed. */
static int policy_load(void) {
        const char *dir = policy_dir();
        struct policy *v = NULL;
        size_t n = 0;
        int r;

        if (dir) {
                r = policy_read_dir(dir, NULL, &v, &n);
                if (r < 0)
                        return r;
        }
        policy_install(v, n);
        return 0;
}

int policy_start(struct pool *pool) {
        const char *mode = config_settings()->policy_events;
        int fd, r;

        pol.pool = pool;
        pol.started = true;
        policy_states_load();
        /* The disks there now are not new: existing = ignore leaves them alone. */
        present_scan();
        r = policy_load();
        if (r < 0)
                log_error("%s: the policies were not loaded: none is in effect until a reload reads them",
                          policy_dir());
        fd = uevent_open(mode ? mode : "auto", &pol.events);
        if (fd < 0) {
                pol.events = NULL;
                if (pol.n)
                        log_error("cannot watch for block devices (%s): the %zu %s never act", strerror(-fd), pol.n,
                                  pol.n == 1 ? "policy" : "policies");
                else
                        log_debug("cannot watch for block devices: %s", strerror(-fd));
                return fd;
        }
        if (pol.n)
                log_info("policies: %zu loaded from %s; watching devices (%s events)", pol.n, policy_dir(), pol.events);
        return fd;
}

void policy_dispatch(void) {
        struct uevent ev;
        int r;

        while ((r = uevent_receive(&ev)) > 0) {
                struct present *d = present_find(ev.devno);
                bool sized = disk_has_size(ev.name);
                uint64_t seq = sized ? disk_seq(ev.name) : 0;

                /* A remove event of a disk still there with the same medium (written to its
                 * uevent file, udevadm trigger --action=remove) is no removal: taken as one, the
                 * next change would make a disk present all along new (existing = ignore). */
                if (ev.action == UEVENT_REMOVE && !(d && sized && (!d->diskseq || seq == d->diskseq)))
                        sized = false;
                /* Another medium in its place since we looked (events that came together): the
                 * disk we knew went, this one is new. */
                if (d && sized && d->diskseq && seq && seq != d->diskseq) {
                        present_gone(ev.devno);
                        d = NULL;
                }

                log_debug("policies: %s %s (%u:%u)%s", ev.action == UEVENT_ADD ? "add" : ev.action == UEVENT_CHANGE ?
                          "change" : "remove", ev.name, major(ev.devno), minor(ev.devno), sized ? "" : ", no medium");
                if (d && !sized)
                        present_gone(ev.devno);
                else if (!d && sized)
                        present_add(ev.name, ev.devno, mono_s());
                /* A change of a disk that stays (its partitions read again, a resize) is no new
                 * device. */
        }
        if (r < 0 && r != -EAGAIN)
                log_warning("policies: device events: %s", strerror(-r));
}

void policy_tick(void) {
        double now;

        if (!pol.n_pending)
                return;
        now = mono_s();
        for (struct present *d = pol.present; d; d = d->next)
                for (size_t i = 0; d->pending && i < pol.n; i++) {
                        struct policy *p = &pol.v[i];
                        double since = d->appeared > p->loaded_mono ? d->appeared : p->loaded_mono;

                        if (!(d->pending & (1ull << i)) || now - since < p->settle)
                                continue;
                        bool maybe = d->maybe & (1ull << i);

                        d->pending &= ~(1ull << i);
                        d->maybe &= ~(1ull << i);
                        policy_act(p, d, maybe);
                }
        present_count_pending();
}

void policy_reload(void) {
        if (!pol.started)
                return;
        if (policy_load() < 0)
                log_error("%s: policies not reloaded: the previous ones stay in effect", policy_dir() ? policy_dir() : "none");
        else
                log_info("policies: %zu in effect", pol.n);
}

void policy_stop(void) {
        for (size_t i = 0; i < pol.n; i++)
                policy_done(&pol.v[i]);
        free(pol.v);
        while (pol.present) {
                struct present *d = pol.present;

                pol.present = d->next;
                free(d);
        }
        uevent_close();
        json_object_put(pol.states);
        pol = (typeof(pol)) {};
}

int policy_set_paused(const char *name, bool paused) {
        struct policy *p = policy_find(name);

        if (!p)
                return -ENOENT;
        if (p->paused == paused)
                return -EALREADY;
        /* Logged by the caller, with who asked. */
        p->paused = paused;
        (void) policy_states_save(name, paused);
        return 0;
}

static struct json_object *strv_json(char *const *v) {
        struct json_object *a = json_object_new_array();

        for (size_t i = 0; a && v && v[i]; i++)
                json_object_array_add(a, json_object_new_string(v[i]));
        return a;
}

static struct json_object *str_or_null(const char *s) {
        return s ? json_object_new_string(s) : NULL;
}

/* A policy's settings, state, counters and events (no devices). NULL on ENOMEM. */
static struct json_object *policy_json(const struct policy *p) {
        _cleanup_json_ struct json_object *o = json_object_new_object();
        struct json_object *m = json_object_new_object(), *ev = json_object_new_array();
        enum verify_mode vm;
        double pct;

        if (!o || !m || !ev) {
                json_object_put(m);
                json_object_put(ev);
                return NULL;
        }
        json_object_object_add(o, "name", json_object_new_string(p->name));
        json_object_object_add(o, "file", json_object_new_string(p->file));
        json_object_object_add(o, "state", json_object_new_string(p->paused ? "paused" : "enabled"));
        json_object_object_add(m, "match", strv_json(p->match));
        json_object_object_add(m, "transport", strv_json(p->transport));
        json_object_object_add(m, "rotational", p->rotational < 0 ? NULL : json_object_new_boolean(p->rotational));
        json_object_object_add(m, "min_size_bytes", p->min_size ? json_object_new_uint64(p->min_size) : NULL);
        json_object_object_add(m, "max_size_bytes", p->max_size ? json_object_new_uint64(p->max_size) : NULL);
        json_object_object_add(m, "model", strv_json(p->model));
        json_object_object_add(m, "serial", strv_json(p->serial));
        json_object_object_add(m, "backing_file", strv_json(p->backing));
        json_object_object_add(o, "criteria", m);
        json_object_object_add(o, "content", json_object_new_string(p->content_any ? "any" : "empty"));
        json_object_object_add(o, "method", json_object_new_string(p->method ? p->method : config_method()));
        config_verify(&vm, &pct);
        if (p->verify)
                (void) verify_mode_parse(p->verify, &vm, &pct);
        json_object_object_add(o, "verify", json_object_new_string(verify_mode_name(vm)));
        json_object_object_add(o, "verify_percent", vm == VERIFY_SAMPLE ? json_object_new_double(pct) : NULL);
        {
                enum keystream_cipher kc = config_cipher();

                if (p->cipher)
                        (void) keystream_cipher_from_name(p->cipher, &kc);
                json_object_object_add(o, "cipher", json_object_new_string(keystream_cipher_name(kc)));
        }
        json_object_object_add(o, "max_rate_bps", json_object_new_uint64(p->have_max_rate ? p->max_rate : 0));
        json_object_object_add(o, "hook", str_or_null(p->hook));
        json_object_object_add(o, "hook_timeout_s", p->hook_timeout > 0 ? json_object_new_double(p->hook_timeout) : NULL);
        json_object_object_add(o, "existing", json_object_new_string(p->existing_wipe ? "wipe" : "ignore"));
        json_object_object_add(o, "settle_s", json_object_new_double(p->settle));
        json_object_object_add(o, "jobs_started", json_object_new_uint64(p->n_started));
        json_object_object_add(o, "refused", json_object_new_uint64(p->n_refused));
        json_object_object_add(o, "skipped", json_object_new_uint64(p->n_skipped));
        for (unsigned k = 0; k < p->n_events; k++) {
                const struct policy_event *e =
                        &p->events[(p->next_event + POLICY_EVENTS_MAX - p->n_events + k) % POLICY_EVENTS_MAX];
                struct json_object *j = json_object_new_object();

                if (!j) {
                        json_object_put(ev);
                        return NULL;
                }
                json_object_object_add(j, "at", json_object_new_double(e->at));
                json_object_object_add(j, "device", str_or_null(e->device));
                json_object_object_add(j, "event", str_or_null(e->what));
                json_object_object_add(j, "job", e->job ? json_object_new_uint64(e->job) : NULL);
                json_object_array_add(ev, j);
        }
        json_object_object_add(o, "events", ev);
        json_object_object_add(o, "devices", json_object_new_array());
        return TAKE_PTR(o);
}

/* The dry run: each present whole disk, probed once (no exclusive open, no firmware), into the
 * "devices" of each policy that matches it, with whether the policy would wipe it if it appeared
 * now, or why not. 0 or -ENOMEM. */
static int policy_dry_run(struct json_object *arr) {
        DIR *dir = opendir("/sys/block");
        struct dirent *de;
        int r = 0;

        if (!dir)
                return 0;
        while (r == 0 && (de = readdir(dir))) {
                char path[PATH_MAX], node[300], buf[32] = "", why[600];
                struct device_probe pr;
                char **links;
                FILE *f;
                dev_t devno;
                struct present *d;

                if (de->d_name[0] == '.' || !disk_has_size(de->d_name))
                        continue;
                snprintf(path, sizeof(path), "/sys/block/%s/dev", de->d_name);
                f = fopen(path, "re");
                if (!f)
                        continue;
                if (!fgets(buf, sizeof(buf), f))
                        buf[0] = '\0';
                fclose(f);
                buf[strcspn(buf, "\n")] = '\0';
                if (parse_devno(buf, &devno) < 0 || major(devno) == 1)
                        continue;
                snprintf(node, sizeof(node), "/dev/%s", de->d_name);
                if (device_probe_listed(node, devno, job_wiping, &pr) < 0 || !(links = device_links(node))) {
                        device_probe_done(&pr);
                        r = -ENOMEM;
                        break;
                }
                d = present_find(devno);
                for (size_t i = 0; pr.have_identity && i < pol.n; i++) {
                        struct policy *p = &pol.v[i];
                        struct json_object *o, *devs = json_object_object_get(json_object_array_get_idx(arr, i), "devices");
                        bool refused, existing;
                        const char *no;

                        if (policy_match(p, &pr.id, links))
                                continue;
                        no = policy_verdict(p, &pr, links, why, sizeof(why), &refused);
                        if (!no && p->paused)
                                no = "the policy is paused";
                        existing = !p->existing_wipe && (!d || d->appeared <= p->loaded_mono);
                        o = json_object_new_object();
                        if (!o) {
                                r = -ENOMEM;
                                break;
                        }
                        json_object_object_add(o, "node", json_object_new_string(node));
                        json_object_object_add(o, "serial", str_or_null(pr.id.serial));
                        json_object_object_add(o, "size_bytes", json_object_new_uint64(pr.id.size));
                        json_object_object_add(o, "would_wipe", json_object_new_boolean(!no));
                        json_object_object_add(o, "reason", str_or_null(no));
                        json_object_object_add(o, "refused", json_object_new_boolean(no && refused));
                        /* Present since before the policy was loaded: left alone (existing = ignore);
                         * would_wipe is what it would do to this drive inserted now. */
                        json_object_object_add(o, "existing", json_object_new_boolean(existing));
                        json_object_array_add(devs, o);
                }
                device_links_free(links);
                device_probe_done(&pr);
        }
        closedir(dir);
        return r;
}

struct json_object *policy_list_json(void) {
        _cleanup_json_ struct json_object *arr = json_object_new_array();

        if (!arr)
                return NULL;
        for (size_t i = 0; i < pol.n; i++) {
                struct json_object *o = policy_json(&pol.v[i]);

                if (!o)
                        return NULL;
                json_object_array_add(arr, o);
        }
        if (policy_dry_run(arr) < 0)
                return NULL;
        return TAKE_PTR(arr);
}

const char *policy_events_source(void) {
        return pol.events;
}
