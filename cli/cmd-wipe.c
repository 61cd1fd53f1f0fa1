/* wipectl wipe: confirm, submit one job per device, then wait for them with live progress. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "keystream.h"
#include "method.h"
#include "sample.h"
#include "units.h"
#include "wipectl.h"

/* What a wipe is asked to do, from the command line, checked before anything is sent. */
struct cmd_wipe_settings {
        const char *cipher;             /* --cipher as given, or NULL: the daemon's default */
        const struct method *method;    /* --method, or NULL */
        struct pass *passes;            /* --passes parsed (malloc'd), or NULL */
        size_t n_passes;                /* entries in passes */
        const char *verify;             /* --verify as given, or NULL: the daemon's default (sample) */
        double percent;                 /* of a sample verification */
        bool seed_set;                  /* --seed was given */
        uint64_t seed;                  /* --seed */
        bool rate_set;                  /* --max-rate was given */
        uint64_t max_rate;              /* --max-rate, bytes/s (0: none) */
        bool bad_set;                   /* --max-bad was given */
        uint64_t max_bad;               /* --max-bad, bytes */
        unsigned queue_depth;           /* --queue-depth, 0: the daemon's default */
        uint64_t io_size;               /* --io-size, 0: the daemon's buffer size */
        bool dry_run;                   /* --dry-run: every check and the plan, nothing written */
        const char *expect;             /* --expect FILE: a probe --json whose identities must still hold */
        /* The sanitization record (wiped(8) "REPORTS"): NULL where not given (the daemon's defaults). */
        const char **asset_tags;        /* --asset-tag, once per device in order (malloc'd) */
        size_t n_asset_tags;
        const char *customer, *note, *destination;
        const char *person[2][5];       /* --operator-*, --verifier-*: name, title, organization, location, contact */
};

static const char *const wipe_person_keys[5] = { "name", "title", "organization", "location", "contact" };
static const char *const wipe_person_objects[2] = { "operator", "verifier" };

