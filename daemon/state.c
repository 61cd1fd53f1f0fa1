/* Job records on disk (STATE_DIR/jobs/ID.json): everything a job needs to go on after the daemon
 * stopped, crashed or the host rebooted. The record is one line of JSON whose first member is
 * the format and the second the SHA-256 of the line with that hash zeroed, so that a torn or
 * edited file is told from a good one before a single field is trusted; then every field is
 * checked for type and range. The keys are in it: the directory is 0700, the file 0600. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "atomicfile.h"
#include "cleanup.h"
#include "strutil.h"
#include "daemon.h"
#include "protocol.h"

#define RECORD_PREFIX "{\"format\":2,\"sha256\":\""
#define RECORD_HASH_HEX 64

int state_write_atomic(const char *dir, const char *name, const char *text, size_t len) {
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        return dfd < 0 ? -errno : atomic_write_at(dfd, name, text, len, 0600, false);
}

/* ---- writing ---- */

static void add(struct json_object *o, const char *k, struct json_object *v) {
        json_object_object_add(o, k, v);
}

static struct json_object *str_or_null(const char *s) {
        return s ? json_object_new_string(s) : NULL;
}

static struct json_object *verify_json(const struct verify_result *v) {
        struct json_object *o = json_object_new_object(), *first = json_object_new_array();

        if (!o || !first) {
                json_object_put(o);
                json_object_put(first);
                return NULL;
        }
        add(o, "ran", json_object_new_boolean(v->ran));
        add(o, "mode", json_object_new_string(verify_mode_name(v->mode)));
        add(o, "percent", json_object_new_double(v->percent));
        add(o, "seed", json_object_new_uint64(v->seed));
        add(o, "subsections", json_object_new_uint64(v->subsections));
        add(o, "coverage", json_object_new_uint64(v->coverage));
        add(o, "mismatched", json_object_new_uint64(v->mismatched));
        for (unsigned i = 0; i < v->n_first && i < VERIFY_FIRST_MAX; i++)
                json_object_array_add(first, json_object_new_uint64(v->first[i]));
        add(o, "first", first);
        add(o, "started", json_object_new_double(v->started));
        add(o, "at", json_object_new_double(v->at));
        /* Absent for a run that compared all it planned (records before it had none). */
        if (v->end != VERIFY_END_COMPLETE)
                add(o, "end", json_object_new_string(verify_result_word(v->end, v->mismatched != 0)));
        return o;
}

/* Runs of set bits as [first, count] pairs. */
static struct json_object *bits_json(const uint64_t *bits, uint64_t n) {
        struct json_object *a = json_object_new_array();
        uint64_t i = 0;

        while (a && bits && i < n) {
                uint64_t first;
                struct json_object *pair;

                if (!(bits[i / 64] >> (i % 64) & 1)) {
                        i++;
                        continue;
                }
                first = i;
                while (i < n && (bits[i / 64] >> (i % 64) & 1))
                        i++;
                pair = json_object_new_array();
                json_object_array_add(pair, json_object_new_uint64(first));
                json_object_array_add(pair, json_object_new_uint64(i - first));
                json_object_array_add(a, pair);
        }
        return a;
}

struct json_object *state_bad_ranges_json(const struct job *job) {
        struct json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < job->n_bad; i++) {
                struct json_object *o = json_object_new_object();

                if (!o)
                        break;
                add(o, "offset", json_object_new_uint64(job->bad[i].offset));
                add(o, "length", json_object_new_uint64(job->bad[i].length));
                json_object_array_add(a, o);
        }
        return a;
}

/* A firmware erase pass: its command (with the ATA password in the record: a resume removes it),
 * whether it started, what the drive said and the proof. */
struct json_object *state_fw_json(const struct job_fw *f, bool record) {
        struct json_object *o = json_object_new_object(), *h;
        char hex[20];

        if (!o)
                return NULL;
        add(o, "command", fw_command_json(&f->cmd, record));
        add(o, "started", json_object_new_boolean(f->started));
        add(o, "started_at", f->started_at > 0 ? json_object_new_double(f->started_at) : NULL);
        add(o, "ended_at", f->ended_at > 0 ? json_object_new_double(f->ended_at) : NULL);
        add(o, "drive_status", json_object_new_string(fw_run_state_name(f->status.state)));
        add(o, "drive_status_text", f->status.text[0] ? json_object_new_string(f->status.text) : NULL);
        add(o, "resume_note", f->note[0] ? json_object_new_string(f->note) : NULL);
        if (record) {
                h = json_object_new_array();
                for (unsigned i = 0; h && i < f->n_samples; i++) {
                        snprintf(hex, sizeof(hex), "%016" PRIx64, f->before[i]);
                        json_object_array_add(h, json_object_new_string(hex));
                }
                add(o, "sample_hashes", h);
        }
        add(o, "markers", json_object_new_int((int) f->markers));
        add(o, "proven", json_object_new_boolean(f->proven));
        if (f->proven) {
                add(o, "markers_survived", json_object_new_int((int) f->markers_survived));
                add(o, "samples", json_object_new_int((int) f->n_samples));
                add(o, "samples_blank_before", json_object_new_int((int) f->samples_blank));
                add(o, "samples_unchanged", json_object_new_int((int) f->samples_unchanged));
                add(o, "returns", json_object_new_string(f->returns));
        }
        return o;
}

struct json_object *state_hidden_json(const struct job_hidden_area *h) {
        struct json_object *o;

        if (!h->found || !(o = json_object_new_object()))
                return NULL;
        add(o, "current_max_sectors", json_object_new_uint64(h->current_max));
        add(o, "native_max_sectors", json_object_new_uint64(h->native_max));
        add(o, "dco_max_sectors", h->dco_max ? json_object_new_uint64(h->dco_max) : NULL);
        add(o, "action", json_object_new_string(h->action));
        add(o, "size_before", json_object_new_uint64(h->size_before));
        add(o, "size_after", json_object_new_uint64(h->size_after));
        add(o, "note", h->note[0] ? json_object_new_string(h->note) : NULL);
        return o;
}

