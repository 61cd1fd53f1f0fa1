/* drivesim: the ioctl() interposer, the configuration, the state file, time, and the erase itself
 * (sim.h; tests/sim/README.md).
 *
 * A test tool, not part of wiped: on a configuration error it says so on stderr and exits 99 (the
 * automake driver's hard error), because a simulator that guesses would test nothing. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/nvme_ioctl.h>
#include <scsi/sg.h>

#include "sim.h"

#define SIM_MAX_DRIVES 16

static struct sim_conf drives[SIM_MAX_DRIVES];
static pthread_mutex_t drive_locks[SIM_MAX_DRIVES];
static int n_drives;
static char state_dir[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int (*real_ioctl)(int, unsigned long, ...);

/* Says what is wrong and ends the process. Not through stdio: on a terminal, stdio would ask
 * isatty(), an ioctl, from within the simulator's own initialisation. */
static void sim_die(const char *fmt, ...) {
        char buf[1024];
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = snprintf(buf, sizeof buf, "drivesim: ");
        n += vsnprintf(buf + n, sizeof buf - (size_t) n - 1, fmt, ap);
        va_end(ap);
        if (n > (int) sizeof buf - 2)
                n = (int) sizeof buf - 2;
        buf[n++] = '\n';
        (void) !write(2, buf, (size_t) n);
        _exit(99);
}

int64_t sim_now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Space padded, not NUL terminated: SCSI and NVMe strings. */
void sim_copy_string(uint8_t *dst, size_t len, const char *s) {
        size_t n = strlen(s);

        memset(dst, ' ', len);
        memcpy(dst, s, n < len ? n : len);
}

/* --- Configuration: "[/dev/loopN]" sections of "key = value" lines; '#' starts a comment --- */

static bool parse_bool(const char *v, const char *key, int line) {
        if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "on"))
                return true;
        if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "off"))
                return false;
        sim_die("line %d: %s: not a boolean: %s", line, key, v);
        return false;
}

static double parse_num(const char *v, const char *key, int line) {
        char *end;
        double x;

        errno = 0;
        x = strncmp(v, "0x", 2) == 0 ? (double) strtoull(v, &end, 16) : strtod(v, &end);
        if (errno || end == v || *end)
                sim_die("line %d: %s: not a number: %s", line, key, v);
        return x;
}

/* A list of words (spaces or commas) from the words of names; their bits. */
static unsigned parse_list(const char *v, const char *const *names, const char *key, int line) {
        char buf[256], *save = NULL, *w;
        unsigned bits = 0;

        snprintf(buf, sizeof buf, "%s", v);
        for (w = strtok_r(buf, " ,", &save); w; w = strtok_r(NULL, " ,", &save)) {
                unsigned i;

                if (!strcmp(w, "none"))
                        continue;
                for (i = 0; names[i] && strcmp(names[i], w); i++)
                        ;
                if (!names[i])
                        sim_die("line %d: %s: unknown word %s", line, key, w);
                bits |= 1u << i;
        }
        return bits;
}

static void conf_defaults(struct sim_conf *c) {
        *c = (struct sim_conf) {
                .type = SIM_NVME,
                .sanitize = SIM_SAN_CRYPTO | SIM_SAN_BLOCK | SIM_SAN_OVERWRITE,
                .sanitize_seconds = 2,
                .format_seconds = 0.5,
                .format = true,
                .fna = 0,
                .est_overwrite = -1, .est_block = -1, .est_crypto = -1,
                .security = true, .enhanced = true,
                .erase_seconds = 1, .enhanced_erase_seconds = 1,
                .hpa = true, .dco = true, .lba48 = true,
                .rsoc = true, .format_unit = true,
        };
        snprintf(c->model, sizeof c->model, "DRIVESIM");
        snprintf(c->serial, sizeof c->serial, "SIM%04d", n_drives);
        snprintf(c->firmware, sizeof c->firmware, "1.0");
        snprintf(c->vendor, sizeof c->vendor, "DRIVESIM");
}

