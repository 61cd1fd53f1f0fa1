/* One worker thread's loop: it claims units of the running jobs, fills its buffers with what the
 * passes write (or queues reads to verify), submits them with io_uring and O_DIRECT, and reaps
 * the completions. Everything here runs on a worker thread (worker_main), each on its own ring;
 * the pool (pool.c) starts and stops the threads. What a worker does with a read to compare or
 * an I/O that failed is in worker-check.c.
 *
 * Every worker serves every running job at once: it holds one unit (a 64 MiB chunk, or a group
 * of sample extents) of each job, up to one per buffer, and gives its free buffers to the held
 * units in turn. A buffer is filled with exactly the bytes the pass has at its device offsets
 * and submitted; on completion it is accounted and reused (a buffer that holds a pattern at the
 * right phase already is written again as it is: a pattern pass fills each buffer once). So with
 * more devices than threads every device progresses together, and a device with spare capacity
 * gets the buffers the others cannot use. Limits, all checked without a lock:
 *  - a device never has more than its queue depth of I/Os in flight (over all workers);
 *  - a rotational device is held by one worker at a time, so its chunks are written in order;
 *  - a job's and the pool's rate limits (rate.h).
 *
 * A pass of an erase command (zeroout, discard, secure-discard) fills no buffer: a slot carries
 * one command over a whole extent of its unit (up to ERASE_PIECE_MAX). Zeroout goes through the
 * ring as a fallocate(FALLOC_FL_ZERO_RANGE) of the block device, which the kernel turns into the
 * same blkdev_issue_zeroout() as BLKZEROOUT, without blocking the worker. Discard and secure
 * discard have no such asynchronous form on every kernel we support (io_uring's discard command
 * came with Linux 6.12): the worker issues the ioctl itself, so while a drive takes it the
 * worker's other devices wait; a discard is a matter of milliseconds on the flash drives that
 * have one.
 *
 * Units are claimed under the pool lock, once per unit and not per write. A worker looks for
 * new units when the pool's epoch moves (a job was added, a unit was given up) or when one of
 * its units ran out. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <liburing.h>

#include "clock.h"
#include "daemon.h"
#include "worker-private.h"

/* Filled buffers are handed to the kernel in batches of this many, or at once while fewer than
 * SUBMIT_LOW of the worker's I/Os (over all its devices) are with the kernel, so that the devices
 * never idle while the worker fills. */
#define SUBMIT_BATCH 4
#define SUBMIT_LOW 2
/* How long a worker whose units are all at their device's queue depth waits before it looks
 * again (completions of other workers free those places without waking it). */
#define CAPPED_WAIT_NS (2ull * 1000 * 1000)
/* The most one erase command covers: a unit's extent (a 64 MiB chunk) is one command. */
#define ERASE_PIECE_MAX (1u << 30)

static bool worker_holds(const struct worker *w, const struct job *job) {
        for (unsigned i = 0; i < w->n_held; i++)
                if (w->held[i]->u.job == job)
                        return true;
        return false;
}

/* Jobs written by one worker at a time (rotational devices) are shared out evenly, so that the
 * first worker to look does not take them all: how many more this worker may take. Called with
 * the pool lock held. */
static unsigned worker_exclusive_room(const struct worker *w) {
        const struct pool *pool = w->pool;
        unsigned total = 0, mine = 0, share;

        for (size_t i = 0; i < pool->n_active; i++)
                total += pool->active[i]->max_holders == 1;
        for (unsigned i = 0; i < w->n_held; i++)
                mine += w->held[i]->u.job->max_holders == 1;
        share = (total + pool->threads - 1) / pool->threads;
        return share > mine ? share - mine : 0;
}

/* Claim one unit of every running job this worker holds none of (and that has room for another
 * worker), as long as it has room to hold them. Jobs with nothing left to claim (or aborted)
 * leave the active list. Caller holds no lock. */
