/* Wipe methods and pass patterns. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "method.h"

/* Gutmann's 35 passes: 4 random, the 27 patterns aimed at MFM/RLL encodings (in his table's
 * order, not shuffled, so that every pass can be verified), 4 random. */
#define GUTMANN_PATTERNS "0x55,0xaa,0x924924,0x492492,0x249249,zero,0x11,0x22,0x33,0x44,0x55,0x66,0x77," \
                         "0x88,0x99,0xaa,0xbb,0xcc,0xdd,0xee,one,0x924924,0x492492,0x249249,0x6db6db,0xb6db6d,0xdb6db6"

static const struct method methods[] = {
        { "random", "random",
          "One pass of a cryptographic keystream (AES-128-CTR or ChaCha20). NIST SP 800-88 Clear for "
          "magnetic and flash media; the default.", false },
        { "zero", "zero",
          "One pass of zeros. As effective as random against reading the data back; random hides "
          "which sectors were wiped.", false },
        { "random-zero", "random,zero",
          "A random pass, then zeros, so that the drive reads back blank.", false },
        { "zeroout", "zeroout",
          "The block layer's write-zeroes (BLKZEROOUT): the drive zeroes the blocks itself where it "
          "can (SCSI WRITE SAME, NVMe Write Zeroes), else the kernel writes zeros. Reads back as zeros; "
          "NIST SP 800-88 Clear, like a zero pass.", false },
        { "discard", "discard",
          "Discard (TRIM/UNMAP/Deallocate, BLKDISCARD) every block. Fast on flash, but what a "
          "discarded block reads back as is up to the drive: verification expects zeros and fails "
          "where the drive returns anything else. Not a sanitization on its own.", false },
        { "secure-discard", "secure-discard",
          "Secure discard (BLKSECDISCARD): the drive erases the blocks and every copy of them; "
          "eMMC and a few others offer it. The job fails at once where the device does not.", false },
        { "sanitize", "sanitize",
          "The drive's own sanitize (NVMe Sanitize, ATA SANITIZE, SCSI SANITIZE), the strongest it has: "
          "crypto erase, else block erase, else overwrite. Reaches remapped and spare blocks; NIST SP "
          "800-88 Purge. Acts on the whole drive (every NVMe namespace) and cannot be stopped once "
          "started.", false },
        { "sanitize-crypto", "sanitize-crypto",
          "Sanitize by cryptographic erase: the drive changes the key its media is encrypted with. "
          "Seconds on any size; NIST SP 800-88 Purge.", false },
        { "sanitize-block", "sanitize-block",
          "Sanitize by block erase: the drive erases every block of its media, spare ones included. "
          "NIST SP 800-88 Purge.", false },
        { "sanitize-overwrite", "sanitize-overwrite",
          "Sanitize by overwrite: the drive writes a pattern over all of its media, spare blocks "
          "included. NIST SP 800-88 Purge (mainly for disks with heads).", false },
        { "nvme-format", "nvme-format",
          "NVMe Format NVM with a secure erase setting: crypto erase where the drive supports it, "
          "else user data erase (never a format without one, which erases nothing). NIST SP 800-88 "
          "Purge.", false },
        { "ata-secure-erase", "ata-secure-erase",
          "ATA Security Erase Unit (enhanced where supported) with a temporary password that the "
          "daemon removes again, also after an interruption. NIST SP 800-88 Purge where the drive "
          "implements it fully.", false },
        { "purge", "purge",
          "The strongest firmware erase the drive supports (sanitize, then Format NVM, then ATA "
          "security erase); where it supports none, the configured fallback (a random pass by "
          "default), which the report names NIST SP 800-88 Clear, not Purge.", false },
        { "dod-3pass", "zero,one,random",
          "DoD 5220.22-M style: zeros, ones, random. Legacy: adds no security over one pass on "
          "modern drives (NIST SP 800-88).", true },
        { "schneier", "zero,one,random,random,random,random,random",
          "Bruce Schneier's seven passes: zeros, ones, five random. Legacy: adds no security over "
          "one pass on modern drives (NIST SP 800-88).", true },
        { "gutmann", "random,random,random,random," GUTMANN_PATTERNS ",random,random,random,random",
          "Peter Gutmann's 35 passes for 1990s MFM/RLL drives. Legacy: Gutmann himself says it is "
          "pointless on modern drives; adds no security over one pass (NIST SP 800-88).", true },
};

