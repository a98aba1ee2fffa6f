/* Futex blockers, for both futex probe modes (sched.bpf.h, syscalls.bpf.h):
 * the futex op constants, a futex's blocker key (private: (tgid, address);
 * shared: (device, inode, offset)), which ops wait, and a futex's slot.
 * Included by parktrace.bpf.c after slots.bpf.h.
 *
 * Owns: futex_key (with its bpf_find_vma callback shared_key_cb),
 * futex_wait_op, futex_slot. No maps; futex_slot finds or makes its slot
 * with slot_get (slots.bpf.h). */
#ifndef PT_FUTEX_BPF_H
#define PT_FUTEX_BPF_H

#define VM_SHARED 0x8
#define FUTEX_PRIVATE_FLAG 128
#define FUTEX_CLOCK_REALTIME 256
#define FUTEX_CMD(op) ((op) & ~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME))
#define FUTEX_WAIT 0
#define FUTEX_LOCK_PI 6
#define FUTEX_WAIT_BITSET 9
#define FUTEX_WAIT_REQUEUE_PI 11
#define FUTEX_LOCK_PI2 13
#define FUTEX2_PRIVATE 128

struct vma_ctx {
    __u64 uaddr;
    struct pt_blocker_key *key;
};

/* Shared futexes in MAP_SHARED file or shmem mappings meet on (dev, inode,
 * offset), the way the kernel keys them. */
static long shared_key_cb(struct task_struct *task, struct vm_area_struct *vma,
                          struct vma_ctx *c)
{
    struct file *f = BPF_CORE_READ(vma, vm_file);
    if (!f || !(BPF_CORE_READ(vma, vm_flags) & VM_SHARED))
        return 0;
    struct inode *ino = BPF_CORE_READ(f, f_inode);
    c->key->addr = (BPF_CORE_READ(vma, vm_pgoff) << 12) +
                   (c->uaddr - BPF_CORE_READ(vma, vm_start));
    c->key->ino = BPF_CORE_READ(ino, i_ino);
    c->key->owner = BPF_CORE_READ(ino, i_sb, s_dev);
    c->key->kind = PT_KIND_FUTEX | PT_KEY_SHARED;
    return 0;
}

static __always_inline void futex_key(struct pt_blocker_key *key, __u64 uaddr,
                                      __u32 tgid, bool private)
{
    key->addr = uaddr;
    key->ino = 0;
    key->owner = tgid;
    key->kind = PT_KIND_FUTEX;
    if (!private) {
        struct vma_ctx c = { .uaddr = uaddr, .key = key };
        bpf_find_vma(bpf_get_current_task_btf(), uaddr, shared_key_cb, &c, 0);
    }
}

static __always_inline bool futex_wait_op(int op)
{
    return op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET || op == FUTEX_WAIT_REQUEUE_PI ||
           op == FUTEX_LOCK_PI || op == FUTEX_LOCK_PI2;
}

/* Finds or creates the slot of the futex at UADDR for the current task. */
static __always_inline struct pt_slot *futex_slot(__u64 uaddr, bool private, __u64 pid_tgid,
                                                  __u64 now, __u32 *idx)
{
    struct pt_blocker_key key;
    futex_key(&key, uaddr, pid_tgid >> 32, private);
    return slot_get(&key, idx, uaddr, pid_tgid, now, NULL, NULL);
}

#endif