struct json_object *state_history_json(const struct job *job) {
        struct json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < job->n_history; i++) {
                const struct job_event *e = &job->history[i];
                struct json_object *o = json_object_new_object();

                if (!o)
                        break;
                add(o, "event", json_object_new_string(job_event_name(e->kind)));
                add(o, "at", json_object_new_double(e->at));
                add(o, "node", str_or_null(e->node));
                add(o, "reason", str_or_null(e->reason));
                add(o, "pass", json_object_new_int((int) e->pass));
                add(o, "phase", e->phase == STAGE_WRITE ? json_object_new_string("write") :
                                e->phase == STAGE_VERIFY ? json_object_new_string("verify") : NULL);
                add(o, "bytes_done", json_object_new_uint64(e->bytes_done));
                json_object_array_add(a, o);
        }
        return a;
}

struct json_object *state_backends_json(unsigned bits) {
        struct json_object *a = json_object_new_array();

        if (!a)
                return NULL;
        for (enum keystream_backend b = KEYSTREAM_BACKEND_OPENSSL; b < _KEYSTREAM_BACKEND_MAX; b++)
                if (bits & (1u << b) && json_object_array_add(a, json_object_new_string(keystream_backend_name(b))) < 0) {
                        json_object_put(a);
                        return NULL;
                }
        return a;
}

struct json_object *state_record_json(struct job *job) {
        _cleanup_json_ struct json_object *o = json_object_new_object();
        struct json_object *passes, *runs, *ck, *e;
        bool reverifying;
        char keyhex[2 * KEYSTREAM_KEY_MAX + 1], name[2 * METHOD_PATTERN_MAX + 8];

        if (!o)
                return NULL;
        /* The first two members are fixed: state_record_text() fills in the hash. */
        add(o, "format", json_object_new_int(STATE_RECORD_FORMAT));
        add(o, "sha256", json_object_new_string(""));
        add(o, "id", json_object_new_uint64(job->id));
        add(o, "device", json_object_new_string(job->device));
        add(o, "method", json_object_new_string(job->method));
        /* Only a policy's job has one: a client's record stays as it was before bay policies. */
        if (job->policy)
                add(o, "policy", json_object_new_string(job->policy));
        /* Since issue 20: the sanitization record as submitted (older records have none: nothing
         * recorded, no batch). */
        if (job->record.batch[0]) {
                e = json_object_new_object();
                if (e && job_record_json_add(&job->record, e) < 0) {
                        json_object_put(e);
                        e = NULL;
                }
                add(o, "record", e);
        }
        add(o, "cipher", json_object_new_string(keystream_cipher_name(job->cipher)));
        add(o, "verify", json_object_new_string(verify_mode_name(job->verify)));
        add(o, "verify_percent", json_object_new_double(job->verify_percent));
        add(o, "sample_percent", json_object_new_double(job->sample.percent));
        add(o, "sample_seed", json_object_new_uint64(job->sample.seed));
        add(o, "queue_depth", json_object_new_int64(job->queue_depth));
        add(o, "io_size", json_object_new_int64(job->piece));
        add(o, "max_rate", json_object_new_uint64(job->rate.bps));
        add(o, "max_bad", json_object_new_uint64(job->max_bad));
        add(o, "chunk_size", json_object_new_uint64(job->plan.chunk_size));
        add(o, "plan_io_size", json_object_new_int64(job->plan.io_size));
        add(o, "sector", json_object_new_int64(job->plan.sector));
        add(o, "identity", device_identity_json(&job->info));
        add(o, "signatures_before", device_signatures_json(job->sigs_before, job->n_sigs_before));
        add(o, "started_at", json_object_new_double(job->started_at));
        add(o, "reported", json_object_new_boolean(job->reported));
        add(o, "report_file", str_or_null(job->report_file));
        /* Since 0.1 (issue 18): absent in older records, which read as "not tried". */
        if (job->partitions_reread)
                add(o, "partitions_reread", json_object_new_int(job->partitions_reread));

