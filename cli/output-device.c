/* Text renderings of what the daemon's probe tells about a device: the IDENTITY, ERASE, SIG, PART
 * and PROBE objects of wiped(8) "PROTOCOL". Every string that came from the device (labels, models,
 * serials, partition names) goes through output_escape() before it reaches the terminal. */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "units.h"
#include "wipectl.h"

#define OUTPUT_PROBE_WIDTH 19           /* label column of "wipectl probe", indent included */

/* Names of common partition types, for people; the JSON keeps the GUID or number. */
static const struct {
        const char *guid;
        const char *name;
} output_gpt_types[] = {
        { "c12a7328-f81f-11d2-ba4b-00a0c93ec93b", "EFI System" },
        { "21686148-6449-6e6f-744e-656564454649", "BIOS boot" },
        { "0fc63daf-8483-4772-8e79-3d69d8477de4", "Linux filesystem" },
        { "0657fd6d-a4ab-43c4-84e5-0933c84b4f4f", "Linux swap" },
        { "e6d6d379-f507-44c2-a23c-238f2a3df928", "Linux LVM" },
        { "a19d880f-05fc-4d3b-a006-743f0f84911e", "Linux RAID" },
        { "4f68bce3-e8cd-4db1-96e7-fbcaf984b709", "Linux root (x86-64)" },
        { "933ac7e1-2eb4-4f13-b844-0e14e2aef915", "Linux home" },
        { "bc13c2ff-59e6-4262-a352-b275fd6f7172", "Linux extended boot" },
        { "ebd0a0a2-b9e5-4433-87c0-68b6b72699c7", "Microsoft basic data" },
        { "e3c9e316-0b5c-4db8-817d-f92df00215ae", "Microsoft reserved" },
        { "de94bba4-06d1-4d40-a16a-bfd50179d6ac", "Windows recovery" },
        { "48465300-0000-11aa-aa11-00306543ecac", "Apple HFS/HFS+" },
        { "7c3457ef-0000-11aa-aa11-00306543ecac", "Apple APFS" },
};

static const struct {
        unsigned long id;
        const char *name;
} output_mbr_types[] = {
        { 0x05, "Extended" },         { 0x07, "HPFS/NTFS/exFAT" }, { 0x0b, "W95 FAT32" },
        { 0x0c, "W95 FAT32 (LBA)" },  { 0x0e, "W95 FAT16 (LBA)" }, { 0x0f, "W95 Ext'd (LBA)" },
        { 0x82, "Linux swap" },       { 0x83, "Linux" },           { 0x85, "Linux extended" },
        { 0x8e, "Linux LVM" },        { 0xee, "GPT" },             { 0xef, "EFI (FAT-12/16/32)" },
        { 0xfd, "Linux raid autodetect" },
};

/* A partition type for people: its name when known, else as the daemon sent it. */
static const char *output_part_type(const char *type) {
        unsigned long id;
        char *end = NULL;

        if (!type)
                return NULL;
        for (size_t i = 0; i < sizeof(output_gpt_types) / sizeof(output_gpt_types[0]); i++)
                if (strcasecmp(type, output_gpt_types[i].guid) == 0)
                        return output_gpt_types[i].name;
        if (strncasecmp(type, "0x", 2) == 0) {
                id = strtoul(type + 2, &end, 16);
                if (end != type + 2 && *end == '\0')
                        for (size_t i = 0; i < sizeof(output_mbr_types) / sizeof(output_mbr_types[0]); i++)
                                if (output_mbr_types[i].id == id)
                                        return output_mbr_types[i].name;
        }
        return type;
}

void output_append(char *buf, size_t n, size_t *l, const char *fmt, ...) {
        va_list ap;
        int k;

        if (*l + 1 >= n)
                return;
        va_start(ap, fmt);
        k = vsnprintf(buf + *l, n - *l, fmt, ap);
        va_end(ap);
        if (k < 0)
                return;
        *l += (size_t) k;
        if (*l >= n)
                *l = n - 1;
}

/* The value of key in o when it is a JSON object, else NULL. */
static struct json_object *output_get_object(struct json_object *o, const char *key) {
        struct json_object *v = NULL;

        if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_object))
                return NULL;
        return v;
}

/* The value of key in o when it is a JSON array, else NULL. */
static struct json_object *output_get_array(struct json_object *o, const char *key) {
        struct json_object *v = NULL;