static void worker_claim(struct worker *w) {
        struct pool *pool = w->pool;
        size_t scanned = 0, i;
        unsigned exclusive;

        w->claim_now = false;
        w->epoch_seen = atomic_load(&pool->epoch);
        pthread_mutex_lock(&pool->lock);
        exclusive = worker_exclusive_room(w);
        i = pool->n_active ? pool->rr % pool->n_active : 0;
        while (pool->n_active > 0 && scanned < pool->n_active && w->n_held < pool->buffers &&
               !atomic_load(&pool->stop)) {
                struct job *job = pool->active[i];
                unsigned run = atomic_load(&job->run);
                struct chunk_work *cw;
                struct job_unit u;

                if (worker_holds(w, job) || atomic_load(&job->holders) >= job->max_holders ||
                    (job->max_holders == 1 && exclusive == 0)) {
                        scanned++;
                        i = (i + 1) % pool->n_active;
                        continue;
                }
                /* Count ourselves in before looking at abort: see job_stop() in job.c. */
                atomic_fetch_add(&job->active_chunks, 1);
                if (!job_claim_unit(job, &u)) {
                        pool->active[i] = pool->active[--pool->n_active];
                        pool_bump_locked(pool);
                        pthread_mutex_unlock(&pool->lock);
                        job_release_chunk(job, NULL, run);
                        pthread_mutex_lock(&pool->lock);
                        if (i >= pool->n_active)
                                i = 0;
                        continue;
                }
                if (u.kind == STAGE_WRITE && pass_op_firmware(u.pass->pass.op)) {
                        /* A firmware erase: its own thread holds the unit (fw-step.c). */
                        int r = fw_step_spawn(job, &u);

                        if (r < 0) {
                                pthread_mutex_unlock(&pool->lock);
                                job_fail(job, r, "%s: cannot start the firmware erase's thread: %s", job->info.node,
                                         strerror(-r));
                                job_release_chunk(job, NULL, u.run);
                                return;
                        }
                        scanned++;
                        i = (i + 1) % pool->n_active;
                        continue;
                }
                cw = malloc(sizeof(*cw));
                if (!cw) {
                        pthread_mutex_unlock(&pool->lock);
                        job_fail(job, -ENOMEM, "%s: out of memory", job->info.node);
                        job_release_chunk(job, NULL, u.run);
                        return;
                }
                *cw = (struct chunk_work) { .u = u, .cursor = u.extents[0].offset, .held = true };
                if (u.extents == &u.one)
                        cw->u.extents = &cw->u.one;     /* point at the copy's own chunk extent */
                atomic_fetch_add(&job->holders, 1);
                exclusive -= job->max_holders == 1;
                w->held[w->n_held++] = cw;
                scanned++;
                i = (i + 1) % pool->n_active;
                pool->rr = i;
        }
        pthread_mutex_unlock(&pool->lock);
}

/* Whether the unit has more to submit; if so its next piece of at most max bytes. */
static bool unit_next_piece(struct chunk_work *cw, uint32_t max, uint64_t *off, uint32_t *len) {
        while (cw->ext < cw->u.n_extents) {
                const struct extent *e = &cw->u.extents[cw->ext];
                uint64_t end = e->offset + e->length;

                if (cw->cursor < end) {
                        *off = cw->cursor;
                        *len = (uint32_t) (end - cw->cursor < max ? end - cw->cursor : max);
                        return true;
                }
                if (++cw->ext < cw->u.n_extents)
                        cw->cursor = cw->u.extents[cw->ext].offset;
        }
        return false;
}

static bool unit_exhausted(struct chunk_work *cw) {
        uint64_t off;
        uint32_t len;

        return !unit_next_piece(cw, 1, &off, &len);
}

/* The most bytes one I/O of the unit carries: an I/O buffer, or a whole extent for an erase
 * command. */
static uint32_t unit_piece_max(const struct chunk_work *cw) {
        if (cw->u.kind == STAGE_WRITE && cw->u.pass->pass.op != PASS_OP_WRITE)
                return ERASE_PIECE_MAX;
        return cw->u.job->piece;
}