const struct method *method_table(size_t *n) {
        *n = sizeof(methods) / sizeof(methods[0]);
        return methods;
}

const struct method *method_find(const char *name) {
        for (size_t i = 0; name && i < sizeof(methods) / sizeof(methods[0]); i++)
                if (strcmp(methods[i].name, name) == 0)
                        return &methods[i];
        return NULL;
}

static int hexval(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        c |= 0x20;
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

/* The erase commands' passes, by name. */
static const struct {
        const char *name;
        enum pass_op op;
} pass_ops[] = {
        { "zeroout", PASS_OP_ZEROOUT },
        { "discard", PASS_OP_DISCARD },
        { "secure-discard", PASS_OP_SECURE_DISCARD },
        { "sanitize", PASS_OP_SANITIZE },
        { "sanitize-crypto", PASS_OP_SANITIZE_CRYPTO },
        { "sanitize-block", PASS_OP_SANITIZE_BLOCK },
        { "sanitize-overwrite", PASS_OP_SANITIZE_OVERWRITE },
        { "nvme-format", PASS_OP_NVME_FORMAT },
        { "ata-secure-erase", PASS_OP_ATA_SECURE_ERASE },
        { "purge", PASS_OP_PURGE },
};

const char *pass_op_command(enum pass_op op) {
        switch (op) {
        case PASS_OP_ZEROOUT:
                return "BLKZEROOUT";
        case PASS_OP_DISCARD:
                return "BLKDISCARD";
        case PASS_OP_SECURE_DISCARD:
                return "BLKSECDISCARD";
        case PASS_OP_WRITE:
        default:                        /* a firmware erase: firmware.h names its command */
                break;
        }
        return NULL;
}

int pass_parse(const char *s, struct pass *ret) {
        struct pass p = { .kind = PASS_PATTERN };
        size_t len;

        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < sizeof(pass_ops) / sizeof(pass_ops[0]); i++)
                if (strcmp(s, pass_ops[i].name) == 0) {
                        /* What the command leaves is checked as zeros. */
                        p.op = pass_ops[i].op;
                        p.pattern_len = 1;
                        *ret = p;
                        return 0;
                }
        if (strcmp(s, "random") == 0) {
                *ret = (struct pass) { .kind = PASS_RANDOM };
                return 0;
        }
        if (strcmp(s, "zero") == 0) {
                p.pattern[0] = 0x00;
                p.pattern_len = 1;
                *ret = p;
                return 0;
        }
        if (strcmp(s, "one") == 0) {
                p.pattern[0] = 0xff;
                p.pattern_len = 1;
                *ret = p;
                return 0;
        }
        if (strncasecmp(s, "0x", 2) != 0)
                return -EINVAL;
        s += 2;
        len = strlen(s);
        if (len == 0 || len % 2 != 0 || len / 2 > METHOD_PATTERN_MAX)
                return -EINVAL;
        for (size_t i = 0; i < len; i += 2) {
                int hi = hexval(s[i]), lo = hexval(s[i + 1]);

                if (hi < 0 || lo < 0)
                        return -EINVAL;
                p.pattern[i / 2] = (uint8_t) (hi << 4 | lo);
        }
        p.pattern_len = (uint8_t) (len / 2);
        *ret = p;
        return 0;
}

char *pass_name(const struct pass *p, char *buf, size_t n) {
        size_t o;

        for (size_t i = 0; p->op != PASS_OP_WRITE && i < sizeof(pass_ops) / sizeof(pass_ops[0]); i++)
                if (pass_ops[i].op == p->op) {
                        snprintf(buf, n, "%s", pass_ops[i].name);
                        return buf;
                }
        if (p->kind == PASS_RANDOM)
                snprintf(buf, n, "random");
        else if (p->pattern_len == 1 && p->pattern[0] == 0x00)
                snprintf(buf, n, "zero");
        else if (p->pattern_len == 1 && p->pattern[0] == 0xff)
                snprintf(buf, n, "one");
        else {
                o = (size_t) snprintf(buf, n, "0x");
                for (unsigned i = 0; i < p->pattern_len && o + 2 < n; i++)
                        o += (size_t) snprintf(buf + o, n - o, "%02x", p->pattern[i]);
        }
        return buf;
}

