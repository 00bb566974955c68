"""Cell key method input (argusqt/docs/formats.md §1.5, §13): the .rda keywords and ptables,
read from τ-Argus's own examples and refused with file and line when malformed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from shared_paths import tauargus_dir

from argusqt.errors import InputError
from argusqt.io.ptable import ptable_text, read_ptable
from argusqt.io.rda import read_rda, write_rda

HEAD = '<SEPARATOR> ";"\nA 1\n <RECODEABLE>\nX 4\n <NUMERIC>\n'
KEY = 'K 10\n <RECORDKEY>\n <DECIMALS> 8\n <PFILE> "f.txt"\n <PFILE_CONT> "c.txt"\n'


def _rda(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "m.rda"
    p.write_text(text)
    return p


def test_magnitude_example_metadata_reads_and_round_trips(tmp_path: Path) -> None:
    meta = read_rda(tauargus_dir() / "cellkey" / "Magnitude" / "microdata.rda")
    assert meta.warnings == []
    key = meta.record_key
    assert key is not None and key.name == "Key" and key.decimals == 8
    assert key.pfiles is not None
    assert (key.pfiles.pfile, key.pfiles.pfile_cont, key.pfiles.pfile_sep) == (
        "ptab_freq.txt",
        "ptab_savings_all.txt",
        "ptab_savings_smallcells.txt",
    )
    s = meta.variable("Savings").ckm
    assert s is not None and s.type == "T" and s.top_k == 3 and s.scaling == "F"
    assert (s.sigma0, s.sigma1, s.xstar, s.q) == (0.03, 0.30, 1000.0, 3.0)
    assert s.epsilon == [1.0, 0.5, 0.2]
    assert s.separation and not s.parity and not s.include_zeros
    hi = meta.variable("HighIncome").ckm
    assert hi is not None and not hi.enabled
    write_rda(meta, tmp_path / "o.rda")
    again = read_rda(tmp_path / "o.rda")
    assert again.variable("Savings").ckm == s
    assert again.record_key is not None and again.record_key.pfiles == key.pfiles
    assert again.record_key.decimals == 8


@pytest.mark.parametrize(
    ("body", "line", "fragment"),
    [
        (HEAD + " <CKM> T(x)\n" + KEY, 6, "k must be a whole number"),
        (HEAD + " <CKM> Q\n" + KEY, 6, "unknown <CKM> type 'Q'"),
        (HEAD + " <SCALING> N(0.1)\n" + KEY, 6, "only allowed after <CKM>"),
        (HEAD + " <CKM> T(2)\n <SCALING> F(0.1,0.3,100,2)\n" + KEY, 7, "takes 5 parameters"),
        (HEAD + " <CKM> V\n <SCALING> N(0.1)\n <PARITY> maybe\n" + KEY, 8, "takes Y or N"),
        (HEAD + " <CKM> V\n <SCALING> Z(1)\n" + KEY, 7, "unknown <SCALING>"),
        (HEAD + " <CKM> V\n <SCALING> N(0.1)\n", 4, "needs a <RECORDKEY> variable"),
        (HEAD + " <CKM> V\n" + KEY, 4, "needs <SCALING>"),
        (HEAD + KEY + 'L 3\n <RECORDKEY>\n <PFILE> "g"\n', 11, "only one <RECORDKEY>"),
        ('<SEPARATOR> ";"\nA 1\n <RECODEABLE>\n <CKM> V\n' + KEY, 4, "only allowed for numeric"),
    ],
)
def test_bad_cell_key_metadata_names_the_line(
    tmp_path: Path, body: str, line: int, fragment: str
) -> None:
    with pytest.raises(InputError) as e:
        read_rda(_rda(tmp_path, body))
    msg = str(e.value)
    assert f"m.rda, line {line}" in msg and fragment in msg, msg


@pytest.mark.parametrize(
    ("name", "kind", "rows", "d"),
    [
        ("Magnitude/ptab_freq.txt", "freq", list(range(9)), 5),
        ("Magnitude/ptab_savings_all.txt", "cont", [0, 1, 5], 5),
        ("Magnitude/ptab_savings_smallcells.txt", "cont", [0, 1, 8], 8),
        ("Frequency/tau_testW_ptable.txt", "freq", list(range(11)), 7),
        ("Frequency/20160511_szenario_5a.txt", "freq", list(range(9)), 5),
    ],
)
def test_example_ptables_read(name: str, kind: str, rows: list[int], d: int) -> None:
    t = read_ptable(tauargus_dir() / "cellkey" / name, kind)  # type: ignore[arg-type]
    assert [r.i for r in t.table("all")] == rows
    assert t.max_deviation == d
    for r in t.table("all"):
        assert abs(r.p.sum() - 1) < 1e-6 and np.allclose(r.v, r.j - r.i)


def test_ptable_text_reads_back(tmp_path: Path) -> None:
    t = read_ptable(tauargus_dir() / "cellkey" / "Magnitude" / "ptab_savings_all.txt", "cont")
    (tmp_path / "p.txt").write_text(ptable_text(t))
    again = read_ptable(tmp_path / "p.txt", "cont")
    assert [(r.i, list(r.j)) for r in again.table()] == [(r.i, list(r.j)) for r in t.table()]


GOOD = "i;j;p;v;p_int_ub\n0;0;1;0;1\n1;0;0.5;-1;0.5\n1;2;0.5;1;1\n"


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        (GOOD.replace("1;2;0.5;1;1", "1;2;0.4;1;0.9"), 4, "add up to 0.9"),
        (GOOD.replace("1;2;0.5;1;1", "1;2;0.5;1;0.8"), 4, "running sum of p"),
        (GOOD.replace("1;2;0.5;1;1", "1;2;0.5;3;1"), 4, "v must be j − i"),
        (GOOD.replace("1;0;0.5", "1;x;0.5"), 3, "expected a number for j"),
        (GOOD.replace("1;0;0.5;-1;0.5\n1;2", "2;0;0.5;-2;0.5\n2;2"), 3, "without gaps"),
        (GOOD.replace("0;0;1;0;1\n", "1;1;1;0;1\n"), 2, "first row must be i = 0"),
        (GOOD.replace("1;2;0.5;1;1", "1;2;0.5"), 4, "expected 5 fields"),
        (GOOD.replace("1;0;0.5;-1;0.5", "1;0;1.5;-1;0.5"), 3, "p must be in [0, 1]"),
    ],
)
def test_bad_ptable_names_file_and_line(
    tmp_path: Path, text: str, line: int, fragment: str
) -> None:
    p = tmp_path / "pt.txt"
    p.write_text(text)
    with pytest.raises(InputError) as e:
        read_ptable(p)
    msg = str(e.value)
    assert f"pt.txt, line {line}" in msg and fragment in msg, msg


def test_missing_ptable_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="ptable file does not exist"):
        read_ptable(tmp_path / "nope.txt")


def test_record_key_without_ptable_is_a_warning(tmp_path: Path) -> None:
    """τ-Argus refuses a record key without <PFILE>; argusqt warns (the ptable may come from
    the batch command, the API or the GUI) and CKM says what is missing when it runs."""
    meta = read_rda(_rda(tmp_path, HEAD + "K 10\n <RECORDKEY>\n <DECIMALS> 8\n"))
    (w,) = meta.warnings
    assert "m.rda, line 6" in w and "names no <PFILE>" in w