        pthread_mutex_lock(&job->lock);
        /* A later verification in progress is not part of the wipe: the record keeps how the wipe
         * ended, and its error. */
        reverifying = job->reverify && !job_state_is_final(job->state);
        add(o, "state", json_object_new_string(job_state_name(reverifying ? job->wipe_state : job->state)));
        add(o, "reason", str_or_null(job->reason));
        if (reverifying ? job->wipe_error : job->error) {
                e = json_object_new_object();
                if (e) {
                        add(e, "errno", json_object_new_int(-(reverifying ? job->wipe_error : job->error)));
                        add(e, "message", str_or_null(reverifying ? job->wipe_error_msg : job->error_msg));
                }
                add(o, "error", e);
        } else
                add(o, "error", NULL);
        passes = json_object_new_array();
        for (unsigned i = 0; passes && i < job->n_passes; i++) {
                const struct job_pass *jp = &job->passes[i];
                struct json_object *p = json_object_new_object();

                if (!p)
                        break;
                add(p, "pattern", json_object_new_string(pass_name(&jp->pass, name, sizeof(name))));
                hex_encode(keyhex, jp->key, jp->key_len);
                add(p, "key", jp->key_len ? json_object_new_string(keyhex) : NULL);
                OPENSSL_cleanse(keyhex, sizeof(keyhex));
                add(p, "written", json_object_new_boolean(jp->written));
                add(p, "verified", jp->verified.ran ? verify_json(&jp->verified) : NULL);
                if (pass_op_firmware(jp->pass.op))
                        add(p, "firmware", state_fw_json(&jp->fw, true));
                json_object_array_add(passes, p);
        }
        add(o, "passes", passes);
        if (job->purge_fallback)
                add(o, "purge_fallback", json_object_new_string(job->purge_fallback));
        if (job->hidden.found)
                add(o, "hidden_area", state_hidden_json(&job->hidden));
        runs = json_object_new_array();
        for (size_t i = 0; runs && i < job->n_runs; i++)
                json_object_array_add(runs, verify_json(&job->runs[i]));
        add(o, "runs", runs);
        ck = json_object_new_object();
        if (ck) {
                add(ck, "stage", json_object_new_int((int) job->ckpt.stage));
                add(ck, "done", bits_json(job->ckpt.bits, job->n_unit_words * 64));
                add(ck, "bytes_done", json_object_new_uint64(job->ckpt.bytes_done));
                add(ck, "bytes_written", json_object_new_uint64(job->ckpt.bytes_written));
                add(ck, "verify", verify_json(&job->ckpt.verify));
                add(ck, "at", json_object_new_double(job->ckpt.at));
        }
        add(o, "checkpoint", ck);
        add(o, "signatures_after", job->sigs_checked ? device_signatures_json(job->sigs_after, job->n_sigs_after) : NULL);
        add(o, "wipe_started", json_object_new_double(job->wipe_started));
        add(o, "wipe_ended", json_object_new_double(job->wipe_ended));
        add(o, "wipe_work", json_object_new_uint64(job->wipe_work));
        add(o, "ended_at", json_object_new_double(job->ended_at));
        add(o, "history", state_history_json(job));
        add(o, "bad_ranges", state_bad_ranges_json(job));
        add(o, "interruptions", json_object_new_int((int) job->interruptions));
        add(o, "pauses", json_object_new_int((int) job->pauses));
        add(o, "keystream_backends", state_backends_json(atomic_load(&job->keystream_backends)));
        add(o, "resumes", json_object_new_int((int) job->resumes));
        add(o, "superseded_by", job->superseded_by ? json_object_new_uint64(job->superseded_by) : NULL);
        pthread_mutex_unlock(&job->lock);
        /* Since issue 19: the end hook's outcome (main thread's fields). */
        add(o, "end_hook", hook_json(job, true));
        /* Since issue 20: the drive's health before and after (smart.c). */
        smart_record_add(job, o);
        return TAKE_PTR(o);
}

static int record_hash(const char *text, size_t len, char out[RECORD_HASH_HEX + 1]) {
        uint8_t md[32];
        unsigned mdlen = 0;

        if (!EVP_Digest(text, len, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32)
                return -EIO;
        hex_encode(out, md, 32);
        return 0;
}

char *state_record_text(struct json_object *rec, size_t *len) {
        char zeros[RECORD_HASH_HEX + 1], sum[RECORD_HASH_HEX + 1];
        const char *s;
        char *text;
        size_t n;

        memset(zeros, '0', RECORD_HASH_HEX);
        zeros[RECORD_HASH_HEX] = 0;
        if (json_object_object_add(rec, "sha256", json_object_new_string(zeros)) < 0)
                return NULL;
        s = json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!s || strncmp(s, RECORD_PREFIX, strlen(RECORD_PREFIX)) != 0)
                return NULL;
        n = strlen(s);
        text = malloc(n + 2);
        if (!text)
                return NULL;
        memcpy(text, s, n);
        /* json-c keeps its own copy of the text, keys and all. */
        OPENSSL_cleanse((void *) s, n);
        text[n++] = '\n';
        text[n] = 0;
        /* The hash covers the whole line, itself zeroed. */
        if (record_hash(text, n, sum) < 0) {
                free(text);
                return NULL;
        }
        memcpy(text + strlen(RECORD_PREFIX), sum, RECORD_HASH_HEX);
        *len = n;
        return text;
}

void state_record_cleanse(struct json_object *rec) {
        struct json_object *passes = rec ? json_object_object_get(rec, "passes") : NULL;

        for (size_t i = 0; passes && json_object_is_type(passes, json_type_array) && i < json_object_array_length(passes); i++) {
                struct json_object *k = json_object_object_get(json_object_array_get_idx(passes, i), "key");

                if (k && json_object_is_type(k, json_type_string))
                        OPENSSL_cleanse((void *) json_object_get_string(k), (size_t) json_object_get_string_len(k));
        }
}

/* ---- reading ---- */

int state_record_read(int dirfd, const char *name, struct json_object **ret, char *err, size_t err_len) {
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        struct stat st;
        int r;

        if (fd < 0 || fstat(fd, &st) < 0) {
                snprintf(err, err_len, "cannot read: %s", strerror(errno));
                return -errno;
        }
        if (!S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t) st.st_size > STATE_RECORD_MAX) {
                snprintf(err, err_len, "%s", !S_ISREG(st.st_mode) ? "not a regular file" :
                         st.st_size <= 0 ? "empty" : "too large");
                return -EBADMSG;
        }
        text = malloc((size_t) st.st_size + 1);
        if (!text)
                return -ENOMEM;
        while (len < (size_t) st.st_size) {
                ssize_t n = read(fd, text + len, (size_t) st.st_size - len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        snprintf(err, err_len, "cannot read: %s", strerror(errno));
                        return -errno;
                }
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        text[len] = 0;
        r = state_record_decode(text, len, true, ret, err, err_len);
        /* The keys are in it. */
        OPENSSL_cleanse(text, len);
        return r;
}