/* Give a unit back once nothing of it is in flight and it is no longer held: finished when all
 * of it was submitted and the job was not aborted. Others may then claim its job's next unit. */
static void worker_unit_maybe_release(struct worker *w, struct chunk_work *cw) {
        struct job *job = cw->u.job;
        bool aborted = atomic_load(&job->abort);

        if (cw->pending > 0 || cw->held)
                return;
        job_release_chunk(job, unit_exhausted(cw) && !aborted ? &cw->u : NULL, cw->u.run);
        free(cw);
        pool_bump(w->pool);
}

/* Stop submitting from held[i]: it ran out, its job was aborted, or the pool is stopping. */
static void worker_unhold(struct worker *w, unsigned i) {
        struct chunk_work *cw = w->held[i];

        w->held[i] = w->held[--w->n_held];
        cw->held = false;
        atomic_fetch_sub(&cw->u.job->holders, 1);
        if (cw->pending > 0)
                /* Another worker may take the job's next unit meanwhile. */
                pool_bump(w->pool);
        worker_unit_maybe_release(w, cw);
}

/* Key the worker's keystream for a random pass. 0 or -errno. */
static int worker_key(struct worker *w, const struct job *job, const struct job_pass *p) {
        int r;

        /* By serial, not address: a forgotten job's memory may hold another job's passes. */
        if (w->ks_serial == p->key_serial)
                return 0;
        r = keystream_rekey(w->ks, job->cipher, p->key, p->key_len);
        w->ks_serial = r < 0 ? 0 : p->key_serial;
        return r;
}

static void worker_queue(struct worker *w, struct slot *s) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);
        unsigned idx = (unsigned) (s - w->slots), len = s->len - s->done;
        int fd = s->cw->u.job->fd;
        char *p = (char *) s->buf + s->done;
        uint64_t off = s->offset + s->done;

        /* The ring has room for every slot, so sqe is never NULL. */
        if (!s->read && s->op == PASS_OP_ZEROOUT)
                /* blkdev_fallocate(): blkdev_issue_zeroout() with BLKDEV_ZERO_NOUNMAP, as BLKZEROOUT. */
                io_uring_prep_fallocate(sqe, fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, (off_t) off, (off_t) len);
        else if (s->read && w->fixed)
                io_uring_prep_read_fixed(sqe, fd, p, len, off, (int) idx);
        else if (s->read)
                io_uring_prep_read(sqe, fd, p, len, off);
        else if (w->fixed)
                io_uring_prep_write_fixed(sqe, fd, p, len, off, (int) idx);
        else
                io_uring_prep_write(sqe, fd, p, len, off);
        io_uring_sqe_set_data(sqe, s);
        w->unsubmitted++;
}

static void worker_submit(struct worker *w) {
        int r = io_uring_submit(&w->ring);

        /* What the kernel did not take stays queued for the next submit_and_wait. */
        if (r > 0)
                w->unsubmitted = (unsigned) r >= w->unsubmitted ? 0 : w->unsubmitted - (unsigned) r;
}

/* What a pass has at [off, off+len): the keystream or the pattern, into buf. 0 or -errno. */
int worker_expected(struct worker *w, const struct job_unit *u, void *buf, uint64_t off, uint32_t len) {
        int r;

        if (u->pass->pass.kind == PASS_PATTERN) {
                pattern_fill(&u->pass->pass, buf, off, len);
                return 0;
        }
        r = worker_key(w, u->job, u->pass);
        if (r < 0)
                return r;
        return keystream_fill(w->ks, buf, off, len);
}

/* Whether slot s holds the bytes pattern pass p has at [off, off + len). */
static bool slot_holds(const struct slot *s, const struct pass *p, uint64_t off, uint32_t len) {
        return s->pattern_len == p->pattern_len && s->pattern_len > 0 && s->pattern_bytes >= len &&
               s->pattern_phase == off % p->pattern_len && memcmp(s->pattern, p->pattern, p->pattern_len) == 0;
}