        if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_array))
                return NULL;
        return v;
}

static size_t output_array_length(struct json_object *a) {
        return a ? json_object_array_length(a) : 0;
}

/* "yes", "no", or "?" when the field is absent. */
static const char *output_yes_no(struct json_object *o, const char *key) {
        struct json_object *v = NULL;

        if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_boolean))
                return "?";
        return json_object_get_boolean(v) ? "yes" : "no";
}

/* One "<indent><label>  value" line, the label padded to width (indent included). */
__attribute__((format(printf, 4, 5))) static void output_field(const char *indent, int width, const char *label,
                                                               const char *fmt, ...) {
        int pad = width - (int) strlen(indent) - (int) strlen(label);
        va_list ap;

        printf("%s%s%*s", indent, label, pad > 1 ? pad : 1, "");
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        putchar('\n');
}

/* A string field of o escaped for the terminal (quoted when quote), "-" when null or absent. */
static const char *output_field_string(struct json_object *o, const char *key, bool quote, char *buf, size_t n) {
        return output_escape(output_get_string(o, key, NULL), quote, buf, n);
}

void output_identity_text(struct json_object *identity, const char *indent, int width) {
        struct json_object *by_id = output_get_array(identity, "by_id");
        struct json_object *loop = output_get_object(identity, "loop");
        int64_t size = output_get_int_or(identity, "size_bytes", "size", -1);
        char a[512], b[64];

        width += (int) strlen(indent);
        output_field(indent, width, "Node:", "%s (%" PRId64 ":%" PRId64 ")",
                     output_field_string(identity, "node", false, a, sizeof(a)), output_get_int(identity, "major", -1),
                     output_get_int(identity, "minor", -1));
        if (size >= 0)
                output_field(indent, width, "Size:", "%s", output_size_exact(b, sizeof(b), (uint64_t) size));
        output_field(indent, width, "Sector size:", "%" PRId64 " bytes logical, %" PRId64 " bytes physical",
                     output_get_int(identity, "logical_sector", 0), output_get_int(identity, "physical_sector", 0));
        output_field(indent, width, "I/O size:", "minimum %" PRId64 ", optimal %" PRId64 ", alignment offset %" PRId64 " (bytes)",
                     output_get_int(identity, "minimum_io", 0), output_get_int(identity, "optimal_io", 0),
                     output_get_int(identity, "alignment_offset", 0));
        output_field(indent, width, "Rotational:", "%s", output_yes_no(identity, "rotational"));
        output_field(indent, width, "Removable:", "%s", output_yes_no(identity, "removable"));
        output_field(indent, width, "Read-only:", "%s", output_yes_no(identity, "read_only"));
        output_field(indent, width, "Transport:", "%s", output_field_string(identity, "transport", false, a, sizeof(a)));
        output_field(indent, width, "Vendor:", "%s", output_field_string(identity, "vendor", false, a, sizeof(a)));
        output_field(indent, width, "Model:", "%s", output_field_string(identity, "model", false, a, sizeof(a)));
        output_field(indent, width, "Serial:", "%s", output_field_string(identity, "serial", false, a, sizeof(a)));
        output_field(indent, width, "WWN:", "%s", output_field_string(identity, "wwn", false, a, sizeof(a)));
        if (output_array_length(by_id) == 0)
                output_field(indent, width, "By-id:", "-");
        for (size_t i = 0; i < output_array_length(by_id); i++)
                output_field(indent, width, i == 0 ? "By-id:" : "", "%s",
                             output_escape(json_object_get_string(json_object_array_get_idx(by_id, i)), false, a,
                                           sizeof(a)));
        if (loop)
                output_field(indent, width, "Loop file:", "%s (inode %" PRId64 " on %s)",
                             output_field_string(loop, "backing_file", false, a, sizeof(a)),
                             output_get_int(loop, "backing_inode", -1), output_get_string(loop, "backing_device", "?"));
}

/* 1 or 0 for a boolean field of o, -1 when it is null or absent (unknown). */
static int output_tristate(struct json_object *o, const char *key) {
        struct json_object *v = NULL;

        if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_boolean))
                return -1;
        return json_object_get_boolean(v);
}

