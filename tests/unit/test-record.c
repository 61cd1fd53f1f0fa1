/* Job records (daemon/state.c, loaded by job_from_record() in daemon/job.c): the seed records of
 * tests/fuzz/corpus-record load into jobs that write the same record again, and a record that is
 * torn, changed or wrong in one field is refused with -EBADMSG and the reason. Links the daemon's
 * library; reads the seeds from $top_srcdir (make check sets it). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <openssl/evp.h>

#include "daemon/daemon.h"

#define PREFIX "{\"format\":2,\"sha256\":\""
#define HASH_HEX 64
/* A seed with a checkpoint, a sample verification and a random pass with its key. */
#define SEED_DONE "done-random-sample.json"
/* A seed of a daemon that never saw the end of the run (killed). */
#define SEED_RUNNING "running-checkpoint.json"

static char corpus[PATH_MAX];

/* ---- helpers ---- */

/* The whole file, NUL-terminated (malloc'd), its length in *len. */
static char *read_text(const char *path, size_t *len) {
        FILE *f = fopen(path, "re");
        char *text;
        long n;

        if (!f) {
                fail_msg("%s: %s", path, strerror(errno));
                return NULL;
        }
        assert_int_equal(fseek(f, 0, SEEK_END), 0);
        n = ftell(f);
        assert_true(n > 0);
        rewind(f);
        text = malloc((size_t) n + 1);
        assert_non_null(text);
        assert_int_equal(fread(text, 1, (size_t) n, f), (size_t) n);
        text[n] = 0;
        fclose(f);
        *len = (size_t) n;
        return text;
}

static char *read_seed(const char *name, size_t *len) {
        char path[PATH_MAX + 256];

        snprintf(path, sizeof(path), "%s/%s", corpus, name);
        return read_text(path, len);
}

/* state_record_decode() on a copy of len bytes of text (the decoder changes its input). */
static int decode(const char *text, size_t len, bool check_sum, struct json_object **rec, char *err, size_t err_len) {
        char *copy = malloc(len + 1);
        int r;

        assert_non_null(copy);
        memcpy(copy, text, len);
        copy[len] = 0;
        err[0] = 0;
        *rec = NULL;
        r = state_record_decode(copy, len, check_sum, rec, err, err_len);
        free(copy);
        return r;
}

/* The record a job writes, as the file holds it (malloc'd, length in *len). */
static char *job_text(struct job *job, size_t *len) {
        struct json_object *rec = state_record_json(job);
        char *text;

        assert_non_null(rec);
        text = state_record_text(rec, len);
        assert_non_null(text);
        state_record_cleanse(rec);
        json_object_put(rec);
        return text;
}

/* A job as job_from_record() starts one, before it reads the record. */
static struct job *job_blank(void) {
        struct job *job = calloc(1, sizeof(*job));

        assert_non_null(job);
        job->fd = -1;
        pthread_mutex_init(&job->lock, NULL);
        return job;
}

/* Put the SHA-256 of the line into it as the daemon does (text has the record's prefix). */
static void seal(char *text, size_t len) {
        uint8_t md[32];
        unsigned mdlen = 0;
        size_t p = strlen(PREFIX);

        assert_true(len > p + HASH_HEX && memcmp(text, PREFIX, p) == 0);
        memset(text + p, '0', HASH_HEX);
        assert_true(EVP_Digest(text, len, md, &mdlen, EVP_sha256(), NULL) && mdlen == 32);
        for (unsigned i = 0; i < 32; i++) {
                text[p + 2 * i] = "0123456789abcdef"[md[i] >> 4];
                text[p + 2 * i + 1] = "0123456789abcdef"[md[i] & 15];
        }
}

/* Whether two JSON values are the same: the same members in any order, numbers by value (a
 * record edited by hand may say 10 for 10.0). The first difference is printed with its path. */
