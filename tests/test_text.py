"""Lexical helpers (argusqt/docs/formats.md §0): lines, tokens and the resolution of named files."""

from __future__ import annotations

from pathlib import Path

import pytest

from argusqt.errors import InputError
from argusqt.io.text import read_lines, resolve_path, split_lines, tokenize


def test_line_endings_lf_crlf_and_stray_cr(tmp_path: Path) -> None:
    p = tmp_path / "x.txt"
    p.write_bytes(b"a\nb\r\nc\r\r\nd")
    assert read_lines(p) == ["a", "b", "c", "d"]
    p.write_bytes(b"a\rb\r")  # old Mac: CR only
    assert read_lines(p) == ["a", "b"]
    assert split_lines("x\n\ny\n") == ["x", "", "y"]  # blank line kept: numbering stays


def test_utf8_then_latin1_and_bom(tmp_path: Path) -> None:
    p = tmp_path / "x.txt"
    p.write_bytes("é,ü\n".encode())
    assert read_lines(p) == ["é,ü"]
    p.write_bytes("é,ü\n".encode("latin-1"))
    assert read_lines(p) == ["é,ü"]
    p.write_bytes(b"\xef\xbb\xbfabc\n")
    assert read_lines(p) == ["abc"]


def test_missing_file_is_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as e:
        read_lines(tmp_path / "nope.rda")
    assert "nope.rda" in str(e.value) and "not found" in str(e.value)


def test_tokens() -> None:
    assert tokenize('  Region 12\t 2 "99"  ') == ["Region", "12", "2", "99"]
    assert tokenize('<MISSING> " x" ""') == ["<MISSING>", " x", ""]
    assert tokenize("<NUMERIC><SHADOW>") == ["<NUMERIC>", "<SHADOW>"]
    assert tokenize('"Size""Region"') == ["Size", "Region"]
    assert tokenize('<HIERCODELIST> "\\\\File1\\a b\\x.hrc"') == [
        "<HIERCODELIST>",
        "\\\\File1\\a b\\x.hrc",
    ]
    assert tokenize("   ") == []


def test_unterminated_quote_names_file_and_line() -> None:
    with pytest.raises(InputError) as e:
        tokenize('name "abc', "m.rda", 7)
    assert str(e.value).startswith("m.rda, line 7:")
    assert "closing" in str(e.value)


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "meta").mkdir()
    (tmp_path / "meta" / "sub").mkdir()
    (tmp_path / "meta" / "region.cdl").write_text("1,a\n")
    (tmp_path / "meta" / "sub" / "x.hrc").write_text("A\n")
    (tmp_path / "meta" / "GK.GRC").write_text("")
    rda = tmp_path / "meta" / "m.rda"
    rda.write_text("")
    return rda


def test_resolve_relative_to_naming_file(tmp_path: Path) -> None:
    rda = _tree(tmp_path)
    log: list[str] = []
    assert resolve_path("region.cdl", rda, log) == rda.parent / "region.cdl"
    assert resolve_path("sub/x.hrc", rda, log) == rda.parent / "sub" / "x.hrc"
    assert resolve_path("sub\\x.hrc", rda, log) == rda.parent / "sub" / "x.hrc"
    assert len(log) == 3 and "region.cdl" in log[0]


def test_resolve_absolute_as_given(tmp_path: Path) -> None:
    rda = _tree(tmp_path)
    target = rda.parent / "sub" / "x.hrc"
    log: list[str] = []
    assert resolve_path(str(target), tmp_path, log) == target
    assert "as given" in log[0]


def test_resolve_windows_and_unc_by_base_name(tmp_path: Path) -> None:
    rda = _tree(tmp_path)
    log: list[str] = []
    got = resolve_path(r"\\File1\users\Meglen\region.cdl", rda, log)
    assert got == rda.parent / "region.cdl"
    got = resolve_path(r"C:\data\tau\region.cdl", rda, log)
    assert got == rda.parent / "region.cdl"
    assert all("base name" in line for line in log)


def test_resolve_case_insensitive(tmp_path: Path) -> None:
    rda = _tree(tmp_path)
    log: list[str] = []
    assert resolve_path("REGION.CDL", rda, log) == rda.parent / "region.cdl"
    assert resolve_path("gk.grc", rda, log) == rda.parent / "GK.GRC"
    assert "ignoring case" in log[0] and "GK.GRC" in log[1]


def test_resolve_not_found_names_referencing_file(tmp_path: Path) -> None:
    rda = _tree(tmp_path)
    with pytest.raises(InputError) as e:
        resolve_path(r"\\srv\share\missing.hrc", rda, None, line=12)
    msg = str(e.value)
    assert msg.startswith(f"{rda}, line 12:")
    assert "missing.hrc" in msg


def test_resolve_working_folder_last(tmp_path: Path, monkeypatch) -> None:
    rda = _tree(tmp_path)
    (tmp_path / "cwd").mkdir()
    (tmp_path / "cwd" / "only_here.hrc").write_text("A\n")
    (tmp_path / "cwd" / "region.cdl").write_text("2,b\n")
    monkeypatch.chdir(tmp_path / "cwd")
    log: list[str] = []
    assert resolve_path("only_here.hrc", rda, log) == tmp_path / "cwd" / "only_here.hrc"
    assert "working folder" in log[0]
    assert resolve_path("region.cdl", rda, log) == rda.parent / "region.cdl"  # next to .rda wins
