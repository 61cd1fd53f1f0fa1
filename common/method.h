/* Wipe methods: what each pass writes. One table of named methods; passes are "random" (the
 * keystream), "zero", "one" (0xFF) or "0x" and 2k hex digits, a k-byte pattern repeated over the
 * device from offset 0 (byte o holds pattern[o % k]), so any range can be checked alone.
 *
 * Three passes write nothing themselves but ask the block layer to erase: "zeroout"
 * (BLKZEROOUT: the device's write-zeroes command where it has one, else the kernel writes zero
 * pages), "discard" (BLKDISCARD) and "secure-discard" (BLKSECDISCARD). Each is a zero pattern
 * with an op: what they leave is checked as zeros, so verification, resume checks and reports
 * treat them as the zero pass they should read back as. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define METHOD_PATTERN_MAX 32           /* bytes in a pattern */
#define METHOD_PASSES_MAX 64            /* passes in one job */

enum pass_kind {
        PASS_RANDOM,
        PASS_PATTERN,
};

/* How a pass reaches the device: written from buffers, or one of the block layer's erase
 * commands (then the pass is the zero pattern it reads back as). */
enum pass_op {
        PASS_OP_WRITE,
        PASS_OP_ZEROOUT,                /* BLKZEROOUT */
        PASS_OP_DISCARD,                /* BLKDISCARD */
        PASS_OP_SECURE_DISCARD,         /* BLKSECDISCARD */
        /* The drive's firmware erases itself: one command for the whole drive (daemon/firmware.h).
         * "sanitize" and "purge" name a choice that the daemon resolves at submit, from what the
         * drive can do, into one of the others (purge: or a random pass where it can do none). */
        PASS_OP_SANITIZE,               /* the strongest sanitize the drive has */
        PASS_OP_SANITIZE_CRYPTO,
        PASS_OP_SANITIZE_BLOCK,
        PASS_OP_SANITIZE_OVERWRITE,
        PASS_OP_NVME_FORMAT,            /* Format NVM with a secure erase setting */
        PASS_OP_ATA_SECURE_ERASE,       /* ATA SECURITY ERASE UNIT (enhanced where supported) */
        PASS_OP_PURGE,                  /* the strongest firmware erase, else the fallback */
};

struct pass {
        enum pass_kind kind;
        enum pass_op op;                /* PASS_OP_WRITE unless an erase command */
        uint8_t pattern[METHOD_PATTERN_MAX];
        uint8_t pattern_len;            /* 1..METHOD_PATTERN_MAX for PASS_PATTERN */
};

struct method {
        const char *name;
        const char *passes;             /* comma-separated pass list */
        const char *description;
        bool legacy;                    /* adds nothing over one pass on modern drives (NIST SP 800-88) */
};

/* Parse one pass ("random", "zero", "one", "0x55", "0x924924"; case-insensitive hex; "zeroout",
 * "discard", "secure-discard"; the firmware erases "sanitize", "sanitize-crypto", "sanitize-block",
 * "sanitize-overwrite", "nvme-format", "ata-secure-erase", "purge").
 * Returns 0 or -EINVAL. */
int pass_parse(const char *s, struct pass *ret);
/* Canonical name: "random", "zero", "one", "0x" and lower-case hex, or the erase command's name
 * ("zeroout", "discard", "secure-discard"). Returns buf. */
char *pass_name(const struct pass *p, char *buf, size_t n);
/* Whether the pass is a firmware erase (PASS_OP_SANITIZE and after): it writes nothing, reads back
 * as whatever the drive leaves, and is proven by markers instead of a pattern comparison. */
static inline bool pass_op_firmware(enum pass_op op) {
        return op >= PASS_OP_SANITIZE;
}
/* The ioctl an erase command's pass is ("BLKZEROOUT", "BLKDISCARD", "BLKSECDISCARD"), or NULL
 * for a pass that is written. */
const char *pass_op_command(enum pass_op op);
/* Parse a comma-separated list of 1..METHOD_PASSES_MAX passes into ret (malloc'd).
 * Returns 0, -EINVAL (a bad pass or count) or -ENOMEM. */
int pass_list_parse(const char *list, struct pass **ret, size_t *n);

/* The named methods, in display order. */
const struct method *method_table(size_t *n);
/* A method by name, or NULL. */
const struct method *method_find(const char *name);

/* Write the pattern bytes for device offsets [offset, offset+len) into buf. */
void pattern_fill(const struct pass *p, void *buf, uint64_t offset, size_t len);
/* Whether buf holds exactly the pattern bytes of [offset, offset+len). It lays out the pattern
 * anew on each call; to check much data against one pattern, use a struct pattern_ref. */
bool pattern_check(const struct pass *p, const void *buf, uint64_t offset, size_t len);

/* A pattern laid out once, so that checking data against it costs one memcmp pass however many
 * pieces the data comes in: a verifier keeps one per thread and sets it to the pass at hand. */
#define PATTERN_REF_SIZE (16u << 10)    /* compared at a time: small enough to stay in L1 */
struct pattern_ref {
        struct pass pass;               /* the pattern it holds; pattern_len 0: none yet */
        uint8_t bytes[PATTERN_REF_SIZE + METHOD_PATTERN_MAX]; /* the pattern from phase 0 */
};

/* Make ref hold the pattern of p (a PASS_PATTERN pass), unless it holds it already (compared by
 * content, so any pass with the same pattern shares it). A zeroed struct holds none. */
void pattern_ref_set(struct pattern_ref *ref, const struct pass *p);
/* Whether buf holds exactly the bytes of ref's pattern at device offsets [offset, offset+len). */
bool pattern_ref_check(const struct pattern_ref *ref, const void *buf, uint64_t offset, size_t len);
