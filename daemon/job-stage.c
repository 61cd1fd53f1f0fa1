/* A job's work, in stages and units: planning the stages and the sample (main thread), claiming
 * units (workers, under the pool lock), bad ranges and mismatches (workers), releasing units and
 * the end of a stage (workers or the flusher), checkpoints and the flusher thread. A job's stage
 * changes only when no unit of it is held: once the last unit of a stage is released, the flusher
 * (or, without one, the worker that released it) flushes or judges the stage and then moves the
 * job on, under the pool lock. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>

#include "clock.h"
#include "daemon.h"
#include "job-private.h"
#include "units.h"

#define SAMPLE_EXTENTS_PER_UNIT 16      /* sample extents one worker claims at a time */

int job_bad_range(struct job *job, uint64_t off, uint64_t len, bool read) {
        uint64_t before, total, limit, quiet_s;
        size_t i, n, ranges_before;
        unsigned logged;
        bool over;
        char b[32], l[32];

        pthread_mutex_lock(&job->lock);
        before = job->bad_bytes;
        ranges_before = job->n_bad;
        /* Insert in order, merging with the neighbours it touches or overlaps. */
        for (i = 0; i < job->n_bad && job->bad[i].offset + job->bad[i].length < off; i++)
                ;
        if (i < job->n_bad && job->bad[i].offset <= off + len) {
                uint64_t end = off + len > job->bad[i].offset + job->bad[i].length ? off + len :
                               job->bad[i].offset + job->bad[i].length;

                job->bad_bytes -= job->bad[i].length;
                if (off < job->bad[i].offset)
                        job->bad[i].offset = off;
                job->bad[i].length = end - job->bad[i].offset;
                /* It may now reach the next ones. */
                for (n = i + 1; n < job->n_bad && job->bad[n].offset <= end; n++) {
                        uint64_t e = job->bad[n].offset + job->bad[n].length;

                        job->bad_bytes -= job->bad[n].length;
                        if (e > end)
                                end = e;
                }
                job->bad[i].length = end - job->bad[i].offset;
                memmove(&job->bad[i + 1], &job->bad[n], (job->n_bad - n) * sizeof(*job->bad));
                job->n_bad -= n - i - 1;
                job->bad_bytes += job->bad[i].length;
        } else if (job->n_bad < JOB_BAD_RANGES_MAX) {
                struct extent *a = realloc(job->bad, (job->n_bad + 1) * sizeof(*a));

                if (!a) {
                        /* Never skip a sector without a record of it. */
                        pthread_mutex_unlock(&job->lock);
                        job_fail(job, -ENOMEM, "%s: cannot record a bad sector at offset %" PRIu64 ": out of memory",
                                 job->info.node, off);
                        return -ENOMEM;
                }
                job->bad = a;
                memmove(&a[i + 1], &a[i], (job->n_bad - i) * sizeof(*a));
                a[i] = (struct extent) { off, len };
                job->n_bad++;
                job->bad_bytes += len;
        }
        total = job->bad_bytes;
        limit = job->max_bad;
        over = total > limit || job->n_bad >= JOB_BAD_RANGES_MAX;
        if (total != before)
                job->dirty = true;
        /* A line for each new range, up to a limit: a dying disk must not flood the journal. */
        logged = job->n_bad > ranges_before ? ++job->bad_logged : 0;
        pthread_mutex_unlock(&job->lock);
        if (logged > 0 && logged <= JOB_BAD_LOGGED_MAX)
                log_warning("job %" PRIu64 ": %s: bad sector at offset %" PRIu64 " (%s): skipped; %s bad so far%s",
                            job->id, job->info.node, off, read ? "read" : "write", units_size(b, sizeof(b), total),
                            logged == JOB_BAD_LOGGED_MAX ? " (further bad ranges are in the report only)" : "");
        if (over) {
                uint64_t last = atomic_load(&job->last_ok_ns), now = mono_ns();

                quiet_s = now > last ? (now - last) / 1000000000u : 0;
                job_fail(job, -EIO, "%s: too many bad sectors: %s (limit %s)%s", job->info.node,
                         units_size(b, sizeof(b), total), units_size(l, sizeof(l), limit),
                         quiet_s >= 1 ? "; no I/O has succeeded since: the device may have failed or gone" : "");
                return -EIO;
        }
        return 0;
}