/* Take a free slot (there is one) for an I/O at [off, off + len) of pass p, NULL for a read:
 * for a pattern write, one that holds those bytes already if there is one; else one that holds
 * no pattern, which keeps those for later writes; else the one freed last. */
static struct slot *worker_take_slot(struct worker *w, const struct pass *p, uint64_t off, uint32_t len) {
        unsigned pick = w->n_free - 1, idx;

        if (p && p->kind == PASS_PATTERN) {
                for (unsigned i = w->n_free; i-- > 0;)
                        if (slot_holds(&w->slots[w->free_slots[i]], p, off, len)) {
                                pick = i;
                                goto take;
                        }
        }
        for (unsigned i = w->n_free; i-- > 0;)
                if (w->slots[w->free_slots[i]].pattern_len == 0) {
                        pick = i;
                        break;
                }
take:
        idx = w->free_slots[pick];
        w->free_slots[pick] = w->free_slots[--w->n_free];
        return &w->slots[idx];
}

/* Make slot s hold what unit u's pass writes at [off, off + len): a pattern it holds already
 * stays as it is; else the pattern over the whole buffer (so that later writes at the same phase,
 * of any length, reuse it), or the keystream. 0 or -errno. */
static int worker_prepare_write(struct worker *w, struct slot *s, const struct job_unit *u, uint64_t off,
                                uint32_t len) {
        const struct pass *p = &u->pass->pass;

        if (p->kind != PASS_PATTERN) {
                s->pattern_len = 0;
                return worker_expected(w, u, s->buf, off, len);
        }
        if (slot_holds(s, p, off, len))
                return 0;
        pattern_fill(p, s->buf, off, w->pool->io_size);
        memcpy(s->pattern, p->pattern, p->pattern_len);
        s->pattern_len = p->pattern_len;
        s->pattern_phase = (uint8_t) (off % p->pattern_len);
        s->pattern_bytes = w->pool->io_size;
        return 0;
}

/* Take a place in the device's queue: false when it has queue_depth I/Os in flight already. */
static bool worker_inflight_take(struct job *job) {
        unsigned n = atomic_load_explicit(&job->inflight, memory_order_relaxed);

        do
                if (n >= job->queue_depth)
                        return false;
        while (!atomic_compare_exchange_weak_explicit(&job->inflight, &n, n + 1, memory_order_relaxed,
                                                      memory_order_relaxed));
        return true;
}

/* How far a job got, as a fraction of its work (bytes done, and in flight at full size), scaled
 * to 2^32: the held unit of the job that lags most is served first. */
static uint64_t worker_job_progress(struct job *job) {
        uint64_t total = job->work_total ? job->work_total : 1;
        uint64_t done = atomic_load_explicit(&job->bytes_done, memory_order_relaxed) +
                        (uint64_t) atomic_load_explicit(&job->inflight, memory_order_relaxed) * job->piece;

        return (uint64_t) (((unsigned __int128) done << 32) / total);
}

/* The held unit that may submit a piece now and whose job lags most (ties in turn): *off and
 * *len set, a place in its device's queue and its bytes of the rate limits taken. NULL when none
 * may; then *wait_ns is the time until a rate limit lets one (0 when none is rate-limited). */
static struct chunk_work *worker_pick(struct worker *w, uint64_t *off, uint32_t *len, uint64_t *wait_ns) {
        struct pool *pool = w->pool;
        uint64_t now = 0;

