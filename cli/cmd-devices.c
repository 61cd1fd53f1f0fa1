/* wipectl devices: the block devices of the machine in one table, as lsblk shows them, with the
 * daemon's answer to "may it be wiped, and if not, why". The daemon computes it (the devices op),
 * so that the answer is the one a submit would give. --wipeable prints only the nodes that may be
 * wiped, one a line, for scripts and the bash completion. */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "wipectl.h"

enum { DEVICES_COLUMNS = 9 };

/* The reason in a refusal message "NODE: refusing: REASON", or the whole message. */
static const char *cmd_devices_reason(struct json_object *dev) {
        struct json_object *refusal = NULL;
        const char *msg, *s;

        if (!json_object_object_get_ex(dev, "refusal", &refusal) || !json_object_is_type(refusal, json_type_object))
                return "refused";
        msg = output_get_string(refusal, "message", "refused");
        s = strstr(msg, ": refusing: ");
        return s ? s + strlen(": refusing: ") : msg;
}

/* Fill row r of t from dev, its name after prefix (the tree mark of a partition). */
static void cmd_devices_cells(struct output_table *t, size_t r, struct json_object *dev, const char *prefix) {
        struct json_object *v = NULL;
        char name[OUTPUT_CELL], what[OUTPUT_CELL], where[OUTPUT_CELL];
        const char *content = output_get_string(dev, "content", NULL), *holder = output_get_string(dev, "holder", NULL);
        const char *mnt = output_get_string(dev, "mountpoint", NULL);
        bool wipeable = json_object_object_get_ex(dev, "wipeable", &v) && json_object_get_boolean(v);
        int64_t size = output_get_int(dev, "size_bytes", -1);

        output_escape(output_get_string(dev, "name", "?"), false, name, sizeof(name));
        snprintf(output_table_cell(t, r, 0), OUTPUT_CELL, "%s%s", prefix, name);
        if (size >= 0)
                output_size(output_table_cell(t, r, 1), OUTPUT_CELL, (uint64_t) size);
        else
                snprintf(output_table_cell(t, r, 1), OUTPUT_CELL, "-");
        output_escape(output_get_string(dev, "model", ""), false, output_table_cell(t, r, 2), OUTPUT_CELL);
        output_escape(output_get_string(dev, "serial", ""), false, output_table_cell(t, r, 3), OUTPUT_CELL);
        output_escape(output_get_string(dev, "transport", ""), false, output_table_cell(t, r, 4), OUTPUT_CELL);
        if (json_object_object_get_ex(dev, "rotational", &v) && json_object_is_type(v, json_type_boolean))
                snprintf(output_table_cell(t, r, 5), OUTPUT_CELL, "%d", json_object_get_boolean(v) ? 1 : 0);
        /* What is on it: its content, and who holds it when something does (lsblk shows holders as
         * children; one line per device is enough here). */
        output_escape(content ? content : "", false, what, sizeof(what));
        if (holder) {
                char h[OUTPUT_CELL];

                output_escape(holder, false, h, sizeof(h));
                snprintf(output_table_cell(t, r, 6), OUTPUT_CELL, "%.100s%s%.100s", what, *what ? ", held by " : "held by ", h);
        } else
                snprintf(output_table_cell(t, r, 6), OUTPUT_CELL, "%s", what);
        output_escape(mnt ? mnt : "", false, where, sizeof(where));
        snprintf(output_table_cell(t, r, 7), OUTPUT_CELL, "%s", where);
        if (wipeable)
                snprintf(output_table_cell(t, r, 8), OUTPUT_CELL, "yes");
        else {
                char reason[OUTPUT_CELL];

                output_escape(cmd_devices_reason(dev), false, reason, sizeof(reason));
                snprintf(output_table_cell(t, r, 8), OUTPUT_CELL, "no: %.240s", reason);
        }
}

/* The partitions array of a disk row (an empty one when absent). */
static size_t cmd_devices_nparts(struct json_object *dev, struct json_object **parts) {
        *parts = NULL;
        if (!json_object_object_get_ex(dev, "partitions", parts) || !json_object_is_type(*parts, json_type_array))
                return 0;
        return json_object_array_length(*parts);
}