/* Bytes a stage writes or reads. */
uint64_t stage_bytes(const struct job *job, const struct stage *st) {
        return st->kind == STAGE_VERIFY && st->sampled ? job->sample.bytes : job->info.size;
}

/* Plan the sample for a verification; a random seed unless one is given. 0 or -errno. */
int job_plan_sample(struct job *job, double percent, bool have_seed, uint64_t seed) {
        struct sample_plan p;
        int r;

        if (!have_seed) {
                if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
                        return errno ? -errno : -EIO;
                /* Below 2^53, so that JSON readers that hold numbers as doubles (jq) keep it exact. */
                seed &= (1ULL << 53) - 1;
        }
        /* Sample whole physical sectors where the device has them larger than logical ones. */
        r = sample_plan_make(&p, job->info.size, job->plan.sector, percent, seed);
        if (r < 0)
                return r;
        sample_plan_done(&job->sample);
        job->sample = p;
        return 0;
}

/* The steps of a wipe: write every pass; read back every pass (all), the last pass (last), or a
 * sample of the last pass (sample); a firmware erase pass is never read back this way (it has
 * its own proof). Sets stages and work_total. 0 or -ENOMEM. */
int job_plan_stages(struct job *job) {
        unsigned n = 0;

        free(job->stages);
        job->stages = calloc(2 * job->n_passes + 1, sizeof(*job->stages));
        if (!job->stages)
                return -ENOMEM;
        for (unsigned p = 0; p < job->n_passes; p++) {
                job->stages[n++] = (struct stage) { .kind = STAGE_WRITE, .pass = p };
                /* What a firmware erase leaves is the drive's: its proof is its own (fw-step.c). */
                if (pass_op_firmware(job->passes[p].pass.op))
                        continue;
                if (job->verify == VERIFY_ALL ||
                    (p + 1 == job->n_passes && (job->verify == VERIFY_LAST || job->verify == VERIFY_SAMPLE)))
                        job->stages[n++] = (struct stage) { .kind = STAGE_VERIFY, .pass = p,
                                                            .sampled = job->verify == VERIFY_SAMPLE, .mode = job->verify };
        }
        job->n_stages = n;
        job->work_total = 0;
        for (unsigned i = 0; i < n; i++)
                job->work_total += stage_bytes(job, &job->stages[i]);
        return 0;
}

/* Units of a stage. */
uint64_t stage_units(const struct job *job, const struct stage *st) {
        /* A firmware erase is one command for the whole device: one unit (fw-step.c). */
        if (st->kind == STAGE_WRITE && pass_op_firmware(job->passes[st->pass].pass.op))
                return 1;
        return st->kind == STAGE_VERIFY && st->sampled ?
               (job->sample.n_extents + SAMPLE_EXTENTS_PER_UNIT - 1) / SAMPLE_EXTENTS_PER_UNIT : job->plan.n_chunks;
}

/* Bytes of unit u of a stage. */
static uint64_t unit_bytes(const struct job *job, const struct stage *st, uint64_t u) {
        uint64_t off, len = 0;

        if (st->kind == STAGE_VERIFY && st->sampled) {
                for (size_t e = u * SAMPLE_EXTENTS_PER_UNIT;
                     e < job->sample.n_extents && e < (u + 1) * SAMPLE_EXTENTS_PER_UNIT; e++)
                        len += job->sample.extents[e].length;
                return len;
        }
        if (st->kind == STAGE_WRITE && pass_op_firmware(job->passes[st->pass].pass.op))
                return job->info.size;
        chunk_range(&job->plan, u, &off, &len);
        return len;
}

/* Bytes of work of the stages before stage i. */
static uint64_t stage_base(const struct job *job, unsigned i) {
        uint64_t b = 0;

        for (unsigned k = 0; k < i && k < job->n_stages; k++)
                b += stage_bytes(job, &job->stages[k]);
        return b;
}

/* Room for the done-unit bitmaps of every stage (the current one, and the checkpoint's).
 * 0 or -ENOMEM. */
