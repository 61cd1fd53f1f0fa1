/* wipectl status, list, cancel, report, version: one request, one reply, one rendering. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "wipectl.h"

#define CMD_JOB_RECENT_S 3600              /* list: jobs that ended this long ago at most */

/* Send request, and print the reply as kind: the reply without "id" and "ok", or, when unwrap is
 * set, the object under that key. Returns an exit status. */
static int cmd_job_run(const struct wipectl_options *opts, struct json_object *request, enum output_kind kind,
                       const char *unwrap) {
        _cleanup_json_ struct json_object *reply = NULL, *result = NULL;
        struct client c = CLIENT_INIT;
        struct json_object *inner = NULL;
        int r;

        if (!request) {
                wipectl_error("request: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        r = client_connect_call(&c, opts->socket_path, request, &reply);
        if (r != WIPECTL_EXIT_OK)
                return r;
        client_close(&c);

        if (unwrap) {
                if (!json_object_object_get_ex(reply, unwrap, &inner) || !json_object_is_type(inner, json_type_object)) {
                        wipectl_error("%s: reply without \"%s\"", opts->socket_path, unwrap);
                        return WIPECTL_EXIT_FAILURE;
                }
                result = json_object_get(inner);
        } else
                result = output_from_reply(reply);
        return output_print(kind, result, opts->json);
}

/* report's option besides --help. With val 'k', "--keys=x" is reported as "unknown option '-k'". */
static const struct option cmd_job_keys_option = { "keys", no_argument, NULL, 'k' };

/* A request for op with "job": the single JOB argument. NULL with *status set on a usage error. */
static struct json_object *cmd_job_one(const struct cmd_entry *self, enum protocol_op op, int argc, char **argv,
                                       int *status) {
        struct json_object *req;
        int64_t id;

        if (argc - optind != 1) {
                *status = cmd_usage_error(self, argc - optind < 1 ? "no job given" : "one job at a time");
                return NULL;
        }
        if (wipectl_parse_job_id(argv[optind], &id) < 0) {
                *status = cmd_usage_error(self, "%s: not a job id", argv[optind]);
                return NULL;
        }
        req = protocol_request_new(0, op);
        if (req && json_object_object_add(req, "job", json_object_new_int64(id)) < 0) {
                json_object_put(req);
                req = NULL;
        }
        *status = req ? WIPECTL_EXIT_OK : WIPECTL_EXIT_FAILURE;
        if (!req)
                wipectl_error("%s: out of memory", self->name);
        return req;
}

static int cmd_job_status_exec(const struct cmd_entry *self, const struct wipectl_options *opts, int argc,
                               char **argv) {
        _cleanup_json_ struct json_object *request = NULL;
        struct json_object *jobs = NULL;
        int r;

        r = cmd_options(self, argc, argv, NULL, NULL);
        if (r >= 0)
                return r;
        request = protocol_request_new(0, PROTOCOL_OP_STATUS);
        if (!request) {
                wipectl_error("status: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        if (optind < argc) {
                jobs = json_object_new_array();
                if (!jobs || json_object_object_add(request, "jobs", jobs) < 0) {
                        json_object_put(jobs);
                        wipectl_error("status: out of memory");
                        return WIPECTL_EXIT_FAILURE;
                }
        }
        for (int i = optind; i < argc; i++) {
                int64_t id;

                if (wipectl_parse_job_id(argv[i], &id) < 0)
                        return cmd_usage_error(self, "%s: not a job id", argv[i]);
                if (json_object_array_add(jobs, json_object_new_int64(id)) < 0) {
                        wipectl_error("status: out of memory");
                        return WIPECTL_EXIT_FAILURE;
                }
        }
        return cmd_job_run(opts, request, OUTPUT_JOBS, NULL);
}

/* {"jobs":[...]} of a list reply: every job when all, else those that have not ended and those
 * that ended within CMD_JOB_RECENT_S. A new object, NULL on ENOMEM. */
static struct json_object *cmd_job_list_filter(struct json_object *reply, bool all) {
        _cleanup_json_ struct json_object *result = json_object_new_object();
        struct json_object *jobs = NULL, *kept = json_object_new_array();
        double now = (double) time(NULL);

        if (!result || !kept || json_object_object_add(result, "jobs", kept) < 0) {
                json_object_put(kept);
                return NULL;
        }
        if (!json_object_object_get_ex(reply, "jobs", &jobs) || !json_object_is_type(jobs, json_type_array))
                return TAKE_PTR(result);
        for (size_t i = 0; i < json_object_array_length(jobs); i++) {
                struct json_object *job = json_object_array_get_idx(jobs, i);
                double ended = output_get_double(job, "ended_at", -1);

                if (!all && output_state_ended(output_get_string(job, "state", NULL)) && ended >= 0 &&
                    now - ended > CMD_JOB_RECENT_S)
                        continue;
                if (json_object_array_add(kept, json_object_get(job)) < 0) {
                        json_object_put(job);
                        return NULL;
                }
        }
        return TAKE_PTR(result);
}

static int cmd_job_list_exec(const struct cmd_entry *self, const struct wipectl_options *opts, int argc,
                             char **argv) {
        static const struct option all_option = { "all", no_argument, NULL, 'a' };
        _cleanup_json_ struct json_object *request = NULL, *reply = NULL, *result = NULL;
        struct client c = CLIENT_INIT;
        bool all = false;
        int r;

        r = cmd_options(self, argc, argv, &all_option, &all);
        if (r >= 0)
                return r;
        if (optind < argc)
                return cmd_usage_error(self, "unexpected argument '%s'", argv[optind]);
        request = protocol_request_new(0, PROTOCOL_OP_LIST);
        if (!request) {
                wipectl_error("list: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        r = client_connect_call(&c, opts->socket_path, request, &reply);
        if (r != WIPECTL_EXIT_OK)
                return r;
        client_close(&c);
        result = cmd_job_list_filter(reply, all);
        return output_print(OUTPUT_JOBS, result, opts->json);
}

static int cmd_job_cancel_exec(const struct cmd_entry *self, const struct wipectl_options *opts, int argc,
                               char **argv) {
        _cleanup_json_ struct json_object *request = NULL;
        int r;

        r = cmd_options(self, argc, argv, NULL, NULL);
        if (r >= 0)
                return r;
        request = cmd_job_one(self, PROTOCOL_OP_CANCEL, argc, argv, &r);
        if (!request)
                return r;
        return cmd_job_run(opts, request, OUTPUT_JOB, NULL);
}

static int cmd_job_report_exec(const struct cmd_entry *self, const struct wipectl_options *opts, int argc,
                               char **argv) {
        _cleanup_json_ struct json_object *request = NULL;
        bool keys = false;
        int r;

        r = cmd_options(self, argc, argv, &cmd_job_keys_option, &keys);
        if (r >= 0)
                return r;
        request = cmd_job_one(self, PROTOCOL_OP_REPORT, argc, argv, &r);
        if (!request)
                return r;
        if (json_object_object_add(request, "keys", json_object_new_boolean(keys)) < 0) {
                wipectl_error("report: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        return cmd_job_run(opts, request, OUTPUT_REPORT, "report");
}

/* The client's version always; the daemon's when it answers. */
static int cmd_job_version_exec(const struct cmd_entry *self, const struct wipectl_options *opts, int argc,
                                char **argv) {
        _cleanup_json_ struct json_object *reply = NULL, *result = NULL;
        struct client c = CLIENT_INIT;
        int r, status = WIPECTL_EXIT_OK;

        r = cmd_options(self, argc, argv, NULL, NULL);
        if (r >= 0)
                return r;
        if (optind < argc)
                return cmd_usage_error(self, "unexpected argument '%s'", argv[optind]);

        result = json_object_new_object();
        if (!result || json_object_object_add(result, "client", json_object_new_string(PACKAGE_VERSION)) < 0) {
                wipectl_error("version: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        r = client_connect(&c, opts->socket_path);
        if (r >= 0)
                r = client_call_simple(&c, PROTOCOL_OP_VERSION, &reply);
        if (r < 0)
                status = client_translate_errno(&c, r);
        client_close(&c);
        if (reply) {
                struct json_object *daemon = output_from_reply(reply);
                int64_t protocol = output_get_int(reply, "protocol", -1);

                if (protocol != PROTOCOL_VERSION)
                        wipectl_error("%s: wiped speaks protocol %" PRId64 ", wipectl speaks %d", opts->socket_path,
                                      protocol, PROTOCOL_VERSION);

                if (!daemon || json_object_object_add(result, "daemon", daemon) < 0) {
                        json_object_put(daemon);
                        wipectl_error("version: out of memory");
                        return WIPECTL_EXIT_FAILURE;
                }
        }
        if (output_print(OUTPUT_VERSION, result, opts->json) != WIPECTL_EXIT_OK)
                return WIPECTL_EXIT_FAILURE;
        return status;
}

const struct cmd_entry cmd_status_entry = {
        .name = "status",
        .args = "[JOB...]",
        .summary = "Show the given jobs, or all jobs",
        .exec = cmd_job_status_exec,
};

const struct cmd_entry cmd_list_entry = {
        .name = "list",
        .args = "[--all]",
        .summary = "Show the jobs running and those that ended in the last hour, oldest first",
        .help = "  --all                every job the daemon remembers\n",
        .exec = cmd_job_list_exec,
};

const struct cmd_entry cmd_cancel_entry = {
        .name = "cancel",
        .args = "JOB",
        .summary = "Stop a job; what it wrote stays written",
        .exec = cmd_job_cancel_exec,
};

const struct cmd_entry cmd_report_entry = {
        .name = "report",
        .args = "[--keys] JOB",
        .summary = "Show the wipe report of a job",
        .help = "  --keys               include each pass's key and the openssl command that checks\n"
                "                       the device (needs root)\n",
        .exec = cmd_job_report_exec,
};

const struct cmd_entry cmd_version_entry = {
        .name = "version",
        .args = "",
        .summary = "Show the versions of wipectl and wiped",
        .exec = cmd_job_version_exec,
};
