/* wipectl policies: the daemon's hot-plug bay policies (wiped(8) BAY POLICIES), each with its
 * settings, state, counters, last events and the disks it matches now (a dry run the daemon
 * makes: whether it would wipe each one inserted now, or why not); "policies pause NAME" and
 * "policies resume NAME" stop and restart a policy (the daemon keeps it across restarts). */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "wipectl.h"

/* A string array of o as "a, b, c" into buf; "" when empty or absent. */
static const char *cmd_policies_join(struct json_object *o, const char *key, char *buf, size_t n) {
        struct json_object *a = NULL;
        size_t used = 0;

        buf[0] = '\0';
        if (!json_object_object_get_ex(o, key, &a) || !json_object_is_type(a, json_type_array))
                return buf;
        for (size_t i = 0; i < json_object_array_length(a) && used < n; i++) {
                char e[OUTPUT_CELL];
                int w;

                output_escape(json_object_get_string(json_object_array_get_idx(a, i)), false, e, sizeof(e));
                w = snprintf(buf + used, n - used, "%s%s", i ? ", " : "", e);
                used += w > 0 ? (size_t) w : 0;
        }
        return buf;
}

static void cmd_policies_criteria(struct json_object *c) {
        static const char *const lists[][2] = { { "match", "match" }, { "transport", "transport" },
                                                { "model", "model" }, { "serial", "serial" },
                                                { "backing_file", "backing-file" } };
        struct json_object *v = NULL;
        char buf[1024], sz[32];

        for (size_t i = 0; i < sizeof(lists) / sizeof(*lists); i++)
                if (*cmd_policies_join(c, lists[i][0], buf, sizeof(buf)))
                        printf("  %-13s %s\n", lists[i][1], buf);
        if (json_object_object_get_ex(c, "rotational", &v) && json_object_is_type(v, json_type_boolean))
                printf("  %-13s %s\n", "rotational", json_object_get_boolean(v) ? "yes" : "no");
        if (output_get_int(c, "min_size_bytes", -1) >= 0)
                printf("  %-13s %s\n", "min-size", output_size(sz, sizeof(sz), output_get_u64(c, "min_size_bytes", 0)));
        if (output_get_int(c, "max_size_bytes", -1) >= 0)
                printf("  %-13s %s\n", "max-size", output_size(sz, sizeof(sz), output_get_u64(c, "max_size_bytes", 0)));
}

static void cmd_policies_one(struct json_object *p) {
        struct json_object *v = NULL, *crit = NULL;
        char name[OUTPUT_CELL], file[OUTPUT_CELL], hook[OUTPUT_CELL], rate[32];
        uint64_t max_rate = output_get_u64(p, "max_rate_bps", 0);

        output_escape(output_get_string(p, "name", "?"), false, name, sizeof(name));
        output_escape(output_get_string(p, "file", "?"), false, file, sizeof(file));
        printf("policy %s: %s (%s)\n", name, output_get_string(p, "state", "?"), file);
        if (json_object_object_get_ex(p, "criteria", &crit))
                cmd_policies_criteria(crit);
        printf("  %-13s %s\n", "content", output_get_string(p, "content", "?"));
        if (max_rate)
                snprintf(rate, sizeof(rate), "%.1f MB/s", (double) max_rate / 1e6);
        printf("  %-13s %s, verify %s, cipher %s, rate limit %s\n", "wipe", output_get_string(p, "method", "?"),
               output_get_string(p, "verify", "?"), output_get_string(p, "cipher", "?"), max_rate ? rate : "none");
        printf("  %-13s %s, settle %.1f s\n", "existing", output_get_string(p, "existing", "?"),
               output_get_double(p, "settle_s", 0));
        if (output_get_string(p, "hook", NULL))
                printf("  %-13s %s\n", "hook", output_escape(output_get_string(p, "hook", NULL), false, hook, sizeof(hook)));
        printf("  %-13s %" PRIu64 " started, %" PRIu64 " refused, %" PRIu64 " skipped\n", "jobs",
               output_get_u64(p, "jobs_started", 0), output_get_u64(p, "refused", 0), output_get_u64(p, "skipped", 0));
        if (json_object_object_get_ex(p, "devices", &v) && json_object_array_length(v) > 0) {
                printf("  matches now:\n");
                for (size_t i = 0; i < json_object_array_length(v); i++) {
                        struct json_object *d = json_object_array_get_idx(v, i), *b = NULL;
                        char node[OUTPUT_CELL], why[OUTPUT_CELL], sz[32];
                        bool yes = json_object_object_get_ex(d, "would_wipe", &b) && json_object_get_boolean(b);
                        bool existing = json_object_object_get_ex(d, "existing", &b) && json_object_get_boolean(b);

                        output_escape(output_get_string(d, "node", "?"), false, node, sizeof(node));
                        output_escape(output_get_string(d, "reason", ""), false, why, sizeof(why));
                        printf("    %-14s %10s  %s%s%s\n", node, output_size(sz, sizeof(sz), output_get_u64(d, "size_bytes", 0)),
                               yes ? "would wipe" : "no: ", yes ? "" : why,
                               existing ? " (present before the policy: existing = ignore leaves it)" : "");
                }
        }
        if (json_object_object_get_ex(p, "events", &v) && json_object_array_length(v) > 0) {
                printf("  last events:\n");
                for (size_t i = 0; i < json_object_array_length(v); i++) {
                        struct json_object *e = json_object_array_get_idx(v, i);
                        char dev[OUTPUT_CELL], what[OUTPUT_CELL], when[32] = "?";
                        time_t t = (time_t) output_get_double(e, "at", 0);
                        struct tm tm;

                        if (localtime_r(&t, &tm))
                                strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
                        output_escape(output_get_string(e, "device", "?"), false, dev, sizeof(dev));
                        output_escape(output_get_string(e, "event", "?"), false, what, sizeof(what));
                        printf("    %s  %s: %s\n", when, dev, what);
                }
        }
}

