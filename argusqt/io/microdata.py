"""Read fixed-format and free-format microdata into columns (formats.md §2, docs/design.md).

Columns, never records: categorical fields become int32 category ids + the distinct codes,
numeric fields float64 arrays, all built with numpy/pandas vector operations.

Code normalisation (decided from §2.1, §4.1 and the data): a fixed-format code is the raw
substring of its columns with **trailing blanks removed** and leading blanks kept. Within one
fixed-width field every raw substring has the same length, so removing trailing blanks never
merges two different codes (`" 1"` ≠ `"1 "` → `" 1"` ≠ `"1"`), and it makes codes equal to
`.hrc` codes, which lose trailing blanks (region2.hrc `Os `, the README: "trailing blanks are
ignored"). A field that is entirely blank keeps its blanks (an empty code would read back as
the total in tabular input). Free-format fields are trimmed, lose `"` and are left-padded
to the declared width (§2.2).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from argusqt.errors import Cancelled, InputError, SpecificationError
from argusqt.model.codelist import byte_order_key
from argusqt.model.metadata import Metadata, Variable
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, Stopwatch, no_progress

BLANK = 32
#: Records per block when gathering fields of lines of unequal length (bounded memory).
GATHER_CELLS = 8_000_000


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

    def line_of(self, record: int) -> int:
        """Line number (1-based) of record `record` (0-based) in the data file."""
        if self.record_lines is not None:
            return int(self.record_lines[record])
        return record + 1


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

    Hash-based (pandas.factorize) on 8-byte words, combined word by word: O(n·w/8).
    """
    n, w = mat.shape
    codes: np.ndarray | None = None
    for off in range(0, max(w, 1), 8):
        part = mat[:, off : off + 8]
        word = np.zeros((n, 8), dtype=np.uint8)
        word[:, : part.shape[1]] = part
        key = word.view(np.uint64).ravel()
        c, u = pd.factorize(key)
        if codes is None:
            codes = c
        else:
            codes, _ = pd.factorize(codes * len(u) + c)
    assert codes is not None
    if n == 0:
        return codes.astype(np.int32), np.zeros(0, dtype=np.int64)
    # factorize numbers categories in order of first appearance
    running = np.maximum.accumulate(codes)
    first = np.flatnonzero(np.concatenate(([True], running[1:] > running[:-1])))
    return codes, first


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


def _numeric_from_bytes(mat: np.ndarray, var: Variable, path: Path, line_of) -> np.ndarray:
    """Parse a (n, w) byte matrix as decimal numbers; blank → 0; error names the line."""
    n, w = mat.shape
    blank = np.all((mat == BLANK) | (mat == 9) | (mat == 0), axis=1)
    if blank.any():
        mat = mat.copy()
        mat[blank] = BLANK
        mat[blank, w - 1] = ord("0")
    strings = np.ascontiguousarray(mat).view(f"S{w}").ravel()
    try:
        values = strings.astype(np.float64)
        bad = ~np.isfinite(values)
    except ValueError:
        text = pd.Series(strings).str.decode("latin-1")
        values = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(values)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        shown = _decode(strings[r]).strip()
        raise InputError(
            f"expected a number in column {var.start}-{var.start + w - 1} "
            f"(variable {var.name}), got '{shown}'",
            file=path,
            line=line_of(r),
        )
    return values


def _warn_numeric_missing(var: Variable, values: np.ndarray, log: list[str], path: Path) -> None:
    """§1.1: a numeric field equal to its declared missing value is kept, with a warning."""
    for m in dict.fromkeys(var.missing):
        try:
            mv = float(m.strip())
        except ValueError:
            continue
        hits = int(np.count_nonzero(values == mv))
        if hits:
            log.append(
                f"warning: {path.name}: {hits} record(s) of numeric variable {var.name} equal "
                f"its declared missing value {m.strip()}; kept as the number {m.strip()}"
            )


