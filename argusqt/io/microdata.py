"""Read fixed-format and free-format microdata into columns (argusqt/docs/formats.md §2,
docs/design.md).

Columns, never records: categorical fields become int32 category ids + the distinct codes,
numeric fields float64 arrays, all built with numpy vector operations (pandas' C parser for free format).

Code normalisation (decided from argusqt/docs/formats.md §2.1, §4.1 and the data): a
fixed-format code is the raw substring of its columns with **trailing blanks removed** and
leading blanks kept. Within one fixed-width field every raw substring has the same length,
so removing trailing blanks never merges two different codes (`" 1"` ≠ `"1 "` → `" 1"` ≠
`"1"`), and it makes codes equal to `.hrc` codes, which lose trailing blanks (region2.hrc
`Os `, the README: "trailing blanks are ignored"). A field that is entirely blank keeps its
blanks (an empty code would read back as the total in tabular input). Free-format fields are
trimmed, lose `"` and are left-padded to the declared width (argusqt/docs/formats.md §2.2).
"""

from __future__ import annotations

import csv
import io
import operator
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from argusqt.dataclass import dataclass

if TYPE_CHECKING:  # pandas is imported where it parses (free format, odd numbers, big files):
    import pandas as pd  # a fixed-format batch run does not pay its import (docs/design.md)

from argusqt.errors import Cancelled, InputError, SpecificationError
from argusqt.io.text import control_char_at, open_text
from argusqt.model.codelist import byte_order_key
from argusqt.model.metadata import Metadata, Variable
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, Stopwatch, no_progress

BLANK = 32


class CategoricalColumn(NamedTuple):
    """Category id per record (int32) and the distinct codes (`categories[id]`)."""

    codes: np.ndarray
    categories: list[str]


@dataclass(eq=False)
class MicroData:
    """Loaded columns of one microdata file (only the variables asked for)."""

    path: Path
    n_records: int
    categorical: dict[str, CategoricalColumn] = field(default_factory=dict)
    numeric: dict[str, np.ndarray] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)
    record_lines: np.ndarray | None = None  # line number of each record when blank lines exist
    n_lines: int = 0  # lines of the file, empty ones included
    line0: int = 0  # lines of the file before these records (a part of a streamed file)

    def _key(self, name: str, table: dict) -> str | None:
        low = name.lower()
        return next((k for k in table if k.lower() == low), None)

    def has(self, name: str) -> bool:
        return (
            self._key(name, self.categorical) is not None
            or self._key(name, self.numeric) is not None
        )

    def codes(self, name: str) -> CategoricalColumn:
        """The categorical column of a variable (case-insensitive name)."""
        k = self._key(name, self.categorical)
        if k is None:
            raise SpecificationError(
                f"variable '{name}' was not loaded as a categorical column", file=self.path
            )
        return self.categorical[k]

    def values(self, name: str) -> np.ndarray:
        """The float64 column of a numeric variable (case-insensitive name)."""
        k = self._key(name, self.numeric)
        if k is None:
            raise SpecificationError(
                f"variable '{name}' was not loaded as a numeric column", file=self.path
            )
        return self.numeric[k]

    def column(self, name: str) -> CategoricalColumn | np.ndarray:
        """Categorical column if the variable has one (explanatory/holding/request), else numeric.

        A variable that is both `<RECODEABLE>` and `<NUMERIC>` gives its categorical column
        here; use `values(name)` for its numbers.
        """
        if self._key(name, self.categorical) is not None:
            return self.codes(name)
        return self.values(name)

    def holding_runs(self, name: str) -> np.ndarray:
        """Holding id per record (argusqt/docs/formats.md §2.3): a new holding starts wherever
        the code changes."""
        codes = self.codes(name).codes
        runs = np.zeros(codes.shape[0], dtype=np.int64)
        if codes.shape[0] > 1:
            np.cumsum(codes[1:] != codes[:-1], out=runs[1:])
        return runs

    def line_of(self, record: int) -> int:
        """Line number (1-based) of record `record` (0-based) in the data file."""
        if self.record_lines is not None:
            return self.line0 + int(self.record_lines[record])
        return self.line0 + record + 1


def continued_runs(
    ids: np.ndarray, last: tuple[int, int] | None
) -> tuple[np.ndarray, tuple[int, int] | None]:
    """Holding id per record of a part of the data, numbered on from the part before (a
    holding goes on while its code does not change), and (code, id) of the part's last record."""
    runs = np.zeros(ids.shape[0], dtype=np.int64)
    if not ids.shape[0]:
        return runs, last
    np.cumsum(ids[1:] != ids[:-1], out=runs[1:])
    if last is not None:
        runs += last[1] + (0 if ids[0] == last[0] else 1)
    return runs, (int(ids[-1]), int(runs[-1]))


class HoldingRuns:
    """A part's `holding_runs`: the holding ids numbered across the parts of the data."""

    def __init__(self, runs: np.ndarray) -> None:
        self.runs = runs

    def __call__(self, name: str) -> np.ndarray:
        return self.runs


class Notes:
    """Warnings of a read, added up over the parts of a file read in chunks (io/fixedstream.py):
    values merge (counts add), the first part's details are kept; rendered in first-seen order."""

    def __init__(self) -> None:
        self._items: dict[tuple, list] = {}

    def add(self, key: tuple, value, render, merge=operator.add) -> None:
        """Note `value` under `key`; `render(value)` gives the text ("" for none)."""
        item = self._items.get(key)
        if item is None:
            self._items[key] = [value, render]
        else:
            item[0] = merge(item[0], value)

    def lines(self) -> list[str]:
        texts = (render(value) for value, render in self._items.values())
        return [t for t in texts if t]


