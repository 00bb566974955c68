"""Time a global recode of a 10,000-cell table against tabulating recoded microdata directly.

Run: python benchmarks/bench_recode.py [n_records]. Target (task brief): recode < 0.2 s.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from argusqt.model.codelist import CodeList  # noqa: E402
from argusqt.model.rulespec import DominanceRule, PRule, SafetyRules  # noqa: E402
from argusqt.model.table import TableSpec  # noqa: E402
from argusqt.model.tabulate import build_fine, table_from_fine  # noqa: E402
from argusqt.recode.apply import (  # noqa: E402
    fold_hierarchy,
    reapply_rules,
    recode_table,
)


def _rules() -> SafetyRules:
    return SafetyRules(nk_individual=[DominanceRule(2, 75)], p_individual=[PRule(15)])


def main(n: int = 500_000) -> None:
    rng = np.random.default_rng(0)
    # activity: 9 sections × 10 divisions (2 levels, 100 nodes); region: 99 flat codes + total
    sections = [f"{s}" for s in range(1, 10)]
    leaves = [f"{s}{d}" for s in sections for d in range(10)]
    act = CodeList.from_tree(
        "act",
        [(lvl, c) for s in sections for lvl, c in [(1, s)] + [(2, f"{s}{d}") for d in range(10)]],
    )
    regions = [f"{r:02d}" for r in range(1, 100)]
    reg = CodeList.flat("reg", regions)
    a = rng.integers(0, len(leaves), n)
    r = rng.integers(0, len(regions), n)
    x = rng.lognormal(3, 1.5, n)
    spec = TableSpec(["act", "reg"], "x", rules=_rules())
    fine = build_fine([(a, leaves), (r, regions)], x, None, None, spec.rules.top_n_needed())
    maps = [np.array([act.leaf_index[c] for c in leaves]), np.arange(1, 100)]
    table = reapply_rules(table_from_fine(fine, [act, reg], maps, spec, 2))
    print(f"table: {table.n_cells} cells, {fine.n_fine} fine cells, {n} records")

    t0 = time.perf_counter()
    new, node_map = fold_hierarchy(act, level=1)
    recoded = recode_table(table, "act", new, node_map, "level 1")
    t_recode = time.perf_counter() - t0

    t0 = time.perf_counter()
    a2 = a // 10  # recode the records: division → its section
    spec2 = TableSpec(["act", "reg"], "x", rules=_rules())
    fine2 = build_fine([(a2, sections), (r, regions)], x, None, None, spec2.rules.top_n_needed())
    act2 = CodeList.from_tree("act", [(1, s) for s in sections])
    direct = reapply_rules(
        table_from_fine(fine2, [act2, reg], [np.arange(1, 10), np.arange(1, 100)], spec2, 2)
    )
    t_direct = time.perf_counter() - t0
    assert np.allclose(recoded.value, direct.value)
    assert np.array_equal(recoded.status, direct.status)
    print(f"recode (fold + cells + rules) of the {table.n_cells}-cell table: {t_recode:.4f} s")
    print(f"direct (recode {n} records + tabulate + rules): {t_direct:.4f} s")
    print(
        f"speed-up: {t_direct / t_recode:.1f}x; target < 0.2 s: "
        f"{'met' if t_recode < 0.2 else 'NOT met'}"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500_000)