int pass_list_parse(const char *list, struct pass **ret, size_t *n_ret) {
        struct pass *v;
        char *copy;
        size_t n = 0;
        int r = 0;

        if (!list || !*list)
                return -EINVAL;
        copy = strdup(list);
        v = calloc(METHOD_PASSES_MAX, sizeof(*v));
        if (!copy || !v) {
                free(copy);
                free(v);
                return -ENOMEM;
        }
        /* strtok_r would skip empty items; an empty item is an error. */
        for (char *p = copy, *comma;; p = comma + 1) {
                comma = strchr(p, ',');
                if (comma)
                        *comma = '\0';
                if (n == METHOD_PASSES_MAX || pass_parse(p, &v[n]) < 0) {
                        r = -EINVAL;
                        break;
                }
                n++;
                if (!comma)
                        break;
        }
        free(copy);
        if (r < 0) {
                free(v);
                return r;
        }
        *ret = v;
        *n_ret = n;
        return 0;
}

void pattern_fill(const struct pass *p, void *buf, uint64_t offset, size_t len) {
        uint8_t *b = buf;
        size_t k = p->pattern_len, done;

        if (k == 1) {
                memset(b, p->pattern[0], len);
                return;
        }
        /* One period at the right phase, then double what is there. */
        for (done = 0; done < len && done < k; done++)
                b[done] = p->pattern[(offset + done) % k];
        while (done < len) {
                size_t c = done < len - done ? done : len - done;

                /* Copy a whole number of periods so that the phase carries on. */
                c -= c % k;
                if (c == 0)
                        c = len - done < k ? len - done : k;
                memcpy(b + done, b, c);
                done += c;
        }
}

/* Whether buf[0..len) holds the pattern of period k at device offset offset, given ref: at
 * least ref_len + k - 1 bytes of the pattern from phase 0, ref_len >= k. From any phase ph, ref + ph holds
 * ref_len bytes at that phase, and a whole number of periods later the phase is ph again: so the
 * data is compared, piece after piece, with the same reference bytes. */
static bool pattern_compare(const uint8_t *ref, size_t ref_len, size_t k, const uint8_t *buf, uint64_t offset,
                            size_t len) {
        size_t ph = (size_t) (offset % k), c = ref_len / k * k;

        for (size_t o = 0; o < len; o += c)
                if (memcmp(buf + o, ref + ph, len - o < c ? len - o : c) != 0)
                        return false;
        return true;
}

bool pattern_check(const struct pass *p, const void *buf, uint64_t offset, size_t len) {
        size_t k = p->pattern_len, n;
        uint8_t ref[4096 + METHOD_PATTERN_MAX];

        if (len == 0)
                return true;
        /* Lay out no more than the data needs: short checks (a sector) stay cheap. */
        n = len < sizeof(ref) - METHOD_PATTERN_MAX ? len : sizeof(ref) - METHOD_PATTERN_MAX;
        if (n < k)
                n = k;
        pattern_fill(p, ref, 0, n + k - 1);
        return pattern_compare(ref, n, k, buf, offset, len);
}

void pattern_ref_set(struct pattern_ref *ref, const struct pass *p) {
        if (p->kind != PASS_PATTERN || p->pattern_len == 0) {
                ref->pass.pattern_len = 0;
                return;
        }
        if (ref->pass.pattern_len == p->pattern_len && p->pattern_len > 0 &&
            memcmp(ref->pass.pattern, p->pattern, p->pattern_len) == 0)
                return;
        ref->pass = *p;
        pattern_fill(p, ref->bytes, 0, sizeof(ref->bytes));
}

bool pattern_ref_check(const struct pattern_ref *ref, const void *buf, uint64_t offset, size_t len) {
        if (ref->pass.pattern_len == 0)
                return false;           /* holds no pattern: nothing matches it */
        return pattern_compare(ref->bytes, PATTERN_REF_SIZE, ref->pass.pattern_len, buf, offset, len);
}