# ---------------------------------------------------------------------------- fixed format
class _FixedLines:
    """The records of a fixed-format file and a way to cut one field out of all of them."""

    def __init__(self, data: bytes) -> None:
        self.arr = np.frombuffer(data, dtype=np.uint8)
        starts, lengths = _line_bounds(self.arr)
        keep = lengths > 0
        self.record_lines: np.ndarray | None = None
        if not keep.all():
            self.record_lines = np.flatnonzero(keep) + 1
            starts, lengths = starts[keep], lengths[keep]
        self.starts = starts
        self.lengths = lengths
        self.n = int(starts.shape[0])
        self.max_len = int(lengths.max()) if self.n else 0
        self.view: np.ndarray | None = None
        if self.n and int(lengths.min()) == self.max_len and self.record_lines is None:
            length = self.max_len
            self.view = np.lib.stride_tricks.as_strided(
                self.arr, shape=(self.n, length), strides=(length + 1, 1), writeable=False
            )

    def line_of(self, record: int) -> int:
        return int(self.record_lines[record]) if self.record_lines is not None else record + 1

    def field(self, start: int, width: int) -> np.ndarray:
        """(n, width) uint8 matrix of columns [start, start+width), blank-padded."""
        s = start - 1
        if self.view is not None:
            length = self.max_len
            if s + width <= length:
                return np.ascontiguousarray(self.view[:, s : s + width])
            out = np.full((self.n, width), BLANK, dtype=np.uint8)
            if s < length:
                out[:, : length - s] = self.view[:, s:length]
            return out
        out = np.empty((self.n, width), dtype=np.uint8)
        cols = s + np.arange(width, dtype=np.int64)
        block = max(1, GATHER_CELLS // max(width, 1))
        for b in range(0, self.n, block):
            st = self.starts[b : b + block]
            ln = self.lengths[b : b + block]
            valid = cols[None, :] < ln[:, None]
            idx = np.where(valid, st[:, None] + cols[None, :], 0)
            out[b : b + block] = np.where(valid, self.arr[idx], BLANK)
        return out


def _read_fixed(
    meta: Metadata,
    path: Path,
    data: bytes,
    variables: list[Variable],
    result: MicroData,
    progress: ProgressCallback,
    cancel: CancelToken | None,
) -> None:
    lines = _FixedLines(data)
    result.n_records = lines.n
    result.record_lines = lines.record_lines
    clock = Stopwatch()
    for k, var in enumerate(variables):
        if cancel is not None and cancel.cancelled:
            raise Cancelled("reading the microdata was cancelled", file=path)
        progress(
            ProgressEvent(
                f"Reading {var.name}", fraction=k / max(len(variables), 1), elapsed=clock.elapsed
            )
        )
        assert var.start is not None and var.width is not None
        if lines.n and var.start > lines.max_len:
            result.log.append(
                f"warning: {path.name}: variable {var.name} starts at column {var.start} but "
                f"no line is longer than {lines.max_len} characters; all its fields are blank"
            )
        mat = lines.field(var.start, var.width)
        if var.categorical:
            result.categorical[var.name] = _categorical_from_bytes(mat)
        if var.is_number:
            values = _numeric_from_bytes(mat, var, path, lines.line_of)
            _warn_numeric_missing(var, values, result.log, path)
            result.numeric[var.name] = values


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

    def line_of(r: int) -> int:
        return int(record_lines[r]) if record_lines is not None else r + 1

    index = {v.name: i for i, v in enumerate(meta.variables)}
    wanted = sorted({index[v.name] for v in variables})
    n_records = int(np.count_nonzero(nonblank))
    if n_records == 0:
        df = pd.DataFrame({i: pd.Series([], dtype=object) for i in wanted})
    else:
        try:
            df = pd.read_csv(
                io.BytesIO(data),
                sep=sep_b.decode("latin-1"),
                header=None,
                names=list(range(n_fields)),
                usecols=wanted,
                dtype=str,
                na_filter=False,
                quoting=csv.QUOTE_NONE,
                engine="c",
                encoding="latin-1",
                skip_blank_lines=True,
            )
        except (pd.errors.ParserError, ValueError) as exc:
            raise InputError(f"cannot split the records: {exc}", file=path) from None
    if len(df) != n_records:
        raise InputError(
            f"expected {n_records} records (non-empty lines), the parser found {len(df)}",
            file=path,
        )
    result.n_records = n_records
    clock = Stopwatch()
    for k, var in enumerate(variables):
        if cancel is not None and cancel.cancelled:
            raise Cancelled("reading the microdata was cancelled", file=path)
        progress(
            ProgressEvent(
                f"Reading {var.name}", fraction=k / max(len(variables), 1), elapsed=clock.elapsed
            )
        )
        col = df[index[var.name]]
        if var.categorical:
            result.categorical[var.name] = _free_categorical(col, var, result.log, path)
        if var.is_number:
            values = _free_numeric(col, var, path, sep, line_of, index[var.name] + 1)
            _warn_numeric_missing(var, values, result.log, path)
            result.numeric[var.name] = values


def _free_categorical(
    col: pd.Series, var: Variable, log: list[str], path: Path
) -> CategoricalColumn:
    """Trim blanks/tabs, drop `"`, left-pad to the width (§2.2) — on the distinct values only."""
    codes, uniques = pd.factorize(col.to_numpy(dtype=object))
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
    col: pd.Series, var: Variable, path: Path, sep: str, line_of, field_no: int
) -> np.ndarray:
    """Decimal numbers; blank → 0; quotes dropped; decimal comma accepted when sep ≠ ','."""
    values = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64, copy=True)
    bad = ~np.isfinite(values)
    if bad.any():
        sub = col[bad].str.strip(" \t").str.replace('"', "", regex=False)
        sub = sub.mask(sub == "", "0")
        if sep != ",":
            comma = (sub.str.count(",") == 1) & ~sub.str.contains(".", regex=False)
            sub = sub.mask(comma, sub.str.replace(",", ".", regex=False))
        fixed = pd.to_numeric(sub, errors="coerce").to_numpy(dtype=np.float64)
        values[bad] = fixed
        still = ~np.isfinite(values)
        if still.any():
            r = int(np.flatnonzero(still)[0])
            raise InputError(
                f"expected a number in field {field_no} (variable {var.name}), "
                f"got '{col.iloc[r].strip()}'",
                file=path,
                line=line_of(r),
            )
    return values


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
            "this metadata describes tabular data; open the data file as a table", file=meta.path
        )
    chosen = meta.variables if variables is None else [meta.variable(n) for n in variables]
    chosen = list({id(v): v for v in chosen}.values())
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError("microdata file not found", file=path) from None
    except OSError as exc:
        raise InputError(f"cannot read the microdata file ({exc.strerror})", file=path) from None
    data = _normalise_newlines(raw)
    del raw
    result = MicroData(path=path, n_records=0)
    clock = Stopwatch()
    progress(ProgressEvent(f"Reading {path.name}", fraction=0.0))
    if meta.kind == "fixed":
        _read_fixed(meta, path, data, chosen, result, progress, cancel)
    else:
        _read_free(meta, path, data, chosen, result, progress, cancel)
    progress(
        ProgressEvent(
            f"Read {result.n_records} records of {path.name}",
            fraction=1.0,
            elapsed=clock.elapsed,
        )
    )
    return result
