"""Microdata from a data frame (pandas, polars, pyarrow) or a Parquet/CSV file, through pyarrow.

Only the columns a table needs are read, in chunks of record batches: categorical columns
become category ids into one code list per variable that grows across chunks, numeric
columns float64 arrays. Small inputs (one chunk) give an ordinary `MicroData`; larger ones a
`ChunkedMicroData` that tabulation reads chunk by chunk (docs/design.md, D-30).

Codes are strings as given, trimmed (`"East"` stays `"East"`, in tables, files and Excel);
hierarchy codes are trimmed too, so an `.hrc` written for fixed-width data (` 1`) still
matches. Columns of numbers (integers without decimals) and digit-level variables are
left-padded to the longest code of the data or hierarchy, as free-format microdata is
(argusqt/docs/formats.md §2.2), so `1` sorts before `10` and level prefixes are positional.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

import numpy as np

from argusqt.dataclass import dataclass
from argusqt.errors import Cancelled, InputError, SpecificationError
from argusqt.io.microdata import (
    CategoricalColumn,
    HoldingRuns,
    MicroData,
    continued_runs,
)
from argusqt.model.metadata import Metadata, Variable
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, no_progress

#: records per chunk: 2M records of ~6 columns is ~100 MB of arrays while a chunk is tabulated
CHUNK_RECORDS = 2_000_000
#: bytes of CSV text pyarrow parses at once
CSV_BLOCK = 64 << 20


@dataclass
class Roles:
    """What each column is: the `.rda` of a data frame, in Python."""

    explanatory: list[str]
    numeric: list[str] = field(default_factory=list)  # response, shadow and cost variables
    weight: str | None = None
    holding: str | None = None
    request: str | None = None
    request_codes: tuple[str, ...] = ()
    #: variable → tree [(depth, code)] from an `.hrc` or parent/child pairs
    trees: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    hier_files: dict[str, Path] = field(default_factory=dict)  # variable → `.hrc` path
    hier_lead: dict[str, str] = field(default_factory=dict)
    levels: dict[str, list[int]] = field(default_factory=dict)  # variable → digits per level
    labels: dict[str, dict[str, str]] = field(default_factory=dict)
    total_codes: dict[str, str] = field(default_factory=dict)
    #: decimals of a numeric variable; by default the fewest that write its values exactly
    decimals: dict[str, int] = field(default_factory=dict)
    #: the cell key method (argusqt/docs/formats.md §1.5): the record key column, its
    #: decimals, and `<CKM>` options per numeric variable (model.cellkey.MagnitudeCKM)
    record_key: str | None = None
    record_key_decimals: int = 15
    ckm: dict[str, Any] = field(default_factory=dict)

    @property
    def categorical(self) -> list[str]:
        extra = [c for c in (self.holding, self.request) if c is not None]
        return list(dict.fromkeys([*self.explanatory, *extra]))

    @property
    def numbers(self) -> list[str]:
        extra = [c for c in (self.weight, self.record_key) if c is not None]
        return list(dict.fromkeys([*self.numeric, *extra]))


# ---------------------------------------------------------------------------- sources
def _pyarrow() -> Any:
    try:
        import pyarrow as pa  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - a dependency of argusqt
        raise SpecificationError(
            "reading data frames and Parquet/CSV files needs pyarrow: pip install pyarrow"
        ) from None
    return pa


class _Batches:
    """Record batches of the needed columns of a data frame or a file, and their total count."""

    def __init__(
        self, data: Any, columns: list[str], chunk: int, categorical: Sequence[str] = ()
    ) -> None:
        pa = _pyarrow()
        self.columns = columns
        self.categorical = set(categorical)
        self.chunk = chunk
        self.path: Path | None = None
        self.n_records: int | None = None
        self._source = data
        if isinstance(data, str | Path):
            self.path = Path(data)
            if not self.path.is_file():
                raise InputError("microdata file not found", file=self.path)
            suffix = self.path.suffix.lower()
            if suffix in (".parquet", ".pq"):
                import pyarrow.parquet as pq  # type: ignore[import-untyped]

                try:
                    schema = pq.read_schema(self.path)
                    # text codes straight from the file's dictionary pages: no string per record
                    text = [
                        c
                        for c in categorical
                        if c in schema.names
                        and (
                            pa.types.is_string(schema.field(c).type)
                            or pa.types.is_large_string(schema.field(c).type)
                        )
                    ]
                    # pre_buffer off: with it the reader kept every row group it had read (1.3 GB
                    # after 80M records, pyarrow 26), without it memory stays flat
                    self._file = pq.ParquetFile(self.path, read_dictionary=text, pre_buffer=False)
                except (pa.ArrowInvalid, OSError) as exc:
                    raise InputError(
                        f"not a readable Parquet file ({exc})", file=self.path
                    ) from None
                self._check(self._file.schema_arrow.names)
                self.n_records = self._file.metadata.num_rows
                self.kind = "parquet"
            elif suffix in (".csv", ".txt", ".tsv"):
                self.kind = "csv"
                self._check(self._csv_header())
            else:
                raise InputError(
                    "expected a Parquet (.parquet) or CSV (.csv) file, or an .rda with its data "
                    "file",
                    file=self.path,
                )
            return
        table = _as_arrow(data, columns)
        self._check(_all_columns(data, table))
        self._table = table.select(columns)
        self.n_records = table.num_rows
        self.kind = "frame"

    def _csv_header(self) -> list[str]:
        import pyarrow.csv as pcsv  # type: ignore[import-untyped]

        with pcsv.open_csv(self.path, read_options=pcsv.ReadOptions(block_size=1 << 16)) as r:
            return list(r.schema.names)

    def _check(self, names: Sequence[str]) -> None:
        """Every needed column is there; else name the missing ones, every column the data
        has and the nearest name of each misspelt one."""
        import difflib

        missing = [c for c in self.columns if c not in names]
        if missing:
            where = f"{self.path}" if self.path else "the data frame"
            known = [str(n) for n in names]
            hints = []
            for c in missing:
                near = difflib.get_close_matches(str(c), known, n=1, cutoff=0.6)
                if not near:  # 'Region' for 'region': case differs only
                    near = [k for k in known if k.lower() == str(c).lower()][:1]
                if near:
                    hints.append(f"{near[0]!r}" + (f" for {c!r}" if len(missing) > 1 else ""))
            raise SpecificationError(
                f"column(s) {', '.join(map(repr, missing))} not found in {where}"
                + (f" (did you mean {', '.join(hints)}?)" if hints else "")
                + "; it has: "
                + ", ".join(known)
            )

    def __iter__(self) -> Iterator[Any]:
        if self.kind == "parquet":
            yield from self._file.iter_batches(batch_size=self.chunk, columns=self.columns)
        elif self.kind == "csv":
            import pyarrow as pa  # type: ignore[import-untyped]
            import pyarrow.csv as pcsv  # type: ignore[import-untyped]

            # types fixed up front: the streaming reader infers them from the first block, so a
            # code like 'Nr' (or a decimal) further down would fail a column inferred as int
            types = {
                c: pa.string() if c in self.categorical else pa.float64() for c in self.columns
            }
            conv = pcsv.ConvertOptions(include_columns=self.columns, column_types=types)
            opts = pcsv.ReadOptions(block_size=CSV_BLOCK)
            pending: list[Any] = []
            size = 0
            with pcsv.open_csv(self.path, read_options=opts, convert_options=conv) as reader:
                for batch in reader:
                    pending.append(batch)
                    size += batch.num_rows
                    if size >= self.chunk:
                        yield from pa.Table.from_batches(pending).to_batches(self.chunk)
                        pending, size = [], 0
            if pending:
                yield from pa.Table.from_batches(pending).to_batches()
        else:
            yield from self._table.to_batches(max_chunksize=self.chunk)


def _all_columns(data: Any, table: Any) -> list[str]:
    """Every column name of the user's frame (not only those read), for messages."""
    names = getattr(data, "columns", None)
    if names is None or isinstance(data, _pyarrow().Table):
        return list(table.column_names)
    return [str(n) for n in names]


