/* wipectl verify: read a finished job's device back again (e.g. before the drive ships) and wait
 * for the result with the same progress view as wipe. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "wipectl.h"

/* Build {"op":"verify","job":id} with "verify" and "seed" when given; NULL on ENOMEM. */
static struct json_object *cmd_verify_request(int64_t id, const char *mode, const uint64_t *seed) {
        _cleanup_json_ struct json_object *req = protocol_request_new(0, PROTOCOL_OP_VERIFY);

        if (!req || json_object_object_add(req, "job", json_object_new_int64(id)) < 0)
                return NULL;
        if (mode && json_object_object_add(req, "verify", json_object_new_string(mode)) < 0)
                return NULL;
        if (seed && json_object_object_add(req, "seed", json_object_new_uint64(*seed)) < 0)
                return NULL;
        return TAKE_PTR(req);
}

static int cmd_verify_exec(const struct cmd_entry *self, const struct wipectl_options *opts, int argc,
                           char **argv) {
        enum { ARG_VERIFY = 0x100, ARG_SEED, ARG_NO_WAIT };
        static const struct option options[] = {
                { "verify", required_argument, NULL, ARG_VERIFY },
                { "seed", required_argument, NULL, ARG_SEED },
                { "no-wait", no_argument, NULL, ARG_NO_WAIT },
                WATCH_LONG_OPTIONS,
                { "help", no_argument, NULL, 'h' },
                {}
        };
        _cleanup_json_ struct json_object *request = NULL, *reply = NULL;
        struct client c = CLIENT_INIT;
        struct json_object *job = NULL;
        const char *mode = NULL;
        enum verify_mode parsed = VERIFY_NONE;
        bool no_wait = false, seed_set = false;
        uint64_t seed = 0;
        int64_t id;
        int opt, r;

        while ((opt = cmd_getopt(argc, argv, ":h", options)) >= 0)
                switch (opt) {
                case ARG_VERIFY:
                        if (verify_mode_parse(optarg, &parsed, NULL) < 0)
                                return cmd_usage_error(self, "bad verification mode '%s' (sample, sample=PCT with "
                                                       "PCT in (0, 100], last, all)", optarg);
                        if (parsed == VERIFY_NONE)
                                return cmd_usage_error(self, "--verify none: nothing to verify");
                        mode = optarg;
                        break;
                case ARG_SEED:
                        if (wipectl_parse_seed(optarg, &seed) < 0)
                                return cmd_usage_error(self, "bad seed '%s' (an integer from 0 to 2^64-1)", optarg);
                        seed_set = true;
                        break;
                case ARG_NO_WAIT:
                        no_wait = true;
                        break;
                default:
                        return cmd_option_other(self, argv, opt);
                }
        r = cmd_operand_job(self, argc, argv, &id);
        if (r >= 0)
                return r;
        /* Without --verify the job's own mode is used, which may be a sample: a seed can go. */
        if (seed_set && mode && parsed != VERIFY_SAMPLE)
                return cmd_usage_error(self, "--seed applies to --verify sample only");

        request = cmd_verify_request(id, mode, seed_set ? &seed : NULL);
        if (!request) {
                wipectl_error("verify: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        r = client_connect_call(&c, opts->socket_path, request, &reply);
        if (r != WIPECTL_EXIT_OK)
                return r;
        if (!json_object_object_get_ex(reply, "job", &job) || !json_object_is_type(job, json_type_object)) {
                wipectl_error("%s: verify reply without \"job\"", opts->socket_path);
                client_close(&c);
                return WIPECTL_EXIT_FAILURE;
        }
        return watch_finish(&c, opts, no_wait, reply, OUTPUT_JOB, &id, 1);
}

const struct cmd_entry cmd_verify_entry = {
        .name = "verify",
        .args = "[--verify MODE] [--seed N] [--no-wait] [--reconnect-timeout S] [--progress-interval S] JOB",
        .summary = "Read a finished job's device back again and wait for the result",
        .help = "  --verify MODE        sample[=PCT], last or all (default: the job's own mode, or last\n"
                "                       if it had none); the last pass is compared\n"
                "  --seed N             the seed that chooses the samples (default: random, recorded)\n"
                "  --no-wait            print the job and return at once\n" WATCH_OPTIONS_HELP,
        .exec = cmd_verify_exec,
};
