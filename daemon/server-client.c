/* Answering one request: decode, check the peer's rights, run the operation, build the reply.
 * Runs on the main thread only. */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "clock.h"
#include "daemon-config.h"
#include "daemon.h"
#include "deliver.h"
#include "protocol.h"

struct request_ctx {
        struct pool *pool;
        const struct protocol_request *req;
        const struct peer *peer;
        struct watch *watch;            /* made by a watch request */
};

typedef struct json_object *(*op_handler)(struct request_ctx *c);

static bool client_privileged(const struct request_ctx *c) {
        struct group *g;

        if (c->peer->uid == 0)
                return true;
        g = getgrnam(WIPED_GROUP);
        if (!g)
                return false;
        if (c->peer->gid == g->gr_gid)
                return true;
        for (int i = 0; i < c->peer->n_groups; i++)
                if (c->peer->groups[i] == g->gr_gid)
                        return true;
        return false;
}

/* Whether the peer may make this request (wiped(8) PERMISSIONS): NULL when it may, else the EPERM
 * reply, which names the fix. On the read-only socket only the ops that change nothing, and a
 * report without keys, whoever asks; on the control socket the others need root or the group. */
static struct json_object *client_check_rights(struct request_ctx *c) {
        const char *op = protocol_op_name(c->req->op);
        bool keys = false;

        if (c->peer->read_only) {
                if (c->req->op == PROTOCOL_OP_REPORT)
                        (void) protocol_get_bool(c->req->obj, "keys", &keys);
                if (keys)
                        return protocol_reply_error(c->req->id, -EPERM, "report: permission denied: this socket only "
                                                    "shows jobs; keys are for root only, on the control socket %s",
                                                    config_settings()->socket);
                if (protocol_op_mutates(c->req->op))
                        return protocol_reply_error(c->req->id, -EPERM,
                                                    "%s: permission denied: this socket only shows jobs; use the control "
                                                    "socket %s as root or as a member of the group %s (sudo usermod -aG "
                                                    "%s $USER, then log in again)",
                                                    op, config_settings()->socket, WIPED_GROUP, WIPED_GROUP);
                return NULL;
        }
        if (protocol_op_mutates(c->req->op) && !client_privileged(c))
                return protocol_reply_error(c->req->id, -EPERM, "%s: permission denied: run as root, or add yourself to "
                                            "the group %s: sudo usermod -aG %s $USER (then log in again)",
                                            op, WIPED_GROUP, WIPED_GROUP);
        return NULL;
}

/* Reject fields the operation does not know, so that a typo is an error, not a default. Which
 * fields each operation takes is defined once, in common/protocol.c (protocol_op_fields). */
static struct json_object *check_fields(struct request_ctx *c) {
        json_object_object_foreach(c->req->obj, key, val) {
                (void) val;
                if (!protocol_op_has_field(c->req->op, key))
                        return protocol_reply_error(c->req->id, -EINVAL, "%s: unknown field \"%.64s\"",
                                                    protocol_op_name(c->req->op), key);
        }
        return NULL;
}

static struct json_object *bad_field(struct request_ctx *c, const char *field, const char *what) {
        return protocol_reply_error(c->req->id, -EINVAL, "%s: \"%s\" %s", protocol_op_name(c->req->op), field, what);
}

/* The pool's settings (pool_json()) as fields of o. 0 or -ENOMEM. */
static int pool_json_add(struct request_ctx *c, struct json_object *o) {
        _cleanup_json_ struct json_object *p = pool_json(c->pool);

        if (!p)
                return -ENOMEM;
        json_object_object_foreach(p, key, val)
                if (json_object_object_add(o, key, json_object_get(val)) < 0)
                        return -ENOMEM;
        return 0;
}

/* A new reply and a new array for it to hold (*arr): the reply, or NULL (both freed) on ENOMEM. */
static struct json_object *reply_with_array(struct request_ctx *c, struct json_object **arr) {
        struct json_object *r = protocol_reply_new(c->req->id);

        *arr = json_object_new_array();
        if (!r || !*arr) {
                json_object_put(r);
                json_object_put(*arr);
                *arr = NULL;
                return NULL;
        }
        return r;
}

/* "keystream": for each cipher, the backend making it, how it was chosen and what each made when
 * the daemon started (rate_bps, bytes per second of one thread; mbps, the same in 10^6 bytes per
 * second, is deprecated and goes in the next release). 0 or -ENOMEM. */
