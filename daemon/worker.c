/* The worker pool: threads that claim chunks of running jobs and write their keystream with
 * io_uring and O_DIRECT.
 *
 * Each worker owns one io_uring ring, queue_depth registered buffers of io_size bytes and one
 * keystream context (re-keyed when it moves to another job's chunk). It keeps up to queue_depth
 * writes in flight: fill a free buffer with the keystream for exactly its device offsets, submit
 * it with write_fixed, and on completion account it and reuse the buffer. Chunks are claimed in
 * ascending order from the running jobs in turn, under the pool lock (one lock per chunk, none
 * per write). A worker moves on to its next chunk while the previous one drains, so the device
 * never waits at chunk boundaries. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include <liburing.h>

#include "daemon.h"

/* Verification regenerates the expected data in pieces this small, so that it is still in the
 * cache when compared (a whole 1 MiB buffer would be evicted between fill and compare). */
#define WORKER_SCRATCH (64u << 10)

/* A unit a worker holds: its extents, how far submission got, and I/O still in flight. */
struct chunk_work {
        struct job_unit u;
        size_t ext;                     /* extent being submitted */
        uint64_t cursor;                /* next device offset to submit in it */
        unsigned pending;               /* I/Os of this unit in flight */
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
        struct slot *slots;
        void *scratch;                  /* WORKER_SCRATCH bytes: expected data of a verification read */
        unsigned inflight;
        struct chunk_work *current;     /* unit being submitted, NULL when none */
        struct keystream *ks;
        const struct job_pass *ks_pass; /* pass whose key ks holds */
};

struct pool {
        pthread_mutex_t lock;
        pthread_cond_t cond;            /* signalled when jobs are added or on stop */
        struct job **active;            /* jobs with chunks left to claim */
        size_t n_active, cap_active;
        size_t rr;                      /* round-robin cursor over active */
        atomic_bool stop;
        unsigned threads, queue_depth;
        uint32_t io_size;
        struct worker *workers;
        unsigned started;
};

unsigned pool_threads(struct pool *pool) {
        return pool->threads;
}

unsigned pool_queue_depth(struct pool *pool) {
        return pool->queue_depth;
}

uint32_t pool_io_size(struct pool *pool) {
        return pool->io_size;
}

uint64_t pool_memory(struct pool *pool) {
        /* Each worker: queue_depth I/O buffers and a small scratch buffer for verification. */
        return (uint64_t) pool->threads * ((uint64_t) pool->queue_depth * pool->io_size + WORKER_SCRATCH);
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

void pool_add_job(struct pool *pool, struct job *job) {
        pthread_mutex_lock(&pool->lock);
        for (size_t i = 0; i < pool->n_active; i++)
                if (pool->active[i] == job) {
                        /* Still listed from its previous stage: it is claimable again as it is. */
                        pthread_cond_broadcast(&pool->cond);
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
                        job_release_chunk(job, false, atomic_load(&job->run));
                        return;
                }
                pool->active = a;
                pool->cap_active = cap;
        }
        pool->active[pool->n_active++] = job;
        pthread_cond_broadcast(&pool->cond);
        pthread_mutex_unlock(&pool->lock);
}

/* Claim the next unit of some running job, round-robin over the jobs. Jobs with nothing left to
 * claim (or aborted) leave the active list. Returns a new chunk_work or NULL. Caller holds no lock. */
static struct chunk_work *pool_claim(struct pool *pool) {
        struct chunk_work *cw = NULL;