/* A byte count in a sentence: IEC units, or "N bytes" with --bytes. */
static const char *output_bytes(char *buf, size_t n, int64_t bytes) {
        if (output_raw_bytes)
                snprintf(buf, n, "%" PRId64 " bytes", bytes);
        else
                output_size(buf, n, (uint64_t) bytes);
        return buf;
}

/* The ERASE object of a probe in two lines: what discard and write-zeroes offer, then secure
 * discard, which the kernel does not tell until it is tried (null):
 *   "discard (up to 1.00 GiB, granularity 4.00 KiB), write-zeroes not offloaded (zeroing writes)" */
static void output_erase_text(struct json_object *erase, const char *indent, int width) {
        struct json_object *discard = output_get_object(erase, "discard");
        struct json_object *zeroes = output_get_object(erase, "write_zeroes");
        int64_t max, granularity, unmap;
        char buf[512], a[64];
        size_t l = 0;

        buf[0] = '\0';
        switch (output_tristate(discard, "supported")) {
        case 1:
                max = output_get_int(discard, "max_bytes", -1);
                granularity = output_get_int(discard, "granularity", -1);
                output_append(buf, sizeof(buf), &l, "discard (");
                if (max > 0)
                        output_append(buf, sizeof(buf), &l, "up to %s", output_bytes(a, sizeof(a), max));
                if (granularity > 0)
                        output_append(buf, sizeof(buf), &l, "%sgranularity %s", max > 0 ? ", " : "",
                                      output_bytes(a, sizeof(a), granularity));
                output_append(buf, sizeof(buf), &l, ")");
                break;
        case 0:
                output_append(buf, sizeof(buf), &l, "no discard");
                break;
        default:
                output_append(buf, sizeof(buf), &l, "discard unknown");
        }
        output_append(buf, sizeof(buf), &l, ", ");
        switch (output_tristate(zeroes, "offloaded")) {
        case 1:
                max = output_get_int(zeroes, "max_bytes", -1);
                unmap = output_get_int(zeroes, "unmap_max_bytes", -1);
                output_append(buf, sizeof(buf), &l, "write-zeroes (up to %s", output_bytes(a, sizeof(a), max));
                if (unmap > 0)
                        output_append(buf, sizeof(buf), &l, ", by unmapping up to %s", output_bytes(a, sizeof(a), unmap));
                output_append(buf, sizeof(buf), &l, ")");
                break;
        case 0:
                /* BLKZEROOUT still works: the kernel writes zero pages. */
                output_append(buf, sizeof(buf), &l, "write-zeroes not offloaded (zeroing writes)");
                break;
        default:
                output_append(buf, sizeof(buf), &l, "write-zeroes unknown");
        }
        width += (int) strlen(indent);
        output_field(indent, width, "Erase offloads:", "%s", buf);
        switch (output_tristate(erase, "secure_discard")) {
        case 1:
                output_field(indent, width, "", "secure discard");
                break;
        case 0:
                output_field(indent, width, "", "no secure discard");
                break;
        default:
                output_field(indent, width, "", "secure discard unknown until tried");
        }
}

/* A list of what a feature set offers, from boolean fields: "crypto erase, block erase" or none. */
static void output_flags(char *buf, size_t n, size_t *l, struct json_object *o, const char *const *keys,
                         const char *const *names, size_t count) {
        bool any = false;

        for (size_t i = 0; i < count; i++)
                if (output_tristate(o, keys[i]) == 1) {
                        output_append(buf, n, l, "%s%s", any ? ", " : "", names[i]);
                        any = true;
                }
        if (!any)
                output_append(buf, n, l, "none");
}

/* " (about 2 min)": a drive's estimate in seconds, when it gives one. */
static void output_estimate(char *buf, size_t n, size_t *l, struct json_object *o, const char *key) {
        int64_t s = output_get_int(o, key, -1);
        char d[64];

        if (s >= 0)
                output_append(buf, n, l, " (about %s)", units_duration(d, sizeof(d), s));
}