static int cmd_policies_text(struct json_object *result) {
        struct json_object *list = NULL;
        size_t n;

        json_object_object_get_ex(result, "policies", &list);
        n = json_object_array_length(list);
        if (n == 0) {
                printf("no policies (%s)\n", output_get_string(result, "policy_dir", "policy-dir = none"));
                return output_flush();
        }
        if (!output_get_string(result, "events", NULL))
                printf("warning: the daemon watches no device events: the policies never act\n");
        for (size_t i = 0; i < n; i++) {
                if (i)
                        putchar('\n');
                cmd_policies_one(json_object_array_get_idx(list, i));
        }
        return output_flush();
}

static int cmd_policies_exec(const struct cmd_entry *self, const struct wipectl_options *opts, int argc, char **argv) {
        static const struct option longopts[] = {
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_json_ struct json_object *request = NULL, *reply = NULL, *result = NULL;
        struct client c = CLIENT_INIT;
        enum protocol_op op = PROTOCOL_OP_POLICIES;
        int ch, r;

        while ((ch = cmd_getopt(argc, argv, ":h", longopts)) != -1)
                return cmd_option_other(self, argv, ch);
        if (optind < argc) {
                if (strcmp(argv[optind], "pause") == 0)
                        op = PROTOCOL_OP_POLICY_PAUSE;
                else if (strcmp(argv[optind], "resume") == 0)
                        op = PROTOCOL_OP_POLICY_RESUME;
                else
                        return cmd_usage_error(self, "unknown action '%s' (pause, resume)", argv[optind]);
                if (argc - optind != 2)
                        return cmd_usage_error(self, "%s: %s", argv[optind],
                                               argc - optind < 2 ? "no policy given" : "one policy at a time");
        }
        request = protocol_request_new(0, op);
        if (!request || (op != PROTOCOL_OP_POLICIES &&
                         json_object_object_add(request, "name", json_object_new_string(argv[optind + 1])) < 0)) {
                wipectl_error("policies: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        r = client_connect_call(&c, opts->socket_path, request, &reply);
        if (r != 0)
                return r;
        client_close(&c);
        result = output_from_reply(reply);
        if (!result) {
                wipectl_error("policies: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        if (opts->json)
                return output_print(OUTPUT_PROBE, result, true);
        if (op != PROTOCOL_OP_POLICIES) {
                char name[OUTPUT_CELL];

                printf("policy %s: %s\n", output_escape(argv[optind + 1], false, name, sizeof(name)),
                       output_get_string(result, "state", "?"));
                return output_flush();
        }
        return cmd_policies_text(result);
}

const struct cmd_entry cmd_policies_entry = {
        .name = "policies",
        .args = "[--json] | pause NAME | resume NAME",
        .summary = "Show the bay policies and what they would wipe now; pause or resume one",
        .help = "  --json               print {\"policies\":[POLICY...]} as the daemon sent it\n"
                "  pause NAME           the policy starts no job until resumed (also after a restart)\n"
                "  resume NAME          the policy acts on the devices that appear from now on\n",
        .exec = cmd_policies_exec,
};
