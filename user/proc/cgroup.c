#include "cgroup.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Whether the N bytes at S are a full container id: 64 lower-case hex. */
static bool is_id(const char *s, size_t n)
{
    if (n != CGROUP_ID_LEN)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

/* The id in one path component SEG (N bytes), if it is a container's:
 * the id alone (cgroupfs: /docker/ID, kubepods/.../podUID/ID), or a
 * runtime's scope (systemd: docker-ID.scope, cri-containerd-ID.scope,
 * crio-ID.scope, libpod-ID.scope; a conmon scope is a monitor's, no
 * container's, and its "conmon-" is not an id). */
static const char *id_in(const char *seg, size_t n)
{
    static const char *const prefixes[] = {"docker-", "cri-containerd-", "crio-", "libpod-"};
    if (is_id(seg, n))
        return seg;
    /* The systemd driver's names in cgroupfs form: SLICE:RUNTIME:ID. */
    const char *colon = n > CGROUP_ID_LEN ? seg + n - CGROUP_ID_LEN - 1 : NULL;
    if (colon && *colon == ':' && is_id(colon + 1, CGROUP_ID_LEN) && memchr(seg, ':', (size_t)(colon - seg)))
        return colon + 1;
    const size_t scope = sizeof(".scope") - 1;
    if (n <= scope || memcmp(seg + n - scope, ".scope", scope) != 0)
        return NULL;
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        size_t p = strlen(prefixes[i]);
        if (n == p + CGROUP_ID_LEN + scope && memcmp(seg, prefixes[i], p) == 0 && is_id(seg + p, CGROUP_ID_LEN))
            return seg + p;
    }
    return NULL;
}

bool cgroup_container_id(const char *path, char id[CGROUP_ID_LEN + 1])
{
    const char *found = NULL;
    for (const char *s = path; *s;) {
        size_t n = strcspn(s, "/");
        const char *in = n ? id_in(s, n) : NULL;
        if (in)
            found = in;    /* the innermost wins */
        s += n + (s[n] == '/');
    }
    if (!found)
        return false;
    memcpy(id, found, CGROUP_ID_LEN);
    id[CGROUP_ID_LEN] = '\0';
    return true;
}

/* The path of the line of TEXT for HIERARCHY ("" for v2's "0::", else a
 * v1 controller list such as "name=systemd"), into OUT. */
static bool path_of(const char *text, const char *hierarchy, char *out, size_t len)
{
    for (const char *line = text; *line;) {
        size_t n = strcspn(line, "\n");
        const char *c1 = memchr(line, ':', n), *c2 = c1 ? memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - line)) : NULL;
        size_t hn = c2 ? (size_t)(c2 - c1 - 1) : 0, pn = c2 ? n - (size_t)(c2 + 1 - line) : 0;
        if (c2 && hn == strlen(hierarchy) && memcmp(c1 + 1, hierarchy, hn) == 0 &&
            (hn || (c1 - line == 1 && line[0] == '0'))) {
            if (pn == 0 || pn >= len || c2[1] != '/')
                return false;
            memcpy(out, c2 + 1, pn);
            out[pn] = '\0';
            return true;
        }
        line += n + (line[n] == '\n');
    }
    return false;
}

bool cgroup_from_text(const char *text, char *out, size_t len)
{
    if (path_of(text, "", out, len) && strcmp(out, "/") != 0)
        return true;
    /* Hybrid: processes of a v1 runtime sit at v2's root; systemd's v1
     * hierarchy still names their scope. */
    char v1[4096];
    if (path_of(text, "name=systemd", v1, sizeof(v1)) && strlen(v1) < len) {
        strcpy(out, v1);
        return true;
    }
    return path_of(text, "", out, len);
}

bool cgroup_of_pid(int pid, char *out, size_t len)
{
    char path[32], text[8192];
    snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (n <= 0)
        return false;
    text[n] = '\0';
    return cgroup_from_text(text, out, len);
}

bool cgroup_path_under(const char *path, const char *top)
{
    size_t n = strlen(top);
    while (n > 1 && top[n - 1] == '/')
        n--;   /* "/a/" is "/a" */
    if (n == 1)
        return true;
    return strncmp(path, top, n) == 0 && (path[n] == '\0' || path[n] == '/');
}
