/* wipectl wipe: confirm, submit one job per device, then wait for them with live progress. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "keystream.h"
#include "wipectl.h"

/* Raised by SIGINT while waiting: detach and leave the jobs to the daemon. A signal handler can
 * reach nothing else. */
static volatile sig_atomic_t cmd_wipe_interrupted;

static void cmd_wipe_on_sigint(int sig) {
        (void) sig;
        cmd_wipe_interrupted = 1;
}

/* Probe devices[n] on a connection of its own: the user may take minutes to answer, and the
 * submission opens another. Returns 0 with *ret owning {"devices":[PROBE...]}, or an exit status
 * (the error is reported). */
static int cmd_wipe_probe(const struct wipectl_options *opts, char **devices, size_t n, struct json_object **ret) {
        struct client c = CLIENT_INIT;
        int r;

        r = client_connect(&c, opts->socket_path);
        if (r >= 0)
                r = cmd_probe_call(&c, devices, n, ret);
        if (r < 0)
                r = client_translate_errno(&c, r);
        client_close(&c);
        return r;
}

/* Report every refused device of a probe, "wipectl: /dev/loop3: refusing: is read-only"; returns
 * whether there was one. */
static bool cmd_wipe_refused(struct json_object *list) {
        bool refused = false;

        for (size_t i = 0; i < json_object_array_length(list); i++) {
                char line[1024];

                if (output_refusal_line(json_object_array_get_idx(list, i), line, sizeof(line))) {
                        wipectl_error("%s", line);
                        refused = true;
                }
        }
        return refused;
}

/* Whether key has the same value (or is absent) in a and b. */
static bool cmd_wipe_same_field(struct json_object *a, struct json_object *b, const char *key) {
        struct json_object *va = NULL, *vb = NULL;

        json_object_object_get_ex(a, key, &va);
        json_object_object_get_ex(b, key, &vb);
        return json_object_equal(va, vb) != 0;
}

/* Whether two PROBE objects name the same device: the same node and the same identity where it
 * tells one device from another (numbers, size, model, serial, WWN, a loop device's backing
 * file). Links and flags may change without the device changing. */
static bool cmd_wipe_same_device(struct json_object *a, struct json_object *b) {
        static const char *const keys[] = {
                "node", "major", "minor", "size", "logical_sector", "vendor", "model", "serial", "wwn",
        };
        static const char *const loop_keys[] = { "backing_file", "backing_inode", "backing_device" };
        struct json_object *ia = NULL, *ib = NULL, *la = NULL, *lb = NULL;

        if (!cmd_wipe_same_field(a, b, "node") || !json_object_object_get_ex(a, "identity", &ia) ||
            !json_object_object_get_ex(b, "identity", &ib) || !ia || !ib)
                return false;
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
                if (!cmd_wipe_same_field(ia, ib, keys[i]))
                        return false;
        json_object_object_get_ex(ia, "loop", &la);
        json_object_object_get_ex(ib, "loop", &lb);
        if (!la || !lb)
                return !la && !lb;
        for (size_t i = 0; i < sizeof(loop_keys) / sizeof(loop_keys[0]); i++)
                if (!cmd_wipe_same_field(la, lb, loop_keys[i]))
                        return false;
        return true;
}

/* Ask before destroying data, on a terminal (the caller has dealt with --yes and with a standard
 * input that is not one). The daemon probes the devices first: if it would refuse one, say why
 * and ask nothing; else show one line per device and read the answer, which must be exactly
 * "yes" (anything else, end of file included, refuses). Then probe again, so that a device that
 * changed while the question was on the screen (another disk plugged in under the same name) is
 * not wiped. Returns 0 to go on, or an exit status. */