static int keystream_json_add(struct json_object *r) {
        struct json_object *ks = json_object_new_object();

        if (!ks || json_object_object_add(r, "keystream", ks) < 0) {
                json_object_put(ks);
                return -ENOMEM;
        }
        for (enum keystream_cipher c = KEYSTREAM_AES_128_CTR; c < _KEYSTREAM_CIPHER_MAX; c++) {
                struct json_object *o = json_object_new_object(), *mbps = json_object_new_object();
                struct json_object *bps = json_object_new_object();
                struct keystream_choice ch;

                if (!o || !mbps || !bps || json_object_object_add(ks, keystream_cipher_name(c), o) < 0) {
                        json_object_put(o);
                        json_object_put(mbps);
                        json_object_put(bps);
                        return -ENOMEM;
                }
                keystream_backend_choice(c, &ch);
                json_object_object_add(o, "backend", json_object_new_string(keystream_backend_name(ch.backend)));
                json_object_object_add(o, "chosen_by", json_object_new_string(ch.configured ? "configured" :
                                                                              ch.measured ? "measured" : "default"));
                for (enum keystream_backend b = KEYSTREAM_BACKEND_OPENSSL; b < _KEYSTREAM_BACKEND_MAX; b++)
                        if (ch.mbps[b] > 0) {
                                json_object_object_add(bps, keystream_backend_name(b),
                                                       json_object_new_uint64((uint64_t) (ch.mbps[b] * 1e6 + 0.5)));
                                json_object_object_add(mbps, keystream_backend_name(b),
                                                       json_object_new_double((double) (int64_t) (ch.mbps[b] * 10 + 0.5) / 10));
                        }
                json_object_object_add(o, "rate_bps", bps);
                json_object_object_add(o, "mbps", mbps);        /* deprecated: rate_bps */
        }
        return 0;
}

static struct json_object *op_version(struct request_ctx *c) {
        struct json_object *r, *ciphers;

        r = reply_with_array(c, &ciphers);
        if (!r)
                return NULL;
        json_object_object_add(r, "version", json_object_new_string(PACKAGE_VERSION));
        json_object_object_add(r, "protocol", json_object_new_int(PROTOCOL_VERSION));
        json_object_object_add(r, "cipher_auto",
                               json_object_new_string(keystream_cipher_name(keystream_cipher_resolve(KEYSTREAM_AUTO))));
        json_object_array_add(ciphers, json_object_new_string(keystream_cipher_name(KEYSTREAM_AES_128_CTR)));
        json_object_array_add(ciphers, json_object_new_string(keystream_cipher_name(KEYSTREAM_CHACHA20)));
        json_object_object_add(r, "ciphers", ciphers);
        if (keystream_json_add(r) < 0) {
                json_object_put(r);
                return NULL;
        }
        if (pool_json_add(c, r) < 0 || config_json_add(r) < 0) {
                json_object_put(r);
                return NULL;
        }
        return r;
}

/* A device path that is not absolute: it would name a device relative to the daemon's working
 * directory, not the client's (wipectl sends absolute paths). */
static struct json_object *relative_path(struct request_ctx *c, const char *field, const char *path) {
        if (strlen(path) >= PATH_MAX)
                return bad_field(c, field, "holds a path longer than PATH_MAX");
        return protocol_reply_error(c->req->id, -EINVAL, "%s: \"%s\": \"%.256s\" is not an absolute path (a relative "
                                    "path would be resolved in the daemon's working directory, not yours)",
                                    protocol_op_name(c->req->op), field, path);
}

/* The "devices" field: true with the borrowed strings in *ret (free the array), or false with an
 * error reply (NULL on ENOMEM) in *reply. */
static bool request_devices(struct request_ctx *c, const char ***ret, size_t *n, struct json_object **reply) {
        int k = protocol_get_string_array(c->req->obj, "devices", PROTOCOL_DEVICES_MAX, ret, n);

        if (k == 0) {
                for (size_t i = 0; i < *n; i++)
                        if ((*ret)[i][0] != '/' || strlen((*ret)[i]) >= PATH_MAX) {
                                *reply = relative_path(c, "devices", (*ret)[i]);
                                free(*ret);
                                *ret = NULL;
                                return false;
                        }
                return true;
        }
        *reply = k == -ENOENT ? bad_field(c, "devices", "is required") :
                 k == -ENOMEM ? NULL : bad_field(c, "devices", "must be an array of 1 to 256 device paths");
        return false;
}

/* The verify mode and seed fields of a submit or verify request, into rq. NULL or an error reply. */
static struct json_object *parse_verify(struct request_ctx *c, struct job_request *rq, bool *given) {
        const char *s;
        int k;

        *given = false;
        k = protocol_get_string(c->req->obj, "verify", &s);
        if (k == -EINVAL)
                return bad_field(c, "verify", "must be a string");
        if (k == 0) {
                if (verify_mode_parse(s, &rq->verify, &rq->verify_percent) < 0)
                        return protocol_reply_error(c->req->id, -EINVAL,
                                                    "%s: unknown verification \"%.64s\" (none, sample, sample=PCT, last, all)",
                                                    protocol_op_name(c->req->op), s);
                *given = true;
        }
        k = protocol_get_u64(c->req->obj, "seed", &rq->seed);
        if (k == -EINVAL)
                return bad_field(c, "seed", "must be an integer from 0 to 2^64-1");
        rq->have_seed = k == 0;
        return NULL;
}

/* The per-job I/O settings of a submit: queue_depth, io_size, max_rate. NULL or an error reply. */
static struct json_object *parse_tuning(struct request_ctx *c, struct job_request *rq) {
        uint64_t v;
        int k;

