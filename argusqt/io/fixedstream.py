"""Fixed-format microdata too large to hold in memory: read a part at a time, only the
variables the tables need, when the tables are computed (docs/design.md, "Streamed
fixed-format microdata").

Each part is a run of whole lines parsed by the in-memory reader (`io.microdata`), so every
check and warning is the same; warnings are added up over the parts (counts add, the first
line is the file's), errors name the line in the file. Category ids are global: a part's
codes are numbered on from the parts before, and tabulation merges the parts' fine cells
(`model.tabulate.build_tables_chunked`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import field
from pathlib import Path

import numpy as np

from argusqt.dataclass import dataclass
from argusqt.errors import InputError
from argusqt.io.microdata import (
    CategoricalColumn,
    HoldingRuns,
    MicroData,
    Notes,
    _read_fixed,
    _warn_blank_holdings,
    _warn_control_codes,
    _warn_empty_lines,
    continued_runs,
    holding_back,
    read_microdata,
    sum_overflow,
)
from argusqt.io.text import open_text
from argusqt.model.metadata import Metadata, Variable
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, no_progress

#: fixed-format files larger than this are streamed: the in-memory read peaks at about 3.6
#: times the file (the text, the fields' bytes, the columns and the factorising)
STREAM_BYTES = 64 << 20
#: bytes of the file parsed at a time (whole lines; a longer line is read whole)
PART_BYTES = 8 << 20


def open_microdata(
    meta: Metadata,
    path: str | Path,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> MicroData | StreamedMicroData:
    """Every variable in memory, or, for a large fixed-format file, a streamed reader.

    Data with a record key stays in memory: the cell key method sums the keys of every
    record of a cell, which the streamed parts do not keep (argusqt/docs/methods.md §16.1)."""
    path = Path(path)
    keyed = meta.record_key is not None
    if meta.kind == "fixed" and not keyed and path.is_file() and path.stat().st_size > STREAM_BYTES:
        with open_text(path, "microdata file") as fh:  # binary or UTF-16 refused here
            head = fh.read(PART_BYTES)
        if b"\n" in head:  # else lines end in CR only: read in memory
            return StreamedMicroData(path, meta)
    return read_microdata(meta, path, progress=progress, cancel=cancel)


class _Categories:
    """The codes of one variable over all parts: global id = order of first appearance."""

    def __init__(self) -> None:
        self.codes: list[str] = []
        self.index: dict[str, int] = {}
        self.first_line: list[int] = []

    def ids(self, col: CategoricalColumn, part: MicroData) -> np.ndarray:
        """Global ids of a part's column; new codes learn the line of their first record."""
        new = [j for j, c in enumerate(col.categories) if c not in self.index]
        if new:
            present, first = np.unique(col.codes, return_index=True)
            where = dict(zip(present.tolist(), first.tolist(), strict=True))
            for j in new:
                if j in where:  # a part's categories are the codes it has
                    code = col.categories[j]
                    self.index[code] = len(self.codes)
                    self.codes.append(code)
                    self.first_line.append(part.line_of(where[j]))
        lut = np.array([self.index.get(c, -1) for c in col.categories], dtype=np.int32)
        return lut[col.codes] if col.codes.size else col.codes.astype(np.int32)


class _Holdings:
    """Holding ids numbered across parts, and the check that a holding's records are
    contiguous (argusqt/docs/formats.md §2.3) over the whole file."""

    def __init__(self, var: Variable) -> None:
        self.var = var
        self.last: tuple[int, int] | None = None
        self.closed = np.zeros(0, dtype=bool)  # holdings (global ids) whose records ended
        self.warned = False

    def runs(self, ids: np.ndarray, part: MicroData, cats: _Categories, notes: Notes) -> None:
        prev = self.last
        runs, self.last = continued_runs(ids, prev)
        part.holding_runs = HoldingRuns(runs)  # type: ignore[method-assign]
        if not ids.size:
            return
        starts = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1])))
        codes = ids[starts]
        if prev is not None and prev[0] == int(codes[0]):
            starts, codes = starts[1:], codes[1:]  # the previous part's holding goes on
        elif prev is not None:
            self._close(np.array([prev[0]]))
        if not self.warned and codes.size:
            if self.closed.size <= codes.max():
                self.closed = np.concatenate(
                    [self.closed, np.zeros(int(codes.max()) + 1 - self.closed.size, bool)]
                )
            back = self.closed[codes]
            order = np.argsort(codes, kind="stable")
            dup = np.zeros(codes.size, dtype=bool)
            dup[order[1:]] = codes[order][1:] == codes[order][:-1]
            hit = np.flatnonzero(back | dup)
            if hit.size:
                self.warned = True
                text = holding_back(
                    part.path,
                    part.line_of(int(starts[hit[0]])),
                    cats.codes[int(codes[hit[0]])],
                    self.var.name,
                )
                notes.add(("holding back", self.var.name), 0, lambda _: text)
        self._close(codes[:-1])

    def _close(self, codes: np.ndarray) -> None:
        if not codes.size:
            return
        if self.closed.size <= codes.max():
            grow = int(codes.max()) + 1 - self.closed.size
            self.closed = np.concatenate([self.closed, np.zeros(grow, bool)])
        self.closed[codes] = True


