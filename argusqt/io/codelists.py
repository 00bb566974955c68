"""Build the CodeList of an explanatory variable from its metadata (argusqt/docs/formats.md §4, §5).

One place decides flat vs `.hrc` vs digit levels, resolves the files named in the `.rda`
and attaches the `.cdl` labels, so tabulation, tabular input and the GUI agree.
"""

from __future__ import annotations

from collections.abc import Iterable

from argusqt.errors import InputError
from argusqt.io.cdl import read_cdl
from argusqt.io.hrc import read_hrc
from argusqt.io.text import resolve_path
from argusqt.model.codelist import CodeList
from argusqt.model.metadata import Metadata, Variable


def labels_for(var: Variable, meta: Metadata, log: list[str]) -> dict[str, str]:
    """Labels from the variable's `<CODELIST>`; a missing or bad `.cdl` is logged, not fatal
    (labels are display only)."""
    if var.labels is not None:
        return dict(var.labels)
    if var.codelist is None:
        return {}
    try:
        path = resolve_path(var.codelist, _ref(meta), log, line=var.line)
        return read_cdl(path)
    except InputError as exc:
        log.append(f"warning: labels of {var.name} not loaded: {exc}")
        return {}


def hierarchy_entries(var: Variable, meta: Metadata, log: list[str]) -> list[tuple[int, str, int]]:
    """(depth, code, line) of the variable's `.hrc`, resolved relative to the `.rda`."""
    if var.hier_file is None:
        raise ValueError(f"{var.name} has no hierarchy file")
    path = resolve_path(var.hier_file, _ref(meta), log, line=var.line)
    entries = read_hrc(path, var.hier_lead or "@", var.missing, var.total_code)
    if meta.kind in ("fixed", "free") and var.width:
        _warn_impossible_leaves(entries, var, meta.kind, path.name, log)
    return entries


def _warn_impossible_leaves(
    entries: list[tuple[int, str, int]], var: Variable, kind: str, name: str, log: list[str]
) -> None:
    """Leaves no data code can equal (argusqt/docs/formats.md §2): longer than the field, or, in
    free format where codes are left-padded to the width, of another length. Usually a damaged
    line."""
    width = var.width or 0
    odd = []
    for i, (depth, code, line) in enumerate(entries):
        leaf = i + 1 == len(entries) or entries[i + 1][0] <= depth
        if leaf and (len(code) > width or (kind == "free" and len(code) != width)):
            odd.append((code, line))
    if odd:
        listed = ", ".join(f"{c!r} (line {ln})" for c, ln in odd[:5])
        more = f" and {len(odd) - 5} more" if len(odd) > 5 else ""
        need = "longer than" if kind == "fixed" else "not of"
        log.append(
            f"warning: {name}: {len(odd)} leaf code(s) are {need} the width {width} of "
            f"{var.name}, so no record can have them: {listed}{more}"
        )


def codelist_for(
    var: Variable,
    meta: Metadata,
    observed_codes: Iterable[str] | None,
    log: list[str],
) -> CodeList:
    """The CodeList (table order, argusqt/docs/formats.md §4.3) of an explanatory variable.

    Flat: observed codes + declared missing codes. `.hrc`: the file's nodes + missing codes
    (observed codes are checked against the leaves by the caller). `<HIERLEVELS>`: every
    prefix of the observed codes. Labels come from the `.cdl` when there is one.
    """
    labels = labels_for(var, meta, log)
    observed = [] if observed_codes is None else list(observed_codes)
    if var.hierarchical and var.tree is not None:
        return CodeList.from_tree(var.name, var.tree, var.missing, var.total_code, labels)
    if var.hierarchical and var.hier_file is not None:
        entries = hierarchy_entries(var, meta, log)
        return CodeList.from_tree(
            var.name,
            [(d, c) for d, c, _ in entries],
            var.missing,
            var.total_code,
            labels,
        )
    if var.hierarchical and var.hierlevels:
        return CodeList.from_digits(
            var.name, observed, var.hierlevels, var.missing, var.total_code, labels
        )
    return CodeList.flat(var.name, observed, var.missing, var.total_code, labels)


def _ref(meta: Metadata):
    """Files named in an `.rda` are looked for next to it (or in the working folder)."""
    return meta.path if meta.path is not None else "."