        k = protocol_get_u64(c->req->obj, "queue_depth", &v);
        if (k == -EINVAL || (k == 0 && (v < 1 || v > WIPED_QD_MAX)))
                return bad_field(c, "queue_depth", "must be an integer from 1 to 256");
        if (k == 0)
                rq->queue_depth = (unsigned) v;
        k = protocol_get_u64(c->req->obj, "io_size", &v);
        if (k == -EINVAL || (k == 0 && (v < 4096 || v % 4096 != 0 || v > pool_io_size(c->pool))))
                return protocol_reply_error(c->req->id, -EINVAL,
                                            "submit: \"io_size\" must be a multiple of 4096 from 4096 to the daemon's "
                                            "buffer size (%" PRIu32 ", wiped --io-size)", pool_io_size(c->pool));
        if (k == 0)
                rq->io_size = (uint32_t) v;
        k = protocol_get_u64(c->req->obj, "max_rate", &rq->max_rate);
        if (k == -EINVAL)
                return bad_field(c, "max_rate", "must be an integer number of bytes per second (0: none)");
        k = protocol_get_u64(c->req->obj, "max_bad_bytes", &v);
        if (k == -EINVAL || (k == 0 && v > CONFFILE_MAX_BAD_MAX))
                return bad_field(c, "max_bad_bytes", "must be an integer number of bytes (0: no bad sector allowed)");
        if (k == 0)
                rq->max_bad = v;
        return NULL;
}

/* The "expect" field of a submit: for each device, the identity the client showed and had
 * confirmed; the daemon refuses a device that is not that one when it opens it (ESTALE). NULL
 * with *ret set (NULL when absent: nothing is compared), or an error reply. */
static struct json_object *parse_expect(struct request_ctx *c, size_t n, struct json_object ***ret) {
        struct json_object *a = NULL;
        char err[128];

        *ret = NULL;
        if (!json_object_object_get_ex(c->req->obj, "expect", &a))
                return NULL;
        if (!a || !json_object_is_type(a, json_type_array) || json_object_array_length(a) != n)
                return bad_field(c, "expect", "must be an array of one identity per device");
        for (size_t i = 0; i < n; i++)
                if (device_expect_check(json_object_array_get_idx(a, i), err, sizeof(err)) < 0)
                        return protocol_reply_error(c->req->id, -EINVAL, "submit: \"expect\" entry %zu %s", i + 1, err);
        *ret = calloc(n, sizeof(**ret));
        if (!*ret)
                return protocol_reply_error(c->req->id, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++)
                (*ret)[i] = json_object_array_get_idx(a, i);
        return NULL;
}

/* A submit with "dry_run": every check and the plans, nothing written or started; a refusal is
 * replied as the real submit's. */
static struct json_object *submit_dry_run(struct request_ctx *c, const char **devices, size_t n,
                                          const struct job_request *rq) {
        struct json_object *r, *plans = NULL;
        char err[512] = "";
        int k;

        k = job_dry_run(c->pool, devices, n, rq, &plans, err, sizeof(err));
        if (k < 0) {
                log_info("dry run from uid %u refused: %s", (unsigned) c->peer->uid, err);
                return protocol_reply_error(c->req->id, k, "%s", err[0] ? err : strerror(-k));
        }
        r = protocol_reply_new(c->req->id);
        if (!r) {
                json_object_put(plans);
                return NULL;
        }
        json_object_object_add(r, "dry_run", json_object_new_boolean(true));
        json_object_object_add(r, "jobs", plans);
        return r;
}

static struct json_object *op_submit(struct request_ctx *c) {
        _cleanup_free_ const char **devices = NULL, **pass_names = NULL;
        _cleanup_free_ struct json_object **expect = NULL;
        _cleanup_free_ const char **asset_tags = NULL;
        struct job_record record = {};
        _cleanup_free_ struct job **jobs = NULL;
        _cleanup_free_ struct pass *passes = NULL;
        /* What the request does not say comes from the configuration (wiped(8) CONFIGURATION). */
        struct job_request rq = {
                .cipher = config_cipher(),
                .method = config_method(),
                .chunk_size = config_settings()->chunk_size,
                .max_bad = config_settings()->max_bad,
        };
        const struct method *m = NULL;
        struct json_object *r, *arr;
        const char *s;
        char err[512] = "";
        size_t n = 0, n_names = 0;
        bool given, dry_run = false;
        int k;

        if (!request_devices(c, &devices, &n, &r))
                return r;
        config_verify(&rq.verify, &rq.verify_percent);
        k = protocol_get_string(c->req->obj, "cipher", &s);
        if (k == 0 && keystream_cipher_from_name(s, &rq.cipher) < 0)
                return protocol_reply_error(c->req->id, -EINVAL, "submit: unknown cipher \"%.64s\" (auto, aes-128-ctr, chacha20)", s);
        if (k == -EINVAL)
                return bad_field(c, "cipher", "must be a string");

