/* keystream-speed: how fast one core makes wiped's keystream with each backend, the way a worker
 * makes it (keystream_fill() straight into a 1 MiB buffer, sequential offsets), for comparison
 * with `openssl speed -evp CIPHER` on the same machine, and which backend the daemon's measurement
 * would choose. Run by tests/bench/bench.sh, whose random pass target is the keystream's own cost.
 *
 *   keystream-speed [SECONDS] [BUFFER]     (defaults: 2 s, 1M)
 *
 * Prints one line per cipher and backend, "aes-128-ctr gcrypt 21432.0 MB/s" (10^6 bytes per
 * second of the thread's own CPU time, so that a busy machine does not make it look slower; best
 * of three runs of SECONDS/3 each; a backend that cannot make a cipher here is left out), then one
 * line per cipher with the backend the daemon would choose by its own (shorter, wall-clock)
 * measurement: "chosen aes-128-ctr gcrypt". */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "keystream.h"
#include "units.h"

/* CPU seconds of this thread. */
static double now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static int measure(enum keystream_cipher c, enum keystream_backend b, void *buf, size_t len, double seconds,
                   double *mbps) {
        uint8_t key[KEYSTREAM_KEY_MAX];
        struct keystream *ks;
        int r;

        for (size_t i = 0; i < sizeof(key); i++)
                key[i] = (uint8_t) (i * 37 + 11);
        r = keystream_new_backend(&ks, c, b, key, keystream_key_size(c));
        if (r < 0)
                return r;
        *mbps = 0;
        for (int run = 0; run < 3; run++) {
                uint64_t off = (uint64_t) run << 40, bytes = 0;
                double t0 = now(), t;

                do {
                        r = keystream_fill(ks, buf, off, len);
                        if (r < 0)
                                break;
                        off += len;
                        bytes += len;
                        t = now();
                } while (t - t0 < seconds / 3);
                if (r < 0)
                        break;
                if (bytes / (t - t0) / 1e6 > *mbps)
                        *mbps = (double) bytes / (t - t0) / 1e6;
        }
        keystream_free(ks);
        return r;
}

int main(int argc, char **argv) {
        double seconds = argc > 1 ? strtod(argv[1], NULL) : 2.0;
        uint64_t len = 1u << 20;
        void *buf;

        if (argc > 2 && (units_parse_size(argv[2], &len) < 0 || len == 0 || len > (256u << 20))) {
                fprintf(stderr, "keystream-speed: %s: bad buffer size\n", argv[2]);
                return 2;
        }
        if (!(seconds > 0)) {
                fprintf(stderr, "keystream-speed: bad duration\n");
                return 2;
        }
        buf = aligned_alloc(4096, (len + 4095) / 4096 * 4096);
        if (!buf)
                return 1;
        for (enum keystream_cipher c = KEYSTREAM_AES_128_CTR; c < _KEYSTREAM_CIPHER_MAX; c++)
                for (enum keystream_backend b = KEYSTREAM_BACKEND_OPENSSL; b < _KEYSTREAM_BACKEND_MAX; b++) {
                        double mbps;
                        int r;

                        if (!keystream_backend_available(b, c))
                                continue;
                        r = measure(c, b, buf, len, seconds, &mbps);
                        if (r < 0) {
                                fprintf(stderr, "keystream-speed: %s with %s: %s\n", keystream_cipher_name(c),
                                        keystream_backend_name(b), strerror(-r));
                                free(buf);
                                return 1;
                        }
                        printf("%s %s %.1f MB/s\n", keystream_cipher_name(c), keystream_backend_name(b), mbps);
                }
        for (enum keystream_cipher c = KEYSTREAM_AES_128_CTR; c < _KEYSTREAM_CIPHER_MAX; c++) {
                struct keystream_choice ch;
                int r = keystream_backend_choose(c, KEYSTREAM_BACKEND_AUTO, KEYSTREAM_CHOOSE_BYTES, &ch);

                if (r < 0) {
                        fprintf(stderr, "keystream-speed: choosing for %s: %s\n", keystream_cipher_name(c),
                                strerror(-r));
                        free(buf);
                        return 1;
                }
                printf("chosen %s %s\n", keystream_cipher_name(c), keystream_backend_name(ch.backend));
        }
        free(buf);
        return 0;
}