static int cmd_wipe_confirm(const struct wipectl_options *opts, char **devices, size_t n) {
        _cleanup_json_ struct json_object *shown = NULL, *now = NULL;
        _cleanup_free_ char *answer = NULL;
        struct json_object *list = NULL, *list_now = NULL;
        size_t size = 0;
        ssize_t len;
        char line[2048];
        int r;

        r = cmd_wipe_probe(opts, devices, n, &shown);
        if (r != WIPECTL_EXIT_OK)
                return r;
        json_object_object_get_ex(shown, "devices", &list);
        if (cmd_wipe_refused(list))
                return WIPECTL_EXIT_REFUSED;

        fflush(stdout);
        fprintf(stderr, "This overwrites every byte of %s; the data on %s cannot be recovered:\n",
                n == 1 ? "this device" : "these devices", n == 1 ? "it" : "them");
        for (size_t i = 0; i < n; i++)
                fprintf(stderr, "  %s\n", output_device_summary(json_object_array_get_idx(list, i), line, sizeof(line)));
        fprintf(stderr, "Type \"yes\" to wipe: ");
        fflush(stderr);
        len = getline(&answer, &size, stdin);
        if (len < 0) {
                fputc('\n', stderr);
                wipectl_error("wipe: not confirmed; nothing was wiped");
                return WIPECTL_EXIT_FAILURE;
        }
        answer[strcspn(answer, "\n")] = '\0';
        if (strcmp(answer, "yes") != 0) {
                wipectl_error("wipe: not confirmed; nothing was wiped");
                return WIPECTL_EXIT_FAILURE;
        }

        r = cmd_wipe_probe(opts, devices, n, &now);
        if (r != WIPECTL_EXIT_OK)
                return r;
        json_object_object_get_ex(now, "devices", &list_now);
        if (cmd_wipe_refused(list_now))
                return WIPECTL_EXIT_REFUSED;
        for (size_t i = 0; i < n; i++) {
                struct json_object *a = json_object_array_get_idx(list, i), *b = json_object_array_get_idx(list_now, i);

                if (!cmd_wipe_same_device(a, b)) {
                        wipectl_error("%s: changed since it was shown (now %s); nothing was wiped", devices[i],
                                      output_device_summary(b, line, sizeof(line)));
                        return WIPECTL_EXIT_FAILURE;
                }
        }
        return WIPECTL_EXIT_OK;
}

/* Build the submit request; NULL on ENOMEM. */
static struct json_object *cmd_wipe_request(char **devices, size_t n, const char *cipher) {
        _cleanup_json_ struct json_object *req = protocol_request_new(0, PROTOCOL_OP_SUBMIT);
        struct json_object *a = json_object_new_array();

        if (!req || !a || json_object_object_add(req, "devices", a) < 0) {
                json_object_put(a);
                return NULL;
        }
        for (size_t i = 0; i < n; i++)
                if (json_object_array_add(a, json_object_new_string(devices[i])) < 0)
                        return NULL;
        if (cipher && json_object_object_add(req, "cipher", json_object_new_string(cipher)) < 0)
                return NULL;
        if (json_object_object_add(req, "method", json_object_new_string("random")) < 0)
                return NULL;
        return TAKE_PTR(req);
}

/* The job ids of a submit reply, malloc'd in *ret. 0, or -EBADMSG (reported) or -ENOMEM. */
static int cmd_wipe_ids(const struct client *c, struct json_object *reply, int64_t **ret, size_t *n) {
        struct json_object *jobs = NULL;
        _cleanup_free_ int64_t *ids = NULL;
        size_t len;

        if (!json_object_object_get_ex(reply, "jobs", &jobs) || !json_object_is_type(jobs, json_type_array) ||
            (len = json_object_array_length(jobs)) == 0) {
                wipectl_error("%s: submit reply without \"jobs\"", c->path);
                return -EBADMSG;
        }
        ids = calloc(len, sizeof(*ids));
        if (!ids) {
                wipectl_error("wipe: out of memory");
                return -ENOMEM;
        }
        for (size_t i = 0; i < len; i++) {
                ids[i] = output_get_int(json_object_array_get_idx(jobs, i), "id", -1);
                if (ids[i] < 0) {
                        wipectl_error("%s: submit reply with a job without \"id\"", c->path);
                        return -EBADMSG;
                }
        }
        *ret = TAKE_PTR(ids);
        *n = len;
        return 0;
}

