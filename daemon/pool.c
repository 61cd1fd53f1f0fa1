/* The worker pool: its settings (and their JSON), the list of jobs with units to claim and the
 * lock that guards it, and the start and stop of the worker threads with their rings and buffers
 * (worker.c is what each thread runs).
 *
 * Threads: pool_new() and pool_free() run on the main thread. The job side takes the pool lock
 * and adds, removes or moves on its jobs from whichever thread it runs on (the main thread, the
 * flusher, a worker ending a stage); the workers take the same lock to claim units, to wait for
 * new ones and to bump the epoch (pool_bump) when a unit was given up. */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <liburing.h>

#include "cleanup.h"
#include "conffile.h"
#include "daemon.h"
#include "worker-private.h"

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
        json_object_object_add(o, "max_rate_bps", json_object_new_uint64(pool->rate.bps));
        json_object_object_add(o, "buffer_memory_bytes", json_object_new_uint64(pool_memory(pool)));
        /* Deprecated names (wiped(8) NAMES AND UNITS), sent for one release more. */
        json_object_object_add(o, "max_rate", json_object_new_uint64(pool->rate.bps));
        json_object_object_add(o, "buffer_memory", json_object_new_uint64(pool_memory(pool)));
        json_object_object_add(o, "registered_buffers", json_object_new_boolean(pool_registered(pool)));
        json_object_object_add(o, "worker_policy",
                               json_object_new_string(conffile_policy_name((enum conffile_policy) pool->worker_policy)));
        json_object_object_add(o, "worker_nice", json_object_new_int((int) pool->worker_nice));
        json_object_object_add(o, "worker_priority_applied",
                               json_object_new_boolean(!atomic_load(&pool->priority_failed)));
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
void pool_bump_locked(struct pool *pool) {
        atomic_fetch_add(&pool->epoch, 1);
        pthread_cond_broadcast(&pool->cond);
}

void pool_bump(struct pool *pool) {
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

/* Priority is per thread on Linux: setpriority() with a thread id and sched_setscheduler(0, ...)
 * change the calling thread alone, never the main thread that answers the socket. */
void pool_thread_priority(struct pool *pool) {
        struct sched_param sp = { .sched_priority = 0 };
        const char *policy = conffile_policy_name((enum conffile_policy) pool->worker_policy);
        pid_t tid = gettid();
        int now, e_nice = 0, e_policy = 0;
        char nice_msg[96] = "", policy_msg[96] = "";

        errno = 0;
        now = getpriority(PRIO_PROCESS, (id_t) tid);
        if ((errno != 0 || now < (int) pool->worker_nice) &&
            setpriority(PRIO_PROCESS, (id_t) tid, (int) pool->worker_nice) < 0)
                e_nice = errno;
        now = sched_getscheduler(0);
        if ((now < 0 || (now & ~SCHED_RESET_ON_FORK) != pool->worker_policy) &&
            sched_setscheduler(0, pool->worker_policy, &sp) < 0)
                e_policy = errno;
        if ((!e_nice && !e_policy) || atomic_exchange(&pool->priority_failed, true))
                return;
        if (e_nice)
                snprintf(nice_msg, sizeof(nice_msg), "worker-nice = %u (%s)", pool->worker_nice, strerror(e_nice));
        if (e_policy)
                snprintf(policy_msg, sizeof(policy_msg), "worker-policy = %s (%s)", policy, strerror(e_policy));
        log_warning("worker threads: cannot set %s%s%s: they run on at the priority they have", nice_msg,
                    e_nice && e_policy ? ", " : "", policy_msg);
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

/* The worker's buffers, n of size bytes, as one mapping that starts on a huge page boundary and
 * asks for huge pages (MADV_HUGEPAGE: transparent huge pages set to "always" or "madvise"). A
 * buffer within one huge page is physically contiguous, so an I/O of 1 MiB is a few large
 * segments. In 4 KiB pages it is 256, more than many devices take in one request (a loop device:
 * 128), and the block layer must split it; a split request cannot be issued without blocking, so
 * io_uring hands every such I/O to one of its kernel worker threads: a context switch or two per
 * I/O, measured at a third of the daemon's CPU for a zero pass. The mapping is exactly n * size
 * bytes, so that no huge page reaches past it and only the buffers are pinned (RLIMIT_MEMLOCK).
 * Without huge pages this is n buffers in 4 KiB pages, as before. Returns the mapping or
 * MAP_FAILED (errno set); each buffer may be unmapped on its own. */
static void *worker_map_buffers(unsigned n, uint32_t size) {
        const size_t huge = 2u << 20;
        size_t total = (size_t) n * size, head;
        uint8_t *m = mmap(NULL, total + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        if (m == MAP_FAILED)
                return MAP_FAILED;
        head = (huge - (uintptr_t) m % huge) % huge;
        if (head > 0)
                munmap(m, head);
        munmap(m + head + total, huge - head);
        (void) madvise(m + head, total, MADV_HUGEPAGE);     /* EINVAL without THP: small pages */
        return m + head;
}

static int worker_init(struct worker *w, struct pool *pool, unsigned index) {
        _cleanup_free_ struct iovec *iov = NULL;
        uint8_t zero_key[KEYSTREAM_KEY_MAX] = {};
        unsigned n = pool->buffers;
        uint8_t *bufs;
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
        bufs = worker_map_buffers(n, pool->io_size);
        if (bufs == MAP_FAILED)
                return -errno;
        for (unsigned i = 0; i < n; i++) {
                /* Page-aligned (io_size is whole pages), so aligned for any logical sector size. */
                void *p = bufs + (size_t) i * pool->io_size;

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
            cfg->io_size % 4096 != 0 || cfg->worker_nice > CONFFILE_WORKER_NICE_MAX ||
            !conffile_policy_name((enum conffile_policy) cfg->worker_policy))
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
        pool->worker_policy = cfg->worker_policy;
        pool->worker_nice = cfg->worker_nice;
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
