"""Attack on linked tables published in mixed forms (issue 21 review): tables protected
together, then one of them protected again on its own by rounding. An outsider combines the
rounded table with the other table's exact figures; the gate must judge them together."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from scipy.optimize import linprog

from argusqt.batch.arb import parse_specify_table
from argusqt.errors import PublicationError
from argusqt.model.status import is_primary
from argusqt.rules.parse import parse_safety_rule
from argusqt.session import Session

REGIONS = ["Total", "A", "B", "C", "D"]
GENDERS = ["Total", "male", "female"]


def _printed(path) -> dict[tuple[str, ...], float]:
    """A code-value file as the attacker reads it: codes → printed number."""
    with open(path, newline="") as fh:
        return {tuple(c.strip() for c in row[:-1]): float(row[-1]) for row in csv.reader(fh) if row}


def _attack(t1_file, t2_file, base: float, cell: tuple[str, str]) -> tuple[float, float]:
    """Independent LP attacker: region × gender cells within `printed ± (base − 0.01)` (RND's
    public base, 2 decimals), non-negative, adding up, region margins exactly as table 2
    prints them. Returns the bounds on `cell`."""
    t1, t2 = _printed(t1_file), _printed(t2_file)
    idx = {(r, g): i for i, (r, g) in enumerate((r, g) for r in REGIONS for g in GENDERS)}
    n = len(idx)
    eq, rhs = [], []
    for r in REGIONS:  # total = male + female
        row = np.zeros(n)
        row[idx[(r, "Total")]], row[idx[(r, "male")]], row[idx[(r, "female")]] = 1, -1, -1
        eq.append(row)
        rhs.append(0.0)
    for g in GENDERS:  # Total region = Σ regions
        row = np.zeros(n)
        row[idx[("Total", g)]] = 1
        for r in REGIONS[1:]:
            row[idx[(r, g)]] = -1
        eq.append(row)
        rhs.append(0.0)
    for r in REGIONS:  # table 2 prints the region margins exactly
        row = np.zeros(n)
        row[idx[(r, "Total")]] = 1
        eq.append(row)
        rhs.append(t2[(r,)])
    span = base - 0.01
    bounds = [
        (max(0.0, t1[key] - span), t1[key] + span) for key in sorted(idx, key=idx.__getitem__)
    ]
    c = np.zeros(n)
    c[idx[cell]] = 1.0
    lo = linprog(c, A_eq=np.array(eq), b_eq=rhs, bounds=bounds, method="highs")
    hi = linprog(-c, A_eq=np.array(eq), b_eq=rhs, bounds=bounds, method="highs")
    assert lo.status == 0 and hi.status == 0
    return float(lo.fun), float(-hi.fun)


def test_linked_set_with_one_table_rounded_alone_is_not_published_disclosing(ex2):
    """Linked OPT on region × gender and region, then RND (base 49, above the minimum 45) on
    table 1 alone: whatever both doors write, the attacker over both files must not bound
    the primary inside its protection interval."""
    s = _two_tables(ex2)
    s.protect_linked("OPT")
    s.protect(1, "RND", {"base": 49})
    _assert_nothing_disclosing(s, ex2)


def _two_tables(ex2) -> Session:
    """region × gender and region from batch example 2 (they share the region margin)."""
    s = Session()
    s.open_microdata(ex2 / "microdata_ex2.asc", ex2 / "metadata_ex2.rda")
    for spec in ('"region""gender"|"num1"|""|""', '"region"|"num1"|""|""'):
        s.specify_table(parse_specify_table(spec))
        s.set_safety_rules(parse_safety_rule("FREQ(5,20)|P(20,5)"))
    s.compute_tables()
    return s


def _assert_nothing_disclosing(s: Session, ex2) -> None:
    """Both tables written (or refused, then absent); the attacker over both files must not
    bound a primary of table 1 inside its protection interval."""
    t1 = s.table(1)
    written = []
    for no in (1, 2):
        try:
            s.write_table(no, 3, "", ex2 / f"t{no}.txt")
            written.append(no)
        except PublicationError:
            assert not (ex2 / f"t{no}.txt").exists()
    if written != [1, 2]:
        return  # refused: nothing an attacker could combine was published
    primaries = np.flatnonzero(is_primary(t1.status)).tolist()
    assert primaries
    for cell in primaries:
        region, gender = (c.strip() for c in t1.cell_codes(cell))
        lo, hi = _attack(ex2 / "t1.txt", ex2 / "t2.txt", 49, (region, gender))
        a, lpl, upl = float(t1.value[cell]), float(t1.lpl[cell]), float(t1.upl[cell])
        assert lo <= a - lpl + 0.005 and hi >= a + upl - 0.005, (region, gender, lo, hi, a)


def test_separately_protected_tables_sharing_a_margin_are_not_published_disclosing(ex2):
    """The same two tables, not linked: table 1 rounded (base 49), table 2 has no unsafe
    cell and prints its region margins exactly; combined they bound A × female."""
    s = _two_tables(ex2)
    s.protect(1, "RND", {"base": 49})
    _assert_nothing_disclosing(s, ex2)


def test_data_frame_door_runs_the_joint_audit_of_linked_tables(ex2):
    """publish() / to_parquet() (Session.published_frame) refuse a linked set exactly when
    write_table does: after RND on table 1 alone, neither table comes out as a data frame."""
    s = _two_tables(ex2)
    s.protect_linked("OPT")
    s.protect(1, "RND", {"base": 49})
    for no in (1, 2):
        with pytest.raises(PublicationError, match="linked tables cannot be published"):
            s.write_table(no, 3, "", ex2 / f"t{no}.txt")
        with pytest.raises(PublicationError, match="linked tables cannot be published"):
            s.published_frame(no)
