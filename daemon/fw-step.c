/* A firmware erase step: the one unit of a firmware pass's stage, run by a thread of its own (never
 * the main thread, never a worker: a worker that claims the unit hands it to fw_step_spawn() and
 * goes on feeding its other devices). The thread holds the unit as a worker would, so the stage
 * ends, and a cancel or pause waits, through the same paths as for written passes.
 *
 * What it does, in order:
 * 1. Proof, before: hash FW_SAMPLES extents of the device and write FW_MARKERS marker sectors (both
 *    placed, and the markers' bytes made, from the pass's own key, so that a resumed job finds
 *    them again), flushed.
 * 2. Record that the command is about to be sent, and wait until that record is on disk: a daemon
 *    that dies from here on finds, on its restart, a command that may be running in the drive.
 * 3. Send it. A sanitize returns at once and runs on in the drive: its progress is read from the
 *    drive (fw_status) into the job's bytes_done. A format or security erase blocks until it ends:
 *    it runs in a second thread while this one moves the progress on by the drive's estimate.
 * 4. Proof, after: no marker may be left; no extent that held data before may hold it still; what
 *    the drive returns now is classified (zeros, ones, a byte pattern, random-looking data).
 * A resumed step (the record says it started) asks the drive first: a sanitize still running is
 * followed, one that completed meanwhile is checked; an ATA password left set by an interrupted
 * security erase is removed (and the job's history says so) before the erase is sent again. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/nvme_ioctl.h>
#include <openssl/evp.h>

#include "cleanup.h"
#include "clock.h"
#include "daemon.h"
#include "fw-ata.h"
#include "job-private.h"

#define FW_POLL_S 1.0                   /* between reads of a sanitize's status */
#define FW_POLL_FIRST_S 0.2             /* the first few, so that a quick one is seen quickly */
#define FW_STATUS_ERRORS_MAX 5          /* status reads failing in a row before the step fails */
#define FW_STALL_DEFAULT_S (6 * 3600.0) /* no progress for this long, where the drive gives no estimate */
#define FW_RECORD_WAIT_S 30.0           /* for the record that says a command is about to be sent */

struct fw_step {
        struct job *job;
        struct job_unit u;
};

static atomic_uint fw_running;          /* threads of firmware steps not yet returned */

