/* Mounts and swap, as /proc/self/mountinfo and /proc/swaps list them: which device of a set is
 * mounted or is active swap, and which device a mount point is on. Apart from sysfs, as lsblk
 * keeps them in lsblk-mnt.c: a probe shows a partition's mount point (device-blkid.c) and the
 * policy refuses a mounted device (device-policy.c).
 * Runs on the main thread (probe). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "cleanup.h"
#include "strutil.h"
#include "device-private.h"
#include "utf8.h"

/* Decode the octal escapes of /proc/self/mountinfo and /proc/swaps fields in place. */
static void unescape(char *s) {
        char *o = s;

        for (; *s; s++) {
                if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
                        *o++ = (char) (((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
                        s += 3;
                } else
                        *o++ = *s;
        }
        *o = '\0';
}

/* The device number behind a mountinfo entry: its major:minor, or for file systems with an
 * anonymous device number (btrfs) the block device named as its source. 0 when none. */
static dev_t mount_device(const char *devno, const char *source) {
        struct stat st;
        dev_t d = 0;

        if (parse_devno(devno, &d) == 0 && major(d) != 0)
                return d;
        if (source && source[0] == '/' && stat(source, &st) == 0 && S_ISBLK(st.st_mode))
                return st.st_rdev;
        return 0;
}

/* Split a line of /proc/self/mountinfo in place: its "MAJOR:MINOR", its mount point and its source
 * (NULL when the line has none), both unescaped. false for a line too short to be one. */
static bool mountinfo_split(char *line, char **devno, char **mount_point, char **source) {
        char *save = NULL, *field[6] = {}, *sep;
        unsigned i = 0;

        *source = NULL;
        sep = strstr(line, " - ");
        if (sep) {
                char *fs_save = NULL;

                strtok_r(sep + 3, " ", &fs_save);       /* fstype */
                *source = strtok_r(NULL, " ", &fs_save);
                *sep = '\0';
        }
        for (char *t = strtok_r(line, " ", &save); t && i < 6; t = strtok_r(NULL, " ", &save))
                field[i++] = t;
        if (i < 5)
                return false;
        if (*source)
                unescape(*source);
        unescape(field[4]);
        *devno = field[2];
        *mount_point = field[4];
        return true;
}

/* Find a mount of any device in set: returns its mount point (malloc'd) and the device. */
char *mount_find(const struct devset *set, dev_t *which) {
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        char *found = NULL;
        FILE *f = fopen("/proc/self/mountinfo", "re");

        if (!f)
                return NULL;
        while (!found && getline(&line, &cap, f) > 0) {
                char *devno, *mount_point, *source;
                dev_t d;

                if (!mountinfo_split(line, &devno, &mount_point, &source))
                        continue;
                d = mount_device(devno, source);
                if (d && devset_has(set, d)) {
                        found = utf8_sanitize(strdup(mount_point));
                        *which = d;
                }
        }
        fclose(f);
        return found;
}

/* The device number of the file system mounted at path (as mountinfo names it), or 0. */
dev_t mount_point_device(const char *path) {
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        dev_t result = 0;
        FILE *f = fopen("/proc/self/mountinfo", "re");

        if (!f)
                return 0;
        while (getline(&line, &cap, f) > 0) {
                char *devno, *mount_point, *source;

                /* The last (topmost) mount wins. */
                if (mountinfo_split(line, &devno, &mount_point, &source) && strcmp(mount_point, path) == 0)
                        result = mount_device(devno, source);
        }
        fclose(f);
        return result;
}

/* Whether any device in set is active swap: 0 when none, else that device. */
dev_t swap_find(const struct devset *set) {
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        dev_t found = 0;
        FILE *f = fopen("/proc/swaps", "re");

        if (!f)
                return 0;
        while (!found && getline(&line, &cap, f) > 0) {
                char *sp = strpbrk(line, " \t");
                struct stat st;

                if (line[0] != '/' || !sp)
                        continue;
                *sp = '\0';
                unescape(line);
                if (stat(line, &st) == 0 && S_ISBLK(st.st_mode) && devset_has(set, st.st_rdev))
                        found = st.st_rdev;
        }
        fclose(f);
        return found;
}