int job_alloc_bits(struct job *job) {
        uint64_t n = job->plan.n_chunks, s = (job->sample.n_extents + SAMPLE_EXTENTS_PER_UNIT - 1) / SAMPLE_EXTENTS_PER_UNIT;
        size_t words = (size_t) (((n > s ? n : s) + 63) / 64);
        _Atomic uint64_t *bits;
        uint64_t *ck;

        if (words <= job->n_unit_words)
                return 0;
        bits = calloc(words, sizeof(*bits));
        ck = calloc(words, sizeof(*ck));
        if (!bits || !ck) {
                free((void *) bits);
                free(ck);
                return -ENOMEM;
        }
        if (job->ckpt.bits)
                memcpy(ck, job->ckpt.bits, job->n_unit_words * sizeof(*ck));
        free((void *) job->unit_bits);
        free(job->ckpt.bits);
        job->unit_bits = bits;
        job->ckpt.bits = ck;
        job->n_unit_words = words;
        return 0;
}

static bool unit_bit(_Atomic uint64_t *bits, uint64_t u) {
        return atomic_load_explicit(&bits[u / 64], memory_order_relaxed) >> (u % 64) & 1;
}

/* Make stage i the current one (no unit of the job is held). Unless this run is a later
 * verification, the stage's start is the checkpoint now: every earlier stage was flushed. */
/* A stage of a random pass is about to run in this daemon: its keystream comes from the backend
 * chosen for the job's cipher, which the job's record and report name. */
static void job_stage_note_backend(struct job *job, const struct stage *st) {
        struct keystream_choice ch;

        if (job->passes[st->pass].pass.kind != PASS_RANDOM)
                return;
        keystream_backend_choice(job->cipher, &ch);
        atomic_fetch_or(&job->keystream_backends, 1u << ch.backend);
}

void job_stage_enter(struct job *job, unsigned i) {
        const struct stage *st = &job->stages[i];

        job_stage_note_backend(job, st);
        atomic_store(&job->stage_index, i);
        atomic_store(&job->stage_units, stage_units(job, st));
        atomic_store(&job->next_unit, 0);
        atomic_store(&job->units_done, 0);
        for (size_t w = 0; w < job->n_unit_words; w++)
                atomic_store_explicit(&job->unit_bits[w], 0, memory_order_relaxed);
        atomic_store(&job->ckpt_pending, 0);
        pthread_mutex_lock(&job->lock);
        if (!job->reverify) {
                job->ckpt.stage = i;
                memset(job->ckpt.bits, 0, job->n_unit_words * sizeof(*job->ckpt.bits));
                job->ckpt.bytes_done = stage_base(job, i);
                job->ckpt.bytes_written = atomic_load(&job->bytes_written);
                job->ckpt.verify = (struct verify_result) {};
                job->ckpt.at = real_s();
                job->dirty = true;
        }
        pthread_mutex_unlock(&job->lock);
        if (st->kind == STAGE_VERIFY) {
                pthread_mutex_lock(&job->lock);
                job->current = (struct verify_result) {
                        .mode = st->mode,
                        .percent = st->sampled ? job->sample.percent : 100.0,
                        .seed = st->sampled ? job->sample.seed : 0,
                        .subsections = st->sampled ? job->sample.subsections : 0,
                        .coverage = stage_bytes(job, st),
                        .started = real_s(),
                };
                pthread_mutex_unlock(&job->lock);
        }
}

static void job_stage_next(struct job *job) {
        job_stage_enter(job, atomic_load(&job->stage_index) + 1);
}

