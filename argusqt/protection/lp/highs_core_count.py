"""HiGHS's physical core count, counted once per process instead of once per LP.

highspy ≥ 1.16 calls `highs::parallel::available_core_count()` at the start of every
`Highs::run` (`Highs::initializeMultiThreading`) only to log "Scheduler initialized: n
threads (physical cores: m)" at the developer log level; on Linux it reads sysfs (the
possible CPUs, the affinity mask, each CPU's topology files): ≈ 36 µs of a 60-µs re-run,
the larger part of the fixed cost of our tiny attacker LPs (docs/design.md, D-83). On Linux
x86-64 this module points the extension's one GOT slot for that function at a
two-instruction stub returning the count the real function gave once. Every other path in
HiGHS is untouched; the count is never read by the simplex, so the LPs, their answers and
their order are the same. When anything does not match what is expected (another
platform, no such symbol, the slot not writable or not pointing at the function or its
PLT entry), nothing is changed. ARGUSQT_HIGHS_CORE_COUNT=per-run keeps HiGHS's own call.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import platform
import struct
import sys
import threading

import numpy as np

from argusqt.dataclass import dataclass

SYMBOL = b"_ZN5highs8parallel20available_core_countEv"
ENV = "ARGUSQT_HIGHS_CORE_COUNT"
_R_X86_64_JUMP_SLOT = 7
_SHT_RELA = 4
_SHT_DYNSYM = 11

_lock = threading.Lock()
_done = False
_cached: int | None = None  # the count HiGHS's stub returns; None when not patched
_keep: list[object] = []  # the stub's page: mapped for the life of the process


@dataclass(frozen=True)
class _Slot:
    """Where the extension calls the function through: its GOT slot, the symbol, the PLT."""

    got: int  # r_offset of the JUMP_SLOT relocation (link-time virtual address)
    value: int  # st_value of the symbol (link-time virtual address)
    plt: tuple[int, int]  # link-time [start, end) of the .plt/.plt.sec sections


def core_count_cached() -> int | None:
    """The core count HiGHS now gets from the stub, or None when HiGHS counts per run."""
    return _cached


_SYM = np.dtype([("name", "<u4"), ("info", "u1"), ("other", "u1"), ("shndx", "<u2"),
                 ("value", "<u8"), ("size", "<u8")])  # fmt: skip
_RELA = np.dtype([("offset", "<u8"), ("info", "<u8"), ("addend", "<i8")])


def _elf_slot(path: str, jump_slot: int) -> _Slot | None:
    """Find SYMBOL's JUMP_SLOT relocation in the ELF64 little-endian file at `path`
    (only the section headers, the dynamic symbols and relocations are read: ≈ 0.15 ms)."""
    with open(path, "rb") as f:

        def read(offset: int, size: int) -> bytes:
            f.seek(offset)
            return f.read(size)

        head = read(0, 64)
        if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:  # ELF64, little-endian
            return None
        (shoff,) = struct.unpack_from("<Q", head, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", head, 0x3A)
        table = read(shoff, shentsize * shnum)
        sections = [struct.unpack_from("<IIQQQQIIQQ", table, i * shentsize) for i in range(shnum)]
        shstr = read(sections[shstrndx][4], sections[shstrndx][5])
        names = [shstr[sec[0] : shstr.index(b"\0", sec[0])] for sec in sections]
        plt = [
            (s[3], s[3] + s[5])
            for s, n in zip(sections, names, strict=True)
            if n in (b".plt", b".plt.sec")
        ]
        k_dynsym = next((k for k, s in enumerate(sections) if s[1] == _SHT_DYNSYM), None)
        if k_dynsym is None or not plt:
            return None
        dynsym = sections[k_dynsym]
        dynstr = read(sections[dynsym[6]][4], sections[dynsym[6]][5])
        at = dynstr.find(b"\0" + SYMBOL + b"\0")
        if at < 0:
            return None
        syms = np.frombuffer(read(dynsym[4], dynsym[5]), dtype=_SYM)
        hits = np.flatnonzero(syms["name"] == at + 1)
        if hits.size != 1:
            return None
        sym_index = int(hits[0])
        for sec in sections:
            if sec[1] != _SHT_RELA or sec[6] != k_dynsym:
                continue
            rela = np.frombuffer(read(sec[4], sec[5]), dtype=_RELA)
            mine = (rela["info"] >> np.uint64(32) == sym_index) & (
                rela["info"] & np.uint64(0xFFFFFFFF) == jump_slot
            )
            found = np.flatnonzero(mine)
            if found.size:
                return _Slot(
                    int(rela["offset"][found[0]]),
                    int(syms["value"][sym_index]),
                    (min(p[0] for p in plt), max(p[1] for p in plt)),
                )
    return None


def _writable(address: int) -> bool:
    """Whether the page holding `address` is mapped writable (Linux /proc/self/maps)."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            span, perms = line.split()[:2]
            lo, hi = (int(v, 16) for v in span.split("-"))
            if lo <= address < hi:
                return perms[1] == "w"
    return False


