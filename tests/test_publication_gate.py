"""The publication gate: what leaves the program for publication passed the audit on the
current statuses; a change after protection makes the table unpublishable until protected
again; internal outputs are confidential and the τ-Argus-forbidden combinations refused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import openpyxl
import pytest
from session_helpers import ex2_session

from argusqt.batch.arb import parse_specify_table
from argusqt.errors import PublicationError, SpecificationError
from argusqt.export.gate import fingerprint, protection_state
from argusqt.rules.parse import parse_safety_rule
from argusqt.session import Session

ROOT = Path(__file__).resolve().parents[1]
HEAD = (
    '<OPENMICRODATA> "microdata_ex2.asc"\n<OPENMETADATA> "metadata_ex2.rda"\n'
    '<SPECIFYTABLE> "region""gender"|"num1"|""|""\n<SAFETYRULE> FREQ(5,20)|P(20,5)\n'
    "<READMICRODATA>\n"
)


def _open_row_cell(table) -> int:
    """A published non-total cell whose row (first variable) has no suppressed cell: set
    unsafe alone it equals its row total minus its published siblings."""
    st = table.status.reshape(table.shape)
    for r in range(1, table.shape[0]):
        if np.all(st[r] == 1):
            return table.cell_index((r, 2))
    raise AssertionError("no fully published row")


def test_unprotected_primaries_refused_nothing_to_protect_published(ex2):
    s = ex2_session(ex2)
    assert s.protection_state(1) == "unprotected"
    with pytest.raises(PublicationError, match="has not been protected") as err:
        s.write_table(1, 3, "", ex2 / "pub.txt")
    msg = str(err.value)
    assert msg.startswith("table 1: the table cannot be published")
    assert "region=A × gender=female" in msg  # cells named by their codes
    assert ("A", "female") in err.value.cells
    assert not (ex2 / "pub.txt").exists()
    for out_type, name in ((1, "pub.csv"), (2, "pub2.csv"), (1, "pub.xlsx")):
        with pytest.raises(PublicationError):
            s.write_table(1, out_type, "", ex2 / name)
        assert not (ex2 / name).exists()
    assert "NOT written" in s.log[-1].message
    # internal outputs are not publications: written, and logged as CONFIDENTIAL
    s.write_table(1, 3, "AS+", ex2 / "internal.txt")
    assert "CONFIDENTIAL" in s.log[-1].message
    # a table without unsafe cells never needed protection: it can be published
    s2 = Session()
    s2.open_microdata(ex2 / "microdata_ex2.asc", ex2 / "metadata_ex2.rda")
    s2.specify_table(parse_specify_table('"region""gender"|"num1"|""|""'))
    s2.set_safety_rules(parse_safety_rule("FREQ(1,0)"))
    s2.compute_tables()
    assert s2.protection_state(1) == "nothing to protect"
    s2.write_table(1, 3, "", ex2 / "safe.txt")
    assert "x" not in (ex2 / "safe.txt").read_text()


def test_status_change_after_protection_refused_until_protected_again(ex2):
    s = ex2_session(ex2)
    s.protect(1, "OPT")
    t = s.table(1)
    # OPT's own publication verdict on this very pattern cleared the table
    assert s.protection_state(1) == "cleared"
    s.write_table(1, 3, "", ex2 / "before.txt")
    cleared = t.cleared_print
    s.write_table(1, 1, "", ex2 / "before.csv")  # unchanged: no new audit needed
    assert t.cleared_print == cleared == fingerprint(t)

    cell = _open_row_cell(t)
    s.set_status(1, [cell], "unsafe")
    assert s.protection_state(1) == "changed"
    assert any("NOT PROTECTED" in e.message for e in s.log[-2:])
    name = " × ".join(
        f"{v}={c.strip()}" for v, c in zip(["region", "gender"], t.cell_codes(cell), strict=True)
    )
    for out_type, file in ((3, "after.txt"), (1, "after.xlsx"), (1, "after.csv")):
        with pytest.raises(PublicationError, match="changed after protection") as err:
            s.write_table(1, out_type, "", ex2 / file)
        assert name in str(err.value) and not (ex2 / file).exists()
    with pytest.raises(PublicationError):
        s.audit_publication(1)
    # the drafts printed the cell now unsafe: deleted, they no longer count (D-81, D-90)
    (ex2 / "before.txt").unlink()
    (ex2 / "before.csv").unlink()
    # protected again: published, and the new primary is suppressed in the file
    s.protect(1, "OPT")
    assert s.protection_state(1) == "cleared"
    s.write_table(1, 3, "", ex2 / "after.txt")
    line = next(
        ln
        for ln in (ex2 / "after.txt").read_text().splitlines()
        if ln.startswith(",".join(f'"{c}"' for c in t.cell_codes(cell)))
    )
    assert line.endswith(",x")


def test_harmless_change_passes_the_audit_again(ex2):
    """The gate judges the current statuses, not the history: a change that keeps every
    primary protected (a published cell made 'protected') still publishes."""
    s = ex2_session(ex2)
    s.protect(1, "OPT")
    t = s.table(1)
    cell = _open_row_cell(t)
    s.set_status(1, [cell], "protected")
    assert s.protection_state(1) == "changed"
    assert "Audit passed" in s.audit_publication(1)
    assert s.protection_state(1) == "cleared"
    s.write_table(1, 2, "", ex2 / "pivot.csv")
    # undo of the secondaries: no protection left, refused as unprotected
    s.undo_protection(1)
    assert s.protection_state(1) == "unprotected"
    with pytest.raises(PublicationError, match="has not been protected"):
        s.write_table(1, 2, "", ex2 / "pivot2.csv")


def test_forbidden_combinations_after_cta_and_rounding(ex2, shared_data):
    s = ex2_session(ex2)
    s.protect(1, "CTA")
    for out_type, what in ((4, "SBS"), (5, "intermediate")):
        with pytest.raises(
            SpecificationError,
            match=f"{what} output .* not possible after controlled tabular adjustment",
        ):
            s.write_table(1, out_type, "", ex2 / f"cta{out_type}")
        assert not (ex2 / f"cta{out_type}").exists()
    s.write_table(1, 3, "", ex2 / "cta.txt")  # the adjusted values are published
    s.write_table(1, 6, "", ex2 / "cta.jj")  # JJ stays available as an internal file
    # a status change after CTA: the adjusted values no longer fit, refused until re-run
    cell = _open_row_cell(s.table(1))
    s.set_status(1, [cell], "unsafe")
    with pytest.raises(PublicationError, match="Run controlled tabular adjustment again"):
        s.write_table(1, 3, "", ex2 / "cta2.txt")
    s.protect(1, "CTA")
    s.write_table(1, 3, "", ex2 / "cta2.txt")

    f = Session()
    f.open_microdata(ex2 / "microdata_ex2.asc", ex2 / "metadata_ex2.rda")
    f.specify_table(parse_specify_table('"region""gender"|<freq>|""|""'))
    f.set_safety_rules(parse_safety_rule("FREQ(5,20)"))
    f.compute_tables()
    f.protect(1, "RND", {"base": 5})
    with pytest.raises(SpecificationError, match="JJ output .* not possible after rounding"):
        f.write_table(1, 6, "", ex2 / "rnd.jj")
    f.write_table(1, 3, "", ex2 / "rnd.txt")
    f.write_table(1, 4, "", ex2 / "rnd.sbs")


def test_batch_status_change_after_protection_exits_non_zero(ex2):
    """CLI: an a-priori change after SUPPRESS, then WRITETABLE → exit 1 naming the cell;
    with SUPPRESS again after the change the same export works."""
    (ex2 / "late.hst").write_text('"B","female",u\n')
    bad = ex2 / "late.arb"
    bad.write_text(
        HEAD
        + "<SUPPRESS> OPT(1)\n"
        + '<APRIORI> "late.hst", 1, ",", 0, 0\n'
        + '<WRITETABLE> (1, 2, , "late.csv")\n'
    )
    cmd = [sys.executable, "-m", "argusqt", "batch", str(bad)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "late.arb, line 8" in proc.stderr
    assert "changed after protection" in proc.stderr
    assert "region=B × gender=female" in proc.stderr
    assert not (ex2 / "late.csv").exists()
    good = ex2 / "again.arb"
    good.write_text(bad.read_text().replace("<WRITETABLE>", "<SUPPRESS> OPT(1)\n<WRITETABLE>"))
    proc = subprocess.run(
        [sys.executable, "-m", "argusqt", "batch", str(good)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = {tuple(ln.split(",")[:2]): ln for ln in (ex2 / "late.csv").read_text().splitlines()}
    assert rows[('"B"', '"female"')].endswith(",x")


def test_confidential_workbook_only_when_asked(ex2):
    s = ex2_session(ex2)
    s.protect(1, "OPT")
    s.write_table(1, 1, "", ex2 / "t.xlsx")
    assert sorted(p.name for p in ex2.glob("*.xlsx")) == ["t.xlsx"]
    assert openpyxl.load_workbook(ex2 / "t.xlsx").sheetnames == ["table"]
    written = s.write_confidential(1, ex2 / "t.xlsx")
    assert written == ex2 / "t_CONFIDENTIAL.xlsx"
    wb = openpyxl.load_workbook(written)
    assert wb.sheetnames == ["table", "cells", "report"]
    assert all(wb[n]["A1"].value == "CONFIDENTIAL — not for publication" for n in wb.sheetnames)
    assert "CONFIDENTIAL" in s.log[-1].message
    # the batch way: AS+ on an .xlsx asks for the confidential workbook
    files = s.write_table(1, 1, "AS+", ex2 / "b.xlsx")
    assert files == [ex2 / "b_CONFIDENTIAL.xlsx"] and not (ex2 / "b.xlsx").exists()


def test_state_of_a_fresh_table_and_fingerprint_changes(ex2):
    s = ex2_session(ex2)
    t = s.table(1)
    fp = fingerprint(t)
    t.lpl[5] += 1.0  # protection levels are part of what the audit checks
    assert fingerprint(t) != fp
    t.lpl[5] -= 1.0
    assert fingerprint(t) == fp
    assert protection_state(t) == "unprotected"


def test_linked_tables_are_audited_together_before_publication(ex2):
    """Tables protected together (table 0) are published only after a joint audit: a
    change to one of them blocks the export of the other too."""
    s = Session()
    s.open_microdata(ex2 / "microdata_ex2.asc", ex2 / "metadata_ex2.rda")
    for spec in ('"region""gender"|"num1"|""|""', '"region"|"num1"|""|""'):
        s.specify_table(parse_specify_table(spec))
        s.set_safety_rules(parse_safety_rule("FREQ(5,20)|P(20,5)"))
    s.compute_tables()
    before = len(s.log)
    s.protect_linked("OPT")
    assert s.linked == [1, 2]
    # the gate's verdict comes with the protection (docs/design.md, D-50): no door says
    # "protected" of a set the gate would refuse
    assert any("joint publication audit passed" in e.message for e in s.log[before:])
    assert [s.protection_state(no) for no in (1, 2)] == ["cleared", "cleared"]
    s.write_table(1, 3, "", ex2 / "t1.txt")
    s.write_table(2, 3, "", ex2 / "t2.txt")  # unchanged: the joint verdict is reused
    # table 2 changed by hand: table 1 alone is unchanged, but the pair now disagrees
    t2 = s.table(2)
    cell = int(np.flatnonzero(t2.status == 1)[-1])
    s.set_status(2, [cell], "unsafe")
    with pytest.raises(PublicationError, match="linked tables cannot be published"):
        s.write_table(1, 3, "", ex2 / "t1b.txt")
    assert not (ex2 / "t1b.txt").exists()
    s.write_table(1, 3, "AS+", ex2 / "t1c.txt")  # internal files stay available
    # the same cell made unsafe in table 1 (region × Total), protected together again
    s.set_status(1, [s.table(1).cell_index((cell, 0))], "unsafe")
    s.protect_linked("OPT")
    # the first files were drafts: deleted, they no longer count beside the new pattern
    # (with them on disk the gate refuses, docs/design.md D-81)
    (ex2 / "t1.txt").unlink()
    (ex2 / "t2.txt").unlink()
    s.write_table(1, 3, "", ex2 / "t1b.txt")
    s.write_table(2, 3, "", ex2 / "t2b.txt")
