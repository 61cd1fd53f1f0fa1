/* The worker pool: threads that write (and read back) the chunks of every running job with
 * io_uring and O_DIRECT.
 *
 * Each worker owns one io_uring ring, `buffers` registered buffers of io_size bytes and one
 * keystream context (re-keyed when it moves to another job's pass). Device descriptors are not
 * registered with the rings: a registered file stays open until the ring is torn down, which the
 * kernel does asynchronously after a crash, so the device would still look busy (O_EXCL) to a
 * daemon restarted at once; and at 1 MiB per I/O the saving is not measurable.
 *
 * Every worker serves every running job at once: it holds one unit (a 64 MiB chunk, or a group
 * of sample extents) of each job, up to one per buffer, and gives its free buffers to the held
 * units in turn. A buffer is filled with exactly the bytes the pass has at its device offsets
 * and submitted; on completion it is accounted and reused. So with more devices than threads
 * every device progresses together, and a device with spare capacity gets the buffers the
 * others cannot use. Limits, all checked without a lock:
 *  - a device never has more than its queue depth of I/Os in flight (over all workers);
 *  - a rotational device is held by one worker at a time, so its chunks are written in order;
 *  - a job's and the pool's rate limits (rate.h).
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
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <liburing.h>

#include "cleanup.h"
#include "clock.h"
#include "daemon.h"

/* Verification regenerates the expected data in pieces this small, so that it is still in the
 * cache when compared (a whole 1 MiB buffer would be evicted between fill and compare). */
#define WORKER_SCRATCH (64u << 10)
#define WORKER_DEAD_NS (10ull * 1000000000u) /* failing without a success this long... */
#define WORKER_DEAD_FAILURES 16         /* ...and this many I/Os in a row: the device has failed */
/* Filled buffers are handed to the kernel in batches of this many, or at once while fewer than
 * SUBMIT_LOW of the worker's I/Os (over all its devices) are with the kernel, so that the devices
 * never idle while the worker fills. */
#define SUBMIT_BATCH 4
#define SUBMIT_LOW 2
/* How long a worker whose units are all at their device's queue depth waits before it looks
 * again (completions of other workers free those places without waking it). */
#define CAPPED_WAIT_NS (2ull * 1000 * 1000)

/* A unit a worker holds: its extents, how far submission got, and I/O still in flight. */
struct chunk_work {
        struct job_unit u;
        size_t ext;                     /* extent being submitted */
        uint64_t cursor;                /* next device offset to submit in it */
        unsigned pending;               /* I/Os of this unit in flight */
        bool held;                      /* in the worker's held list: more to submit */
};

/* One registered buffer and the I/O it carries. */
struct slot {
        void *buf;
        struct chunk_work *cw;          /* NULL when free */
        bool read;                      /* a verification read, else a write */
        uint64_t offset;                /* device offset of buf[0] */
        uint32_t len;                   /* bytes of this I/O */
        uint32_t done;                  /* bytes already transferred (short transfers) */
};

struct worker {
        struct pool *pool;
        unsigned index;
        pthread_t thread;
        struct io_uring ring;
        bool ring_ok;
        bool fixed;                     /* buffers registered: use read/write_fixed */
        bool disabled;                  /* the ring waits for the worker thread to enable it */
        struct slot *slots;
        unsigned *free_slots;           /* stack of free slot indexes */
        unsigned n_free;
        void *scratch;                  /* WORKER_SCRATCH bytes: expected data of a verification read */
        unsigned inflight;              /* slots with I/O queued or in flight */
        unsigned unsubmitted;           /* of which not yet given to the kernel */
        struct chunk_work **held;       /* units with more to submit, at most pool->buffers */
        unsigned n_held;
        unsigned rr;                    /* round-robin cursor over held */
        bool claim_now;                 /* a unit ran out: look for the next one */
        uint_fast64_t epoch_seen;       /* pool epoch at the last look for units */
        struct keystream *ks;
        uint64_t ks_serial;             /* key_serial of the key ks holds; 0: none */
};

struct pool {
        pthread_mutex_t lock;
        pthread_cond_t cond;            /* broadcast when the epoch moves or on stop */
        struct job **active;            /* jobs with units left to claim */
        size_t n_active, cap_active;
        size_t rr;                      /* where the next look for units starts */
        atomic_uint_fast64_t epoch;     /* moves when there may be new units to claim */
        atomic_bool stop;
        unsigned threads, buffers, queue_depth;
        uint32_t io_size;
        struct rate_limit rate;
        struct worker *workers;
        unsigned started;
};