static void output_firmware_nvme(struct json_object *nvme, const char *indent, int width) {
        static const char *const san_keys[] = { "crypto", "block", "overwrite" };
        static const char *const san_names[] = { "crypto erase", "block erase", "overwrite" };
        struct json_object *san = output_get_object(nvme, "sanitize"), *fmt = output_get_object(nvme, "format");
        struct json_object *est = output_get_object(san, "estimates_s"), *ns = output_get_array(nvme, "namespaces");
        char buf[1024], a[256];
        size_t l = 0;

        output_append(buf, sizeof(buf), &l, "NVMe namespace %" PRId64, output_get_int(nvme, "nsid", 0));
        if (output_get_string(nvme, "controller", NULL))
                output_append(buf, sizeof(buf), &l, " of %s", output_field_string(nvme, "controller", false, a, sizeof(a)));
        if (output_array_length(ns) > 0) {
                output_append(buf, sizeof(buf), &l, " (namespaces:");
                for (size_t i = 0; i < output_array_length(ns); i++)
                        output_append(buf, sizeof(buf), &l, " %s",
                                      output_escape(json_object_get_string(json_object_array_get_idx(ns, i)), false, a,
                                                    sizeof(a)));
                output_append(buf, sizeof(buf), &l, ")");
        }
        output_field(indent, width, "Firmware:", "%s", buf);
        l = 0;
        output_flags(buf, sizeof(buf), &l, san, san_keys, san_names, 3);
        if (output_tristate(san, "crypto") == 1)
                output_estimate(buf, sizeof(buf), &l, est, "crypto");
        if (output_get_string(san, "status", NULL))
                output_append(buf, sizeof(buf), &l, "; last sanitize: %s", output_get_string(san, "status", ""));
        if (output_get_int(san, "progress_percent", -1) >= 0)
                output_append(buf, sizeof(buf), &l, " (%" PRId64 "%%)", output_get_int(san, "progress_percent", 0));
        output_field(indent, width, "  Sanitize:", "%s", buf);
        l = 0;
        if (output_tristate(fmt, "supported") != 1)
                output_append(buf, sizeof(buf), &l, "not supported");
        else {
                output_append(buf, sizeof(buf), &l, "secure erase: user data%s",
                              output_tristate(fmt, "crypto_erase") == 1 ? ", crypto erase" : "");
                if (output_tristate(fmt, "all_namespaces") == 1 || output_tristate(fmt, "erase_all_namespaces") == 1)
                        output_append(buf, sizeof(buf), &l, "; acts on every namespace of the controller");
        }
        output_field(indent, width, "  Format NVM:", "%s", buf);
}

static void output_firmware_ata(struct json_object *ata, const char *indent, int width) {
        static const char *const san_keys[] = { "crypto", "block", "overwrite" };
        static const char *const san_names[] = { "crypto scramble", "block erase", "overwrite" };
        static const char *const state_keys[] = { "enabled", "locked", "frozen", "count_expired" };
        static const char *const state_names[] = { "password set", "locked", "frozen", "password attempts exhausted" };
        struct json_object *sec = output_get_object(ata, "security"), *san = output_get_object(ata, "sanitize");
        struct json_object *hid = output_get_object(ata, "hidden_area");
        char buf[1024];
        size_t l = 0;

        output_field(indent, width, "Firmware:", "ATA (through SCSI/ATA translation)");
        if (output_tristate(sec, "supported") != 1)
                output_append(buf, sizeof(buf), &l, "not supported");
        else {
                output_append(buf, sizeof(buf), &l, "%s", output_tristate(sec, "enhanced_erase") == 1 ?
                              "enhanced erase" : "normal erase");
                output_estimate(buf, sizeof(buf), &l, sec, output_tristate(sec, "enhanced_erase") == 1 ?
                                "enhanced_erase_time_s" : "erase_time_s");
                output_append(buf, sizeof(buf), &l, "; state: ");
                output_flags(buf, sizeof(buf), &l, sec, state_keys, state_names, 4);
                if (output_get_string(sec, "erase_refused", NULL))
                        output_append(buf, sizeof(buf), &l, "; refused: %s", output_get_string(sec, "erase_refused", ""));
        }
        output_field(indent, width, "  Security:", "%s", buf);
        l = 0;
        if (output_tristate(san, "supported") != 1)
                output_append(buf, sizeof(buf), &l, "not supported");
        else {
                output_flags(buf, sizeof(buf), &l, san, san_keys, san_names, 3);
                if (output_get_string(san, "refused", NULL))
                        output_append(buf, sizeof(buf), &l, "; refused: %s", output_get_string(san, "refused", ""));
        }
        output_field(indent, width, "  Sanitize:", "%s", buf);
        l = 0;
        if (output_get_int(hid, "native_max_sectors", -1) < 0)
                output_append(buf, sizeof(buf), &l, "native max not read (HPA %s, DCO %s)",
                              output_yes_no(hid, "hpa_supported"), output_yes_no(hid, "dco_supported"));
        else if (output_get_int(hid, "hidden_sectors", 0) > 0)
                output_append(buf, sizeof(buf), &l, "%" PRId64 " sectors hidden (native max %" PRId64 ", current %" PRId64 ")",
                              output_get_int(hid, "hidden_sectors", 0), output_get_int(hid, "native_max_sectors", 0),
                              output_get_int(hid, "current_max_sectors", 0));
        else
                output_append(buf, sizeof(buf), &l, "none (native max %" PRId64 " sectors)",
                              output_get_int(hid, "native_max_sectors", 0));
        output_field(indent, width, "  Hidden area:", "%s", buf);
}

