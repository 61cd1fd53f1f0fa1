/* Block device events for the bay policies, without polling. Where udev runs, its monitor
 * (libsystemd's sd-device): its events come after udev's rules ran, so the /dev/disk links a
 * policy matches exist. Elsewhere (a container, an initramfs without udev) the kernel's own
 * broadcast on a NETLINK_KOBJECT_UEVENT socket. Both give one fd to poll, and events of whole
 * disks only. Main thread only. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <systemd/sd-device.h>
#include <systemd/sd-event.h>

#include "daemon.h"

#define UEVENT_BUFFER (128u << 10)      /* bytes one event may take (the kernel's are under 8K) */
#define UEVENT_RCVBUF (4u << 20)        /* socket buffer: a rack's worth of events at once */
#define UEVENT_QUEUE_MAX 256            /* udev events taken from the monitor, not yet received */

static struct {
        int fd;                         /* the kernel's socket, or -1 */
        sd_event *event;                /* udev: the loop the monitor is attached to */
        sd_device_monitor *monitor;
        struct uevent queue[UEVENT_QUEUE_MAX];  /* udev: events the monitor handed over */
        unsigned head, n;
        bool overflow;
} ue = { .fd = -1 };

static bool udev_running(void) {
        return access("/run/udev/control", F_OK) == 0;
}

static int uevent_action_of(const char *s, enum uevent_action *ret) {
        if (strcmp(s, "add") == 0)
                *ret = UEVENT_ADD;
        else if (strcmp(s, "change") == 0)
                *ret = UEVENT_CHANGE;
        else if (strcmp(s, "remove") == 0)
                *ret = UEVENT_REMOVE;
        else
                return -EINVAL;
        return 0;
}

/* udev's monitor calls this from sd_event_dispatch(): the event joins the queue. */
static int uevent_udev_handler(sd_device_monitor *m, sd_device *dev, void *userdata) {
        const char *action = NULL, *devtype = NULL, *sysname = NULL;
        struct uevent *ev;
        dev_t devno;

        (void) m;
        (void) userdata;
        if (sd_device_get_property_value(dev, "ACTION", &action) < 0 ||
            sd_device_get_devtype(dev, &devtype) < 0 || strcmp(devtype, "disk") != 0 ||
            sd_device_get_sysname(dev, &sysname) < 0 || sd_device_get_devnum(dev, &devno) < 0)
                return 0;
        if (ue.n >= UEVENT_QUEUE_MAX) {
                ue.overflow = true;
                return 0;
        }
        ev = &ue.queue[(ue.head + ue.n) % UEVENT_QUEUE_MAX];
        if (uevent_action_of(action, &ev->action) < 0)
                return 0;
        snprintf(ev->name, sizeof(ev->name), "%s", sysname);
        ev->devno = devno;
        ue.n++;
        return 0;
}

static int uevent_open_udev(void) {
        int r;

        r = sd_event_new(&ue.event);
        if (r >= 0)
                r = sd_device_monitor_new(&ue.monitor);
        if (r >= 0)
                r = sd_device_monitor_filter_add_match_subsystem_devtype(ue.monitor, "block", "disk");
        if (r >= 0)
                r = sd_device_monitor_attach_event(ue.monitor, ue.event);
        if (r >= 0)
                r = sd_device_monitor_start(ue.monitor, uevent_udev_handler, NULL);
        if (r >= 0)
                r = sd_event_get_fd(ue.event);
        if (r < 0)
                uevent_close();
        return r;
}

static int uevent_open_kernel(void) {
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 };
        int fd, size = UEVENT_RCVBUF;

        fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
        if (fd < 0)
                return -errno;
        /* A bigger buffer than the default: a chassis powered on sends many events at once. */
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
                (void) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                int e = errno;

                close(fd);
                return -e;
        }
        ue.fd = fd;
        return fd;
}