bool job_claim_unit(struct job *job, struct job_unit *u) {
        const struct stage *st;
        uint64_t c, off, len;

        if (atomic_load(&job->abort))
                return false;
        /* Units done before a resume are skipped. */
        do {
                c = atomic_fetch_add(&job->next_unit, 1);
                if (c >= atomic_load(&job->stage_units))
                        return false;
        } while (unit_bit(job->unit_bits, c));
        st = &job->stages[atomic_load(&job->stage_index)];
        *u = (struct job_unit) {
                .job = job,
                .run = atomic_load(&job->run),
                .kind = st->kind,
                .pass = &job->passes[st->pass],
                .pass_index = st->pass,
                .index = c,
                .bytes = unit_bytes(job, st, c),
        };
        if (st->kind == STAGE_VERIFY && st->sampled) {
                size_t first = c * SAMPLE_EXTENTS_PER_UNIT;

                u->extents = job->sample.extents + first;
                u->n_extents = job->sample.n_extents - first < SAMPLE_EXTENTS_PER_UNIT ?
                        job->sample.n_extents - first : SAMPLE_EXTENTS_PER_UNIT;
        } else {
                chunk_range(&job->plan, c, &off, &len);
                u->one = (struct extent) { off, len };
                u->extents = &u->one;
                u->n_extents = 1;
        }
        return true;
}

/* Bytes written over all passes when stage holds done bytes of its units: the passes before it
 * whole, and those bytes when it writes. */
uint64_t written_at(const struct job *job, unsigned stage, uint64_t done) {
        uint64_t w = 0;

        for (unsigned k = 0; k < stage && k < job->n_stages; k++)
                if (job->stages[k].kind == STAGE_WRITE)
                        w += job->info.size;
        if (stage < job->n_stages && job->stages[stage].kind == STAGE_WRITE)
                w += done;
        return w;
}

/* The completed units of the current stage and what goes with them, taken where the stage cannot
 * change (under the pool lock, or when no unit is held). */

int ckpt_snapshot(struct job *job, struct ckpt_snap *c) {
        const struct stage *st;
        uint64_t units, done = 0;

        c->run = atomic_load(&job->run);
        c->stage = atomic_load(&job->stage_index);
        st = &job->stages[c->stage];
        c->kind = st->kind;
        c->bits = calloc(job->n_unit_words, sizeof(*c->bits));
        if (!c->bits)
                return -ENOMEM;
        for (size_t w = 0; w < job->n_unit_words; w++)
                c->bits[w] = atomic_load(&job->unit_bits[w]);
        units = atomic_load(&job->stage_units);
        for (uint64_t u = 0; u < units; u++)
                if (c->bits[u / 64] >> (u % 64) & 1)
                        done += unit_bytes(job, st, u);
        c->bytes_done = stage_base(job, c->stage) + done;
        c->bytes_written = written_at(job, c->stage, done);
        atomic_store(&job->ckpt_pending, 0);
        pthread_mutex_lock(&job->lock);
        c->verify = st->kind == STAGE_VERIFY ? job->current : (struct verify_result) {};
        pthread_mutex_unlock(&job->lock);
        /* Mismatches are counted per sector as found, also in units not done yet: a verification
         * that found some starts again whole on a resume, so that none is counted twice. */
        if (st->kind == STAGE_VERIFY && c->verify.mismatched > 0) {
                memset(c->bits, 0, job->n_unit_words * sizeof(*c->bits));
                c->bytes_done = stage_base(job, c->stage);
                c->verify = (struct verify_result) {};
        }
        return 0;
}

/* Make a snapshot whose writes were flushed the checkpoint, unless the job moved on meanwhile
 * (final: the job's own last one, taken when it stopped). */
void ckpt_store(struct job *job, const struct ckpt_snap *c, bool final) {
        pthread_mutex_lock(&job->lock);
        if (final || (!atomic_load(&job->finished) && atomic_load(&job->run) == c->run && c->stage >= job->ckpt.stage)) {
                job->ckpt.stage = c->stage;
                memcpy(job->ckpt.bits, c->bits, job->n_unit_words * sizeof(*c->bits));
                job->ckpt.bytes_done = c->bytes_done;
                job->ckpt.bytes_written = c->bytes_written;
                job->ckpt.verify = c->verify;
                job->ckpt.at = real_s();
                job->dirty = true;
        }
        pthread_mutex_unlock(&job->lock);
}

/* A checkpoint of a running job (on the flusher): what its workers completed is flushed, then
 * recorded. */