/* splitmix64: where the markers and sample extents go, from the pass's key. */
static uint64_t mix_next(uint64_t *s) {
        uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

static uint64_t key_seed(const struct job_pass *p, uint64_t salt) {
        uint64_t s = salt;

        for (size_t i = 0; i < p->key_len; i++)
                s = (s ^ p->key[i]) * 0x100000001b3ULL;
        return s;
}

/* The sector size markers and extents are aligned to. */
static uint32_t fw_sector(const struct job *job) {
        return job->plan.sector ? job->plan.sector : 512;
}

/* Offset of marker i: the first and last sectors, the rest spread at random. */
static uint64_t marker_offset(const struct job *job, const struct job_pass *p, unsigned i) {
        uint64_t sectors = job->info.size / fw_sector(job), s = key_seed(p, 0x6d61726bULL + i);

        if (i == 0 || sectors < 2)
                return 0;
        if (i == 1)
                return (sectors - 1) * fw_sector(job);
        return mix_next(&s) % sectors * fw_sector(job);
}

static unsigned marker_count(const struct job *job) {
        uint64_t sectors = job->info.size / fw_sector(job);

        return sectors < FW_MARKERS ? (unsigned) sectors : FW_MARKERS;
}

/* Extent i of the sample: its offset and length (whole sectors). */
static void sample_extent(const struct job *job, const struct job_pass *p, unsigned i, uint64_t *off, uint32_t *len) {
        uint32_t sec = fw_sector(job);
        uint64_t l = FW_SAMPLE_BYTES < job->info.size ? FW_SAMPLE_BYTES : job->info.size / sec * sec;
        uint64_t slots = (job->info.size - l) / sec + 1, s = key_seed(p, 0x73616d70ULL + i);

        *len = (uint32_t) l;
        *off = mix_next(&s) % slots * sec;
}

/* The bytes of the marker at offset off: SHA-256 over the key, the offset and a counter. */
static void marker_fill(const struct job_pass *p, uint64_t off, uint8_t *buf, uint32_t len) {
        uint8_t in[KEYSTREAM_KEY_MAX + 16], md[32];

        memcpy(in, p->key, p->key_len);
        memcpy(in + p->key_len, &off, 8);
        for (uint32_t i = 0; i < len; i += 32) {
                uint64_t ctr = i / 32;

                memcpy(in + p->key_len + 8, &ctr, 8);
                EVP_Digest(in, p->key_len + 16, md, NULL, EVP_sha256(), NULL);
                memcpy(buf + i, md, len - i < 32 ? len - i : 32);
        }
}

/* Whether buf is one byte repeated. */
static bool uniform(const uint8_t *buf, size_t len) {
        return len == 0 || (buf[0] == buf[len - 1] && memcmp(buf, buf + 1, len - 1) == 0);
}

/* A 64-bit hash of buf, bit 0 set when it is one byte repeated. */
static uint64_t extent_hash(const uint8_t *buf, size_t len) {
        uint8_t md[32];
        uint64_t h;

        EVP_Digest(buf, len, md, NULL, EVP_sha256(), NULL);
        memcpy(&h, md, sizeof(h));
        return (h & ~1ULL) | (uniform(buf, len) ? 1 : 0);
}

/* All of len bytes at off, read (or written, from buf) through the job's O_DIRECT descriptor. */
static int io_full(int fd, void *buf, size_t len, uint64_t off, bool write) {
        for (size_t done = 0; done < len;) {
                ssize_t n = write ? pwrite(fd, (const uint8_t *) buf + done, len - done, (off_t) (off + done)) :
                                    pread(fd, (uint8_t *) buf + done, len - done, (off_t) (off + done));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? -errno : -EIO;
                done += (size_t) n;
        }
        return 0;
}

static int read_full(int fd, void *buf, size_t len, uint64_t off) {
        return io_full(fd, buf, len, off, false);
}

static int write_full(int fd, void *buf, size_t len, uint64_t off) {
        return io_full(fd, buf, len, off, true);
}

/* Step 1: hash the sample, then write the markers and flush. 0 or -errno (msg). */
static int fw_prepare(struct job *job, struct job_pass *p, uint8_t *buf, char *msg, size_t n) {
        uint64_t hashes[FW_SAMPLES], off;
        uint32_t len, sec = fw_sector(job);
        unsigned markers = marker_count(job);
        int r;

        for (unsigned i = 0; i < FW_SAMPLES; i++) {
                sample_extent(job, p, i, &off, &len);
                r = read_full(job->fd, buf, len, off);
                if (r < 0) {
                        snprintf(msg, n, "%s: cannot read the sample before the firmware erase at offset %" PRIu64 ": %s",
                                 job->info.node, off, strerror(-r));
                        return r;
                }
                hashes[i] = extent_hash(buf, len);
        }
        for (unsigned i = 0; i < markers; i++) {
                off = marker_offset(job, p, i);
                marker_fill(p, off, buf, sec);
                r = write_full(job->fd, buf, sec, off);
                if (r < 0) {
                        snprintf(msg, n, "%s: cannot write a marker at offset %" PRIu64 " before the firmware erase: %s",
                                 job->info.node, off, strerror(-r));
                        return r;
                }
        }
        if (fdatasync(job->fd) < 0) {
                r = -errno;
                snprintf(msg, n, "%s: flush of the markers failed: %s", job->info.node, strerror(-r));
                return r;
        }
        pthread_mutex_lock(&job->lock);
        memcpy(p->fw.before, hashes, sizeof(hashes));
        p->fw.n_samples = FW_SAMPLES;
        p->fw.markers = markers;
        job->dirty = true;
        pthread_mutex_unlock(&job->lock);
        return 0;
}

/* Byte entropy of buf, bits per byte. */
static double entropy(const uint8_t *buf, size_t len) {
        uint64_t count[256] = {};
        double e = 0;

        for (size_t i = 0; i < len; i++)
                count[buf[i]]++;
        for (unsigned b = 0; b < 256; b++)
                if (count[b]) {
                        double q = (double) count[b] / (double) len;

                        e -= q * log2(q);
                }
        return e;
}

/* Step 4: the markers, the sample, and what the drive returns. 0, or -EIO when data survived
 * (msg), or -errno when the device could not be read. */
static int fw_prove(struct job *job, struct job_pass *p, uint8_t *buf, uint8_t *want, char *msg, size_t n) {
        uint32_t sec = fw_sector(job), len;
        unsigned survived = 0, unchanged = 0, blank = 0, zeros = 0, ones = 0, same = 0, randomish = 0;
        uint64_t first = 0, first_unchanged = 0, off;
        int byte = -1, r;
        char returns[64];

        for (unsigned i = 0; i < p->fw.markers; i++) {
                off = marker_offset(job, p, i);
                r = read_full(job->fd, buf, sec, off);
                if (r < 0) {
                        snprintf(msg, n, "%s: cannot read back the marker at offset %" PRIu64 ": %s", job->info.node,
                                 off, strerror(-r));
                        return r;
                }
                marker_fill(p, off, want, sec);
                if (memcmp(buf, want, sec) == 0 && survived++ == 0)
                        first = off;
        }
        for (unsigned i = 0; i < p->fw.n_samples; i++) {
                uint64_t h;

                sample_extent(job, p, i, &off, &len);
                r = read_full(job->fd, buf, len, off);
                if (r < 0) {
                        snprintf(msg, n, "%s: cannot read the sample after the firmware erase at offset %" PRIu64 ": %s",
                                 job->info.node, off, strerror(-r));
                        return r;
                }
                h = extent_hash(buf, len);
                if (p->fw.before[i] & 1)
                        blank++;
                else if (h == p->fw.before[i] && unchanged++ == 0)
                        first_unchanged = off;
                if (uniform(buf, len)) {
                        zeros += buf[0] == 0x00;
                        ones += buf[0] == 0xff;
                        if (byte < 0 || byte == buf[0]) {
                                byte = buf[0];
                                same++;
                        }
                } else if (entropy(buf, len) > 7.9)
                        randomish++;
        }
        if (zeros == p->fw.n_samples)
                snprintf(returns, sizeof(returns), "zeros");
        else if (ones == p->fw.n_samples)
                snprintf(returns, sizeof(returns), "ones (0xff)");
        else if (same == p->fw.n_samples)
                snprintf(returns, sizeof(returns), "the byte 0x%02x repeated", (unsigned) byte);
        else if (randomish == p->fw.n_samples)
                snprintf(returns, sizeof(returns), "random-looking data");
        else
                snprintf(returns, sizeof(returns), "mixed: %u of %u extents zeros, %u random-looking", zeros,
                         p->fw.n_samples, randomish);
        pthread_mutex_lock(&job->lock);
        p->fw.proven = true;
        p->fw.markers_survived = survived;
        p->fw.marker_first = first;
        p->fw.samples_unchanged = unchanged;
        p->fw.samples_blank = blank;
        snprintf(p->fw.returns, sizeof(p->fw.returns), "%s", returns);
        job->dirty = true;
        pthread_mutex_unlock(&job->lock);
        if (survived > 0) {
                snprintf(msg, n, "%s: %s reported success, but %u of %u markers written before it are still there "
                         "(the first at offset %" PRIu64 "): the drive did not erase", job->info.node,
                         fw_action_name(p->fw.cmd.action), survived, p->fw.markers, first);
                return -EIO;
        }
        if (unchanged > 0) {
                snprintf(msg, n, "%s: %s reported success, but %u of %u sampled extents still hold what they held "
                         "before it (the first at offset %" PRIu64 "): the drive did not erase", job->info.node,
                         fw_action_name(p->fw.cmd.action), unchanged, p->fw.n_samples - blank, first_unchanged);
                return -EIO;
        }
        return 0;
}

static void fw_progress(struct job *job, uint64_t base, double fraction) {
        if (fraction < 0)
                return;
        if (fraction > 1)
                fraction = 1;
        atomic_store(&job->bytes_done, base + (uint64_t) (fraction * (double) job->info.size));
}

static void fw_set_status(struct job *job, struct job_pass *p, const struct fw_status *s) {
        pthread_mutex_lock(&job->lock);
        if (s->state != p->fw.status.state || strcmp(s->text, p->fw.status.text) != 0)
                job->dirty = true;
        p->fw.status = *s;
        pthread_mutex_unlock(&job->lock);
}

/* A command that blocks, in a thread of its own. */
struct fw_blocking {
        int fd;
        const struct fw_command *cmd;
        int r;
        char err[512];
};

static void *fw_blocking_main(void *arg) {
        struct fw_blocking *b = arg;

        pthread_setname_np(pthread_self(), "wiped-fwcmd");
        b->r = fw_start(b->fd, b->cmd, b->err, sizeof(b->err));
        return NULL;
}

/* Step 3 for a format or security erase: send it and wait, moving the progress on by the drive's
 * estimate (never past 99 % before it ends). 0 or -errno (msg). */
static int fw_run_blocking(struct job *job, struct job_pass *p, uint64_t base, char *msg, size_t n) {
        struct fw_blocking b = { .fd = job->fd, .cmd = &p->fw.cmd };
        pthread_t t;
        double t0 = mono_s();
        int r;

        r = -pthread_create(&t, NULL, fw_blocking_main, &b);
        if (r < 0) {
                snprintf(msg, n, "%s: cannot start a thread for %s: %s", job->info.node, fw_action_name(p->fw.cmd.action),
                         strerror(-r));
                return r;
        }
        for (;;) {
                struct timespec ts;

                clock_gettime(CLOCK_REALTIME, &ts);
                ts.tv_sec += 1;
                if (pthread_timedjoin_np(t, NULL, &ts) == 0)
                        break;
                if (p->fw.cmd.estimate > 0)
                        fw_progress(job, base, fmin(0.99, (mono_s() - t0) / (double) p->fw.cmd.estimate));
        }
        if (b.r < 0) {
                snprintf(msg, n, "%s: %s failed: %s", job->info.node, fw_action_name(p->fw.cmd.action), b.err);
                return b.r;
        }
        return 0;
}

/* Step 3 for a sanitize, after it was sent (or found running): follow it to its end. 0 when it
 * completed; 1 when the job was stopped meanwhile (the sanitize goes on in the drive); -errno
 * (msg) when the drive reports failure, stays without progress past the bound, or stops
 * answering. */
static int fw_follow(struct job *job, struct job_pass *p, uint64_t base, char *msg, size_t n) {
        double t0 = mono_s(), last_change = t0, stall, last_fraction = -2;
        unsigned errors = 0, polls = 0;
        fw_seconds est = p->fw.cmd.estimate;
        char err[256];

        /* Stuck: no progress for twice the drive's own estimate and ten seconds more. */
        stall = est > 0 ? 2.0 * (double) est + 10.0 : FW_STALL_DEFAULT_S;
        for (;;) {
                struct fw_status s;
                int r = fw_status(job->fd, &p->fw.cmd, &s, err, sizeof(err));

                if (r < 0) {
                        if (++errors >= FW_STATUS_ERRORS_MAX) {
                                snprintf(msg, n, "%s: the drive no longer answers the sanitize status: %s", job->info.node, err);
                                return r;
                        }
                } else {
                        errors = 0;
                        fw_set_status(job, p, &s);
                        if (s.state == FW_RUN_DONE) {
                                fw_progress(job, base, 1.0);
                                return 0;
                        }
                        if (s.state == FW_RUN_FAILED) {
                                snprintf(msg, n, "%s: the drive reports that %s failed: %s", job->info.node,
                                         fw_action_name(p->fw.cmd.action), s.text);
                                return -EIO;
                        }
                        if (s.state == FW_RUN_UNKNOWN && polls > 3) {
                                snprintf(msg, n, "%s: the drive shows no sanitize after it accepted one: %s", job->info.node,
                                         s.text);
                                return -EIO;
                        }
                        if (s.fraction != last_fraction) {
                                last_fraction = s.fraction;
                                last_change = mono_s();
                        }
                        fw_progress(job, base, s.fraction);
                }
                if (mono_s() - last_change > stall) {
                        snprintf(msg, n, "%s: %s made no progress for %.0f s (the drive estimates %" PRId64 " s): %s",
                                 job->info.node, fw_action_name(p->fw.cmd.action), mono_s() - last_change, (int64_t) est,
                                 p->fw.status.text);
                        return -ETIMEDOUT;
                }
                if (atomic_load(&job->abort))
                        return 1;
                usleep((useconds_t) ((polls++ < 10 ? FW_POLL_FIRST_S : FW_POLL_S) * 1e6));
        }
}

/* The command was not sent after all: the record must not say it started. */
static void fw_unstart(struct job *job, struct job_pass *p) {
        pthread_mutex_lock(&job->lock);
        p->fw.started = false;
        p->fw.started_at = 0;
        job->dirty = true;
        pthread_mutex_unlock(&job->lock);
}

/* Markers of the proof still on the device, or -errno. */
static int fw_markers_left(struct job *job, struct job_pass *p, uint8_t *buf, uint8_t *want) {
        uint32_t sec = fw_sector(job);
        int left = 0, r;

        for (unsigned i = 0; i < p->fw.markers; i++) {
                uint64_t off = marker_offset(job, p, i);

                r = read_full(job->fd, buf, sec, off);
                if (r < 0)
                        return r;
                marker_fill(p, off, want, sec);
                left += memcmp(buf, want, sec) == 0;
        }
        return left;
}

/* Add a note of what a resume found (job lock taken inside). */
static void fw_note(struct job *job, struct job_pass *p, const char *what) {
        pthread_mutex_lock(&job->lock);
        snprintf(p->fw.note, sizeof(p->fw.note), "%s", what);
        job->dirty = true;
        pthread_mutex_unlock(&job->lock);
        log_warning("job %" PRIu64 ": %s: %s", job->id, job->info.node, what);
}

/* The step. 0 done; 1 stopped (abort) while the drive goes on; 2 stopped before anything was sent;
 * -errno failed (msg). */
static int fw_step_run(struct job *job, struct job_pass *p, uint64_t base, char *msg, size_t n) {
        _cleanup_free_ uint8_t *buf = NULL, *want = NULL;
        bool background = fw_action_background(p->fw.cmd.action), send = true, resumed = p->fw.started;
        const char *name = fw_action_name(p->fw.cmd.action);
        int r;

        if (posix_memalign((void **) &buf, 4096, FW_SAMPLE_BYTES) != 0 ||
            posix_memalign((void **) &want, 4096, FW_SAMPLE_BYTES) != 0) {
                snprintf(msg, n, "%s: out of memory", job->info.node);
                return -ENOMEM;
        }

        if (p->fw.started) {
                /* Resumed: the command may have reached the drive. Ask it first. */
                struct fw_status s;
                char err[256], what[256];

                if (background) {
                        r = fw_status(job->fd, &p->fw.cmd, &s, err, sizeof(err));
                        if (r < 0) {
                                snprintf(msg, n, "%s: cannot read the drive's sanitize status on resume: %s", job->info.node, err);
                                return r;
                        }
                        fw_set_status(job, p, &s);
                        /* A drive keeps the outcome of its last sanitize, which may be an older
                         * one: the markers tell whether ours ran (all there: it never did). */
                        if (s.state == FW_RUN_DONE || s.state == FW_RUN_UNKNOWN) {
                                r = fw_markers_left(job, p, buf, want);
                                if (r < 0) {
                                        snprintf(msg, n, "%s: cannot read the markers on resume: %s", job->info.node,
                                                 strerror(-r));
                                        return r;
                                }
                                if ((unsigned) r == p->fw.markers && r > 0) {
                                        snprintf(what, sizeof(what), "resumed: every marker is still there, so the %s "
                                                 "never ran (%s): sent again", name, s.text);
                                        fw_note(job, p, what);
                                } else if (r == 0 && s.state == FW_RUN_DONE) {
                                        snprintf(what, sizeof(what), "resumed: the drive's %s completed while the daemon "
                                                 "was away (%s)", name, s.text);
                                        fw_note(job, p, what);
                                        send = false;
                                } else if (r > 0) {
                                        snprintf(msg, n, "%s: on resume, %d of %u markers are still there and the drive "
                                                 "says %s: the sanitize did not erase them", job->info.node, r,
                                                 p->fw.markers, s.text);
                                        return -EIO;
                                } else {
                                        snprintf(what, sizeof(what), "resumed: the drive shows no %s (%s) and the markers "
                                                 "are gone: sent again", name, s.text);
                                        fw_note(job, p, what);
                                }
                        } else if (s.state == FW_RUN_RUNNING) {
                                snprintf(what, sizeof(what), "resumed: the drive's %s is still running: followed, not "
                                         "sent again (%s)", name, s.text);
                                fw_note(job, p, what);
                                send = false;
                        } else if (s.state == FW_RUN_FAILED) {
                                snprintf(msg, n, "%s: the drive reports that %s failed while the daemon was away: %s",
                                         job->info.node, name, s.text);
                                return -EIO;
                        }
                } else if (p->fw.cmd.action == FW_ACTION_ATA_SECURITY_ERASE) {
                        /* A drive still erasing for a killed daemon answers nothing until the erase
                         * ends: ask again until the erase's own time is up. */
                        double until = mono_s() + (p->fw.cmd.timeout_s ? p->fw.cmd.timeout_s : 600);
                        bool said = false;

                        while ((r = fw_ata_security_cleanup(job->fd, p->fw.cmd.password, err, sizeof(err))) < 0 &&
                               r != -ENOMEM && mono_s() < until && !atomic_load(&job->abort)) {
                                if (!said) {
                                        struct fw_status w = { .state = FW_RUN_RUNNING, .fraction = -1 };

                                        snprintf(w.text, sizeof(w.text), "waiting for the drive (still erasing?): %.100s", err);
                                        fw_set_status(job, p, &w);
                                        log_warning("job %" PRIu64 ": %s: the drive does not answer the password "
                                                    "cleanup yet (%s): asking again every 5 s until the erase's own "
                                                    "time is up", job->id, job->info.node, err);
                                        said = true;
                                }
                                sleep(5);
                        }
                        if (r < 0) {
                                snprintf(msg, n, "%s: an interrupted security erase left a password set, and it cannot be "
                                         "removed: %s", job->info.node, err);
                                return r;
                        }
                        if (r > 0)
                                snprintf(what, sizeof(what), "resumed: the interrupted security erase had left its "
                                         "temporary user password set; removed (SECURITY DISABLE PASSWORD); the erase "
                                         "is sent again");
                        else {
                                /* No password: the erase completed (it clears the password), or the
                                 * password was never set. The markers tell which. */
                                r = fw_markers_left(job, p, buf, want);
                                if (r < 0) {
                                        snprintf(msg, n, "%s: cannot read the markers on resume: %s", job->info.node,
                                                 strerror(-r));
                                        return r;
                                }
                                send = r > 0;
                                if (!send)
                                        fw_set_status(job, p, &(struct fw_status) { .state = FW_RUN_DONE, .fraction = 1,
                                                      .text = "completed while the daemon was away (no password, "
                                                              "markers gone)" });
                                snprintf(what, sizeof(what), send ? "resumed: no password is set on the drive and the "
                                         "markers are still there: the security erase is sent again" : "resumed: no "
                                         "password is set on the drive and the markers are gone: the security erase "
                                         "completed while the daemon was away");
                        }
                        fw_note(job, p, what);
                } else
                        fw_note(job, p, "resumed: the interrupted format is sent again");
        } else {
                if (atomic_load(&job->abort))
                        return 2;
                r = fw_prepare(job, p, buf, msg, n);
                if (r < 0)
                        return r;
                pthread_mutex_lock(&job->lock);
                p->fw.started = true;
                p->fw.started_at = real_s();
                pthread_mutex_unlock(&job->lock);
                r = job_record_wait(job, FW_RECORD_WAIT_S);
                if (r == -EINTR) {
                        fw_unstart(job, p);
                        return 2;
                }
                if (r < 0) {
                        snprintf(msg, n, "%s: %s not sent: its start cannot be recorded in the state directory", job->info.node,
                                 name);
                        return -EIO;
                }
        }
        if (atomic_load(&job->abort) && send) {
                /* Stopped before anything reached the drive: the record says so again. */
                if (!resumed)
                        fw_unstart(job, p);
                return 2;
        }
        /* The namespace the command names is still this device's (a record is not trusted
         * blindly, and a namespace may have been deleted and made again under another id). */
        if (send && p->fw.cmd.set == FW_SET_NVME) {
                int id = ioctl(job->fd, NVME_IOCTL_ID);

                if (id < 0 || (uint32_t) id != p->fw.cmd.nsid) {
                        snprintf(msg, n, "%s: %s not sent: the device is namespace %d now, not %" PRIu32 " as recorded",
                                 job->info.node, name, id, p->fw.cmd.nsid);
                        return -ESTALE;
                }
        }

        if (send) {
                char err[512];

                log_info("job %" PRIu64 ": %s: sending %s%s", job->id, job->info.node, name,
                         p->fw.cmd.all_namespaces ? " (it acts on every namespace of the controller)" : "");
                if (background) {
                        r = fw_start(job->fd, &p->fw.cmd, err, sizeof(err));
                        if (r < 0) {
                                snprintf(msg, n, "%s: %s refused: %s", job->info.node, name, err);
                                return r;
                        }
                } else {
                        r = fw_run_blocking(job, p, base, msg, n);
                        if (r < 0)
                                return r;
                        fw_set_status(job, p, &(struct fw_status) { .state = FW_RUN_DONE, .fraction = 1,
                                                                    .text = "completed: the command returned good status" });
                }
        }
        if (background) {
                r = fw_follow(job, p, base, msg, n);
                if (r != 0)
                        return r;
        }
        fw_progress(job, base, 1.0);
        r = fw_prove(job, p, buf, want, msg, n);
        pthread_mutex_lock(&job->lock);
        p->fw.ended_at = real_s();
        job->dirty = true;
        pthread_mutex_unlock(&job->lock);
        return r;
}

static void *fw_step_main(void *arg) {
        struct fw_step *st = arg;
        struct job *job = st->job;
        struct job_pass *p = &job->passes[st->u.pass_index];
        uint64_t base = atomic_load(&job->bytes_done);
        char msg[1024] = "";
        int r;

        pthread_setname_np(pthread_self(), "wiped-fw");
        r = fw_step_run(job, p, base, msg, sizeof(msg));
        if (r == 0) {
                atomic_fetch_add(&job->bytes_written, job->info.size);
                atomic_store(&job->last_ok_ns, mono_ns());
                job_release_chunk(job, &st->u, st->u.run);
        } else {
                if (r == 2)
                        log_info("job %" PRIu64 ": %s: stopped before %s was sent", job->id, job->info.node,
                                 fw_action_name(p->fw.cmd.action));
                else if (r == 1)
                        log_warning("job %" PRIu64 ": %s: stopped while the drive's %s runs: it goes on in the drive "
                                    "(it cannot be stopped); a resume follows it", job->id, job->info.node,
                                    fw_action_name(p->fw.cmd.action));
                else
                        job_fail(job, r, "%s", msg);
                job_release_chunk(job, NULL, st->u.run);
        }
        free(st);
        atomic_fetch_sub(&fw_running, 1);
        return NULL;
}

void fw_step_wait_all(void (*tick)(void)) {
        unsigned n = atomic_load(&fw_running), k = 0;

        if (n > 0)
                log_info("waiting for %u firmware erase step%s to return: a sanitize is left to the drive at once; a "
                         "format or security erase in progress ends first (a daemon killed meanwhile leaves it to the "
                         "resume, which asks the drive and sends it again)", n, n == 1 ? "" : "s");
        while (atomic_load(&fw_running) > 0) {
                /* Every other job's record is written meanwhile, in case the wait is cut short. */
                if (tick && k++ % 10 == 0)
                        tick();
                usleep(10000);
        }
}

int fw_step_spawn(struct job *job, const struct job_unit *u) {
        struct fw_step *st = malloc(sizeof(*st));
        pthread_attr_t a;
        pthread_t t;
        int r;

        if (!st)
                return -ENOMEM;
        *st = (struct fw_step) { .job = job, .u = *u };
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        atomic_fetch_add(&fw_running, 1);
        r = -pthread_create(&t, &a, fw_step_main, st);
        pthread_attr_destroy(&a);
        if (r < 0) {
                atomic_fetch_sub(&fw_running, 1);
                free(st);
        }
        return r;
}
