/* A job's plan and its units (daemon/job-stage.c), without a device or a thread: the stages a
 * verify mode makes, that the units of every stage cover the device (or the sample) exactly once,
 * that units done before a resume are skipped and an aborted job claims nothing, what a checkpoint
 * counts, and how bad ranges are merged. Linked with the daemon's library. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "daemon.h"
#include "job-private.h"

/* A job as job_new() or job_from_record() leave it before its first stage: size bytes of
 * sector-byte sectors in chunks of chunk bytes, n_passes random passes, verified as verify says. */
static struct job *job_make(uint64_t size, uint32_t sector, uint64_t chunk, unsigned n_passes, const char *verify) {
        struct job *job = calloc(1, sizeof(*job));
        double pct;

        assert_non_null(job);
        job->id = 1;
        job->fd = -1;
        pthread_mutex_init(&job->lock, NULL);
        job->info.node = strdup("/dev/test");
        job->info.size = size;
        job->info.logical_sector = sector;
        assert_int_equal(chunk_plan_init(&job->plan, size, sector, chunk, chunk < 65536 ? (uint32_t) chunk : 65536), 0);
        assert_int_equal(job->plan.chunk_size, chunk);
        job->n_passes = n_passes;
        job->passes = calloc(n_passes, sizeof(*job->passes));
        assert_non_null(job->passes);
        for (unsigned i = 0; i < n_passes; i++)
                job->passes[i].pass.kind = PASS_RANDOM;
        assert_int_equal(verify_mode_parse(verify, &job->verify, &pct), 0);
        job->verify_percent = pct;
        job->max_bad = UINT64_MAX;
        if (job->verify == VERIFY_SAMPLE)
                assert_int_equal(job_plan_sample(job, pct, true, 12345), 0);
        assert_int_equal(job_plan_stages(job), 0);
        assert_int_equal(job_alloc_bits(job), 0);
        return job;
}

/* The kinds of the job's stages as a string: "W" a write, "V" a whole read-back, "S" a sample. */
static void stages_are(const struct job *job, const char *want) {
        char got[64] = "";

        for (unsigned i = 0; i < job->n_stages && i + 1 < sizeof(got); i++)
                got[i] = job->stages[i].kind == STAGE_WRITE ? 'W' : job->stages[i].sampled ? 'S' : 'V';
        assert_string_equal(got, want);
}

static void test_stages(void **state) {
        struct job *job;

        (void) state;
        job = job_make(1 << 20, 512, 64 << 10, 3, "none");
        stages_are(job, "WWW");
        assert_int_equal(job->work_total, 3 << 20);
        job_free(job);

        job = job_make(1 << 20, 512, 64 << 10, 3, "last");
        stages_are(job, "WWWV");
        assert_int_equal(job->stages[3].pass, 2);
        assert_int_equal(job->work_total, 4 << 20);
        job_free(job);

        job = job_make(1 << 20, 512, 64 << 10, 2, "all");
        stages_are(job, "WVWV");
        assert_int_equal(job->stages[1].pass, 0);
        assert_int_equal(job->stages[3].pass, 1);
        job_free(job);

        /* A sample reads the sample's bytes, of the last pass. */
        job = job_make(8 << 20, 4096, 1 << 20, 2, "sample=5");
        stages_are(job, "WWS");
        assert_int_equal(job->stages[2].pass, 1);
        assert_true(job->sample.bytes > 0 && job->sample.bytes < job->info.size);
        assert_int_equal(job->work_total, 2 * (8 << 20) + job->sample.bytes);
        assert_int_equal(job->stages[2].mode, VERIFY_SAMPLE);
        job_free(job);
}

/* Claim every unit of stage i: they must be its units in order, each byte of the device (or of
 * the sample) exactly once, and then no more. */
static void claim_all(struct job *job, unsigned i) {
        const struct stage *st = &job->stages[i];
        uint64_t n = 0, bytes = 0, next = 0;
        size_t ext = 0;
        struct job_unit u;

        job_stage_enter(job, i);
        assert_int_equal(atomic_load(&job->stage_units), stage_units(job, st));
        while (job_claim_unit(job, &u)) {
                uint64_t ub = 0;

                assert_ptr_equal(u.job, job);
                assert_int_equal(u.index, n);
                assert_int_equal(u.kind, st->kind);
                assert_int_equal(u.pass_index, st->pass);
                assert_ptr_equal(u.pass, &job->passes[st->pass]);
                assert_true(u.n_extents >= 1);
                for (size_t e = 0; e < u.n_extents; e++) {
                        if (st->sampled) {
                                /* The sample's extents, in order, none left out. */
                                assert_int_equal(u.extents[e].offset, job->sample.extents[ext].offset);
                                assert_int_equal(u.extents[e].length, job->sample.extents[ext].length);
                                ext++;
                        } else {
                                /* Chunks back to back from offset 0. */
                                assert_int_equal(u.extents[e].offset, next);
                                next += u.extents[e].length;
                        }
                        assert_int_equal(u.extents[e].offset % job->plan.sector, 0);
                        assert_int_equal(u.extents[e].length % job->plan.sector, 0);
                        ub += u.extents[e].length;
                }
                assert_int_equal(u.bytes, ub);
                bytes += ub;
                n++;
        }
        assert_int_equal(n, stage_units(job, st));
        assert_int_equal(bytes, stage_bytes(job, st));
        if (st->sampled)
                assert_int_equal(ext, job->sample.n_extents);
        else
                assert_int_equal(next, job->info.size);
        /* Exhausted: it stays so. */
        assert_false(job_claim_unit(job, &u));
}