static bool json_same(struct json_object *a, struct json_object *b, const char *path) {
        enum json_type ta = json_object_get_type(a), tb = json_object_get_type(b);
        bool num_a = ta == json_type_int || ta == json_type_double, num_b = tb == json_type_int || tb == json_type_double;
        char sub[512];
        bool same;

        if (num_a && num_b)
                same = ta == json_type_int && tb == json_type_int ?
                       json_object_get_int64(a) == json_object_get_int64(b) &&
                       json_object_get_uint64(a) == json_object_get_uint64(b) :
                       json_object_get_double(a) == json_object_get_double(b);
        else if (ta != tb)
                same = false;
        else if (ta == json_type_object) {
                json_object_object_foreach(a, k, va) {
                        struct json_object *vb;

                        snprintf(sub, sizeof(sub), "%s.%s", path, k);
                        if (!json_object_object_get_ex(b, k, &vb)) {
                                print_error("%s: missing on the right\n", sub);
                                return false;
                        }
                        if (!json_same(va, vb, sub))
                                return false;
                }
                json_object_object_foreach(b, k2, vb2) {
                        (void) vb2;
                        if (!json_object_object_get_ex(a, k2, NULL)) {
                                print_error("%s.%s: missing on the left\n", path, k2);
                                return false;
                        }
                }
                return true;
        } else if (ta == json_type_array && json_object_array_length(a) == json_object_array_length(b)) {
                for (size_t i = 0; i < json_object_array_length(a); i++) {
                        snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
                        if (!json_same(json_object_array_get_idx(a, i), json_object_array_get_idx(b, i), sub))
                                return false;
                }
                return true;
        } else
                same = ta != json_type_array && json_object_equal(a, b);
        if (!same)
                print_error("%s: %s differs from %s\n", path, json_object_to_json_string(a),
                            json_object_to_json_string(b));
        return same;
}

/* The names of the seed records, sorted (malloc'd, NULL-terminated). */
static char **seed_names(size_t *n) {
        struct dirent **list = NULL;
        char **names;
        int count = scandir(corpus, &list, NULL, alphasort);
        size_t k = 0;

        if (count < 0) {
                fail_msg("%s: %s", corpus, strerror(errno));
                return NULL;
        }
        names = calloc((size_t) count + 1, sizeof(*names));
        assert_non_null(names);
        for (int i = 0; i < count; i++) {
                if (list[i]->d_name[0] != '.')
                        assert_non_null(names[k++] = strdup(list[i]->d_name));
                free(list[i]);
        }
        free(list);
        *n = k;
        return names;
}

static void names_free(char **names) {
        for (size_t i = 0; names && names[i]; i++)
                free(names[i]);
        free(names);
}

/* ---- round trips ---- */

/* What loading changes in the record of a run the daemon never saw end. */
static const char *const loader_changes[] = { "state", "reason", "ended_at", "interruptions", "history", NULL };

/* Every seed loads into a job, the job's record says what the seed said, and that record, read
 * back with its checksum, loads into a job that writes it again byte for byte. */
