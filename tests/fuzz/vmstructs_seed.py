#!/usr/bin/env python3
"""Writes a seed for fuzz_vmstructs to stdout: a fake JVM's memory from
IMAGE_BASE on, laid out as that target reads it (symbol slots in the order
of its SYMBOLS, then a Klass*, a Method* and a frame pointer), with vmStructs
and vmTypes tables in HotSpot 17's shape, a thread list of two JavaThreads,
one parked on a ReentrantLock$NonfairSync, and an interpreted frame's
Method*. Offsets inside objects are made up; the readers take them from
the tables."""
import struct
import sys

BASE = 0x1000
NSYMBOLS = 18
img = bytearray(0x100)


def put(data, align=8):
    """Appends DATA (aligned) and returns its address."""
    img.extend(b"\0" * (-len(img) % align))
    addr = BASE + len(img)
    img.extend(data)
    return addr


def zeros(n):
    return put(b"\0" * n)


def poke(addr, fmt, *v):
    struct.pack_into("<" + fmt, img, addr - BASE, *v)


def cstr(s):
    return put(s.encode() + b"\0", 1)


def symbol(s):   # HotSpot Symbol: u16 _length at 0, body at 6
    return put(struct.pack("<HI", len(s), 0) + s.encode())


def u64(v):
    return put(struct.pack("<Q", v))

# Objects: a class hierarchy, a lock object, two threads, a Method*.
sym_obj, sym_aqs, sym_sync = (symbol(s) for s in (
    "java/lang/Object", "java/util/concurrent/locks/AbstractQueuedSynchronizer",
    "java/util/concurrent/locks/ReentrantLock$NonfairSync"))
k_obj, k_aqs, k_sync = zeros(0x20), zeros(0x20), zeros(0x20)
for k, s, sup in ((k_obj, sym_obj, 0), (k_aqs, sym_aqs, k_obj), (k_sync, sym_sync, k_aqs)):
    poke(k + 0x10, "QQ", s, sup)                         # Klass::_name, Klass::_super
lock = zeros(0x10)
poke(lock + 8, "I", k_sync)                              # oopDesc::_metadata._compressed_klass
thread_oop = zeros(0x40)
poke(thread_oop + 0x30, "I", lock)                       # java.lang.Thread.parkBlocker (narrow)
handle = u64(thread_oop)
threads = []
for tid in (101, 102):
    osthread = zeros(0x20)
    poke(osthread + 0x10, "i", tid)                      # OSThread::_thread_id
    t = zeros(0x60)
    poke(t + 0x40, "Q", osthread)                        # JavaThread::_osthread
    poke(t + 0x50, "Q", handle)                          # JavaThread::_threadObj
    threads.append(t)
array = put(struct.pack("<2Q", *threads))
tlist = zeros(0x18)
poke(tlist + 8, "I", 2)                                  # ThreadsList::_length
poke(tlist + 0x10, "Q", array)                           # ThreadsList::_threads
tlist_var = u64(tlist)
sym_lock = symbol("lock")
cpool = zeros(0x40 + 3 * 8)
poke(cpool + 0x18, "Q", k_sync)                          # ConstantPool::_pool_holder
poke(cpool + 0x40 + 2 * 8, "Q", sym_lock)                # entry 2 after sizeof(ConstantPool)
cmethod = zeros(0x28)
poke(cmethod + 8, "Q", cpool)                            # ConstMethod::_constants
poke(cmethod + 0x22, "H", 2)                             # ConstMethod::_name_index
method = zeros(0x10)
poke(method + 8, "Q", cmethod)                           # Method::_constMethod
frame = zeros(0x20)
poke(frame, "Q", method)                                 # the interpreter's Method* slot
fp = frame + 3 * 8
code = zeros(0x40)                                       # the code cache; its start is the interpreter
stubq = zeros(0x10)
poke(stubq, "Qi", code, 0x20)                            # StubQueue::_stub_buffer, _buffer_limit
stubq_var, lo_var, hi_var = u64(stubq), u64(code), u64(code + 0x40)
statics = {name: u64(v) for name, v in (("oop_base", 0), ("oop_shift", 0), ("klass_base", 0),
                                         ("klass_shift", 0))}

fields = [  # type, field, is_static, offset or address
    ("ThreadsSMRSupport", "_java_thread_list", 1, tlist_var),
    ("ThreadsList", "_length", 0, 8), ("ThreadsList", "_threads", 0, 0x10),
    ("JavaThread", "_osthread", 0, 0x40), ("JavaThread", "_threadObj", 0, 0x50),
    ("OSThread", "_thread_id", 0, 0x10), ("OopHandle", "_obj", 0, 0),
    ("Klass", "_name", 0, 0x10), ("Klass", "_super", 0, 0x18),
    ("Symbol", "_length", 0, 0), ("Symbol", "_body", 0, 6),
    ("CompressedOops", "_narrow_oop._base", 1, statics["oop_base"]),
    ("CompressedOops", "_narrow_oop._shift", 1, statics["oop_shift"]),
    ("CompressedKlassPointers", "_narrow_klass._base", 1, statics["klass_base"]),
    ("CompressedKlassPointers", "_narrow_klass._shift", 1, statics["klass_shift"]),
    ("oopDesc", "_metadata._compressed_klass", 0, 8), ("oopDesc", "_metadata._klass", 0, 8),
    ("Method", "_constMethod", 0, 8), ("ConstMethod", "_constants", 0, 8),
    ("ConstMethod", "_name_index", 0, 0x22), ("ConstantPool", "_pool_holder", 0, 0x18),
    ("AbstractInterpreter", "_code", 1, stubq_var), ("StubQueue", "_stub_buffer", 0, 0),
    ("StubQueue", "_buffer_limit", 0, 8), ("CodeCache", "_low_bound", 1, lo_var),
    ("CodeCache", "_high_bound", 1, hi_var),
]
# VMStructEntry: typeName, fieldName, typeString, int32 isStatic, offset, address.
structs = put(b"".join(struct.pack("<QQQiIQQ", cstr(t), cstr(f), 0, s, 0, 0 if s else v, v if s else 0)
                       for t, f, s, v in fields) + b"\0" * 48)
types = [("JavaThread", None, 0x60), ("Thread", None, 0x40), ("ConstantPool", "Metadata", 0x40),
         ("Klass", "Metadata", 0x20)]
# VMTypeEntry: typeName, superclassName, isOop, isInteger, isUnsigned, size.
vmtypes = put(b"".join(struct.pack("<QQiiiiQ", cstr(t), cstr(s) if s else 0, 0, 0, 0, 0, n)
                       for t, s, n in types) + b"\0" * 40)

# The tables' variables hold pointers and offsets; the last six are read in
# place (java_lang_Thread's field offsets as u32, the flags as one byte).
slots = [structs, 48, 0, 8, 24, 32, 40, vmtypes, 40, 0, 8, 32, 0x30, 1, 1, 0x40, 0, 0]
assert len(slots) == NSYMBOLS
for i, v in enumerate(slots):
    poke(BASE + 8 * i, "Q", v)
poke(BASE + 8 * NSYMBOLS, "QQQ", k_sync, method, fp)
sys.stdout.buffer.write(img)