static void job_checkpoint(struct job *job, unsigned run) {
        struct ckpt_snap c = {};
        int fd = -1, r;

        pool_lock(job->pool);
        /* A firmware erase's one unit is done when the drive is: nothing to record before, and a
         * drive that is sanitizing refuses the flush a checkpoint would send. */
        if (atomic_load(&job->run) == run && !atomic_load(&job->finished) && !atomic_load(&job->abort) &&
            !(job->stages[atomic_load(&job->stage_index)].kind == STAGE_WRITE &&
              pass_op_firmware(job->passes[job->stages[atomic_load(&job->stage_index)].pass].pass.op))) {
                pthread_mutex_lock(&job->lock);
                /* Our own descriptor: the job may end and close its own meanwhile. */
                if (job->fd >= 0)
                        fd = fcntl(job->fd, F_DUPFD_CLOEXEC, 0);
                pthread_mutex_unlock(&job->lock);
                if (fd >= 0 && ckpt_snapshot(job, &c) < 0) {
                        close(fd);
                        fd = -1;
                }
        }
        pool_unlock(job->pool);
        if (fd >= 0) {
                r = c.kind == STAGE_WRITE && fdatasync(fd) < 0 ? -errno : 0;
                close(fd);
                if (r < 0)
                        job_fail(job, r, "%s: flush for a checkpoint failed: %s", job->info.node, strerror(-r));
                else
                        ckpt_store(job, &c, false);
        }
        free(c.bits);
        pthread_mutex_lock(&job->lock);
        job->ckpt_queued = false;
        pthread_mutex_unlock(&job->lock);
}

void job_verify_mismatch(struct job *job, uint64_t offset) {
        struct verify_result *r = &job->current;
        size_t lo = 0, hi;

        pthread_mutex_lock(&job->lock);
        /* A sector that could not be written is known bad, not a mismatch. */
        for (hi = job->n_bad; lo < hi;) {
                size_t mid = lo + (hi - lo) / 2;

                if (job->bad[mid].offset + job->bad[mid].length <= offset)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo < job->n_bad && job->bad[lo].offset <= offset) {
                pthread_mutex_unlock(&job->lock);
                return;
        }
        r->mismatched++;
        /* Keep the lowest offsets, ascending: workers report out of order. */
        if (r->n_first < VERIFY_FIRST_MAX || offset < r->first[r->n_first - 1]) {
                unsigned i = r->n_first < VERIFY_FIRST_MAX ? r->n_first++ : VERIFY_FIRST_MAX - 1;

                while (i > 0 && r->first[i - 1] > offset) {
                        r->first[i] = r->first[i - 1];
                        i--;
                }
                r->first[i] = offset;
        }
        pthread_mutex_unlock(&job->lock);
}

/* After the last flush: what a fresh libblkid probe finds on the device now (nothing, we hope).
 * A signature it finds must be in what the last pass wrote (a chance match of its magic in the
 * keystream or a pattern): else something else wrote to the device during the wipe, and the job
 * fails (through job_fail(): returns -ESTALE). 0 otherwise. */
static int job_probe_after(struct job *job) {
        struct device_signature *sigs = NULL;
        size_t n = 0, first = 0;
        char path[64];
        int r, k = 0;

        /* Through the job's own descriptor: the same device, even if its name moved meanwhile. */
        snprintf(path, sizeof(path), "/proc/self/fd/%d", job->fd);
        r = device_signatures_read(path, &sigs, &n);

        if (r < 0) {
                log_warning("job %" PRIu64 ": %s: cannot probe after the wipe: %s", job->id, job->info.node, strerror(-r));
                return 0;
        }
        /* Nothing of what was there may be left after a firmware erase: no pass wrote it. */
        if (n > 0 && pass_op_firmware(job->passes[job->n_passes - 1].pass.op))
                k = 2;
        else if (n > 0) {
                k = recheck_signatures(job, job->fd, sigs, n, &first);
                if (k < 0)
                        log_warning("job %" PRIu64 ": %s: a probe after the wipe finds %s at offset %" PRIu64 ", and the "
                                    "sector there cannot be read back: %s", job->id, job->info.node, sigs[0].type,
                                    sigs[0].offset, strerror(-k));
                else if (k == 0)
                        log_warning("job %" PRIu64 ": %s: a probe after the wipe finds %s at offset %" PRIu64 ", in the "
                                    "bytes the last pass wrote there (a chance match)", job->id, job->info.node,
                                    sigs[0].type, sigs[0].offset);
        }
        pthread_mutex_lock(&job->lock);
        device_signatures_free(job->sigs_after, job->n_sigs_after);
        job->sigs_after = sigs;
        job->n_sigs_after = n;
        job->sigs_checked = true;
        pthread_mutex_unlock(&job->lock);
        if (k == 2) {
                job_fail(job, -EIO, "%s: a probe after the firmware erase finds %s at offset %" PRIu64 ": the drive did "
                         "not erase it", job->info.node, sigs[0].type, sigs[0].offset);
                return -EIO;
        }
        if (k == 1) {
                job_fail(job, -ESTALE, "%s: a probe after the wipe finds %s at offset %" PRIu64 ", which is not what "
                         "pass %u wrote there: something else wrote to the device during the wipe", job->info.node,
                         sigs[first].type, sigs[first].offset, job->n_passes);
                return -ESTALE;
        }
        return 0;
}