static void conf_key(struct sim_conf *c, const char *k, const char *v, int line) {
        static const char *const san_names[] = { "crypto", "block", "overwrite", NULL };
        static const char *const fna_names[] = { "all", "erase_all", "crypto", NULL };

#define STR(name, field) else if (!strcmp(k, name)) snprintf(c->field, sizeof c->field, "%s", v)
#define BOOL(name, field) else if (!strcmp(k, name)) c->field = parse_bool(v, k, line)
#define NUM(name, field) else if (!strcmp(k, name)) c->field = parse_num(v, k, line)
        if (!strcmp(k, "type")) {
                if (!strcmp(v, "nvme"))
                        c->type = SIM_NVME;
                else if (!strcmp(v, "ata"))
                        c->type = SIM_ATA;
                else if (!strcmp(v, "scsi"))
                        c->type = SIM_SCSI;
                else
                        sim_die("line %d: type: nvme, ata or scsi, not %s", line, v);
        } else if (!strcmp(k, "sanitize"))
                c->sanitize = parse_list(v, san_names, k, line);
        else if (!strcmp(k, "fna"))
                c->fna = parse_list(v, fna_names, k, line);
        STR("model", model); STR("serial", serial); STR("firmware", firmware); STR("vendor", vendor);
        BOOL("sanitize_fail", sanitize_fail); BOOL("sanitize_stuck", sanitize_stuck);
        BOOL("sanitize_frozen", sanitize_frozen); BOOL("sanitize_antifreeze", sanitize_antifreeze);
        NUM("sanitize_seconds", sanitize_seconds); NUM("format_seconds", format_seconds);
        NUM("erase_pattern", erase_pattern);
        BOOL("format", format); BOOL("ndi", ndi);
        NUM("est_overwrite", est_overwrite); NUM("est_block", est_block); NUM("est_crypto", est_crypto);
        BOOL("security", security); BOOL("enhanced_erase", enhanced);
        NUM("erase_seconds", erase_seconds); NUM("enhanced_erase_seconds", enhanced_erase_seconds);
        STR("user_password", user_password); STR("master_password", master_password);
        BOOL("master_maximum", master_maximum);
        BOOL("locked", locked); BOOL("frozen", frozen); BOOL("count_expired", count_expired);
        BOOL("hpa", hpa); BOOL("dco", dco); BOOL("lba48", lba48);
        NUM("native_sectors", native_sectors); NUM("dco_sectors", dco_sectors);
        BOOL("rsoc", rsoc); BOOL("format_unit", format_unit);
        else
                sim_die("line %d: unknown key %s", line, k);
#undef STR
#undef BOOL
#undef NUM
}

static char *trim(char *s) {
        char *e;

        while (isspace((unsigned char) *s))
                s++;
        e = s + strlen(s);
        while (e > s && isspace((unsigned char) e[-1]))
                *--e = 0;
        return s;
}

/* The section's device: its rdev and size, read once. */
static void conf_device(struct sim_conf *c) {
        struct stat st;
        int fd;

        if (stat(c->path, &st) < 0 || !S_ISBLK(st.st_mode))
                sim_die("%s: not a block device", c->path);
        c->rdev = st.st_rdev;
        fd = open(c->path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || real_ioctl(fd, BLKGETSIZE64, &c->bytes) < 0)
                sim_die("%s: cannot read its size: %s", c->path, strerror(errno));
        close(fd);
        if (!c->native_sectors || c->native_sectors < c->bytes / 512)
                c->native_sectors = c->bytes / 512;
        if (!c->dco_sectors)
                c->dco_sectors = c->native_sectors;
        if (c->locked && !c->user_password[0])
                sim_die("%s: locked needs a user_password", c->path);
}

