/* A main() for the fuzz targets of tests/fuzz/ without libFuzzer (tests/fuzz/README.md): it runs
 * LLVMFuzzerTestOneInput() once on every input named on the command line, a file or every file of
 * a directory (not its subdirectories, nor names starting with '.'), each in a buffer of exactly
 * its size so that AddressSanitizer sees a read past its end. With no argument, the target's seed
 * corpus: $top_srcdir/tests/fuzz/corpus-NAME for the program fuzz-NAME, as make check runs it.
 * A crash or an abort() of the target ends the program as it would any other; an input that
 * cannot be read, or no input at all, is a hard error (99, for automake's test driver). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#define EXIT_HARD_ERROR 99
#define INPUT_MAX (64u << 20)           /* bytes of one input; libFuzzer's inputs are far smaller */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Read the regular file path whole into a malloc'd buffer of exactly its size (1 byte for an
 * empty one). 0 with *ret and *size, or -errno. */
static int read_input(const char *path, uint8_t **ret, size_t *size) {
        struct stat st;
        uint8_t *buf;
        size_t len = 0;
        int fd, r = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                r = -errno;
        else if (!S_ISREG(st.st_mode))
                r = -EINVAL;
        else if ((uint64_t) st.st_size > INPUT_MAX)
                r = -EFBIG;
        if (r < 0) {
                close(fd);
                return r;
        }
        buf = malloc(st.st_size ? (size_t) st.st_size : 1);
        if (!buf) {
                close(fd);
                return -ENOMEM;
        }
        while (len < (size_t) st.st_size) {
                ssize_t n = read(fd, buf + len, (size_t) st.st_size - len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        r = n < 0 ? -errno : -EIO;      /* it shrank while being read */
                        break;
                }
                len += (size_t) n;
        }
        close(fd);
        if (r < 0) {
                free(buf);
                return r;
        }
        *ret = buf;
        *size = len;
        return 0;
}

/* Run the target on one file, named on stdout first (the last name in the log is the input
 * that crashed); 0, or -errno when it cannot be read (said on stderr). */
static int run_file(const char *path) {
        uint8_t *data = NULL;
        size_t size = 0;
        int r;

        r = read_input(path, &data, &size);
        if (r < 0) {
                fprintf(stderr, "%s: cannot read: %s\n", path, strerror(-r));
                return r;
        }
        printf("%s (%zu bytes)\n", path, size);
        fflush(stdout);
        (void) LLVMFuzzerTestOneInput(data, size);
        free(data);
        return 0;
}

static int cmp_names(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Run the target on path, a file or a directory's files in the order of their names (so that a
 * failure is the same one on every run). The number of inputs run, or -errno. */
static long run_path(const char *path) {
        struct dirent **names = NULL;
        struct stat st;
        long done = 0;
        int n, r = 0;

        if (stat(path, &st) < 0) {
                r = -errno;
                fprintf(stderr, "%s: %s\n", path, strerror(-r));
                return r;
        }
        if (!S_ISDIR(st.st_mode))
                return run_file(path) < 0 ? -EIO : 1;
        n = scandir(path, &names, NULL, NULL);
        if (n < 0) {
                r = -errno;
                fprintf(stderr, "%s: cannot read: %s\n", path, strerror(-r));
                return r;
        }
        /* scandir's alphasort follows the locale: strcmp does not. */
        qsort(names, (size_t) n, sizeof(*names), cmp_names);
        for (int i = 0; i < n; i++) {
                char file[PATH_MAX];
                struct stat fst;

                if (r == 0 && names[i]->d_name[0] != '.') {
                        if (snprintf(file, sizeof(file), "%s/%s", path, names[i]->d_name) >= (int) sizeof(file)) {
                                fprintf(stderr, "%s/%s: name too long\n", path, names[i]->d_name);
                                r = -ENAMETOOLONG;
                        } else if (stat(file, &fst) == 0 && S_ISDIR(fst.st_mode))
                                ;       /* libFuzzer does not descend either */
                        else if ((r = run_file(file)) == 0)
                                done++;
                }
                free(names[i]);
        }
        free(names);
        return r < 0 ? r : done;
}

int main(int argc, char **argv) {
        const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
        const char *top = getenv("top_srcdir");
        char corpus[PATH_MAX];
        char *seeds[] = { corpus };
        char **inputs = argv + 1;
        int n_inputs = argc - 1;
        long total = 0;

        if (n_inputs == 0) {
                /* make check: the seeds of this target. */
                if (strncmp(name, "fuzz-", 5) != 0 || !name[5]) {
                        fprintf(stderr, "usage: %s FILE|DIR...\n", name);
                        return EXIT_HARD_ERROR;
                }
                snprintf(corpus, sizeof(corpus), "%s/tests/fuzz/corpus-%s", top && top[0] ? top : ".", name + 5);
                inputs = seeds;
                n_inputs = 1;
        }
        for (int i = 0; i < n_inputs; i++) {
                long n = run_path(inputs[i]);

                if (n < 0)
                        return EXIT_HARD_ERROR;
                printf("%s: %ld input%s\n", inputs[i], n, n == 1 ? "" : "s");
                total += n;
        }
        if (total == 0) {
                fprintf(stderr, "%s: no input to run\n", name);
                return EXIT_HARD_ERROR;
        }
        return EXIT_SUCCESS;
}