        *wait_ns = 0;
        for (;;) {
                struct chunk_work *best = NULL;
                uint64_t best_progress = UINT64_MAX;
                unsigned best_i = 0;

                for (unsigned k = 0; k < w->n_held;) {
                        unsigned i = (w->rr + k) % w->n_held;
                        struct chunk_work *cw = w->held[i];
                        struct job *job = cw->u.job;
                        uint64_t o, progress;
                        uint32_t l;

                        if (atomic_load(&job->abort) || !unit_next_piece(cw, unit_piece_max(cw), &o, &l)) {
                                /* The job's next unit, if any, is claimed before this worker waits. */
                                w->claim_now = true;
                                worker_unhold(w, i);
                                continue;       /* held[i] is now another unit: look at it */
                        }
                        k++;
                        if (atomic_load_explicit(&job->inflight, memory_order_relaxed) >= job->queue_depth) {
                                /* Other workers' I/O fills its queue: look again soon, whatever a
                                 * rate limit of another unit says. */
                                if (!*wait_ns || *wait_ns > CAPPED_WAIT_NS)
                                        *wait_ns = CAPPED_WAIT_NS;
                                continue;
                        }
                        if (job->rate.bps || pool->rate.bps) {
                                uint64_t wj, wp;

                                if (!now)
                                        now = mono_ns();
                                wj = rate_wait(&job->rate, now);
                                wp = rate_wait(&pool->rate, now);
                                if (wj || wp) {
                                        uint64_t wt = wj > wp ? wj : wp;

                                        if (!*wait_ns || wt < *wait_ns)
                                                *wait_ns = wt;
                                        continue;
                                }
                        }
                        progress = worker_job_progress(job);
                        if (progress < best_progress) {
                                best = cw;
                                best_progress = progress;
                                best_i = i;
                        }
                }
                if (!best)
                        return NULL;
                /* Another worker may have taken the last place in the queue meanwhile: look again. */
                if (!worker_inflight_take(best->u.job))
                        continue;
                unit_next_piece(best, unit_piece_max(best), off, len);
                if (now) {
                        rate_take(&best->u.job->rate, now, *len);
                        rate_take(&pool->rate, now, *len);
                }
                w->rr = best_i + 1;
                return best;
        }
}

static int worker_discard(int fd, enum pass_op op, uint64_t off, uint32_t len);
static void worker_complete(struct worker *w, struct slot *s, int res);

/* Fill free buffers with the next pieces of the held units (claiming units as needed) and queue
 * their I/O: writes carry exactly the pass's bytes for their offsets, reads are compared on
 * completion. Returns the time a rate limit asks to wait, or 0. */
static uint64_t worker_fill(struct worker *w) {
        struct pool *pool = w->pool;
        uint64_t wait_ns = 0;

        while (w->n_free > 0 && !atomic_load(&pool->stop)) {
                struct chunk_work *cw;
                struct slot *s;
                struct job *job;
                uint64_t off = 0;
                uint32_t len = 0;
                enum pass_op op;
                bool read;
                int r;

                if (w->claim_now || atomic_load(&pool->epoch) != w->epoch_seen)
                        worker_claim(w);
                cw = worker_pick(w, &off, &len, &wait_ns);
                if (!cw && w->claim_now) {
                        worker_claim(w);
                        cw = worker_pick(w, &off, &len, &wait_ns);
                }
                if (!cw)
                        break;
                job = cw->u.job;
                read = cw->u.kind == STAGE_VERIFY;
                op = read ? PASS_OP_WRITE : cw->u.pass->pass.op;
                s = worker_take_slot(w, read || op != PASS_OP_WRITE ? NULL : &cw->u.pass->pass, off, len);
                if (read)
                        s->pattern_len = 0;     /* the read overwrites it */
                else if (op == PASS_OP_WRITE) {
                        r = worker_prepare_write(w, s, &cw->u, off, len);
                        if (r < 0) {
                                w->free_slots[w->n_free++] = (unsigned) (s - w->slots);
                                atomic_fetch_sub(&job->inflight, 1);
                                job_fail(job, r, "%s: cannot make the data of pass %u at offset %" PRIu64 ": %s",
                                         job->info.node, cw->u.pass_index + 1, off, strerror(-r));
                                continue;
                        }
                }
                s->cw = cw;
                s->read = read;
                s->op = (uint8_t) op;
                s->offset = off;
                s->len = len;
                s->done = 0;
                cw->cursor = off + len;
                cw->pending++;
                if (op == PASS_OP_DISCARD || op == PASS_OP_SECURE_DISCARD) {
                        w->inflight++;
                        worker_complete(w, s, worker_discard(job->fd, op, off, len));
                        continue;
                }
                worker_queue(w, s);
                w->inflight++;
                /* Start the device at once while it has little to do; else hand over batches. */
                if (w->inflight - w->unsubmitted < SUBMIT_LOW || w->unsubmitted >= SUBMIT_BATCH)
                        worker_submit(w);
        }
        return wait_ns;
}