/* The current stage is complete (its last unit is still held): flush a write stage, judge a
 * verify stage. Failures go through job_fail(). */
static void job_stage_end(struct job *job) {
        const struct stage *st = &job->stages[atomic_load(&job->stage_index)];
        struct job_pass *p = &job->passes[st->pass];
        char name[2 * METHOD_PATTERN_MAX + 8];

        if (st->kind == STAGE_WRITE) {
                /* A pass counts only after a flush that followed every write. */
                pthread_mutex_lock(&job->lock);
                job->state = JOB_FLUSHING;
                pthread_mutex_unlock(&job->lock);
                if (fdatasync(job->fd) < 0) {
                        job_fail(job, -errno, "%s: flush after pass %u failed: %s", job->info.node, st->pass + 1,
                                 strerror(errno));
                        return;
                }
                pthread_mutex_lock(&job->lock);
                p->written = true;
                job->state = JOB_RUNNING;
                pthread_mutex_unlock(&job->lock);
                if (pass_op_firmware(p->pass.op)) {
                        log_job_event(LOG_INFO, LOG_EVENT_PASS_DONE, job,
                                      "job %" PRIu64 ": %s: pass %u of %u (%s) done by the drive: none of %u markers "
                                      "left, %u sampled extents changed, it returns %s", job->id, job->info.node,
                                      st->pass + 1, job->n_passes, pass_name(&p->pass, name, sizeof(name)),
                                      p->fw.markers, p->fw.n_samples - p->fw.samples_blank, p->fw.returns);
                        return;
                }
                log_job_event(LOG_INFO, LOG_EVENT_PASS_DONE, job,
                              "job %" PRIu64 ": %s: pass %u of %u (%s) written and flushed", job->id, job->info.node,
                         st->pass + 1, job->n_passes, pass_name(&p->pass, name, sizeof(name)));
                return;
        }

        pthread_mutex_lock(&job->lock);
        job->current.ran = true;
        job->current.at = real_s();
        p->verified = job->current;
        if (st->pass + 1 == job->n_passes) {
                struct verify_result *v = realloc(job->runs, (job->n_runs + 1) * sizeof(*v));

                if (v) {
                        job->runs = v;
                        job->runs[job->n_runs++] = job->current;
                }
        }
        pthread_mutex_unlock(&job->lock);
        if (p->verified.mismatched > 0) {
                log_job_event(LOG_ERR, LOG_EVENT_VERIFY_FAILED, job,
                              "job %" PRIu64 ": %s: pass %u failed verification (%s): %" PRIu64 " sectors differ",
                              job->id, job->info.node, st->pass + 1, verify_mode_name(p->verified.mode),
                              p->verified.mismatched);
                job_fail(job, -EIO, "%s: verification of pass %u failed: %" PRIu64 " mismatching sector%s, first at offset %" PRIu64,
                         job->info.node, st->pass + 1, p->verified.mismatched, p->verified.mismatched == 1 ? "" : "s",
                         p->verified.first[0]);
        } else
                log_job_event(LOG_INFO, LOG_EVENT_VERIFY_PASSED, job,
                              "job %" PRIu64 ": %s: pass %u verified (%s, %" PRIu64 " bytes compared)", job->id, job->info.node,
                         st->pass + 1, verify_mode_name(p->verified.mode), p->verified.coverage);
}