static void sim_init(void) {
        const char *path = getenv("DRIVESIM_CONFIG"), *dir = getenv("DRIVESIM_STATE");
        char buf[1024];
        int line = 0;
        FILE *f;

        real_ioctl = (int (*)(int, unsigned long, ...)) dlsym(RTLD_NEXT, "ioctl");
        if (!real_ioctl)
                sim_die("no next ioctl: %s", dlerror());
        if (!path)
                return;                 /* loaded but given no drives: everything passes through */
        f = fopen(path, "re");
        if (!f)
                sim_die("%s: %s", path, strerror(errno));
        while (fgets(buf, sizeof buf, f)) {
                char *s = buf, *eq;

                line++;
                if (strchr(s, '#'))
                        *strchr(s, '#') = 0;
                s = trim(s);
                if (!*s)
                        continue;
                if (*s == '[') {
                        char *e = strchr(s, ']');

                        if (!e || e[1])
                                sim_die("%s:%d: bad section line", path, line);
                        if (n_drives == SIM_MAX_DRIVES)
                                sim_die("%s:%d: more than %d drives", path, line, SIM_MAX_DRIVES);
                        *e = 0;
                        conf_defaults(&drives[n_drives]);
                        snprintf(drives[n_drives].path, sizeof drives[n_drives].path, "%s", trim(s + 1));
                        pthread_mutex_init(&drive_locks[n_drives], NULL);
                        n_drives++;
                        continue;
                }
                eq = strchr(s, '=');
                if (!eq || !n_drives)
                        sim_die("%s:%d: not \"key = value\" within a [device] section", path, line);
                *eq = 0;
                conf_key(&drives[n_drives - 1], trim(s), trim(eq + 1), line);
        }
        fclose(f);
        for (int i = 0; i < n_drives; i++)
                conf_device(&drives[i]);
        if (dir)
                snprintf(state_dir, sizeof state_dir, "%s", dir);
        else {
                snprintf(state_dir, sizeof state_dir, "%s", path);
                *(strrchr(state_dir, '/') ? strrchr(state_dir, '/') : state_dir) = 0;
                if (!state_dir[0])
                        snprintf(state_dir, sizeof state_dir, ".");
        }
}

/* --- The state file: "key value" lines, one file per drive, replaced atomically --- */

static void hex_put(FILE *f, const char *key, const uint8_t *p, size_t n) {
        fprintf(f, "%s ", key);
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%02x", p[i]);
        fputc('\n', f);
}

static size_t hex_get(const char *s, uint8_t *p, size_t max) {
        size_t n = 0;
        unsigned x;

        while (n < max && sscanf(s + 2 * n, "%2x", &x) == 1)
                p[n++] = (uint8_t) x;
        return n;
}

static void state_name(const struct sim_conf *c, const char *ext, char *buf, size_t len) {
        const char *base = strrchr(c->path, '/');

        snprintf(buf, len, "%s/%s.%s", state_dir, base ? base + 1 : c->path, ext);
}

/* The state at power-on, from the configuration (no state file yet). */
static void state_initial(struct sim_drive *d) {
        const struct sim_conf *c = d->conf;
        struct sim_state *s = &d->st;

        *s = (struct sim_state) {
                .sec_enabled = c->user_password[0] != 0,
                .sec_locked = c->locked,
                .sec_frozen = c->frozen,
                .sec_expired = c->count_expired,
                .sec_attempts = c->count_expired ? 0 : 5,
                .master_maximum = c->master_maximum,
                .san_frozen = c->sanitize_frozen,
                .current_sectors = c->bytes / 512,
                .native_sectors = c->native_sectors,
        };
        memcpy(s->user_pw, c->user_password, sizeof s->user_pw);
        memcpy(s->master_pw, c->master_password, sizeof s->master_pw);
}

