/* The REPORT object as text: what was wiped, where and how, each pass and its verification, the
 * Verification section with every run, how to check the device independently, bad ranges, errors
 * and the job's history, the device's identity and signatures, and the report's own signature;
 * and the result of "report --check". */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "keystream.h"
#include "method.h"
#include "sign.h"
#include "units.h"
#include "wipectl.h"

#define OUTPUT_REPORT_OFFSETS_PER_LINE 5 /* mismatch offsets on one line */
#define OUTPUT_REPORT_INDENT 17         /* column of a value after its label, "  Device:        " */
#define OUTPUT_REPORT_WIDTH 79          /* wrap long text (the caveat) before this column */
#define OUTPUT_REPORT_RANGES_MAX 32     /* bad ranges listed; the JSON has them all */

/* UNIX seconds as local time, "-" when absent. */
static const char *output_time(struct json_object *o, const char *key, char *buf, size_t n) {
        int64_t s = output_get_int(o, key, -1);
        time_t t = (time_t) s;
        struct tm tm;

        if (s < 0 || !localtime_r(&t, &tm) || strftime(buf, n, "%Y-%m-%d %H:%M:%S %z", &tm) == 0)
                snprintf(buf, n, "-");
        return buf;
}

/* Print s for a POSIX shell: as it is when it holds only safe characters, else single-quoted. */
static void output_shell_word(const char *s) {
        if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._-+:@,=") == strlen(s)) {
                fputs(s, stdout);
                return;
        }
        putchar('\'');
        for (; *s; s++)
                if (*s == '\'')
                        fputs("'\\''", stdout);
                else
                        putchar(*s);
        putchar('\'');
}

/* The openssl command that reproduces a random pass: the keystream contract (wipectl(1)
 * "KEYSTREAM CONTRACT"). Only for a cipher and key the contract covers; returns whether it
 * printed. */
static bool output_check_random(const char *cipher, const char *key, int64_t bytes, const char *device) {
        enum keystream_cipher c;

        if (!cipher || !key || bytes <= 0 || keystream_cipher_from_name(cipher, &c) < 0 || c == KEYSTREAM_AUTO ||
            strlen(key) != 2 * keystream_key_size(c) || strspn(key, "0123456789abcdefABCDEF") != strlen(key))
                return false;
        printf("openssl enc -%s -K %s -iv 00000000000000000000000000000000 -in /dev/zero | head -c %" PRId64
               " | cmp - ", keystream_cipher_name(c), key, bytes);
        output_shell_word(device);
        putchar('\n');
        return true;
}

/* A command that compares the device with a pattern pass, from offset 0 (where the pattern is
 * aligned) to bytes: cmp against /dev/zero, tr for other bytes, perl (Essential on Debian) for
 * patterns of several bytes. Returns whether it printed. */
static bool output_check_pattern(const char *pattern, int64_t bytes, const char *device) {
        struct pass p;
        char name[2 * METHOD_PATTERN_MAX + 3];

        if (bytes <= 0 || pass_parse(pattern, &p) < 0 || p.kind != PASS_PATTERN)
                return false;
        if (p.pattern_len == 1 && p.pattern[0] == 0)
                printf("cmp -n %" PRId64 " /dev/zero ", bytes);
        else if (p.pattern_len == 1)
                printf("head -c %" PRId64 " /dev/zero | tr '\\0' '\\%03o' | cmp - ", bytes, p.pattern[0]);
        else
                printf("perl -e 'print pack(\"H*\", \"%s\") x 65536 while 1' | head -c %" PRId64 " | cmp - ",
                       pass_name(&p, name, sizeof(name)) + 2, bytes);
        output_shell_word(device);
        putchar('\n');
        return true;
}

/* Byte offsets of mismatching sectors from a "first_mismatches" array, a few on a line, each
 * line after indent. */
static void output_offsets(struct json_object *offsets, const char *indent) {
        size_t n = offsets && json_object_is_type(offsets, json_type_array) ? json_object_array_length(offsets) : 0;

        for (size_t i = 0; i < n; i++) {
                if (i % OUTPUT_REPORT_OFFSETS_PER_LINE == 0)
                        fputs(indent, stdout);
                printf("%" PRId64, json_object_get_int64(json_object_array_get_idx(offsets, i)));
                fputs(i + 1 == n ? "\n" : (i + 1) % OUTPUT_REPORT_OFFSETS_PER_LINE == 0 ? ",\n" : ", ", stdout);
        }
}

/* "label  2 mismatched sectors" (label padded to width) and the byte offsets of the first ones,
 * for a pass's "verified" object or the verification. Nothing when there is no mismatch. */
static void output_mismatches(struct json_object *v, const char *label, int width, int64_t sector) {
        int64_t count = output_get_int(v, "mismatched_sectors", 0);
        struct json_object *first = NULL;
        size_t shown = 0;

        if (count <= 0)
                return;
        json_object_object_get_ex(v, "first_mismatches", &first);
        if (first && json_object_is_type(first, json_type_array))
                shown = json_object_array_length(first);
        printf("%-*s%" PRId64 " mismatched %" PRId64 "-byte sector%s", width, label, count, sector, count == 1 ? "" : "s");
        if (shown == 0) {
                putchar('\n');
                return;
        }
        printf("%s at byte offsets:\n", (int64_t) shown < count ? ", the first" : ",");
        output_offsets(first, "                 ");
}