        k = protocol_get_string(c->req->obj, "method", &s);
        if (k == -EINVAL)
                return bad_field(c, "method", "must be a string");
        if (k == 0 && !(m = method_find(s)))
                return protocol_reply_error(c->req->id, -EINVAL, "submit: unknown method \"%.64s\" (see wipectl methods)", s);
        k = protocol_get_string_array(c->req->obj, "passes", METHOD_PASSES_MAX, &pass_names, &n_names);
        if (k == -ENOMEM)
                return NULL;
        if (k == -EINVAL)
                return bad_field(c, "passes", "must be an array of 1 to 64 passes");
        if (k == 0 && m)
                return protocol_reply_error(c->req->id, -EINVAL, "submit: give \"method\" or \"passes\", not both");
        if (k == 0) {
                passes = calloc(n_names, sizeof(*passes));
                if (!passes)
                        return NULL;
                for (size_t i = 0; i < n_names; i++)
                        if (pass_parse(pass_names[i], &passes[i]) < 0)
                                return protocol_reply_error(c->req->id, -EINVAL,
                                                            "submit: pass %zu: \"%.64s\" is not random, zero, one or 0x followed by 2 to 64 hex digits",
                                                            i + 1, pass_names[i]);
                rq.method = "custom";
                rq.passes = passes;
                rq.n_passes = n_names;
        } else {
                if (!m)
                        m = method_find(config_method());
                if (!m)
                        m = method_find("random");
                k = pass_list_parse(m->passes, &passes, &rq.n_passes);
                if (k < 0)
                        return protocol_reply_error(c->req->id, k, "submit: method %s: %s", m->name, strerror(-k));
                rq.method = m->name;
                rq.passes = passes;
        }
        if ((r = parse_verify(c, &rq, &given)))
                return r;
        if (rq.have_seed && rq.verify != VERIFY_SAMPLE)
                return bad_field(c, "seed", "only goes with sample verification");
        if ((r = parse_tuning(c, &rq)))
                return r;
        if ((r = parse_expect(c, n, &expect)))
                return r;
        rq.expect = expect;

        k = protocol_get_bool(c->req->obj, "dry_run", &dry_run);
        if (k == -EINVAL)
                return bad_field(c, "dry_run", "must be a boolean");
        /* The record: the configuration's defaults as they are now (a reload later does not change
         * this job's), what the request gives over them, one batch id for all its devices. */
        k = job_record_defaults(&record);
        if (k == 0)
                k = job_record_parse_request(c->req->obj, n, &record, &asset_tags, err, sizeof(err));
        if (k < 0) {
                job_record_done(&record);
                return k == -ENOMEM ? NULL : protocol_reply_error(c->req->id, k, "%s", err[0] ? err : strerror(-k));
        }
        rq.record = &record;
        rq.asset_tags = asset_tags;
        if (dry_run) {
                r = submit_dry_run(c, devices, n, &rq);
                job_record_done(&record);
                return r;
        }

        jobs = calloc(n, sizeof(*jobs));
        if (!jobs) {
                job_record_done(&record);
                return NULL;
        }
        k = job_submit(c->pool, devices, n, &rq, jobs, err, sizeof(err));
        job_record_done(&record);
        if (k < 0) {
                log_warning("submit from uid %u refused: %s", (unsigned) c->peer->uid, err);
                return protocol_reply_error(c->req->id, k, "%s", err);
        }

        r = reply_with_array(c, &arr);
        if (!r)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                struct json_object *j = json_object_new_object();

                json_object_object_add(j, "job", json_object_new_uint64(jobs[i]->id));
                json_object_object_add(j, "id", json_object_new_uint64(jobs[i]->id)); /* deprecated: job */
                json_object_object_add(j, "device", json_object_new_string(jobs[i]->device));
                json_object_array_add(arr, j);
        }
        json_object_object_add(r, "jobs", arr);
        return r;
}

static struct json_object *jobs_reply(struct request_ctx *c, const uint64_t *ids, size_t n, bool all) {
        struct json_object *r, *arr;

        for (size_t i = 0; i < n; i++)
                if (!job_find(ids[i]))
                        return protocol_reply_error(c->req->id, -ESRCH, "job %" PRIu64 ": no such job", ids[i]);
        r = reply_with_array(c, &arr);
        if (!r)
                return NULL;
        if (all)
                for (struct job *j = job_first(); j; j = j->next)
                        json_object_array_add(arr, job_to_json(j));
        else
                for (size_t i = 0; i < n; i++)
                        json_object_array_add(arr, job_to_json(job_find(ids[i])));
        json_object_object_add(r, "jobs", arr);
        deliver_reply_json(r);
        if (c->req->op == PROTOCOL_OP_STATUS && all) {
                struct json_object *d = pool_json(c->pool);

                if (d && config_json_add(d) < 0) {
                        json_object_put(d);
                        d = NULL;
                }
                json_object_object_add(r, "daemon", d);
        }
        return r;
}

/* The "jobs" field of a status or watch request into ids[0..n) (none when it is absent or empty):
 * true, or false with the error reply in *reply (NULL when out of memory). */
static bool request_jobs(struct request_ctx *c, uint64_t **ids, size_t *n, struct json_object **reply) {
        int k = protocol_get_u64_array(c->req->obj, "jobs", REQUEST_JOBS_MAX, ids, n);

        *reply = NULL;
        if (k == -ENOENT)
                *n = 0;
        else if (k == -ENOMEM)
                return false;
        else if (k < 0) {
                *reply = bad_field(c, "jobs", "must be an array of at most " STRINGIFY(REQUEST_JOBS_MAX) " job ids");
                return false;
        }
        return true;
}