unsigned pool_threads(struct pool *pool) {
        return pool->threads;
}

unsigned pool_buffers(struct pool *pool) {
        return pool->buffers;
}

unsigned pool_queue_depth(struct pool *pool) {
        return pool->queue_depth;
}

uint32_t pool_io_size(struct pool *pool) {
        return pool ? pool->io_size : (uint32_t) CHUNK_IO_DEFAULT;
}

uint64_t pool_max_rate(struct pool *pool) {
        return pool->rate.bps;
}

uint64_t pool_memory(struct pool *pool) {
        /* Each worker: its I/O buffers and a small scratch buffer for verification. */
        return (uint64_t) pool->threads * ((uint64_t) pool->buffers * pool->io_size + WORKER_SCRATCH);
}

bool pool_registered(struct pool *pool) {
        for (unsigned i = 0; i < pool->started; i++)
                if (!pool->workers[i].fixed)
                        return false;
        return pool->started > 0;
}

struct json_object *pool_json(struct pool *pool) {
        struct json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "threads", json_object_new_int((int) pool->threads));
        json_object_object_add(o, "buffers", json_object_new_int((int) pool->buffers));
        json_object_object_add(o, "io_size", json_object_new_int64(pool->io_size));
        json_object_object_add(o, "queue_depth", json_object_new_int((int) pool->queue_depth));
        json_object_object_add(o, "queue_depth_nonrotational",
                               json_object_new_int((int) (pool->queue_depth ? pool->queue_depth : WIPED_QD_SSD)));
        json_object_object_add(o, "queue_depth_rotational",
                               json_object_new_int((int) (pool->queue_depth ? pool->queue_depth : WIPED_QD_ROTATIONAL)));
        json_object_object_add(o, "max_rate", json_object_new_uint64(pool->rate.bps));
        json_object_object_add(o, "buffer_memory", json_object_new_uint64(pool_memory(pool)));
        json_object_object_add(o, "registered_buffers", json_object_new_boolean(pool_registered(pool)));
        return o;
}

unsigned pool_device_queue_depth(struct pool *pool, const struct device_identity *id) {
        if (pool && pool->queue_depth)
                return pool->queue_depth;
        return id->rotational ? WIPED_QD_ROTATIONAL : WIPED_QD_SSD;
}

void pool_lock(struct pool *pool) {
        pthread_mutex_lock(&pool->lock);
}

void pool_unlock(struct pool *pool) {
        pthread_mutex_unlock(&pool->lock);
}

void pool_locked(struct pool *pool, void (*fn)(struct job *), struct job *job) {
        pthread_mutex_lock(&pool->lock);
        fn(job);
        pthread_mutex_unlock(&pool->lock);
}

/* There may be units to claim: every worker looks again. Called with the pool lock held. */
static void pool_bump_locked(struct pool *pool) {
        atomic_fetch_add(&pool->epoch, 1);
        pthread_cond_broadcast(&pool->cond);
}

static void pool_bump(struct pool *pool) {
        pthread_mutex_lock(&pool->lock);
        pool_bump_locked(pool);
        pthread_mutex_unlock(&pool->lock);
}

void pool_wake(struct pool *pool) {
        pool_bump(pool);
}

void pool_remove_job(struct pool *pool, struct job *job) {
        if (!pool)
                return;
        pthread_mutex_lock(&pool->lock);
        for (size_t i = 0; i < pool->n_active; i++)
                if (pool->active[i] == job) {
                        pool->active[i] = pool->active[--pool->n_active];
                        break;
                }
        pthread_mutex_unlock(&pool->lock);
}

