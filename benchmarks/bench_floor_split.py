"""The floor audit's respondents' phase split by kind of LP (D-109), on bench_floor_pairs.py.

Wraps the audit's steps and prints, after bench_floor_pairs' own report: the respondents'
phase CPU, the anchors, the restricted LPs (floor_local), the decisions (floor_decide) with
their iterations and verdicts, the members' reaches from the split model; `--owners`: how
many respondents alone make up the block's coalition-fixed primaries (one each, or more).
CPU of this process; timing only, no test asserts it.

Usage:
    python benchmarks/bench_floor_split.py [--owners] --instance b31808 --workdir DIR
        --targets 400 --seed 28 [bench_floor_pairs.py's other options]
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import bench_floor_pairs  # noqa: E402
from business_tables import cpu, tabulated  # noqa: E402

from argusqt.protection.audit import floor_decide  # noqa: E402
from argusqt.protection.audit import insider_floor as fa  # noqa: E402


def _timed(owner, name: str, rows: list, extra=None):
    """Replace owner.name by a wrapper that appends (CPU, extra(result, self)) to rows."""
    plain = getattr(owner, name)

    def wrapper(*a, **k):
        c0 = cpu()
        out = plain(*a, **k)
        rows.append((cpu() - c0, None if extra is None else extra(out, a)))
        return out

    setattr(owner, name, wrapper)


def owners(instance: str, workdir: Path) -> None:
    """The owners of the largest block's coalition-fixed primaries (D-109's step 2)."""
    from argusqt.protection.core.problem import CSPProblem
    from argusqt.protection.lp.components import variable_components

    folder, table = tabulated(instance, workdir)
    problem = CSPProblem.from_table(table)
    sup = np.load(folder / "heur_pattern.npy")
    big = max(variable_components(problem.relations.tocsr(), sup), key=lambda c: c.cells.size)
    fl = problem.floors.padded(problem.n_cells)
    coo = fl.amount.tocoo()
    alone = fl.alone[coo.col] & sup[coo.col] & (problem.values[coo.col] > 0)
    inside = np.zeros(problem.n_cells, dtype=bool)
    inside[big.cells] = True
    prim = problem.primary & sup & inside
    fixed = alone & prim[coo.col]
    owner, count = np.unique(coo.row[fixed], return_counts=True)
    per = np.bincount(coo.row[inside[coo.col] & sup[coo.col]], minlength=fl.amount.shape[0])
    print(f"block {big.cells.size:,} cells, {int(prim.sum()):,} primaries, "
          f"{int(np.unique(coo.col[fixed]).size):,} made up by one respondent; owners "
          f"{owner.size:,}: primaries per owner {np.bincount(count).tolist()[1:]}; "
          f"their cells in the block (quartiles) {np.percentile(per[owner], [0, 25, 50, 75, 100])}")  # fmt: skip


def main(argv: list[str]) -> int:
    if "--owners" in argv:
        argv = [a for a in argv if a != "--owners"]
        at = argv.index("--workdir") + 1
        inst = argv[argv.index("--instance") + 1] if "--instance" in argv else "b31808"
        owners(inst, Path(argv[at]))
    resp: list = []
    anchors: list = []
    local: list = []
    decisions: list = []
    members: list = []
    _timed(fa, "_respondents", resp)
    _timed(fa, "_anchor", anchors)
    _timed(fa, "_local", local)
    iters = lambda out, a: (out[0], a[0].h.getInfo().simplex_iteration_count)  # noqa: E731
    _timed(floor_decide.Decider, "point", decisions, iters)
    _timed(floor_decide.Decider, "extreme", members)
    rc = bench_floor_pairs.main(argv)
    print(f"respondents' phase {sum(t for t, _ in resp):.1f} CPU-s; anchors {len(anchors)} "
          f"{sum(t for t, _ in anchors):.1f}; restricted LPs {len(local)} "
          f"{sum(t for t, _ in local):.1f}; member reaches {len(members)} "
          f"{sum(t for t, _ in members):.1f}")  # fmt: skip
    if decisions:
        it = np.array([e[1] for _, e in decisions])
        verdicts = collections.Counter(e[0] for _, e in decisions)
        print(f"decisions {len(decisions)}: {sum(t for t, _ in decisions):.1f} CPU-s in "
              f"Decider.point; iterations median {np.median(it):.0f}, mean {it.mean():.0f}, "
              f"max {it.max()}; HiGHS {dict(verdicts)}")  # fmt: skip
    return rc


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