static struct json_object *op_status(struct request_ctx *c) {
        _cleanup_free_ uint64_t *ids = NULL;
        struct json_object *r;
        size_t n = 0;

        if (!request_jobs(c, &ids, &n, &r))
                return r;
        return jobs_reply(c, ids, n, n == 0);
}

static struct json_object *op_list(struct request_ctx *c) {

        return jobs_reply(c, NULL, 0, true);
}

/* The job named by the request's "job" field, or an error reply in *reply. */
static struct job *request_job(struct request_ctx *c, struct json_object **reply) {
        struct job *job;
        uint64_t id;
        int k;

        k = protocol_get_u64(c->req->obj, "job", &id);
        if (k < 0) {
                *reply = bad_field(c, "job", k == -ENOENT ? "is required" : "must be a job id");
                return NULL;
        }
        job = job_find(id);
        if (!job)
                *reply = protocol_reply_error(c->req->id, -ESRCH, "job %" PRIu64 ": no such job", id);
        return job;
}

/* The reply of an op on one job: {"job": JOB}. NULL on ENOMEM. */
static struct json_object *reply_job(struct request_ctx *c, struct job *job) {
        struct json_object *r = protocol_reply_new(c->req->id);

        if (r)
                json_object_object_add(r, "job", job_to_json(job));
        return r;
}

/* EALREADY for a cancel or pause that comes too late: the job ended, stopped, or is stopping. */
static struct json_object *already(struct request_ctx *c, struct job *job) {
        enum job_state s = job_get_state(job);

        return protocol_reply_error(c->req->id, -EALREADY, "job %" PRIu64 ": already %s", job->id,
                                    job_state_is_final(s) || s == JOB_PAUSED ? job_state_name(s) : "stopping");
}

static struct json_object *op_cancel(struct request_ctx *c) {
        struct json_object *r = NULL;
        struct job *job;
        int k;

        job = request_job(c, &r);
        if (!job)
                return r;
        k = job_cancel(job);
        if (k == -EALREADY)
                return already(c, job);
        return reply_job(c, job);
}

static struct json_object *op_pause(struct request_ctx *c) {
        struct json_object *r = NULL;
        struct job *job;
        char why[64];
        int k;

        job = request_job(c, &r);
        if (!job)
                return r;
        snprintf(why, sizeof(why), "paused by uid %u", (unsigned) c->peer->uid);
        k = job_pause(job, why);
        if (k == -EALREADY)
                return already(c, job);
        if (k == -EOPNOTSUPP)
                return protocol_reply_error(c->req->id, k, "job %" PRIu64 ": a later verification cannot be paused "
                                            "(cancel it)", job->id);
        return reply_job(c, job);
}

static struct json_object *op_resume(struct request_ctx *c) {
        struct json_object *r = NULL;
        const char *device = NULL;
        struct job *job;
        char err[512] = "";
        int k;

        k = protocol_get_string(c->req->obj, "device", &device);
        if (k == -EINVAL || (k == 0 && !*device))
                return bad_field(c, "device", "must be a device path");
        if (k == 0 && (device[0] != '/' || strlen(device) >= PATH_MAX))
                return relative_path(c, "device", device);
        job = request_job(c, &r);
        if (!job)
                return r;
        k = job_resume(job, device, err, sizeof(err));
        if (k < 0)
                return protocol_reply_error(c->req->id, k, "%s", *err ? err : strerror(-k));
        return reply_job(c, job);
}

static struct json_object *op_forget(struct request_ctx *c) {
        struct json_object *r = NULL;
        struct job *job;
        uint64_t id;
        int k;

        job = request_job(c, &r);
        if (!job)
                return r;
        id = job->id;
        k = job_forget(job);
        if (k == -EBUSY)
                return protocol_reply_error(c->req->id, k, "job %" PRIu64 ": %s: cancel or pause it first", id,
                                            job_state_name(job_get_state(job)));
        if (k < 0)
                return protocol_reply_error(c->req->id, k, "job %" PRIu64 ": cannot forget it: %s", id,
                                            strerror(-k));
        r = protocol_reply_new(c->req->id);
        if (r)
                json_object_object_add(r, "forgotten", json_object_new_uint64(id));
        return r;
}

static struct json_object *op_report(struct request_ctx *c) {
        struct json_object *r = NULL;
        struct job *job;
        bool keys = false;
        int k;

