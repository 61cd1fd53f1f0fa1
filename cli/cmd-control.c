/* wipectl cancel, pause, resume, forget: one request per job over one connection, each job shown
 * in the state it reached. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "wipectl.h"

/* The jobs a cancel stopped as text, one line each, "job 4: /dev/loop3: cancelled (pass 1/3)". An
 * exit status. */
static int cmd_control_cancelled_text(struct json_object *jobs) {
        for (size_t i = 0; i < json_object_array_length(jobs); i++) {
                _cleanup_json_ struct json_object *o = json_object_new_object();
                int r;

                bool made = o && json_object_object_add(o, "job", json_object_get(json_object_array_get_idx(jobs, i))) == 0;

                r = output_print(OUTPUT_JOB, made ? o : NULL, false);
                if (r != WIPECTL_EXIT_OK)
                        return r;
        }
        return WIPECTL_EXIT_OK;
}

/* Send op for every job id in argv[optind..] (device: resume's "device"), printing each job as it
 * is once the op took effect (a cancel or pause: once the job stopped), or, for forget, "job N:
 * forgotten". Goes on after an error; returns the status of the first one. */
static int cmd_control_run(const struct cmd_entry *self, const struct wipectl_options *opts, enum protocol_op op,
                           int argc, char **argv, const char *device) {
        _cleanup_json_ struct json_object *jobs = json_object_new_array();
        _cleanup_free_ int64_t *ids = NULL;
        struct client c = CLIENT_INIT;
        int status = WIPECTL_EXIT_OK, r;
        bool connected = false;
        size_t n;

        if (argc - optind < 1)
                return cmd_usage_error(self, "no job given");
        if (device && argc - optind > 1)
                return cmd_usage_error(self, "--device names the device of one job only");
        r = cmd_operand_jobs(self, argc, argv, &ids, &n);
        if (r >= 0)
                return r;
        if (!jobs) {
                wipectl_error("%s: out of memory", self->name);
                return WIPECTL_EXIT_FAILURE;
        }
        for (size_t i = 0; i < n; i++) {
                _cleanup_json_ struct json_object *request = protocol_request_new(0, op), *reply = NULL;
                struct json_object *job;
                int64_t id = ids[i];

                if (!request || json_object_object_add(request, "job", json_object_new_int64(id)) < 0 ||
                    (device && json_object_object_add(request, "device", json_object_new_string(device)) < 0)) {
                        wipectl_error("%s: out of memory", self->name);
                        return WIPECTL_EXIT_FAILURE;
                }
                if (!connected) {
                        r = client_connect_call(&c, opts->socket_path, request, &reply);
                        if (r != WIPECTL_EXIT_OK)
                                return r;
                        connected = true;
                } else {
                        r = client_call(&c, request, &reply);
                        if (r < 0) {
                                r = client_translate_errno(&c, r);
                                if (status == WIPECTL_EXIT_OK)
                                        status = r;
                                if (r == WIPECTL_EXIT_UNREACHABLE)
                                        break;
                                continue;
                        }
                }
                /* A pause or cancel is answered at once; the job is paused or cancelled once its
                 * device is closed. */
                if ((op == PROTOCOL_OP_PAUSE || op == PROTOCOL_OP_CANCEL) &&
                    (r = watch_until_stopped(opts, reply)) != WIPECTL_EXIT_OK && status == WIPECTL_EXIT_OK)
                        status = r;
                if (op == PROTOCOL_OP_FORGET) {
                        if (!opts->json)
                                printf("job %" PRId64 ": forgotten\n", id);
                        json_object_array_add(jobs, json_object_new_int64(id));
                } else if (json_object_object_get_ex(reply, "job", &job))
                        json_object_array_add(jobs, json_object_get(job));
        }
        client_close(&c);
        if (op == PROTOCOL_OP_FORGET) {
                if (opts->json && json_object_array_length(jobs) > 0) {
                        _cleanup_json_ struct json_object *o = json_object_new_object();

                        bool made = o && json_object_object_add(o, "forgotten", json_object_get(jobs)) == 0;

                        r = output_print(OUTPUT_JOBS, made ? o : NULL, true);
                        if (status == WIPECTL_EXIT_OK)
                                status = r;
                }
                return status;
        }
        if (json_object_array_length(jobs) > 0) {
                _cleanup_json_ struct json_object *o = json_object_new_object();

                if (!o || json_object_object_add(o, "jobs", json_object_get(jobs)) < 0 ||
                    /* cancel printed {"job":JOB} before it took several: kept for one job, for one
                     * release (format_version 2). */
                    (op == PROTOCOL_OP_CANCEL && n == 1 &&
                     json_object_object_add(o, "job", json_object_get(json_object_array_get_idx(jobs, 0))) < 0)) {
                        wipectl_error("%s: out of memory", self->name);
                        return WIPECTL_EXIT_FAILURE;
                }
                if (op == PROTOCOL_OP_CANCEL && !opts->json)
                        r = cmd_control_cancelled_text(jobs);
                else
                        r = output_print(OUTPUT_JOBS, o, opts->json);
                if (status == WIPECTL_EXIT_OK)
                        status = r;
        }
        return status;
}

