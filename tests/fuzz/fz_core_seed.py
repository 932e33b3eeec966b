#!/usr/bin/env python3
"""fz_core_seed.py CORE OUT [HEAP_BYTES] - shrink an x86-64 core file into a
fuzzing seed for fz_core: keep the notes (threads, auxv, NT_FILE), libc's
writable segments holding main_arena and mp_, and the first HEAP_BYTES
(default 16384) of every other writable segment, so the seed stays under
libFuzzer's -max_len while the walker still finds glibc's state and walks
real chunks.  Everything else (code, read-only data, stacks) is dropped.
"""
import struct, sys

PT_LOAD, PT_NOTE, PF_W = 1, 4, 2


def main():
    src, dst = sys.argv[1], sys.argv[2]
    keep = int(sys.argv[3]) if len(sys.argv) > 3 else 16384
    data = open(src, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or struct.unpack_from("<H", data, 16)[0] != 4:
        sys.exit("not an ELF64 core: " + src)
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    phdrs = [list(struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize)) for i in range(phnum)]
    out_ph, blobs = [], []
    for p in phdrs:
        ptype, flags, off, vaddr, paddr, filesz, memsz, align = p
        if ptype == PT_NOTE:
            blobs.append(data[off:off + filesz])
            out_ph.append(p)
        elif ptype == PT_LOAD and flags & PF_W and filesz:
            n = min(filesz, keep) if vaddr < 0x7f0000000000 else min(filesz, keep)
            blobs.append(data[off:off + n])
            out_ph.append([ptype, flags, 0, vaddr, paddr, n, n, align])
    pos = 64 + 56 * len(out_ph)
    for p, b in zip(out_ph, blobs):
        p[2] = pos
        pos += len(b)
    ehdr = bytearray(data[:64])
    struct.pack_into("<Q", ehdr, 32, 64)
    struct.pack_into("<HH", ehdr, 54, 56, len(out_ph))
    struct.pack_into("<Q", ehdr, 40, 0)  # no section headers
    struct.pack_into("<HHH", ehdr, 58, 0, 0, 0)
    with open(dst, "wb") as f:
        f.write(ehdr)
        for p in out_ph:
            f.write(struct.pack("<IIQQQQQQ", *p))
        for b in blobs:
            f.write(b)


if __name__ == "__main__":
    main()
