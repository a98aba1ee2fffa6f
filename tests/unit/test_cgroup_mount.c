/* Where the cgroup v2 hierarchy is mounted, read from mountinfo lines as
 * the kernel writes them (docs/contract/cli.md, "Containers"): a machine
 * with v2 alone, a hybrid one (v1 controllers, v2 at /sys/fs/cgroup/unified,
 * the test machine's kind), v1 alone, and paths that only look like it. */
#include <stdio.h>
#include <string.h>

#include "cgroup_mount.h"
#include "check.h"

static void mount_of(const char *what, const char *text, const char *want)
{
    char out[256] = "";
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    bool got = f && cgroup_v2_mount_in(f, out, sizeof(out));
    if (f)
        fclose(f);
    CHECK(want ? got && strcmp(out, want) == 0 : !got, "%s: %s (got %s)", what, want ? want : "none",
          got ? out : "none");
}

#define ROOT "22 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
#define PROC "23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"

int main(void)
{
    mount_of("v2 alone", ROOT PROC
             "30 25 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 "
             "rw,nsdelegate,memory_recursiveprot\n",
             "/sys/fs/cgroup");
    mount_of("hybrid", ROOT PROC
             "30 25 0:26 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755\n"
             "31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 "
             "rw,nsdelegate\n"
             "32 30 0:28 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup "
             "rw,xattr,name=systemd\n"
             "33 30 0:29 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:12 - cgroup cgroup rw,memory\n",
             "/sys/fs/cgroup/unified");
    mount_of("v1 alone", ROOT
             "30 25 0:26 / /sys/fs/cgroup ro,nosuid shared:9 - tmpfs tmpfs ro\n"
             "33 30 0:29 / /sys/fs/cgroup/memory rw,nosuid shared:12 - cgroup cgroup rw,memory\n",
             NULL);
    mount_of("no optional fields, an escaped space", ROOT
             "40 22 0:30 / /mnt/my\\040cgroups rw,relatime - cgroup2 none rw\n",
             "/mnt/my cgroups");
    mount_of("cgroup2 only as a path or a source", ROOT
             "41 22 0:31 / /cgroup2 rw - tmpfs cgroup2 rw\n"
             "42 22 0:32 / /x rw - ext4 cgroup2 rw\n",
             NULL);
    mount_of("the first of two", ROOT
             "30 25 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
             "50 22 0:26 / /tmp/cg rw - cgroup2 cgroup2 rw\n",
             "/sys/fs/cgroup");
    mount_of("an empty file", "", NULL);
    return CHECK_DONE();
}
