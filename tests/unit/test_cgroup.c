/* cgroup paths and the container ids read from them (docs/contract/cli.md,
 * "Containers"): every shape the contract lists, and paths that only look
 * like them. */
#include <string.h>

#include "cgroup.h"
#include "check.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID2 "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

static void id_of(const char *path, const char *want)
{
    char id[CGROUP_ID_LEN + 1] = "";
    bool got = cgroup_container_id(path, id);
    CHECK(want ? got && strcmp(id, want) == 0 : !got, "%s: %s (got %s)", path, want ? want : "no container",
          got ? id : "none");
}

static void path_from(const char *what, const char *text, const char *want)
{
    char out[256] = "";
    bool got = cgroup_from_text(text, out, sizeof(out));
    CHECK(want ? got && strcmp(out, want) == 0 : !got, "%s: %s (got %s)", what, want ? want : "none",
          got ? out : "none");
}

int main(void)
{
    id_of("/docker/" ID, ID);
    id_of("/system.slice/docker-" ID ".scope", ID);
    id_of("/system.slice/containerd.service/kubepods-burstable-pod1a2b.slice:cri-containerd:" ID, ID);
    id_of("/system.slice/x.slice:" ID, NULL);
    id_of("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b_3c4d.slice/cri-containerd-" ID
          ".scope", ID);
    id_of("/kubepods/besteffort/pod0f1e2d3c-4b5a-6978-8695-a4b3c2d1e0f9/" ID, ID);
    id_of("/kubepods.slice/kubepods-pod12.slice/crio-" ID ".scope", ID);
    id_of("/kubepods.slice/kubepods-pod12.slice/crio-conmon-" ID ".scope", NULL);
    id_of("/machine.slice/libpod-" ID ".scope", ID);
    id_of("/machine.slice/libpod-conmon-" ID ".scope", NULL);
    id_of("/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope/container", ID);
    /* Nested: the innermost container is the process's. */
    id_of("/docker/" ID "/docker/" ID2, ID2);
    /* Look-alikes. */
    id_of("/", NULL);
    id_of("/user.slice/user-1000.slice/session-3.scope", NULL);
    id_of("/docker/" "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF", NULL);
    id_of("/docker/0123456789abcdef", NULL);
    id_of("/system.slice/docker-" ID ".service", NULL);
    id_of("/system.slice/docker-" ID "0.scope", NULL);
    id_of("", NULL);

    /* v2 alone; hybrid (v2 at the root, systemd's v1 naming the scope); v1
     * only; nothing usable. */
    path_from("v2 alone", "0::/system.slice/ssh.service\n", "/system.slice/ssh.service");
    path_from("hybrid", "12:cpu,cpuacct:/docker/" ID "\n1:name=systemd:/system.slice/docker-" ID ".scope\n0::/\n",
              "/system.slice/docker-" ID ".scope");
    path_from("v2 at its root", "0::/\n", "/");
    path_from("v1 only", "1:name=systemd:/user.slice\n", "/user.slice");
    path_from("no systemd or v2 line", "10:memory:/x\n", NULL);
    path_from("a relative path", "0::relative\n", NULL);
    path_from("an empty file", "", NULL);

    /* --cgroup: a path, its descendants, and not a sibling sharing its start. */
    CHECK(cgroup_path_under("/a/b", "/a/b") && cgroup_path_under("/a/b/c", "/a/b") && cgroup_path_under("/a/b/c", "/a/b/"),
          "a cgroup and those below it are under it");
    CHECK(!cgroup_path_under("/a/bc", "/a/b") && !cgroup_path_under("/a", "/a/b"), "a sibling or a parent is not");
    CHECK(cgroup_path_under("/anything", "/") && cgroup_path_under("/", "/"), "everything is under /");
    return CHECK_DONE();
}