        k = protocol_get_bool(c->req->obj, "keys", &keys);
        if (k == -EINVAL)
                return bad_field(c, "keys", "must be true or false");
        if (keys && c->peer->uid != 0)
                return protocol_reply_error(c->req->id, -EPERM, "report: permission denied: keys are for root only");
        job = request_job(c, &r);
        if (!job) {
                uint64_t id;
                struct json_object *stored;

                /* A forgotten job's report stays in the state directory. */
                if (keys || protocol_get_u64(c->req->obj, "job", &id) < 0 || !(stored = job_report_from_file(id, &k)))
                        return r;
                json_object_put(r);
                r = protocol_reply_new(c->req->id);
                if (r)
                        json_object_object_add(r, "report", stored);
                else
                        json_object_put(stored);
                return r;
        }
        r = protocol_reply_new(c->req->id);
        /* An ended job's report is the signed one (written now if it was not yet); keys make a new,
         * unsigned one. */
        if (r)
                json_object_object_add(r, "report", job_report(job, keys));
        /* Ended, its signed report still to come (the drive health after it first): wipectl asks
         * again in a moment, so that a job that shows an end has its signed report. */
        if (r && !keys)
                json_object_object_add(r, "report_pending", json_object_new_boolean(job_report_pending(job)));
        if (keys)
                log_info("job %" PRIu64 ": keys disclosed to uid %u (pid %d)", job->id, (unsigned) c->peer->uid, (int) c->peer->pid);
        return r;
}

static struct json_object *op_verify(struct request_ctx *c) {
        struct job_request rq = {};
        struct json_object *r = NULL;
        struct job *job;
        char err[512] = "";
        bool given;
        int k;

        job = request_job(c, &r);
        if (!job)
                return r;
        if ((r = parse_verify(c, &rq, &given)))
                return r;
        if (!given) {
                /* The job's own mode; a job wiped without verification is read back whole. */
                rq.verify = job->verify == VERIFY_NONE || job->verify == VERIFY_ALL ? VERIFY_LAST : job->verify;
                rq.verify_percent = job->verify_percent;
        }
        if (rq.verify == VERIFY_NONE)
                return protocol_reply_error(c->req->id, -EINVAL, "verify: \"none\" verifies nothing");
        if (rq.verify == VERIFY_ALL)
                rq.verify = VERIFY_LAST;        /* only the last pass is still on the device */
        if (rq.have_seed && rq.verify != VERIFY_SAMPLE)
                return bad_field(c, "seed", "only goes with sample verification");
        k = job_verify_again(job, rq.verify, rq.verify_percent, rq.have_seed, rq.seed, err, sizeof(err));
        if (k < 0) {
                log_warning("job %" PRIu64 ": verify from uid %u refused: %s", job->id, (unsigned) c->peer->uid, err);
                return protocol_reply_error(c->req->id, k, "%s", err);
        }
        return reply_job(c, job);
}

static struct json_object *op_probe(struct request_ctx *c) {
        _cleanup_free_ const char **devices = NULL;
        struct json_object *r, *arr;
        size_t n = 0;
        int k;

        if (!request_devices(c, &devices, &n, &r))
                return r;
        r = reply_with_array(c, &arr);
        if (!r)
                return NULL;
        json_object_object_add(r, "devices", arr);
        for (size_t i = 0; i < n; i++) {
                struct device_probe p;

                k = device_probe(devices[i], job_wiping, &p);
                if (k < 0) {
                        device_probe_done(&p);
                        json_object_put(r);
                        return protocol_reply_error(c->req->id, k, "%s: cannot probe: %s", devices[i], strerror(-k));
                }
                json_object_array_add(arr, device_probe_json(&p));
                device_probe_done(&p);
        }
        /* Drive health: every device at once (smart.c). */
        smart_probe_add(arr);
        return r;
}

/* The last device list and when it was made (CLOCK_MONOTONIC seconds), for the read-only peers. */
static struct json_object *devices_cache;
static double devices_cache_at;
static struct json_object *policies_cache;     /* the same for the policies request */
static double policies_cache_at;

void client_devices_cache_drop(void) {
        json_object_put(devices_cache);
        devices_cache = NULL;
        json_object_put(policies_cache);
        policies_cache = NULL;
}

/* Every block device of the machine and whether it may be wiped: read-only, like a probe. A
 * listing opens and probes every device on the main thread, and anyone may ask through the
 * read-only socket: there, one listing serves every request for CLIENT_DEVICES_CACHE_S seconds,
 * so that a flood of requests costs one listing per period, not one each. The control socket's
 * peers (root and the group, who may wipe) get a fresh one, which the others then share. */
static struct json_object *op_devices(struct request_ctx *c) {
        struct json_object *r = protocol_reply_new(c->req->id), *arr;
        double now = mono_s();

        if (!r)
                return NULL;
        if (c->peer->read_only && devices_cache && now - devices_cache_at >= 0 &&
            now - devices_cache_at < CLIENT_DEVICES_CACHE_S)
                arr = json_object_get(devices_cache);
        else {
                arr = device_list_json(job_wiping);
                if (!arr) {
                        json_object_put(r);
                        return NULL;
                }
                /* Shared, never changed: a reply only serializes it. */
                json_object_put(devices_cache);
                devices_cache = json_object_get(arr);
                devices_cache_at = mono_s();
        }
        json_object_object_add(r, "devices", arr);
        return r;
}

/* The bay policies with a dry run over the present disks (policy.c). Read-only: anyone may look,
 * as at the devices list; and as there, the dry run probes every disk, so the read-only socket's
 * peers share one for CLIENT_DEVICES_CACHE_S seconds. */
static struct json_object *op_policies(struct request_ctx *c) {
        struct json_object *r = protocol_reply_new(c->req->id), *arr;
        double now = mono_s();