/* A pass's "verified" object in a table cell: "passed (all, 100.00%)", "failed (sample, 10.02%):
 * 2 sectors", or "-" when the pass was not verified. */
static void output_verified_cell(struct json_object *v, char *buf, size_t n) {
        int64_t bad = output_get_int(v, "mismatched_sectors", 0);
        int k;

        if (!v || !json_object_is_type(v, json_type_object)) {
                snprintf(buf, n, "-");
                return;
        }
        k = snprintf(buf, n, "%s (%s, %.2f%%)", output_get_string(v, "result", "?"), output_get_string(v, "mode", "?"),
                     output_get_double(v, "coverage_percent", 0));
        if (bad > 0 && k > 0 && (size_t) k < n)
                snprintf(buf + k, n - (size_t) k, ": %" PRId64 " sector%s", bad, bad == 1 ? "" : "s");
}

/* "Keystream: made by gcrypt" (the libraries that made the random passes; one of both or both). */
static void output_report_backends(struct json_object *rep) {
        struct json_object *a = NULL;
        size_t n;

        if (!json_object_object_get_ex(rep, "keystream_backends", &a) || !json_object_is_type(a, json_type_array))
                return;
        n = json_object_array_length(a);
        if (n == 0)
                return;
        printf("  Keystream:     made by ");
        for (size_t i = 0; i < n; i++) {
                char name[OUTPUT_CELL];

                output_escape(json_object_get_string(json_object_array_get_idx(a, i)), false, name, sizeof(name));
                printf("%s%s", i == 0 ? "" : i + 1 == n ? " and " : ", ", name);
        }
        printf(" (the same bytes either way: see wiped(8) KEYSTREAM)\n");
}

static bool report_bool(struct json_object *o, const char *key, bool def) {
        struct json_object *v = NULL;

        if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_boolean))
                return def;
        return json_object_get_boolean(v);
}

/* A firmware erase pass: the command as sent, what the drive said, and the proof. */
static void output_report_firmware(struct json_object *p, int64_t pass) {
        struct json_object *fw = NULL, *cmd = NULL;
        char a[OUTPUT_CELL], b[OUTPUT_CELL], t1[64], t2[64];
        const char *params[] = { "sanact", "feature", "service_action", "ses_name", "overwrite_pattern" };

        if (!json_object_object_get_ex(p, "firmware", &fw) || !json_object_is_type(fw, json_type_object))
                return;
        json_object_object_get_ex(fw, "command", &cmd);
        output_escape(output_get_string(cmd, "action", "?"), false, a, sizeof(a));
        output_escape(output_get_string(cmd, "command", "?"), false, b, sizeof(b));
        printf("  Firmware erase (pass %" PRId64 "): %s: %s\n", pass, a, b);
        printf("    Parameters:  ");
        for (size_t i = 0, k = 0; i < sizeof(params) / sizeof(params[0]); i++) {
                const char *v = output_get_string(cmd, params[i], NULL);

                if (v) {
                        output_escape(v, false, a, sizeof(a));
                        printf("%s%s %s", k++ ? ", " : "", params[i], a);
                }
        }
        if (json_object_object_get_ex(cmd, "enhanced", NULL))
                printf("enhanced %s, temporary user password removed after", report_bool(cmd, "enhanced", false) ? "yes" : "no");
        if (json_object_object_get_ex(cmd, "ause", NULL) || json_object_object_get_ex(cmd, "failure_mode", NULL))
                printf(", %s %s", json_object_object_get_ex(cmd, "ause", NULL) ? "AUSE" : "failure mode",
                       report_bool(cmd, "ause", false) || report_bool(cmd, "failure_mode", false) ? "yes" : "no");
        if (report_bool(cmd, "all_namespaces", false))
                printf(", every namespace of the controller");
        putchar('\n');
        output_escape(output_get_string(fw, "drive_status_text", "-"), false, a, sizeof(a));
        printf("    Drive:       %s: %s\n", output_get_string(fw, "drive_status", "?"), a);
        output_time(fw, "started_at", t1, sizeof(t1));
        output_time(fw, "ended_at", t2, sizeof(t2));
        printf("    Sent:        %s, ended %s\n", t1, t2);
        if (report_bool(fw, "proven", false)) {
                output_escape(output_get_string(fw, "returns", "?"), false, a, sizeof(a));
                printf("    Proof:       %" PRId64 " of %" PRId64 " markers gone; %" PRId64 " of %" PRId64 " sampled extents "
                       "changed (%" PRId64 " were blank before); it returns %s\n",
                       output_get_int(fw, "markers", 0) - output_get_int(fw, "markers_survived", 0),
                       output_get_int(fw, "markers", 0),
                       output_get_int(fw, "samples", 0) - output_get_int(fw, "samples_blank_before", 0) -
                       output_get_int(fw, "samples_unchanged", 0),
                       output_get_int(fw, "samples", 0) - output_get_int(fw, "samples_blank_before", 0),
                       output_get_int(fw, "samples_blank_before", 0), a);
        } else
                printf("    Proof:       not checked (the erase did not complete)\n");
        if (output_get_string(fw, "resume_note", NULL)) {
                output_escape(output_get_string(fw, "resume_note", ""), false, a, sizeof(a));
                printf("    Resume:      %s\n", a);
        }
}

/* The passes as a table (pattern, cipher, key fingerprint, verification), then the keys (with
 * --keys), the command that checks the last pass, and the mismatches of a failed pass. */