#define STATE_INTS(X) \
        X(op) X(op_fill) X(op_action) X(op_passes) X(op_invert) X(op_fail) X(op_stuck) X(op_ause) X(op_pattern_len) \
        X(san_status) X(san_failure_mode) X(san_exit_allowed) X(san_passes_done) X(san_frozen) X(san_antifreeze) \
        X(sec_enabled) X(sec_locked) X(sec_frozen) X(sec_expired) X(sec_attempts) X(master_maximum) \
        X(erase_prepared) X(native_read) X(format_done)

static void state_load(struct sim_drive *d) {
        char name[512], line[1200];
        FILE *f;

        state_name(d->conf, "state", name, sizeof name);
        f = fopen(name, "re");
        if (!f) {
                if (errno != ENOENT)
                        sim_die("%s: %s", name, strerror(errno));
                state_initial(d);
                return;
        }
        d->st = (struct sim_state) {};
        while (fgets(line, sizeof line, f)) {
                char key[64], val[1100];
                long long x;

                if (sscanf(line, "%63s %1099s", key, val) != 2)
                        continue;
                x = strtoll(val, NULL, 0);
#define LOAD(field) if (!strcmp(key, #field)) d->st.field = (typeof(d->st.field)) x;
                STATE_INTS(LOAD)
#undef LOAD
                if (!strcmp(key, "op_start_ms"))
                        d->st.op_start_ms = x;
                else if (!strcmp(key, "op_end_ms"))
                        d->st.op_end_ms = x;
                else if (!strcmp(key, "op_cdw10"))
                        d->st.op_cdw10 = (uint32_t) x;
                else if (!strcmp(key, "current_sectors"))
                        d->st.current_sectors = (uint64_t) strtoull(val, NULL, 0);
                else if (!strcmp(key, "native_sectors"))
                        d->st.native_sectors = (uint64_t) strtoull(val, NULL, 0);
                else if (!strcmp(key, "op_pattern"))
                        hex_get(val, d->st.op_pattern, sizeof d->st.op_pattern);
                else if (!strcmp(key, "user_pw"))
                        hex_get(val, (uint8_t *) d->st.user_pw, 32);
                else if (!strcmp(key, "master_pw"))
                        hex_get(val, (uint8_t *) d->st.master_pw, 32);
        }
        fclose(f);
}

static void state_save(struct sim_drive *d) {
        char name[512], tmp[540];
        FILE *f;

        state_name(d->conf, "state", name, sizeof name);
        snprintf(tmp, sizeof tmp, "%s.%d", name, (int) getpid());
        f = fopen(tmp, "we");
        if (!f)
                sim_die("%s: %s", tmp, strerror(errno));
        fprintf(f, "# drivesim state of %s (type %d)\n", d->conf->path, (int) d->conf->type);
#define SAVE(field) fprintf(f, "%s %lld\n", #field, (long long) d->st.field);
        STATE_INTS(SAVE)
#undef SAVE
        fprintf(f, "op_start_ms %lld\nop_end_ms %lld\nop_cdw10 %u\ncurrent_sectors %llu\nnative_sectors %llu\n",
                (long long) d->st.op_start_ms, (long long) d->st.op_end_ms, d->st.op_cdw10,
                (unsigned long long) d->st.current_sectors, (unsigned long long) d->st.native_sectors);
        hex_put(f, "op_pattern", d->st.op_pattern, d->st.op_pattern_len ? d->st.op_pattern_len : 1);
        hex_put(f, "user_pw", (const uint8_t *) d->st.user_pw, 32);
        hex_put(f, "master_pw", (const uint8_t *) d->st.master_pw, 32);
        if (fflush(f) || fsync(fileno(f)) || fclose(f) || rename(tmp, name))
                sim_die("%s: cannot write: %s", name, strerror(errno));
}

/* The drive's lock: a mutex between threads, flock between processes (released by the kernel
 * when a process holding it is killed). */