/* Report failed jobs on stderr and derive the exit status from how the jobs ended. */
static int cmd_wipe_outcome(struct json_object *status) {
        struct json_object *jobs = NULL;
        bool failed = false, cancelled = false, other = false;

        if (!json_object_object_get_ex(status, "jobs", &jobs) || !json_object_is_type(jobs, json_type_array))
                return WIPECTL_EXIT_FAILURE;
        for (size_t i = 0; i < json_object_array_length(jobs); i++) {
                struct json_object *job = json_object_array_get_idx(jobs, i);
                const char *state = output_get_string(job, "state", "");
                char err[1024];

                if (strcmp(state, "cancelled") == 0)
                        cancelled = true;
                else if (strcmp(state, "failed") == 0)
                        failed = true;
                else if (strcmp(state, "done") != 0)
                        other = true;
                if (output_error_line(job, err, sizeof(err)))
                        wipectl_error("%s", err);
        }
        if (failed)
                return WIPECTL_EXIT_JOB_FAILED;
        if (cancelled)
                return WIPECTL_EXIT_JOB_CANCELLED;
        return other ? WIPECTL_EXIT_FAILURE : WIPECTL_EXIT_OK;
}

/* Tell how to reach the jobs after a detach: one line, naming the jobs still running (all of them
 * when no status arrived yet). */
static void cmd_wipe_detached(struct json_object *status, const int64_t *ids, size_t n) {
        struct json_object *jobs = NULL;
        char list[256] = "";
        size_t l = 0, running = 0;
        int64_t first = -1;

        if (status && json_object_object_get_ex(status, "jobs", &jobs) && json_object_is_type(jobs, json_type_array))
                n = json_object_array_length(jobs);
        for (size_t i = 0; i < n; i++) {
                struct json_object *job = jobs ? json_object_array_get_idx(jobs, i) : NULL;
                int64_t id = job ? output_get_int(job, "id", -1) : ids[i];

                if (job && output_state_ended(output_get_string(job, "state", NULL)))
                        continue;
                if (running++ == 0)
                        first = id;
                if (l < sizeof(list))
                        l += (size_t) snprintf(list + l, sizeof(list) - l, " %" PRId64, id);
        }
        /* Overwrite the "^C" the terminal echoed. */
        if (isatty(STDERR_FILENO))
                fputs("\r\033[K", stderr);
        if (running == 1)
                wipectl_error("detached; jobs keep running (wipectl cancel %" PRId64 ")", first);
        else
                wipectl_error("detached; jobs keep running (wipectl cancel ID; IDs:%s)", running ? list : " none");
}

/* Wait for the submitted jobs with SIGINT caught, so that Ctrl-C detaches. */
static int cmd_wipe_wait(struct client *c, const struct wipectl_options *opts, const int64_t *ids, size_t n) {
        _cleanup_json_ struct json_object *status = NULL;
        struct sigaction sa = { .sa_handler = cmd_wipe_on_sigint }, old;
        FILE *out = stdout;
        int r;

        /* JSON goes to stdout once, at the end; a terminal on stderr can still watch. */
        if (opts->json)
                out = isatty(STDERR_FILENO) ? stderr : NULL;

        /* No SA_RESTART: a blocked read or sleep must return to notice the flag. */
        sigemptyset(&sa.sa_mask);
        cmd_wipe_interrupted = 0;
        sigaction(SIGINT, &sa, &old);
        c->interrupted = &cmd_wipe_interrupted;
        r = progress_wait(c, ids, n, out, &status);
        c->interrupted = NULL;
        sigaction(SIGINT, &old, NULL);

        if (r == -EINTR) {
                if (opts->json && status)
                        output_render(OUTPUT_JOBS, status, true);
                cmd_wipe_detached(status, ids, n);
                return WIPECTL_EXIT_DETACHED;
        }
        if (r < 0)
                return client_translate_errno(c, r);
        if (opts->json && output_render(OUTPUT_JOBS, status, true) < 0) {
                wipectl_error("stdout: write error");
                return WIPECTL_EXIT_FAILURE;
        }
        return cmd_wipe_outcome(status);
}

