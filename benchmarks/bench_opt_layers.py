"""Issue 26 goal 1 (docs/design.md D-118): OPT's separation by layer at a fixed work.

Runs bench_opt_nodes.py's node-bounded branch-and-cut of one table with CPU counters (the
process's clock around each call) on the attacker separation's layers: `Separator.separate`,
the block LPs (`_run`) and HiGHS's runs inside them, the models given to HiGHS (`_load_lp`),
the blocks' components and matrices (with their cache misses). The counts do not depend on
the load; the CPU-seconds are a measurement beside them (each wrapper adds ~1 µs a call).

Usage:
    python benchmarks/bench_opt_layers.py g05 100
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

STATS: Counter[str] = Counter()
CPU: Counter[str] = Counter()


def _timed(name: str, real: Callable[..., Any], missed: Callable[..., bool] | None = None):  # type: ignore[no-untyped-def]
    """`real` counted and timed under `name` (with its cache misses when `missed` says)."""

    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        STATS[name] += 1
        if missed is not None and missed(*args):
            STATS[name + " misses"] += 1
        t = time.process_time()
        try:
            return real(*args, **kwargs)
        finally:
            CPU[name] += time.process_time() - t

    return wrapper


def _hooks() -> None:
    import highspy

    from argusqt.protection.lp import separation

    sep = separation.Separator
    sep._components = _timed(  # type: ignore[method-assign]
        "components", sep._components, lambda s, var: var.tobytes() not in s._comp_cache
    )
    sep._block = _timed(  # type: ignore[method-assign]
        "blocks",
        sep._block,
        lambda s, c, r: c.tobytes() + b"|" + r.tobytes() not in s._block_cache,
    )
    separation._load_lp = _timed("model loads", separation._load_lp)  # type: ignore[assignment]
    sep.separate = _timed("separate", sep.separate)  # type: ignore[method-assign]
    sep._run = _timed("block LPs", sep._run)  # type: ignore[method-assign]
    highspy.Highs.run = _timed("HiGHS runs (all)", highspy.Highs.run)  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    table, nodes = argv[0], argv[1]
    _hooks()
    import bench_opt_nodes

    bench_opt_nodes.main(["--only", table, "--nodes", nodes])
    print("| layer | calls | cache misses | CPU-s | µs a call |")
    print("|---|---|---|---|---|")
    for name in (
        "separate",
        "block LPs",
        "HiGHS runs (all)",
        "model loads",
        "components",
        "blocks",
    ):
        n = STATS[name]
        miss = STATS.get(name + " misses", "")
        print(f"| {name} | {n:,} | {miss} | {CPU[name]:.2f} | {1e6 * CPU[name] / max(n, 1):.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
