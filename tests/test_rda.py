"""Metadata files `.rda` (argusqt/docs/formats.md §1): real files, roles, validation errors,
round trip."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from argusqt.errors import InputError, SpecificationError
from argusqt.io.rda import read_rda, write_rda
from argusqt.model.metadata import Metadata

ROLES = (
    "recodeable",
    "numeric",
    "weight",
    "holding",
    "request",
    "frequency",
    "maxscore",
    "status",
    "shadow",
    "cost",
    "lowerpl",
    "upperpl",
)


def roles(v) -> set[str]:
    return {r for r in ROLES if getattr(v, r)}


def copy(shared: Path, case: str, name: str, dest: Path) -> Path:
    out = dest / name
    shutil.copy(shared / case / name, out)
    return out


def write(tmp_path: Path, text: str, name: str = "m.rda") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


# ---------------------------------------------------------------------- real files
def test_tau_testw_all_variables(shared_data: Path, tmp_path: Path) -> None:
    meta = read_rda(copy(shared_data, "tau_testW", "tau_testW.rda", tmp_path))
    assert meta.kind == "fixed" and meta.separator is None
    got = [(v.name, v.start, v.width, v.missing) for v in meta.variables]
    assert got == [
        ("Year", 1, 2, ["99"]),
        ("IndustryCode", 4, 5, ["99999"]),
        ("Size", 9, 2, ["99"]),
        ("Region", 12, 2, ["99"]),
        ("Wgt", 15, 4, ["9999"]),
        ("Var1", 19, 9, ["999999999"]),
        ("Var2", 28, 10, ["9999999999"]),
        ("Var3", 38, 10, ["9999999999"]),
        ("Var4", 48, 10, ["9999999999"]),
        ("Var5", 58, 10, ["9999999999"]),
        ("Var6", 68, 10, ["9999999999"]),
        ("Var7", 78, 10, ["9999999999"]),
        ("Var8", 88, 10, ["9999999999"]),
        ("Request", 99, 1, []),
    ]
    assert [v.name for v in meta.explanatory] == ["Year", "IndustryCode", "Size", "Region"]
    assert [v.name for v in meta.numeric] == [f"Var{i}" for i in range(1, 9)]
    assert meta.weight.name == "Wgt" and meta.weight.decimals == 1
    assert meta.request.name == "Request" and meta.request.request_codes == ["1", "2"]
    assert meta.holding is None
    year = meta.variable("year")  # case-insensitive
    assert year.distance == [1, 2, 3, 4, 5] and not year.hierarchical
    ind = meta.variable("IndustryCode")
    assert ind.hierarchical and ind.hierlevels == [3, 1, 1] and ind.hier_file is None
    assert ind.distance == [1, 3, 5, 7, 9]
    reg = meta.variable("Region")
    assert reg.hierarchical and reg.hier_file == "region2.hrc" and reg.hier_lead == "@"
    assert reg.codelist == "region.cdl" and reg.distance == [2, 4, 4, 4, 4]
    assert reg.total_code == "Total" and reg.line == 11
    assert meta.variable("Var2").decimals == 2
    assert meta.warnings == []


def test_metadata_ex2_free_format_weight(shared_data: Path, tmp_path: Path) -> None:
    meta = read_rda(copy(shared_data, "batch_ex2", "metadata_ex2.rda", tmp_path))
    assert meta.kind == "free" and meta.separator == ","
    assert [(v.name, v.width, v.missing) for v in meta.variables] == [
        ("region", 1, []),
        ("gender", 6, []),
        ("weight", 3, ["999"]),
        ("val", 3, ["999"]),
        ("num1", 6, ["999999"]),
        ("num2", 6, ["999999"]),
    ]
    # <NUMERIC> then <WEIGHT>: the later role keyword wins
    assert roles(meta.variable("weight")) == {"weight"}
    assert meta.weight.name == "weight"
    assert [v.name for v in meta.numeric] == ["val", "num1", "num2"]
    g = meta.variable("gender")
    assert g.hier_file == "hier_gender_ex2.hrc" and g.hier_lead == "@" and g.hierarchical


def test_pp_tabular(shared_data: Path, tmp_path: Path) -> None:
    meta = read_rda(copy(shared_data, "tableinput", "pp.rda", tmp_path))
    assert meta.kind == "tabular" and meta.separator == ";"
    assert [(v.name, sorted(roles(v))) for v in meta.variables] == [
        ("Size", ["recodeable"]),
        ("Region", ["recodeable"]),
        ("Var2", ["numeric"]),
        ("FreqVar", ["frequency"]),
        ("Var2_Shadow", ["shadow"]),
        ("Var2_Cost", ["cost"]),
        ("Top1", ["maxscore"]),
        ("Top2", ["maxscore"]),
        ("StatusVar", ["status"]),
        ("LowerProtLevel", ["lowerpl"]),
        ("UpperProtLevel", ["upperpl"]),
    ]
    assert meta.variable("Size").missing == ["99"] and meta.variable("Size").width is None
    assert meta.tabular_column("response").name == "Var2"
    assert meta.tabular_column("cost").name == "Var2_Cost"
    assert [v.name for v in meta.maxscore] == ["Top1", "Top2"]
    assert meta.variable("Region").codelist == "REGION.CDL"
    # the same file is tabular when the caller says so
    assert read_rda(tmp_path / "pp.rda", kind_hint="tabular").kind == "tabular"


def test_metadata_ex1_tabular_status_codes(shared_data: Path, tmp_path: Path) -> None:
    meta = read_rda(copy(shared_data, "batch_ex1", "metadata_ex1.rda", tmp_path))
    assert meta.kind == "tabular"
    assert (meta.safe_code, meta.unsafe_code, meta.protect_code) == ("S", "U", "Z")
    assert meta.status.name == "sdcStatus"
    assert meta.tabular_column("response").name == "freq"
    assert meta.tabular_column("lowerpl").name == "lpl"


def test_enterprise_windows_paths_kept_as_written(shared_data: Path, tmp_path: Path) -> None:
    meta = read_rda(copy(shared_data, "enterprise", "example_enterprise.rda", tmp_path))
    assert meta.holding.name == "h_id" and roles(meta.holding) == {"holding"}
    act = meta.variable("act")
    assert act.missing == ["00"] and act.start == 10 and act.width == 2
    assert act.hier_file.endswith(r"\Testni_podatki\nace_divisions.hrc")
    assert act.hier_file.startswith("\\\\File1\\")
    assert meta.variable("turnover").decimals == 2


@pytest.mark.parametrize(
    "case,name",
    [
        ("tau_testW", "tau_testW.rda"),
        ("batch_ex2", "metadata_ex2.rda"),
        ("enterprise", "example_enterprise.rda"),
        ("tableinput", "pp.rda"),
        ("batch_ex1", "metadata_ex1.rda"),
    ],
)
def test_round_trip(shared_data: Path, tmp_path: Path, case: str, name: str) -> None:
    meta = read_rda(copy(shared_data, case, name, tmp_path))
    out = tmp_path / "out.rda"
    write_rda(meta, out)
    again = read_rda(out)
    assert again.kind == meta.kind and again.separator == meta.separator
    assert (again.safe_code, again.unsafe_code, again.protect_code) == (
        meta.safe_code,
        meta.unsafe_code,
        meta.protect_code,
    )
    for a, b in zip(meta.variables, again.variables, strict=True):
        assert _fields(a) == _fields(b)
    text = out.read_text()
    assert "<RECODABLE>" not in text and "<COST>" not in text
    assert all(
        ln.startswith("    <")
        for ln in text.splitlines()
        if ln.lstrip().startswith("<") and not ln.startswith("<")
    )


def _fields(v) -> dict:
    d = dict(vars(v))
    d.pop("line")
    return d


def test_write_rda_layout(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        "Ind 1 5 99999\n <recodable>\n <HIERARCHICAL>\n <HIERLEVELS> 3 1 1 0 0\n"
        "Val 6 4\n <NUMERIC>\n <DECIMALS> 1\n",
    )
    meta = read_rda(p)
    write_rda(meta, tmp_path / "o.rda")
    assert (tmp_path / "o.rda").read_text() == (
        'Ind 1 5 "99999"\n    <RECODEABLE>\n    <HIERARCHICAL>\n    <HIERLEVELS> 3 1 1\n'
        "Val 6 4\n    <NUMERIC>\n    <DECIMALS> 1\n"
    )


# ---------------------------------------------------------------------- roles & options
def test_recodeable_plus_numeric_is_both(tmp_path: Path) -> None:
    meta = read_rda(write(tmp_path, "A 1 2\n <NUMERIC>\n <RECODEABLE>\nB 3 2\n <RECODEABLE>\n"))
    assert roles(meta.variable("A")) == {"recodeable", "numeric"}
    assert meta.variable("A").categorical and meta.variable("A").is_number


def test_last_role_wins(tmp_path: Path) -> None:
    meta = read_rda(
        write(
            tmp_path, "A 1 2\n <RECODEABLE>\nB 3 2\n <RECODEABLE>\n <WEIGHT>\nC 5 1\n <HOLDING>\n"
        )
    )
    assert roles(meta.variable("B")) == {"weight"}
    assert roles(meta.variable("C")) == {"holding"}


def test_missing_codes_padded_for_categorical_only(tmp_path: Path) -> None:
    meta = read_rda(write(tmp_path, 'A 1 3 9 " x"\n <RECODEABLE>\nB 4 3 9\n <NUMERIC>\n'))
    assert meta.variable("A").missing == ["  9", "  x"]
    assert meta.variable("B").missing == ["9"]


def test_keywords_case_insensitive_and_comments(tmp_path: Path) -> None:
    meta = read_rda(
        write(tmp_path, '// a comment\n\nA 1 2\n   <recodeable>\n  // c\n  <TotCode> "All"\n')
    )
    assert meta.variable("A").total_code == "All" and meta.variable("A").line == 3


def test_distance_repeats_last(tmp_path: Path) -> None:
    meta = read_rda(write(tmp_path, "A 1 2\n <RECODEABLE>\n <DISTANCE> 2 3\n"))
    assert meta.variable("A").distance == [2, 3, 3, 3, 3]


def test_overlapping_fields_warn(tmp_path: Path) -> None:
    meta = read_rda(write(tmp_path, "A 1 3\n <RECODEABLE>\nB 2 2\n <NUMERIC>\n"))
    assert len(meta.warnings) == 1 and "overlap" in meta.warnings[0]


def test_cell_key_keywords_preserved(tmp_path: Path) -> None:
    meta = read_rda(
        write(
            tmp_path, 'A 1 2\n <RECODEABLE>\nK 3 4\n <RECORDKEY>\n <PFILE> "p.txt"\n <TRUNCABLE>\n'
        )
    )
    k = meta.variable("K")
    assert k.record_key and k.truncable and k.pfiles is not None and k.pfiles.pfile == "p.txt"
    write_rda(meta, tmp_path / "o.rda")
    again = read_rda(tmp_path / "o.rda").variable("K")
    assert again.record_key and again.pfiles == k.pfiles


def test_unknown_variable_lookup(tmp_path: Path) -> None:
    p = write(tmp_path, "A 1 2\n <RECODEABLE>\n")
    with pytest.raises(SpecificationError) as e:
        read_rda(p).variable("Nope")
    assert str(p) in str(e.value) and "Nope" in str(e.value)


def test_metadata_helpers_without_roles() -> None:
    meta = Metadata(path=None, kind="fixed")
    assert meta.weight is None and meta.explanatory == [] and meta.find("x") is None


# ---------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "text,line,words",
    [
        ("A 1 x\n <RECODEABLE>\n", 1, ["expected a whole number", "width of A", "'x'"]),
        ("A 1 0\n <RECODEABLE>\n", 1, ["width of A", "at least 1"]),
        ("A 0 2\n <RECODEABLE>\n", 1, ["start position"]),
        ("A 1 2\n <RECODEABLE>\n <FOO>\n", 3, ["unknown keyword <FOO>"]),
        ("A 1 2\n <RECODEABLE>\n <MISSING> 9\n", 3, ["<MISSING> is not an .rda keyword"]),
        ("A 1 2 999\n <RECODEABLE>\n", 1, ["longer than its width"]),
        ("A 1\n <RECODEABLE>\n", 1, ["name start width"]),
        ("A 1 2 1 2 3\n <RECODEABLE>\n", 1, ["name start width"]),
        ("<RECODEABLE>\nA 1 2\n", 1, ["expected a variable line"]),
        ("A 1 2\n <RECODEABLE>\na 3 2\n", 3, ["defined twice", "line 1"]),
        ("A 1 2\n <RECODEABLE>\nB 3 2\n <NUMERIC> <SHADOW>\n", 4, ["alone on its line"]),
        ("A 1 2\n <RECODEABLE>\nB 3 2\n <FREQUENCY>\n", 4, ["only allowed in tabular"]),
        ("A 1 2\n <RECODEABLE>\n <DECIMALS> two\n", 3, ["<DECIMALS> of A", "'two'"]),
        ("A 1 2\n <RECODEABLE>\n <REQUEST>\n", 3, ["<REQUEST> of A takes 1 to 2"]),
        ("A 1 3\n <RECODEABLE>\n <HIERARCHICAL>\n <HIERLEVELS> 1 1\n", 1, ["add up to 2"]),
        ("A 1 2\n <RECODEABLE>\n <HIERARCHICAL>\n", 1, ["neither <HIERLEVELS>"]),
        (
            'A 1 2\n <RECODEABLE>\n <HIERARCHICAL>\n <HIERCODELIST> "a.hrc"\n',
            1,
            ["needs a <HIERLEADSTRING>"],
        ),
        ('A 1 2\n <RECODEABLE>\n <HIERLEADSTRING> ""\n', 3, ["empty"]),
        ('A 1 2\n <RECODEABLE>\n <TOTCODE> "Total\n', 3, ["closing"]),
        ('<SEPARATOR> ","\nA 2\n <RECODEABLE>\n<SEPARATOR> ";"\n', 4, ["first line"]),
    ],
)
def test_errors_name_file_and_line(tmp_path: Path, text: str, line: int, words: list[str]) -> None:
    p = write(tmp_path, text)
    with pytest.raises(InputError) as e:
        read_rda(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}, line {line}:"), msg
    for w in words:
        assert w in msg, msg


def test_no_explanatory_variable(tmp_path: Path) -> None:
    p = write(tmp_path, "A 1 2\n <NUMERIC>\n")
    with pytest.raises(InputError, match="at least one explanatory"):
        read_rda(p)


def test_tabular_needs_total_code_and_unique_columns(tmp_path: Path) -> None:
    p = write(tmp_path, '<SEPARATOR> ";"\nA\n <RECODEABLE>\nV\n <NUMERIC>\n')
    with pytest.raises(InputError, match="needs a <TOTCODE>"):
        read_rda(p, kind_hint="tabular")
    p = write(
        tmp_path,
        '<SEPARATOR> ";"\nA\n <RECODEABLE>\n <TOTCODE> "T"\nV\n <NUMERIC>\n'
        "S1\n <NUMERIC> <SHADOW>\nS2\n <NUMERIC> <SHADOW>\n",
    )
    with pytest.raises(InputError) as e:
        read_rda(p)
    assert "one shadow column" in str(e.value) and "line 9" in str(e.value)
    p = write(tmp_path, '<SEPARATOR> ";"\nA\n <RECODEABLE>\n <TOTCODE> "T"\nS\n <STATUS>\n')
    with pytest.raises(InputError, match="response"):
        read_rda(p)


def test_spss_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="SPSS"):
        read_rda(write(tmp_path, "<SPSS>\nA 1 2\n"))
