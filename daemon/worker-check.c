/* What a worker does with a completed verification read or a failed I/O: compare what was read
 * with what the pass wrote (reporting each sector that differs), and recover from media errors
 * by retrying synchronously, by halves down to single sectors, recording the bad ranges; a device
 * that only fails is given up. Runs on the worker thread whose I/O completed (worker.c calls in
 * from worker_complete()).
 *
 * The failure streak that tells a dead device from a bad sector is per job, in its atomics: the
 * workers sharing the job count it together. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "daemon.h"
#include "worker-private.h"

#define WORKER_DEAD_NS (10ull * 1000000000u) /* failing without a success this long... */
#define WORKER_DEAD_FAILURES 16         /* ...and this many I/Os in a row: the device has failed */

/* Whether got[0..len) is what the pass has at offset off. A pattern is compared with the
 * worker's reference (laid out once per pattern, not per read); for random passes the expected
 * bytes are regenerated piecewise into the scratch buffer. Returns 1 when equal, 0 when not,
 * -errno. */
static int worker_same(struct worker *w, const struct job_unit *u, const uint8_t *got, uint64_t off, uint32_t len) {
        if (u->pass->pass.kind == PASS_PATTERN) {
                pattern_ref_set(&w->ref, &u->pass->pass);
                return pattern_ref_check(&w->ref, got, off, len);
        }
        for (uint32_t o = 0; o < len; o += WORKER_SCRATCH) {
                uint32_t n = len - o < WORKER_SCRATCH ? len - o : WORKER_SCRATCH;
                int r = worker_expected(w, u, w->scratch, off + o, n);

                if (r < 0)
                        return r;
                if (memcmp(got + o, w->scratch, n) != 0)
                        return 0;
        }
        return 1;
}

/* Bytes got[0..len) were read at device offset off: compare them with what the pass wrote, and
 * report every logical sector that differs. */
static void worker_compare_range(struct worker *w, const struct job_unit *u, const uint8_t *got, uint64_t off,
                                 uint32_t len) {
        struct job *job = u->job;
        uint32_t sector = job->info.logical_sector;
        int r = worker_same(w, u, got, off, len);

        for (uint32_t o = 0; r == 0 && o < len; o += sector) {
                int same = worker_same(w, u, got + o, off + o, sector);

                if (same < 0) {
                        r = same;
                        break;
                }
                if (!same)
                        job_verify_mismatch(job, off + o);
        }
        if (r < 0)
                job_fail(job, r, "%s: cannot regenerate pass %u at offset %" PRIu64 ": %s", job->info.node,
                         u->pass_index + 1, off, strerror(-r));
}

/* A verification read of a whole slot is in. */
void worker_compare(struct worker *w, struct slot *s) {
        worker_compare_range(w, &s->cw->u, s->buf, s->offset, s->len);
}

/* Errors of the medium (a bad sector), as opposed to a device gone, full or refusing. */
bool worker_media_error(int e) {
        return e == -EIO || e == -ENODATA || e == -EILSEQ || e == -EBADMSG;
}

/* A success of the job's device ends a streak of failures. */
void worker_io_ok(struct job *job) {
        if (atomic_load_explicit(&job->fail_streak, memory_order_relaxed))
                atomic_store(&job->fail_streak, 0);
        atomic_store_explicit(&job->last_ok_ns, mono_ns(), memory_order_relaxed);
}

/* A failure: 0, or -EIO when the failures since the last success make the device dead (then the
 * job is failed here). One bad sector never does: halving it alternates failures and successes. */
static int worker_io_failed(struct job *job, int r, uint64_t off) {
        uint64_t now = mono_ns(), start = 0, n = atomic_fetch_add(&job->fail_streak, 1) + 1;

        if (n == 1 || !atomic_load(&job->fail_streak_ns))
                atomic_store(&job->fail_streak_ns, now);
        start = atomic_load(&job->fail_streak_ns);
        if (n >= WORKER_DEAD_FAILURES && start <= now && now - start >= WORKER_DEAD_NS) {
                job_fail(job, r, "%s: %" PRIu64 " I/Os in a row failed over %llu s (the last at offset %" PRIu64 ": %s): "
                         "the device fails or has gone", job->info.node, n,
                         (unsigned long long) ((now - start) / 1000000000u), off, strerror(-r));
                return -EIO;
        }
        return 0;
}