/* {"devices":[...]} as a table, partitions indented under their disk as lsblk draws them. */
static int cmd_devices_text(struct json_object *result) {
        static const char *const header[DEVICES_COLUMNS] = { "NAME", "SIZE", "MODEL", "SERIAL", "TRAN", "ROTA",
                                                             "CONTENT", "MOUNTPOINT", "WIPEABLE" };
        static const bool right[DEVICES_COLUMNS] = { false, true, false, false, false, true, false, false, false };
        struct json_object *list = NULL, *parts;
        struct output_table t;
        size_t rows = 0, r = 1, n;

        json_object_object_get_ex(result, "devices", &list);
        n = json_object_array_length(list);
        for (size_t i = 0; i < n; i++)
                rows += 1 + cmd_devices_nparts(json_object_array_get_idx(list, i), &parts);
        if (rows == 0) {
                puts("no block devices");
                return output_flush();
        }
        if (output_table_init(&t, header, right, DEVICES_COLUMNS, rows) < 0) {
                output_table_done(&t);
                wipectl_error("devices: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        for (size_t i = 0; i < n; i++) {
                struct json_object *dev = json_object_array_get_idx(list, i);
                size_t np = cmd_devices_nparts(dev, &parts);

                cmd_devices_cells(&t, r++, dev, "");
                for (size_t k = 0; k < np; k++)
                        cmd_devices_cells(&t, r++, json_object_array_get_idx(parts, k),
                                          k + 1 < np ? "\u251c\u2500" : "\u2514\u2500");
        }
        output_table_print(&t, "");
        output_table_done(&t);
        return output_flush();
}

/* The node of every device (disks, then each disk's partitions) that may be wiped, one a line. */
static int cmd_devices_names(struct json_object *result) {
        struct json_object *list = NULL, *parts, *v;

        json_object_object_get_ex(result, "devices", &list);
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                struct json_object *dev = json_object_array_get_idx(list, i);
                size_t np = cmd_devices_nparts(dev, &parts);

                for (size_t k = 0; k <= np; k++) {
                        struct json_object *d = k == 0 ? dev : json_object_array_get_idx(parts, k - 1);

                        if (json_object_object_get_ex(d, "wipeable", &v) && json_object_get_boolean(v))
                                puts(output_get_string(d, "node", ""));
                }
        }
        return output_flush();
}

static int cmd_devices_exec(const struct cmd_entry *self, const struct wipectl_options *opts, int argc,
                            char **argv) {
        static const struct option longopts[] = {
                { "wipeable", no_argument, NULL, 'w' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_json_ struct json_object *request = NULL, *reply = NULL, *result = NULL;
        struct client c = CLIENT_INIT;
        bool json, names = false;
        int ch, r;

        /* --json/-J, before the command or anywhere after it, is the global option. */
        while ((ch = cmd_getopt(argc, argv, ":h", longopts)) != -1)
                switch (ch) {
                case 'w':
                        names = true;
                        break;
                default:
                        return cmd_option_other(self, argv, ch);
                }
        if (optind < argc)
                return cmd_usage_error(self, "unexpected argument '%s'", argv[optind]);
        json = opts->json;
        if (json && names)
                return cmd_usage_error(self, "give --json or --wipeable, not both");

        request = protocol_request_new(0, PROTOCOL_OP_DEVICES);
        if (!request) {
                wipectl_error("devices: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        r = client_connect_call(&c, opts->socket_path, request, &reply);
        if (r != 0)
                return r;
        client_close(&c);
        result = output_from_reply(reply);
        if (!result) {
                wipectl_error("devices: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        if (names)
                return cmd_devices_names(result);
        if (json)
                return output_print(OUTPUT_PROBE, result, true);
        return cmd_devices_text(result);
}

const struct cmd_entry cmd_devices_entry = {
        .name = "devices",
        .args = "[--json | --wipeable]",
        .summary = "List the block devices and whether the daemon would wipe them",
        .help = "  --json               print {\"devices\":[DEVICE...]} as the daemon sent it\n"
                "  --wipeable           print only the nodes that may be wiped, one a line\n",
        .exec = cmd_devices_exec,
};