# ---------------------------------------------------------------------------- bytes
def _normalise_newlines(data: bytes) -> bytes:
    """LF line ends: CRLF and stray CRs (`\\r\\r\\n`) removed; CR-only files split on CR."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if b"\r" in data:
        data = data.replace(b"\r", b"") if b"\n" in data else data.replace(b"\r", b"\n")
    return data


def _line_bounds(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start offset and length of every line (a final empty line is not a line)."""
    nl = np.flatnonzero(arr == 10)
    starts = np.concatenate(([0], nl + 1))
    ends = np.concatenate((nl, [arr.shape[0]]))
    if starts[-1] >= arr.shape[0]:
        starts, ends = starts[:-1], ends[:-1]
    return starts, ends - starts


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _factorize_rows(mat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Category id per row of a (n, w) byte matrix, and the first row of each category.

    On 8-byte words, combined word by word. Sort-based (numpy) up to `HASH_ROWS` rows,
    hash-based (pandas.factorize, O(n)) beyond, where the sort costs more than importing
    pandas (docs/design.md, D-16).
    """
    n, w = mat.shape
    factorize = _factorize_hash if n > HASH_ROWS else _factorize_sort
    codes: np.ndarray | None = None
    first: np.ndarray | None = None
    for off in range(0, max(w, 1), 8):
        part = mat[:, off : off + 8]
        word = np.zeros((n, 8), dtype=np.uint8)
        word[:, : part.shape[1]] = part
        key = word.view(np.uint64).ravel()
        if codes is None:
            codes, first, n_found = factorize(key)
        else:
            c, _, n_c = factorize(key)
            codes, first, n_found = factorize(codes.astype(np.uint64) * np.uint64(n_c) + c)
    assert codes is not None and first is not None
    return codes.astype(np.int32, copy=False), first


#: Rows above which categorical fields are numbered by hashing (pandas) instead of sorting:
#: np.unique on 500,000 keys takes ~50 ms a field, pandas' import ~0.25 s once.
HASH_ROWS = 200_000


def _factorize_sort(key: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Ids (in key order), the first row of each id, and the number of ids."""
    uniq, first, codes = np.unique(key, return_index=True, return_inverse=True)
    return codes.ravel().astype(np.int64, copy=False), first.astype(np.int64), len(uniq)


def _factorize_hash(key: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Ids in order of first appearance, the first row of each id, and the number of ids."""
    import pandas as pd

    codes, uniq = pd.factorize(key)
    if codes.size == 0:
        return codes.astype(np.int64), np.zeros(0, dtype=np.int64), 0
    running = np.maximum.accumulate(codes)
    first = np.flatnonzero(np.concatenate(([True], running[1:] > running[:-1])))
    return codes.astype(np.int64, copy=False), first, len(uniq)


def _sorted_categories(codes: np.ndarray, categories: list[str]) -> tuple[np.ndarray, list[str]]:
    """Merge equal category texts and order them by byte order (deterministic ids)."""
    uniq = sorted(set(categories), key=byte_order_key)
    pos = {c: i for i, c in enumerate(uniq)}
    remap = np.array([pos[c] for c in categories], dtype=np.int32)
    return remap[codes] if len(categories) else codes.astype(np.int32), uniq


def _categorical_from_bytes(mat: np.ndarray) -> CategoricalColumn:
    """Fixed-format codes: raw bytes, trailing blanks removed (see module docstring)."""
    w = mat.shape[1]
    codes, first = _factorize_rows(mat)
    cats = []
    for r in first:
        text = _decode(mat[r].tobytes()).rstrip(" ")
        cats.append(text if text else " " * w)
    c, u = _sorted_categories(codes, cats)
    return CategoricalColumn(c.astype(np.int32, copy=False), u)


#: 10**k as float64 (exact for k ≤ 22): value = integer of all digits / 10**(fraction digits).
POW10 = 10.0 ** np.arange(23)
#: Rows with more significant digits than this go through the slow (exact) parser.
FAST_DIGITS = 15
#: Target bytes of one block of records (the block and the parser's temporaries stay in cache).
BLOCK_BYTES = 2_000_000


def _parse_decimal_block(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Parse a (w, n) byte matrix (one field per column) as `[blanks][sign]digits[.digits][blanks]`.

    Vectorised Horner scheme over the w byte positions; the integer of all digits divided by
    10**(fraction digits) is the correctly rounded value for ≤ 15 digits (both exact
    floats). Returns (values, ok); rows with anything else (exponents, inner blanks, tabs,
    more digits) have ok False and go to the caller's slow path. Blank rows are 0.
    """
    w, n = t.shape
    acc = np.zeros(n, dtype=np.int64)
    tmp = np.empty(n, dtype=np.int64)
    n_digit = np.zeros(n, dtype=np.int16)
    runs = np.zeros(n, dtype=np.int16)  # blank → non-blank transitions (1 = one number)
    other = np.zeros(n, dtype=bool)
    prev = np.zeros(n, dtype=bool)
    has_dot = bool((t == 46).any())
    has_sign = bool(((t == 45) | (t == 43)).any())
    if has_dot:
        frac = np.zeros(n, dtype=np.int16)
        n_dot = np.zeros(n, dtype=np.int16)
        seen_dot = np.zeros(n, dtype=bool)
    if has_sign:
        n_sign = np.zeros(n, dtype=np.int16)
        late_sign = np.zeros(n, dtype=bool)
        neg = np.zeros(n, dtype=bool)
    for j in range(w):
        c = t[j]
        d = c - np.uint8(48)
        digit = d < 10
        np.multiply(acc, 10, out=tmp)
        tmp += d
        np.copyto(acc, tmp, where=digit)
        n_digit += digit
        nonblank = c != BLANK
        runs += nonblank & ~prev
        allowed = digit | ~nonblank
        if has_dot:
            dot = c == 46
            frac += digit & seen_dot
            seen_dot |= dot
            n_dot += dot
            allowed |= dot
        if has_sign:
            minus = c == 45
            sign = minus | (c == 43)
            late_sign |= sign & prev
            neg |= minus
            n_sign += sign
            allowed |= sign
        other |= ~allowed
        prev = nonblank
    blank = runs == 0
    ok = ~other & (runs <= 1) & (n_digit <= FAST_DIGITS) & ((n_digit >= 1) | blank)
    if has_dot:
        ok &= n_dot <= 1
        values = acc / POW10[frac]
    else:
        values = acc.astype(np.float64)
    if has_sign:
        ok &= (n_sign <= 1) & ~late_sign
        np.negative(values, out=values, where=neg)
    return values, ok


def _parse_decimal_slow(
    mat: np.ndarray, rows: np.ndarray, var: Variable, path: Path, line_of
) -> np.ndarray:
    """Exact parse of the (k, w) fields the fast parser declined; InputError on bad text.

    Infinities, NaN and numbers beyond the float range (`1e400`) are refused like any
    other text that is not a number: no sum or solver could use them.
    """
    w = mat.shape[1]
    control = ((mat < 32) & (mat != 9)) | (mat == 127)
    if control.any():  # checked first: NULs would vanish in the byte strings below
        r, c = (int(x[0]) for x in np.nonzero(control))
        raise InputError(
            f"expected a number in columns {var.start}-{var.start + w - 1} (variable "
            f"{var.name}), got the control character 0x{int(mat[r, c]):02X}",
            file=path,
            line=line_of(int(rows[r])),
            column=var.start + c,  # type: ignore[operator]
        )
    import pandas as pd

    strings = np.ascontiguousarray(mat).view(f"S{w}").ravel()
    text = pd.Series(strings).str.decode("latin-1").str.strip(" \t")
    text = text.mask(text == "", "0")
    values = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"expected a finite number in columns {var.start}-{var.start + w - 1} "
            f"(variable {var.name}), got '{text.iloc[i]}'",
            file=path,
            line=line_of(int(rows[i])),
            column=var.start,
        )
    return values


def _warn_numeric_missing(
    var: Variable, values: np.ndarray, log: list[str] | Notes, path: Path
) -> None:
    """argusqt/docs/formats.md §1.1: a numeric field equal to its declared missing value is kept,
    with a warning."""
    notes = Notes() if isinstance(log, list) else log
    for m in dict.fromkeys(var.missing):
        try:
            mv = float(m.strip())
        except ValueError:
            continue
        hits = int(np.count_nonzero(values == mv))
        if hits:
            notes.add(
                ("missing", var.name, m),
                hits,
                lambda hits, m=m: (
                    f"warning: {path.name}: {hits} record(s) of numeric variable {var.name} "
                    f"equal its declared missing value {m.strip()}; kept as the number "
                    f"{m.strip()}"
                ),
            )
    if isinstance(log, list):
        log.extend(notes.lines())


# ---------------------------------------------------------------------------- fixed format
class _FixedLines:
    """The records of a fixed-format file, served in blocks of rows as byte matrices.

    Fast path (no copy, no per-byte scan in Python): every line has the same length and the
    same number of trailing CRs, checked with bytes.count; the records are then a strided
    view of the file. Otherwise line bounds come from the newline positions and blocks are
    gathered (blank-padded).
    """

    n: int
    n_lines: int
    max_len: int

    def __init__(self, data: bytes, line0: int = 0) -> None:
        self.line0 = line0  # lines of the file before this part (io/fixedstream.py)
        self.view: np.ndarray | None = None
        self.record_lines: np.ndarray | None = None
        if b"\n" not in data and b"\r" in data:
            data = data.replace(b"\r", b"\n")  # old Mac line ends
        self.arr = np.frombuffer(data, dtype=np.uint8)
        if self._uniform(data):
            self.n_lines = self.n
            return
        data = _normalise_newlines(data)
        self.arr = np.frombuffer(data, dtype=np.uint8)
        starts, lengths = _line_bounds(self.arr)
        self.n_lines = int(starts.shape[0])
        keep = lengths > 0
        if not keep.all():
            self.record_lines = np.flatnonzero(keep) + 1
            starts, lengths = starts[keep], lengths[keep]
        self.starts = starts
        self.lengths = lengths
        self.n = int(starts.shape[0])
        self.max_len = int(lengths.max()) if self.n else 0

    def _uniform(self, data: bytes) -> bool:
        """Set up the strided view when all lines have one length and end with LF."""
        raw = data.find(b"\n")
        if raw <= 0:
            return False
        stride = raw + 1
        n_full, rest = divmod(len(data), stride)
        if data.count(b"\n") != n_full or not (self.arr[raw::stride] == 10).all():
            return False
        crs = 0
        ends = self.arr[: n_full * stride]
        while crs < raw and (ends[raw - 1 - crs :: stride] == 13).all():
            crs += 1
        if crs == raw or data.count(b"\r") != crs * n_full:
            return False
        n = n_full
        if rest:  # a last line without its line end must have the same length
            if rest != raw - crs:
                return False
            n += 1
        self.n = n
        self.max_len = raw - crs
        self.view = np.lib.stride_tricks.as_strided(
            self.arr, shape=(n, self.max_len), strides=(stride, 1), writeable=False
        )
        return True

    def line_of(self, record: int) -> int:
        """Line number in the file (1-based) of record `record` (0-based) of this part."""
        part = int(self.record_lines[record]) if self.record_lines is not None else record + 1
        return self.line0 + part

    def line_lengths(self) -> np.ndarray:
        """Characters per record (line ends excluded)."""
        if self.view is not None:
            return np.full(self.n, self.max_len, dtype=np.int64)
        return self.lengths.astype(np.int64, copy=False)

    def gather(self, rows: np.ndarray, lo: int, hi: int) -> np.ndarray:
        """Columns [lo, hi) of the given records (non-uniform files), blank-padded."""
        cols = lo + np.arange(hi - lo, dtype=np.int64)
        st, ln = self.starts[rows], self.lengths[rows]
        valid = cols[None, :] < ln[:, None]
        idx = np.where(valid, st[:, None] + cols[None, :], 0)
        return np.where(valid, self.arr[idx], np.uint8(BLANK)).astype(np.uint8, copy=False)

    def block_rows(self, lo: int, hi: int) -> int:
        """Records per block for columns [lo, hi)."""
        width = (self.max_len + 1) if self.view is not None else 8 * max(hi - lo, 1)
        return max(1024, BLOCK_BYTES // max(width, 1))

    def block(self, r0: int, r1: int, lo: int, hi: int) -> np.ndarray:
        """(r1-r0, hi-lo) bytes of records r0..r1-1, columns [lo, hi) 0-based, blank-padded."""
        width = hi - lo
        if self.view is not None:
            if hi <= self.max_len:
                return self.view[r0:r1, lo:hi]
            out = np.full((r1 - r0, width), BLANK, dtype=np.uint8)
            if lo < self.max_len:
                out[:, : self.max_len - lo] = self.view[r0:r1, lo:]
            return out
        cols = lo + np.arange(width, dtype=np.int64)
        st = self.starts[r0:r1]
        ln = self.lengths[r0:r1]
        valid = cols[None, :] < ln[:, None]
        idx = np.where(valid, st[:, None] + cols[None, :], 0)
        return np.where(valid, self.arr[idx], np.uint8(BLANK)).astype(np.uint8, copy=False)


def _read_fixed(
    meta: Metadata,
    path: Path,
    data: bytes,
    variables: list[Variable],
    result: MicroData,
    progress: ProgressCallback,
    cancel: CancelToken | None,
    notes: Notes | None = None,
    line0: int = 0,
) -> None:
    """One pass over the records in cache-sized blocks: every field is cut from the block
    while it is in cache; numeric fields are parsed there, categorical ones kept as bytes.

    A part of a file (io/fixedstream.py) starts after line `line0` and adds its warnings to
    the file's `notes`; on its own a read logs them into `result.log`.
    """
    lines = _FixedLines(data, line0)
    own = notes is None
    notes = Notes() if notes is None else notes
    n = lines.n
    result.n_records = n
    result.record_lines = lines.record_lines
    result.n_lines = lines.n_lines
    if not variables:
        return
    beyond = set()
    for var in variables:
        assert var.start is not None and var.width is not None
        if n:  # noted for every part: a warning only when no line of any part reaches it
            out = int(var.start > lines.max_len)
            if out:
                beyond.add(var.name)
            notes.add(
                ("beyond", var.name),
                (out, 1, lines.max_len),
                lambda v, var=var: (
                    (
                        f"warning: {path.name}: variable {var.name} starts at column {var.start} "
                        f"but no line is longer than {v[2]} characters; all its fields are blank"
                    )
                    if v[0] == v[1]
                    else ""
                ),
                lambda a, b: (a[0] + b[0], a[1] + b[1], max(a[2], b[2])),
            )
    _warn_short_lines(lines, [v for v in variables if v.name not in beyond], path, notes)
    lo = min(v.start - 1 for v in variables)  # type: ignore[operator]
    hi = max(v.start - 1 + v.width for v in variables)  # type: ignore[operator]
    _warn_odd_lengths(lines, hi, path, notes)
    lengths = lines.line_lengths()
    # one column more on each side: a number running past its field (edges, below)
    blo, bhi = max(lo - 1, 0), hi + 1
    edges = _edge_columns(meta, [v for v in variables if v.is_number])
    edge_hits: dict[tuple[str, str], list[int]] = {}  # (variable, side) → [count, first row]
    cats = {
        v.name: np.empty((n, v.width or 0), dtype=np.uint8) for v in variables if v.categorical
    }  # every width was checked above
    nums = {v.name: np.empty(n, dtype=np.float64) for v in variables if v.is_number}
    slow: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {name: [] for name in nums}
    blanks: dict[str, list[int]] = {}  # numeric variable → [blank fields, first row]
    step = lines.block_rows(blo, bhi)
    clock = Stopwatch()
    last_event = -1.0
    for r0 in range(0, n, step):
        if cancel is not None and cancel.cancelled:
            raise Cancelled("reading the microdata was cancelled", file=path)
        if clock.elapsed - last_event > 0.2:
            last_event = clock.elapsed
            progress(ProgressEvent(f"Reading {path.name}", fraction=r0 / n, elapsed=clock.elapsed))
        r1 = min(n, r0 + step)
        blk = lines.block(r0, r1, blo, bhi)
        blk_t = np.ascontiguousarray(blk.T) if nums else blk.T  # one transpose per block
        for var in variables:
            s = (var.start or 0) - 1 - blo  # start and width were checked above
            w = var.width or 0
            sub = blk[:, s : s + w]
            if var.name in cats:
                cats[var.name][r0:r1] = sub
            if var.name in nums:
                values, ok = _parse_decimal_block(blk_t[s : s + w])
                nums[var.name][r0:r1] = values
                if not ok.all():
                    bad = np.flatnonzero(~ok)
                    slow[var.name].append((bad + r0, np.array(sub[bad])))
                zero = np.flatnonzero(values == 0)
                if zero.size:
                    blank = zero[(sub[zero] == BLANK).all(axis=1)]
                    end = var.start - 1 + var.width  # type: ignore[operator]
                    blank = blank[lengths[blank + r0] >= end]  # short lines: warned apart
                    if blank.size:
                        hit = blanks.setdefault(var.name, [0, int(blank[0]) + r0])
                        hit[0] += int(blank.size)
                for side, col in edges.get(var.name, ()):
                    rows = _running_on(blk, s, int(var.width), col - blo, side)  # type: ignore[arg-type]
                    if rows.size:
                        hit = edge_hits.setdefault((var.name, side), [0, int(rows[0]) + r0])
                        hit[0] += int(rows.size)
    for var in variables:
        if var.name in cats:
            result.categorical[var.name] = _categorical_from_bytes(cats.pop(var.name))
        if var.name in nums:
            values = nums[var.name]
            if slow[var.name]:
                rows = np.concatenate([r for r, _ in slow[var.name]])
                mat = np.concatenate([m for _, m in slow[var.name]])
                values[rows] = _parse_decimal_slow(mat, rows, var, path, lines.line_of)
            _warn_numeric_missing(var, values, notes, path)
            result.numeric[var.name] = values
    for name, (count, row) in blanks.items():
        if name not in beyond:
            first = lines.line_of(row)
            notes.add(
                ("blank", name),
                count,
                lambda count, name=name, first=first: (
                    f"warning: {path.name}: {count} record(s) have a blank {name} field, read "
                    f"as 0 (first: line {first})"
                ),
            )
    for (name, side), (count, row) in edge_hits.items():
        var = meta.variable(name)
        col = var.start - 1 if side == "before" else var.start + var.width  # type: ignore[operator]
        first = lines.line_of(row)
        notes.add(
            ("edge", name, side),
            count,
            lambda count, var=var, side=side, col=col, first=first: (
                f"warning: {path.name}: the number in {var.name} (columns {var.start}-"
                f"{var.start + var.width - 1}) seems to continue {side} its field, into column "  # type: ignore[operator]
                f"{col}, on {count} record(s) (first: line {first}); check the start "
                f"and width of {var.name} in the metadata"
            ),
        )
    if own:
        result.log.extend(notes.lines())


def _warn_short_lines(
    lines: _FixedLines, variables: list[Variable], path: Path, notes: Notes
) -> None:
    """Pad a short line with blanks as τ-Argus does (argusqt/docs/formats.md §2.1); say which fields
    it cut.

    A line that ends inside or before a field the metadata describes loses digits of a
    number or a code without any error, so the count of such lines is always logged.
    """
    if not variables or lines.n == 0:
        return
    need = max(v.start - 1 + v.width for v in variables)  # type: ignore[operator]
    lengths = lines.line_lengths()
    short = np.flatnonzero(lengths < need)
    if not short.size:
        return
    counts = [short.size]  # then cut and blank fields per variable
    for var in variables:
        start0 = var.start - 1  # type: ignore[operator]
        end = start0 + var.width  # type: ignore[operator]
        counts.append(int(np.count_nonzero((lengths > start0) & (lengths < end))))
        counts.append(int(np.count_nonzero(lengths <= start0)))
    first = int(short[0])
    first_line, first_len = lines.line_of(first), int(lengths[first])

    def render(c: np.ndarray) -> str:
        parts = []
        for k, var in enumerate(variables):
            cut, blank = int(c[1 + 2 * k]), int(c[2 + 2 * k])
            if cut or blank:
                what = ", ".join(t for t in (f"{cut} cut" if cut else "", f"{blank} blank") if t)
                parts.append(f"{var.name} ({what})" if blank else f"{var.name} ({cut} cut)")
        more = f" and {len(parts) - 6} more" if len(parts) > 6 else ""
        return (
            f"warning: {path.name}: {int(c[0])} record(s) end before column {need}, where the "
            f"fields read end (first: line {first_line}, {first_len} "
            "characters); the missing characters are read as blanks, as τ-Argus does: numbers "
            f"there read as 0 or lose digits, codes are blank — fields touched: "
            f"{', '.join(parts[:6])}{more}"
        )

    notes.add(("short", need, tuple(v.name for v in variables)), np.array(counts), render)


def _warn_odd_lengths(lines: _FixedLines, need: int, path: Path, notes: Notes) -> None:
    """A record longer or shorter than nearly all others may have a character inserted or
    deleted, which shifts every field after it into a wrong but readable value."""
    if lines.view is not None or lines.n < 10:
        return  # all lines have one length (or too few to speak of "the others")
    lengths = lines.line_lengths()
    counts = np.bincount(lengths)
    mode = int(counts.argmax())
    if counts[mode] < 0.9 * lines.n:
        return
    odd = (lengths != mode) & (lengths >= need)  # shorter than `need`: reported as short
    longer = np.flatnonzero(odd & (lengths > mode))
    if longer.size:  # extra characters that are all blanks shift nothing
        tail = lines.gather(longer, mode, int(lengths[longer].max()))
        odd[longer[(tail == BLANK).all(axis=1)]] = False
    rows = np.flatnonzero(odd)
    if rows.size:
        first = int(rows[0])
        first_line, first_len = lines.line_of(first), int(lengths[first])
        notes.add(
            ("odd", mode),
            int(rows.size),
            lambda count: (
                f"warning: {path.name}: {count} record(s) differ in length from the {mode} "
                f"characters of the other records (first: line {first_line}, "
                f"{first_len} characters); a character inserted or deleted there shifts "
                "the fields after it — check these lines"
            ),
        )


def _edge_columns(meta: Metadata, numeric: list[Variable]) -> dict[str, list[tuple[str, int]]]:
    """0-based columns just before and after each numeric field that no variable declares."""
    spans = [
        (v.start - 1, v.start - 1 + v.width)  # type: ignore[operator]
        for v in meta.variables
        if v.start is not None and v.width is not None
    ]

    def declared(col: int) -> bool:
        return any(a <= col < b for a, b in spans)

    out: dict[str, list[tuple[str, int]]] = {}
    for v in numeric:
        start0 = v.start - 1  # type: ignore[operator]
        end = start0 + v.width  # type: ignore[operator]
        sides = []
        if start0 > 0 and not declared(start0 - 1):
            sides.append(("before", start0 - 1))
        if not declared(end):
            sides.append(("after", end))
        if sides:
            out[v.name] = sides
    return out


_DIGIT_OR_DOT = np.zeros(256, dtype=bool)
_DIGIT_OR_DOT[list(b"0123456789.")] = True


def _running_on(blk: np.ndarray, s: int, width: int, col: int, side: str) -> np.ndarray:
    """Rows where the number of the field [s, s+width) runs into column `col` of the block."""
    if side == "after":
        inside, outside = blk[:, s + width - 1], blk[:, col]
    else:
        inside, outside = blk[:, s], blk[:, col]
    return np.flatnonzero(_DIGIT_OR_DOT[inside] & _DIGIT_OR_DOT[outside])


# ---------------------------------------------------------------------------- free format
def _read_free(
    meta: Metadata,
    path: Path,
    data: bytes,
    variables: list[Variable],
    result: MicroData,
    progress: ProgressCallback,
    cancel: CancelToken | None,
) -> None:
    sep = meta.separator or ","
    sep_b = sep.encode("latin-1", errors="replace")
    if len(sep_b) != 1 or sep_b in (b'"', b"\n"):
        if b"\x1f" in data:
            raise InputError(
                "the data contains the control character 0x1F; cannot split on "
                f"the separator '{sep}'",
                file=path,
            )
        data = data.replace(sep_b, b"\x1f")
        sep_b = b"\x1f"
    n_fields = len(meta.variables)
    arr = np.frombuffer(data, dtype=np.uint8)
    starts, lengths = _line_bounds(arr)
    nonblank = lengths > 0
    # field count per line, vectorised: separators counted per line
    sep_pos = np.flatnonzero(arr == sep_b[0])
    line_id = np.searchsorted(starts, sep_pos, side="right") - 1
    counts = np.bincount(line_id, minlength=starts.shape[0])
    wrong = np.flatnonzero(nonblank & (counts != n_fields - 1))
    if wrong.size:
        i = int(wrong[0])
        raise InputError(
            f"expected {n_fields} fields separated by '{sep}' (one per variable of the "
            f"metadata), got {int(counts[i]) + 1}",
            file=path,
            line=i + 1,
        )
    record_lines = None if nonblank.all() else np.flatnonzero(nonblank) + 1
    result.record_lines = record_lines
    result.n_lines = int(starts.shape[0])

    def line_of(r: int) -> int:
        return int(record_lines[r]) if record_lines is not None else r + 1

    def column_of(r: int, field_no: int) -> int:
        """Character column where field `field_no` (1-based) of record `r` starts."""
        i = line_of(r) - 1
        text = data[int(starts[i]) : int(starts[i]) + int(lengths[i])]
        cut = text.split(sep_b, field_no - 1)
        return len(text) - len(cut[-1]) + 1 if len(cut) == field_no else 1

    index = {v.name: i for i, v in enumerate(meta.variables)}
    n_records = int(np.count_nonzero(nonblank))
    result.n_records = n_records
    fast_num = {index[v.name] for v in variables if v.is_number and not v.categorical}
    as_text = {index[v.name] for v in variables} - fast_num
    reader = _CsvReader(data, sep_b.decode("latin-1"), n_fields, n_records, path)
    # numbers parsed by pandas' C parser; any odd text (blanks, quotes, decimal comma)
    # makes it fail and the column is re-read as text for the exact, explained parse
    df = reader.read(as_text, fast_num)
    clock = Stopwatch()
    for k, var in enumerate(variables):
        if cancel is not None and cancel.cancelled:
            raise Cancelled("reading the microdata was cancelled", file=path)
        progress(
            ProgressEvent(
                f"Reading {var.name}", fraction=k / max(len(variables), 1), elapsed=clock.elapsed
            )
        )
        i = index[var.name]
        if var.categorical:
            result.categorical[var.name] = _free_categorical(df[i], var, result.log, path)
        if var.is_number:
            col = df[i] if i in df and not var.categorical else None
            values = None
            if col is not None and col.dtype.kind == "f":
                values = col.to_numpy(dtype=np.float64, copy=True)
                if not np.isfinite(values).all():
                    values = None  # blanks or nan/inf texts: explain via the text path
            if values is None:
                text = df[i] if var.categorical else reader.read({i}, set())[i]
                values = _free_numeric(
                    text.astype(str), var, path, sep, line_of, i + 1, result.log, column_of
                )
            _warn_numeric_missing(var, values, result.log, path)
            result.numeric[var.name] = values


class _CsvReader:
    """pandas' C parser on the normalised bytes, with the checks every read needs."""

    def __init__(self, data: bytes, sep: str, n_fields: int, n_records: int, path: Path):
        self.data = data
        self.sep = sep
        self.n_fields = n_fields
        self.n_records = n_records
        self.path = path

    def read(self, text_cols: set[int], float_cols: set[int]) -> pd.DataFrame:
        """Columns `text_cols` as categories of raw text, `float_cols` as float64 (empty →
        NaN); falls back to text for all columns when a float column has odd text."""
        import pandas as pd

        cols = sorted(text_cols | float_cols)
        if self.n_records == 0 or not cols:
            return pd.DataFrame({i: pd.Series([], dtype=object) for i in cols})
        dtype: dict[int, str] = {i: "category" for i in text_cols}
        dtype.update({i: "float64" for i in float_cols})
        try:
            df = self._read_csv(cols, dtype, {i: [""] for i in float_cols})
        except ValueError:
            if not float_cols:
                raise
            df = self._read_csv(cols, {i: "category" for i in cols}, None)
        if len(df) != self.n_records:
            raise InputError(
                f"expected {self.n_records} records (non-empty lines), the parser found {len(df)}",
                file=self.path,
            )
        return df

    def _read_csv(self, cols: list[int], dtype: dict, na_values: dict | None) -> pd.DataFrame:
        import pandas as pd

        try:
            return pd.read_csv(
                io.BytesIO(self.data),
                sep=self.sep,
                header=None,
                names=list(range(self.n_fields)),
                usecols=cols,
                dtype=dtype,  # type: ignore[arg-type]
                keep_default_na=False,
                na_values=na_values,
                na_filter=bool(na_values),
                quoting=csv.QUOTE_NONE,
                engine="c",
                encoding="latin-1",
                skip_blank_lines=True,
            )
        except pd.errors.ParserError as exc:
            raise InputError(f"cannot split the records: {exc}", file=self.path) from None


def _free_categorical(
    col: pd.Series, var: Variable, log: list[str], path: Path
) -> CategoricalColumn:
    """Trim blanks/tabs, drop `"`, left-pad to the width (argusqt/docs/formats.md §2.2) — on the
    distinct values only."""
    import pandas as pd

    if isinstance(col.dtype, pd.CategoricalDtype):
        codes = col.cat.codes.to_numpy()
        uniques = list(col.cat.categories)
        if codes.size and codes.min() < 0:  # an empty field read as NA: the empty code
            codes = np.where(codes < 0, len(uniques), codes)
            uniques.append("")
    else:
        codes, found = pd.factorize(col.to_numpy(dtype=object))
        uniques = list(found)
    width = var.width or 0
    cats: list[str] = []
    too_long: list[str] = []
    for u in uniques:
        text = _decode(str(u).encode("latin-1")).strip(" \t").replace('"', "")
        if len(text) > width:
            too_long.append(text)
        cats.append(text.rjust(width))
    if too_long:
        log.append(
            f"warning: {path.name}: {len(too_long)} code(s) of {var.name} are longer than its "
            f"width {width} (e.g. '{too_long[0]}'); kept unchanged"
        )
    c, u = _sorted_categories(codes, cats)
    return CategoricalColumn(c.astype(np.int32, copy=False), u)


def _free_numeric(
    col: pd.Series,
    var: Variable,
    path: Path,
    sep: str,
    line_of,
    field_no: int,
    log: list[str],
    column_of=None,
) -> np.ndarray:
    """Decimal numbers; blank → 0 (logged); enclosing quotes dropped; decimal comma accepted
    when sep ≠ ','. Infinities, NaN and numbers beyond the float range are refused."""
    import pandas as pd

    values = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64, copy=True)
    bad = ~np.isfinite(values)
    if bad.any():
        sub = col[bad].str.strip(" \t")
        quoted = (sub.str.len() >= 2) & sub.str.startswith('"') & sub.str.endswith('"')
        sub = sub.mask(quoted, sub.str[1:-1].str.strip(" \t"))
        blank = sub == ""
        sub = sub.mask(blank, "0")
        if sep != ",":
            comma = (sub.str.count(",") == 1) & ~sub.str.contains(".", regex=False)
            sub = sub.mask(comma, sub.str.replace(",", ".", regex=False))
        fixed = pd.to_numeric(sub, errors="coerce").to_numpy(dtype=np.float64)
        values[bad] = fixed
        still = ~np.isfinite(values)
        if still.any():
            r = int(np.flatnonzero(still)[0])
            raise InputError(
                f"expected a finite number in field {field_no} (variable {var.name}), "
                f"got {_shown(col.iloc[r].strip())}",
                file=path,
                line=line_of(r),
                column=column_of(r, field_no) if column_of is not None else None,
            )
        if blank.any():
            first = int(np.flatnonzero(bad)[int(np.flatnonzero(blank.to_numpy())[0])])
            log.append(
                f"warning: {path.name}: {int(blank.sum())} record(s) have an empty {var.name} "
                f"field (field {field_no}), read as 0 (first: line {line_of(first)})"
            )
    return values


def _shown(text: str) -> str:
    """A field as quoted text; control characters as escapes."""
    return repr(text) if any(ord(c) < 32 for c in text) else f"'{text}'"


def _codes_where(col: CategoricalColumn, pred) -> tuple[int, int, str] | None:
    """(records, first record, first such code) of the codes for which `pred` holds."""
    odd = [k for k, c in enumerate(col.categories) if pred(c)]
    if not odd:
        return None
    hit = np.isin(col.codes, odd)
    return int(hit.sum()), int(np.flatnonzero(hit)[0]), col.categories[odd[0]]


def _warn_blank_holdings(
    var: Variable, data: MicroData, path: Path, notes: Notes | None = None
) -> None:
    """A blank holding code is no holding: consecutive records with it count as one holding
    (argusqt/docs/formats.md §2.3), so their contributions are added up by holding-level rules."""
    found = _codes_where(data.categorical[var.name], lambda c: not c.strip())
    if found is None:
        return
    first = data.line_of(found[1])
    own = Notes() if notes is None else notes
    own.add(
        ("blank holding", var.name),
        found[0],
        lambda count: (
            f"warning: {path.name}: {count} record(s) have a blank holding code "
            f"({var.name}; first: line {first}); consecutive ones count as "
            "one holding in holding-level rules"
        ),
    )
    if notes is None:
        data.log.extend(own.lines())


def _check_holding_contiguous(var: Variable, data: MicroData, path: Path) -> None:
    """argusqt/docs/formats.md §2.3: records of one holding must be contiguous; a code that comes
    back is logged."""
    codes = data.categorical[var.name].codes
    if codes.shape[0] < 2:
        return
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    if starts.shape[0] == np.unique(codes).shape[0]:
        return
    run_codes = codes[starts]
    seen_before = np.zeros(run_codes.shape[0], dtype=bool)
    order = np.argsort(run_codes, kind="stable")
    dup = np.concatenate(([False], run_codes[order][1:] == run_codes[order][:-1]))
    seen_before[order] = dup
    first = int(starts[np.flatnonzero(seen_before)[0]])
    code = data.categorical[var.name].categories[int(codes[first])]
    data.log.append(holding_back(path, data.line_of(first), code, var.name))


def holding_back(path: Path, line: int, code: str, name: str) -> str:
    """The warning for a holding whose records are not contiguous."""
    return (
        f"warning: {path.name}, line {line}: holding '{code}' of {name} "
        "comes back after other holdings; holding records must be contiguous (each run "
        "is a separate holding for τ-Argus)"
    )


def _warn_empty_lines(data: MicroData, path: Path, notes: Notes | None = None) -> None:
    """Empty lines are not records; one may be a record emptied by damage, so their count is
    logged (the line end that closes the file does not make an empty line)."""
    lines = data.record_lines
    assert lines is not None
    empty = data.n_lines - lines.shape[0]
    if empty <= 0:
        return
    gaps = np.flatnonzero(np.diff(np.concatenate(([0], lines))) > 1)
    first = data.line0 + (int(lines[gaps[0]] - 1) if gaps.size else int(lines[-1]) + 1)
    own = Notes() if notes is None else notes
    own.add(
        ("empty lines",),
        empty,
        lambda empty: f"warning: {path.name}: {empty} empty line(s) skipped (first: line {first})",
    )
    if notes is None:
        data.log.extend(own.lines())


def _check_sum_finite(var: Variable, data: MicroData, path: Path, kind: str) -> None:
    """Sums of a column must stay finite: an overflow would reach the tables and solvers."""
    values = data.numeric[var.name]
    with np.errstate(over="ignore"):
        total = float(np.sum(np.abs(values)))
    if np.isfinite(total):
        return
    r = int(np.argmax(np.abs(values)))
    raise sum_overflow(var, float(values[r]), data.line_of(r), path, kind)


def sum_overflow(var: Variable, largest: float, line: int, path: Path, kind: str) -> InputError:
    """The error for a column whose sum is beyond the float range, at its largest value."""
    where = f"columns {var.start}-{var.start + var.width - 1}" if kind == "fixed" else "its field"  # type: ignore[operator]
    return InputError(
        f"the values of {var.name} ({where}) are too large to add up: their sum is beyond "
        f"the largest number a computer can hold (about 1.8e308); the largest, "
        f"{largest:g}, is here. Rescale the variable (e.g. thousands)",
        file=path,
        line=line,
        column=var.start if kind == "fixed" else None,
    )


def _warn_control_codes(
    var: Variable, data: MicroData, path: Path, notes: Notes | None = None
) -> None:
    """Codes with control characters (NUL, ESC, …) come from damaged files, never from a
    classification: they are kept (τ-Argus would) but logged with the first line."""
    found = _codes_where(data.categorical[var.name], lambda c: control_char_at(c) is not None)
    if found is None:
        return
    first, code = data.line_of(found[1]), found[2]
    own = Notes() if notes is None else notes
    own.add(
        ("control", var.name),
        found[0],
        lambda count: (
            f"warning: {path.name}: {count} record(s) of {var.name} have a code with "
            f"control characters, e.g. {code!r} (first: line {first}); "
            "they are kept as codes"
        ),
    )
    if notes is None:
        data.log.extend(own.lines())


# ---------------------------------------------------------------------------- entry point
def read_microdata(
    meta: Metadata,
    path: str | Path,
    variables: list[str] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> MicroData:
    """Load the named variables (default: all) of a fixed- or free-format microdata file.

    Explanatory, holding and request variables (and variables without a numeric role)
    become categorical columns; numeric and weight variables float64 columns; a variable
    that is both explanatory and numeric gets both. Raises InputError with file and line
    for unreadable numbers or wrong field counts; Cancelled when `cancel` fires (there is
    no safe partial result of a file read).
    """
    path = Path(path)
    if meta.kind == "tabular":
        raise SpecificationError(
            "this metadata describes tabular data (open the data file as a table); for "
            "microdata every variable line needs its position/width",
            file=meta.path,
        )
    chosen = meta.variables if variables is None else [meta.variable(n) for n in variables]
    chosen = list({id(v): v for v in chosen}.values())
    # a folder, a device, UTF-16 or binary content is refused at the first block
    with open_text(path, "microdata file") as fh:
        try:
            raw = fh.read()
        except OSError as exc:
            raise InputError(
                f"cannot read the microdata file ({exc.strerror})", file=path
            ) from None
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    result = MicroData(path=path, n_records=0)
    clock = Stopwatch()
    progress(ProgressEvent(f"Reading {path.name}", fraction=0.0))
    if meta.kind == "fixed":
        _read_fixed(meta, path, raw, chosen, result, progress, cancel)
    else:
        _read_free(meta, path, _normalise_newlines(raw), chosen, result, progress, cancel)
    if result.n_records == 0:
        result.log.append(f"warning: {path.name} has no records")
    elif result.record_lines is not None:
        _warn_empty_lines(result, path)
    for var in chosen:
        if var.name in result.numeric:
            _check_sum_finite(var, result, path, meta.kind)
        if var.name in result.categorical:
            _warn_control_codes(var, result, path)
    for var in chosen:
        if var.holding and var.name in result.categorical:
            _warn_blank_holdings(var, result, path)
            _check_holding_contiguous(var, result, path)
    progress(
        ProgressEvent(
            f"Read {result.n_records} records of {path.name}",
            fraction=1.0,
            elapsed=clock.elapsed,
        )
    )
    return result
