/* wipectl probe: what the daemon sees on devices, and whether it would wipe them. The probe op
 * also serves the confirmation of "wipectl wipe". */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "wipectl.h"

bool cmd_probe_refused(struct json_object *result) {
        struct json_object *list = NULL;
        bool refused = false;

        json_object_object_get_ex(result, "devices", &list);
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                char line[1024];

                if (output_refusal_line(json_object_array_get_idx(list, i), line, sizeof(line))) {
                        wipectl_error("%s", line);
                        refused = true;
                }
        }
        return refused;
}

/* Whether a bare name ("sdb": no slash) is no file here while /dev/NAME is one: then the user
 * most likely meant the device, and is told so rather than sent to the daemon with a relative
 * path. */
static bool cmd_probe_dev_hint(const char *name) {
        char dev[PATH_MAX];
        struct stat st;

        if (strchr(name, '/') || lstat(name, &st) == 0 || errno != ENOENT)
                return false;
        if (snprintf(dev, sizeof(dev), "/dev/%s", name) >= (int) sizeof(dev))
                return false;
        return stat(dev, &st) == 0;
}

/* Check the DEVICE operands devices[n]: at least one, at most PROTOCOL_DEVICES_MAX, none empty and,
 * with distinct, none named twice. Returns -1 when they are fine, or the exit status of the usage
 * error it reported. */
static int cmd_probe_check(const struct cmd_entry *self, char *const *devices, size_t n, bool distinct) {
        if (n == 0)
                return cmd_usage_error(self, "no device given");
        if (n > PROTOCOL_DEVICES_MAX)
                return cmd_usage_error(self, "more than %d devices", PROTOCOL_DEVICES_MAX);
        for (size_t i = 0; i < n; i++) {
                if (!*devices[i])
                        return cmd_usage_error(self, "empty device name");
                for (size_t j = 0; distinct && j < i; j++)
                        if (strcmp(devices[i], devices[j]) == 0)
                                return cmd_usage_error(self, "%s: named twice", devices[i]);
                if (cmd_probe_dev_hint(devices[i]))
                        return cmd_usage_error(self, "%s: no such file; did you mean /dev/%s?", devices[i], devices[i]);
        }
        return -1;
}

int cmd_probe_absolute(char *const *devices, size_t n, char ***ret) {
        _cleanup_free_ char *cwd = NULL;
        size_t size = n * sizeof(char *), cwd_len = 0;
        char **v, *p;

        *ret = NULL;
        for (size_t i = 0; i < n; i++) {
                if (devices[i][0] != '/' && !cwd) {
                        cwd = getcwd(NULL, 0);
                        if (!cwd) {
                                wipectl_error("%s: cannot make it an absolute path: working directory: %s", devices[i],
                                              strerror(errno));
                                return WIPECTL_EXIT_FAILURE;
                        }
                        cwd_len = strlen(cwd);
                }
                size += strlen(devices[i]) + 1 + (devices[i][0] != '/' ? cwd_len + 1 : 0);
        }
        v = malloc(size);
        if (!v) {
                wipectl_error("out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        p = (char *) (v + n);
        for (size_t i = 0; i < n; i++) {
                v[i] = p;
                if (devices[i][0] != '/')
                        p += sprintf(p, "%s%s", cwd, strcmp(cwd, "/") == 0 ? "" : "/");
                p += sprintf(p, "%s", devices[i]) + 1;
        }
        *ret = v;
        return 0;
}

int cmd_probe_operands(const struct cmd_entry *self, int argc, char **argv, bool distinct, char ***ret,
                       size_t *n) {
        char **devices = argv + optind;
        int r;

        *ret = NULL;
        *n = (size_t) (argc - optind);
        r = cmd_probe_check(self, devices, *n, distinct);
        if (r >= 0)
                return r;
        r = cmd_probe_absolute(devices, *n, ret);
        return r != 0 ? r : -1;
}

struct json_object *cmd_probe_request(enum protocol_op op, char *const *devices, size_t n) {
        _cleanup_json_ struct json_object *req = protocol_request_new(0, op);
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

/* Ask the daemon to probe devices[n] on the connected client c. On success returns 0 and *ret
 * owns {"devices":[PROBE...]} (the reply without "id" and "ok"), checked to hold one object per
 * device, each with a boolean "wipeable". On failure prints one line and returns -errno (for
 * client_translate_errno()); *ret is NULL. */
static int cmd_probe_call(struct client *c, char *const *devices, size_t n, struct json_object **ret) {
        _cleanup_json_ struct json_object *request = cmd_probe_request(PROTOCOL_OP_PROBE, devices, n);
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

int cmd_probe_devices(const struct wipectl_options *opts, char *const *devices, size_t n, struct json_object **ret) {
        struct client c = CLIENT_INIT;
        int r;

        *ret = NULL;
        r = client_connect(&c, opts->socket_path);
        if (r >= 0)
                r = cmd_probe_call(&c, devices, n, ret);
        if (r < 0)
                r = client_translate_errno(&c, r);
        client_close(&c);
        return r;
}

static int cmd_probe_exec(const struct cmd_entry *self, const struct wipectl_options *opts, int argc, char **argv) {
        _cleanup_json_ struct json_object *result = NULL;
        _cleanup_free_ char **devices = NULL;
        bool json = opts->json;
        size_t ndevices;
        int r;

        /* --json before the command, or as its own option (cmd_options()). */
        r = cmd_options(self, argc, argv, &cmd_json_option, &json);
        if (r >= 0)
                return r;
        r = cmd_probe_operands(self, argc, argv, false, &devices, &ndevices);
        if (r >= 0)
                return r;

        r = cmd_probe_devices(opts, devices, ndevices, &result);
        if (r != WIPECTL_EXIT_OK)
                return r;
        r = output_print(OUTPUT_PROBE, result, json);
        if (r != WIPECTL_EXIT_OK)
                return r;
        /* A refusal is the answer, not an error of the request; the exit status still tells it, and
         * stderr names each one for a script that reads only that. */
        return cmd_probe_refused(result) ? WIPECTL_EXIT_REFUSED : WIPECTL_EXIT_OK;
}

const struct cmd_entry cmd_probe_entry = {
        .name = "probe",
        .args = "[--json] DEVICE...",
        .summary = "Show what the daemon sees on devices, and whether it would wipe them",
        .help = "  --json               print {\"devices\":[PROBE...]} as the daemon sent it\n",
        .exec = cmd_probe_exec,
};
