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
#include <liburing.h>

#include "daemon.h"

/* A chunk a worker holds: its range, how far submission got, and writes still in flight. */
struct chunk_work {
        struct job *job;
        uint64_t index;
        uint64_t cursor;                /* next device offset to submit */
        uint64_t end;                   /* end of the chunk's range */
        unsigned pending;               /* writes of this chunk in flight */
};

/* One registered buffer and the write it carries. */
struct slot {
        void *buf;
        struct chunk_work *cw;          /* NULL when free */
        uint64_t offset;                /* device offset of buf[0] */
        uint32_t len;                   /* bytes of this write */
        uint32_t done;                  /* bytes already written (short writes) */
};

struct worker {
        struct pool *pool;
        unsigned index;
        pthread_t thread;
        struct io_uring ring;
        bool ring_ok;
        bool fixed;                     /* buffers registered: use write_fixed */
        struct slot *slots;
        unsigned inflight;
        struct chunk_work *current;     /* chunk being submitted, NULL when none */
        struct keystream *ks;
        const struct job *ks_job;       /* job whose key ks holds */
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

uint32_t pool_io_size(struct pool *pool) {
        return pool->io_size;
}

uint64_t pool_memory(struct pool *pool) {
        return (uint64_t) pool->threads * pool->queue_depth * pool->io_size;
}

void pool_add_job(struct pool *pool, struct job *job) {
        pthread_mutex_lock(&pool->lock);
        if (pool->n_active == pool->cap_active) {
                size_t cap = pool->cap_active ? pool->cap_active * 2 : 16;
                struct job **a = realloc(pool->active, cap * sizeof(*a));

                if (!a) {
                        pthread_mutex_unlock(&pool->lock);
                        job_fail(job, -ENOMEM, "%s: cannot schedule: out of memory", job->info.node);
                        /* Hold and release a chunk so that the aborted job ends. */
                        atomic_fetch_add(&job->active_chunks, 1);
                        job_release_chunk(job, false);
                        return;
                }
                pool->active = a;
                pool->cap_active = cap;
        }
        pool->active[pool->n_active++] = job;
        pthread_cond_broadcast(&pool->cond);
        pthread_mutex_unlock(&pool->lock);
}

/* Claim the next chunk of some running job, round-robin over the jobs. Jobs with nothing left to
 * claim (or aborted) leave the active list. Returns a new chunk_work or NULL. Caller holds no lock. */
static struct chunk_work *pool_claim(struct pool *pool) {
        struct chunk_work *cw = NULL;

        pthread_mutex_lock(&pool->lock);
        while (pool->n_active > 0 && !atomic_load(&pool->stop)) {
                size_t i = pool->rr % pool->n_active;
                struct job *job = pool->active[i];
                uint64_t c, off, len;

                /* Count ourselves in before looking at abort: see job_cancel(). */
                atomic_fetch_add(&job->active_chunks, 1);
                c = atomic_load(&job->abort) ? job->plan.n_chunks : atomic_fetch_add(&job->next_chunk, 1);
                if (c >= job->plan.n_chunks) {
                        pool->active[i] = pool->active[--pool->n_active];
                        pthread_mutex_unlock(&pool->lock);
                        job_release_chunk(job, false);
                        pthread_mutex_lock(&pool->lock);
                        continue;
                }
                pool->rr = i + 1;
                cw = malloc(sizeof(*cw));
                if (!cw) {
                        pthread_mutex_unlock(&pool->lock);
                        job_fail(job, -ENOMEM, "%s: out of memory", job->info.node);
                        job_release_chunk(job, false);
                        return NULL;
                }
                chunk_range(&job->plan, c, &off, &len);
                *cw = (struct chunk_work) { .job = job, .index = c, .cursor = off, .end = off + len };
                break;
        }
        pthread_mutex_unlock(&pool->lock);
        return cw;
}

/* Release a chunk when nothing of it is in flight and nothing more will be submitted. */
static void worker_chunk_maybe_release(struct worker *w, struct chunk_work *cw) {
        bool aborted = atomic_load(&cw->job->abort);

        if (cw->pending > 0 || (cw->cursor < cw->end && !aborted) || cw == w->current)
                return;
        job_release_chunk(cw->job, cw->cursor >= cw->end && !aborted);
        free(cw);
}

static void worker_queue(struct worker *w, struct slot *s) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);
        unsigned idx = (unsigned) (s - w->slots);
        char *p = (char *) s->buf + s->done;

        /* The ring has room for every slot, so sqe is never NULL. */
        if (w->fixed)
                io_uring_prep_write_fixed(sqe, s->cw->job->fd, p, s->len - s->done, s->offset + s->done, (int) idx);
        else
                io_uring_prep_write(sqe, s->cw->job->fd, p, s->len - s->done, s->offset + s->done);
        io_uring_sqe_set_data(sqe, s);
}

