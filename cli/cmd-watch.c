/* wipectl watch and wait: follow jobs until they end, with the live view or as JSON events
 * (watch), or quietly with one line per job at the end (wait). Both use the daemon's watch
 * stream, never polling, and exit as wipe does when its jobs end. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "wipectl.h"

#define CMD_WATCH_INTERVAL_MIN_MS 100
#define CMD_WATCH_INTERVAL_MAX_MS 3600000
#define CMD_WAIT_INTERVAL_MS CMD_WATCH_INTERVAL_MAX_MS /* wait needs state changes only */

/* Connect and watch_wait() as s says. Returns -1 when every job has ended, or an exit status
 * (130 after Ctrl-C); *status as watch_wait() leaves it, NULL when the connection failed. */
static int cmd_watch_run(const struct wipectl_options *opts, const struct watch_settings *s,
                         struct json_object **status) {
        struct client c = CLIENT_INIT;
        int r;

        *status = NULL;
        r = client_connect(&c, opts->socket_path);
        if (r < 0) {
                client_close(&c);
                return client_translate_errno(&c, r);
        }
        return watch_wait(&c, s, opts->json, status);
}

static int cmd_watch_exec(const struct cmd_entry *self, const struct wipectl_options *opts, int argc,
                          char **argv) {
        enum { ARG_INTERVAL = 0x100 };
        static const struct option options[] = {
                { "interval", required_argument, NULL, ARG_INTERVAL },
                WATCH_LONG_OPTIONS,
                { "help", no_argument, NULL, 'h' },
                {}
        };
        _cleanup_json_ struct json_object *status = NULL;
        _cleanup_free_ int64_t *ids = NULL;
        struct watch_settings s = {};
        struct json_object *jobs = NULL;
        int opt, r;

        while ((opt = cmd_getopt(argc, argv, ":h", options)) >= 0)
                switch (opt) {
                case ARG_INTERVAL:
                        if (watch_parse_seconds(optarg, CMD_WATCH_INTERVAL_MIN_MS, CMD_WATCH_INTERVAL_MAX_MS, &s.interval_ms) < 0)
                                return cmd_usage_error(self, "bad interval '%s' (seconds, 0.1 to 3600)", optarg);
                        break;
                default:
                        return cmd_option_other(self, argv, opt);
                }
        r = cmd_operand_jobs(self, argc, argv, &ids, &s.n);
        if (r >= 0)
                return r;
        s.ids = ids;
        s.events = opts->json;
        s.view = opts->json ? NULL : stdout;

        r = cmd_watch_run(opts, &s, &status);
        if (r >= 0)
                return r;
        json_object_object_get_ex(status, "jobs", &jobs);
        if (!opts->json && json_object_array_length(jobs) == 0) {
                printf("No jobs to watch.\n");
                if (output_flush() != WIPECTL_EXIT_OK)
                        return WIPECTL_EXIT_FAILURE;
        }
        return watch_outcome(status);
}

static int cmd_wait_exec(const struct cmd_entry *self, const struct wipectl_options *opts, int argc, char **argv) {
        static const struct option options[] = {
                WATCH_LONG_OPTIONS,
                { "help", no_argument, NULL, 'h' },
                {}
        };
        _cleanup_json_ struct json_object *status = NULL;
        _cleanup_free_ int64_t *ids = NULL;
        struct watch_settings s = { .interval_ms = CMD_WAIT_INTERVAL_MS };
        int opt, r;

        while ((opt = cmd_getopt(argc, argv, ":h", options)) >= 0)
                switch (opt) {
                default:
                        return cmd_option_other(self, argv, opt);
                }
        r = cmd_operand_jobs(self, argc, argv, &ids, &s.n);
        if (r >= 0)
                return r;
        s.ids = ids;

        r = cmd_watch_run(opts, &s, &status);
        if (r >= 0)
                return r;
        if (output_print(OUTPUT_ENDED, status, opts->json) != WIPECTL_EXIT_OK)
                return WIPECTL_EXIT_FAILURE;
        return watch_outcome(status);
}

const struct cmd_entry cmd_watch_entry = {
        .name = "watch",
        .args = "[--interval SECONDS] [--reconnect-timeout SECONDS] [--progress-interval SECONDS] [JOB...]",
        .summary = "Show jobs live until they end (default: every job not ended)",
        .help = "  --interval SECONDS   how often the daemon sends progress, 0.1 to 3600 (default: 0.5 on a\n"
                "                       terminal, 1 otherwise); with --json every event is printed, one\n"
                "                       JSON object per line\n"
                WATCH_OPTIONS_HELP,
        .exec = cmd_watch_exec,
};

const struct cmd_entry cmd_wait_entry = {
        .name = "wait",
        .args = "[--reconnect-timeout SECONDS] [JOB...]",
        .summary = "Wait until jobs end (default: every job not ended), one line per job",
        .help = WATCH_OPTIONS_HELP,
        .exec = cmd_wait_exec,
};
