/* wiped: what the pool and its worker threads share (pool.c, worker.c, worker-check.c), grouped
 * by file; the rest of the daemon sees only daemon.h's "pool" functions.
 *
 * Each worker owns one io_uring ring, `buffers` registered buffers of io_size bytes and one
 * keystream context (re-keyed when it moves to another job's pass). Device descriptors are not
 * registered with the rings: a registered file stays open until the ring is torn down, which the
 * kernel does asynchronously after a crash, so the device would still look busy (O_EXCL) to a
 * daemon restarted at once; and at 1 MiB per I/O the saving is not measurable. */
#pragma once

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
        bool held;                      /* in the worker's held list: more to submit */
};

/* One registered buffer and the I/O it carries.
 *
 * A buffer written with a pattern pass keeps that pattern, since a write leaves its buffer as it
 * was: the next write that needs the same bytes goes out without a refill (worker_fill()). What
 * the buffer holds is known by content (the pattern, its phase and how many bytes), never by
 * job or pass: so another job with the same pattern shares it, and a forgotten job whose memory
 * now holds other passes cannot be mistaken for it. Whatever else writes the buffer (a
 * verification read, the keystream, a recovery) clears pattern_len first. */
struct slot {
        void *buf;
        struct chunk_work *cw;          /* NULL when free */
        bool read;                      /* a verification read, else a write */
        uint8_t op;                     /* a write: enum pass_op (an erase command uses no buffer) */
        uint64_t offset;                /* device offset of buf[0] */
        uint32_t len;                   /* bytes of this I/O */
        uint32_t done;                  /* bytes already transferred (short transfers) */
        uint8_t pattern[METHOD_PATTERN_MAX]; /* buf holds this pattern... */
        uint8_t pattern_len;            /* ...of this period (0: nothing known)... */
        uint8_t pattern_phase;          /* ...from pattern[pattern_phase] on... */
        uint32_t pattern_bytes;         /* ...for this many bytes */
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
        struct pattern_ref ref;         /* the pattern a verification read of a pattern pass is compared with */
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
        int worker_policy;              /* SCHED_OTHER, SCHED_BATCH or SCHED_IDLE, for every worker */
        unsigned worker_nice;
        atomic_bool priority_failed;    /* a worker could not take them (logged once) */
        struct worker *workers;
        unsigned started;
};

/* pool.c */
/* There may be units to claim: every worker looks again. Called with the pool lock held. */
void pool_bump_locked(struct pool *pool);
/* The same, taking the pool lock. */
void pool_bump(struct pool *pool);

/* worker.c */
/* A worker thread (arg: its struct worker): serves the pool's jobs until the pool stops. */
void *worker_main(void *arg);
/* What a pass has at [off, off+len): the keystream or the pattern, into buf. 0 or -errno. */
int worker_expected(struct worker *w, const struct job_unit *u, void *buf, uint64_t off, uint32_t len);

/* worker-check.c */
/* A verification read of a whole slot is in: compare it, reporting every sector that differs. */
void worker_compare(struct worker *w, struct slot *s);
/* Errors of the medium (a bad sector), as opposed to a device gone, full or refusing. */
bool worker_media_error(int e);
/* A success of the job's device ends a streak of failures. */
void worker_io_ok(struct job *job);
/* A write or read of a slot failed with a media error (res): retry it synchronously, whole and
 * then by halves down to single sectors, recording the bad sectors; the job fails when its device
 * is dead or an error is not of the medium. Either way the range counts as done. */
void worker_recover(struct worker *w, struct slot *s, int res);