int state_record_decode(char *text, size_t len, bool check_sum, struct json_object **ret, char *err, size_t err_len) {
        char sum[RECORD_HASH_HEX + 1], want[RECORD_HASH_HEX + 1];
        size_t p = strlen(RECORD_PREFIX);
        struct json_tokener *tok;
        struct json_object *o;

        if (len < p + RECORD_HASH_HEX + 2 || len > STATE_RECORD_MAX || memcmp(text, RECORD_PREFIX, p) != 0 ||
            text[len - 1] != '\n' || memchr(text, 0, len)) {
                snprintf(err, err_len, "not a job record of format %d (truncated or not ours)", STATE_RECORD_FORMAT);
                return -EBADMSG;
        }
        memcpy(want, text + p, RECORD_HASH_HEX);
        want[RECORD_HASH_HEX] = 0;
        memset(text + p, '0', RECORD_HASH_HEX);
        if (check_sum && record_hash(text, len, sum) < 0)
                return -EIO;
        if (check_sum && strcmp(sum, want) != 0) {
                snprintf(err, err_len, "checksum mismatch (torn or changed)");
                return -EBADMSG;
        }
        tok = json_tokener_new();
        if (!tok) {
                OPENSSL_cleanse(text, len);
                return -ENOMEM;
        }
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        o = json_tokener_parse_ex(tok, text, (int) len - 1);
        if (!o || json_tokener_get_error(tok) != json_tokener_success ||
            json_tokener_get_parse_end(tok) != len - 1 || !json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                json_tokener_free(tok);
                snprintf(err, err_len, "not valid JSON");
                return -EBADMSG;
        }
        json_tokener_free(tok);
        /* The keys are in it. */
        OPENSSL_cleanse(text, len);
        *ret = o;
        return 0;
}

/* A field reader that remembers the first problem: parse functions go on and check p->bad at the end. */
struct parser {
        const char *bad;                /* the first field that was missing or wrong */
};

static struct json_object *field(struct parser *p, struct json_object *o, const char *key, enum json_type type,
                                 bool nullable) {
        struct json_object *v = NULL;

        if (!o || !json_object_object_get_ex(o, key, &v)) {
                if (!p->bad)
                        p->bad = key;
                return NULL;
        }
        if (!v && nullable)
                return NULL;
        if (!json_object_is_type(v, type) && !(type == json_type_double && json_object_is_type(v, json_type_int))) {
                if (!p->bad)
                        p->bad = key;
                return NULL;
        }
        return v;
}

static uint64_t get_u64(struct parser *p, struct json_object *o, const char *key, uint64_t max) {
        struct json_object *v = field(p, o, key, json_type_int, false);
        uint64_t x;

        if (!v)
                return 0;
        errno = 0;
        if (json_object_get_int64(v) < 0 && json_object_get_uint64(v) <= INT64_MAX) {
                if (!p->bad)
                        p->bad = key;
                return 0;
        }
        x = json_object_get_uint64(v);
        if (errno || x > max) {
                if (!p->bad)
                        p->bad = key;
                return 0;
        }
        return x;
}

static double get_double(struct parser *p, struct json_object *o, const char *key) {
        struct json_object *v = field(p, o, key, json_type_double, false);
        double d = v ? json_object_get_double(v) : 0.0;

        if (v && !(d >= 0.0 && d < 1e13)) {
                if (!p->bad)
                        p->bad = key;
                return 0.0;
        }
        return d;
}

static bool get_bool(struct parser *p, struct json_object *o, const char *key) {
        struct json_object *v = field(p, o, key, json_type_boolean, false);

        return v && json_object_get_boolean(v);
}

/* A string (copied) or NULL when null/absent-and-nullable; *ok false on a wrong type. */
static char *get_str(struct parser *p, struct json_object *o, const char *key, bool nullable) {
        struct json_object *v = field(p, o, key, json_type_string, nullable);
        char *s;

        if (!v)
                return NULL;
        s = strdup(json_object_get_string(v));
        if (!s && !p->bad)
                p->bad = "(out of memory)";
        return s;
}

/* A firmware pass's record (state_fw_json). */
static void parse_fw(struct parser *p, struct json_object *o, struct job_fw *f) {
        struct json_object *v;
        char *t;

        if (!o)
                return;
        if (fw_command_from_json(field(p, o, "command", json_type_object, false), &f->cmd) < 0 && !p->bad)
                p->bad = "command";
        f->started = get_bool(p, o, "started");
        v = field(p, o, "started_at", json_type_double, true);
        f->started_at = v ? json_object_get_double(v) : 0;
        v = field(p, o, "ended_at", json_type_double, true);
        f->ended_at = v ? json_object_get_double(v) : 0;
        v = field(p, o, "sample_hashes", json_type_array, false);
        for (size_t i = 0; v && i < json_object_array_length(v) && i < FW_SAMPLES; i++) {
                struct json_object *h = json_object_array_get_idx(v, i);

                if (!json_object_is_type(h, json_type_string)) {
                        if (!p->bad)
                                p->bad = "sample_hashes";
                        break;
                }
                {
                        const char *hex = json_object_get_string(h);
                        char *end;

                        errno = 0;
                        f->before[i] = strtoull(hex, &end, 16);
                        if (errno || end == hex || *end) {
                                if (!p->bad)
                                        p->bad = "sample_hashes";
                                break;
                        }
                }
                f->n_samples = (unsigned) i + 1;
        }
        f->markers = (unsigned) get_u64(p, o, "markers", FW_MARKERS);
        /* A started step has its proof's before: nothing else could be checked after it. */
        if (f->started && (f->n_samples != FW_SAMPLES || f->markers == 0) && !p->bad)
                p->bad = "sample_hashes";
        f->proven = get_bool(p, o, "proven");
        if (f->proven) {
                f->markers_survived = (unsigned) get_u64(p, o, "markers_survived", FW_MARKERS);
                f->samples_blank = (unsigned) get_u64(p, o, "samples_blank_before", FW_SAMPLES);
                f->samples_unchanged = (unsigned) get_u64(p, o, "samples_unchanged", FW_SAMPLES);
                t = get_str(p, o, "returns", false);
                if (t)
                        snprintf(f->returns, sizeof(f->returns), "%s", t);
                free(t);
        }
        t = get_str(p, o, "drive_status_text", true);
        if (t)
                snprintf(f->status.text, sizeof(f->status.text), "%s", t);
        free(t);
        t = get_str(p, o, "resume_note", true);
        if (t)
                snprintf(f->note, sizeof(f->note), "%s", t);
        free(t);
        v = field(p, o, "drive_status", json_type_string, false);
        if (v) {
                const char *st = json_object_get_string(v);

                f->status.state = strcmp(st, "running") == 0 ? FW_RUN_RUNNING : strcmp(st, "done") == 0 ? FW_RUN_DONE :
                                  strcmp(st, "failed") == 0 ? FW_RUN_FAILED : FW_RUN_UNKNOWN;
        }
        f->status.fraction = -1;
}

