#!/usr/bin/env python3
"""Writes a seed for fuzz_pclntab to stdout: a Go 1.18-shaped function
table (go_pclntab.c's layout) of three functions, text at 0x401000."""
import struct
import sys

NAMES = [b"main.main", b"main.worker", b"runtime.gopark"]
ENTRIES = [0x0, 0x40, 0x100, 0x180]       # the last: the text's end
HEADER = 72

names = b"".join(n + b"\0" for n in NAMES)
name_off = [sum(len(n) + 1 for n in NAMES[:i]) for i in range(len(NAMES))]
names_at = HEADER
functab_at = names_at + len(names) + (-(names_at + len(names)) % 8)
records_at = 8 * (len(NAMES) + 1)            # records follow the pairs, from the function table
pairs = b"".join(struct.pack("<II", ENTRIES[i], records_at + 8 * i) for i in range(len(NAMES)))
pairs += struct.pack("<II", ENTRIES[-1], 0)
records = b"".join(struct.pack("<Ii", ENTRIES[i], name_off[i]) for i in range(len(NAMES)))
header = struct.pack("<IBBBBQQQQQQQQ", 0xFFFFFFF0, 0, 0, 1, 8, len(NAMES), 0, 0x401000,
                     names_at, 0, 0, 0, functab_at)
table = header + names + b"\0" * (functab_at - names_at - len(names)) + pairs + records
sys.stdout.buffer.write(table)