/* One synchronous I/O of the recovery: 0, or -errno (a short transfer is -EIO). */
static int recover_io(int fd, bool read, uint8_t *buf, uint32_t len, uint64_t off) {
        ssize_t n;

        do
                n = read ? pread(fd, buf, len, (off_t) off) : pwrite(fd, buf, len, (off_t) off);
        while (n < 0 && errno == EINTR);
        if (n < 0 || (uint32_t) n != len)
                metrics_count_io_error();
        if (n < 0)
                return -errno;
        return (uint32_t) n == len ? 0 : -EIO;
}

/* [off, off + len) of a slot was transferred whole. */
static void recover_good(struct worker *w, struct slot *s, const uint8_t *buf, uint64_t off, uint32_t len) {
        struct job *job = s->cw->u.job;

        worker_io_ok(job);
        if (s->read)
                worker_compare_range(w, &s->cw->u, buf, off, len);
        else
                atomic_fetch_add(&job->bytes_written, len);
}

/* Recovery of [off, off + len) of a slot, which failed whole (failed: already tried): by halves,
 * in whole sectors of the plan (the device's physical sectors where it has larger ones), down to
 * single sectors. Good parts are transferred (and compared, for a read); bad sectors are recorded
 * and skipped. Returns 0 when the job can go on, or -errno when it must stop (failed, aborted). */
static int worker_recover_range(struct worker *w, struct slot *s, uint8_t *buf, uint64_t off, uint32_t len,
                                bool failed) {
        struct job *job = s->cw->u.job;
        uint32_t sector = job->plan.sector, half;
        int r;

        if (atomic_load(&job->abort))
                return -ECANCELED;
        if (!failed) {
                r = recover_io(job->fd, s->read, buf, len, off);
                if (r == 0) {
                        recover_good(w, s, buf, off, len);
                        return 0;
                }
                if (!worker_media_error(r)) {
                        job_fail(job, r, "%s: %s of %" PRIu32 " bytes at offset %" PRIu64 " failed: %s", job->info.node,
                                 s->read ? "read" : "write", len, off, strerror(-r));
                        return r;
                }
                if (worker_io_failed(job, r, off) < 0)
                        return -EIO;
        }
        if (len <= sector)
                return job_bad_range(job, off, len, s->read) < 0 ? -EIO : 0;
        half = len / 2 / sector * sector;
        if (half == 0)
                half = sector;
        r = worker_recover_range(w, s, buf, off, half, false);
        if (r == 0)
                r = worker_recover_range(w, s, buf + half, off + half, len - half, false);
        return r;
}

/* A write or read of a slot failed with a media error: try it once more whole, then by halves
 * down to single sectors. Synchronous on this worker: errors are rare, and a disk with a bad
 * sector is slow anyway. */
void worker_recover(struct worker *w, struct slot *s, int res) {
        struct job *job = s->cw->u.job;
        uint32_t len = s->len - s->done;
        uint64_t off = s->offset + s->done;
        uint8_t *buf = (uint8_t *) s->buf + s->done;
        int r;

        log_debug("job %" PRIu64 ": %s: %s of %" PRIu32 " bytes at offset %" PRIu64 " failed (%s): retrying",
                  job->id, job->info.node, s->read ? "read" : "write", len, off, strerror(-res));
        /* The retries read into the buffer (a write's leave it as it was, but one rule for all
         * recoveries is simpler to trust): whatever pattern it held is gone. */
        s->pattern_len = 0;
        /* What a short transfer brought in before the error is compared too. */
        if (s->read && s->done > 0)
                worker_compare_range(w, &s->cw->u, s->buf, s->offset, s->done);
        if (worker_io_failed(job, res, off) == 0) {
                r = recover_io(job->fd, s->read, buf, len, off);
                if (r == 0)
                        recover_good(w, s, buf, off, len);
                else if (!worker_media_error(r))
                        job_fail(job, r, "%s: %s of %" PRIu32 " bytes at offset %" PRIu64 " failed: %s", job->info.node,
                                 s->read ? "read" : "write", len, off, strerror(-r));
                else if (worker_io_failed(job, r, off) == 0)
                        (void) worker_recover_range(w, s, buf, off, len, true);
        }
        /* The range is dealt with: counted as done, bad sectors and all. */
        atomic_fetch_add(&job->bytes_done, len);
}