static void test_round_trip(void **state) {
        size_t n = 0;
        char **names = seed_names(&n);

        (void) state;
        assert_true(n > 0);
        for (size_t i = 0; i < n; i++) {
                struct json_object *seed = NULL, *rec, *again = NULL;
                struct job *job, *job2;
                char *text, *text1, *text2, err[256] = "";
                size_t len, len1, len2;
                const char *st;
                bool running;

                print_message("%s\n", names[i]);
                text = read_seed(names[i], &len);
                /* Hand-edited seeds do not hold their checksum: the fuzzer does not check it. */
                assert_int_equal(decode(text, len, false, &seed, err, sizeof(err)), 0);
                job = job_from_record(seed, NULL, err, sizeof(err));
                if (!job)
                        fail_msg("%s: refused: %s", names[i], err);

                /* The record of the loaded job. Records of earlier versions had no pauses,
                 * superseded_by nor keystream_backends; a run the daemon never saw end comes back
                 * interrupted (see test_interrupted); the hash is of the text. */
                rec = state_record_json(job);
                assert_non_null(rec);
                if (!json_object_object_get_ex(seed, "pauses", NULL))
                        json_object_object_add(seed, "pauses", json_object_new_int(0));
                if (!json_object_object_get_ex(seed, "superseded_by", NULL))
                        json_object_object_add(seed, "superseded_by", NULL);
                if (!json_object_object_get_ex(seed, "keystream_backends", NULL))
                        json_object_object_add(seed, "keystream_backends", json_object_new_array());
                /* Nor end_hook (issue 19): the loaded job has none to run for its end. */
                if (!json_object_object_get_ex(seed, "end_hook", NULL))
                        json_object_object_del(rec, "end_hook");
                st = json_object_get_string(json_object_object_get(seed, "state"));
                running = strcmp(st, "running") == 0 || strcmp(st, "flushing") == 0;
                json_object_object_del(seed, "sha256");
                json_object_object_del(rec, "sha256");
                for (size_t k = 0; running && loader_changes[k]; k++) {
                        json_object_object_del(seed, loader_changes[k]);
                        json_object_object_del(rec, loader_changes[k]);
                }
                /* The units done of a checkpoint past the last stage (a wipe that ended) are not
                 * read: there is nothing left to resume. */
                if (job->ckpt.stage >= job->n_stages) {
                        json_object_object_del(json_object_object_get(seed, "checkpoint"), "done");
                        json_object_object_del(json_object_object_get(rec, "checkpoint"), "done");
                }
                if (!json_same(seed, rec, names[i]))
                        fail_msg("%s: the loaded job's record differs from the seed", names[i]);

                /* Written, read back with its checksum, loaded and written again: the same. */
                text1 = job_text(job, &len1);
                assert_int_equal(decode(text1, len1, true, &again, err, sizeof(err)), 0);
                job2 = job_from_record(again, NULL, err, sizeof(err));
                if (!job2)
                        fail_msg("%s: its record refused: %s", names[i], err);
                text2 = job_text(job2, &len2);
                assert_int_equal(len1, len2);
                assert_memory_equal(text1, text2, len1);

                free(text2);
                free(text1);
                job_destroy(job2);
                job_destroy(job);
                state_record_cleanse(again);
                json_object_put(again);
                state_record_cleanse(rec);
                json_object_put(rec);
                state_record_cleanse(seed);
                json_object_put(seed);
                free(text);
        }
        names_free(names);
}

/* A run the daemon never saw end (killed, crashed) comes back interrupted, its checkpoint kept. */
static void test_interrupted(void **state) {
        struct json_object *seed = NULL, *rec, *history, *last, *ck;
        struct job *job;
        char *text, err[256] = "";
        size_t len;

        (void) state;
        text = read_seed(SEED_RUNNING, &len);
        assert_int_equal(decode(text, len, true, &seed, err, sizeof(err)), 0);
        assert_string_equal(json_object_get_string(json_object_object_get(seed, "state")), "running");
        job = job_from_record(seed, NULL, err, sizeof(err));
        assert_non_null(job);
        rec = state_record_json(job);
        assert_non_null(rec);

        assert_string_equal(json_object_get_string(json_object_object_get(rec, "state")), "interrupted");
        assert_non_null(strstr(json_object_get_string(json_object_object_get(rec, "reason")), "without saving"));
        assert_int_equal(json_object_get_int(json_object_object_get(rec, "interruptions")),
                         json_object_get_int(json_object_object_get(seed, "interruptions")) + 1);
        ck = json_object_object_get(rec, "checkpoint");
        /* It ended when it last saved its work. */
        assert_true(json_object_get_double(json_object_object_get(rec, "ended_at")) ==
                    json_object_get_double(json_object_object_get(ck, "at")));
        assert_true(json_same(json_object_object_get(ck, "done"),
                              json_object_object_get(json_object_object_get(seed, "checkpoint"), "done"), "done"));
        history = json_object_object_get(rec, "history");
        assert_int_equal(json_object_array_length(history),
                         json_object_array_length(json_object_object_get(seed, "history")) + 1);
        last = json_object_array_get_idx(history, json_object_array_length(history) - 1);
        assert_string_equal(json_object_get_string(json_object_object_get(last, "event")), "interrupted");
        assert_int_equal(json_object_get_uint64(json_object_object_get(last, "bytes_done")),
                         json_object_get_uint64(json_object_object_get(ck, "bytes_done")));

        state_record_cleanse(rec);
        json_object_put(rec);
        job_destroy(job);
        state_record_cleanse(seed);
        json_object_put(seed);
        free(text);
}