static void parse_verify(struct parser *p, struct json_object *o, struct verify_result *v) {
        struct json_object *first;
        const char *mode;
        double pct;

        if (!o)
                return;
        *v = (struct verify_result) {};
        v->ran = get_bool(p, o, "ran");
        first = field(p, o, "mode", json_type_string, false);
        mode = first ? json_object_get_string(first) : "none";
        if (verify_mode_parse(mode, &v->mode, &pct) < 0 && !p->bad)
                p->bad = "mode";
        v->percent = get_double(p, o, "percent");
        if (v->percent > 100.0 && !p->bad)
                p->bad = "percent";
        v->seed = get_u64(p, o, "seed", UINT64_MAX);
        v->subsections = get_u64(p, o, "subsections", UINT64_MAX);
        v->coverage = get_u64(p, o, "coverage", UINT64_MAX);
        v->mismatched = get_u64(p, o, "mismatched", UINT64_MAX);
        first = field(p, o, "first", json_type_array, false);
        if (first) {
                size_t n = json_object_array_length(first);

                if (n > VERIFY_FIRST_MAX && !p->bad)
                        p->bad = "first";
                for (size_t i = 0; i < n && i < VERIFY_FIRST_MAX; i++) {
                        struct json_object *x = json_object_array_get_idx(first, i);

                        if (!json_object_is_type(x, json_type_int)) {
                                if (!p->bad)
                                        p->bad = "first";
                                break;
                        }
                        v->first[v->n_first++] = json_object_get_uint64(x);
                }
        }
        v->started = get_double(p, o, "started");
        v->at = get_double(p, o, "at");
        /* Optional: only a run that ended early has it. */
        first = json_object_object_get(o, "end");
        if (first) {
                const char *e = json_object_is_type(first, json_type_string) ? json_object_get_string(first) : "";

                if (verify_end_from_name(e, &v->end) < 0 && !p->bad)
                        p->bad = "end";
        }
}

static void parse_identity(struct parser *p, struct json_object *o, struct device_identity *id) {
        struct json_object *links, *loop, *part, *v;
        uint64_t ma, mi;

        if (!o)
                return;
        id->node = get_str(p, o, "node", false);
        id->name = get_str(p, o, "name", false);
        ma = get_u64(p, o, "major", 0xfff);
        mi = get_u64(p, o, "minor", 0xfffff);
        id->rdev = makedev((unsigned) ma, (unsigned) mi);
        /* Below 2^60 bytes: no plan arithmetic can wrap. */
        id->size = get_u64(p, o, "size", 1ULL << 60);
        id->logical_sector = (uint32_t) get_u64(p, o, "logical_sector", 65536);
        id->physical_sector = (uint32_t) get_u64(p, o, "physical_sector", UINT32_MAX);
        id->minimum_io = (uint32_t) get_u64(p, o, "minimum_io", UINT32_MAX);
        id->optimal_io = (uint32_t) get_u64(p, o, "optimal_io", UINT32_MAX);
        v = field(p, o, "alignment_offset", json_type_int, false);
        if (v && (json_object_get_int64(v) < INT32_MIN || json_object_get_int64(v) > INT32_MAX) && !p->bad)
                p->bad = "alignment_offset";
        id->alignment_offset = v ? (int32_t) json_object_get_int64(v) : 0;
        id->rotational = get_bool(p, o, "rotational");
        id->removable = get_bool(p, o, "removable");
        id->read_only = get_bool(p, o, "read_only");
        id->transport = get_str(p, o, "transport", true);
        id->vendor = get_str(p, o, "vendor", true);
        id->model = get_str(p, o, "model", true);
        id->serial = get_str(p, o, "serial", true);
        id->wwn = get_str(p, o, "wwn", true);
        links = field(p, o, "by_id", json_type_array, false);
        if (links) {
                size_t n = json_object_array_length(links);

                id->by_id = calloc(n + 1, sizeof(char *));
                for (size_t i = 0; id->by_id && i < n; i++) {
                        struct json_object *l = json_object_array_get_idx(links, i);

                        if (!json_object_is_type(l, json_type_string) || !(id->by_id[i] = strdup(json_object_get_string(l)))) {
                                if (!p->bad)
                                        p->bad = "by_id";
                                break;
                        }
                }
                if (!id->by_id && !p->bad)
                        p->bad = "(out of memory)";
        }
        part = json_object_object_get(o, "partition");
        if (part) {
                if (!json_object_is_type(part, json_type_object)) {
                        if (!p->bad)
                                p->bad = "partition";
                        return;
                }
                id->partition = (int) get_u64(p, part, "number", INT32_MAX);
                id->part_start = get_u64(p, part, "start", UINT64_MAX);
                if (id->partition == 0 && !p->bad)
                        p->bad = "partition";
        }
        loop = json_object_object_get(o, "loop");
        if (loop) {
                _cleanup_free_ char *devno = NULL;

                if (!json_object_is_type(loop, json_type_object)) {
                        if (!p->bad)
                                p->bad = "loop";
                        return;
                }
                id->is_loop = true;
                id->backing_file = get_str(p, loop, "backing_file", true);
                id->backing_inode = get_u64(p, loop, "backing_inode", UINT64_MAX);
                devno = get_str(p, loop, "backing_device", false);
                if (parse_devno(devno, &id->backing_dev) < 0 && !p->bad)
                        p->bad = "backing_device";
        }
}