        if (!r)
                return NULL;
        if (c->peer->read_only && policies_cache && now - policies_cache_at >= 0 &&
            now - policies_cache_at < CLIENT_DEVICES_CACHE_S)
                arr = json_object_get(policies_cache);
        else {
                arr = policy_list_json();
                if (!arr) {
                        json_object_put(r);
                        return NULL;
                }
                json_object_put(policies_cache);
                policies_cache = json_object_get(arr);
                policies_cache_at = mono_s();
        }
        json_object_object_add(r, "policies", arr);
        json_object_object_add(r, "policy_dir", config_settings()->policy_dir && strcmp(config_settings()->policy_dir, "none") == 0 ?
                               NULL : json_object_new_string(config_settings()->policy_dir ? config_settings()->policy_dir :
                                                             WIPED_POLICY_DIR_DEFAULT));
        json_object_object_add(r, "events", policy_events_source() ? json_object_new_string(policy_events_source()) : NULL);
        return r;
}

/* policy_pause and policy_resume {"name": NAME}: kept across reloads and restarts (policy.c). */
static struct json_object *op_policy_pause(struct request_ctx *c) {
        bool pause = c->req->op == PROTOCOL_OP_POLICY_PAUSE;
        struct json_object *r;
        const char *name;
        int k;

        k = protocol_get_string(c->req->obj, "name", &name);
        if (k < 0)
                return bad_field(c, "name", k == -ENOENT ? "is required" : "must be a policy name");
        k = policy_set_paused(name, pause);
        if (k == -ENOENT)
                return protocol_reply_error(c->req->id, k, "policy %.64s: no such policy", name);
        if (k == -EALREADY)
                return protocol_reply_error(c->req->id, k, "policy %.64s: already %s", name, pause ? "paused" : "enabled");
        if (k < 0)
                return protocol_reply_error(c->req->id, k, "policy %.64s: %s", name, strerror(-k));
        log_info("policy %s: %s by uid %u", name, pause ? "paused" : "resumed", (unsigned) c->peer->uid);
        r = protocol_reply_new(c->req->id);
        if (r) {
                json_object_object_add(r, "name", json_object_new_string(name));
                json_object_object_add(r, "state", json_object_new_string(pause ? "paused" : "enabled"));
        }
        return r;
}

void watch_free(struct watch *w) {
        if (!w)
                return;
        free(w->ids);
        free(w->seen);
        free(w->sent);
        free(w);
}

/* What an event is sent for: the job's state, its stage and its run. */
static uint32_t watch_signature(struct job *job) {
        return (uint32_t) job_get_state(job) | atomic_load(&job->stage_index) << 4 | atomic_load(&job->run) << 20;
}

/* {"event":NAME,"time":T,"job":JOB} or, with jobs, {"event":NAME,"time":T,"jobs":[...]}. */
static struct json_object *watch_event(const char *name, const char *key, struct json_object *val) {
        struct json_object *e = json_object_new_object();
        char t[32];

        if (!e || !val) {
                json_object_put(e);
                json_object_put(val);
                return NULL;
        }
        snprintf(t, sizeof(t), "%.3f", real_s());
        json_object_object_add(e, "event", json_object_new_string(name));
        json_object_object_add(e, "time", json_object_new_double_s(strtod(t, NULL), t));
        json_object_object_add(e, key, val);
        return e;
}

int watch_events(struct watch *w, struct json_object *events) {
        double now = mono_s();
        bool all_ended = true;

        if (w->ended)
                return 0;
        for (size_t i = 0; i < w->n; i++) {
                struct job *job = job_find(w->ids[i]);
                uint32_t sig;
                bool ended;

                if (!job)
                        continue;
                sig = watch_signature(job);
                ended = job_state_is_final(job_get_state(job));
                /* The end waits for the job's signed report too (its record: the drive health
                 * after it, the next tick's write), so that a client that returns has it. */
                all_ended = all_ended && ended && !job_report_pending(job);
                /* Due within half a tick of the interval: the ticks are 0.1 s apart. */
                if (sig != w->seen[i] || (!ended && now - w->sent[i] >= w->interval - 0.05)) {
                        struct json_object *e = watch_event(sig != w->seen[i] ? PROTOCOL_EVENT_STATE : PROTOCOL_EVENT_PROGRESS, "job",
                                                            job_to_json(job));

                        if (!e || json_object_array_add(events, e) < 0) {
                                json_object_put(e);
                                return -ENOMEM;
                        }
                        w->seen[i] = sig;
                        w->sent[i] = now;
                }
        }
        if (all_ended) {
                struct json_object *jobs = json_object_new_array(), *e;

                for (size_t i = 0; jobs && i < w->n; i++)
                        if (job_find(w->ids[i]))
                                json_object_array_add(jobs, job_to_json(job_find(w->ids[i])));
                e = watch_event(PROTOCOL_EVENT_END, "jobs", jobs);
                if (!e || json_object_array_add(events, e) < 0) {
                        json_object_put(e);
                        return -ENOMEM;
                }
                w->ended = true;
        }
        return 0;
}

/* Subscribe the connection to events of the given jobs (all that have not ended, without "jobs"):
 * the reply holds their state now; events follow as lines of their own. */
