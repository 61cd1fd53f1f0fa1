/* Does the device still hold what the job's record says it wrote? Two moments ask it:
 *  - before a paused or interrupted job goes on: while it was stopped its device was anyone's (it
 *    may have been unplugged, written, formatted, mounted), and a job that went on from its
 *    checkpoint would end "done" over whatever was put there;
 *  - after the last pass, when a fresh probe finds a signature: either the bytes there are what the
 *    pass wrote (a chance match in the keystream or a pattern), or something else wrote there.
 * Runs on the main thread (resume: the job holds no unit) or on the thread that ends the job's last
 * stage (which holds its last unit); reads with O_DIRECT through the job's own descriptor. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>

#include "daemon.h"

struct recheck {
        struct job *job;
        int fd;
        uint32_t sector;                /* bytes read and compared at a time: the plan's sector */
        uint8_t *got, *want;            /* sector bytes each, aligned for O_DIRECT */
        struct keystream *ks;
        int ks_pass;                    /* the pass ks is keyed for, -1 none */
};

static int recheck_init(struct recheck *rc, struct job *job, int fd) {
        *rc = (struct recheck) { .job = job, .fd = fd, .sector = job->plan.sector, .ks_pass = -1 };
        /* 4096 covers the alignment any block device asks of O_DIRECT. */
        if (posix_memalign((void **) &rc->got, 4096, rc->sector) != 0 ||
            posix_memalign((void **) &rc->want, 4096, rc->sector) != 0) {
                free(rc->got);
                rc->got = NULL;
                return -ENOMEM;
        }
        return 0;
}

static void recheck_done(struct recheck *rc) {
        free(rc->got);
        free(rc->want);
        keystream_free(rc->ks);
}

/* What pass p wrote at [off, off + sector) into rc->want. 0 or -errno. */
static int recheck_expected(struct recheck *rc, unsigned p, uint64_t off) {
        const struct job_pass *jp = &rc->job->passes[p];
        int r;

        if (jp->pass.kind == PASS_PATTERN) {
                pattern_fill(&jp->pass, rc->want, off, rc->sector);
                return 0;
        }
        if (rc->ks_pass != (int) p) {
                r = rc->ks ? keystream_rekey(rc->ks, rc->job->cipher, jp->key, jp->key_len) :
                             keystream_new(&rc->ks, rc->job->cipher, jp->key, jp->key_len);
                if (r < 0)
                        return r;
                rc->ks_pass = (int) p;
        }
        return keystream_fill(rc->ks, rc->want, off, rc->sector);
}

/* Read the sector at off into rc->got. 0 or -errno. */
static int recheck_read(struct recheck *rc, uint64_t off) {
        ssize_t n = pread(rc->fd, rc->got, rc->sector, (off_t) off);

        if (n < 0)
                return -errno;
        return n == (ssize_t) rc->sector ? 0 : -EIO;
}

/* Whether [off, off + len) touches a recorded bad range (what could not be written is not
 * expected to hold the pass). Job lock held, or the job not running. */
static bool in_bad_range(const struct job *job, uint64_t off, uint64_t len) {
        for (size_t i = 0; i < job->n_bad; i++)
                if (job->bad[i].offset < off + len && off < job->bad[i].offset + job->bad[i].length)
                        return true;
        return false;
}

/* The last pass the job's stages before stage i wrote whole, or -1; -1 too when that pass is a
 * firmware erase, which leaves what the drive chooses (nothing known to compare with). */
static int pass_before(const struct job *job, unsigned i) {
        int p = -1;

        for (unsigned k = 0; k < i && k < job->n_stages; k++)
                if (job->stages[k].kind == STAGE_WRITE)
                        p = (int) job->stages[k].pass;
        return p >= 0 && pass_op_firmware(job->passes[p].pass.op) ? -1 : p;
}

/* The passes whose bytes may be at off after the checkpoint, in *a and *b (-1: none): a unit the
 * current write stage completed holds its pass; any other unit the pass before, or (written after
 * the checkpoint, before the stop) its own; a verify stage reads what its pass wrote everywhere.
 * False when nothing is known there (the first pass has not reached it). */
static bool expected_at(const struct job *job, uint64_t off, int *a, int *b) {
        unsigned si = job->ckpt.stage;
        const struct stage *st;
        uint64_t unit;

        *a = *b = -1;
        if (si >= job->n_stages)
                return false;
        st = &job->stages[si];
        if (st->kind == STAGE_VERIFY) {
                *a = (int) st->pass;
                return true;
        }
        unit = off / job->plan.chunk_size;
        if (unit < job->plan.n_chunks && (job->ckpt.bits[unit / 64] >> (unit % 64) & 1)) {
                *a = (int) st->pass;
                return true;
        }
        *a = pass_before(job, si);
        if (*a < 0)
                return false;
        *b = (int) st->pass;
        return true;
}

/* Compare the sector at off (a multiple of the sector) with what may be there: 1 the same, 0
 * different (what in *which: the pass it should hold), -1 nothing known or a bad range, or -errno. */
static int recheck_sector(struct recheck *rc, uint64_t off, int *which) {
        int a, b, r;

        if (!expected_at(rc->job, off, &a, &b) || in_bad_range(rc->job, off, rc->sector))
                return -1;
        r = recheck_read(rc, off);
        if (r < 0)
                return r;
        *which = a;
        r = recheck_expected(rc, (unsigned) a, off);
        if (r < 0)
                return r;
        if (memcmp(rc->got, rc->want, rc->sector) == 0)
                return 1;
        if (b < 0)
                return 0;
        r = recheck_expected(rc, (unsigned) b, off);
        if (r < 0)
                return r;
        return memcmp(rc->got, rc->want, rc->sector) == 0;
}