/* BLKDISCARD or BLKSECDISCARD of [off, off + len) on fd, in the worker: len (all of it done) or
 * -errno. */
static int worker_discard(int fd, enum pass_op op, uint64_t off, uint32_t len) {
        uint64_t range[2] = { off, len };
        int r;

        do
                r = ioctl(fd, op == PASS_OP_SECURE_DISCARD ? BLKSECDISCARD : BLKDISCARD, range);
        while (r < 0 && errno == EINTR);
        return r < 0 ? -errno : (int) len;
}

/* An erase command failed: what the job's failure says. */
static void worker_erase_failed(struct slot *s, int res) {
        struct job *job = s->cw->u.job;
        char name[16];

        if (res == -EOPNOTSUPP)
                job_fail(job, res, "%s: the device does not support %s (%s)", job->info.node,
                         pass_name(&s->cw->u.pass->pass, name, sizeof(name)), pass_op_command(s->op));
        else
                job_fail(job, res, "%s: %s of %" PRIu32 " bytes at offset %" PRIu64 " failed: %s", job->info.node,
                         pass_name(&s->cw->u.pass->pass, name, sizeof(name)), s->len, s->offset, strerror(-res));
}

static void worker_complete(struct worker *w, struct slot *s, int res) {
        struct chunk_work *cw = s->cw;
        struct job *job = cw->u.job;

        if ((res == -EAGAIN || res == -EINTR) && (s->read || s->op == PASS_OP_WRITE || s->op == PASS_OP_ZEROOUT)) {
                worker_queue(w, s);
                return;
        }
        if (!s->read && s->op == PASS_OP_ZEROOUT && res == 0)
                res = (int) s->len;     /* fallocate returns 0 for all of it */
        if (res > 0) {
                atomic_fetch_add(&job->bytes_done, (uint64_t) res);
                if (!s->read)
                        atomic_fetch_add(&job->bytes_written, (uint64_t) res);
                worker_io_ok(job);
        }
        if (res > 0 && (uint32_t) res < s->len - s->done && !atomic_load(&job->abort)) {
                /* Short transfer: resubmit the rest. */
                s->done += (uint32_t) res;
                worker_queue(w, s);
                return;
        }
        atomic_fetch_sub(&job->inflight, 1);
        if (res < 0 && !atomic_load(&job->abort))
                metrics_count_io_error();
        if (res <= 0 && atomic_load(&job->abort))
                /* Stopping (cancel, pause, shutdown): the unit is redone on a resume; an error now
                 * must not turn a pause into a failure. */
                ;
        else if (res < 0 && !s->read && s->op != PASS_OP_WRITE)
                /* An erase command has nothing to rewrite by halves: the job stops here. */
                worker_erase_failed(s, res);
        else if (res < 0 && worker_media_error(res) && job->fd >= 0)
                worker_recover(w, s, res);
        else if (res <= 0)
                job_fail(job, res < 0 ? res : -EIO, "%s: %s of %" PRIu32 " bytes at offset %" PRIu64 " failed: %s",
                         job->info.node, s->read ? "read" : "write", s->len - s->done, s->offset + s->done,
                         res < 0 ? strerror(-res) : "end of device");
        else if (s->read && !atomic_load(&job->abort))
                worker_compare(w, s);

        s->cw = NULL;
        w->free_slots[w->n_free++] = (unsigned) (s - w->slots);
        w->inflight--;
        cw->pending--;
        worker_unit_maybe_release(w, cw);
}