static void output_report_passes(struct json_object *rep, struct json_object *passes, int64_t size,
                                 bool *any_random, bool *any_key) {
        static const char *const header[] = { "PASS", "PATTERN", "CIPHER", "KEY FINGERPRINT", "VERIFIED" };
        static const bool right[] = { true, false, false, false, false };
        const char *state = output_get_string(rep, "state", "?");
        const char *device = output_get_string(rep, "device", "?");
        int64_t sector = output_get_int(rep, "sector_size", 0);
        size_t n = json_object_array_length(passes);
        struct json_object *last = NULL, *verified = NULL;
        struct output_table t = {};
        const char *pattern;
        bool complete;

        if (n == 0 || output_table_init(&t, header, right, sizeof(header) / sizeof(header[0]), n) < 0) {
                output_table_done(&t);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                struct json_object *p = json_object_array_get_idx(passes, i), *v = NULL;
                const char *cipher = output_get_string(p, "cipher", NULL);

                json_object_object_get_ex(p, "verified", &v);
                snprintf(output_table_cell(&t, i + 1, 0), OUTPUT_CELL, "%" PRId64,
                         output_get_int(p, "pass", (int64_t) i + 1));
                output_escape(output_get_string(p, "pattern", "?"), false, output_table_cell(&t, i + 1, 1), OUTPUT_CELL);
                output_escape(cipher, false, output_table_cell(&t, i + 1, 2), OUTPUT_CELL);
                output_escape(output_get_string(p, "key_fingerprint", NULL), false, output_table_cell(&t, i + 1, 3),
                              OUTPUT_CELL);
                output_verified_cell(v, output_table_cell(&t, i + 1, 4), OUTPUT_CELL);
                *any_random |= cipher != NULL;
        }
        printf("  Passes:\n");
        output_table_print(&t, "    ");
        output_table_done(&t);
        output_report_backends(rep);

        for (size_t i = 0; i < n; i++) {
                struct json_object *p = json_object_array_get_idx(passes, i);
                const char *key = output_get_string(p, "key", NULL);
                char label[32];

                if (!key)
                        continue;
                *any_key = true;
                snprintf(label, sizeof(label), "Key of pass %" PRId64 ":", output_get_int(p, "pass", (int64_t) i + 1));
                printf("  %-15s%s\n", label, key);
        }
        for (size_t i = 0; i < n; i++)
                output_report_firmware(json_object_array_get_idx(passes, i), (int64_t) i + 1);
        /* Earlier passes were overwritten by later ones: only the last is on the device. */
        last = json_object_array_get_idx(passes, n - 1);
        pattern = output_get_string(last, "pattern", "?");
        json_object_object_get_ex(last, "verified", &verified);
        if (json_object_object_get_ex(last, "firmware", NULL)) {
                printf("  Check:         none: what a firmware erase leaves is the drive's own; its proof is above\n");
                return;
        }
        /* A verified pass was written whole, even when its job then failed in verification. */
        complete = output_state_of(state) == JOB_DONE || (verified && json_object_is_type(verified, json_type_object));
        if (strcmp(pattern, "random") == 0 && !output_get_string(last, "key", NULL))
                ; /* no key, no command: the note at the end says how to get both */
        else if (!complete)
                printf("  Check:         none: the job %s %s before its last pass was complete\n",
                       job_state_name_is_final(state) ? "ended" : "is", state);
        else {
                printf("  Check:         ");
                if (strcmp(pattern, "random") == 0 ? !output_check_random(output_get_string(last, "cipher", NULL),
                                                                          output_get_string(last, "key", NULL), size, device)
                                                   : !output_check_pattern(pattern, size, device))
                        printf("none: no command for pass %s of %s\n", pattern, output_get_string(last, "cipher", "-"));
        }
        /* The last pass's mismatches are in the Verification section; an earlier pass (--verify all)
         * fails its job and says so here. */
        for (size_t i = 0; i + 1 < n; i++) {
                struct json_object *v = NULL;
                char label[32];

                if (!json_object_object_get_ex(json_object_array_get_idx(passes, i), "verified", &v) ||
                    output_get_int(v, "mismatched_sectors", 0) <= 0)
                        continue;
                snprintf(label, sizeof(label), "  Pass %zu:", i + 1);
                output_mismatches(v, label, 17, sector);
        }
}

/* What a verification mode reads, in words. */
static const char *output_mode_explained(const char *mode) {
        switch (output_mode_of(mode)) {
        case VERIFY_SAMPLE:
                return "NIST SP 800-88: pseudo-random samples, at least 2 in\n"
                       "                 each subsection, and the first and last sectors";
        case VERIFY_LAST:
                return "every byte read back after the last pass";
        case VERIFY_ALL:
                return "every byte read back after every pass";
        case VERIFY_NONE:
                return "nothing read back";
        default:
                return NULL;
        }
}

/* The runs of the last pass's verification as a table: when, mode, seed, coverage, result. The
 * coverage's size and share are columns of their own, each right-aligned, so that the numbers line
 * up whatever their widths ("3.20 MiB" above "32.0 MiB", "10.00%" above "100.00%"). */