static int drive_lock(int i) {
        char name[512];
        int fd;

        pthread_mutex_lock(&drive_locks[i]);
        state_name(&drives[i], "lock", name, sizeof name);
        fd = open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0)
                sim_die("%s: %s", name, strerror(errno));
        while (flock(fd, LOCK_EX) < 0 && errno == EINTR)
                ;
        return fd;
}

static void drive_unlock(int i, int fd) {
        close(fd);
        pthread_mutex_unlock(&drive_locks[i]);
}

/* --- Time and the erase --- */

bool sim_busy(const struct sim_drive *d) {
        return d->st.op != SIM_OP_NONE;
}

unsigned sim_progress(const struct sim_drive *d) {
        int64_t now = sim_now_ms(), len = d->st.op_end_ms - d->st.op_start_ms;
        double f;

        if (!sim_busy(d))
                return 0xffff;
        if (d->st.op_stuck)
                /* A drive that stopped working on it: stays at a tenth. */
                return 6554;
        f = len > 0 ? (double) (now - d->st.op_start_ms) / (double) len : 1;
        if (f < 0)
                f = 0;
        if (f > 0.999)
                f = 0.999;
        return (unsigned) (f * 65536);
}

void sim_start(struct sim_drive *d, int op, double seconds) {
        d->st.op = op;
        d->st.op_start_ms = sim_now_ms();
        d->st.op_end_ms = d->st.op_start_ms + (int64_t) (seconds * 1000);
        d->dirty = true;
}

/* Write the whole device as the operation leaves it: the pattern, or data that looks random. */
static void sim_erase(struct sim_drive *d) {
        const struct sim_state *s = &d->st;
        uint64_t off, x = (uint64_t) sim_now_ms() * 0x9e3779b97f4a7c15ull ^ d->conf->rdev;
        size_t bufsz = 1 << 20, plen = s->op_pattern_len ? s->op_pattern_len : 1;
        uint8_t pat[512];
        uint8_t *buf = malloc(bufsz);
        int fd;

        if (!buf)
                sim_die("out of memory");
        memcpy(pat, s->op_pattern, plen);
        /* Only the last pass stays on the medium: inverted if the passes alternate and their
         * number is even (NVMe 5.24 OIPBP, ACS-3 7.38.4 INVERT PATTERN, SBC-3 5.30.2.2 INVERT). */
        if (s->op_invert && s->op_passes % 2 == 0)
                for (size_t i = 0; i < plen; i++)
                        pat[i] = (uint8_t) ~pat[i];
        if (s->op_fill == SIM_FILL_PATTERN)
                for (size_t i = 0; i < bufsz; i++)
                        buf[i] = pat[i % plen];
        fd = open(d->conf->path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                sim_die("%s: cannot open to erase: %s", d->conf->path, strerror(errno));
        for (off = 0; off < d->conf->bytes; off += bufsz) {
                size_t n = d->conf->bytes - off < bufsz ? (size_t) (d->conf->bytes - off) : bufsz;

                if (s->op_fill == SIM_FILL_RANDOM)
                        for (size_t i = 0; i + 8 <= bufsz; i += 8) {
                                /* xorshift64*: data that looks random, as a changed media key leaves */
                                x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
                                uint64_t y = x * 0x2545f4914f6cdd1dull;
                                memcpy(buf + i, &y, 8);
                        }
                if (pwrite(fd, buf, n, (off_t) off) != (ssize_t) n)
                        sim_die("%s: erase write at %llu: %s", d->conf->path, (unsigned long long) off,
                                strerror(errno));
        }
        if (fdatasync(fd) < 0)
                sim_die("%s: fdatasync: %s", d->conf->path, strerror(errno));
        close(fd);
        free(buf);
}

void sim_settle(struct sim_drive *d) {
        struct sim_state *s = &d->st;

        if (!sim_busy(d) || s->op_stuck || sim_now_ms() < s->op_end_ms)
                return;
        if (s->op == SIM_OP_SANITIZE && s->op_fail) {
                /* Failed: the medium is left as it was, the worst case for whoever checks. */
                s->san_status = 3;
                s->san_failure_mode = true;
                s->san_exit_allowed = s->op_ause;
        } else {
                sim_erase(d);
                if (s->op == SIM_OP_SANITIZE) {
                        s->san_status = 1;
                        s->san_failure_mode = false;
                        s->san_passes_done = (int) s->op_passes;
                } else if (s->op == SIM_OP_SECURITY_ERASE) {
                        /* ACS-3 7.46: a successful erase leaves security disabled (SEC1) */
                        s->sec_enabled = s->sec_locked = false;
                        memset(s->user_pw, 0, sizeof s->user_pw);
                        s->sec_attempts = 5;
                } else if (s->op == SIM_OP_FORMAT)
                        s->format_done = true;
        }
        s->op = SIM_OP_NONE;
        d->dirty = true;
}

/* The index of d->conf, for its lock. */
static int drive_index(const struct sim_drive *d) {
        return (int) (d->conf - drives);
}

static __thread int current_lock_fd = -1;

void sim_wait(struct sim_drive *d) {
        int i = drive_index(d);

        while (sim_busy(d) && !d->st.op_stuck) {
                int64_t left = d->st.op_end_ms - sim_now_ms();

                if (left <= 0) {
                        sim_settle(d);
                        break;
                }
                /* Sleep without the lock, so that other processes may ask the drive meanwhile. */
                if (d->dirty)
                        state_save(d);
                d->dirty = false;
                drive_unlock(i, current_lock_fd);
                usleep((useconds_t) (left > 200 ? 200 : left) * 1000);
                current_lock_fd = drive_lock(i);
                state_load(d);
        }
}

/* --- ioctl() --- */

static int sim_lookup(int fd) {
        struct stat st;

        if (!n_drives || fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode))
                return -1;
        for (int i = 0; i < n_drives; i++)
                if (drives[i].rdev == st.st_rdev)
                        return i;
        return -1;
}