/* The record fields of w into the submit request req: 0, or -ENOMEM. */
static int cmd_wipe_record(struct json_object *req, const struct cmd_wipe_settings *w) {
        const char *const texts[][2] = { { "customer", w->customer }, { "note", w->note },
                                         { "destination", w->destination } };

        if (w->n_asset_tags == 1 &&
            json_object_object_add(req, "asset_tag", json_object_new_string(w->asset_tags[0])) < 0)
                return -ENOMEM;
        if (w->n_asset_tags > 1) {
                struct json_object *a = json_object_new_array();

                if (!a || json_object_object_add(req, "asset_tags", a) < 0) {
                        json_object_put(a);
                        return -ENOMEM;
                }
                for (size_t i = 0; i < w->n_asset_tags; i++)
                        if (json_object_array_add(a, json_object_new_string(w->asset_tags[i])) < 0)
                                return -ENOMEM;
        }
        for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
                if (texts[i][1] && json_object_object_add(req, texts[i][0], json_object_new_string(texts[i][1])) < 0)
                        return -ENOMEM;
        for (unsigned who = 0; who < 2; who++) {
                struct json_object *o = NULL;

                for (unsigned k = 0; k < 5; k++) {
                        if (!w->person[who][k])
                                continue;
                        if (!o && (!(o = json_object_new_object()) ||
                                   json_object_object_add(req, wipe_person_objects[who], o) < 0)) {
                                json_object_put(o);
                                return -ENOMEM;
                        }
                        if (json_object_object_add(o, wipe_person_keys[k], json_object_new_string(w->person[who][k])) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

/* Print the method, its passes and the verification on stderr for the confirmation:
 *   Method:  dod-3pass (legacy: adds no security over one pass on modern drives)
 *   Passes:  3: zero, one, random
 *   Verify:  a NIST SP 800-88 sample of 10% is read back after the last pass */
static void cmd_wipe_describe(const struct cmd_wipe_settings *w, const char *def_method, const char *def_verify) {
        _cleanup_free_ struct pass *parsed = NULL;
        const struct pass *passes = w->passes;
        const char *names[METHOD_PASSES_MAX];
        char storage[METHOD_PASSES_MAX][2 * METHOD_PATTERN_MAX + 3];
        const struct method *def = method_find(def_method ? def_method : "random");
        const char *verify = w->verify ? w->verify : def_verify ? def_verify : "sample";
        enum verify_mode mode = VERIFY_SAMPLE;
        double percent = w->percent;
        size_t count = w->n_passes;
        char list[512];

        if (!def)
                def = method_find("random");
        if (verify_mode_parse(verify, &mode, w->verify ? NULL : &percent) < 0) {
                mode = VERIFY_SAMPLE;
                percent = SAMPLE_PERCENT_DEFAULT;
        }
        if (!passes) {
                const struct method *m = w->method ? w->method : def;

                if (!m || pass_list_parse(m->passes, &parsed, &count) < 0)
                        count = 0;
                passes = parsed;
        }
        for (size_t i = 0; i < count; i++)
                names[i] = pass_name(&passes[i], storage[i], sizeof(storage[i]));

        if (w->passes)
                fprintf(stderr, "Method:  custom\n");
        else if (!w->method)
                fprintf(stderr, "Method:  %s (the daemon's default)%s\n", def->name,
                        def->legacy ? " (legacy: adds no security over one pass on modern drives)" : "");
        else
                fprintf(stderr, "Method:  %s%s\n", w->method->name,
                        w->method->legacy ? " (legacy: adds no security over one pass on modern drives)" : "");
        fprintf(stderr, "Passes:  %zu: %s\n", count, output_pass_summary(names, count, 68, list, sizeof(list)));
        /* The erase commands: what the drive does is up to it, and verification expects zeros. */
        for (size_t i = 0; i < count; i++)
                if (passes[i].op == PASS_OP_DISCARD || passes[i].op == PASS_OP_SECURE_DISCARD) {
                        fprintf(stderr, "Erase:   the drive discards the blocks itself; what it reads back "
                                        "afterwards is up to it, and verification expects zeros\n");
                        break;
                }
        /* A firmware erase: the drive's own command, for all of it, with no way back. */
        for (size_t i = 0; i < count; i++)
                if (pass_op_firmware(passes[i].op)) {
                        fprintf(stderr, "Erase:   the drive's own firmware erase (%s) affects the WHOLE drive (every NVMe "
                                        "namespace on its controller) and CANNOT BE STOPPED once started, not even by "
                                        "cancelling the job or stopping the daemon%s\n", names[i],
                                passes[i].op == PASS_OP_PURGE ? "; where the drive has none, the daemon's purge "
                                "fallback is written instead (Clear, not Purge)" : "");
                        fprintf(stderr, "Proof:   markers written before it must all be gone after it; its result is "
                                        "checked that way, not against a pattern\n");
                        break;
                }
        if (count > 0 && pass_op_firmware(passes[count - 1].op))
                fprintf(stderr, "Verify:  the firmware erase's proof: its markers and a sample are read back after it\n");
        else if (mode == VERIFY_NONE)
                fprintf(stderr, "Verify:  nothing is read back (--verify none)\n");
        else if (mode == VERIFY_LAST)
                fprintf(stderr, "Verify:  every byte is read back after the last pass\n");
        else if (mode == VERIFY_ALL)
                fprintf(stderr, "Verify:  every byte is read back after every pass\n");
        else
                fprintf(stderr, "Verify:  a NIST SP 800-88 sample of %g%% is read back after the last pass%s\n",
                        percent, w->verify ? "" : " (the daemon's default)");
}

/* Ask before destroying data, on a terminal (the caller has dealt with --yes and with a standard
 * input that is not one). The daemon probes the devices first: if it would refuse one, say why
 * and ask nothing; else show one line per device and read the answer, which must be exactly
 * "yes" (anything else, end of file included, refuses). What was shown is what is wiped: the
 * caller submits each device with the identity shown here (*confirmed: {"devices":[PROBE...]}),
 * and the daemon refuses any device that is not that one when it opens it, so that another disk
 * plugged in under the same name, or a link flipped meanwhile, is never wiped. Returns 0 to go
 * on, or an exit status. */
static int cmd_wipe_confirm(const struct wipectl_options *opts, const struct cmd_wipe_settings *w, char **devices,
                            size_t n, struct json_object **confirmed) {
        _cleanup_json_ struct json_object *shown = NULL, *version = NULL;
        _cleanup_free_ char *answer = NULL;
        const char *def_method = NULL, *def_verify = NULL;
        struct client c = CLIENT_INIT;
        struct json_object *list = NULL;
        size_t size = 0;
        ssize_t len;
        char line[2048];
        int r;

        *confirmed = NULL;
        /* The probe on a connection of its own: the user may take minutes to answer, and the
         * submission opens another. */
        r = cmd_probe_devices(opts, devices, n, &shown);
        if (r != WIPECTL_EXIT_OK)
                return r;
        if (cmd_probe_refused(shown))
                return WIPECTL_EXIT_REFUSED;
        json_object_object_get_ex(shown, "devices", &list);

        /* What the daemon does when the command line does not say (its configuration). */
        if (client_connect(&c, opts->socket_path) >= 0 && client_call_simple(&c, PROTOCOL_OP_VERSION, &version) >= 0) {
                def_method = output_get_string(version, "method", NULL);
                def_verify = output_get_string(version, "verify", NULL);
        }
        client_close(&c);

        fflush(stdout);
        fprintf(stderr, "This overwrites every byte of %s; the data on %s cannot be recovered:\n",
                n == 1 ? "this device" : "these devices", n == 1 ? "it" : "them");
        for (size_t i = 0; i < n; i++)
                fprintf(stderr, "  %s\n", output_device_summary(json_object_array_get_idx(list, i), line, sizeof(line)));
        cmd_wipe_describe(w, def_method, def_verify);
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
        *confirmed = TAKE_PTR(shown);
        return WIPECTL_EXIT_OK;
}

/* Build the submit request; NULL on ENOMEM. Only what the command line gave is sent: the daemon
 * owns the defaults (method random, verify sample, a random seed). With confirmed (the probe the
 * user said yes to), each device goes with the identity shown, as "expect". */
static struct json_object *cmd_wipe_request(char **devices, size_t n, const struct cmd_wipe_settings *w,
                                            struct json_object *confirmed) {
        _cleanup_json_ struct json_object *req = cmd_probe_request(PROTOCOL_OP_SUBMIT, devices, n);
        struct json_object *list = NULL;

        if (!req)
                return NULL;
        if (confirmed && json_object_object_get_ex(confirmed, "devices", &list)) {
                struct json_object *expect = json_object_new_array();

                if (!expect || json_object_object_add(req, "expect", expect) < 0) {
                        json_object_put(expect);
                        return NULL;
                }
                for (size_t i = 0; i < n; i++) {
                        struct json_object *id = NULL;

                        json_object_object_get_ex(json_object_array_get_idx(list, i), "identity", &id);
                        if (json_object_array_add(expect, json_object_get(id)) < 0)
                                return NULL;
                }
        }
        if (w->cipher && json_object_object_add(req, "cipher", json_object_new_string(w->cipher)) < 0)
                return NULL;
        if (w->method && json_object_object_add(req, "method", json_object_new_string(w->method->name)) < 0)
                return NULL;
        if (w->passes) {
                struct json_object *a = output_pass_array(w->passes, w->n_passes);

                if (!a || json_object_object_add(req, "passes", a) < 0) {
                        json_object_put(a);
                        return NULL;
                }
        }
        if (w->verify && json_object_object_add(req, "verify", json_object_new_string(w->verify)) < 0)
                return NULL;
        if (w->seed_set && json_object_object_add(req, "seed", json_object_new_uint64(w->seed)) < 0)
                return NULL;
        if (w->bad_set && json_object_object_add(req, "max_bad_bytes", json_object_new_uint64(w->max_bad)) < 0)
                return NULL;
        if (w->rate_set && json_object_object_add(req, "max_rate", json_object_new_uint64(w->max_rate)) < 0)
                return NULL;
        if (w->queue_depth && json_object_object_add(req, "queue_depth", json_object_new_int64(w->queue_depth)) < 0)
                return NULL;
        if (w->io_size && json_object_object_add(req, "io_size", json_object_new_uint64(w->io_size)) < 0)
                return NULL;
        if (w->dry_run && json_object_object_add(req, "dry_run", json_object_new_boolean(true)) < 0)
                return NULL;
        if (cmd_wipe_record(req, w) < 0)
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
                ids[i] = output_job_id(json_object_array_get_idx(jobs, i));
                if (ids[i] < 0) {
                        wipectl_error("%s: submit reply with a job without \"id\"", c->path);
                        return -EBADMSG;
                }
        }
        *ret = TAKE_PTR(ids);
        *n = len;
        return 0;
}

/* Parse the options of wipe into w; -1 when parsing is done and the settings are consistent,
 * or an exit status to return. */
static int cmd_wipe_options(const struct cmd_entry *self, int argc, char **argv, struct cmd_wipe_settings *w,
                            bool *yes, bool *no_wait) {
        enum { ARG_CIPHER = 0x100, ARG_NO_WAIT, ARG_METHOD, ARG_PASSES, ARG_VERIFY, ARG_SEED, ARG_RATE, ARG_QD,
               ARG_IO_SIZE, ARG_MAX_BAD, ARG_EXPECT, ARG_ASSET_TAG, ARG_CUSTOMER, ARG_NOTE, ARG_DESTINATION,
               ARG_PERSON /* ..ARG_PERSON + 9: operator-name..verifier-contact */ };
        enum verify_mode mode;
        static const struct option options[] = {
                { "cipher", required_argument, NULL, ARG_CIPHER },
                { "method", required_argument, NULL, ARG_METHOD },
                { "passes", required_argument, NULL, ARG_PASSES },
                { "verify", required_argument, NULL, ARG_VERIFY },
                { "seed", required_argument, NULL, ARG_SEED },
                { "max-rate", required_argument, NULL, ARG_RATE },
                { "queue-depth", required_argument, NULL, ARG_QD },
                { "io-size", required_argument, NULL, ARG_IO_SIZE },
                { "max-bad", required_argument, NULL, ARG_MAX_BAD },
                { "yes", no_argument, NULL, 'y' },
                { "dry-run", no_argument, NULL, 'n' },
                { "no-wait", no_argument, NULL, ARG_NO_WAIT },
                { "expect", required_argument, NULL, ARG_EXPECT },
                { "asset-tag", required_argument, NULL, ARG_ASSET_TAG },
                { "customer", required_argument, NULL, ARG_CUSTOMER },
                { "note", required_argument, NULL, ARG_NOTE },
                { "destination", required_argument, NULL, ARG_DESTINATION },
                { "operator-name", required_argument, NULL, ARG_PERSON },
                { "operator-title", required_argument, NULL, ARG_PERSON + 1 },
                { "operator-organization", required_argument, NULL, ARG_PERSON + 2 },
                { "operator-location", required_argument, NULL, ARG_PERSON + 3 },
                { "operator-contact", required_argument, NULL, ARG_PERSON + 4 },
                { "verifier-name", required_argument, NULL, ARG_PERSON + 5 },
                { "verifier-title", required_argument, NULL, ARG_PERSON + 6 },
                { "verifier-organization", required_argument, NULL, ARG_PERSON + 7 },
                { "verifier-location", required_argument, NULL, ARG_PERSON + 8 },
                { "verifier-contact", required_argument, NULL, ARG_PERSON + 9 },
                WATCH_LONG_OPTIONS,
                { "help", no_argument, NULL, 'h' },
                {}
        };
        enum keystream_cipher kc;
        int opt;

        w->percent = SAMPLE_PERCENT_DEFAULT;
        while ((opt = cmd_getopt(argc, argv, ":hyn", options)) >= 0)
                switch (opt) {
                case ARG_CIPHER:
                        if (keystream_cipher_from_name(optarg, &kc) < 0)
                                return cmd_usage_error(self, "unknown cipher '%s' (auto, aes-128-ctr, chacha20)", optarg);
                        w->cipher = optarg;
                        break;
                case ARG_METHOD:
                        w->method = method_find(optarg);
                        if (!w->method)
                                return cmd_usage_error(self, "unknown method '%s' (\"wipectl methods\" lists them)",
                                                       optarg);
                        break;
                case ARG_PASSES:
                        free(w->passes);
                        w->passes = NULL;
                        if (pass_list_parse(optarg, &w->passes, &w->n_passes) < 0)
                                return cmd_usage_error(self,
                                                       "bad pass list '%s' (1 to %d of random, zero, one, 0xHEX with up to "
                                                       "%d bytes, comma-separated)",
                                                       optarg, METHOD_PASSES_MAX, METHOD_PATTERN_MAX);
                        break;
                case ARG_VERIFY:
                        if (verify_mode_parse(optarg, NULL, &w->percent) < 0)
                                return cmd_usage_error(self, "bad verification mode '%s' (none, sample, sample=PCT with "
                                                       "PCT in (0, 100], last, all)", optarg);
                        w->verify = optarg;
                        break;
                case ARG_SEED:
                        if (wipectl_parse_seed(optarg, &w->seed) < 0)
                                return cmd_usage_error(self, "bad seed '%s' (an integer from 0 to 2^64-1)", optarg);
                        w->seed_set = true;
                        break;
                case ARG_MAX_BAD:
                        if (units_parse_size(optarg, &w->max_bad) < 0)
                                return cmd_usage_error(self, "bad size '%s' (bytes of bad sectors: 4K, 16M, 0 = none)",
                                                       optarg);
                        w->bad_set = true;
                        break;
                case ARG_RATE:
                        if (units_parse_rate(optarg, &w->max_rate) < 0)
                                return cmd_usage_error(self, "bad rate '%s' (bytes per second: 200M = 200 MB/s, 0 = none)",
                                                       optarg);
                        w->rate_set = true;
                        break;
                case ARG_QD: {
                        char *end;
                        unsigned long v;

                        errno = 0;
                        v = strtoul(optarg, &end, 10);
                        if (errno || *end || end == optarg || *optarg == '-' || v < 1 || v > 256)
                                return cmd_usage_error(self, "bad queue depth '%s' (1 to 256)", optarg);
                        w->queue_depth = (unsigned) v;
                        break;
                }
                case ARG_IO_SIZE:
                        if (units_parse_size(optarg, &w->io_size) < 0 || w->io_size < 4096 || w->io_size % 4096 ||
                            w->io_size > (64u << 20))
                                return cmd_usage_error(self, "bad I/O size '%s' (a multiple of 4K, at most the daemon's "
                                                       "--io-size)", optarg);
                        break;
                case 'y':
                        *yes = true;
                        break;
                case ARG_ASSET_TAG: {
                        const char **a = realloc(w->asset_tags, (w->n_asset_tags + 1) * sizeof(*a));

                        if (!a) {
                                wipectl_error("wipe: out of memory");
                                return WIPECTL_EXIT_FAILURE;
                        }
                        a[w->n_asset_tags++] = optarg;
                        w->asset_tags = a;
                        break;
                }
                case ARG_CUSTOMER:
                        w->customer = optarg;
                        break;
                case ARG_NOTE:
                        w->note = optarg;
                        break;
                case ARG_DESTINATION:
                        w->destination = optarg;
                        break;
                case ARG_PERSON ... ARG_PERSON + 9:
                        w->person[(opt - ARG_PERSON) / 5][(opt - ARG_PERSON) % 5] = optarg;
                        break;
                case 'n':
                        w->dry_run = true;
                        break;
                case ARG_NO_WAIT:
                        *no_wait = true;
                        break;
                case ARG_EXPECT:
                        w->expect = optarg;
                        break;
                default:
                        return cmd_option_other(self, argv, opt);
                }
        if (w->method && w->passes)
                return cmd_usage_error(self, "--method and --passes exclude each other");
        if (w->expect && !*yes && !w->dry_run)
                return cmd_usage_error(self, "--expect needs --yes (the identities in the file are the confirmation)");
        /* The seed chooses the samples; the other modes read every byte. */
        if (w->seed_set && w->verify && (verify_mode_parse(w->verify, &mode, NULL) < 0 || mode != VERIFY_SAMPLE))
                return cmd_usage_error(self, "--seed applies to --verify sample only");
        return -1;
}

/* One plan of a dry run as text: the device, its passes (a firmware pass with the command it
 * would send), the verification, the I/O plan and the estimate. */
static void cmd_wipe_plan_text(struct json_object *plan) {
        struct json_object *passes = NULL, *est = NULL, *v = NULL;
        char dev[OUTPUT_CELL], size[32], work[32], rate[32], dur[32], esc[OUTPUT_CELL];
        int64_t secs, bps;
        size_t n;

        output_escape(output_get_string(plan, "node", "?"), false, dev, sizeof(dev));
        output_size(size, sizeof(size), output_get_u64(plan, "size_bytes", 0));
        printf("%s (%s): would be wiped\n", dev, size);
        json_object_object_get_ex(plan, "passes", &passes);
        n = json_object_array_length(passes);
        output_escape(output_get_string(plan, "method", "?"), false, esc, sizeof(esc));
        printf("  Method:    %s, %zu pass%s\n", esc, n, n == 1 ? "" : "es");
        for (size_t i = 0; i < n; i++) {
                struct json_object *p = json_object_array_get_idx(passes, i), *fw = NULL;

                printf("  Pass %zu:    %s", i + 1, output_get_string(p, "pattern", "?"));
                if (json_object_object_get_ex(p, "firmware", &fw) && json_object_is_type(fw, json_type_object)) {
                        const char *sub = output_get_string(fw, "sanact", output_get_string(fw, "feature",
                                                            output_get_string(fw, "service_action", NULL)));

                        printf(": firmware %s, %s%s%s", output_get_string(fw, "action", "?"),
                               output_get_string(fw, "command", output_get_string(fw, "command_set", "?")),
                               sub ? " " : "", sub ? sub : "");
                } else if (output_get_string(p, "command", NULL))
                        printf(" (%s)", output_get_string(p, "command", ""));
                putchar('\n');
        }
        printf("  Verify:    %s", output_get_string(plan, "verify", "?"));
        if (json_object_object_get_ex(plan, "verify_percent", &v) && v)
                printf(" (%g%%)", json_object_get_double(v));
        putchar('\n');
        output_size(work, sizeof(work), output_get_u64(plan, "chunk_size", 0));
        output_size(rate, sizeof(rate), output_get_u64(plan, "io_size", 0));
        printf("  Plan:      %" PRId64 " chunk%s of %s, I/Os of %s, %" PRId64 " in flight%s\n",
               output_get_int(plan, "chunks", 0), output_get_int(plan, "chunks", 0) == 1 ? "" : "s", work, rate,
               output_get_int(plan, "queue_depth", 0),
               json_object_object_get_ex(plan, "in_order", &v) && json_object_get_boolean(v) ? ", in order (rotational)" : "");
        if (output_get_string(plan, "hidden_area", NULL))
                printf("  Hidden:    a hidden area would be %s\n", strcmp(output_get_string(plan, "hidden_area", ""),
                                                                         "restore") == 0 ? "restored first" :
                                                                  output_get_string(plan, "hidden_area", ""));
        if (output_get_string(plan, "purge_fallback", NULL)) {
                output_escape(output_get_string(plan, "purge_fallback", ""), false, esc, sizeof(esc));
                printf("  Purge:     %s\n", esc);
        }
        output_size(work, sizeof(work), output_get_u64(plan, "work_total_bytes", 0));
        printf("  Work:      %s (writes and verification reads)\n", work);
        json_object_object_get_ex(plan, "estimate", &est);
        secs = output_get_int(est, "duration_s", -1);
        bps = output_get_int(est, "rate_bps", -1);
        if (secs >= 0 && bps > 0) {
                const char *from = output_get_string(est, "rate_from", "");

                units_duration(dur, sizeof(dur), secs);
                units_rate(rate, sizeof(rate), (double) bps);
                printf("  Estimate:  %s at %s", dur, rate);
                if (strcmp(from, "job") == 0)
                        printf(" (measured by job %" PRId64 ")", output_get_int(est, "job", 0));
                else if (strcmp(from, "max_rate_bps") == 0)
                        printf(" (the max rate)");
        } else
                printf("  Estimate:  rate unknown (no finished wipe of this device to measure by; --max-rate sets one)");
        if (json_object_object_get_ex(est, "firmware_not_counted", &v) && json_object_get_boolean(v))
                printf(", plus the drive's own time for its firmware erase");
        putchar('\n');        /* The sanitization record the job would carry. */
        printf("  Record:\n");
        printf("    %-20s %s\n", "Media type:", output_get_string(plan, "media_type", "not recorded"));
        output_record_text(plan, "    ", true);
}

/* wipe --dry-run: the submit with "dry_run", its plans printed; no confirmation (nothing is
 * written). A refusal is reported and exits as the real submit's. */
static int cmd_wipe_dry_run(const struct wipectl_options *opts, const struct cmd_wipe_settings *w, char **devices,
                            size_t n, struct json_object *expect) {
        _cleanup_json_ struct json_object *request = cmd_wipe_request(devices, n, w, expect), *reply = NULL,
                                          *result = NULL;
        struct json_object *plans = NULL;
        struct client c = CLIENT_INIT;
        int r;

        if (!request) {
                wipectl_error("wipe: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        r = client_connect_call(&c, opts->socket_path, request, &reply);
        if (r != WIPECTL_EXIT_OK)
                return r;
        client_close(&c);
        result = output_from_reply(reply);
        if (!result) {
                wipectl_error("wipe: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        if (opts->json)
                return output_print(OUTPUT_PROBE, result, true);
        puts("Dry run: nothing was written, no job was started.");
        json_object_object_get_ex(result, "jobs", &plans);
        for (size_t i = 0; i < json_object_array_length(plans); i++)
                cmd_wipe_plan_text(json_object_array_get_idx(plans, i));
        return output_flush();
}

/* wipe --expect FILE: the output of `wipectl --json probe` for exactly these devices, in this
 * order, made earlier (by a script that chose them): each device is submitted with the identity
 * shown there, so that the daemon refuses one that is no longer that device (another drive in
 * the bay, another size), as after a confirmation. 0 with *ret as cmd_wipe_confirm() makes it,
 * or an exit status. */
static int cmd_wipe_expect(const char *file, char **devices, size_t n, struct json_object **ret) {
        _cleanup_json_ struct json_object *o = json_object_from_file(file);
        struct json_object *list = NULL;

        if (!o || !json_object_object_get_ex(o, "devices", &list) || !json_object_is_type(list, json_type_array)) {
                wipectl_error("wipe: --expect %s: not the output of wipectl --json probe", file);
                return WIPECTL_EXIT_USAGE;
        }
        if (json_object_array_length(list) != n) {
                wipectl_error("wipe: --expect %s: %zu devices, not the %zu given", file,
                              json_object_array_length(list), n);
                return WIPECTL_EXIT_USAGE;
        }
        for (size_t i = 0; i < n; i++) {
                struct json_object *d = json_object_array_get_idx(list, i), *id = NULL, *path = NULL;

                if (!json_object_object_get_ex(d, "identity", &id) || !json_object_is_type(id, json_type_object)) {
                        wipectl_error("wipe: --expect %s: device %zu has no identity", file, i + 1);
                        return WIPECTL_EXIT_USAGE;
                }
                /* The same operand, as probe got it: the identities go by position. */
                if (!json_object_object_get_ex(d, "path", &path) ||
                    strcmp(json_object_get_string(path), devices[i]) != 0) {
                        wipectl_error("wipe: --expect %s: device %zu is %s, not %s", file, i + 1,
                                      path ? json_object_get_string(path) : "unnamed", devices[i]);
                        return WIPECTL_EXIT_USAGE;
                }
        }
        *ret = TAKE_PTR(o);
        return WIPECTL_EXIT_OK;
}

static int cmd_wipe_exec(const struct cmd_entry *self, const struct wipectl_options *opts, int argc, char **argv) {
        _cleanup_json_ struct json_object *request = NULL, *reply = NULL, *confirmed = NULL;
        _cleanup_free_ int64_t *ids = NULL;
        _cleanup_free_ struct pass *passes = NULL;
        _cleanup_free_ const char **asset_tags = NULL;
        _cleanup_free_ char **devices = NULL;
        struct cmd_wipe_settings w = {};
        struct client c = CLIENT_INIT;
        bool yes = false, no_wait = false;
        size_t ndevices, n = 0;
        int r;

        r = cmd_wipe_options(self, argc, argv, &w, &yes, &no_wait);
        passes = w.passes; /* freed on every return */
        asset_tags = w.asset_tags;
        if (r >= 0)
                return r;
        r = cmd_probe_operands(self, argc, argv, true, &devices, &ndevices);
        if (r >= 0)
                return r;
        /* An asset tag names one drive: one each, in the order of the devices. */
        if (w.n_asset_tags > 0 && w.n_asset_tags != ndevices)
                return cmd_usage_error(self, "--asset-tag given %zu time%s for %zu devices (give it once per device, "
                                       "in the order of the devices)", w.n_asset_tags, w.n_asset_tags == 1 ? "" : "s",
                                       ndevices);

        if (w.expect) {
                r = cmd_wipe_expect(w.expect, devices, ndevices, &confirmed);
                if (r != WIPECTL_EXIT_OK)
                        return r;
        }
        /* A dry run writes nothing: nothing to confirm. */
        if (w.dry_run)
                return cmd_wipe_dry_run(opts, &w, devices, ndevices, confirmed);
        if (!yes && !isatty(STDIN_FILENO)) {
                wipectl_error("wipe: standard input is not a terminal: refusing to wipe without --yes");
                return WIPECTL_EXIT_USAGE;
        }
        if (!yes) {
                r = cmd_wipe_confirm(opts, &w, devices, ndevices, &confirmed);
                if (r != WIPECTL_EXIT_OK)
                        return r;
        }

        request = cmd_wipe_request(devices, ndevices, &w, confirmed);
        if (!request) {
                wipectl_error("wipe: out of memory");
                return WIPECTL_EXIT_FAILURE;
        }
        r = client_connect_call(&c, opts->socket_path, request, &reply);
        if (r != WIPECTL_EXIT_OK)
                return r;
        r = cmd_wipe_ids(&c, reply, &ids, &n);
        if (r < 0) {
                r = client_translate_errno(&c, r);
                client_close(&c);
                return r;
        }
        return watch_finish(&c, opts, no_wait, reply, OUTPUT_SUBMITTED, ids, n);
}

const struct cmd_entry cmd_wipe_entry = {
        .name = "wipe",
        .args = "[--method NAME | --passes LIST] [--verify MODE] [--seed N] [--cipher NAME] [--max-rate RATE] "
                "[--queue-depth N] [--io-size SIZE] [--max-bad SIZE] [--asset-tag S]... [--customer S] [--note S] "
                "[--destination S] [--operator-FIELD S] [--verifier-FIELD S] "
                "[--yes] [--dry-run] [--no-wait] [--reconnect-timeout S] [--progress-interval S] DEVICE...",
        .summary = "Overwrite devices, verify them, and wait for the jobs",
        .help = "  --method NAME        random (default), zero, random-zero, zeroout, discard,\n"
                "                       secure-discard, dod-3pass, schneier, gutmann\n"
                "                       (\"wipectl methods\" describes them)\n"
                "  --passes LIST        a custom list of passes instead: random, zero, one, 0xHEX,\n"
                "                       zeroout, discard or secure-discard (the block layer's erase\n"
                "                       commands), comma-separated, e.g. random,0x924924,zero\n"
                "  --verify MODE        none, sample[=PCT] (default: a 10% NIST SP 800-88 sample),\n"
                "                       last (read back after the last pass), all (after every pass)\n"
                "  --seed N             the seed that chooses the samples (default: random, recorded)\n"
                "  --cipher NAME        auto (default), aes-128-ctr or chacha20\n"
                "  --max-rate RATE      limit each device's I/O to RATE bytes/s (200M = 200 MB/s; default none)\n"
                "  --queue-depth N      I/Os in flight per device (default: the daemon's, from the device)\n"
                "  --io-size SIZE       bytes per I/O (default: the daemon's buffer size, 1M)\n"
                "  --max-bad SIZE       bad sectors skipped before the job fails (default: the daemon's, 16M;\n"
                "                       0: fail at the first)\n"
                "  --asset-tag S        the drive's asset tag for its record; once per device, in order\n"
                "  --customer S         the customer or source of the drives\n"
                "  --note S             a note for the record (up to 1024 bytes)\n"
                "  --destination S      what becomes of the drives: reuse, resale, recycle, destruction...\n"
                "                       (default: wiped.conf destination)\n"
                "  --operator-name S    who performs the sanitization: name, and\n"
                "  --operator-title S   title,\n"
                "  --operator-organization S\n"
                "                       organisation,\n"
                "  --operator-location S\n"
                "                       location,\n"
                "  --operator-contact S contact (each defaults to wiped.conf's operator-* key)\n"
                "  --verifier-name S    who verifies it: name, and\n"
                "  --verifier-title S   title,\n"
                "  --verifier-organization S\n"
                "                       organisation,\n"
                "  --verifier-location S\n"
                "                       location,\n"
                "  --verifier-contact S contact (each defaults to wiped.conf's verifier-* key)\n"
                "  -y, --yes            do not ask for confirmation (required when stdin is not a terminal)\n"
                "  --expect FILE        with --yes or --dry-run: each device goes with its identity in FILE (the\n"
                "                       output of wipectl --json probe for the same devices): refused if it changed\n"
                "  -n, --dry-run        check and plan everything, print the plan and an estimate, write nothing\n"
                "  --no-wait            print the job ids and return at once\n" WATCH_OPTIONS_HELP,
        .exec = cmd_wipe_exec,
};