static void output_report_runs(struct json_object *runs) {
        static const char *const header[] = { "WHEN", "MODE", "SEED", "COVERAGE", "SHARE", "RESULT", "MISMATCHED" };
        static const bool right[] = { false, false, true, true, true, false, true };
        size_t n = runs && json_object_is_type(runs, json_type_array) ? json_object_array_length(runs) : 0;
        struct output_table t = {};

        if (n == 0) {
                printf("    Runs:        none\n");
                return;
        }
        if (output_table_init(&t, header, right, sizeof(header) / sizeof(header[0]), n) < 0) {
                output_table_done(&t);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                struct json_object *r = json_object_array_get_idx(runs, i);
                const char *mode = output_get_string(r, "mode", "?");
                char size[32];

                output_time(r, "at", output_table_cell(&t, i + 1, 0), OUTPUT_CELL);
                output_verify_mode(r, output_table_cell(&t, i + 1, 1), OUTPUT_CELL);
                if (output_mode_of(mode) == VERIFY_SAMPLE)
                        snprintf(output_table_cell(&t, i + 1, 2), OUTPUT_CELL, "%" PRIu64, output_get_u64(r, "seed", 0));
                else
                        snprintf(output_table_cell(&t, i + 1, 2), OUTPUT_CELL, "-");
                snprintf(output_table_cell(&t, i + 1, 3), OUTPUT_CELL, "%s",
                         output_size(size, sizeof(size), (uint64_t) output_get_int(r, "coverage_bytes", 0)));
                snprintf(output_table_cell(&t, i + 1, 4), OUTPUT_CELL, "%.2f%%", output_get_double(r, "coverage_percent", 0));
                output_escape(output_get_string(r, "result", "?"), false, output_table_cell(&t, i + 1, 5), OUTPUT_CELL);
                snprintf(output_table_cell(&t, i + 1, 6), OUTPUT_CELL, "%" PRId64,
                         output_get_int(r, "mismatched_sectors", 0));
        }
        printf("    Runs:\n");
        output_table_print(&t, "      ");
        output_table_done(&t);
}

/* The Verification section: the latest verification of the last pass, and every run of it. */
static void output_report_verification(struct json_object *rep) {
        struct json_object *v = NULL, *runs = NULL;
        int64_t sector = output_get_int(rep, "sector_size", 0), bytes;
        const char *mode, *why;
        char a[64];

        /* Reports of daemons that did not verify have no such section. */
        if (!json_object_object_get_ex(rep, "verification", &v) || !json_object_is_type(v, json_type_object))
                return;
        mode = output_get_string(v, "mode", "?");
        why = output_mode_explained(mode);
        printf("  Verification (of the last pass):\n");
        printf("    Mode:        %s%s%s%s\n", output_verify_mode(v, a, sizeof(a)), why ? " (" : "", why ? why : "",
               why ? ")" : "");
        if (output_mode_of(mode) == VERIFY_SAMPLE) {
                printf("    Seed:        %" PRIu64 "\n", output_get_u64(v, "seed", 0));
                printf("    Subsections: %" PRId64 "\n", output_get_int(v, "subsections", 0));
        }
        bytes = output_get_int(v, "coverage_bytes", 0);
        printf("    Coverage:    %s, %.2f%% of the device\n",
               output_size_exact(a, sizeof(a), (uint64_t) (bytes > 0 ? bytes : 0)),
               output_get_double(v, "coverage_percent", 0));
        printf("    Result:      %s\n", output_get_string(v, "result", "?"));
        if (output_get_string(v, "by", NULL)) {
                output_escape(output_get_string(v, "by", ""), false, a, sizeof(a));
                printf("    By:          %s\n", a);
        }
        if (output_get_int(v, "mismatched_sectors", 0) > 0)
                output_mismatches(v, "    Mismatches:", 17, sector);
        else if (strcmp(output_get_string(v, "result", ""), "not run") != 0)
                printf("    Mismatches:  none\n");
        json_object_object_get_ex(v, "runs", &runs);
        output_report_runs(runs);
}

/* The report's view of the device: its identity when the job started, the signatures found on it
 * then, and those a fresh probe found after the wipe. */
static void output_report_device(struct json_object *rep) {
        struct json_object *identity = NULL, *before = NULL, *after = NULL;

        if (json_object_object_get_ex(rep, "identity", &identity) && json_object_is_type(identity, json_type_object)) {
                printf("  Identity at submission:\n");
                output_identity_text(identity, "    ", 13);
        }
        if (json_object_object_get_ex(rep, "signatures_before", &before) && json_object_is_type(before, json_type_array)) {
                if (json_object_array_length(before) == 0)
                        printf("  Signatures before: none found\n");
                else {
                        printf("  Signatures before:\n");
                        output_signatures_text(before, "    ");
                }
        }
        /* After the last write the kernel is asked to read the partition table again, so that no
         * partition of the old table stays (null: not tried, e.g. a partition or a loop device
         * without partition scanning). */
        {
                struct json_object *reread = NULL;

                if (json_object_object_get_ex(rep, "partitions_reread", &reread) && reread) {
                        if (json_object_get_boolean(reread))
                                printf("  Partitions:    the kernel read the partition table again; the old partitions are gone\n");
                        else
                                printf("  Partitions:    the kernel could not read the partition table again (%s): the old "
                                       "partitions may still be listed until the device is re-attached\n",
                                       output_get_string(rep, "partitions_reread_error", "?"));
                }
        }
        /* Reports written before the daemon probed have neither field: say nothing. */
        if (!json_object_object_get_ex(rep, "signatures_after", &after))
                return;
        if (!after)
                printf("  Signatures after:  not checked (the job did not end done)\n");
        else if (!json_object_is_type(after, json_type_array))
                printf("  Signatures after:  not checked\n");
        else if (json_object_array_length(after) == 0)
                printf("  Signatures after:  none found (fresh libblkid probe after the wipe)\n");
        else {
                printf("  Signatures after (fresh libblkid probe after the wipe):\n");
                output_signatures_text(after, "    ");
                /* Each was compared with what the last pass wrote there. */
                for (size_t i = 0; i < json_object_array_length(after); i++) {
                        struct json_object *sig = json_object_array_get_idx(after, i), *m = NULL;
                        char type[128];

                        if (!json_object_object_get_ex(sig, "matches_last_pass", &m) || !json_object_is_type(m, json_type_boolean))
                                continue;
                        printf("    %s at offset %" PRId64 ": %s\n", output_escape(output_get_string(sig, "type", "?"), false, type, sizeof(type)),
                               output_get_int(sig, "offset", -1), json_object_get_boolean(m) ?
                               "the bytes there are those the last pass wrote (a chance match)" :
                               "not what the last pass wrote: something else wrote to the device");
                }
        }
}

