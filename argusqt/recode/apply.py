"""Global recoding of a table: new codelist + new leaf map, then cells from the fine cells again.

Recoding never re-reads microdata (docs/design.md, D-5): the
table's `source` holds its fine cells; a recode maps the *original* leaf of every fine
category to a node of the new codelist and calls `table_from_fine`. Recoding always starts
from the original codes (argusqt/docs/formats.md §6), so the original coding is kept in
`Table.recode_state` for undo and for later recodes of other variables.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import field
from pathlib import Path

import numpy as np

from argusqt.dataclass import dataclass
from argusqt.errors import InputError, SpecificationError
from argusqt.io.cdl import read_cdl
from argusqt.model.codelist import CodeList
from argusqt.model.table import Table
from argusqt.model.tabulate import table_from_fine
from argusqt.recode.grc import RecodeSpec, parse_grc, read_grc, resolve_flat


@dataclass
class RecodeState:
    """The original coding of a recoded table and a description of each recode applied."""

    original_dims: list[CodeList]
    original_leaf_maps: list[np.ndarray]
    recodes: dict[str, str] = field(default_factory=dict)  # variable → description


# ---------------------------------------------------------------------------- codelists
def recode_flat(codelist: CodeList, spec: RecodeSpec) -> tuple[CodeList, np.ndarray]:
    """Apply a flat `.grc` spec to a non-hierarchical codelist → (new codelist, old → new node)."""
    if spec.tree:
        return fold_hierarchy(codelist, spec.collapse)
    if codelist.hierarchical:
        raise SpecificationError(
            f"variable {codelist.name} is hierarchical: recode it with a <TREERECODE> file "
            "or a level digit, not a flat recode",
            file=spec.path,
        )
    codes = codelist.codes
    missing = [c for c, m in zip(codes, codelist.is_missing, strict=True) if m]
    valid = [c for i, c in enumerate(codes) if i > 0 and not codelist.is_missing[i]]
    mapping, new_missing, warnings = resolve_flat(spec, valid, missing)
    spec.mapping, spec.new_missing, spec.warnings = mapping, new_missing, warnings
    labels = _carried_labels(codelist, mapping)
    if spec.codelist_file:
        labels.update(read_cdl(_resolve_file(spec.codelist_file, spec.path, spec.codelist_line)))
    new_valid = [mapping[c] for c in valid]
    extra_missing = [mapping[m] for m in missing if mapping[m] not in new_missing]
    new = CodeList.flat(
        codelist.name,
        new_valid,
        missing=[*new_missing, *extra_missing],
        total_code=codelist.total_code,
        labels=labels,
    )
    index = {c: i for i, c in enumerate(new.codes)}
    node_map = np.zeros(len(codes), dtype=np.int64)
    node_map[1:] = [index[mapping[c]] for c in codes[1:]]
    return new, node_map


def _carried_labels(codelist: CodeList, mapping: dict[str, str]) -> dict[str, str]:
    """Old labels survive only for codes that keep their meaning (sole source is itself)."""
    sources: dict[str, list[str]] = {}
    for old, new in mapping.items():
        sources.setdefault(new, []).append(old)
    out: dict[str, str] = {}
    for new, olds in sources.items():
        if len(olds) == 1 and olds[0].strip() == new.strip():
            lab = codelist.labels.get(olds[0]) or codelist.labels.get(olds[0].strip())
            if lab:
                out[new] = lab
    return out


def _resolve_file(name: str, relative_to: str | None, line: int | None = None) -> Path:
    """A file named in a recode file: as given, next to it, then case-insensitively."""
    p = Path(name)
    if p.is_file():
        return p
    base = Path(relative_to).parent if relative_to else Path.cwd()
    cand = base / p.name
    if cand.is_file():
        return cand
    if base.is_dir():
        for f in base.iterdir():
            if f.name.lower() == p.name.lower():
                return f
    raise InputError(
        f"labels file {name!r} named by <CODELIST> not found", file=relative_to, line=line
    )


def fold_hierarchy(
    codelist: CodeList,
    collapse: Iterable[int | str] | None = None,
    level: int | None = None,
) -> tuple[CodeList, np.ndarray]:
    """Collapse hierarchy nodes (their descendants disappear, the node becomes a leaf).

    `collapse` names nodes by index or by code (a repeated code collapses every node with
    it); `level` k collapses every node at depth k that has children (batch digit).
    Returns the new codelist and the old → new node map (hidden nodes → their leaf).
    """
    if not codelist.hierarchical:
        raise SpecificationError(
            f"variable {codelist.name} is not hierarchical: nothing to collapse"
        )
    n = len(codelist)
    depth = codelist.depth
    has_children = ~codelist.is_leaf
    fold = np.zeros(n, dtype=bool)
    if level is not None:
        if not 1 <= level <= 9:
            raise SpecificationError(f"recode level must be a digit 1–9, got {level}")
        fold |= (depth == level) & has_children & ~codelist.is_missing
    for item in collapse or ():
        if isinstance(item, str):
            hits = codelist.index_of(item) or [
                i for i, c in enumerate(codelist.codes) if c.strip() == item.strip()
            ]
            if not hits or hits == [0]:
                raise InputError(f"code {item!r} is not a node of {codelist.name}")
            fold[[h for h in hits if h > 0]] = True
        else:
            if not 0 < int(item) < n:
                raise SpecificationError(f"node index {item} outside {codelist.name}")
            fold[int(item)] = True
    fold &= has_children
    # owner[i] = the collapsed ancestor that hides node i, or i itself (pre-order: parents first)
    owner = np.arange(n, dtype=np.int64)
    hidden = np.zeros(n, dtype=bool)
    parent = codelist.parent
    for i in range(1, n):
        p = int(parent[i])
        if hidden[p] or fold[p]:
            hidden[i] = True
            owner[i] = owner[p]
    keep = ~hidden
    kept_idx = np.flatnonzero(keep)
    entries = [
        (int(depth[i]), codelist.codes[i]) for i in kept_idx if i > 0 and not codelist.is_missing[i]
    ]
    missing = [codelist.codes[i] for i in kept_idx if codelist.is_missing[i]]
    new = CodeList.from_tree(
        codelist.name,
        entries,
        missing=missing,
        total_code=codelist.total_code,
        labels=dict(codelist.labels),
    )
    new_pos = np.full(n, -1, dtype=np.int64)
    new_pos[kept_idx] = np.arange(kept_idx.size)
    return new, new_pos[owner]


# ---------------------------------------------------------------------------- tables
def _dim_index(table: Table, var_name: str) -> int:
    names = [v.lower() for v in table.spec.explanatory]
    try:
        return names.index(var_name.lower())
    except ValueError:
        raise SpecificationError(
            f"variable {var_name} is not an explanatory variable of the table "
            f"({', '.join(table.spec.explanatory)})"
        ) from None


def _state(table: Table) -> RecodeState:
    if table.source is None:
        raise SpecificationError(
            "this table has no microdata contributions (tabular input): it cannot be recoded"
        )
    if isinstance(table.recode_state, RecodeState):
        return table.recode_state
    _, leaf_maps = table.source
    return RecodeState(list(table.dims), [np.asarray(m) for m in leaf_maps])


def original_codelist(table: Table, var_name: str) -> CodeList:
    """The codelist of `var_name` before any recode (recode specs are resolved against it)."""
    d = _dim_index(table, var_name)
    if isinstance(table.recode_state, RecodeState):
        return table.recode_state.original_dims[d]
    return table.dims[d]


def recode_table(
    table: Table,
    var_name: str,
    new_codelist: CodeList,
    node_map: np.ndarray,
    description: str = "",
    distance_per_dim: list[list[int]] | None = None,
) -> Table:
    """A new table with `var_name` coded by `new_codelist`; `node_map`: original node → new node.

    Cells come from the fine cells (no microdata); rules and costs are recomputed, manual statuses
    are lost (argusqt/docs/rules.md §7.3). `distance_per_dim`: the `<DISTANCE>` lists of the table's
    variables, needed only for distance costs.
    """
    d = _dim_index(table, var_name)
    state = _state(table)
    orig_dim = state.original_dims[d]
    node_map = np.asarray(node_map, dtype=np.int64)
    if node_map.shape != (len(orig_dim),):
        raise SpecificationError(
            f"recode map of {var_name} has {node_map.shape[0]} entries; the original "
            f"codelist has {len(orig_dim)} codes (recodes start from the original codes)"
        )
    fine, cur_maps = table.source
    orig_leaf = state.original_leaf_maps[d]
    new_leaf = np.where(orig_leaf >= 0, node_map[np.maximum(orig_leaf, 0)], -1)
    used = np.unique(fine.keys[:, d])
    targets = new_leaf[used]
    bad = (targets < 0) | ~new_codelist.is_leaf[np.maximum(targets, 0)]
    if bad.any():
        codes = [fine.fine_codes[d][j] for j in used[bad][:10]]
        raise SpecificationError(
            f"recode of {var_name}: data codes {codes} do not map to a leaf of the new codelist"
        )
    dims = list(table.dims)
    dims[d] = new_codelist
    leaf_maps = [np.asarray(m) for m in cur_maps]
    leaf_maps[d] = new_leaf
    recodes = {k: v for k, v in state.recodes.items() if k.lower() != var_name.lower()}
    if new_codelist is not orig_dim:
        recodes[table.spec.explanatory[d]] = description or "recoded"
    return _rebuild(table, dims, leaf_maps, state, recodes, distance_per_dim)


def _rebuild(
    table: Table,
    dims: list[CodeList],
    leaf_maps: list[np.ndarray],
    state: RecodeState,
    recodes: dict[str, str],
    distance_per_dim: list[list[int]] | None = None,
) -> Table:
    fine = table.source[0]
    new = table_from_fine(fine, dims, leaf_maps, table.spec, table.decimals)
    new.name = table.name
    new.notes = list(table.notes)
    if recodes:
        new.recode_state = RecodeState(state.original_dims, state.original_leaf_maps, recodes)
    return reapply_rules(new, distance_per_dim)


def undo_recode(
    table: Table, var_name: str, distance_per_dim: list[list[int]] | None = None
) -> Table:
    """The table with `var_name` back in its original coding (other recodes stay)."""
    d = _dim_index(table, var_name)
    if not isinstance(table.recode_state, RecodeState):
        return table
    state = table.recode_state
    dims = list(table.dims)
    dims[d] = state.original_dims[d]
    leaf_maps = [np.asarray(m) for m in table.source[1]]
    leaf_maps[d] = state.original_leaf_maps[d]
    recodes = {k: v for k, v in state.recodes.items() if k.lower() != var_name.lower()}
    return _rebuild(table, dims, leaf_maps, state, recodes, distance_per_dim)


def reapply_rules(table: Table, distance_per_dim: list[list[int]] | None = None) -> Table:
    """Statuses, protection levels and costs of a recoded table, from its rules (in place)."""
    from argusqt.rules.classify import apply_rules
    from argusqt.rules.cost import compute_cost

    apply_rules(table)
    compute_cost(table, distance_per_dim if table.spec.cost.kind == "distance" else None)
    return table


# ---------------------------------------------------------------------------- one call
def codelist_width(codelist: CodeList) -> int:
    """Width of a variable's codes (longest non-total code)."""
    return max((len(c) for c in codelist.codes[1:]), default=1)