/* Everything after the last unit of a stage: flush or judge it, then start the next stage or end
 * the job. The caller holds that unit, so a concurrent cancel cannot end the job (and close the
 * device) meanwhile. */
void job_stage_complete(struct job *job, unsigned run) {
        /* Stopped meanwhile (a shutdown waits for this): the pass does not count, so no flush. */
        if (atomic_load(&job->abort))
                return;
        job_stage_end(job);
        if (atomic_load(&job->abort))
                return;
        if (atomic_load(&job->stage_index) + 1 < job->n_stages) {
                pool_locked(job->pool, job_stage_next, job);
                pool_add_job(job->pool, job);
        } else
                job_finish(job, job_probe_after(job) < 0 ? JOB_FAILED : JOB_DONE, run);
}

/* Give up a unit: the last one of an aborted job ends it. */
void job_unit_put(struct job *job, unsigned run) {
        (void) run;
        /* No unit of any run is held now: the run to end is the current one (a unit given back
         * late may be of an earlier run, claimed just before it ended). */
        if (atomic_fetch_sub(&job->active_chunks, 1) == 1 && atomic_load(&job->abort))
                job_end_aborted(job, atomic_load(&job->run));
        /* This thread's last touch of the job goes through its lock, which graveyard_sweep()
         * takes before it frees a forgotten job: the free is ordered after it. */
        pthread_mutex_lock(&job->lock);
        pthread_mutex_unlock(&job->lock);
}

/* The flusher: one thread that completes stages (a flush waits on the device, for a second or more
 * on a disk with a large cache), so that a worker never stops feeding its other devices for it,
 * and takes checkpoints. Jobs wait in two FIFOs; a job whose stage ends holds the unit of its
 * stage's end until the flusher is done with it. Stage ends go first. */
static struct {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        pthread_t thread;
        bool running, stop;
        struct job *head, *tail;
        struct job *ckpt_head, *ckpt_tail;
} flusher = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void *flusher_main(void *arg) {
        (void) arg;
        pthread_setname_np(pthread_self(), "wiped-flush");
        pthread_mutex_lock(&flusher.lock);
        for (;;) {
                struct job *job = flusher.head;
                unsigned run;

                if (job) {
                        flusher.head = job->flush_next;
                        if (!flusher.head)
                                flusher.tail = NULL;
                        job->flush_next = NULL;
                        run = job->flush_run;
                        pthread_mutex_unlock(&flusher.lock);
                        job_stage_complete(job, run);
                        job_unit_put(job, run);
                        pthread_mutex_lock(&flusher.lock);
                        continue;
                }
                job = flusher.ckpt_head;
                if (job) {
                        flusher.ckpt_head = job->ckpt_next;
                        if (!flusher.ckpt_head)
                                flusher.ckpt_tail = NULL;
                        job->ckpt_next = NULL;
                        pthread_mutex_unlock(&flusher.lock);
                        job_checkpoint(job, atomic_load(&job->run));
                        pthread_mutex_lock(&flusher.lock);
                        continue;
                }
                if (flusher.stop)
                        break;
                pthread_cond_wait(&flusher.cond, &flusher.lock);
        }
        pthread_mutex_unlock(&flusher.lock);
        return NULL;
}

int job_flusher_start(void) {
        int r = -pthread_create(&flusher.thread, NULL, flusher_main, NULL);

        if (r == 0)
                flusher.running = true;
        return r;
}

void job_flusher_stop(void) {
        pthread_mutex_lock(&flusher.lock);
        if (!flusher.running) {
                pthread_mutex_unlock(&flusher.lock);
                return;
        }
        flusher.stop = true;
        pthread_cond_signal(&flusher.cond);
        pthread_mutex_unlock(&flusher.lock);
        /* It completes what is queued first. */
        pthread_join(flusher.thread, NULL);
        pthread_mutex_lock(&flusher.lock);
        flusher.running = false;
        pthread_mutex_unlock(&flusher.lock);
}