/* Print text from the current column first (its label printed), then on lines that start at
 * OUTPUT_REPORT_INDENT, wrapped at spaces before OUTPUT_REPORT_WIDTH; control characters show as
 * \xNN. */
static void output_wrapped(const char *text) {
        size_t width = OUTPUT_REPORT_WIDTH - OUTPUT_REPORT_INDENT, col = 0;
        char buf[4096];
        const char *p;

        output_escape(text, false, buf, sizeof(buf));
        p = buf;
        while (*p) {
                size_t word, space = strspn(p, " ");

                p += space;
                word = strcspn(p, " ");
                if (word == 0)
                        break;
                if (col > 0 && col + 1 + word > width) {
                        printf("\n%*s", OUTPUT_REPORT_INDENT, "");
                        col = 0;
                } else if (col > 0) {
                        putchar(' ');
                        col++;
                }
                fwrite(p, 1, word, stdout);
                col += word;
                p += word;
        }
        putchar('\n');
}

/* "Host:" with the host name and machine ID of the report's "host" object; nothing without one. */
static void output_report_host(struct json_object *rep) {
        struct json_object *host = NULL;
        const char *name, *machine;
        char a[256], b[128];

        if (!json_object_object_get_ex(rep, "host", &host) || !json_object_is_type(host, json_type_object))
                return;
        name = output_get_string(host, "hostname", NULL);
        machine = output_get_string(host, "machine_id", NULL);
        printf("  Host:          %s", output_escape(name, false, a, sizeof(a)));
        if (machine)
                printf(" (machine ID %s)", output_escape(machine, false, b, sizeof(b)));
        putchar('\n');
}

/* "Standard:" with the NIST SP 800-88 category the wipe meets, and the caveat that goes with it. */
static void output_report_standard(struct json_object *rep) {
        const char *category = output_get_string(rep, "nist_category", NULL);
        const char *caveat = output_get_string(rep, "caveat", NULL);
        char a[64];

        if (!category)
                return;
        printf("  Standard:      NIST SP 800-88 %s\n", output_escape(category, false, a, sizeof(a)));
        {
                struct json_object *h = NULL;

                if (json_object_object_get_ex(rep, "hidden_area", &h) && json_object_is_type(h, json_type_object)) {
                        int64_t cur = output_get_int(h, "current_max_sectors", 0), nat = output_get_int(h, "native_max_sectors", 0);
                        int64_t dco = output_get_int(h, "dco_max_sectors", 0);

                        printf("  Hidden area:   ");
                        if (nat > cur)
                                printf("a host protected area of %" PRId64 " sectors", nat - cur);
                        if (nat > cur && dco > nat)
                                printf(" and ");
                        if (dco > nat)
                                printf("a device configuration overlay of %" PRId64 " sectors", dco - nat);
                        printf(": %s\n", output_escape(output_get_string(h, "action", "?"), false, a, sizeof(a)));
                        if (output_get_string(h, "note", NULL)) {
                                printf("%*s", OUTPUT_REPORT_INDENT, "");
                                output_wrapped(output_get_string(h, "note", ""));
                        }
                }
        }
        if (output_get_string(rep, "purge_fallback", NULL)) {
                printf("%*s", OUTPUT_REPORT_INDENT, "");
                output_wrapped(output_get_string(rep, "purge_fallback", ""));
        }
        if (caveat && *caveat) {
                printf("%*s", OUTPUT_REPORT_INDENT, "");
                output_wrapped(caveat);
        }
}

/* "Interruptions:" and resumes, when the report counts them. */
static void output_report_interruptions(struct json_object *rep) {
        int64_t stops = output_get_int(rep, "interruptions", -1), resumes = output_get_int(rep, "resumes", -1);
        int64_t pauses = output_get_int(rep, "pauses", 0);

        if (stops < 0 && resumes < 0)
                return;
        if (stops <= 0 && resumes <= 0 && pauses <= 0) {
                printf("  Interruptions: none\n");
                return;
        }
        printf("  Interruptions: %" PRId64 " (the daemon stopped), paused %" PRId64 " time%s, resumed %" PRId64
               " time%s\n", stops > 0 ? stops : 0, pauses > 0 ? pauses : 0, pauses == 1 ? "" : "s",
               resumes > 0 ? resumes : 0, resumes == 1 ? "" : "s");
}

/* The History section: one row per event of the job (started, interrupted, paused, resumed,
 * ended), with its local time, the device node then, where the job stood, and why. */