static void output_firmware_scsi(struct json_object *scsi, const char *indent, int width) {
        static const char *const san_keys[] = { "crypto", "block", "overwrite" };
        static const char *const san_names[] = { "crypto erase", "block erase", "overwrite" };
        struct json_object *san = output_get_object(scsi, "sanitize");
        char buf[512];
        size_t l = 0;

        output_field(indent, width, "Firmware:", "SCSI");
        if (output_tristate(scsi, "report_supported_opcodes") != 1) {
                output_field(indent, width, "  Sanitize:", "unknown (the device does not report its commands)");
                return;
        }
        output_flags(buf, sizeof(buf), &l, san, san_keys, san_names, 3);
        output_field(indent, width, "  Sanitize:", "%s", buf);
        output_field(indent, width, "  Format unit:", "%s", output_yes_no(scsi, "format_unit"));
}

/* The FIRMWARE object of a probe: the command set and what it offers, or why none is sent. */
/* "  Methods:" the firmware methods this drive would run now ("purge = sanitize-crypto"), and
 * "  Purge:" what purge does when it has none. */
static void output_firmware_methods(struct json_object *methods, const char *indent, int width) {
        static const char *const names[] = { "sanitize-crypto", "sanitize-block", "sanitize-overwrite", "nvme-format",
                                             "ata-secure-erase" };
        char list[256] = "", a[512];
        size_t used = 0;

        if (!methods)
                return;
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (output_get_string(output_get_object(methods, names[i]), "command", NULL) && used < sizeof(list))
                        used += (size_t) snprintf(list + used, sizeof(list) - used, "%s%s", used ? ", " : "", names[i]);
        if (used)
                output_field(indent, width, "  Methods:", "%s; purge sends %s", list,
                             output_get_string(output_get_object(methods, "purge"), "command", "?"));
        else
                output_field(indent, width, "  Methods:", "none: purge writes its fallback (%s)",
                             output_field_string(output_get_object(methods, "purge"), "refused", false, a, sizeof(a)));
}

static void output_firmware_text(struct json_object *fw, const char *indent, int width) {
        const char *set = output_get_string(fw, "command_set", "none");
        char a[512];

        width += (int) strlen(indent);
        if (output_get_string(fw, "refused", NULL))
                output_field(indent, width, "Firmware:", "commands refused: %s",
                             output_field_string(fw, "refused", false, a, sizeof(a)));
        else if (strcmp(set, "nvme") == 0)
                output_firmware_nvme(output_get_object(fw, "nvme"), indent, width);
        else if (strcmp(set, "ata") == 0)
                output_firmware_ata(output_get_object(fw, "ata"), indent, width);
        else if (strcmp(set, "scsi") == 0)
                output_firmware_scsi(output_get_object(fw, "scsi"), indent, width);
        else
                output_field(indent, width, "Firmware:", "no erase commands reach it (neither NVMe nor SCSI/ATA pass-through)");
        if (output_get_string(fw, "error", NULL))
                output_field(indent, width, "  Not read:", "%s", output_field_string(fw, "error", false, a, sizeof(a)));
        output_firmware_methods(output_get_object(fw, "methods"), indent, width);
}