/* The keys of a record are overwritten before it is freed. */
static void test_cleanse(void **state) {
        struct json_object *rec = NULL, *key;
        char *text, err[256] = "";
        size_t len;

        (void) state;
        text = read_seed(SEED_DONE, &len);
        assert_int_equal(decode(text, len, true, &rec, err, sizeof(err)), 0);
        key = json_object_object_get(json_object_array_get_idx(json_object_object_get(rec, "passes"), 0), "key");
        assert_int_equal(json_object_get_string_len(key), 32);
        state_record_cleanse(rec);
        for (int i = 0; i < 32; i++)
                assert_int_equal(json_object_get_string(key)[i], 0);
        json_object_put(rec);
        free(text);
}

/* ---- refusals ---- */

/* The text of a record is checked before a field is read: the checksum, the format, the line. */
static void test_torn(void **state) {
        struct json_object *rec = NULL;
        char *text, *copy, *at, err[256];
        size_t len, p = strlen(PREFIX);

        (void) state;
        text = read_seed(SEED_DONE, &len);
        copy = malloc(len + 2);
        assert_non_null(copy);

        /* As written. */
        assert_int_equal(decode(text, len, true, &rec, err, sizeof(err)), 0);
        json_object_put(rec);

        /* One byte of the body changed: the checksum does not hold; sealed again, it is good. */
        memcpy(copy, text, len);
        at = strstr(copy, "\"/dev/loop5\"");
        assert_non_null(at);
        at[10] = '6';
        assert_int_equal(decode(copy, len, true, &rec, err, sizeof(err)), -EBADMSG);
        assert_string_equal(err, "checksum mismatch (torn or changed)");
        seal(copy, len);
        assert_int_equal(decode(copy, len, true, &rec, err, sizeof(err)), 0);
        assert_string_equal(json_object_get_string(json_object_object_get(rec, "device")), "/dev/loop6");
        json_object_put(rec);

        /* One digit of the checksum changed. */
        memcpy(copy, text, len);
        copy[p + 5] = copy[p + 5] == '0' ? '1' : '0';
        assert_int_equal(decode(copy, len, true, &rec, err, sizeof(err)), -EBADMSG);
        assert_string_equal(err, "checksum mismatch (torn or changed)");

        /* Cut short, without its newline, with a NUL in it, of another format. */
        assert_int_equal(decode(text, len / 2, true, &rec, err, sizeof(err)), -EBADMSG);
        assert_string_equal(err, "not a job record of format 2 (truncated or not ours)");
        assert_int_equal(decode(text, len - 1, false, &rec, err, sizeof(err)), -EBADMSG);
        assert_string_equal(err, "not a job record of format 2 (truncated or not ours)");
        memcpy(copy, text, len);
        copy[len / 2] = 0;
        assert_int_equal(decode(copy, len, false, &rec, err, sizeof(err)), -EBADMSG);
        assert_string_equal(err, "not a job record of format 2 (truncated or not ours)");
        memcpy(copy, text, len);
        assert_int_equal(memcmp(copy, "{\"format\":2,", 12), 0);
        copy[10] = '3';
        assert_int_equal(decode(copy, len, false, &rec, err, sizeof(err)), -EBADMSG);
        assert_string_equal(err, "not a job record of format 2 (truncated or not ours)");

        /* Sealed, but not one JSON object: the last brace replaced, or a byte after it. */
        memcpy(copy, text, len);
        assert_int_equal(copy[len - 2], '}');
        copy[len - 2] = ']';
        seal(copy, len);
        assert_int_equal(decode(copy, len, true, &rec, err, sizeof(err)), -EBADMSG);
        assert_string_equal(err, "not valid JSON");
        memcpy(copy, text, len - 1);
        memcpy(copy + len - 1, "x\n", 2);
        seal(copy, len + 1);
        assert_int_equal(decode(copy, len + 1, true, &rec, err, sizeof(err)), -EBADMSG);
        assert_string_equal(err, "not valid JSON");

        free(copy);
        free(text);
}

