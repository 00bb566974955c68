"""A table as a pandas DataFrame: one row per cell (the Python API's `to_frame` and `publish`).

`cell_frame` is the internal view (true values, frequencies, statuses: confidential);
`published_frame` is what may be published, and only after the publication gate passed:
codes, labels, the published value (missing, NA, where a cell is suppressed or empty) and a
`flag` telling the two apart with the workbook's symbols ("x" withheld, "-" empty).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from argusqt.export.face import protection_kind, published_values
from argusqt.export.gate import clear_for_publication
from argusqt.model.status import STATUS_LABELS, Status, is_suppressed
from argusqt.model.table import Table
from argusqt.progress import CancelToken, ProgressCallback, no_progress

#: the `status` column's categories: τ-Argus status number → its name (argusqt/docs/rules.md §7.1)
STATUS_NAMES: dict[int, str] = {
    1: "safe",
    2: "safe_manual",
    3: "unsafe_rule",
    4: "unsafe_request",
    5: "unsafe_frequency",
    6: "unsafe_zero",
    7: "unsafe_singleton",
    8: "unsafe_singleton_manual",
    9: "unsafe_manual",
    10: "protected",
    11: "secondary",
    12: "secondary_manual",
    13: "empty_nonstructural",
    14: "empty",
}
assert set(STATUS_NAMES) == set(STATUS_LABELS)

#: the `flag` column of `published_frame`: the workbook's symbols (export.excel defaults);
#: status-free, a primary and a secondary cell both read "x"
FLAG_WITHHELD, FLAG_EMPTY, FLAG_PUBLISHED = "x", "-", ""


def _codes_and_labels(table: Table) -> dict[str, Any]:
    """Per dimension: the code and label of every cell (codes without their padding)."""
    import pandas as pd

    cols: dict[str, Any] = {}
    idx = np.unravel_index(np.arange(table.n_cells), table.shape)
    for d, dim in enumerate(table.dims):
        name = table.variable(d)
        codes = np.array([c.strip() or c for c in dim.codes], dtype=object)
        labels = np.array([dim.label(i) for i in range(len(dim))], dtype=object)
        cols[name] = pd.Categorical(codes[idx[d]], categories=list(dict.fromkeys(codes)))
        cols[f"{name}_label"] = labels[idx[d]]
    return cols


def published_column(table: Table) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """(published value, lower, upper) per cell: NaN where nothing is published (suppressed or
    empty); rounded / adjusted values after RND / CTA; the bounds after interval protection
    (value NaN where the interval is wider than one number)."""
    status = np.asarray(table.status)
    kind = protection_kind(table)
    lower = upper = None
    if kind == "interval":
        lower = np.round(np.asarray(table.interval_lower, dtype=float), table.decimals)
        upper = np.round(np.asarray(table.interval_upper, dtype=float), table.decimals)
        value = np.where(lower == upper, lower, np.nan)
    elif kind in ("round", "cta", "ckm"):
        value = np.round(np.asarray(published_values(table), dtype=float), table.decimals)
    else:
        value = np.round(np.asarray(table.value, dtype=float), table.decimals)
        value = np.where(is_suppressed(status), np.nan, value)
    empty = status == Status.EMPTY
    value = np.where(empty, np.nan, value)
    if lower is not None and upper is not None:
        lower, upper = np.where(empty, np.nan, lower), np.where(empty, np.nan, upper)
    return value, lower, upper


def cell_frame(table: Table) -> Any:
    """Every cell with its codes, labels, true value, frequency, status (a categorical of
    STATUS_NAMES), cause code of a primary (argusqt/docs/rules.md §7.5) and published value.
    CONFIDENTIAL: true values of suppressed cells."""
    import pandas as pd

    cols = _codes_and_labels(table)
    status = np.asarray(table.status, dtype=int)
    cols["value"] = np.asarray(table.value, dtype=float)
    cols["freq"] = np.asarray(table.freq, dtype=float).round().astype(np.int64)
    cols["status"] = pd.Categorical(
        [STATUS_NAMES[int(s)] for s in status], categories=list(STATUS_NAMES.values())
    )
    from argusqt.rules.cause import cause_codes

    cols["cause"] = cause_codes(table)  # why a primary is unsafe ('' otherwise), US#174
    value, lower, upper = published_column(table)
    cols["published"] = value
    if lower is not None and upper is not None:
        cols["published_lower"], cols["published_upper"] = lower, upper
    frame = pd.DataFrame(cols)
    frame["published"] = frame["published"].astype("Float64")
    frame.attrs["confidential"] = True
    return frame


def published_frame(
    table: Table,
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> Any:
    """The safe DataFrame: codes, labels, published values (NA where suppressed or empty) and
    `flag` ("x" withheld, "-" empty, "" published), only for a table that passes the
    publication gate (PublicationError otherwise)."""
    import pandas as pd

    clear_for_publication(table, progress=progress, cancel=cancel)
    cols = _codes_and_labels(table)
    value, lower, upper = published_column(table)
    cols["value"] = value
    if lower is not None and upper is not None:
        cols["lower"], cols["upper"] = lower, upper
    empty = np.asarray(table.status) == Status.EMPTY
    flag = np.where(empty, FLAG_EMPTY, np.where(np.isnan(value), FLAG_WITHHELD, FLAG_PUBLISHED))
    cols["flag"] = pd.Categorical(flag, categories=[FLAG_PUBLISHED, FLAG_WITHHELD, FLAG_EMPTY])
    frame = pd.DataFrame(cols)
    for c in ("value", "lower", "upper"):
        if c in frame:
            frame[c] = frame[c].astype("Float64")
    return frame