/* Queue the job's stage end for the flusher: true, or false when it is not running (then the
 * caller completes the stage itself). */
bool flusher_post(struct job *job, unsigned run) {
        bool posted = false;

        pthread_mutex_lock(&flusher.lock);
        if (flusher.running && !flusher.stop) {
                job->flush_run = run;
                job->flush_next = NULL;
                if (flusher.tail)
                        flusher.tail->flush_next = job;
                else
                        flusher.head = job;
                flusher.tail = job;
                pthread_cond_signal(&flusher.cond);
                posted = true;
        }
        pthread_mutex_unlock(&flusher.lock);
        return posted;
}

/* Queue a checkpoint of a running job (main thread). Without a flusher, none is taken. */
void flusher_post_checkpoint(struct job *job) {
        pthread_mutex_lock(&job->lock);
        if (job->ckpt_queued) {
                pthread_mutex_unlock(&job->lock);
                return;
        }
        job->ckpt_queued = true;
        pthread_mutex_unlock(&job->lock);
        pthread_mutex_lock(&flusher.lock);
        if (flusher.running && !flusher.stop) {
                job->ckpt_next = NULL;
                if (flusher.ckpt_tail)
                        flusher.ckpt_tail->ckpt_next = job;
                else
                        flusher.ckpt_head = job;
                flusher.ckpt_tail = job;
                pthread_cond_signal(&flusher.cond);
                pthread_mutex_unlock(&flusher.lock);
                return;
        }
        pthread_mutex_unlock(&flusher.lock);
        pthread_mutex_lock(&job->lock);
        job->ckpt_queued = false;
        pthread_mutex_unlock(&job->lock);
}

void job_release_chunk(struct job *job, const struct job_unit *completed, unsigned run) {
        /* Read before this unit counts as done: until then the stage cannot change under us. */
        uint64_t units = atomic_load(&job->stage_units);
        uint64_t done = 0;

        if (completed) {
                /* Written (or compared) whole: a checkpoint may record it once it is flushed. */
                atomic_fetch_or(&job->unit_bits[completed->index / 64], 1ULL << (completed->index % 64));
                atomic_fetch_add(&job->ckpt_pending, completed->bytes);
                done = atomic_fetch_add(&job->units_done, 1) + 1;
        }
        if (completed && done == units && !atomic_load(&job->abort)) {
                /* The flusher takes over this unit and gives it up when the stage is complete. */
                if (flusher_post(job, run))
                        return;
                job_stage_complete(job, run);
        }
        job_unit_put(job, run);
}

/* Make the checkpoint's stage current again, its done units skipped (no unit of the job is held). */
void job_stage_resume(struct job *job) {
        unsigned i = job->ckpt.stage;
        const struct stage *st = &job->stages[i];
        uint64_t units = stage_units(job, st), done = 0;

        job_stage_note_backend(job, st);
        atomic_store(&job->stage_index, i);
        atomic_store(&job->stage_units, units);
        atomic_store(&job->next_unit, 0);
        for (size_t w = 0; w < job->n_unit_words; w++)
                atomic_store(&job->unit_bits[w], job->ckpt.bits[w]);
        for (uint64_t u = 0; u < units; u++)
                done += job->ckpt.bits[u / 64] >> (u % 64) & 1;
        atomic_store(&job->units_done, done);
        atomic_store(&job->ckpt_pending, 0);
        atomic_store(&job->bytes_done, job->ckpt.bytes_done);
        atomic_store(&job->bytes_written, job->ckpt.bytes_written);
        pthread_mutex_lock(&job->lock);
        if (st->kind == STAGE_VERIFY) {
                job->current = job->ckpt.verify;
                job->current.mode = st->mode;
                job->current.percent = st->sampled ? job->sample.percent : 100.0;
                job->current.seed = st->sampled ? job->sample.seed : 0;
                job->current.subsections = st->sampled ? job->sample.subsections : 0;
                job->current.coverage = stage_bytes(job, st);
                if (job->current.started == 0)
                        job->current.started = real_s();
        }
        pthread_mutex_unlock(&job->lock);
}