def _as_arrow(data: Any, columns: list[str]) -> Any:
    """A pyarrow Table of the needed columns of a pandas, polars or pyarrow frame."""
    pa = _pyarrow()
    if isinstance(data, pa.Table):
        return data
    mod = type(data).__module__.split(".")[0]
    if mod == "polars":
        return data.select([c for c in columns if c in data.columns]).to_arrow()
    if mod == "pandas":
        have = [c for c in columns if c in data.columns]
        frame = data[have]
        try:
            return pa.Table.from_pandas(frame, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise InputError(f"a column of the data frame has mixed types ({exc})") from None
    raise SpecificationError(
        f"microdata must be a pandas or polars DataFrame, a pyarrow Table, or a path to a "
        f"Parquet/CSV file (or .rda + data file); got {type(data).__name__}"
    )


# ---------------------------------------------------------------------------- columns
def _code_texts(values: Any) -> list[str]:
    """Codes as text: integral numbers without decimals, text trimmed."""
    out = []
    for v in values:
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        out.append(str(v).strip())
    return out


class _Codes:
    """The growing code list of one categorical variable across chunks."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.codes: list[str] = []
        self.index: dict[str, int] = {}
        self.numeric = False  # a column of numbers (not text): its codes are right-aligned

    def encode(self, column: Any, offset: int, where: str) -> np.ndarray:
        """Global category id per record of one chunk's column."""
        import pyarrow as pa  # type: ignore[import-untyped]
        import pyarrow.compute as pc  # type: ignore[import-untyped]

        if column.null_count:
            first = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
            raise InputError(
                f"column {self.name!r} of {where} has {column.null_count} missing value(s) "
                f"(first in record {offset + first + 1}); give them a code (e.g. the variable's "
                "missing code)"
            )
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        if not pa.types.is_dictionary(column.type):
            column = pc.dictionary_encode(column)
        t = column.type.value_type
        if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
            self.numeric = True
        local = _code_texts(column.dictionary.to_pylist())
        lut = np.empty(len(local), dtype=np.int32)
        for j, code in enumerate(local):
            k = self.index.get(code)
            if k is None:
                k = self.index[code] = len(self.codes)
                self.codes.append(code)
            lut[j] = k
        idx = column.indices.to_numpy(zero_copy_only=False)
        return lut[idx] if len(lut) else np.zeros(len(idx), dtype=np.int32)


def _numbers(name: str, column: Any, offset: int, where: str) -> np.ndarray:
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)
            or pa.types.is_boolean(column.type) or pa.types.is_decimal(column.type)):  # fmt: skip
        try:
            column = pc.cast(column, pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise InputError(
                f"column {name!r} of {where} must hold numbers (it is a numeric variable) but "
                f"holds {column.type}"
            ) from None
    values = np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise InputError(
            f"column {name!r} of {where} has {bad.size} missing or infinite value(s) (first in "
            f"record {offset + int(bad[0]) + 1}); a numeric variable needs a number in every "
            "record"
        )
    return values


def _decimals(values: np.ndarray, most: int = 6) -> int:
    """The decimals a numeric column needs (an `.rda` declares them; a data frame does not):
    the fewest, up to `most`, that write every value of the first chunk exactly."""
    for d in range(most + 1):
        scaled = values * 10.0**d
        if np.all(np.abs(scaled - np.rint(scaled)) <= 1e-6 * np.maximum(1.0, np.abs(scaled))):
            return d
    return most


def tree_from_pairs(pairs: list[tuple[str, str | None]], var: str) -> list[tuple[int, str]]:
    """Pre-order (depth, code) from (child, parent) pairs. A child whose parent is None/empty,
    and a parent that is nobody's child ({"North": "NE"} without "NE"), hang under the total,
    in the order first named."""
    children: dict[str | None, list[str]] = {}
    child_set = {c for c, _ in pairs}
    implied: dict[str, None] = {}  # parents never given as a child, in order of appearance
    for child, parent in pairs:
        if parent is not None and parent not in child_set and parent not in implied:
            implied[parent] = None
            children.setdefault(None, []).append(parent)
        children.setdefault(parent, []).append(child)
    tree: list[tuple[int, str]] = []
    seen: set[str] = set()

    def walk(node: str | None, depth: int) -> None:
        for c in children.get(node, []):
            if c in seen:
                raise SpecificationError(f"hierarchy of {var}: code {c!r} appears twice")
            seen.add(c)
            tree.append((depth, c))
            walk(c, depth + 1)

    walk(None, 1)
    if len(seen) != len(child_set) + len(implied):
        cyc = sorted(child_set - seen)[:5]
        raise SpecificationError(f"hierarchy of {var}: codes {cyc} are in a cycle of parents")
    return tree


# ---------------------------------------------------------------------------- metadata
def frame_metadata(roles: Roles, path: Path | None) -> Metadata:
    """The metadata of a data frame: one variable per column that has a role."""
    variables: dict[str, Variable] = {}

    def var(name: str) -> Variable:
        if name not in variables:
            variables[name] = Variable(name=name, line=0)
        return variables[name]

    for name in roles.explanatory:
        v = var(name)
        v.recodeable = True
        if name in roles.total_codes:
            v.total_code, v.total_code_given = roles.total_codes[name], True
        if name in roles.labels:
            v.labels = {k.strip(): str(x) for k, x in roles.labels[name].items()}
        if name in roles.trees:
            v.hierarchical, v.tree = True, list(roles.trees[name])
        elif name in roles.hier_files:
            v.hierarchical = True
            v.hier_file = str(roles.hier_files[name])
            v.hier_lead = roles.hier_lead.get(name, "@")
        elif name in roles.levels:
            v.hierarchical, v.hierlevels = True, [int(x) for x in roles.levels[name] if x]
    for name in roles.numeric:
        v = var(name)
        v.numeric = True
        v.decimals = int(roles.decimals.get(name, 0))
    if roles.weight is not None:
        var(roles.weight).weight = True
    if roles.record_key is not None:
        from argusqt.model.cellkey import RecordKeyFiles

        v = var(roles.record_key)
        v.record_key, v.decimals, v.pfiles = True, roles.record_key_decimals, RecordKeyFiles()
    for name, options in roles.ckm.items():
        var(name).ckm = options
    if roles.holding is not None:
        var(roles.holding).holding = True
    if roles.request is not None:
        v = var(roles.request)
        v.request, v.request_codes = True, [str(c) for c in roles.request_codes]
    for v in variables.values():
        if sum((v.weight, v.holding, v.request, v.record_key, v.recodeable or v.numeric)) > 1:
            raise SpecificationError(
                f"column {v.name!r} has two roles (weight, holding, request, explanatory or "
                "numeric); a column may only be explanatory and numeric at once"
            )
    return Metadata(path=path, kind="free", variables=list(variables.values()))


def _width(var: Variable, codes: _Codes, meta: Metadata, log: list[str]) -> int:
    """The width codes are left-padded to: none for text (a data frame's codes are strings as
    given); for numbers and digit levels the longest data or hierarchy code, so `1` sorts
    before `10` and a digit-level prefix is positional."""
    if not (codes.numeric or var.uses_levels):
        return 0
    width = max((len(c) for c in codes.codes), default=1)
    if var.tree is not None:
        width = max([width, *(len(c.strip()) for _, c in var.tree)])
    elif var.hierlevels:
        width = max(width, sum(var.hierlevels))
    return width


def _in_memory_trees(meta: Metadata, roles: Roles, log: list[str]) -> None:
    """Read each `.hrc` given for a frame column into `Variable.tree`, codes trimmed: a data
    frame's codes are matched as given, whatever blanks the file's lines carry. The file name
    stays in `hier_file` for messages."""
    from argusqt.io.codelists import hierarchy_entries

    for name in roles.hier_files:
        v = meta.variable(name)
        entries = hierarchy_entries(v, meta, log)
        first: dict[str, int] = {}
        for i, (_, code, line) in enumerate(entries):
            leaf = i + 1 == len(entries) or entries[i + 1][0] <= entries[i][0]
            key = code.strip()
            if leaf and key in first:
                raise InputError(
                    f"leaf code {key!r} appears twice (first on line {first[key]}) once blanks "
                    "around codes are ignored, as they are for a data frame",
                    file=roles.hier_files[name],
                    line=line,
                )
            if leaf:
                first[key] = line
        v.tree = [(d, c.strip()) for d, c, _ in entries]


# ---------------------------------------------------------------------------- reading
@dataclass(eq=False)
class ChunkedMicroData:
    """Microdata too large for one chunk: tabulation reads it again per compute, a chunk at a
    time (`iter_chunks`), and sees each chunk as a `MicroData` with global category ids."""

    path: Path
    meta: Metadata
    roles: Roles
    batches: _Batches
    n_records: int
    codes: dict[str, _Codes]
    widths: dict[str, int]
    log: list[str] = field(default_factory=list)

    def has(self, name: str) -> bool:
        return name in self.roles.categorical or name in self.roles.numbers

    def iter_chunks(
        self,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken | None = None,
        names: Sequence[str] | None = None,
    ) -> Iterator[MicroData]:
        """The chunks in order (`names`: the variables wanted; every role column is read)."""
        yield from _chunks(self, progress, cancel)

    def final_categories(self, name: str) -> list[str]:
        w = self.widths[name]
        return [c.rjust(w) for c in self.codes[name].codes]

    def empty_chunk(self) -> MicroData:
        return _empty(self.path, self.roles, {n: self.final_categories(n) for n in self.codes})


def _empty(path: Path, roles: Roles, categories: Mapping[str, list[str]]) -> MicroData:
    data = MicroData(path=path, n_records=0)
    for name in roles.categorical:
        data.categorical[name] = CategoricalColumn(np.zeros(0, np.int32), list(categories[name]))
    for name in roles.numbers:
        data.numeric[name] = np.zeros(0)
    return data


def _chunks(
    src: ChunkedMicroData, progress: ProgressCallback, cancel: CancelToken | None
) -> Iterator[MicroData]:
    """One pass over the data: a MicroData per chunk, codes padded, holdings numbered across
    chunks (a holding goes on while its code does not change)."""
    where = str(src.path)
    offset = 0
    last_holding: tuple[int, int] | None = None  # (code id, run id) of the previous record
    padded = {n: src.final_categories(n) for n in src.codes}
    for batch in src.batches:
        if cancel is not None and cancel.cancelled:
            return
        chunk = MicroData(path=src.path, n_records=batch.num_rows)
        for name in src.roles.categorical:
            ids = src.codes[name].encode(batch.column(name), offset, where)
            chunk.categorical[name] = CategoricalColumn(ids, padded[name])
        for name in src.roles.numbers:
            chunk.numeric[name] = _numbers(name, batch.column(name), offset, where)
        if src.roles.holding is not None and batch.num_rows:
            ids = chunk.categorical[src.roles.holding].codes
            runs, last_holding = continued_runs(ids, last_holding)
            chunk.holding_runs = HoldingRuns(runs)  # type: ignore[method-assign]
        offset += batch.num_rows
        if src.n_records:
            progress(ProgressEvent(f"Tabulating {src.path.name}", fraction=offset / src.n_records))
        yield chunk


def read_frame(
    data: Any,
    roles: Roles,
    *,
    chunk_records: int | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> tuple[Metadata, MicroData | ChunkedMicroData]:
    """Metadata and columns of a data frame or a Parquet/CSV file (only the columns with a
    role). One pass learns the codes and checks every value; data of more than one chunk
    are then tabulated chunk by chunk (ChunkedMicroData), the rest is kept in memory."""
    columns = list(dict.fromkeys([*roles.categorical, *roles.numbers]))
    if not roles.explanatory:
        raise SpecificationError("give at least one explanatory variable")
    batches = _Batches(data, columns, chunk_records or CHUNK_RECORDS, roles.categorical)
    name = batches.path if batches.path is not None else Path("<data frame>")
    meta = frame_metadata(roles, batches.path)
    where = str(name)
    codes = {n: _Codes(n) for n in roles.categorical}
    log: list[str] = []
    progress(ProgressEvent(f"Reading {name.name}", fraction=0.0))
    n = 0
    kept: list[Any] = []
    for batch in batches:
        if cancel is not None and cancel.cancelled:
            raise Cancelled("reading the microdata was cancelled")
        for col in roles.categorical:
            codes[col].encode(batch.column(col), n, where)
        for col in roles.numbers:
            _numbers(col, batch.column(col), n, where)
        n += batch.num_rows
        if len(kept) < 2:
            kept.append(batch)
        if batches.n_records:
            progress(ProgressEvent(f"Reading {name.name}", fraction=n / batches.n_records))
    _in_memory_trees(meta, roles, log)
    widths = {v: _width(meta.variable(v), codes[v], meta, log) for v in roles.categorical}
    for col in roles.numeric:
        if col not in roles.decimals and kept:
            meta.variable(col).decimals = _decimals(_numbers(col, kept[0].column(col), 0, where))
    for v in meta.variables:
        if v.tree is not None:  # hierarchy codes padded like the data's (numbers only)
            v.tree = [(d, c.strip().rjust(widths[v.name])) for d, c in v.tree]
    big = ChunkedMicroData(name, meta, roles, batches, n, codes, widths, log)
    if len(kept) > 1:
        return meta, big
    # one chunk: an ordinary in-memory MicroData (recoding, holdings and the GUI as usual)
    if not kept:
        micro = big.empty_chunk()
    else:
        micro = next(_chunks(big, no_progress, None))
    micro.log = log
    if n == 0:
        micro.log.append(f"warning: {name.name} has no records")
    return meta, micro
