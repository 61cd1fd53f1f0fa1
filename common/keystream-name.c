/* The names of keystream.h: ciphers and backends, the configuration's backend setting, and which
 * cipher "auto" means on this CPU. Apart from keystream.c, so that a program that only names
 * ciphers (wipectl) links neither cipher library for them. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#include <asm/hwcap.h>
#endif

#include "keystream.h"

static const char *const cipher_names[_KEYSTREAM_CIPHER_MAX] = {
        [KEYSTREAM_AUTO] = "auto",
        [KEYSTREAM_AES_128_CTR] = "aes-128-ctr",
        [KEYSTREAM_CHACHA20] = "chacha20",
};

static const char *const backend_names[_KEYSTREAM_BACKEND_MAX] = {
        [KEYSTREAM_BACKEND_AUTO] = "auto",
        [KEYSTREAM_BACKEND_OPENSSL] = "openssl",
        [KEYSTREAM_BACKEND_GCRYPT] = "gcrypt",
};

/* The index of name in names[0..n): 0..n-1, or -EINVAL. */
static int name_index(const char *const *names, unsigned n, const char *name) {
        if (!name)
                return -EINVAL;
        for (unsigned i = 0; i < n; i++)
                if (strcmp(name, names[i]) == 0)
                        return (int) i;
        return -EINVAL;
}

const char *keystream_cipher_name(enum keystream_cipher c) {
        if ((unsigned) c >= _KEYSTREAM_CIPHER_MAX)
                return NULL;
        return cipher_names[c];
}

int keystream_cipher_from_name(const char *name, enum keystream_cipher *ret) {
        int i = name_index(cipher_names, _KEYSTREAM_CIPHER_MAX, name);

        if (i < 0 || !ret)
                return -EINVAL;
        *ret = (enum keystream_cipher) i;
        return 0;
}

static bool cpu_has_aes(void) {
#if defined(__x86_64__) || defined(__i386__)
        unsigned a, b, c, d;

        if (!__get_cpuid(1, &a, &b, &c, &d))
                return false;
        return c & bit_AES;
#elif defined(__aarch64__) && defined(HWCAP_AES)
        return getauxval(AT_HWCAP) & HWCAP_AES;
#else
        return false;
#endif
}

enum keystream_cipher keystream_cipher_resolve(enum keystream_cipher c) {
        if (c != KEYSTREAM_AUTO)
                return c;
        return cpu_has_aes() ? KEYSTREAM_AES_128_CTR : KEYSTREAM_CHACHA20;
}

size_t keystream_key_size(enum keystream_cipher c) {
        switch (c) {
        case KEYSTREAM_AES_128_CTR:
                return 16;
        case KEYSTREAM_CHACHA20:
                return 32;
        default:
                return 0;
        }
}

const char *keystream_backend_name(enum keystream_backend b) {
        if ((unsigned) b >= _KEYSTREAM_BACKEND_MAX)
                return NULL;
        return backend_names[b];
}

int keystream_backend_from_name(const char *name, enum keystream_backend *ret) {
        int i = name_index(backend_names, _KEYSTREAM_BACKEND_MAX, name);

        if (i < 0 || !ret)
                return -EINVAL;
        *ret = (enum keystream_backend) i;
        return 0;
}

int keystream_backend_spec_parse(const char *spec, enum keystream_backend want[_KEYSTREAM_CIPHER_MAX]) {
        enum keystream_backend out[_KEYSTREAM_CIPHER_MAX] = {};
        bool named[_KEYSTREAM_CIPHER_MAX] = {};
        const char *p = spec;

        if (!spec || !want)
                return -EINVAL;
        if (!strchr(spec, ':')) {
                enum keystream_backend b;

                if (keystream_backend_from_name(spec, &b) < 0)
                        return -EINVAL;
                for (unsigned c = 0; c < _KEYSTREAM_CIPHER_MAX; c++)
                        want[c] = b;
                return 0;
        }
        for (;;) {
                size_t n = strcspn(p, ","), cn;
                const char *colon = memchr(p, ':', n);
                char cname[32], bname[32];
                enum keystream_cipher c;
                enum keystream_backend b;

                if (!colon)
                        return -EINVAL;
                cn = (size_t) (colon - p);
                if (cn == 0 || cn >= sizeof(cname) || n - cn - 1 == 0 || n - cn - 1 >= sizeof(bname))
                        return -EINVAL;
                memcpy(cname, p, cn);
                cname[cn] = '\0';
                memcpy(bname, colon + 1, n - cn - 1);
                bname[n - cn - 1] = '\0';
                if (keystream_cipher_from_name(cname, &c) < 0 || c == KEYSTREAM_AUTO || named[c] ||
                    keystream_backend_from_name(bname, &b) < 0)
                        return -EINVAL;
                named[c] = true;
                out[c] = b;
                if (p[n] == '\0')
                        break;
                p += n + 1;
        }
        memcpy(want, out, sizeof(out));
        return 0;
}