static void parse_signatures(struct parser *p, struct json_object *a, struct device_signature **ret, size_t *n) {
        size_t len = a ? json_object_array_length(a) : 0;

        *ret = NULL;
        *n = 0;
        if (len == 0)
                return;
        *ret = calloc(len, sizeof(**ret));
        if (!*ret) {
                if (!p->bad)
                        p->bad = "(out of memory)";
                return;
        }
        *n = len;
        for (size_t i = 0; i < len; i++) {
                struct json_object *o = json_object_array_get_idx(a, i), *v;
                struct device_signature *s = &(*ret)[i];

                if (!json_object_is_type(o, json_type_object)) {
                        if (!p->bad)
                                p->bad = "signatures";
                        return;
                }
                s->type = get_str(p, o, "type", true);
                s->usage = get_str(p, o, "usage", true);
                s->label = get_str(p, o, "label", true);
                s->uuid = get_str(p, o, "uuid", true);
                s->offset = get_u64(p, o, "offset", UINT64_MAX);
                v = json_object_object_get(o, "matches_last_pass");
                s->written = v && json_object_is_type(v, json_type_boolean) ? json_object_get_boolean(v) : -1;
        }
}

/* Names of keystream backends, each known and at most once. */
static void parse_backends(struct parser *p, struct json_object *a, struct job *job) {
        unsigned bits = 0;

        if (!a)
                return;
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                struct json_object *v = json_object_array_get_idx(a, i);
                enum keystream_backend b;

                if (!json_object_is_type(v, json_type_string) ||
                    keystream_backend_from_name(json_object_get_string(v), &b) < 0 || b == KEYSTREAM_BACKEND_AUTO ||
                    bits & (1u << b)) {
                        if (!p->bad)
                                p->bad = "keystream_backends";
                        return;
                }
                bits |= 1u << b;
        }
        atomic_store(&job->keystream_backends, bits);
}

static void parse_history(struct parser *p, struct json_object *a, struct job *job) {
        size_t n = a ? json_object_array_length(a) : 0;

        if (n == 0)
                return;
        job->history = calloc(n, sizeof(*job->history));
        if (!job->history) {
                if (!p->bad)
                        p->bad = "(out of memory)";
                return;
        }
        for (size_t i = 0; i < n; i++) {
                struct json_object *o = json_object_array_get_idx(a, i), *v;
                struct job_event *e = &job->history[job->n_history];
                const char *kind, *phase;

                if (!json_object_is_type(o, json_type_object)) {
                        if (!p->bad)
                                p->bad = "history";
                        return;
                }
                v = field(p, o, "event", json_type_string, false);
                kind = v ? json_object_get_string(v) : "";
                if (job_event_from_name(kind, &e->kind) < 0) {
                        if (!p->bad)
                                p->bad = "event";
                        return;
                }
                job->n_history++;
                e->at = get_double(p, o, "at");
                e->node = get_str(p, o, "node", true);
                e->reason = get_str(p, o, "reason", true);
                e->pass = (unsigned) get_u64(p, o, "pass", METHOD_PASSES_MAX);
                v = field(p, o, "phase", json_type_string, true);
                phase = v ? json_object_get_string(v) : NULL;
                e->phase = !phase ? -1 : strcmp(phase, "write") == 0 ? STAGE_WRITE :
                           strcmp(phase, "verify") == 0 ? STAGE_VERIFY : -2;
                if (e->phase == -2 && !p->bad)
                        p->bad = "phase";
                e->bytes_done = get_u64(p, o, "bytes_done", UINT64_MAX);
        }
}

/* Sorted, apart (adjacent ones are merged), whole sectors, on the device: as job_bad_range() keeps
 * them. */
static void parse_bad_ranges(struct parser *p, struct json_object *a, struct job *job) {
        size_t n = a ? json_object_array_length(a) : 0;
        uint64_t next = 0;

        if (n == 0)
                return;
        if (n > JOB_BAD_RANGES_MAX || !(job->bad = calloc(n, sizeof(*job->bad)))) {
                if (!p->bad)
                        p->bad = n > JOB_BAD_RANGES_MAX ? "bad_ranges" : "(out of memory)";
                return;
        }
        for (size_t i = 0; i < n; i++) {
                struct json_object *o = json_object_array_get_idx(a, i);
                uint64_t off, len;

                if (!json_object_is_type(o, json_type_object)) {
                        if (!p->bad)
                                p->bad = "bad_ranges";
                        return;
                }
                off = get_u64(p, o, "offset", 1ULL << 60);
                len = get_u64(p, o, "length", 1ULL << 60);
                if ((len == 0 || (i > 0 && off <= next) || off + len > job->info.size ||
                     (job->info.logical_sector && (off % job->info.logical_sector || len % job->info.logical_sector))) &&
                    !p->bad)
                        p->bad = "bad_ranges";
                next = off + len;
                job->bad[job->n_bad++] = (struct extent) { off, len };
                job->bad_bytes += len;
        }
}