/* One field of a good record changed: at parent (members and array indexes split by '.'; "" is
 * the record), key set to the JSON value, or deleted when value is NULL. */
struct change {
        const char *parent;
        const char *key;
        const char *value;
        const char *want;               /* the field state_record_parse() names, or what
                                         * job_from_record() says when state_record_parse() takes it */
};

/* The record of a seed with one change, sealed again as the daemon writes it (malloc'd). */
static char *changed(const char *name, const struct change *c, size_t *len) {
        struct json_object *rec = NULL, *parent;
        char *seed, *text, *path, *save = NULL, err[256];
        size_t seed_len;

        seed = read_seed(name, &seed_len);
        assert_int_equal(decode(seed, seed_len, true, &rec, err, sizeof(err)), 0);
        parent = rec;
        path = strdup(c->parent);
        assert_non_null(path);
        for (char *part = strtok_r(path, ".", &save); part; part = strtok_r(NULL, ".", &save)) {
                parent = json_object_is_type(parent, json_type_array) ?
                         json_object_array_get_idx(parent, (size_t) atoi(part)) : json_object_object_get(parent, part);
                if (!parent)
                        fail_msg("%s: no %s in the record", c->parent, part);
        }
        free(path);
        if (c->value) {
                struct json_object *v = json_tokener_parse(c->value);

                if (!v && strcmp(c->value, "null") != 0)
                        fail_msg("%s: not JSON", c->value);
                assert_int_equal(json_object_object_add(parent, c->key, v), 0);
        } else {
                assert_true(json_object_object_get_ex(parent, c->key, NULL));
                json_object_object_del(parent, c->key);
        }
        text = state_record_text(rec, len);
        assert_non_null(text);
        state_record_cleanse(rec);
        json_object_put(rec);
        free(seed);
        return text;
}

static const struct change field_changes[] = {
        /* The sanitization record (issue 20): an object of record text, a batch of 32 hex digits. */
        { "", "record", "5", "record" },
        { "", "record", "{\"batch\":\"0123\"}", "record" },
        { "", "record", "{\"batch\":\"5D41402ABC4B2A76B9719D911017C592\"}", "record" },
        { "", "record", "{\"customer\":\"a\\u0001b\"}", "record" },
        { "", "record", "{\"note\":\"\"}", "record" },
        { "", "record", "{\"operator\":{\"name\":7}}", "record" },
        { "", "record", "{\"verifier\":[]}", "record" },
        /* Out of range. */
        { "", "id", "-1", "id" },
        { "", "id", "18446744073709551615", "id" },
        { "", "sector", "65537", "sector" },
        { "", "queue_depth", "257", "queue_depth" },
        { "", "verify_percent", "1e13", "verify_percent" },
        { "", "started_at", "-1.5", "started_at" },
        { "identity", "major", "4096", "major" },
        { "identity", "size", "1152921504606846977", "size" },
        { "checkpoint", "stage", "130", "stage" },
        { "checkpoint.verify", "percent", "100.5", "percent" },
        { "history.0", "pass", "65", "pass" },
        { "", "error", "{\"errno\":4096,\"message\":null}", "errno" },
        /* Of the wrong type. */
        { "", "id", "\"1\"", "id" },
        { "", "device", "7", "device" },
        { "", "device", "null", "device" },
        { "", "reported", "1", "reported" },
        { "", "sample_seed", "1.5", "sample_seed" },
        { "", "passes", "{}", "passes" },
        { "", "identity", "[]", "identity" },
        { "", "error", "\"EIO\"", "error" },
        { "passes.0", "written", "\"yes\"", "written" },
        { "", "history", "[1]", "history" },
        { "", "bad_ranges", "[[0,512]]", "bad_ranges" },
        /* Missing. */
        { "", "device", NULL, "device" },
        { "", "state", NULL, "state" },
        { "", "checkpoint", NULL, "checkpoint" },
        { "identity", "size", NULL, "size" },
        { "passes.0", "written", NULL, "written" },
        { "history.0", "event", NULL, "event" },
        /* Not one of the values it can have. */
        { "", "cipher", "\"rot13\"", "cipher" },
        { "", "cipher", "\"auto\"", "cipher" },
        { "", "verify", "\"often\"", "verify" },
        { "", "state", "\"sleeping\"", "state" },
        { "", "passes", "[]", "passes" },
        { "passes.0", "pattern", "\"bogus\"", "pattern" },
        { "passes.0", "key", "\"00\"", "key" },
        { "passes.0", "key", "null", "key" },
        { "history.0", "event", "\"exploded\"", "event" },
        { "history.0", "phase", "\"erase\"", "phase" },
        { "", "error", "{\"errno\":0,\"message\":null}", "errno" },
        { "", "bad_ranges", "[{\"offset\":1,\"length\":512}]", "bad_ranges" },
        { "", "keystream_backends", "[\"rot13\"]", "keystream_backends" },
        { "", "keystream_backends", "[\"auto\"]", "keystream_backends" },
        { "", "keystream_backends", "[\"gcrypt\",\"gcrypt\"]", "keystream_backends" },
        { "", "keystream_backends", "[1]", "keystream_backends" },
        { "", "keystream_backends", "\"gcrypt\"", "keystream_backends" },
};

