"""CSV table (type 1): the on-screen layout, 2-D blocks per layer (formats.md §10.2)."""

from __future__ import annotations

import itertools
from pathlib import Path

from argusqt.export.codevalue import quote_code, shown_values
from argusqt.io.atomic import atomic_write_text
from argusqt.model.table import Table


def csvtable_lines(table: Table, *, quotes: bool = True) -> list[str]:
    """Lines of the type-1 file; values as shown (`x` for suppressed, `-` for empty)."""
    shown = shown_values(table).reshape(table.shape)
    labels = [[quote_code(c, quotes) for c in d.codes] for d in table.dims]
    if table.ndim == 1:
        return ["," + ",".join(labels[0]), "," + ",".join(shown.tolist())]
    lines: list[str] = []
    lead = table.ndim - 2
    for layer in itertools.product(*(range(len(d)) for d in table.dims[:lead])):
        if lead:
            lines.append(
                ", ".join(f"{table.dims[d].name},{labels[d][i]}" for d, i in enumerate(layer))
            )
        block = shown[layer] if lead else shown
        lines.append("," + ",".join(labels[-1]))
        rows = map(",".join, block.tolist())  # one join per row of the block
        lines.extend(f"{lab},{row}" for lab, row in zip(labels[-2], rows, strict=True))
        lines.append("")
    return lines


def write_csvtable(table: Table, path: str | Path, *, quotes: bool = True) -> None:
    """Write the type-1 CSV table atomically."""
    atomic_write_text(path, "".join(line + "\n" for line in csvtable_lines(table, quotes=quotes)))