@dataclass(eq=False)
class StreamedMicroData:
    """A large fixed-format microdata file: nothing is held but the codes met so far;
    tabulation reads the file again per compute, a part at a time (`iter_chunks`)."""

    path: Path
    meta: Metadata
    n_records: int | None = None  # known after the first complete read
    log: list[str] = field(default_factory=list)  # nothing is read when the file is opened
    #: warnings of the last complete read (tabulation logs them)
    pass_log: list[str] = field(default_factory=list)
    categories: dict[str, _Categories] = field(default_factory=dict)

    def has(self, name: str) -> bool:
        return self.meta.find(name) is not None

    def _cats(self, name: str) -> _Categories:
        return self.categories.setdefault(name, _Categories())

    def final_categories(self, name: str) -> list[str]:
        return list(self._cats(name).codes)

    def first_line_of(self, name: str):
        """category id → line of its first record in the file."""
        lines = self._cats(name).first_line
        return lambda j: lines[j]

    def empty_chunk(self) -> MicroData:
        data = MicroData(path=self.path, n_records=0)
        for var in self.meta.variables:
            if var.categorical:
                data.categorical[var.name] = CategoricalColumn(
                    np.zeros(0, np.int32), self.final_categories(var.name)
                )
            if var.is_number:
                data.numeric[var.name] = np.zeros(0)
        return data

    def iter_chunks(
        self,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken | None = None,
        names: Sequence[str] | None = None,
    ) -> Iterator[MicroData]:
        """The file's records a part at a time, with the variables `names` (default: all)."""
        meta, path = self.meta, self.path
        wanted = meta.variables if names is None else [meta.variable(n) for n in names]
        variables = list({id(v): v for v in wanted}.values())
        notes = Notes()
        holding = next((v for v in variables if v is meta.holding), None)
        holdings = _Holdings(holding) if holding is not None else None
        sums = {v.name: _Sum() for v in variables if v.is_number}
        size = max(path.stat().st_size, 1)
        n_records = done = line0 = 0
        progress(ProgressEvent(f"Reading {path.name}", fraction=0.0))
        for part_bytes in _parts(path):
            if cancel is not None and cancel.cancelled:
                return
            part = MicroData(path=path, n_records=0, line0=line0)
            _read_fixed(meta, path, part_bytes, variables, part, no_progress, cancel, notes, line0)
            if part.record_lines is not None:
                _warn_empty_lines(part, path, notes)
            for var in variables:
                if var.name in part.categorical:
                    col = part.categorical[var.name]
                    _warn_control_codes(var, part, path, notes)
                    if var is holding:
                        _warn_blank_holdings(var, part, path, notes)
                    cats = self._cats(var.name)
                    ids = cats.ids(col, part)
                    part.categorical[var.name] = CategoricalColumn(ids, list(cats.codes))
                    if holdings is not None and var is holding:
                        holdings.runs(ids, part, cats, notes)
                if var.name in part.numeric and part.n_records:
                    sums[var.name].add(part.numeric[var.name], part)
            n_records += part.n_records
            line0 += part.n_lines
            done += len(part_bytes)
            progress(ProgressEvent(f"Reading {path.name}", fraction=min(done / size, 1.0)))
            yield part
        for var in variables:
            acc = sums.get(var.name)
            if acc is not None and not np.isfinite(acc.total):
                raise sum_overflow(var, acc.largest, acc.line, path, "fixed")
        self.n_records = n_records
        head = [f"{path.name}: {n_records:,} records read (streamed, {len(variables)} variables)"]
        if not n_records:
            head.append(f"warning: {path.name} has no records")
        self.pass_log = head + notes.lines()


@dataclass
class _Sum:
    """Σ|x| of a numeric column over the parts (it must stay finite), and its largest |x|
    with the line, for the message when it does not."""

    total: float = 0.0
    largest: float = 0.0
    line: int = 0

    def add(self, values: np.ndarray, part: MicroData) -> None:
        with np.errstate(over="ignore"):
            self.total += float(np.sum(np.abs(values)))
        r = int(np.argmax(np.abs(values)))
        if abs(float(values[r])) > abs(self.largest) or not self.line:
            self.largest, self.line = float(values[r]), part.line_of(r)


def _parts(path: Path) -> Iterator[bytes]:
    """The file in runs of whole lines of about PART_BYTES (a byte-order mark dropped)."""
    try:
        with path.open("rb") as fh:
            rest = fh.read(PART_BYTES)
            if rest.startswith(b"\xef\xbb\xbf"):
                rest = rest[3:]
            while True:
                more = fh.read(PART_BYTES)
                if not more:
                    if rest:
                        yield rest
                    return
                data = rest + more
                cut = data.rfind(b"\n", 0, len(rest)) + 1  # the part ends in `rest`
                if cut <= 0:  # a line longer than a part: up to the last line end
                    cut = data.rfind(b"\n") + 1
                if cut <= 0:
                    rest = data
                    continue
                yield data[:cut]
                rest = data[cut:]
    except OSError as exc:
        raise InputError(f"cannot read the microdata file ({exc.strerror})", file=path) from None