/* A record whose checksum holds but one field does not: -EBADMSG, the field named. */
static void test_field_refused(void **state) {
        (void) state;
        for (size_t i = 0; i < sizeof(field_changes) / sizeof(field_changes[0]); i++) {
                const struct change *c = &field_changes[i];
                struct json_object *rec = NULL;
                struct job *job;
                char *text, want[128], err[256];
                size_t len;

                print_message("%s%s%s %s\n", c->parent, c->parent[0] ? "." : "", c->key, c->value ? c->value : "(deleted)");
                text = changed(SEED_DONE, c, &len);
                assert_int_equal(decode(text, len, true, &rec, err, sizeof(err)), 0);
                snprintf(want, sizeof(want), "field \"%s\" is missing or wrong", c->want);
                job = job_blank();
                assert_int_equal(state_record_parse(rec, job, err, sizeof(err)), -EBADMSG);
                assert_string_equal(err, want);
                job_destroy(job);
                err[0] = 0;
                assert_null(job_from_record(rec, NULL, err, sizeof(err)));
                assert_string_equal(err, want);
                state_record_cleanse(rec);
                json_object_put(rec);
                free(text);
        }
}

static const struct change plan_changes[] = {
        { "", "id", "0", "job id 0 is not new" },
        { "", "chunk_size", "12345", "its chunk plan does not fit its device" },
        { "identity", "size", "0", "its chunk plan does not fit its device" },
        { "", "io_size", "1000", "field \"io_size\" is wrong" },
        { "checkpoint", "stage", "3", "its checkpoint's stage does not exist" },
};

/* Fields that are each good but do not fit together: state_record_parse() takes them,
 * job_from_record() does not (it has no code to return, only the reason). */
static void test_plan_refused(void **state) {
        (void) state;
        for (size_t i = 0; i < sizeof(plan_changes) / sizeof(plan_changes[0]); i++) {
                const struct change *c = &plan_changes[i];
                struct json_object *rec = NULL;
                struct job *job;
                char *text, err[256];
                size_t len;

                print_message("%s%s%s %s\n", c->parent, c->parent[0] ? "." : "", c->key, c->value);
                text = changed(SEED_DONE, c, &len);
                assert_int_equal(decode(text, len, true, &rec, err, sizeof(err)), 0);
                job = job_blank();
                assert_int_equal(state_record_parse(rec, job, err, sizeof(err)), 0);
                job_destroy(job);
                err[0] = 0;
                assert_null(job_from_record(rec, NULL, err, sizeof(err)));
                assert_string_equal(err, c->want);
                state_record_cleanse(rec);
                json_object_put(rec);
                free(text);
        }
}

/* The units done of a checkpoint's stage ([first, count] pairs): within the stage, ascending and
 * apart. SEED_RUNNING is in its first stage, of 4 units (256 MiB in chunks of 64 MiB). */