        pthread_mutex_lock(&pool->lock);
        while (pool->n_active > 0 && !atomic_load(&pool->stop)) {
                size_t i = pool->rr % pool->n_active;
                struct job *job = pool->active[i];
                unsigned run = atomic_load(&job->run);
                struct job_unit u;

                /* Count ourselves in before looking at abort: see job_cancel(). */
                atomic_fetch_add(&job->active_chunks, 1);
                if (!job_claim_unit(job, &u)) {
                        pool->active[i] = pool->active[--pool->n_active];
                        pthread_mutex_unlock(&pool->lock);
                        job_release_chunk(job, false, run);
                        pthread_mutex_lock(&pool->lock);
                        continue;
                }
                pool->rr = i + 1;
                cw = malloc(sizeof(*cw));
                if (!cw) {
                        pthread_mutex_unlock(&pool->lock);
                        job_fail(job, -ENOMEM, "%s: out of memory", job->info.node);
                        job_release_chunk(job, false, u.run);
                        return NULL;
                }
                *cw = (struct chunk_work) { .u = u, .cursor = u.extents[0].offset };
                if (u.extents == &u.one)
                        cw->u.extents = &cw->u.one;     /* point at the copy's own chunk extent */
                break;
        }
        pthread_mutex_unlock(&pool->lock);
        return cw;
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

/* Release a unit when nothing of it is in flight and nothing more will be submitted. */
static void worker_chunk_maybe_release(struct worker *w, struct chunk_work *cw) {
        bool aborted = atomic_load(&cw->u.job->abort);

        if (cw->pending > 0 || (!unit_exhausted(cw) && !aborted) || cw == w->current)
                return;
        job_release_chunk(cw->u.job, unit_exhausted(cw) && !aborted, cw->u.run);
        free(cw);
}

/* Key the worker's keystream for a random pass. 0 or -errno. */
static int worker_key(struct worker *w, const struct job *job, const struct job_pass *p) {
        int r;

        if (w->ks_pass == p)
                return 0;
        r = keystream_rekey(w->ks, job->cipher, p->key, p->key_len);
        w->ks_pass = r < 0 ? NULL : p;
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

/* Fill free slots with the next pieces of the current unit (claiming units as needed) and queue
 * their I/O: writes carry exactly the pass's bytes for their offsets, reads are compared on
 * completion. Returns the number queued. */
static unsigned worker_fill(struct worker *w) {
        struct pool *pool = w->pool;
        unsigned queued = 0;

        for (unsigned i = 0; i < pool->queue_depth && !atomic_load(&pool->stop); i++) {
                struct slot *s = &w->slots[i];
                struct chunk_work *cw;
                struct job *job;
                uint64_t off = 0;
                uint32_t len = 0;
                int r;

                if (s->cw)
                        continue;
                while (!w->current || atomic_load(&w->current->u.job->abort) ||
                       !unit_next_piece(w->current, w->current->u.job->piece, &off, &len)) {
                        if (w->current) {
                                cw = w->current;
                                w->current = NULL;
                                worker_chunk_maybe_release(w, cw);
                        }
                        w->current = pool_claim(pool);
                        if (!w->current)
                                return queued;
                }
                cw = w->current;
                job = cw->u.job;
                if (cw->u.kind == STAGE_WRITE) {
                        r = worker_expected(w, &cw->u, s->buf, off, len);
                        if (r < 0) {
                                job_fail(job, r, "%s: cannot make the data of pass %u at offset %" PRIu64 ": %s",
                                         job->info.node, cw->u.pass_index + 1, off, strerror(-r));
                                continue;
                        }
                }
                *s = (struct slot) { .buf = s->buf, .cw = cw, .read = cw->u.kind == STAGE_VERIFY, .offset = off, .len = len };
                cw->cursor = off + len;
                cw->pending++;
                worker_queue(w, s);
                queued++;
                w->inflight++;
                /* Start the device on this I/O while the next buffer is filled. */
                io_uring_submit(&w->ring);
        }
        return queued;
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

/* A verification read of a whole slot is in: compare it with what the pass wrote, and report
 * every logical sector that differs. */
static void worker_compare(struct worker *w, struct slot *s) {
        const struct job_unit *u = &s->cw->u;
        struct job *job = u->job;
        uint32_t sector = job->info.logical_sector;
        const uint8_t *got = s->buf;
        int r = worker_same(w, u, got, s->offset, s->len);

        for (uint32_t o = 0; r == 0 && o < s->len; o += sector) {
                int same = worker_same(w, u, got + o, s->offset + o, sector);

                if (same < 0) {
                        r = same;
                        break;
                }
                if (!same)
                        job_verify_mismatch(job, s->offset + o);
        }
        if (r < 0)
                job_fail(job, r, "%s: cannot regenerate pass %u at offset %" PRIu64 ": %s", job->info.node,
                         u->pass_index + 1, s->offset, strerror(-r));
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
        }
        if (res > 0 && (uint32_t) res < s->len - s->done && !atomic_load(&job->abort)) {
                /* Short transfer: resubmit the rest. */
                s->done += (uint32_t) res;
                worker_queue(w, s);
                return;
        }
        if (res <= 0)
                job_fail(job, res < 0 ? res : -EIO, "%s: %s of %" PRIu32 " bytes at offset %" PRIu64 " failed: %s",
                         job->info.node, s->read ? "read" : "write", s->len - s->done, s->offset + s->done,
                         res < 0 ? strerror(-res) : "end of device");
        else if (s->read && !atomic_load(&job->abort))
                worker_compare(w, s);

        s->cw = NULL;
        w->inflight--;
        cw->pending--;
        worker_chunk_maybe_release(w, cw);
}

/* Wait for at least one completion and handle all that are there. */
static void worker_reap(struct worker *w) {
        struct io_uring_cqe *cqe;
        unsigned head, n = 0;
        int r;

        /* Submits whatever is still queued (a submit that failed earlier, resubmissions) and waits
         * for a completion: a worker never waits on I/O the kernel has not been given. */
        r = io_uring_submit_and_wait(&w->ring, 1);
        if (r < 0 && r != -EINTR) {
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

static bool pool_has_work(struct pool *pool) {
        return pool->n_active > 0;
}

static void *worker_main(void *arg) {
        struct worker *w = arg;
        struct pool *pool = w->pool;
        char name[16];

        snprintf(name, sizeof(name), "wiped-w%u", w->index);
        pthread_setname_np(pthread_self(), name);

        for (;;) {
                worker_fill(w);
                if (w->inflight > 0) {
                        worker_reap(w);
                        continue;
                }
                if (w->current) {
                        /* Nothing in flight and nothing submitted: the unit was aborted, or the
                         * pool is stopping; either way it is given back unfinished. */
                        struct chunk_work *cw = w->current;

                        w->current = NULL;
                        if (atomic_load(&pool->stop) && !atomic_load(&cw->u.job->abort)) {
                                job_release_chunk(cw->u.job, false, cw->u.run);
                                free(cw);
                        } else
                                worker_chunk_maybe_release(w, cw);
                        continue;
                }
                pthread_mutex_lock(&pool->lock);
                while (!atomic_load(&pool->stop) && !pool_has_work(pool))
                        pthread_cond_wait(&pool->cond, &pool->lock);
                pthread_mutex_unlock(&pool->lock);
                if (atomic_load(&pool->stop))
                        break;
        }
        return NULL;
}

static void worker_done(struct worker *w) {
        if (w->ring_ok)
                io_uring_queue_exit(&w->ring);
        if (w->slots)
                for (unsigned i = 0; i < w->pool->queue_depth; i++)
                        if (w->slots[i].buf)
                                munmap(w->slots[i].buf, w->pool->io_size);
        free(w->slots);
        free(w->scratch);
        keystream_free(w->ks);
}

static int worker_init(struct worker *w, struct pool *pool, unsigned index) {
        struct iovec *iov;
        uint8_t zero_key[KEYSTREAM_KEY_MAX] = {};
        int r;

        w->pool = pool;
        w->index = index;
        w->slots = calloc(pool->queue_depth, sizeof(*w->slots));
        iov = calloc(pool->queue_depth, sizeof(*iov));
        if (!w->slots || !iov) {
                free(iov);
                return -ENOMEM;
        }
        for (unsigned i = 0; i < pool->queue_depth; i++) {
                /* Page-aligned, so aligned for any logical sector size. */
                void *p = mmap(NULL, pool->io_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

                if (p == MAP_FAILED) {
                        free(iov);
                        return -errno;
                }
                w->slots[i].buf = p;
                iov[i] = (struct iovec) { .iov_base = p, .iov_len = pool->io_size };
        }
        w->scratch = aligned_alloc(4096, WORKER_SCRATCH);
        if (!w->scratch) {
                free(iov);
                return -ENOMEM;
        }
        r = keystream_new(&w->ks, KEYSTREAM_AES_128_CTR, zero_key, keystream_key_size(KEYSTREAM_AES_128_CTR));
        if (r < 0) {
                free(iov);
                return r;
        }
        r = io_uring_queue_init(pool->queue_depth * 2, &w->ring, 0);
        if (r < 0) {
                free(iov);
                return r;
        }
        w->ring_ok = true;
        r = io_uring_register_buffers(&w->ring, iov, pool->queue_depth);
        free(iov);
        if (r == 0)
                w->fixed = true;
        else if (index == 0)
                log_warning("cannot register I/O buffers (%s): using unregistered buffers; raise LimitMEMLOCK",
                            strerror(-r));
        return 0;
}

int pool_new(struct pool **ret, unsigned threads, unsigned queue_depth, uint32_t io_size) {
        struct pool *pool;
        struct rlimit rl;
        int r;

        if (threads == 0 || threads > WIPED_THREADS_MAX || queue_depth == 0 || queue_depth > 256 ||
            io_size == 0 || io_size % 4096 != 0)
                return -EINVAL;

        /* Registered buffers are pinned memory: lift RLIMIT_MEMLOCK to what they need if we can. */
        if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
                rlim_t need = (rlim_t) threads * queue_depth * io_size + (1 << 20);

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
        pthread_cond_init(&pool->cond, NULL);
        pool->threads = threads;
        pool->queue_depth = queue_depth;
        pool->io_size = io_size;
        pool->workers = calloc(threads, sizeof(*pool->workers));
        if (!pool->workers) {
                pool_free(pool);
                return -ENOMEM;
        }
        for (unsigned i = 0; i < threads; i++) {
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
        for (unsigned i = 0; i < pool->started; i++) {
                pthread_join(pool->workers[i].thread, NULL);
                /* In-flight writes were reaped before the thread left; chunks still held are
                 * released unfinished so that their jobs can end. */
                if (pool->workers[i].current) {
                        struct chunk_work *cw = pool->workers[i].current;

                        pool->workers[i].current = NULL;
                        job_release_chunk(cw->u.job, false, cw->u.run);
                        free(cw);
                }
                worker_done(&pool->workers[i]);
        }
        free(pool->workers);
        free(pool->active);
        pthread_cond_destroy(&pool->cond);
        pthread_mutex_destroy(&pool->lock);
        free(pool);
}
