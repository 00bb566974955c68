"""The publication audit of a big HEUR pattern alone (issue 26 goal 4, D-64): its LPs and CPU.

Runs the batch file of `bench_vs_tauargus.py` up to HEUR's pattern, keeps the inputs of
`make_publishable` (pickled in the work folder, reused by later runs), then times
`make_publishable` on them: CPU seconds of each insider audit (the first, the recheck after
the repair), its LP counts and figures, the cells the repair added and a digest of the
final pattern (the same digest before and after a change: the same pattern). Timing only:
no test asserts them.

Usage:
    python benchmarks/bench_publication_audit.py [--instance b97768] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pickle
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from business_tables import RULES, SURVEYS, batch_text, cpu, write_survey  # noqa: E402


class _Captured(Exception):
    """Raised once the inputs are kept: the batch run stops there."""


def capture(instance: str, folder: Path, keep: Path) -> None:
    """Run HEUR on the survey and pickle make_publishable's inputs into `keep`."""
    import argusqt.protection.run as run
    from argusqt.batch.runner import run_batch

    survey = SURVEYS[instance]
    data = write_survey(survey, folder / survey.name)
    batch = data / "publication.arb"
    text = batch_text(
        "survey.asc", "survey.rda", survey.variables, "turnover", RULES, "HEUR(1,10)", "out.csv",
        "turnover",
    )  # fmt: skip
    batch.write_text(text)
    inner = run.make_publishable

    def keep_inputs(problem, sup, **kw):
        kw = {k: v for k, v in kw.items() if k != "cancel"}
        with open(keep, "wb") as f:
            pickle.dump((problem, sup, kw), f, protocol=5)
        raise _Captured

    run.make_publishable = keep_inputs
    try:
        run_batch(batch, logbook=data / "publication_log.txt")
    except _Captured:
        pass
    finally:
        run.make_publishable = inner
    if not keep.exists():
        raise SystemExit("the run ended before the publication audit")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instance", default="b97768", choices=sorted(SURVEYS))
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args(argv)
    folder = args.workdir or Path(tempfile.mkdtemp())
    folder.mkdir(parents=True, exist_ok=True)
    keep = folder / f"publication_inputs_{args.instance}.pkl"
    if not keep.exists():
        capture(args.instance, folder, keep)
    with open(keep, "rb") as f:
        problem, sup, kw = pickle.load(f)

    import numpy as np

    from argusqt.protection.audit import insider
    from argusqt.protection.audit.insider_repair import make_publishable

    audits: list[tuple[float, object]] = []
    inner = insider._insider_audit

    def timed(*a, **k):
        c0 = cpu()
        out = inner(*a, **k)
        audits.append((cpu() - c0, out))
        return out

    insider._insider_audit = timed
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{args.instance}: {int(sup.sum()):,} suppressed cells; load at start {load}")
    c0 = cpu()
    fixed, verdict, added = make_publishable(problem, sup, **kw)
    total = cpu() - c0
    digest = hashlib.sha1(np.packbits(fixed).tobytes()).hexdigest()[:16]
    print(f"make_publishable {total:.1f} CPU-s, {added:,} cells added, passed {verdict.ok}")
    for k, (secs, out) in enumerate(audits):
        print(
            f"  insider audit {k + 1}: {secs:.1f} CPU-s, {out.n_lps:,} LPs (a recheck adds the audit before it), {out.figures}"
        )
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"pattern digest {digest}; load at end {load}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