/* Fill free slots with the next pieces of the current chunk (claiming chunks as needed) and
 * queue their writes. Returns the number queued. */
static unsigned worker_fill(struct worker *w) {
        struct pool *pool = w->pool;
        unsigned queued = 0;

        for (unsigned i = 0; i < pool->queue_depth && !atomic_load(&pool->stop); i++) {
                struct slot *s = &w->slots[i];
                struct chunk_work *cw;
                struct job *job;
                uint64_t len;
                int r;

                if (s->cw)
                        continue;
                while (!w->current || w->current->cursor >= w->current->end || atomic_load(&w->current->job->abort)) {
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
                job = cw->job;
                if (w->ks_job != job) {
                        r = keystream_rekey(w->ks, job->cipher, job->key, job->key_len);
                        if (r < 0) {
                                job_fail(job, r, "%s: cannot set up the keystream: %s", job->info.node, strerror(-r));
                                continue;
                        }
                        w->ks_job = job;
                }
                len = cw->end - cw->cursor;
                if (len > pool->io_size)
                        len = pool->io_size;
                r = keystream_fill(w->ks, s->buf, cw->cursor, len);
                if (r < 0) {
                        job_fail(job, r, "%s: keystream failed at offset %" PRIu64, job->info.node, cw->cursor);
                        continue;
                }
                *s = (struct slot) { .buf = s->buf, .cw = cw, .offset = cw->cursor, .len = (uint32_t) len };
                cw->cursor += len;
                cw->pending++;
                worker_queue(w, s);
                queued++;
                w->inflight++;
                /* Start the device on this write while the next buffer is filled. */
                io_uring_submit(&w->ring);
        }
        return queued;
}

static void worker_complete(struct worker *w, struct slot *s, int res) {
        struct chunk_work *cw = s->cw;
        struct job *job = cw->job;

        if (res == -EAGAIN || res == -EINTR) {
                worker_queue(w, s);
                return;
        }
        if (res > 0 && (uint32_t) res < s->len - s->done && !atomic_load(&job->abort)) {
                /* Short write: resubmit the rest. */
                s->done += (uint32_t) res;
                atomic_fetch_add(&job->bytes_done, (uint64_t) res);
                worker_queue(w, s);
                return;
        }
        if (res < 0 || res == 0)
                job_fail(job, res < 0 ? res : -EIO, "%s: write of %" PRIu32 " bytes at offset %" PRIu64 " failed: %s",
                         job->info.node, s->len - s->done, s->offset + s->done,
                         res < 0 ? strerror(-res) : "no progress");
        else
                atomic_fetch_add(&job->bytes_done, (uint64_t) res);

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

        r = io_uring_wait_cqe(&w->ring, &cqe);
        if (r < 0 && r != -EINTR) {
                log_error("worker %u: waiting for completions failed: %s", w->index, strerror(-r));
                return;
        }
        io_uring_for_each_cqe(&w->ring, head, cqe) {
                worker_complete(w, io_uring_cqe_get_data(cqe), cqe->res);
                n++;
        }
        io_uring_cq_advance(&w->ring, n);
        /* Resubmissions from completions (short writes, EAGAIN). */
        if (io_uring_sq_ready(&w->ring) > 0)
                io_uring_submit(&w->ring);
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
                        /* Nothing in flight and nothing submitted: the chunk was aborted. */
                        struct chunk_work *cw = w->current;

                        w->current = NULL;
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
                        job_release_chunk(cw->job, false);
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