void pool_add_job(struct pool *pool, struct job *job) {
        pthread_mutex_lock(&pool->lock);
        for (size_t i = 0; i < pool->n_active; i++)
                if (pool->active[i] == job) {
                        /* Still listed from its previous stage: it is claimable again as it is. */
                        pool_bump_locked(pool);
                        pthread_mutex_unlock(&pool->lock);
                        return;
                }
        if (pool->n_active == pool->cap_active) {
                size_t cap = pool->cap_active ? pool->cap_active * 2 : 16;
                struct job **a = realloc(pool->active, cap * sizeof(*a));

                if (!a) {
                        pthread_mutex_unlock(&pool->lock);
                        job_fail(job, -ENOMEM, "%s: cannot schedule: out of memory", job->info.node);
                        /* Hold and release a chunk so that the aborted job ends. */
                        atomic_fetch_add(&job->active_chunks, 1);
                        job_release_chunk(job, NULL, atomic_load(&job->run));
                        return;
                }
                pool->active = a;
                pool->cap_active = cap;
        }
        pool->active[pool->n_active++] = job;
        pool_bump_locked(pool);
        pthread_mutex_unlock(&pool->lock);
}

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
                /* Count ourselves in before looking at abort: see job_cancel(). */
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
        if (s->read && w->fixed)
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
static int worker_expected(struct worker *w, const struct job_unit *u, void *buf, uint64_t off, uint32_t len) {
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

/* Take a place in the device's queue: false when it has queue_depth I/Os in flight already. */
static bool job_inflight_take(struct job *job) {
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
static uint64_t job_progress(struct job *job) {
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

                        if (atomic_load(&job->abort) || !unit_next_piece(cw, job->piece, &o, &l)) {
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
                        progress = job_progress(job);
                        if (progress < best_progress) {
                                best = cw;
                                best_progress = progress;
                                best_i = i;
                        }
                }
                if (!best)
                        return NULL;
                /* Another worker may have taken the last place in the queue meanwhile: look again. */
                if (!job_inflight_take(best->u.job))
                        continue;
                unit_next_piece(best, best->u.job->piece, off, len);
                if (now) {
                        rate_take(&best->u.job->rate, now, *len);
                        rate_take(&pool->rate, now, *len);
                }
                w->rr = best_i + 1;
                return best;
        }
}

/* Fill free buffers with the next pieces of the held units (claiming units as needed) and queue
 * their I/O: writes carry exactly the pass's bytes for their offsets, reads are compared on
 * completion. Returns the time a rate limit asks to wait, or 0. */
static uint64_t worker_fill(struct worker *w) {
        struct pool *pool = w->pool;
        uint64_t wait_ns = 0;

        while (w->n_free > 0 && !atomic_load(&pool->stop)) {
                struct slot *s = &w->slots[w->free_slots[w->n_free - 1]];
                struct chunk_work *cw;
                struct job *job;
                uint64_t off = 0;
                uint32_t len = 0;
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
                if (cw->u.kind == STAGE_WRITE) {
                        r = worker_expected(w, &cw->u, s->buf, off, len);
                        if (r < 0) {
                                atomic_fetch_sub(&job->inflight, 1);
                                job_fail(job, r, "%s: cannot make the data of pass %u at offset %" PRIu64 ": %s",
                                         job->info.node, cw->u.pass_index + 1, off, strerror(-r));
                                continue;
                        }
                }
                w->n_free--;
                *s = (struct slot) { .buf = s->buf, .cw = cw, .read = cw->u.kind == STAGE_VERIFY, .offset = off, .len = len };
                cw->cursor = off + len;
                cw->pending++;
                worker_queue(w, s);
                w->inflight++;
                /* Start the device at once while it has little to do; else hand over batches. */
                if (w->inflight - w->unsubmitted < SUBMIT_LOW || w->unsubmitted >= SUBMIT_BATCH)
                        worker_submit(w);
        }
        return wait_ns;
}

/* Whether got[0..len) is what the pass has at offset off. For random passes the expected bytes
 * are regenerated piecewise into the scratch buffer. Returns 1 when equal, 0 when not, -errno. */
static int worker_same(struct worker *w, const struct job_unit *u, const uint8_t *got, uint64_t off, uint32_t len) {
        if (u->pass->pass.kind == PASS_PATTERN)
                return pattern_check(&u->pass->pass, got, off, len);
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
static void worker_compare(struct worker *w, struct slot *s) {
        worker_compare_range(w, &s->cw->u, s->buf, s->offset, s->len);
}

/* Errors of the medium (a bad sector), as opposed to a device gone, full or refusing. */
static bool media_error(int e) {
        return e == -EIO || e == -ENODATA || e == -EILSEQ || e == -EBADMSG;
}

/* A success of the job's device ends a streak of failures. */
static void job_io_ok(struct job *job) {
        if (atomic_load_explicit(&job->fail_streak, memory_order_relaxed))
                atomic_store(&job->fail_streak, 0);
        atomic_store_explicit(&job->last_ok_ns, mono_ns(), memory_order_relaxed);
}

/* A failure: 0, or -EIO when the failures since the last success make the device dead (then the
 * job is failed here). One bad sector never does: halving it alternates failures and successes. */
static int job_io_failed(struct job *job, int r, uint64_t off) {
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
        if (n < 0)
                return -errno;
        return (uint32_t) n == len ? 0 : -EIO;
}

/* [off, off + len) of a slot was transferred whole. */
static void recover_good(struct worker *w, struct slot *s, const uint8_t *buf, uint64_t off, uint32_t len) {
        struct job *job = s->cw->u.job;

        job_io_ok(job);
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
                if (!media_error(r)) {
                        job_fail(job, r, "%s: %s of %" PRIu32 " bytes at offset %" PRIu64 " failed: %s", job->info.node,
                                 s->read ? "read" : "write", len, off, strerror(-r));
                        return r;
                }
                if (job_io_failed(job, r, off) < 0)
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
static void worker_recover(struct worker *w, struct slot *s, int res) {
        struct job *job = s->cw->u.job;
        uint32_t len = s->len - s->done;
        uint64_t off = s->offset + s->done;
        uint8_t *buf = (uint8_t *) s->buf + s->done;
        int r;

        log_debug("job %" PRIu64 ": %s: %s of %" PRIu32 " bytes at offset %" PRIu64 " failed (%s): retrying",
                  job->id, job->info.node, s->read ? "read" : "write", len, off, strerror(-res));
        /* What a short transfer brought in before the error is compared too. */
        if (s->read && s->done > 0)
                worker_compare_range(w, &s->cw->u, s->buf, s->offset, s->done);
        if (job_io_failed(job, res, off) == 0) {
                r = recover_io(job->fd, s->read, buf, len, off);
                if (r == 0)
                        recover_good(w, s, buf, off, len);
                else if (!media_error(r))
                        job_fail(job, r, "%s: %s of %" PRIu32 " bytes at offset %" PRIu64 " failed: %s", job->info.node,
                                 s->read ? "read" : "write", len, off, strerror(-r));
                else if (job_io_failed(job, r, off) == 0)
                        (void) worker_recover_range(w, s, buf, off, len, true);
        }
        /* The range is dealt with: counted as done, bad sectors and all. */
        atomic_fetch_add(&job->bytes_done, len);
}

static void worker_complete(struct worker *w, struct slot *s, int res) {
        struct chunk_work *cw = s->cw;
        struct job *job = cw->u.job;

        if (res == -EAGAIN || res == -EINTR) {
                worker_queue(w, s);
                return;
        }
        if (res > 0) {
                atomic_fetch_add(&job->bytes_done, (uint64_t) res);
                if (!s->read)
                        atomic_fetch_add(&job->bytes_written, (uint64_t) res);
                job_io_ok(job);
        }
        if (res > 0 && (uint32_t) res < s->len - s->done && !atomic_load(&job->abort)) {
                /* Short transfer: resubmit the rest. */
                s->done += (uint32_t) res;
                worker_queue(w, s);
                return;
        }
        atomic_fetch_sub(&job->inflight, 1);
        if (res <= 0 && atomic_load(&job->abort))
                /* Stopping (cancel, pause, shutdown): the unit is redone on a resume; an error now
                 * must not turn a pause into a failure. */
                ;
        else if (res < 0 && media_error(res) && job->fd >= 0)
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

static void *worker_main(void *arg) {
        struct worker *w = arg;
        struct pool *pool = w->pool;
        char name[16];

        snprintf(name, sizeof(name), "wiped-w%u", w->index);
        pthread_setname_np(pthread_self(), name);
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

static void worker_done(struct worker *w) {
        if (w->ring_ok)
                io_uring_queue_exit(&w->ring);
        if (w->slots)
                for (unsigned i = 0; i < w->pool->buffers; i++)
                        if (w->slots[i].buf)
                                munmap(w->slots[i].buf, w->pool->io_size);
        free(w->slots);
        free(w->free_slots);
        free(w->held);
        free(w->scratch);
        keystream_free(w->ks);
}

static int worker_init(struct worker *w, struct pool *pool, unsigned index) {
        _cleanup_free_ struct iovec *iov = NULL;
        uint8_t zero_key[KEYSTREAM_KEY_MAX] = {};
        unsigned n = pool->buffers;
        int r;

        w->pool = pool;
        w->index = index;
        w->slots = calloc(n, sizeof(*w->slots));
        w->free_slots = calloc(n, sizeof(*w->free_slots));
        w->held = calloc(n, sizeof(*w->held));
        iov = calloc(n, sizeof(*iov));
        w->scratch = aligned_alloc(4096, WORKER_SCRATCH);
        if (!w->slots || !w->free_slots || !w->held || !iov || !w->scratch)
                return -ENOMEM;
        for (unsigned i = 0; i < n; i++) {
                /* Page-aligned, so aligned for any logical sector size. */
                void *p = mmap(NULL, pool->io_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

                if (p == MAP_FAILED)
                        return -errno;
                w->slots[i].buf = p;
                iov[i] = (struct iovec) { .iov_base = p, .iov_len = pool->io_size };
                w->free_slots[w->n_free++] = n - 1 - i;
        }
        r = keystream_new(&w->ks, KEYSTREAM_AES_128_CTR, zero_key, keystream_key_size(KEYSTREAM_AES_128_CTR));
        if (r < 0)
                return r;
        /* Room for every slot's SQE, so that io_uring_get_sqe() never fails. Completions are
         * reaped only when the worker waits for them (no interrupting task work while it fills
         * buffers); the ring starts disabled so that the worker thread, its only submitter,
         * enables it. Older kernels: cooperative task work, or none of this. */
        r = io_uring_queue_init(n, &w->ring, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
                                IORING_SETUP_R_DISABLED);
        if (r == 0)
                w->disabled = true;
        else if (r == -EINVAL)
                r = io_uring_queue_init(n, &w->ring, IORING_SETUP_COOP_TASKRUN);
        if (r == -EINVAL)
                r = io_uring_queue_init(n, &w->ring, 0);
        if (r < 0)
                return r;
        w->ring_ok = true;
        r = io_uring_register_buffers(&w->ring, iov, n);
        if (r == 0)
                w->fixed = true;
        else if (index == 0)
                log_warning("cannot register I/O buffers (%s): using unregistered buffers; raise LimitMEMLOCK "
                            "(or lower --buffers or --io-size)", strerror(-r));
        return 0;
}

int pool_new(struct pool **ret, const struct pool_config *cfg) {
        struct pool *pool;
        struct rlimit rl;
        int r;

        if (cfg->threads == 0 || cfg->threads > WIPED_THREADS_MAX || cfg->buffers == 0 ||
            cfg->buffers > WIPED_BUFFERS_MAX || cfg->queue_depth > WIPED_QD_MAX || cfg->io_size == 0 ||
            cfg->io_size % 4096 != 0)
                return -EINVAL;

        /* Registered buffers are pinned memory: lift RLIMIT_MEMLOCK to what they need if we can. */
        if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
                rlim_t need = (rlim_t) cfg->threads * cfg->buffers * cfg->io_size + (1 << 20);

                if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
                        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need ? need : rl.rlim_max;
                        if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
                                rl.rlim_max = rl.rlim_cur = need;
                        (void) setrlimit(RLIMIT_MEMLOCK, &rl); /* fails without CAP_SYS_RESOURCE: fine */
                }
        }

        pool = calloc(1, sizeof(*pool));
        if (!pool)
                return -ENOMEM;
        pthread_mutex_init(&pool->lock, NULL);
        {
                pthread_condattr_t ca;

                /* worker_idle() waits with CLOCK_MONOTONIC deadlines. */
                pthread_condattr_init(&ca);
                pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
                pthread_cond_init(&pool->cond, &ca);
                pthread_condattr_destroy(&ca);
        }
        pool->threads = cfg->threads;
        pool->buffers = cfg->buffers;
        pool->queue_depth = cfg->queue_depth;
        pool->io_size = cfg->io_size;
        rate_init(&pool->rate, cfg->max_rate);
        pool->workers = calloc(cfg->threads, sizeof(*pool->workers));
        if (!pool->workers) {
                pool_free(pool);
                return -ENOMEM;
        }
        for (unsigned i = 0; i < cfg->threads; i++) {
                r = worker_init(&pool->workers[i], pool, i);
                if (r < 0) {
                        log_error("worker %u: cannot set up: %s", i, strerror(-r));
                        worker_done(&pool->workers[i]);
                        pool_free(pool);
                        return r;
                }
                r = -pthread_create(&pool->workers[i].thread, NULL, worker_main, &pool->workers[i]);
                if (r < 0) {
                        log_error("worker %u: cannot start: %s", i, strerror(-r));
                        worker_done(&pool->workers[i]);
                        pool_free(pool);
                        return r;
                }
                pool->started++;
        }
        *ret = pool;
        return 0;
}

void pool_free(struct pool *pool) {
        if (!pool)
                return;
        pthread_mutex_lock(&pool->lock);
        atomic_store(&pool->stop, true);
        pthread_cond_broadcast(&pool->cond);
        pthread_mutex_unlock(&pool->lock);
        /* Each worker reaps what it has in flight and gives back what it holds before it leaves. */
        for (unsigned i = 0; i < pool->started; i++) {
                pthread_join(pool->workers[i].thread, NULL);
                worker_done(&pool->workers[i]);
        }
        free(pool->workers);
        free(pool->active);
        pthread_cond_destroy(&pool->cond);
        pthread_mutex_destroy(&pool->lock);
        free(pool);
}