static uint64_t random_u64(void) {
        uint64_t v = 0;

        if (getrandom(&v, sizeof(v), 0) != sizeof(v))
                v = (uint64_t) rand() << 32 ^ (uint64_t) rand();
        return v;
}

/* The sector a signature starts in, at *off: true when it lies whole on the device (both checks
 * skip one that does not, the same way). */
static bool signature_sector(const struct job *job, const struct recheck *rc, const struct device_signature *sig,
                             uint64_t *off) {
        *off = sig->offset / rc->sector * rc->sector;
        return *off + rc->sector <= job->info.size;
}

int recheck_resume(struct job *job, int fd, const struct device_signature *sigs, size_t n, char *err,
                   size_t err_len) {
        struct recheck rc;
        uint64_t sectors = job->info.size / job->plan.sector, *done = NULL, n_done = 0, tried = 0;
        int r, which = -1;

        if (sectors == 0 || job->ckpt.stage >= job->n_stages)
                return 0;
        /* A firmware erase to run or running: the markers it wrote are on the device, and the drive
         * may have erased it meanwhile. Nothing written is expected there any more: the step asks
         * the drive, and its proof checks what the drive left. */
        if (job->stages[job->ckpt.stage].kind == STAGE_WRITE &&
            pass_op_firmware(job->passes[job->stages[job->ckpt.stage].pass].pass.op)) {
                log_info("job %" PRIu64 ": %s: resumed at a firmware erase: nothing read back before it (its proof "
                         "follows it)", job->id, job->info.node);
                return 0;
        }
        r = recheck_init(&rc, job, fd);
        if (r < 0)
                return r;
        /* The signatures first: a file system made meanwhile names itself. */
        for (size_t i = 0; i < n; i++) {
                uint64_t off;

                if (!signature_sector(job, &rc, &sigs[i], &off))
                        continue;
                r = recheck_sector(&rc, off, &which);
                if (r == 0) {
                        snprintf(err, err_len, "%s: the device changed while the job was stopped: a %s signature is "
                                 "at offset %" PRIu64 ", where pass %d had been written", job->info.node,
                                 sigs[i].type ? sigs[i].type : "libblkid", sigs[i].offset, which + 1);
                        r = -ESTALE;
                        goto out;
                }
                if (r < -1)
                        goto out;
        }
        /* Where only the units done are known (the first pass is being written), samples come
         * from those. */
        {
                const struct stage *st = &job->stages[job->ckpt.stage];

                if (st->kind == STAGE_WRITE && pass_before(job, job->ckpt.stage) < 0) {
                        done = calloc(job->plan.n_chunks ? job->plan.n_chunks : 1, sizeof(*done));
                        if (!done) {
                                r = -ENOMEM;
                                goto out;
                        }
                        for (uint64_t u = 0; u < job->plan.n_chunks; u++)
                                if (job->ckpt.bits[u / 64] >> (u % 64) & 1)
                                        done[n_done++] = u;
                }
        }
        for (unsigned k = 0; k < RECHECK_SAMPLES + 2; k++) {
                uint64_t off;

                if (k == 0)
                        off = 0;
                else if (k == 1)
                        off = (sectors - 1) * rc.sector;
                else if (done && n_done == 0)
                        break;
                else if (done) {
                        uint64_t u = done[random_u64() % n_done], start, len;

                        chunk_range(&job->plan, u, &start, &len);
                        off = start + random_u64() % (len / rc.sector) * rc.sector;
                } else
                        off = random_u64() % sectors * rc.sector;
                r = recheck_sector(&rc, off, &which);
                if (r == 0) {
                        snprintf(err, err_len, "%s: the device changed while the job was stopped: the sector at offset "
                                 "%" PRIu64 " is not what pass %d wrote there", job->info.node, off, which + 1);
                        r = -ESTALE;
                        goto out;
                }
                /* A read that fails is a bad sector found now: the workers deal with it. */
                if (r < -1 && r != -EIO && r != -ENODATA && r != -EILSEQ)
                        goto out;
                tried += r == 1;
        }
        r = 0;
        log_info("job %" PRIu64 ": %s: %" PRIu64 " sectors read back before going on hold what the checkpoint says",
                 job->id, job->info.node, tried);
out:
        free(done);
        recheck_done(&rc);
        return r;
}

int recheck_signatures(struct job *job, int fd, struct device_signature *sigs, size_t n, size_t *first) {
        struct recheck rc;
        bool found = false;
        int r;

        if (n == 0 || job->n_passes == 0)
                return 0;
        r = recheck_init(&rc, job, fd);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                uint64_t off;

                sigs[i].written = -1;
                if (!signature_sector(job, &rc, &sigs[i], &off))
                        continue;
                if (in_bad_range(job, off, rc.sector)) {
                        sigs[i].written = 1;
                        continue;
                }
                r = recheck_read(&rc, off);
                if (r == 0)
                        r = recheck_expected(&rc, job->n_passes - 1, off);
                if (r < 0)
                        break;
                sigs[i].written = memcmp(rc.got, rc.want, rc.sector) == 0;
                if (!sigs[i].written && !found) {
                        *first = i;
                        found = true;
                }
        }
        recheck_done(&rc);
        return r < 0 ? r : found;
}