static void output_report_history(struct json_object *rep) {
        static const char *const header[] = { "WHEN", "EVENT", "NODE", "PASS", "PHASE", "DONE", "REASON" };
        static const bool right[] = { false, false, false, true, false, true, false };
        struct json_object *history = NULL;
        struct output_table t = {};
        size_t n;

        if (!json_object_object_get_ex(rep, "history", &history) || !json_object_is_type(history, json_type_array))
                return;
        n = json_object_array_length(history);
        if (n == 0) {
                printf("  History:       none\n");
                return;
        }
        if (output_table_init(&t, header, right, sizeof(header) / sizeof(header[0]), n) < 0) {
                output_table_done(&t);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                struct json_object *e = json_object_array_get_idx(history, i);
                int64_t pass = output_get_int(e, "pass", -1), done = output_get_int(e, "bytes_done", -1);

                output_time(e, "at", output_table_cell(&t, i + 1, 0), OUTPUT_CELL);
                output_escape(output_get_string(e, "event", "?"), false, output_table_cell(&t, i + 1, 1), OUTPUT_CELL);
                output_escape(output_get_string(e, "node", NULL), false, output_table_cell(&t, i + 1, 2), OUTPUT_CELL);
                if (pass > 0)
                        snprintf(output_table_cell(&t, i + 1, 3), OUTPUT_CELL, "%" PRId64, pass);
                else
                        snprintf(output_table_cell(&t, i + 1, 3), OUTPUT_CELL, "-");
                output_escape(output_get_string(e, "phase", NULL), false, output_table_cell(&t, i + 1, 4), OUTPUT_CELL);
                if (done >= 0)
                        output_size(output_table_cell(&t, i + 1, 5), OUTPUT_CELL, (uint64_t) done);
                else
                        snprintf(output_table_cell(&t, i + 1, 5), OUTPUT_CELL, "-");
                output_escape(output_get_string(e, "reason", NULL), false, output_table_cell(&t, i + 1, 6),
                              OUTPUT_CELL);
        }
        printf("  History:\n");
        output_table_print(&t, "    ");
        output_table_done(&t);
}

/* "Bad ranges:" (byte ranges the device could not write or read back: none, or the first ones),
 * then "Errors:", every error the job met; nothing for reports without them. */
static void output_report_bad(struct json_object *rep) {
        struct json_object *ranges = NULL, *errors = NULL;
        char a[32], b[32], c[1024], d[64];
        size_t n;

        if (json_object_object_get_ex(rep, "bad_ranges", &ranges) && json_object_is_type(ranges, json_type_array)) {
                uint64_t total = 0;

                n = json_object_array_length(ranges);
                for (size_t i = 0; i < n; i++) {
                        int64_t length = output_get_int(json_object_array_get_idx(ranges, i), "length", 0);

                        total += length > 0 ? (uint64_t) length : 0;
                }
                if (n == 0)
                        printf("  Bad ranges:    none\n");
                else
                        printf("  Bad ranges:    %zu, %s in all\n", n, output_size_exact(a, sizeof(a), total));
                for (size_t i = 0; i < n && i < OUTPUT_REPORT_RANGES_MAX; i++) {
                        struct json_object *r = json_object_array_get_idx(ranges, i);
                        int64_t offset = output_get_int(r, "offset", -1), length = output_get_int(r, "length", -1);

                        printf("    at byte %" PRId64 ", %s\n", offset,
                               length >= 0 ? output_size_exact(b, sizeof(b), (uint64_t) length) : "length unknown");
                }
                if (n > OUTPUT_REPORT_RANGES_MAX)
                        printf("    ... and %zu more (--json lists them all)\n", n - OUTPUT_REPORT_RANGES_MAX);
        }
        if (!json_object_object_get_ex(rep, "errors", &errors) || !json_object_is_type(errors, json_type_array) ||
            json_object_array_length(errors) == 0)
                return;
        printf("  Errors:\n");
        n = json_object_array_length(errors);
        for (size_t i = 0; i < n; i++) {
                struct json_object *e = json_object_array_get_idx(errors, i);

                printf("    %s (%s)\n", output_escape(output_get_string(e, "message", "?"), false, c, sizeof(c)),
                       output_escape(output_get_string(e, "code", "?"), false, d, sizeof(d)));
        }
}

/* "Report file:" where the daemon keeps the signed report, and "Signed:" with its key. */
static void output_report_signed(struct json_object *rep) {
        const char *file = output_get_string(rep, "report_file", NULL);
        const char *state = output_get_string(rep, "state", "?");
        struct json_object *sig = NULL;
        char a[1024], b[64];

        if (file)
                printf("  Report file:   %s\n", output_escape(file, false, a, sizeof(a)));
        if (json_object_object_get_ex(rep, "signature", &sig) && json_object_is_type(sig, json_type_object))
                printf("  Signed:        %s key %s\n",
                       output_escape(output_get_string(sig, "algorithm", "?"), false, b, sizeof(b)),
                       output_escape(output_get_string(sig, "key_id", "?"), false, a, sizeof(a)));
        else if (job_state_name_is_final(state))
                printf("  Signed:        no\n");
        else if (output_state_of(state) == JOB_PAUSED)
                printf("  Signed:        no (report of a paused job)\n");
        else
                printf("  Signed:        no (report of a job still running)\n");
}