static bool sim_takes(enum sim_type t, unsigned long req) {
        if (t == SIM_NVME)
                return req == NVME_IOCTL_ID || req == NVME_IOCTL_ADMIN_CMD || req == NVME_IOCTL_ADMIN64_CMD;
        return req == SG_IO || req == SG_GET_VERSION_NUM;
}

int ioctl(int fd, unsigned long req, ...) {
        struct sim_drive d = {};
        va_list ap;
        void *arg;
        int i, r, saved, entry_errno = errno;

        va_start(ap, req);
        arg = va_arg(ap, void *);
        va_end(ap);
        pthread_once(&once, sim_init);
        i = sim_lookup(fd);
        if (i < 0 || !sim_takes(drives[i].type, req))
                return real_ioctl(fd, req, arg);
        if (req == SG_GET_VERSION_NUM) {
                /* The sg driver's version, as sd answers it */
                *(int *) arg = 30527;
                errno = entry_errno;
                return 0;
        }
        d.conf = &drives[i];
        current_lock_fd = drive_lock(i);
        state_load(&d);
        /* A drive busy with a command that completes only at its end (SECURITY ERASE UNIT,
         * Format NVM, FORMAT UNIT), sent by another thread or process: this one waits its turn. */
        if (d.st.op == SIM_OP_FORMAT || d.st.op == SIM_OP_SECURITY_ERASE)
                sim_wait(&d);
        if (drives[i].type == SIM_NVME)
                r = sim_nvme_ioctl(&d, req, arg);
        else
                r = sim_sg_io(&d, arg);
        saved = errno;
        if (d.dirty)
                state_save(&d);
        drive_unlock(i, current_lock_fd);
        current_lock_fd = -1;
        /* As a system call: errno changes only on failure (libnvme's nvme_get_nsid() reads
         * errno after a successful NVME_IOCTL_ID). */
        errno = r == -1 ? saved : entry_errno;
        return r;
}