void output_signatures_text(struct json_object *signatures, const char *indent) {
        static const char *const header[] = { "TYPE", "USAGE", "OFFSET", "LABEL", "UUID" };
        static const bool right[] = { false, false, true, false, false };
        size_t n = output_array_length(json_object_is_type(signatures, json_type_array) ? signatures : NULL);
        struct output_table t = {};

        if (n == 0 || output_table_init(&t, header, right, 5, n) < 0) {
                output_table_done(&t);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                struct json_object *sig = json_object_array_get_idx(signatures, i);
                int64_t offset = output_get_int(sig, "offset", -1);

                output_field_string(sig, "type", false, output_table_cell(&t, i + 1, 0), OUTPUT_CELL);
                output_field_string(sig, "usage", false, output_table_cell(&t, i + 1, 1), OUTPUT_CELL);
                if (offset >= 0)
                        snprintf(output_table_cell(&t, i + 1, 2), OUTPUT_CELL, "%" PRId64, offset);
                else
                        snprintf(output_table_cell(&t, i + 1, 2), OUTPUT_CELL, "-");
                output_field_string(sig, "label", true, output_table_cell(&t, i + 1, 3), OUTPUT_CELL);
                output_field_string(sig, "uuid", false, output_table_cell(&t, i + 1, 4), OUTPUT_CELL);
        }
        output_table_print(&t, indent);
        output_table_done(&t);
}

/* A table of PART objects after indent. */
static void output_partitions_text(struct json_object *partitions, const char *indent) {
        static const char *const header[] = {
                "NR", "NODE", "START", "SIZE", "TYPE", "NAME", "FSTYPE", "LABEL", "UUID", "MOUNTPOINT",
        };
        static const bool right[] = { true, false, true, true, false, false, false, false, false, false };
        size_t n = output_array_length(partitions);
        struct output_table t = {};

        if (n == 0 || output_table_init(&t, header, right, 10, n) < 0) {
                output_table_done(&t);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                struct json_object *part = json_object_array_get_idx(partitions, i);
                struct json_object *fs = output_get_object(part, "filesystem");
                int64_t start = output_get_int(part, "start", -1), size = output_get_int(part, "size", -1);

                snprintf(output_table_cell(&t, i + 1, 0), OUTPUT_CELL, "%" PRId64, output_get_int(part, "number", -1));
                output_field_string(part, "node", false, output_table_cell(&t, i + 1, 1), OUTPUT_CELL);
                if (start >= 0)
                        output_size(output_table_cell(&t, i + 1, 2), OUTPUT_CELL, (uint64_t) start);
                else
                        snprintf(output_table_cell(&t, i + 1, 2), OUTPUT_CELL, "-");
                if (size >= 0)
                        output_size(output_table_cell(&t, i + 1, 3), OUTPUT_CELL, (uint64_t) size);
                else
                        snprintf(output_table_cell(&t, i + 1, 3), OUTPUT_CELL, "-");
                output_escape(output_part_type(output_get_string(part, "type", NULL)), false,
                              output_table_cell(&t, i + 1, 4), OUTPUT_CELL);
                output_field_string(part, "name", true, output_table_cell(&t, i + 1, 5), OUTPUT_CELL);
                output_field_string(fs, "type", false, output_table_cell(&t, i + 1, 6), OUTPUT_CELL);
                output_field_string(fs, "label", true, output_table_cell(&t, i + 1, 7), OUTPUT_CELL);
                output_field_string(fs, "uuid", false, output_table_cell(&t, i + 1, 8), OUTPUT_CELL);
                output_field_string(part, "mountpoint", false, output_table_cell(&t, i + 1, 9), OUTPUT_CELL);
        }
        output_table_print(&t, indent);
        output_table_done(&t);
}

/* Whether a PROBE object says its device may be wiped: "wipeable" is true. */
static bool output_probe_wipeable(struct json_object *probe) {
        struct json_object *v = NULL;

        return probe && json_object_object_get_ex(probe, "wipeable", &v) && json_object_is_type(v, json_type_boolean) &&
               json_object_get_boolean(v);
}

const char *output_refusal_line(struct json_object *probe, char *buf, size_t n) {
        struct json_object *refusal = output_get_object(probe, "refusal");
        const char *name = output_get_string(probe, "node", NULL);

        if (!name)
                name = output_get_string(probe, "path", "?");
        if (output_probe_wipeable(probe))
                return NULL;
        if (!refusal) {
                snprintf(buf, n, "%s: refusing: the daemon gave no reason", name);
                return buf;
        }
        output_escape(output_get_string(refusal, "message", NULL), false, buf, n);
        if (strcmp(buf, "-") == 0)
                snprintf(buf, n, "%s: refusing: %s", name, output_get_string(refusal, "code", "EUNKNOWN"));
        return buf;
}