static int cmd_wipe_exec(const struct cmd_entry *self, const struct wipectl_options *opts, int argc, char **argv) {
        enum { ARG_CIPHER = 0x100, ARG_NO_WAIT };
        static const struct option options[] = {
                { "cipher", required_argument, NULL, ARG_CIPHER },
                { "yes", no_argument, NULL, 'y' },
                { "no-wait", no_argument, NULL, ARG_NO_WAIT },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        _cleanup_json_ struct json_object *request = NULL, *reply = NULL, *submitted = NULL;
        _cleanup_free_ int64_t *ids = NULL;
        struct client c = CLIENT_INIT;
        const char *cipher = NULL;
        bool yes = false, no_wait = false;
        enum keystream_cipher kc;
        size_t ndevices, n = 0;
        char **devices;
        int opt, r;

        while ((opt = getopt_long(argc, argv, ":hy", options, NULL)) >= 0)
                switch (opt) {
                case ARG_CIPHER:
                        if (keystream_cipher_from_name(optarg, &kc) < 0)
                                return cmd_usage_error(self, "unknown cipher '%s' (auto, aes-128-ctr, chacha20)", optarg);
                        cipher = optarg;
                        break;
                case 'y':
                        yes = true;
                        break;
                case ARG_NO_WAIT:
                        no_wait = true;
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
        for (size_t i = 0; i < ndevices; i++) {
                if (!*devices[i])
                        return cmd_usage_error(self, "empty device name");
                for (size_t j = 0; j < i; j++)
                        if (strcmp(devices[i], devices[j]) == 0)
                                return cmd_usage_error(self, "%s: named twice", devices[i]);
        }

        if (!yes && !isatty(STDIN_FILENO)) {
                wipectl_error("wipe: standard input is not a terminal: refusing to wipe without --yes");
                return WIPECTL_EXIT_USAGE;
        }
        if (!yes) {
                r = cmd_wipe_confirm(opts, devices, ndevices);
                if (r != WIPECTL_EXIT_OK)
                        return r;
        }

        request = cmd_wipe_request(devices, ndevices, cipher);
        if (!request) {
                wipectl_error("wipe: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        r = client_connect(&c, opts->socket_path);
        if (r >= 0)
                r = client_call(&c, request, &reply);
        if (r >= 0)
                r = cmd_wipe_ids(&c, reply, &ids, &n);
        if (r < 0) {
                r = client_translate_errno(&c, r);
                client_close(&c);
                return r;
        }

        if (no_wait) {
                client_close(&c);
                submitted = output_from_reply(reply);
                if (!submitted || output_render(OUTPUT_SUBMITTED, submitted, opts->json) < 0) {
                        wipectl_error("stdout: write error");
                        return WIPECTL_EXIT_FAILURE;
                }
                return WIPECTL_EXIT_OK;
        }
        r = cmd_wipe_wait(&c, opts, ids, n);
        client_close(&c);
        return r;
}

const struct cmd_entry cmd_wipe_entry = {
        .name = "wipe",
        .args = "[--cipher NAME] [--yes] [--no-wait] DEVICE...",
        .summary = "Overwrite devices with a keystream and wait for the jobs",
        .help = "  --cipher NAME        auto (default), aes-128-ctr or chacha20\n"
                "  -y, --yes            do not ask for confirmation (required when stdin is not a terminal)\n"
                "  --no-wait            print the job ids and return at once\n",
        .exec = cmd_wipe_exec,
};