static int cmd_cancel_exec(const struct cmd_entry *self, const struct wipectl_options *opts, int argc, char **argv) {
        int r = cmd_options(self, argc, argv, NULL, NULL);

        return r >= 0 ? r : cmd_control_run(self, opts, PROTOCOL_OP_CANCEL, argc, argv, NULL);
}

static int cmd_pause_exec(const struct cmd_entry *self, const struct wipectl_options *opts, int argc, char **argv) {
        int r = cmd_options(self, argc, argv, NULL, NULL);

        return r >= 0 ? r : cmd_control_run(self, opts, PROTOCOL_OP_PAUSE, argc, argv, NULL);
}

static int cmd_forget_exec(const struct cmd_entry *self, const struct wipectl_options *opts, int argc, char **argv) {
        int r = cmd_options(self, argc, argv, NULL, NULL);

        return r >= 0 ? r : cmd_control_run(self, opts, PROTOCOL_OP_FORGET, argc, argv, NULL);
}

static int cmd_resume_exec(const struct cmd_entry *self, const struct wipectl_options *opts, int argc, char **argv) {
        static const struct option options[] = {
                { "device", required_argument, NULL, 'd' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        _cleanup_free_ char **absolute = NULL;
        const char *device = NULL;
        int opt, r;

        while ((opt = cmd_getopt(argc, argv, ":h", options)) >= 0) {
                if (opt != 'd')
                        return cmd_option_other(self, argv, opt);
                if (!*optarg)
                        return cmd_usage_error(self, "--device: empty path");
                device = optarg;
        }
        if (device) {
                r = cmd_probe_absolute((char *const[]) { (char *) device }, 1, &absolute);
                if (r != 0)
                        return r;
                device = absolute[0];
        }
        return cmd_control_run(self, opts, PROTOCOL_OP_RESUME, argc, argv, device);
}

const struct cmd_entry cmd_cancel_entry = {
        .name = "cancel",
        .args = "JOB...",
        .summary = "Stop jobs; what they wrote stays written",
        .exec = cmd_cancel_exec,
};

const struct cmd_entry cmd_pause_entry = {
        .name = "pause",
        .args = "JOB...",
        .summary = "Stop jobs at a checkpoint, to resume them later",
        .exec = cmd_pause_exec,
};

const struct cmd_entry cmd_resume_entry = {
        .name = "resume",
        .args = "[--device PATH] JOB...",
        .summary = "Continue paused or interrupted jobs from their checkpoint",
        .help = "  --device PATH        the job's device, for one without a serial, WWN or backing file\n",
        .exec = cmd_resume_exec,
};

const struct cmd_entry cmd_forget_entry = {
        .name = "forget",
        .args = "JOB...",
        .summary = "Drop ended or paused jobs from the list (their reports stay)",
        .exec = cmd_forget_exec,
};