/* The heading of one probe: the node, or the path when it did not resolve, and the verdict:
 * "/dev/loop3: wipeable", "/dev/loop3: not wipeable: refusing: is read-only (EROFS)". The
 * daemon's message names the device first; that is not said twice. */
static void output_probe_heading(struct json_object *probe) {
        const char *path = output_get_string(probe, "path", "?"), *node = output_get_string(probe, "node", NULL);
        struct json_object *refusal = output_get_object(probe, "refusal");
        const char *name = node ? node : path;
        char a[1024], b[1024];
        const char *message;
        size_t l;

        output_escape(name, false, a, sizeof(a));
        if (output_probe_wipeable(probe)) {
                printf("%s: wipeable\n", a);
                return;
        }
        output_refusal_line(probe, b, sizeof(b));
        message = b;
        l = strlen(a);
        if (strncmp(message, a, l) == 0 && message[l] == ':' && message[l + 1] == ' ')
                message += l + 2;
        else if ((l = strlen(path)) > 0 && strncmp(message, path, l) == 0 && message[l] == ':' && message[l + 1] == ' ')
                message += l + 2;
        printf("%s: not wipeable: %s (%s)\n", a, message, output_get_string(refusal, "code", "EUNKNOWN"));
}

/* One PROBE object: heading, then everything known about the device. */
static void output_probe_one(struct json_object *probe) {
        const char *path = output_get_string(probe, "path", NULL), *node = output_get_string(probe, "node", NULL);
        struct json_object *identity = output_get_object(probe, "identity");
        struct json_object *signatures = output_get_array(probe, "signatures");
        struct json_object *partitions = output_get_array(probe, "partitions");
        struct json_object *table = output_get_object(probe, "partition_table");
        char a[1024];

        output_probe_heading(probe);
        if (path && node && strcmp(path, node) != 0)
                output_field("  ", OUTPUT_PROBE_WIDTH, "Path:", "%s", output_escape(path, false, a, sizeof(a)));
        /* Not a block device, or missing: there is nothing more to tell. */
        if (!identity)
                return;
        output_identity_text(identity, "  ", OUTPUT_PROBE_WIDTH - 2);
        if (output_get_object(probe, "erase")) {
                output_erase_text(output_get_object(probe, "erase"), "  ", OUTPUT_PROBE_WIDTH - 2);
                if (output_get_object(output_get_object(probe, "erase"), "firmware"))
                        output_firmware_text(output_get_object(output_get_object(probe, "erase"), "firmware"), "  ",
                                             OUTPUT_PROBE_WIDTH - 2);
        }
        output_smart_probe(probe, "  ", OUTPUT_PROBE_WIDTH);
        if (output_array_length(signatures) == 0)
                output_field("  ", OUTPUT_PROBE_WIDTH, "Signatures:", "none found");
        else {
                printf("  Signatures:\n");
                output_signatures_text(signatures, "    ");
        }
        if (!table)
                output_field("  ", OUTPUT_PROBE_WIDTH, "Partition table:", "none");
        else {
                const char *uuid = output_get_string(table, "uuid", NULL);
                char b[256];

                output_field("  ", OUTPUT_PROBE_WIDTH, "Partition table:", "%s%s%s%s",
                             output_field_string(table, "type", false, a, sizeof(a)), uuid ? " (UUID " : "",
                             uuid ? output_escape(uuid, false, b, sizeof(b)) : "", uuid ? ")" : "");
        }
        if (output_array_length(partitions) > 0) {
                printf("  Partitions:\n");
                output_partitions_text(partitions, "    ");
        } else if (table)
                output_field("  ", OUTPUT_PROBE_WIDTH, "Partitions:", "none");
}

void output_probe_text(struct json_object *devices) {
        size_t n = devices && json_object_is_type(devices, json_type_array) ? json_object_array_length(devices) : 0;

        for (size_t i = 0; i < n; i++) {
                if (i > 0)
                        putchar('\n');
                output_probe_one(json_object_array_get_idx(devices, i));
        }
}

/* What a file system or signature is called in a summary: its type, and its label in quotes. */
static void output_append_content(char *buf, size_t n, size_t *l, struct json_object *o) {
        const char *label = output_get_string(o, "label", NULL);
        char a[256], b[256];

        output_append(buf, n, l, "%s", output_field_string(o, "type", false, a, sizeof(a)));
        if (label && *label)
                output_append(buf, n, l, " %s", output_escape(label, true, b, sizeof(b)));
}