int uevent_open(const char *mode, const char **used) {
        bool udev = strcmp(mode, "udev") == 0 || (strcmp(mode, "auto") == 0 && udev_running());

        *used = udev ? "udev" : "kernel";
        return udev ? uevent_open_udev() : uevent_open_kernel();
}

/* One kernel message into *ev: 1 for a whole disk's add, change or remove, 0 for anything else. */
static int uevent_parse_kernel(const char *buf, size_t len, struct uevent *ev) {
        const char *action = NULL, *subsystem = NULL, *devtype = NULL, *devname = NULL, *maj = NULL, *min = NULL;

        /* "ACTION@DEVPATH", then KEY=VALUE strings, each ending in a NUL. */
        for (size_t off = strnlen(buf, len) + 1; off < len;) {
                const char *s = buf + off;
                size_t n = strnlen(s, len - off);

                if (strncmp(s, "ACTION=", 7) == 0)
                        action = s + 7;
                else if (strncmp(s, "SUBSYSTEM=", 10) == 0)
                        subsystem = s + 10;
                else if (strncmp(s, "DEVTYPE=", 8) == 0)
                        devtype = s + 8;
                else if (strncmp(s, "DEVNAME=", 8) == 0)
                        devname = s + 8;
                else if (strncmp(s, "MAJOR=", 6) == 0)
                        maj = s + 6;
                else if (strncmp(s, "MINOR=", 6) == 0)
                        min = s + 6;
                off += n + 1;
        }
        if (!action || !subsystem || !devtype || !devname || !maj || !min || strcmp(subsystem, "block") != 0 ||
            strcmp(devtype, "disk") != 0 || uevent_action_of(action, &ev->action) < 0)
                return 0;
        /* DEVNAME is relative to /dev; a name in a subdirectory is no kernel name. */
        if (strchr(devname, '/') || strlen(devname) >= sizeof(ev->name))
                return 0;
        snprintf(ev->name, sizeof(ev->name), "%s", devname);
        ev->devno = makedev(strtoul(maj, NULL, 10), strtoul(min, NULL, 10));
        return 1;
}

int uevent_receive(struct uevent *ev) {
        if (ue.event) {
                /* Let the monitor hand over what is there, then take from the queue. */
                while (ue.n == 0) {
                        int r = sd_event_run(ue.event, 0);

                        if (r < 0)
                                return r;
                        if (r == 0)
                                break;
                }
                if (ue.overflow) {
                        log_warning("policies: more than %d device events at once: some were dropped", UEVENT_QUEUE_MAX);
                        ue.overflow = false;
                }
                if (ue.n == 0)
                        return 0;
                *ev = ue.queue[ue.head];
                ue.head = (ue.head + 1) % UEVENT_QUEUE_MAX;
                ue.n--;
                return 1;
        }
        if (ue.fd < 0)
                return 0;
        for (;;) {
                static char buf[UEVENT_BUFFER];
                struct sockaddr_nl from = {};
                struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) - 1 };
                struct msghdr mh = { .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov, .msg_iovlen = 1 };
                ssize_t n = recvmsg(ue.fd, &mh, MSG_DONTWAIT);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return 0;
                        if (errno == ENOBUFS) {
                                /* Events were lost: what is there is looked at as events come. */
                                log_warning("policies: the kernel's device events overflowed: some were lost");
                                continue;
                        }
                        return -errno;
                }
                /* Only the kernel's own broadcast (port 0): a process may send to the group too. */
                if (from.nl_pid != 0 || (mh.msg_flags & MSG_TRUNC))
                        continue;
                buf[n] = '\0';
                if (uevent_parse_kernel(buf, (size_t) n, ev) > 0)
                        return 1;
        }
}

void uevent_close(void) {
        if (ue.fd >= 0)
                close(ue.fd);
        sd_device_monitor_unref(ue.monitor);
        sd_event_unref(ue.event);
        ue = (typeof(ue)) { .fd = -1 };
}
