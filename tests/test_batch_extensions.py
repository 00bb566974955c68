"""argusqt batch extensions: SUPPRESS HEUR(t[, minutes]) and SUPPRESS IP(t[, minutes]).

Interval protection publishes an interval per cell; the code-value output writes
`lower,upper` (and with AS+ the true value and the status).
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from argusqt.batch.arb import parse_suppress
from argusqt.batch.runner import run_batch

HEAD = """\
<OPENMICRODATA> "microdata_ex2.asc"
<OPENMETADATA> "metadata_ex2.rda"
<SPECIFYTABLE> "region""gender"|"num1"|""|""
<SAFETYRULE> FREQ(5,20)|P(20,5)|
<READMICRODATA>
"""


@pytest.fixture
def ex2(shared_data, tmp_path) -> Path:
    folder = tmp_path / "ex2"
    shutil.copytree(shared_data / "batch_ex2", folder)
    return folder


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as f:  # an AS+ file's banner is a // line
        return list(csv.reader(line for line in f if not line.startswith("//")))


def test_parse_extension_methods():
    assert parse_suppress("IP(1)").params.max_minutes == 10
    heur = parse_suppress("HEUR(2, 3)").params
    assert heur.max_minutes == 3 and heur.singleton_singleton  # singleton options on
    assert parse_suppress("HEUR(2, 3, 0)").params.singleton_singleton is False


def test_heur_in_batch_gives_e9_pattern(ex2):
    arb = ex2 / "heur.arb"
    arb.write_text(HEAD + '<SUPPRESS> HEUR(1)\n<WRITETABLE> (1, 3, AS+FL+, "heur.txt")\n')
    out = run_batch(arb)
    assert out.ok, out.error
    status = [int(r[-1]) for r in _rows(ex2 / "heur.txt")[1:]]
    # the pattern of argusqt/docs/methods.md §3.3 (batch_ex2)
    assert status == [1, 1, 1, 1, 11, 3, 1, 1, 1, 1, 11, 11, 1, 1, 1]


def test_interval_protection_in_batch(ex2):
    arb = ex2 / "ip.arb"
    arb.write_text(
        HEAD
        + "<SUPPRESS> IP(1, 1)\n"
        + '<WRITETABLE> (1, 3, AS+FL+, "ip.txt")\n<WRITETABLE> (1, 1, QU+, "ip.csv")\n'
    )
    out = run_batch(arb)
    assert out.ok, out.error
    rows = _rows(ex2 / "ip.txt")
    assert rows[0] == ["region", "gender", "num1_Lower", "num1_Upper", "num1_Orig", "Status"]
    cells = {(r[0], r[1]): r[2:] for r in rows[1:]}
    lo, hi, value, status = cells[("A", "female")]
    assert status == "3" and value == "189.40"
    # the published interval covers the protection interval 189.40 ± 22.404 (E9)
    assert float(lo) <= 189.40 - 22.404 + 0.005 and float(hi) >= 189.40 + 22.404 - 0.005
    lo, hi, value, _ = cells[("Total", "Total")]
    assert float(lo) <= float(value) <= float(hi)
    table = out.session.tables[0]
    assert table.interval_lower is not None and table.audit is not None and table.audit.ok
    text = (ex2 / "ip.csv").read_text()
    assert ".." in text  # wide intervals shown as lower..upper in the CSV table


def test_every_output_type_after_interval_protection(ex2):
    writes = "".join(
        f'<WRITETABLE> (1, {t}, AS+, "ip{t}.{ext}")\n'
        for t, ext in ((1, "csv"), (2, "txt"), (3, "txt"), (4, "sbs"), (5, "tab"), (6, "jj"))
    )
    arb = ex2 / "all.arb"
    arb.write_text(HEAD + "<SUPPRESS> IP(1)\n" + writes + '<WRITETABLE> (1, 1, , "ip.xlsx")\n')
    out = run_batch(arb)
    assert out.ok, out.error
    for name in ("ip1.csv", "ip2.txt", "ip3.txt", "ip4.sbs", "ip5.tab", "ip6.jj", "ip.xlsx"):
        assert (ex2 / name).stat().st_size > 0, name