/* What a device holds, in a few words: "gpt: 2 partitions (ext4 \"data\", swap)", "ext4 \"x\"",
 * or "no signatures found". Signatures other than the partition table's follow it. */
static void output_contents(struct json_object *probe, char *buf, size_t n, size_t *l) {
        struct json_object *table = output_get_object(probe, "partition_table");
        struct json_object *partitions = output_get_array(probe, "partitions");
        struct json_object *signatures = output_get_array(probe, "signatures");
        size_t np = output_array_length(partitions), shown = 0;
        char a[256];

        if (table) {
                output_append(buf, n, l, "%s: %zu partition%s", output_field_string(table, "type", false, a, sizeof(a)),
                              np, np == 1 ? "" : "s");
                for (size_t i = 0; i < np; i++) {
                        struct json_object *fs = output_get_object(json_object_array_get_idx(partitions, i), "filesystem");

                        output_append(buf, n, l, "%s", i == 0 ? " (" : ", ");
                        if (fs)
                                output_append_content(buf, n, l, fs);
                        else
                                output_append(buf, n, l, "no signature");
                }
                if (np > 0)
                        output_append(buf, n, l, ")");
                shown++;
        }
        for (size_t i = 0; i < output_array_length(signatures); i++) {
                struct json_object *sig = json_object_array_get_idx(signatures, i);

                /* The table itself (and its protective MBR) is already named. */
                if (table && strcmp(output_get_string(sig, "usage", ""), "partition_table") == 0)
                        continue;
                output_append(buf, n, l, "%s", shown++ ? ", " : "");
                output_append_content(buf, n, l, sig);
        }
        if (shown == 0)
                output_append(buf, n, l, "no signatures found");
}

const char *output_device_summary(struct json_object *probe, char *buf, size_t n) {
        const char *path = output_get_string(probe, "path", "?"), *node = output_get_string(probe, "node", NULL);
        struct json_object *identity = output_get_object(probe, "identity");
        struct json_object *loop = output_get_object(identity, "loop");
        const char *model = output_get_string(identity, "model", NULL);
        const char *serial = output_get_string(identity, "serial", NULL);
        int64_t size = output_get_int_or(identity, "size_bytes", "size", -1);
        char a[512];
        size_t l = 0;

        buf[0] = '\0';
        output_append(buf, n, &l, "%s", output_escape(node ? node : path, false, a, sizeof(a)));
        if (node && strcmp(node, path) != 0)
                output_append(buf, n, &l, " (%s)", output_escape(path, false, a, sizeof(a)));
        if (!identity) {
                output_append(buf, n, &l, ": unknown device");
                return buf;
        }
        output_append(buf, n, &l, ": %s", size >= 0 ? output_size(a, sizeof(a), (uint64_t) size) : "size unknown");
        if (model)
                output_append(buf, n, &l, ", %s", output_escape(model, false, a, sizeof(a)));
        if (serial)
                output_append(buf, n, &l, ", serial %s", output_escape(serial, false, a, sizeof(a)));
        if (loop)
                output_append(buf, n, &l, ", loop device over %s",
                              output_field_string(loop, "backing_file", false, a, sizeof(a)));
        if (!model && !serial && !loop)
                output_append(buf, n, &l, ", no model or serial");
        output_append(buf, n, &l, ", ");
        output_contents(probe, buf, n, &l);
        return buf;
}

const char *output_identity_short(struct json_object *identity, char *buf, size_t n) {
        struct json_object *loop = output_get_object(identity, "loop");
        const char *model = output_get_string(identity, "model", NULL);
        const char *serial = output_get_string(identity, "serial", NULL);
        char a[256], b[256];

        if (model && serial)
                snprintf(buf, n, "%s (%s)", output_escape(model, false, a, sizeof(a)),
                         output_escape(serial, false, b, sizeof(b)));
        else if (model || serial)
                snprintf(buf, n, "%s%s", serial ? "serial " : "", output_escape(model ? model : serial, false, a, sizeof(a)));
        else if (loop)
                snprintf(buf, n, "loop %s", output_field_string(loop, "backing_file", false, a, sizeof(a)));
        else
                snprintf(buf, n, "-");
        return buf;
}