int state_record_parse(struct json_object *rec, struct job *job, char *err, size_t err_len) {
        struct parser p = {};
        struct json_object *passes, *v, *ck, *runs;
        _cleanup_free_ char *cipher = NULL, *verify = NULL, *state = NULL;
        double pct;

        if (get_u64(&p, rec, "format", 1000) != STATE_RECORD_FORMAT) {
                snprintf(err, err_len, "format is not %d", STATE_RECORD_FORMAT);
                return -EBADMSG;
        }
        job->id = get_u64(&p, rec, "id", UINT64_MAX - 1);
        job->device = get_str(&p, rec, "device", false);
        job->method = get_str(&p, rec, "method", false);
        /* Since the bay policies; absent from older records (a client's job). */
        if (json_object_object_get_ex(rec, "policy", NULL))
                job->policy = get_str(&p, rec, "policy", true);
        /* Since issue 20; absent from older records (nothing recorded). */
        if (json_object_object_get_ex(rec, "record", &v)) {
                const char *bad = NULL;

                if (!json_object_is_type(v, json_type_object) || job_record_from_json(v, &job->record, &bad) < 0) {
                        if (!p.bad)
                                p.bad = "record";
                }
        }
        cipher = get_str(&p, rec, "cipher", false);
        if (cipher && (keystream_cipher_from_name(cipher, &job->cipher) < 0 || job->cipher == KEYSTREAM_AUTO) && !p.bad)
                p.bad = "cipher";
        verify = get_str(&p, rec, "verify", false);
        if (verify && verify_mode_parse(verify, &job->verify, &pct) < 0 && !p.bad)
                p.bad = "verify";
        job->verify_percent = get_double(&p, rec, "verify_percent");
        job->sample.percent = get_double(&p, rec, "sample_percent");
        job->sample.seed = get_u64(&p, rec, "sample_seed", UINT64_MAX);
        job->queue_depth = (unsigned) get_u64(&p, rec, "queue_depth", WIPED_QD_MAX);
        job->piece = (uint32_t) get_u64(&p, rec, "io_size", 1u << 30);
        rate_init(&job->rate, get_u64(&p, rec, "max_rate", UINT64_MAX / 2));
        job->max_bad = get_u64(&p, rec, "max_bad", UINT64_MAX);
        job->plan.chunk_size = get_u64(&p, rec, "chunk_size", 1ULL << 40);
        job->plan.io_size = (uint32_t) get_u64(&p, rec, "plan_io_size", 1u << 30);
        job->plan.sector = (uint32_t) get_u64(&p, rec, "sector", 65536);
        parse_identity(&p, field(&p, rec, "identity", json_type_object, false), &job->info);
        parse_signatures(&p, field(&p, rec, "signatures_before", json_type_array, false), &job->sigs_before,
                         &job->n_sigs_before);
        job->started_at = get_double(&p, rec, "started_at");
        job->reported = get_bool(&p, rec, "reported");
        job->report_file = get_str(&p, rec, "report_file", true);

        state = get_str(&p, rec, "state", false);
        job->state = JOB_RUNNING;
        if (state && job_state_from_name(state, &job->state) < 0 && !p.bad)
                p.bad = "state";
        job->reason = get_str(&p, rec, "reason", true);
        v = field(&p, rec, "error", json_type_object, true);
        if (v) {
                job->error = -(int) get_u64(&p, v, "errno", 4095);
                job->error_msg = get_str(&p, v, "message", true);
                if (job->error == 0 && !p.bad)
                        p.bad = "errno";
        }
        passes = field(&p, rec, "passes", json_type_array, false);
        if (passes) {
                size_t n = json_object_array_length(passes);

                if (n == 0 || n > METHOD_PASSES_MAX) {
                        if (!p.bad)
                                p.bad = "passes";
                } else if (!(job->passes = calloc(n, sizeof(*job->passes))))
                        return -ENOMEM;
                for (size_t i = 0; job->passes && i < n; i++) {
                        struct json_object *o = json_object_array_get_idx(passes, i), *k;
                        struct job_pass *jp = &job->passes[i];

                        job->n_passes++;
                        v = field(&p, o, "pattern", json_type_string, false);
                        if (v && pass_parse(json_object_get_string(v), &jp->pass) < 0 && !p.bad)
                                p.bad = "pattern";
                        k = field(&p, o, "key", json_type_string, true);
                        if (jp->pass.kind == PASS_RANDOM &&
                            (!k || hex_decode(json_object_get_string(k), jp->key, sizeof(jp->key), &jp->key_len) < 0 ||
                             jp->key_len != keystream_key_size(job->cipher)) && !p.bad)
                                p.bad = "key";
                        jp->written = get_bool(&p, o, "written");
                        parse_verify(&p, field(&p, o, "verified", json_type_object, true), &jp->verified);
                        if (pass_op_firmware(jp->pass.op)) {
                                if ((!k || hex_decode(json_object_get_string(k), jp->key, sizeof(jp->key), &jp->key_len) < 0 ||
                                     jp->key_len != KEYSTREAM_KEY_MAX) && !p.bad)
                                        p.bad = "key";
                                parse_fw(&p, field(&p, o, "firmware", json_type_object, false), &jp->fw);
                                /* The pass is the command it recorded. */
                                char pname[2 * METHOD_PATTERN_MAX + 8];

                                if (!p.bad && strcmp(pass_name(&jp->pass, pname, sizeof(pname)),
                                                     fw_action_name(jp->fw.cmd.action)) != 0)
                                        p.bad = "firmware";
                        }
                }
        }
        if (json_object_object_get_ex(rec, "hidden_area", &v) && json_object_is_type(v, json_type_object)) {
                struct job_hidden_area *h = &job->hidden;
                struct json_object *x;

                h->found = true;
                h->current_max = get_u64(&p, v, "current_max_sectors", UINT64_MAX);
                h->native_max = get_u64(&p, v, "native_max_sectors", UINT64_MAX);
                h->size_before = get_u64(&p, v, "size_before", UINT64_MAX);
                h->size_after = get_u64(&p, v, "size_after", UINT64_MAX);
                if (json_object_object_get_ex(v, "dco_max_sectors", &x) && json_object_is_type(x, json_type_int))
                        h->dco_max = json_object_get_uint64(x);
                if (json_object_object_get_ex(v, "action", &x) && json_object_is_type(x, json_type_string))
                        snprintf(h->action, sizeof(h->action), "%s", json_object_get_string(x));
                if (json_object_object_get_ex(v, "note", &x) && json_object_is_type(x, json_type_string))
                        snprintf(h->note, sizeof(h->note), "%s", json_object_get_string(x));
        }
        if (json_object_object_get_ex(rec, "purge_fallback", &v) && json_object_is_type(v, json_type_string) &&
            !(job->purge_fallback = strdup(json_object_get_string(v))))
                return -ENOMEM;
        runs = field(&p, rec, "runs", json_type_array, false);
        if (runs && json_object_array_length(runs) > 0) {
                size_t n = json_object_array_length(runs);

                if (!(job->runs = calloc(n, sizeof(*job->runs))))
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++) {
                        v = json_object_array_get_idx(runs, i);
                        if (!json_object_is_type(v, json_type_object)) {
                                if (!p.bad)
                                        p.bad = "runs";
                                break;
                        }
                        parse_verify(&p, v, &job->runs[job->n_runs++]);
                }
        }
        ck = field(&p, rec, "checkpoint", json_type_object, false);
        if (ck) {
                job->ckpt.stage = (unsigned) get_u64(&p, ck, "stage", 2 * METHOD_PASSES_MAX + 1);
                job->ckpt.bytes_done = get_u64(&p, ck, "bytes_done", UINT64_MAX);
                job->ckpt.bytes_written = get_u64(&p, ck, "bytes_written", UINT64_MAX);
                job->ckpt.at = get_double(&p, ck, "at");
                parse_verify(&p, field(&p, ck, "verify", json_type_object, false), &job->ckpt.verify);
        }
        v = field(&p, rec, "signatures_after", json_type_array, true);
        if (v) {
                job->sigs_checked = true;
                parse_signatures(&p, v, &job->sigs_after, &job->n_sigs_after);
        }
        job->wipe_started = get_double(&p, rec, "wipe_started");
        job->wipe_ended = get_double(&p, rec, "wipe_ended");
        job->wipe_work = get_u64(&p, rec, "wipe_work", UINT64_MAX);
        job->ended_at = get_double(&p, rec, "ended_at");
        parse_history(&p, field(&p, rec, "history", json_type_array, false), job);
        parse_bad_ranges(&p, field(&p, rec, "bad_ranges", json_type_array, false), job);
        job->interruptions = (unsigned) get_u64(&p, rec, "interruptions", UINT32_MAX);
        job->resumes = (unsigned) get_u64(&p, rec, "resumes", UINT32_MAX);
        /* Newer members: absent from the records of earlier versions. */
        if (json_object_object_get_ex(rec, "pauses", NULL))
                job->pauses = (unsigned) get_u64(&p, rec, "pauses", UINT32_MAX);
        if (json_object_object_get_ex(rec, "keystream_backends", NULL))
                parse_backends(&p, field(&p, rec, "keystream_backends", json_type_array, false), job);
        if (json_object_object_get_ex(rec, "superseded_by", &v) && v)
                job->superseded_by = get_u64(&p, rec, "superseded_by", UINT64_MAX - 1);
        /* 1: the partition table was read again after the wipe, -errno: it could not be. */
        if (json_object_object_get_ex(rec, "partitions_reread", &v)) {
                int64_t pr = json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : 0;

                if (pr == 0 || pr > 1 || pr < -4095) {
                        if (!p.bad)
                                p.bad = "partitions_reread";
                } else
                        job->partitions_reread = (int) pr;
        }
        /* Since issue 20: absent from older records. */
        {
                int sr = smart_record_parse(rec, job);

                if (sr == -ENOMEM)
                        return -ENOMEM;
                if (sr < 0 && !p.bad)
                        p.bad = "smart";
        }
        /* Since issue 19: absent from older records (then no hook runs for their end). */
        if (json_object_object_get_ex(rec, "end_hook", &v) && v) {
                int hr = hook_record_parse(v, job);

                if (hr == -ENOMEM)
                        return -ENOMEM;
                if (hr < 0 && !p.bad)
                        p.bad = "end_hook";
                hook_job_loaded(job, true);
        } else
                hook_job_loaded(job, false);
        if (p.bad) {
                snprintf(err, err_len, "field \"%s\" is missing or wrong", p.bad);
                return strcmp(p.bad, "(out of memory)") == 0 ? -ENOMEM : -EBADMSG;
        }
        return 0;
}