static void test_units_refused(void **state) {
        static const char *const good[] = { "[]", "[[0,4]]", "[[0,1],[2,2]]", "[[3,1]]" };
        static const char *const bad[] = { "[[0,5]]", "[[4,1]]", "[[2,1],[0,1]]", "[[0,2],[1,1]]", "[[0,0]]",
                                           "[[-1,1]]", "[[0]]", "[[0,1,1]]", "[0]", "[[0,\"1\"]]", "[[0,1.0]]" };

        (void) state;
        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]) + sizeof(bad) / sizeof(bad[0]); i++) {
                bool ok = i < sizeof(good) / sizeof(good[0]);
                const struct change c = { "checkpoint", "done", ok ? good[i] : bad[i - sizeof(good) / sizeof(good[0])],
                                          "its checkpoint's units are out of range" };
                struct json_object *rec = NULL;
                struct job *job;
                char *text, err[256];
                size_t len;

                print_message("checkpoint.done %s\n", c.value);
                text = changed(SEED_RUNNING, &c, &len);
                assert_int_equal(decode(text, len, true, &rec, err, sizeof(err)), 0);
                err[0] = 0;
                job = job_from_record(rec, NULL, err, sizeof(err));
                if (ok) {
                        if (!job)
                                fail_msg("checkpoint.done %s: refused: %s", c.value, err);
                        job_destroy(job);
                } else {
                        assert_null(job);
                        assert_string_equal(err, c.want);
                }
                state_record_cleanse(rec);
                json_object_put(rec);
                free(text);
        }
}

/* Reading a record file: what is not a regular file, or is empty, is refused before decoding. */
static void test_read_file(void **state) {
        const char *tmp = getenv("TMPDIR");
        char dir[PATH_MAX], err[256];
        struct json_object *rec = NULL;
        char *text;
        size_t len;
        int dfd, fd;

        (void) state;
        snprintf(dir, sizeof(dir), "%s/test-record.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
        assert_non_null(mkdtemp(dir));
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(dfd >= 0);
        text = read_seed(SEED_DONE, &len);
        assert_true(state_write_atomic(dir, "1.json", text, len) == 0);
        fd = openat(dfd, "empty.json", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(mkdirat(dfd, "dir.json", 0700), 0);
        assert_int_equal(symlinkat("1.json", dfd, "link.json"), 0);

        assert_int_equal(state_record_read(dfd, "1.json", &rec, err, sizeof(err)), 0);
        assert_int_equal(json_object_get_int(json_object_object_get(rec, "id")), 1);
        state_record_cleanse(rec);
        json_object_put(rec);
        assert_int_equal(state_record_read(dfd, "empty.json", &rec, err, sizeof(err)), -EBADMSG);
        assert_string_equal(err, "empty");
        assert_int_equal(state_record_read(dfd, "dir.json", &rec, err, sizeof(err)), -EBADMSG);
        assert_string_equal(err, "not a regular file");
        assert_int_equal(state_record_read(dfd, "link.json", &rec, err, sizeof(err)), -ELOOP);
        assert_int_equal(state_record_read(dfd, "missing.json", &rec, err, sizeof(err)), -ENOENT);

        assert_int_equal(unlinkat(dfd, "link.json", 0), 0);
        assert_int_equal(unlinkat(dfd, "dir.json", AT_REMOVEDIR), 0);
        assert_int_equal(unlinkat(dfd, "empty.json", 0), 0);
        assert_int_equal(unlinkat(dfd, "1.json", 0), 0);
        close(dfd);
        assert_int_equal(rmdir(dir), 0);
        free(text);
}

int main(void) {
        const char *top = getenv("top_srcdir");
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_round_trip),
                cmocka_unit_test(test_interrupted),
                cmocka_unit_test(test_cleanse),
                cmocka_unit_test(test_torn),
                cmocka_unit_test(test_field_refused),
                cmocka_unit_test(test_plan_refused),
                cmocka_unit_test(test_units_refused),
                cmocka_unit_test(test_read_file),
        };

        snprintf(corpus, sizeof(corpus), "%s/tests/fuzz/corpus-record", top && top[0] ? top : ".");
        return cmocka_run_group_tests(tests, NULL, NULL);
}