void output_report_check_text(struct json_object *check) {
        struct json_object *v = NULL;
        const char *file = output_get_string(check, "file", "-");
        const char *node = output_get_string(check, "node", NULL);
        const char *serial = output_get_string(check, "serial", NULL);
        const char *state = output_get_string(check, "state", NULL);
        const char *host = output_get_string(check, "host", NULL);
        const char *id = output_get_string(check, "key_id", "?");
        int64_t job = output_get_int(check, "job", -1);
        const char *sep = ": ";
        char name[1024], a[256];

        if (!json_object_object_get_ex(check, "valid", &v) || !json_object_get_boolean(v))
                return;
        output_escape(strcmp(file, "-") == 0 ? "stdin" : file, false, name, sizeof(name));
        printf("%s: valid signature (%s, key %s)", name, SIGN_ALGORITHM, id);
        if (job >= 0) {
                printf("%sjob %" PRId64, sep, job);
                sep = ", ";
        }
        if (node) {
                printf("%s%s", sep, output_escape(node, false, a, sizeof(a)));
                sep = ", ";
        }
        if (serial)
                printf(" (serial %s)", output_escape(serial, false, a, sizeof(a)));
        if (state) {
                printf("%s%s", sep, output_escape(state, false, a, sizeof(a)));
                sep = ", ";
        }
        if (host)
                printf("%shost %s", sep, output_escape(host, false, a, sizeof(a)));
        putchar('\n');
        if (!json_object_object_get_ex(check, "this_host_key", &v) || !json_object_is_type(v, json_type_boolean))
                return;
        if (json_object_get_boolean(v))
                printf("%s: signed by this host's key\n", name);
        else
                printf("%s: signed by key %s, not this host's\n", name, id);
}

#define RECORD_NOT_RECORDED "not recorded"

/* A "Label: value" line of the record, the value escaped; "not recorded" when absent or null. */
static void record_line(const char *indent, const char *label, const char *value) {
        char buf[2048];

        printf("%s%-20s %s\n", indent, label, value ? output_escape(value, false, buf, sizeof(buf)) : RECORD_NOT_RECORDED);
}

/* A person of the record ({"name","title","organization","location","contact"}) on one line:
 * "Ana Müller, Technician, IT Asset Services, Hamburg (ana@example.org)". */
static void record_person(const char *indent, const char *label, struct json_object *rec, const char *key) {
        static const char *const keys[] = { "name", "title", "organization", "location" };
        struct json_object *p = NULL;
        char line[1536] = "", buf[512];
        size_t used = 0;

        if (!json_object_object_get_ex(rec, key, &p) || !json_object_is_type(p, json_type_object)) {
                record_line(indent, label, NULL);
                return;
        }
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
                const char *v = output_get_string(p, keys[i], NULL);

                if (v && used < sizeof(line))
                        used += (size_t) snprintf(line + used, sizeof(line) - used, "%s%s", used ? ", " : "",
                                                  output_escape(v, false, buf, sizeof(buf)));
        }
        if (output_get_string(p, "contact", NULL) && used < sizeof(line))
                used += (size_t) snprintf(line + used, sizeof(line) - used, "%s(%s)", used ? " " : "",
                                          output_escape(output_get_string(p, "contact", NULL), false, buf, sizeof(buf)));
        printf("%s%-20s %s\n", indent, label, used ? line : RECORD_NOT_RECORDED);
}

void output_record_text(struct json_object *rec, const char *indent, bool planned) {
        record_line(indent, "Asset tag:", output_get_string(rec, "asset_tag", NULL));
        /* Each submit draws its batch: a dry run's would be another than the wipe's. */
        if (!planned)
                record_line(indent, "Batch:", output_get_string(rec, "batch", NULL));
        record_line(indent, "Customer:", output_get_string(rec, "customer", NULL));
        if (output_get_string(rec, "note", NULL))
                record_line(indent, "Note:", output_get_string(rec, "note", NULL));
        record_line(indent, "Destination:", output_get_string(rec, "destination", NULL));
        record_person(indent, "Performed by:", rec, "operator");
        record_person(indent, "Verified by:", rec, "verifier");
}

/* The "Sanitization record" section (NIST SP 800-88's sample certificate): the overall status
 * first, then what the record says; "not recorded" for what this report lacks (older reports
 * lack all of it). */
