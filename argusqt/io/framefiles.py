"""Microdata read from a data frame written as τ-Argus files: a fixed-width data file and its
generated `.rda` (with `.hrc` and `.cdl` side files), so a session or batch file can name them.

The files reproduce the frame's tables exactly (docs/design.md, D-29:
saving a session opened from a data frame): codes are written as the frame reader padded them (left-padded to the
variable's width), so the fixed-format reader gives the same codes; numbers as the shortest
text that reads back to the same float64 (pyarrow's cast, round-trip exact).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from argusqt.errors import SpecificationError
from argusqt.io.codelists import hierarchy_entries
from argusqt.io.confidential import comment_banner
from argusqt.io.hrc import hrc_text
from argusqt.io.microdata import MicroData
from argusqt.io.rda import rda_text
from argusqt.model.metadata import Metadata, Variable

#: suffix of the files' stem: `work.aqs` → `work_data.asc`, `work_data.rda`, …
STEM_SUFFIX = "_data"


def frame_file_paths(beside: Path) -> tuple[Path, Path]:
    """The data and metadata paths written for a session or batch file at `beside`."""
    stem = beside.with_name(beside.stem + STEM_SUFFIX)
    return stem.with_suffix(".asc"), stem.with_suffix(".rda")


def _chunks(micro: Any) -> Iterator[MicroData]:
    if isinstance(micro, MicroData):
        yield micro
    else:  # ChunkedMicroData: one pass over the file
        yield from micro.iter_chunks()


def _fixed_bytes(texts: list[bytes] | np.ndarray, width: int) -> np.ndarray:
    """(k, width) uint8 matrix of byte strings, blank-filled on the right."""
    arr = np.asarray(texts, dtype=f"S{width}")  # numpy pads S-strings with NUL bytes
    mat = arr.view(np.uint8).reshape(len(arr), width).copy()
    mat[mat == 0] = 32
    return mat


def _number_texts(values: np.ndarray) -> np.ndarray:
    """The shortest round-trip text of each float64 (pyarrow's cast; '1e-7' style exponents
    read back exactly by the fixed-format reader's exact path), as an S-array."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    text = pc.cast(pa.array(values, type=pa.float64()), pa.string())
    return np.asarray(text.to_numpy(zero_copy_only=False), dtype=object).astype(bytes)


def _code_field(var: Variable, categories: list[str]) -> tuple[np.ndarray, int]:
    """The byte field of each category and the field width (bytes; trailing blanks fill up
    to it and are removed again by the reader)."""
    encoded = [c.encode("utf-8") for c in categories]
    width = max([1, *(len(e) for e in encoded)])
    return _fixed_bytes(encoded, width), width


def _check_both(var: Variable, codes: list[str], ids: np.ndarray, values: np.ndarray) -> None:
    """A column both explanatory and numeric is written once, as its codes: they must read
    back to its numbers."""
    import pandas as pd

    as_numbers = pd.to_numeric(pd.Series(codes).str.strip(), errors="coerce").to_numpy()
    if len(codes) and not np.array_equal(as_numbers[ids], values):
        raise SpecificationError(
            f"column {var.name!r} is both explanatory and numeric, and its codes do not write "
            "its numbers exactly; give the numeric role to a copy of the column"
        )


def microdata_files(
    meta: Metadata, micro: Any, data_path: Path, rda_path: Path
) -> dict[Path, bytes]:
    """The files (path → bytes) of fixed-width data, `.rda`, `.hrc` and `.cdl` that give
    the same tables as the frame's `meta` and `micro`."""
    log: list[str] = []
    variables = [copy.deepcopy(v) for v in meta.variables]
    chunks = list(_chunks(micro))
    fields: dict[str, tuple[list[np.ndarray], int]] = {}
    for v in variables:
        if v.categorical:
            cats = chunks[0].categorical[v.name].categories if chunks else []
            table, width = _code_field(v, list(cats))
            parts = [table[c.categorical[v.name].codes] for c in chunks]
            for c in chunks if v.is_number else []:
                col = c.categorical[v.name]
                _check_both(v, list(col.categories), col.codes, c.numeric[v.name])
            fields[v.name] = (parts, width)
        else:
            texts = [_number_texts(c.numeric[v.name]) for c in chunks]
            width = max([1, *(int(t.dtype.itemsize) for t in texts if t.size)])
            fields[v.name] = ([_fixed_bytes(t, width) for t in texts], width)
    start = 1
    for v in variables:
        v.start, v.width = start, fields[v.name][1]
        start += v.width
    n = sum(c.n_records for c in chunks)
    out: dict[Path, bytes] = {}
    rows = np.empty((n, start), dtype=np.uint8)  # start - 1 field bytes + the newline
    rows[:, -1] = 10
    for v in variables:
        parts, width = fields[v.name]
        lo = v.start - 1  # type: ignore[operator]
        rows[:, lo : lo + width] = np.concatenate(parts) if parts else np.zeros((0, width))
    out[data_path] = rows.tobytes()
    for v in variables:
        side = rda_path.with_name(f"{rda_path.stem}_{_file_part(v.name)}")
        if v.hierarchical and (v.tree is not None or v.hier_file is not None):
            if v.tree is not None:
                entries, lead = list(v.tree), "@"
            else:  # a copy of the user's `.hrc`: the folder holds everything it needs
                entries = [(d, c) for d, c, _ in hierarchy_entries(v, meta, log)]
                lead = v.hier_lead or "@"
            hrc = side.with_suffix(".hrc")
            out[hrc] = hrc_text(entries, lead).encode("utf-8")
            v.tree, v.hier_file, v.hier_lead = None, hrc.name, lead
        if v.labels:
            cdl = side.with_suffix(".cdl")
            out[cdl] = "".join(f"{c},{label}\n" for c, label in v.labels.items()).encode("utf-8")
            v.labels, v.codelist = None, cdl.name
    fixed = Metadata(path=rda_path, kind="fixed", variables=variables)
    banner = comment_banner(f"{data_path.name} holds the microdata records (from a data frame)")
    out[rda_path] = (banner + rda_text(fixed)).encode("utf-8")
    return out


def table_file_paths(beside: Path, k: int, n: int) -> tuple[Path, Path]:
    """The table and metadata paths of the `k`-th of `n` ready tables saved next to `beside`."""
    stem = beside.with_name(beside.stem + "_table" + (str(k) if n > 1 else ""))
    return stem.with_suffix(".tab"), stem.with_suffix(".rda")


def table_files(tab: Path, rda: Path, tab_out: Path, rda_out: Path) -> dict[Path, bytes]:
    """A ready table's `.tab` and `.rda` (written by the Python API into a temporary folder)
    as files next to a session or batch file, with copies of the `.hrc`/`.cdl` they name."""
    from argusqt.io.rda import read_rda
    from argusqt.io.text import resolve_path

    meta = read_rda(rda, kind_hint="tabular")
    log: list[str] = []
    out: dict[Path, bytes] = {tab_out: tab.read_bytes()}
    for v in meta.variables:
        side = rda_out.with_name(f"{rda_out.stem}_{_file_part(v.name)}")
        for attr, suffix in (("hier_file", ".hrc"), ("codelist", ".cdl")):
            name = getattr(v, attr)
            if name is None:
                continue
            copy_to = side.with_suffix(suffix)
            out[copy_to] = resolve_path(name, rda, log, line=v.line).read_bytes()
            setattr(v, attr, copy_to.name)
    banner = comment_banner(f"{tab_out.name} holds the cells of a table (from a data frame)")
    out[rda_out] = (banner + rda_text(meta)).encode("utf-8")
    return out


def _file_part(name: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_") or "var"


def write_microdata_files(meta: Metadata, micro: Any, beside: Path) -> list[Path]:
    """Write the frame's microdata as τ-Argus files next to `beside` as one atomic set;
    returns [data, metadata, side files…]."""
    from argusqt.io.atomic import atomic_write_set

    data_path, rda_path = frame_file_paths(beside)
    files = microdata_files(meta, micro, data_path, rda_path)
    atomic_write_set(files)
    return [data_path, rda_path, *(p for p in files if p not in (data_path, rda_path))]


__all__ = [
    "frame_file_paths",
    "microdata_files",
    "table_file_paths",
    "table_files",
    "write_microdata_files",
]