/* Hand the kernel what is queued and wait for at least one completion (or until wait_ns, when a
 * rate limit will let more I/O start then); handle every completion there is. */
static void worker_reap(struct worker *w, uint64_t wait_ns) {
        struct io_uring_cqe *cqe;
        unsigned head, n = 0;
        int r;

        /* A worker never waits on I/O the kernel has not been given. */
        if (wait_ns) {
                struct __kernel_timespec ts = { .tv_sec = (long long) (wait_ns / 1000000000u),
                                                .tv_nsec = (long long) (wait_ns % 1000000000u) };

                r = io_uring_submit_and_wait_timeout(&w->ring, &cqe, 1, &ts, NULL);
                if (r == -ETIME)
                        r = 0;
        } else
                r = io_uring_submit_and_wait(&w->ring, 1);
        if (r >= 0)
                w->unsubmitted = 0;
        else if (r != -EINTR) {
                if (r != -EAGAIN && r != -EBUSY)
                        log_error("worker %u: io_uring: %s", w->index, strerror(-r));
                /* Out of resources for now: let completions drain, then try again. */
                usleep(r == -EAGAIN || r == -EBUSY ? 1000 : 10000);
        }
        io_uring_for_each_cqe(&w->ring, head, cqe) {
                worker_complete(w, io_uring_cqe_get_data(cqe), cqe->res);
                n++;
        }
        io_uring_cq_advance(&w->ring, n);
}

/* Nothing in flight: sleep until the epoch moves, the pool stops, or wait_ns (0: no limit) passed. */
static void worker_idle(struct worker *w, uint64_t wait_ns) {
        struct pool *pool = w->pool;
        struct timespec until;

        if (wait_ns) {
                clock_gettime(CLOCK_MONOTONIC, &until);
                until.tv_sec += (time_t) (wait_ns / 1000000000u);
                until.tv_nsec += (long) (wait_ns % 1000000000u);
                if (until.tv_nsec >= 1000000000) {
                        until.tv_sec++;
                        until.tv_nsec -= 1000000000;
                }
        }
        pthread_mutex_lock(&pool->lock);
        while (!atomic_load(&pool->stop) && atomic_load(&pool->epoch) == w->epoch_seen)
                if (wait_ns ? pthread_cond_timedwait(&pool->cond, &pool->lock, &until) == ETIMEDOUT :
                              pthread_cond_wait(&pool->cond, &pool->lock) != 0)
                        break;
        pthread_mutex_unlock(&pool->lock);
}

void *worker_main(void *arg) {
        struct worker *w = arg;
        struct pool *pool = w->pool;
        char name[16];

        snprintf(name, sizeof(name), "wiped-w%u", w->index);
        pthread_setname_np(pthread_self(), name);
        /* Before the first I/O: io_uring's helper threads for this worker inherit the priority. */
        pool_thread_priority(pool);
        if (w->disabled) {
                /* io_uring_enable_rings() is declared but not exported by liburing 2.3. */
                int r = syscall(__NR_io_uring_register, w->ring.ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0) < 0 ?
                        -errno : 0;

                if (r < 0) {
                        /* Nothing can be submitted: claim nothing, so that others do the work. */
                        log_error("worker %u: cannot enable its io_uring: %s", w->index, strerror(-r));
                        return NULL;
                }
        }

        for (;;) {
                uint64_t wait_ns = worker_fill(w);

                if (w->inflight > 0) {
                        worker_reap(w, wait_ns);
                        continue;
                }
                if (atomic_load(&pool->stop)) {
                        /* Nothing in flight: give back what is held, unfinished. */
                        while (w->n_held > 0)
                                worker_unhold(w, w->n_held - 1);
                        break;
                }
                if (w->claim_now)
                        continue;
                /* Units held but none may submit: wait for a rate limit, or for other workers'
                 * I/O on the same devices to drain. */
                if (w->n_held > 0 && !wait_ns)
                        wait_ns = CAPPED_WAIT_NS;
                worker_idle(w, wait_ns);
        }
        return NULL;
}
