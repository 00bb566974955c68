"""Hostile files named as inputs: huge NUL-filled (sparse) files, UTF-16 text, a folder or a
device as hierarchy. Each is refused at once with a message saying what the file is, having
read one block, never the whole file (issue 23 items 9 and 13)."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest
from session_helpers import ex2_session

from argusqt.batch.runner import run_batch
from argusqt.errors import ArgusError, InputError
from argusqt.io.hrc import read_hrc
from argusqt.io.microdata import read_microdata
from argusqt.io.rda import read_rda
from argusqt.session import Session

HUGE = 2 * 1024**3  # 2 GB, sparse: costs no disk


def _sparse(path: Path, size: int = HUGE, head: bytes = b"") -> Path:
    with path.open("wb") as fh:
        fh.write(head)
        fh.truncate(size)
    return path


def _peak_mb(call) -> float:
    """Peak of Python's allocations while `call` runs (it must raise an ArgusError)."""
    tracemalloc.start()
    try:
        with pytest.raises(ArgusError) as info:
            call()
        return tracemalloc.get_traced_memory()[1] / 1e6, info.value
    finally:
        tracemalloc.stop()


def test_huge_nul_hierarchy_is_refused_after_one_block(tmp_path):
    hrc = _sparse(tmp_path / "h.hrc")
    peak, err = _peak_mb(lambda: read_hrc(hrc, "@"))
    assert "binary, not text" in str(err) and str(hrc) in str(err)
    assert peak < 64  # one block read, not 2 GB


def test_huge_file_with_text_then_nuls_stops_at_the_first_nul(tmp_path):
    hrc = _sparse(tmp_path / "h.hrc", head=b"A\n@1\n@2\n" * 200_000)  # 1.6 MB of text
    peak, err = _peak_mb(lambda: read_hrc(hrc, "@"))
    assert isinstance(err, InputError) and err.line == 600_001 and "0x00" in str(err)
    assert peak < 200


def test_huge_nul_microdata_is_refused_after_one_block(ex2):
    data = _sparse(ex2 / "microdata_ex2.asc")
    meta = read_rda(ex2 / "metadata_ex2.rda")
    peak, err = _peak_mb(lambda: read_microdata(meta, data))
    assert "binary, not text" in str(err) and err.line == 1
    assert peak < 64


def test_small_nul_file_is_refused_at_line_1(tmp_path):
    p = tmp_path / "z.hrc"
    p.write_bytes(b"\0" * 100)
    with pytest.raises(InputError, match="binary") as info:
        read_hrc(p, "@")
    assert info.value.line == 1


@pytest.mark.parametrize("bom", [True, False])
def test_utf16_microdata_says_utf16(ex2, bom):
    src = ex2 / "microdata_ex2.asc"
    text = src.read_text(encoding="latin-1")
    src.write_bytes(text.encode("utf-16" if bom else "utf-16-le"))
    s = Session()
    with pytest.raises(InputError, match="UTF-16") as info:
        s.open_microdata(src, ex2 / "metadata_ex2.rda")
    assert "expected" not in str(info.value)  # not "line 101: expected 6 fields"


def test_utf16_metadata_says_utf16(ex2):
    rda = ex2 / "metadata_ex2.rda"
    rda.write_bytes(rda.read_text(encoding="latin-1").encode("utf-16"))
    with pytest.raises(InputError, match="UTF-16"):
        read_rda(rda)


@pytest.mark.parametrize(
    "target, words", [("/dev/zero", "a device, not a file"), ("FOLDER", "a folder, not a file")]
)
def test_device_or_folder_as_hierarchy_says_what_it_is(ex2, target, words):
    if target == "/dev/zero" and not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero on this system")
    if target == "FOLDER":
        (ex2 / "adir").mkdir()
        target = "adir"
    rda = ex2 / "metadata_ex2.rda"
    rda.write_text(rda.read_text().replace("hier_region_ex2.hrc", target))
    with pytest.raises(ArgusError) as info:
        ex2_session(ex2)
    assert words in str(info.value) and "not found" not in str(info.value)


def test_folder_as_microdata_says_folder(ex2):
    (ex2 / "d").mkdir()
    with pytest.raises(InputError, match="a folder, not a file"):
        Session().open_microdata(ex2 / "d", ex2 / "metadata_ex2.rda")


def test_plain_text_files_still_read(tmp_path):
    p = tmp_path / "ok.hrc"
    p.write_bytes(b"\xef\xbb\xbfA\r\n@1\r\n")
    assert [c for _, c, _ in read_hrc(p, "@")] == ["A", "1"]
    assert os.path.getsize(p) > 0


@pytest.mark.parametrize("command", ["OPENMICRODATA", "OPENMETADATA"])
def test_device_or_folder_named_in_a_batch_file_says_what_it_is(ex2, command):
    (ex2 / "adir").mkdir()
    arb = ex2 / "x.arb"
    base = '<OPENMICRODATA> "microdata_ex2.asc"\n<OPENMETADATA> "metadata_ex2.rda"\n'
    for target, words in (("adir", "a folder, not a file"), ("/dev/zero", "a device")):
        if not Path(target).exists() and target.startswith("/"):
            continue
        old = "microdata_ex2.asc" if command == "OPENMICRODATA" else "metadata_ex2.rda"
        arb.write_text(base.replace(old, target))
        out = run_batch(arb)
        assert not out.ok and words in str(out.error) and "not found" not in str(out.error)
