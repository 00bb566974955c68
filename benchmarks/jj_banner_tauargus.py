"""Does τ-Argus's own JJ reader accept argusqt's JJ file with its CONFIDENTIAL banner?

argusqt writes `0 // CONFIDENTIAL — not for publication: …` as the first line of a JJ file
(argusqt/docs/formats.md §9.1). This script writes the JJ file of batch_ex2 (region ×
gender, P(20,5)|FREQ(5,20), protected by MOD) and reads it with τ-Argus's JJ audit
(pytauargus's `audit_jj`, libtauargus_csp): with the banner after the `0`, without any
banner, and with the banner on a line of its own. Prints what each gives. Needs
`pip install pytauargus` (a benchmark reference, never a dependency).
    python benchmarks/jj_banner_tauargus.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data" / "tauargus" / "batch_ex2"


def main() -> None:
    from pytauargus._tauargus import audit_jj

    from argusqt.batch.arb import parse_specify_table
    from argusqt.rules.parse import parse_safety_rule
    from argusqt.session import Session

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for f in DATA.iterdir():
            if f.is_file():
                shutil.copy(f, folder / f.name)
        s = Session()
        s.open_microdata(folder / "microdata_ex2.asc", folder / "metadata_ex2.rda")
        s.specify_table(parse_specify_table('"region""gender"|"num1"|""|""'))
        s.set_safety_rules(parse_safety_rule("FREQ(5,20)|P(20,5)"))
        s.compute_tables()
        s.protect(1, "MOD", {})
        ours = folder / "ours.jj"
        s.write_table(1, 6, "", ours)
        lines = ours.read_text(encoding="utf-8").splitlines(keepends=True)
        print(f"first line: {lines[0].rstrip()}")
        plain = folder / "plain.jj"
        plain.write_text("0\n" + "".join(lines[1:]), encoding="utf-8")
        own_line = folder / "own_line.jj"
        own_line.write_text(lines[0][2:] + "0\n" + "".join(lines[1:]), encoding="utf-8")
        results = {}
        for name, path in (
            ("banner after 0", ours),
            ("no banner", plain),
            ("// line first", own_line),
        ):
            try:
                results[name] = audit_jj(str(path))
                print(f"{name:>15}: read, {len(results[name])} suppressed cells audited")
            except Exception as exc:  # noqa: BLE001 - τ-Argus's reader says why in its own way
                print(f"{name:>15}: REFUSED by τ-Argus's reader ({exc})")
        if "banner after 0" in results and "no banner" in results:
            same = results["banner after 0"] == results["no banner"]
            print(f"same audit with and without the banner: {same}")


if __name__ == "__main__":
    main()