static void output_report_record(struct json_object *rep) {
        struct json_object *ex = NULL, *san = NULL, *id = NULL, *host = NULL, *dmi = NULL;
        const char *status = output_get_string(rep, "overall_status", NULL);
        char line[2048], buf[512];
        size_t used = 0;

        printf("Sanitization record\n");
        if (status) {
                used = (size_t) snprintf(line, sizeof(line), "%s", status);
                if (json_object_object_get_ex(rep, "exceptions", &ex) && json_object_is_type(ex, json_type_array))
                        for (size_t i = 0; i < json_object_array_length(ex) && used < sizeof(line); i++)
                                used += (size_t) snprintf(line + used, sizeof(line) - used, "%s%s", i ? "; " : ": ",
                                                          json_object_get_string(json_object_array_get_idx(ex, i)));
        }
        record_line("  ", "Overall status:", status ? line : NULL);
        output_record_text(rep, "  ", false);
        record_line("  ", "Media type:", output_get_string(rep, "media_type", NULL));
        record_line("  ", "Manufacturer:", output_get_string(rep, "manufacturer", NULL));
        json_object_object_get_ex(rep, "identity", &id);
        record_line("  ", "Model:", id ? output_get_string(id, "model", NULL) : NULL);
        record_line("  ", "Serial:", id ? output_get_string(id, "serial", NULL) : NULL);
        if (!json_object_object_get_ex(rep, "sanitization", &san) || !json_object_is_type(san, json_type_object))
                san = NULL;
        record_line("  ", "Category:", san ? output_get_string(san, "category", NULL) : NULL);
        record_line("  ", "Technique:", san ? output_get_string(san, "technique", NULL) : NULL);
        record_line("  ", "Method:", san ? output_get_string(san, "method", NULL) : NULL);
        record_line("  ", "Tool:", san ? output_get_string(san, "tool", NULL) : NULL);
        if (san && output_get_string(san, "verification_method", NULL)) {
                snprintf(line, sizeof(line), "%s: %s", output_get_string(san, "verification_method", "?"),
                         output_get_string(san, "verification_result", "?"));
                record_line("  ", "Verification:", line);
        } else
                record_line("  ", "Verification:", NULL);
        if (json_object_object_get_ex(rep, "host", &host) && json_object_object_get_ex(host, "dmi", &dmi) &&
            json_object_is_type(dmi, json_type_object)) {
                static const char *const keys[] = { "vendor", "product", "serial", "uuid" };
                static const char *const labels[] = { "", " ", ", serial ", ", UUID " };

                used = 0;
                for (size_t i = 0; i < 4; i++) {
                        const char *v = output_get_string(dmi, keys[i], NULL);

                        if (v && used < sizeof(line))
                                used += (size_t) snprintf(line + used, sizeof(line) - used, "%s%s",
                                                          used ? labels[i] : "", output_escape(v, false, buf, sizeof(buf)));
                }
                /* Already escaped: printed as it is. */
                printf("  %-20s %s\n", "Host DMI:", used ? line : RECORD_NOT_RECORDED);
        } else
                record_line("  ", "Host DMI:", NULL);
}

void output_report_text(struct json_object *rep) {
        const char *device = output_get_string(rep, "device", "?");
        const char *state = output_get_string(rep, "state", "?");
        int64_t size = output_device_size(rep);
        int64_t written = output_get_int_or(rep, "written_bytes", "bytes_written", -1);
        struct json_object *passes = NULL, *list = NULL;
        bool any_random = false, any_key = false;
        double duration;
        char a[64], b[64], err[1024], summary[512];
        size_t n = 0;

        if (json_object_object_get_ex(rep, "passes", &passes) && json_object_is_type(passes, json_type_array))
                n = json_object_array_length(passes);
        /* Older reports have no "pass_list"; their passes name their patterns. */
        if (!json_object_object_get_ex(rep, "pass_list", &list) || !json_object_is_type(list, json_type_array))
                list = passes;
        /* Without "size" or an identity, bytes_total was the size: one pass, no verification. */
        if (size < 0)
                size = output_get_int(rep, "bytes_total", -1);

        printf("Wipe report for job %" PRId64 "\n", output_get_int(rep, "job", -1));
        printf("  Device:        %s\n", output_escape(device, false, err, sizeof(err)));
        printf("  State:         %s\n", state);
        output_report_host(rep);
        n = list ? json_object_array_length(list) : n;
        printf("  Method:        %s (%zu pass%s: %s)\n", output_get_string(rep, "method", "?"), n, n == 1 ? "" : "es",
               output_pass_summary_json(list, 60, summary, sizeof(summary)));
        /* Started without a person, by a bay policy of the daemon. */
        if (output_get_string(rep, "policy", NULL))
                printf("  Policy:        %s\n", output_escape(output_get_string(rep, "policy", NULL), false, err, sizeof(err)));
        output_report_standard(rep);
        if (size >= 0)
                printf("  Size:          %s, %" PRId64 "-byte sectors\n", output_size_exact(a, sizeof(a), (uint64_t) size),
                       output_get_int(rep, "sector_size", 0));
        if (written >= 0)
                printf("  Written:       %s, all passes\n", output_size_exact(a, sizeof(a), (uint64_t) written));
        printf("  Started:       %s\n", output_time(rep, "started_at", a, sizeof(a)));
        printf("  Ended:         %s\n", output_time(rep, "ended_at", a, sizeof(a)));
        duration = output_get_double(rep, "duration_s", -1);
        /* Short wipes happen (small devices): keep their fraction of a second. */
        if (duration >= 0 && duration < 60)
                printf("  Duration:      %.2fs\n", duration);
        else
                printf("  Duration:      %s\n", units_duration(a, sizeof(a), (int64_t) duration));
        printf("  Average rate:  %s\n", units_rate(b, sizeof(b), output_get_double(rep, "avg_rate_bps", 0)));
        output_report_interruptions(rep);
        printf("  Tool:          %s\n", output_get_string(rep, "tool", "?"));
        if (output_error_line(rep, err, sizeof(err)))
                printf("  Error:         %s\n", err);

        output_report_record(rep);
        if (passes && json_object_array_length(passes) > 0)
                output_report_passes(rep, passes, size, &any_random, &any_key);
        output_report_verification(rep);
        output_report_bad(rep);
        output_report_history(rep);
        output_report_device(rep);
        output_smart_report(rep);
        output_report_signed(rep);
        if (any_random && !any_key)
                printf("Keys are not shown; \"wipectl report --keys %" PRId64 "\" (as root) prints them and, when the\n"
                       "last pass is random, the openssl command that checks the device.\n",
                       output_get_int(rep, "job", -1));
}
