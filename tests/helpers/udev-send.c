/* udev-send ACTION NAME MAJOR:MINOR: send one block disk event in udev's own netlink format (the
 * "libudev" header, group 2), as udevd does after its rules ran, for a test on a machine without
 * udev: what libsystemd's sd-device monitor receives (tests/integration/policies.sh, the bay
 * policies' policy-events = udev). Root only (sending to a netlink group needs CAP_NET_ADMIN). The
 * test names only its own loop device. Exit 0 sent, 1 failed, 2 usage. */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <sys/socket.h>

#define UDEV_MONITOR_MAGIC 0xfeedcafe
#define UDEV_GROUP 2

/* The header udev puts before the properties (systemd's monitor_netlink_header). */
struct udev_header {
        char prefix[8];                 /* "libudev" */
        uint32_t magic;                 /* big-endian UDEV_MONITOR_MAGIC */
        uint32_t header_size;
        uint32_t properties_off;
        uint32_t properties_len;
        uint32_t filter_subsystem_hash; /* big-endian MurmurHash2 of the subsystem: the monitor's */
        uint32_t filter_devtype_hash;   /* socket filter compares them */
        uint32_t filter_tag_bloom_hi, filter_tag_bloom_lo;
};

/* MurmurHash2 (Austin Appleby's, seed 0), as udev hashes the subsystem and the device type. */
static uint32_t murmur2(const char *s) {
        const uint32_t m = 0x5bd1e995;
        size_t len = strlen(s);
        uint32_t h = (uint32_t) len;
        const unsigned char *p = (const unsigned char *) s;

        while (len >= 4) {
                uint32_t k = (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;

                k *= m;
                k ^= k >> 24;
                k *= m;
                h *= m;
                h ^= k;
                p += 4;
                len -= 4;
        }
        switch (len) {
        case 3:
                h ^= (uint32_t) p[2] << 16;
                /* fall through */
        case 2:
                h ^= (uint32_t) p[1] << 8;
                /* fall through */
        case 1:
                h ^= p[0];
                h *= m;
        }
        h ^= h >> 13;
        h *= m;
        h ^= h >> 15;
        return h;
}

int main(int argc, char **argv) {
        char props[1024];
        struct udev_header hdr = { .prefix = "libudev" };
        struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_groups = UDEV_GROUP };
        struct iovec iov[2];
        struct msghdr mh = { .msg_name = &to, .msg_namelen = sizeof(to), .msg_iov = iov, .msg_iovlen = 2 };
        unsigned maj, min;
        int n = 0, fd;

        if (argc != 4 || sscanf(argv[3], "%u:%u", &maj, &min) != 2 || strchr(argv[2], '/')) {
                fprintf(stderr, "usage: udev-send add|change|remove NAME MAJOR:MINOR\n");
                return 2;
        }
        /* NUL-separated KEY=VALUE, as udev sends them. */
#define PROP(...) n += snprintf(props + n, sizeof(props) - (size_t) n, __VA_ARGS__) + 1
        PROP("ACTION=%s", argv[1]);
        PROP("DEVPATH=/devices/virtual/block/%s", argv[2]);
        PROP("SUBSYSTEM=block");
        PROP("DEVTYPE=disk");
        PROP("DEVNAME=/dev/%s", argv[2]);
        PROP("MAJOR=%u", maj);
        PROP("MINOR=%u", min);
        PROP("SEQNUM=%ld", (long) getpid());
#undef PROP
        if ((size_t) n >= sizeof(props)) {
                fprintf(stderr, "udev-send: name too long\n");
                return 2;
        }
        hdr.magic = htobe32(UDEV_MONITOR_MAGIC);
        hdr.header_size = sizeof(hdr);
        hdr.properties_off = sizeof(hdr);
        hdr.properties_len = (uint32_t) n;
        hdr.filter_subsystem_hash = htobe32(murmur2("block"));
        hdr.filter_devtype_hash = htobe32(murmur2("disk"));
        iov[0] = (struct iovec) { .iov_base = &hdr, .iov_len = sizeof(hdr) };
        iov[1] = (struct iovec) { .iov_base = props, .iov_len = (size_t) n };
        fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
        if (fd < 0) {
                fprintf(stderr, "udev-send: socket: %s\n", strerror(errno));
                return 1;
        }
        /* Nobody listening to the group is no error (ECONNREFUSED), as for udevd. */
        if (sendmsg(fd, &mh, 0) < 0 && errno != ECONNREFUSED) {
                fprintf(stderr, "udev-send: sendmsg: %s\n", strerror(errno));
                close(fd);
                return 1;
        }
        close(fd);
        return 0;
}