static struct json_object *op_watch(struct request_ctx *c) {
        _cleanup_free_ uint64_t *ids = NULL;
        struct json_object *r, *arr;
        struct watch *w;
        uint64_t interval = WATCH_INTERVAL_MS;
        size_t n = 0;
        int k;

        if (!request_jobs(c, &ids, &n, &r))
                return r;
        k = protocol_get_u64(c->req->obj, "interval_ms", &interval);
        if (k == -EINVAL || (k == 0 && (interval < 100 || interval > 3600000)))
                return bad_field(c, "interval_ms", "must be an integer from 100 to 3600000");
        for (size_t i = 0; i < n; i++)
                if (!job_find(ids[i]))
                        return protocol_reply_error(c->req->id, -ESRCH, "job %" PRIu64 ": no such job", ids[i]);
        if (n == 0) {
                /* Every job that has not ended. */
                size_t cap = 0;

                for (struct job *j = job_first(); j; j = j->next)
                        cap += !job_state_is_final(job_get_state(j));
                free(ids);
                ids = calloc(cap ? cap : 1, sizeof(*ids));
                if (!ids)
                        return NULL;
                for (struct job *j = job_first(); j && n < cap; j = j->next)
                        if (!job_state_is_final(job_get_state(j)))
                                ids[n++] = j->id;
        }
        w = calloc(1, sizeof(*w));
        r = protocol_reply_new(c->req->id);
        arr = json_object_new_array();
        if (!w || !r || !arr) {
                free(w);
                json_object_put(r);
                json_object_put(arr);
                return NULL;
        }
        w->seen = calloc(n ? n : 1, sizeof(*w->seen));
        w->sent = calloc(n ? n : 1, sizeof(*w->sent));
        if (!w->seen || !w->sent) {
                watch_free(w);
                json_object_put(r);
                json_object_put(arr);
                return NULL;
        }
        w->ids = TAKE_PTR(ids);
        w->n = n;
        w->interval = (double) interval / 1000.0;
        for (size_t i = 0; i < n; i++) {
                struct job *job = job_find(w->ids[i]);

                /* The reply is the first look: events follow changes and the interval from here. */
                w->seen[i] = watch_signature(job);
                w->sent[i] = mono_s();
                json_object_array_add(arr, job_to_json(job));
        }
        json_object_object_add(r, "jobs", arr);
        json_object_object_add(r, "interval_ms", json_object_new_uint64(interval));
        c->watch = w;
        return r;
}

static struct json_object *op_reports(struct request_ctx *c) {
        /* A job that just ended is listed: its report is written now if the next tick was to. */
        job_write_due_reports();
        /* A reply larger than what the read-only socket lets a peer leave unread would drop the
         * connection (conn_append): half of it there, for the re-serialized text's growth. */
        return report_store_query(c->req->id, c->req->obj, c->peer->read_only ? WIPED_READ_ONLY_BACKLOG_MAX / 2 :
                                  PROTOCOL_REPORTS_BYTES_MAX);
}

static const op_handler handlers[_PROTOCOL_OP_MAX] = {
        [PROTOCOL_OP_VERSION] = op_version,
        [PROTOCOL_OP_SUBMIT] = op_submit,
        [PROTOCOL_OP_STATUS] = op_status,
        [PROTOCOL_OP_LIST] = op_list,
        [PROTOCOL_OP_CANCEL] = op_cancel,
        [PROTOCOL_OP_REPORT] = op_report,
        [PROTOCOL_OP_PROBE] = op_probe,
        [PROTOCOL_OP_VERIFY] = op_verify,
        [PROTOCOL_OP_WATCH] = op_watch,
        [PROTOCOL_OP_PAUSE] = op_pause,
        [PROTOCOL_OP_RESUME] = op_resume,
        [PROTOCOL_OP_FORGET] = op_forget,
        [PROTOCOL_OP_DEVICES] = op_devices,
        [PROTOCOL_OP_POLICIES] = op_policies,
        [PROTOCOL_OP_POLICY_PAUSE] = op_policy_pause,
        [PROTOCOL_OP_POLICY_RESUME] = op_policy_pause,
        [PROTOCOL_OP_REPORTS] = op_reports,
};

struct json_object *client_handle(struct pool *pool, const struct peer *peer, const char *line, size_t len,
                                  struct watch **watch) {
        struct protocol_request req;
        struct request_ctx c = { .pool = pool, .req = &req, .peer = peer };
        struct json_object *reply;
        const char *err;
        int r;

        r = protocol_request_parse(&req, line, len, &err);
        if (r < 0) {
                reply = protocol_reply_error(req.id, r, "%s", err);
                protocol_request_done(&req);
                return reply;
        }
        reply = client_check_rights(&c);
        if (!reply && !(reply = check_fields(&c)))
                reply = handlers[req.op](&c);
        if (!reply)
                reply = protocol_reply_error(req.id, -ENOMEM, "out of memory");
        if (c.watch && !json_object_get_boolean(json_object_object_get(reply, "ok"))) {
                watch_free(c.watch);
                c.watch = NULL;
        }
        *watch = c.watch;
        protocol_request_done(&req);
        return reply;
}
