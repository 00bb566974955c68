"""RND and CTA on the safety campaign's random record tables, attacked by the attacker of
tests/test_publish_adjusted_properties.py (issue 21): runs, published, refused, unsafe, and
CTA's cost of the random extras (total weighted change with the extras / with the exact
levels, τ-Argus's model, on the same tables).

    python benchmarks/adjusted_safety.py [--tables 40] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for sub in ("", "benchmarks", "tests"):
    if str(ROOT / sub) not in sys.path:
        sys.path.insert(0, str(ROOT / sub))

import safety_campaign as campaign  # noqa: E402
import test_publish_adjusted_properties as props  # noqa: E402


def run(seeds, work: Path) -> None:
    from argusqt.errors import ArgusError

    count = {m: {"runs": 0, "published": 0, "refused": 0, "no primaries": 0, "unsafe": 0}
             for m in ("RND", "CTA")}  # fmt: skip
    refusals: dict[str, list[str]] = {"RND": [], "CTA": []}
    costs = []
    t0 = time.perf_counter()
    for seed in seeds:
        case = campaign.generate(seed)
        for method in ("RND", "CTA"):
            c = count[method]
            c["runs"] += 1
            s, truth, rules = props._session(case, work / f"{method}{seed}")
            if not rules.primary.any():
                c["no primaries"] += 1
                continue
            path = work / f"{method}{seed}" / "out.txt"
            if method == "RND":
                base = s.table_facts(1).covering_rounding_base
                params = {"base": base, "steps": 0, "max_minutes": 1}
            else:
                params = {"max_minutes": 1}
            try:
                res = s.protect(1, method, params)
                s.write_table(1, 3, "", path)
            except ArgusError as err:
                c["refused"] += 1
                refusals[method].append(f"{seed} {case.label}: {str(err)[:160]}")
                assert not path.exists()
                continue
            c["published"] += 1
            pub = campaign.read_published(path, truth)
            if method == "RND":
                bad = props.rounding_disclosures(truth, rules, pub, base, 0)
            else:
                bad = props.adjustment_disclosures(truth, rules, pub)
                try:
                    exact = s.protect(1, "CTA", {"max_minutes": 1, "levels_as_given": True})
                    costs.append((seed, case.label, exact.cost, res.cost))
                except ArgusError:
                    pass
            if bad:
                c["unsafe"] += 1
                print(f"UNSAFE {method} seed {seed} {case.label}: {bad[:2]}")
    print(f"{'method':<7}{'runs':>6}{'published':>11}{'refused':>9}{'no prim':>9}{'UNSAFE':>8}")
    for m, c in count.items():
        print(f"{m:<7}{c['runs']:>6}{c['published']:>11}{c['refused']:>9}"
              f"{c['no primaries']:>9}{c['unsafe']:>8}")  # fmt: skip
    for m, lines in refusals.items():
        for line in lines:
            print(f"  refused {m} {line}")
    if costs:
        print("CTA total weighted change: exact levels (τ-Argus) → with random extras")
        for seed, label, before, after in costs:
            print(f"  seed {seed:>5} {label:<22} {before:>14,.1f} → {after:>14,.1f}"
                  f"  ×{after / before if before else float('nan'):.2f}")  # fmt: skip
        ratio = sum(a for *_, a in costs) / max(1e-9, sum(b for _, _, b, _ in costs))
        print(f"  all {len(costs)} tables: ×{ratio:.2f}")
    print(f"{time.perf_counter() - t0:.0f} s, load {os.getloadavg()[0]:.1f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tables", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run(range(args.seed, args.seed + args.tables), Path(tmp))


if __name__ == "__main__":
    main()
