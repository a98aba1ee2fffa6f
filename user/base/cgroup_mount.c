#include "cgroup_mount.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Field N (from 0) of a mountinfo line, octal escapes (\040) undone. */
static bool mount_field(const char *line, int n, char *out, size_t len)
{
    const char *s = line;
    for (int i = 0; i < n && s; i++)
        s = (s = strchr(s, ' ')) ? s + 1 : NULL;
    if (!s)
        return false;
    size_t k = 0;
    for (; *s && *s != ' ' && *s != '\n' && k + 1 < len; k++) {
        if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
            out[k] = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
            s += 4;
        } else {
            out[k] = *s++;
        }
    }
    out[k] = '\0';
    return !*s || *s == ' ' || *s == '\n';
}

bool cgroup_v2_mount_in(FILE *f, char *out, size_t len)
{
    char *line = NULL;
    size_t cap = 0;
    bool found = false;
    while (f && !found && getline(&line, &cap, f) > 0) {
        /* After the optional fields, " - FSTYPE SOURCE OPTIONS". */
        const char *dash = strstr(line, " - ");
        found = dash && strncmp(dash + 3, "cgroup2 ", 8) == 0 && mount_field(line, 4, out, len);
    }
    free(line);
    return found;
}

bool cgroup_v2_mount(char *out, size_t len)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    bool found = cgroup_v2_mount_in(f, out, len);
    if (f)
        fclose(f);
    return found;
}

int cgroup_dir_open(const char *path)
{
    char mnt[4096];
    if (!cgroup_v2_mount(mnt, sizeof(mnt))) {
        errno = ENODEV;
        return -1;
    }
    int root = open(mnt, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0)
        return -1;
    struct open_how how = {
        .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
    };
    const char *rel = path[1] ? path + 1 : ".";
    int fd = (int)syscall(SYS_openat2, root, rel, &how, sizeof(how));
    int err = errno;
    close(root);
    errno = err;
    return fd;
}