static void test_claim_covers(void **state) {
        struct job *job;

        (void) state;
        /* A last chunk that is shorter than the others. */
        job = job_make((1 << 20) + 3 * 512, 512, 64 << 10, 2, "all");
        for (unsigned i = 0; i < job->n_stages; i++)
                claim_all(job, i);
        job_free(job);

        job = job_make(64 << 20, 4096, 1 << 20, 1, "sample=2.5");
        for (unsigned i = 0; i < job->n_stages; i++)
                claim_all(job, i);
        job_free(job);

        /* One chunk only. */
        job = job_make(4096, 4096, 1 << 20, 1, "last");
        claim_all(job, 0);
        claim_all(job, 1);
        job_free(job);
}

static void test_resume_and_abort(void **state) {
        struct job *job = job_make(1 << 20, 512, 64 << 10, 1, "none");
        struct job_unit u;
        uint64_t n = 0;

        (void) state;
        job_stage_enter(job, 0);
        assert_int_equal(atomic_load(&job->stage_units), 16);
        /* Units 0, 5 and 15 were done before a resume: the others are claimed, in order. */
        atomic_fetch_or(&job->unit_bits[0], 1ULL << 0 | 1ULL << 5 | 1ULL << 15);
        while (job_claim_unit(job, &u)) {
                assert_true(u.index != 0 && u.index != 5 && u.index != 15);
                n++;
        }
        assert_int_equal(n, 13);

        /* Entering a stage forgets the last one's units. */
        job_stage_enter(job, 0);
        assert_int_equal(atomic_load(&job->unit_bits[0]), 0);
        assert_true(job_claim_unit(job, &u));
        assert_int_equal(u.index, 0);

        /* An aborted job hands out nothing. */
        atomic_store(&job->abort, true);
        assert_false(job_claim_unit(job, &u));
        job_free(job);
}

static void test_checkpoint_counts(void **state) {
        struct job *job = job_make(1 << 20, 512, 64 << 10, 2, "last");
        struct ckpt_snap c = {};

        (void) state;
        /* Bytes written: the write stages before, and what is done of the current one. */
        assert_int_equal(written_at(job, 0, 4096), 4096);
        assert_int_equal(written_at(job, 1, 4096), (1 << 20) + 4096);
        assert_int_equal(written_at(job, 2, 4096), 2 << 20);

        /* Stage 1 (the second pass) with units 0 and 2 done: two chunks of the second pass. */
        job_stage_enter(job, 1);
        atomic_fetch_or(&job->unit_bits[0], 1ULL << 0 | 1ULL << 2);
        assert_int_equal(ckpt_snapshot(job, &c), 0);
        assert_int_equal(c.stage, 1);
        assert_int_equal(c.kind, STAGE_WRITE);
        assert_int_equal(c.bytes_done, (1 << 20) + 2 * (64 << 10));
        assert_int_equal(c.bytes_written, (1 << 20) + 2 * (64 << 10));
        assert_int_equal(c.bits[0], 1ULL << 0 | 1ULL << 2);
        free(c.bits);

        /* A verification that found a mismatch starts again whole: nothing of it counts. */
        job_stage_enter(job, 2);
        atomic_fetch_or(&job->unit_bits[0], 1ULL << 1);
        job->current.mismatched = 1;
        assert_int_equal(ckpt_snapshot(job, &c), 0);
        assert_int_equal(c.stage, 2);
        assert_int_equal(c.bytes_done, 2 << 20);
        assert_int_equal(c.bits[0], 0);
        assert_int_equal(c.verify.mismatched, 0);
        free(c.bits);
        job_free(job);
}

static void test_bad_ranges(void **state) {
        struct job *job = job_make(1 << 20, 512, 64 << 10, 1, "none");

        (void) state;
        assert_int_equal(job_bad_range(job, 8192, 512, false), 0);
        assert_int_equal(job_bad_range(job, 1024, 512, false), 0);
        assert_int_equal(job->n_bad, 2);
        assert_int_equal(job->bad[0].offset, 1024);
        /* Adjacent: merged with its neighbour. */
        assert_int_equal(job_bad_range(job, 1536, 512, true), 0);
        assert_int_equal(job->n_bad, 2);
        assert_int_equal(job->bad[0].length, 1024);
        /* Bridging the two: one range. */
        assert_int_equal(job_bad_range(job, 2048, 6144, false), 0);
        assert_int_equal(job->n_bad, 1);
        assert_int_equal(job->bad[0].offset, 1024);
        assert_int_equal(job->bad[0].length, 8192 + 512 - 1024);
        assert_int_equal(job->bad_bytes, 8192 + 512 - 1024);
        /* Inside one already known: nothing new. */
        assert_int_equal(job_bad_range(job, 4096, 512, false), 0);
        assert_int_equal(job->bad_bytes, 8192 + 512 - 1024);
        assert_false(atomic_load(&job->abort));

        /* Beyond max_bad the job fails. */
        job->max_bad = 8192;
        assert_int_equal(job_bad_range(job, 65536, 4096, false), -EIO);
        assert_true(atomic_load(&job->abort));
        assert_int_equal(job->error, -EIO);
        assert_int_equal(job->abort_state, JOB_FAILED);
        job_free(job);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_stages),
                cmocka_unit_test(test_claim_covers),
                cmocka_unit_test(test_resume_and_abort),
                cmocka_unit_test(test_checkpoint_counts),
                cmocka_unit_test(test_bad_ranges),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
