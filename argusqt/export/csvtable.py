"""CSV table (type 1): the on-screen layout, 2-D blocks per layer
(argusqt/docs/formats.md §10.3)."""

from __future__ import annotations

import itertools
from pathlib import Path

from argusqt.export.codevalue import quote_code, shown_values
from argusqt.io.atomic import atomic_write_text
from argusqt.io.textcells import neutralise
from argusqt.model.table import Table


def csvtable_lines(table: Table, *, quotes: bool = True, tau_exact: bool = False) -> list[str]:
    """Lines of the type-1 file; values as shown (`x` for suppressed, `-` for empty)."""
    shown = shown_values(table).reshape(table.shape)
    labels = [[quote_code(c, quotes, tau_exact=tau_exact) for c in d.codes] for d in table.dims]
    names = [d.name if tau_exact else neutralise(d.name) for d in table.dims]
    if table.ndim == 1:
        return ["," + ",".join(labels[0]), "," + ",".join(shown.tolist())]
    lines: list[str] = []
    lead = table.ndim - 2
    for layer in itertools.product(*(range(len(d)) for d in table.dims[:lead])):
        if lead:
            lines.append(", ".join(f"{names[d]},{labels[d][i]}" for d, i in enumerate(layer)))
        block = shown[layer] if lead else shown
        lines.append("," + ",".join(labels[-1]))
        rows = map(",".join, block.tolist())  # one join per row of the block
        lines.extend(f"{lab},{row}" for lab, row in zip(labels[-2], rows, strict=True))
        lines.append("")
    return lines


def write_csvtable(
    table: Table, path: str | Path, *, quotes: bool = True, tau_exact: bool = False
) -> None:
    """Write the type-1 CSV table atomically, once the table passed the publication gate."""
    from argusqt.export.gate import clear_for_publication

    clear_for_publication(table)
    lines = csvtable_lines(table, quotes=quotes, tau_exact=tau_exact)
    atomic_write_text(path, "".join(line + "\n" for line in lines))
