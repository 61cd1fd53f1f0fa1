/* hold-excl PATH: open PATH read-only and exclusively (O_EXCL: for a block device, a claim that
 * makes every other exclusive open fail with EBUSY), print "held" and sleep until killed.
 * The integration tests use it to stand in for "another program has this device". */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char *argv[]) {
        int fd;

        if (argc != 2) {
                fprintf(stderr, "usage: hold-excl PATH\n");
                return 2;
        }
        fd = open(argv[1], O_RDONLY | O_EXCL | O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "hold-excl: %s: %s\n", argv[1], strerror(errno));
                return 1;
        }
        printf("held\n");
        fflush(stdout);
        for (;;)
                pause();
}
