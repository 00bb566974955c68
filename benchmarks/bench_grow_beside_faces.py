"""A suppression pattern grown beside published rounded, interval and CTA faces (D-93).

Random sessions of tests/test_shared_cells.py (its records, specs and independent attackers):
table 1 protected by FACE and published as a data frame, then table 2 (sharing cells) by
OPT, MOD or HEUR and published if the gate lets it. Prints per face: sessions, table 2
published and refused, cells added beside, disclosures the test's outsider and per-record
insider attackers find (must be 0), the cost of the published tables 2, and the CPU-s of
the growth (`beside_status`). `--old REV`: the growth of that commit instead (before D-93
it stopped at any face but a suppression pattern), for the before/after table.
Usage: python benchmarks/bench_grow_beside_faces.py [--seeds 40] [--faces RND,IP,CTA,OPT]
       [--old c736727] [--per-seed] [--mixed 60]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import argusqt.export.shared as shared  # noqa: E402
from argusqt.errors import PublicationError  # noqa: E402


def old_growth(rev: str) -> object:
    """`beside_status` as it was at `rev` (its module loaded apart from the current one)."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:argusqt/export/shared.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    module = types.ModuleType("shared_old")
    module.__dict__["__name__"] = "shared_old"
    sys.modules["shared_old"] = module
    exec(compile(source, f"{rev}:shared.py", "exec"), module.__dict__)  # noqa: S102
    return module.beside_status


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--faces", default="RND,IP,CTA,OPT")
    ap.add_argument("--old", default=None, help="a commit whose growth to run instead")
    ap.add_argument("--per-seed", action="store_true", help="one line per session too")
    ap.add_argument("--mixed", type=int, default=0, help="random sessions of all six methods")
    args = ap.parse_args()
    import test_shared_cells as tsc

    growth = old_growth(args.old) if args.old else shared.beside_status
    spent = [0.0]

    def timed(*a, **k):  # the growth's CPU, whichever version runs
        t0 = time.process_time()
        try:
            return growth(*a, **k)
        finally:
            spent[0] += time.process_time() - t0

    shared.beside_status = timed
    print(f"growth: {args.old or 'this tree'}")
    if args.mixed:
        mixed(tsc, args.mixed, spent)
    if args.faces:
        print(f"seeds 0–{args.seeds - 1}")
        print(
            f"{'face':<5} {'sessions':>8} {'published':>9} {'refused':>7} {'added':>6} "
            f"{'disclosed':>9} {'cost (published)':>16} {'growth CPU-s':>12}"
        )
    for face in args.faces.split(",") if args.faces else []:
        spent[0] = 0.0
        published = refused = added = disclosed = 0
        cost = 0.0
        for seed in range(args.seeds):
            s, method = tsc._seeded_pair(seed)
            tsc._protect(s, 1, face)
            frames = [(s.published_frame(1), tsc._base(s, 1))]
            primaries = list(tsc._primaries(s, 1))
            result = s.protect(2, method)
            added += sum(int(x.split()[0]) for x in result.log or [] if "in addition so" in x)
            try:
                frames.append((s.published_frame(2), 0.0))
            except PublicationError:
                refused += 1
            else:
                published += 1
                cost += float(result.cost)
                primaries += list(tsc._primaries(s, 2))
            constraints = tsc._constraints(frames)
            try:
                for row, a, lpl, upl in primaries:
                    lo, hi = tsc._attack(constraints, row)
                    assert lo <= a - lpl + 1e-6 and hi >= a + upl - 1e-6
                tsc._insiders_find_nothing(s, frames, primaries)
            except AssertionError:
                disclosed += 1
            if args.per_seed:
                print(f"  {face} seed {seed}: {len(frames) - 1} {float(result.cost):,.0f}")
        print(
            f"{face:<5} {args.seeds:>8} {published:>9} {refused:>7} {added:>6} {disclosed:>9} "
            f"{cost:>16,.0f} {spent[0]:>12.2f}"
        )


def mixed(tsc, seeds: int, spent: list[float]) -> None:
    """The test's random sessions of 2–3 tables, each protected by one of all six methods
    just before it is published (grown beside what is out); its attackers assert."""
    spent[0] = 0.0
    faces = ("OPT", "MOD", "HEUR", "RND", "IP", "CTA")
    runs, disclosed = [], 0
    for seed in range(seeds):
        try:
            runs.append(tsc._one_session(seed, interleaved=True, methods_from=faces))
        except AssertionError:
            disclosed += 1
    print(
        f"mixed: {seeds} sessions, {sum(p for p, _r in runs)} tables published, "
        f"{sum(r for _p, r in runs)} refused beside, {disclosed} sessions disclosing; "
        f"growth {spent[0]:.2f} CPU-s"
    )


if __name__ == "__main__":
    main()