def load_recode(path: str | Path, codelist: CodeList, width: int | None = None) -> RecodeSpec:
    """Read a `.grc` against a codelist (use `original_codelist` for a table's variable)."""
    valid = [c for i, c in enumerate(codelist.codes) if i > 0]
    missing = [c for c, m in zip(codelist.codes, codelist.is_missing, strict=True) if m]
    return read_grc(path, width or codelist_width(codelist), valid, missing)


def parse_recode_text(
    text: str, codelist: CodeList, where: str | Path | None = None, width: int | None = None
) -> RecodeSpec:
    """`.grc` text (typed in the GUI, or kept in a session) against a codelist; `where` names
    it in errors and is where relative `<CODELIST>` names are found."""
    from argusqt.io.text import split_lines

    lines = [line.replace("\t", " ") for line in split_lines(text)]
    if not any(ln.strip() and not ln.strip().startswith("//") for ln in lines):
        raise InputError(
            "the recode is empty (expected lines 'new code: old codes' or <TREERECODE>)",
            file=where,
        )
    valid = [c for i, c in enumerate(codelist.codes) if i > 0]
    missing = [c for c, m in zip(codelist.codes, codelist.is_missing, strict=True) if m]
    return parse_grc(
        lines,
        width or codelist_width(codelist),
        valid,
        missing,
        str(where) if where is not None else None,
    )


def recode_variable(
    table: Table,
    var_name: str,
    recode: RecodeSpec | int | str | Path,
    distance_per_dim: list[list[int]] | None = None,
) -> tuple[Table, list[str]]:
    """Recode with a spec, a `.grc` path or a level digit (batch `<RECODE>`) → (table, warnings)."""
    orig = original_codelist(table, var_name)
    if isinstance(recode, int) or (isinstance(recode, str) and recode.strip().isdigit()):
        level = int(recode)
        new, node_map = fold_hierarchy(orig, level=level)
        warnings = []
        if len(new) == len(orig):
            warnings.append(
                f"{var_name}: no node at level {level} has children; the codelist is unchanged"
            )
        desc = f"level {level}"
        return recode_table(table, var_name, new, node_map, desc, distance_per_dim), warnings
    spec = recode if isinstance(recode, RecodeSpec) else load_recode(recode, orig)
    new, node_map = recode_flat(orig, spec)
    desc = Path(spec.path).name if spec.path else ("tree recode" if spec.tree else "recode")
    out = recode_table(table, var_name, new, node_map, desc, distance_per_dim)
    return out, list(spec.warnings)
