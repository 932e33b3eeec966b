"""hsformat: the profile file's framing and varints in Python, for the tests
that rewrite profiles (docs/FORMAT.md): split a file into records, inflate
format 3's zstd records (with the `zstd` command), undo its deltas, and
frame records again with a 1.x (FNV-1a) or 2.x/3.x (XXH32) check.

Written from docs/FORMAT.md, apart from the C reader, so that a test that
round-trips a profile through it checks the writer against the document."""
import struct
import subprocess

FNV_INIT, FNV_PRIME = 0x811c9dc5, 0x01000193
ZSTD = 0x80000000
NODES, STACKS = 4, 5


def fnv(data, h=FNV_INIT):
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & 0xffffffff
    return h


_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_M = 0xffffffff


def _rotl(x, r):
    return ((x << r) | (x >> (32 - r))) & _M


def xxh32(data, seed=0):
    """XXH32 of data (the reference algorithm, one byte string at a time)."""
    n, i = len(data), 0
    if n >= 16:
        v = [(seed + _P1 + _P2) & _M, (seed + _P2) & _M, seed & _M, (seed - _P1) & _M]
        while i + 16 <= n:
            for k in range(4):
                lane = struct.unpack_from("<I", data, i + 4 * k)[0]
                v[k] = (_rotl((v[k] + lane * _P2) & _M, 13) * _P1) & _M
            i += 16
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M
    else:
        h = (seed + _P5) & _M
    h = (h + n) & _M
    while i + 4 <= n:
        h = (_rotl((h + struct.unpack_from("<I", data, i)[0] * _P3) & _M, 17) * _P4) & _M
        i += 4
    while i < n:
        h = (_rotl((h + data[i] * _P5) & _M, 11) * _P1) & _M
        i += 1
    h ^= h >> 15
    h = (h * _P2) & _M
    h ^= h >> 13
    h = (h * _P3) & _M
    return h ^ (h >> 16)


def uv(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7f) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def sv(v):
    return uv((v << 1) if v >= 0 else ((-v) << 1) - 1)


def get_u(b, off):
    v, shift = 0, 0
    while True:
        c = b[off]
        off += 1
        v |= (c & 0x7f) << shift
        shift += 7
        if c < 0x80:
            return v, off


def unzigzag(v):
    return (v >> 1) ^ -(v & 1)


def version(data):
    return struct.unpack_from("<HH", data, 8)


def records(data):
    """(type, payload) of every record after the 16-byte header, as stored."""
    off, out = 16, []
    while off < len(data):
        rtype, n = struct.unpack_from("<II", data, off)
        out.append((rtype, data[off + 8:off + 8 + n]))
        off += 12 + n
    return out


def inflate(payload):
    r = subprocess.run(["zstd", "-d", "-c", "-q"], input=payload, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, check=True)
    return r.stdout


def frame(rtype, payload, major):
    head = struct.pack("<II", rtype, len(payload))
    check = xxh32(payload, rtype) if major >= 2 else fnv(payload, fnv(head[:4]))
    return head + payload + struct.pack("<I", check)


def _nodes_absolute(pl, ips):
    """A format-3 NODES payload with absolute parents and addresses; ips
    holds every earlier node's address (index = id) and grows."""
    first, off = get_u(pl, 0)
    count, off = get_u(pl, off)
    out = bytearray(uv(first) + uv(count))
    for i in range(count):
        up, off = get_u(pl, off)
        dip, off = get_u(pl, off)
        nid = first + i
        parent = nid - up
        ip = (ips[parent] + unzigzag(dip)) & 0xffffffffffffffff
        assert len(ips) == nid
        ips.append(ip)
        out += uv(parent) + uv(ip)
    assert off == len(pl), "NODES payload has %d bytes after its nodes" % (len(pl) - off)
    return bytes(out)


def _stacks_absolute(pl):
    count, off = get_u(pl, 0)
    out, prev = bytearray(uv(count)), 0
    for _ in range(count):
        did, off = get_u(pl, off)
        dleaf, off = get_u(pl, off)
        flags, off = get_u(pl, off)
        sid = prev + unzigzag(did)
        prev = sid
        out += uv(sid) + uv(sid - 1 + unzigzag(dleaf)) + uv(flags)
    return bytes(out)


def plain_records(data):
    """(type, payload) of a format-3 profile's records as format 2 would
    hold them: inflated, with absolute NODES and STACKS."""
    ips, out = [0], []
    for rtype, pl in records(data):
        if rtype & ZSTD:
            rtype, pl = rtype & ~ZSTD, inflate(pl)
        if rtype == NODES:
            pl = _nodes_absolute(pl, ips)
        elif rtype == STACKS:
            pl = _stacks_absolute(pl)
        out.append((rtype, pl))
    return out


def rewrite(data, major, minor):
    """A format-3 profile rewritten as major.minor (1 or 2): the same
    records, plain, framed with that version's check."""
    head = data[:8] + struct.pack("<HH", major, minor) + data[12:16]
    return head + b"".join(frame(t, pl, major) for t, pl in plain_records(data))
