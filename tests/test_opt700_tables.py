"""Issue 26's OPT set (benchmarks/opt700_tables.py) is what the issue asks for: 2-D
hierarchical tables of 500–900 cells with 8–19 % primaries, the same on every call."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from opt700_tables import CELLS, SHARE, primary_share, surveys  # noqa: E402


def test_generated_tables_have_the_issue_shape_and_repeat() -> None:
    first = surveys(3)
    assert first == surveys(3)  # seeded: same shapes, records and seeds
    for s in first:
        assert s.size_classes == 0 and len(s.variables) == 2
        cells, primaries = primary_share(s)
        assert cells == s.n_cells and CELLS[0] <= cells <= CELLS[1]
        assert SHARE[0] <= primaries / cells <= SHARE[1]