int state_record_bits(struct json_object *rec, uint64_t *bits, uint64_t n) {
        struct json_object *ck = json_object_object_get(rec, "checkpoint");
        struct json_object *done = ck ? json_object_object_get(ck, "done") : NULL;
        uint64_t next = 0;
        size_t len;

        if (!done || !json_object_is_type(done, json_type_array))
                return -EBADMSG;
        len = json_object_array_length(done);
        for (size_t i = 0; i < len; i++) {
                struct json_object *pair = json_object_array_get_idx(done, i), *a, *b;
                uint64_t first, count;

                if (!json_object_is_type(pair, json_type_array) || json_object_array_length(pair) != 2)
                        return -EBADMSG;
                a = json_object_array_get_idx(pair, 0);
                b = json_object_array_get_idx(pair, 1);
                if (!json_object_is_type(a, json_type_int) || !json_object_is_type(b, json_type_int) ||
                    json_object_get_int64(a) < 0 || json_object_get_int64(b) <= 0)
                        return -EBADMSG;
                first = (uint64_t) json_object_get_int64(a);
                count = (uint64_t) json_object_get_int64(b);
                /* Ascending and apart, as written: a hostile list cannot make this quadratic. */
                if (first >= n || count > n - first || first < next)
                        return -EBADMSG;
                next = first + count;
                for (uint64_t u = first; u < first + count; u++)
                        bits[u / 64] |= 1ULL << (u % 64);
        }
        return 0;
}
