"""A ready table given as a data frame, written as τ-Argus tabular input (`.tab` + `.rda`).

The tabular reader (io.tabular) then checks and reads it exactly as it reads a user's `.tab`,
so a data frame and a file give the same table, statuses and messages.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from argusqt.errors import SpecificationError
from argusqt.io.atomic import atomic_write_text
from argusqt.io.frames import tree_from_pairs
from argusqt.io.hrc import hrc_text
from argusqt.io.rda import write_rda
from argusqt.model.metadata import Metadata, Variable


def _code(x: Any) -> str:
    if isinstance(x, float) and x.is_integer():
        x = int(x)
    return str(x).strip()


def write_tabular_input(
    frame: Any,
    folder: Path,
    dims: Sequence[str],
    response: str | None,
    freq: str | None,
    top: Sequence[str],
    status: str | None,
    shadow: str | None,
    cost: str | None,
    hierarchies: Mapping[str, Any],
    labels: Mapping[str, Any],
    total_codes: Mapping[str, str],
    decimals: Mapping[str, int],
) -> tuple[Path, Path]:
    """`table.tab` and `table.rda` in `folder` from one row per cell; returns their paths.
    Hierarchies: an `.hrc` path, or a tree as (depth, code) pairs (written as an `.hrc`)."""
    import pandas as pd

    if type(frame).__module__.split(".")[0] == "polars":
        frame = frame.to_pandas()
    if not isinstance(frame, pd.DataFrame):
        raise SpecificationError(f"a table must be a DataFrame, got {type(frame).__name__}")
    if response is None:
        raise SpecificationError("a ready table needs its response column (response=...)")
    numeric = [(response, "response"), (freq, "frequency")]
    numeric += [(t, "maxscore") for t in top] + [(shadow, "shadow"), (cost, "cost")]
    columns = [*dims, *(c for c, _ in numeric if c is not None), *([status] if status else [])]
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise SpecificationError(
            f"column(s) {missing} not found in the table; it has {list(frame.columns)}"
        )
    if freq is None:
        raise SpecificationError("a ready table needs its frequency column (freq=...)")
    variables: list[Variable] = []
    for name in dims:
        v = Variable(name=name, recodeable=True)
        v.total_code = total_codes.get(name, "Total")
        v.total_code_given = True
        h = hierarchies.get(name)
        if isinstance(h, str | os.PathLike):
            v.hierarchical, v.hier_file, v.hier_lead = True, str(Path(h).resolve()), "@"
        elif isinstance(h, Sequence) and h and all(isinstance(x, int) for x in h):
            v.hierarchical, v.hierlevels = True, [int(x) for x in h if x]
        elif h is not None:
            pairs: list[tuple[str, str | None]] = (
                [(_code(c), _code(p) if p is not None else None) for c, p in h.items()]
                if isinstance(h, Mapping)
                else [(_code(r[1]), _code(r[0])) for r in h.itertuples(index=False)]
            )
            tree = tree_from_pairs(pairs, name)
            hrc = folder / f"{name}.hrc"
            atomic_write_text(hrc, hrc_text(tree))
            v.hierarchical, v.hier_file, v.hier_lead = True, str(hrc), "@"
        if name in labels:
            lab = labels[name]
            if isinstance(lab, str | os.PathLike):
                v.codelist = str(Path(lab).resolve())
            else:
                items = lab.items() if isinstance(lab, Mapping) else lab.itertuples(index=False)
                cdl = folder / f"{name}.cdl"
                atomic_write_text(cdl, "".join(f"{_code(c)},{t}\n" for c, t in items))
                v.codelist = str(cdl)
        variables.append(v)
    for col, role in numeric:
        if col is None:
            continue
        v = Variable(name=col)
        if role == "response":
            v.numeric = True
        elif role == "frequency":
            v.frequency = True
        elif role == "maxscore":
            v.maxscore = True
        else:
            setattr(v, role, True)
        v.decimals = int(decimals.get(col, 0))
        variables.append(v)
    if status:
        variables.append(Variable(name=status, status=True))
    meta = Metadata(path=None, kind="tabular", variables=variables, separator=";")
    rda = folder / "table.rda"
    write_rda(meta, rda)
    out = pd.DataFrame({c: frame[c] for c in columns})
    for name in dims:
        out[name] = ['"' + _code(x).replace('"', "") + '"' for x in out[name]]
    tab = folder / "table.tab"
    atomic_write_text(tab, out.to_csv(sep=";", header=False, index=False, quoting=3))
    return tab, rda
