/* wipectl probe: what the daemon sees on devices, and whether it would wipe them. The probe op
 * also serves the confirmation of "wipectl wipe". */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "wipectl.h"

bool cmd_probe_wipeable(struct json_object *probe) {
        struct json_object *v = NULL;

        return probe && json_object_object_get_ex(probe, "wipeable", &v) && json_object_is_type(v, json_type_boolean) &&
               json_object_get_boolean(v);
}

/* Build {"op":"probe","devices":[...]}; NULL on ENOMEM. */
static struct json_object *cmd_probe_request(char *const *devices, size_t n) {
        _cleanup_json_ struct json_object *req = protocol_request_new(0, PROTOCOL_OP_PROBE);
        struct json_object *a = json_object_new_array();

        if (!req || !a || json_object_object_add(req, "devices", a) < 0) {
                json_object_put(a);
                return NULL;
        }
        for (size_t i = 0; i < n; i++)
                if (json_object_array_add(a, json_object_new_string(devices[i])) < 0)
                        return NULL;
        return TAKE_PTR(req);
}

int cmd_probe_call(struct client *c, char *const *devices, size_t n, struct json_object **ret) {
        _cleanup_json_ struct json_object *request = cmd_probe_request(devices, n);
        _cleanup_json_ struct json_object *reply = NULL, *result = NULL;
        struct json_object *list = NULL;
        int r;

        *ret = NULL;
        if (!request) {
                c->origin = CLIENT_ORIGIN_LOCAL;
                wipectl_error("probe: out of memory");
                return -ENOMEM;
        }
        r = client_call(c, request, &reply);
        if (r < 0)
                return r;

        /* The wipe confirmation trusts this reply: check its shape rather than show half of it. */
        if (!json_object_object_get_ex(reply, "devices", &list) || !json_object_is_type(list, json_type_array) ||
            json_object_array_length(list) != n) {
                c->origin = CLIENT_ORIGIN_TRANSPORT;
                wipectl_error("%s: probe reply without one entry per device", c->path);
                return -EBADMSG;
        }
        for (size_t i = 0; i < n; i++) {
                struct json_object *probe = json_object_array_get_idx(list, i), *v = NULL;

                if (!json_object_is_type(probe, json_type_object) ||
                    !json_object_object_get_ex(probe, "wipeable", &v) || !json_object_is_type(v, json_type_boolean)) {
                        c->origin = CLIENT_ORIGIN_TRANSPORT;
                        wipectl_error("%s: probe reply: entry for %s without \"wipeable\"", c->path, devices[i]);
                        return -EBADMSG;
                }
        }
        result = output_from_reply(reply);
        if (!result) {
                c->origin = CLIENT_ORIGIN_LOCAL;
                wipectl_error("probe: out of memory");
                return -ENOMEM;
        }
        *ret = TAKE_PTR(result);
        return 0;
}

static int cmd_probe_exec(const struct cmd_entry *self, const struct wipectl_options *opts, int argc, char **argv) {
        enum { ARG_JSON = 0x100 };
        static const struct option options[] = {
                { "json", no_argument, NULL, ARG_JSON },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        _cleanup_json_ struct json_object *result = NULL;
        struct client c = CLIENT_INIT;
        struct json_object *list = NULL;
        bool json = opts->json, refused = false;
        size_t ndevices;
        char **devices;
        int opt, r;

        while ((opt = getopt_long(argc, argv, ":h", options, NULL)) >= 0)
                switch (opt) {
                case ARG_JSON:
                        json = true;
                        break;
                case 'h':
                        cmd_usage(self, stdout);
                        return WIPECTL_EXIT_OK;
                default:
                        return cmd_option_error(self, argv, opt);
                }
        devices = argv + optind;
        ndevices = (size_t) (argc - optind);
        if (ndevices == 0)
                return cmd_usage_error(self, "no device given");
        if (ndevices > PROTOCOL_DEVICES_MAX)
                return cmd_usage_error(self, "more than %d devices", PROTOCOL_DEVICES_MAX);
        for (size_t i = 0; i < ndevices; i++)
                if (!*devices[i])
                        return cmd_usage_error(self, "empty device name");

        r = client_connect(&c, opts->socket_path);
        if (r >= 0)
                r = cmd_probe_call(&c, devices, ndevices, &result);
        if (r < 0) {
                r = client_translate_errno(&c, r);
                client_close(&c);
                return r;
        }
        client_close(&c);

        if (output_render(OUTPUT_PROBE, result, json) < 0) {
                wipectl_error("stdout: write error");
                return WIPECTL_EXIT_FAILURE;
        }
        /* A refusal is the answer, not an error of the request; the exit status still tells it, and
         * stderr names each one for a script that reads only that. */
        json_object_object_get_ex(result, "devices", &list);
        for (size_t i = 0; i < ndevices; i++) {
                struct json_object *probe = json_object_array_get_idx(list, i);
                char line[1024];

                if (output_refusal_line(probe, line, sizeof(line))) {
                        wipectl_error("%s", line);
                        refused = true;
                }
        }
        return refused ? WIPECTL_EXIT_REFUSED : WIPECTL_EXIT_OK;
}

const struct cmd_entry cmd_probe_entry = {
        .name = "probe",
        .args = "[--json] DEVICE...",
        .summary = "Show what the daemon sees on devices, and whether it would wipe them",
        .help = "  --json               print {\"devices\":[PROBE...]} as the daemon sent it\n",
        .exec = cmd_probe_exec,
};