def _stub(count: int) -> int | None:
    """Address of native code returning `count` (an unsigned int), in a read+execute page."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return None
    code = b"\xb8" + struct.pack("<I", count) + b"\xc3"  # mov eax, count; ret
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_long,
    ]
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    size = mmap.PAGESIZE
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
    page = libc.mmap(None, size, mmap.PROT_READ | mmap.PROT_WRITE, flags, -1, 0)
    if page in (None, ctypes.c_void_p(-1).value):
        return None
    ctypes.memmove(page, code, len(code))
    # read and execute, never writable and executable at once (W^X); a refusal: no stub
    if libc.mprotect(page, size, mmap.PROT_READ | mmap.PROT_EXEC) != 0:
        return None
    _keep.append(page)
    return int(page)


def count_cores_once() -> int | None:
    """Point highspy's calls of available_core_count at a stub with the count taken now.

    Idempotent and thread-safe; returns the cached count, or None when HiGHS keeps its own
    per-run count (not Linux x86-64, another highspy, ARGUSQT_HIGHS_CORE_COUNT set
    to per-run, or anything in the extension not as expected)."""
    global _done, _cached
    with _lock:
        if _done:
            return _cached
        _done = True
        if os.environ.get(ENV, "") == "per-run" or not sys.platform.startswith("linux"):
            return None
        try:
            _cached = _patch()
        # anything unexpected (a C library ctypes cannot open: TypeError on some platforms)
        # means no patch, never a failed HiGHS
        except (OSError, ValueError, TypeError, AttributeError, LookupError, struct.error):
            _cached = None
        return _cached


def _patch() -> int | None:
    """The patch itself (see count_cores_once); None when a check fails before any write."""
    import highspy._core as core  # the extension module: one shared object

    if platform.machine().lower() not in ("x86_64", "amd64"):
        return None
    path = core.__file__
    if path is None:
        return None
    slot = _elf_slot(path, _R_X86_64_JUMP_SLOT)
    if slot is None:
        return None
    lib = ctypes.CDLL(path)  # already loaded: the same mapping, one more reference
    real = ctypes.cast(getattr(lib, SYMBOL.decode()), ctypes.c_void_p).value
    if not real:
        return None
    base = real - slot.value
    got = base + slot.got
    current = ctypes.c_void_p.from_address(got).value or 0
    # the slot must lead to the function: resolved already, or still the lazy PLT entry
    if current != real and not base + slot.plt[0] <= current < base + slot.plt[1]:
        return None
    if not _writable(got):
        return None
    fn = ctypes.CFUNCTYPE(ctypes.c_uint)(real)
    count = int(fn())
    if count <= 0:
        return None
    stub = _stub(count)
    if stub is None:
        return None
    if int(ctypes.CFUNCTYPE(ctypes.c_uint)(stub)()) != count:
        return None
    ctypes.c_void_p.from_address(got).value = stub  # one aligned 8-byte store
    return count
