"""Every way a file leaves argusqt: through the publication gate, or marked CONFIDENTIAL.

The first test lists every call in the package that writes a file (or the clipboard) and
says what each writes; a new writer fails it until it is classified here — and a writer of
table values must be one of the gated or marked ones checked below. The others write an
unprotected table (primaries, no protection) through every WRITETABLE type and option,
the Python API and the batch: publication outputs are refused and write nothing; internal
ones are written, start with CONFIDENTIAL and the log says so.
"""

from __future__ import annotations

import ast
from pathlib import Path

import openpyxl
import pytest
from confidential_helpers import assert_marked
from session_helpers import ex2_session

from argusqt.batch.runner import run_batch
from argusqt.errors import PublicationError

ROOT = Path(__file__).resolve().parents[1]

#: calls that write a file (or the clipboard)
WRITE_CALLS = {
    "atomic_write_text",
    "atomic_write_bytes",
    "atomic_write_set",
    "to_parquet",
    "to_csv",
    "to_excel",
    "write_text",
    "write_bytes",
    "save",
    "dump",
}

#: (module, function) → what it writes. "gated": a publication output that calls
#: clear_for_publication first; "confidential": an internal output marked CONFIDENTIAL;
#: the rest hold no cell values of a protected table.
WRITERS = {
    ("argusqt/api.py", "ProtectedTable.to_parquet"): "gated (publish() passes the gate)",
    ("argusqt/export/csvtable.py", "write_csvtable"): "gated",
    ("argusqt/export/codevalue.py", "write_codevalue"): "gated without AS+, else confidential",
    ("argusqt/export/excel.py", "excel_bytes"): "workbook bytes for write_excel",
    ("argusqt/export/excel.py", "write_excel"): "gated, or the CONFIDENTIAL workbook",
    ("argusqt/export/intermediate.py", "write_intermediate"): "confidential",
    ("argusqt/io/jj.py", "write_jj"): "confidential",
    ("argusqt/io/confidential.py", "write_marked"): "confidential CSV-format file + sidecar",
    ("argusqt/export/report.py", "write_report"): "confidential (HTML report)",
    ("argusqt/io/apriori.py", "generate_apriori"): "confidential (.hst statuses)",
    ("argusqt/io/apriori.py", "write_apriori"): "confidential (.hst statuses)",
    ("argusqt/sessionfile.py", "save_session"): "confidential (session file)",
    ("argusqt/batch/render.py", "write_batch_file"): "batch commands; side .hst confidential",
    ("argusqt/batch/runner.py", "_Runner.run_command"): "<VERSIONINFO>: the version only",
    ("argusqt/io/hrc.py", "write_hrc"): "hierarchy codes",
    ("argusqt/io/rda.py", "write_rda"): "metadata",
    ("argusqt/recode/grc.py", "write_grc"): "recode text",
    ("argusqt/session.py", "Session.save_text"): "recode text typed in the GUI",
    ("argusqt/io/tables.py", "write_tabular_input"): "the caller's own input, for reading",
    ("argusqt/io/framefiles.py", "write_microdata_files"): "the caller's own microdata, for "
    "reading again; its .rda's first line says CONFIDENTIAL (test_frame_session.py)",
    ("argusqt/session.py", "Session.write_temporary_tables"): "the caller's own ready table, "
    "for reading again; its .rda's first line says CONFIDENTIAL (test_frame_session.py)",
    ("argusqt/io/atomic.py", "atomic_write_text"): "the atomic writer itself",
    ("argusqt/io/atomic.py", "_backup"): "the atomic writer's backup of a replaced file",
    ("argusqt/gui/tableview.py", "TableView.copy_selection"): "clipboard: the published face, "
    "marked NOT FOR PUBLICATION unless the table passed the gate",
}


def _write_calls() -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for path in sorted((ROOT / "argusqt").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        stack: list[str] = []

        def visit(node: ast.AST, rel: str = rel, stack: list[str] = stack) -> None:
            named = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            if named:
                stack.append(node.name)  # type: ignore[union-attr]
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                clipboard = name == "setText" and "clipboard" in ast.unparse(f)
                opened = (
                    name == "open"
                    and len(node.args) > 1
                    and isinstance(node.args[1], ast.Constant)
                    and any(m in str(node.args[1].value) for m in "wax")
                )
                if name in WRITE_CALLS or clipboard or opened:
                    found.add((rel, ".".join(stack)))
            for child in ast.iter_child_nodes(node):
                visit(child)
            if named:
                stack.pop()

        visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def test_every_writer_is_classified():
    found = _write_calls()
    new = sorted(found - set(WRITERS))
    assert not new, (
        "new file writers: classify each in WRITERS (gated through export/gate.py, "
        f"CONFIDENTIAL-marked, or no cell values) and test it below: {new}"
    )
    gone = sorted(set(WRITERS) - found)
    assert not gone, f"writers listed here no longer write (update WRITERS): {gone}"


def _first_text(path: Path) -> str:
    return path.read_text(encoding="utf-8").splitlines()[0]


# type, options, name → confidential?
OUTPUTS = [
    (1, "", "t1.csv", False),
    (1, "", "t1.xlsx", False),
    (2, "", "t2.csv", False),
    (3, "", "t3.txt", False),
    (1, "AS+", "t1as.xlsx", True),
    (2, "AS+", "t2as.csv", True),
    (3, "AS+", "t3as.txt", True),
    (3, "AS+FL+TA+", "t3tau.txt", True),
    (4, "", "t4.sbs", True),
    (5, "", "t5.tab", True),
    (6, "", "t6.jj", True),
]


@pytest.mark.parametrize("out_type, options, name, confidential", OUTPUTS)
def test_every_writetable_type_is_gated_or_confidential(ex2, out_type, options, name, confidential):
    s = ex2_session(ex2)  # primaries, not protected: nothing may be published
    assert s.protection_state(1) == "unprotected"
    out = ex2 / name
    if not confidential:
        with pytest.raises(PublicationError, match="cannot be published"):
            s.write_table(1, out_type, options, out)
        assert not any(ex2.glob(Path(name).stem + "*")), "a refused output left a file"
        assert "NOT written" in s.log[-1].message
        return
    files = s.write_table(1, out_type, options, out)
    assert files and all(f.is_file() for f in files)
    assert "CONFIDENTIAL, not for publication" in s.log[-1].message
    for f in files:
        if f.suffix == ".xlsx":
            assert "CONFIDENTIAL" in f.name
            wb = openpyxl.load_workbook(f)
            for ws in wb.worksheets:
                assert str(ws["A1"].value).startswith("CONFIDENTIAL — not for publication")
        elif f.suffix == ".hrc":
            continue  # codes of a hierarchy only
        elif f.name.endswith(".CONFIDENTIAL.txt"):
            continue  # the sidecar of a CSV-format file, checked with it
        elif out_type in (2, 3, 4):  # τ-Argus's CSV lines unchanged, marked by the sidecar
            assert_marked(f)
        else:
            first = _first_text(f)
            if f.suffix == ".jj":  # the leading 0 first: τ-Argus's JJ reader needs it
                assert first.startswith("0 // CONFIDENTIAL — not for publication")
            else:
                assert first.startswith("// CONFIDENTIAL — not for publication"), (f, first)


def test_internal_outputs_are_read_back(ex2):
    """The marked files still read: JJ by argusqt's reader, the intermediate table as a
    table file (its `//` lines are comments in .tab and .rda)."""
    from argusqt.io.jj import read_jj
    from argusqt.protection.core.problem import CSPProblem

    s = ex2_session(ex2)
    table = s.table(1)
    s.write_table(1, 6, "", ex2 / "t.jj")
    problem = read_jj(ex2 / "t.jj")
    ours = CSPProblem.from_table(table)
    assert problem.n_cells == ours.n_cells
    assert abs(problem.values - ours.values).max() < 0.005  # printed with its decimals
    s.write_table(1, 5, "", ex2 / "t.tab")
    s2 = type(s)()
    s2.open_table_data(ex2 / "t.tab", ex2 / "t.rda")


def test_api_publication_paths_are_gated(ex2):
    """The Python API's ways out (publish, Parquet, Excel, any τ-Argus type) pass the gate."""
    from argusqt.api import ProtectedTable

    t = ProtectedTable(ex2_session(ex2), 1, None)  # primaries, not protected
    for call in (
        lambda: t.publish(),
        lambda: t.to_parquet(ex2 / "p.parquet"),
        lambda: t.to_excel(ex2 / "p.xlsx"),
        lambda: t.write(ex2 / "p.txt"),
        lambda: t.write(ex2 / "p.csv", "csv"),
        lambda: t.write(ex2 / "p2.csv", "pivot"),
    ):
        with pytest.raises(PublicationError):
            call()
    assert not [p for p in ex2.iterdir() if p.name.startswith(("p.", "p2."))]
    files = t.write(ex2 / "internal.txt", "codevalue", "AS+")  # asked for: internal, marked
    assert_marked(files[0])


def test_batch_log_says_which_files_are_confidential(ex2):
    arb = ex2 / "c.arb"
    arb.write_text(
        '<OPENMICRODATA> "microdata_ex2.asc"\n<OPENMETADATA> "metadata_ex2.rda"\n'
        '<SPECIFYTABLE> "region""gender"|"num1"|""|""\n<SAFETYRULE> FREQ(5,20)|P(20,5)\n'
        '<READMICRODATA>\n<SUPPRESS> MOD(1)\n<WRITETABLE> (1, 3, , "pub.txt")\n'
        '<WRITETABLE> (1, 3, AS+, "cv.txt")\n<WRITETABLE> (1, 4, , "t.sbs")\n'
        '<WRITETABLE> (1, 6, , "t.jj")\n'
    )
    out = run_batch(arb)
    assert out.ok, out.error
    written = [e.message for e in out.session.log if e.message.startswith("Table 1 written")]
    assert len(written) == 4
    assert "CONFIDENTIAL" not in written[0] and "pub.txt" in written[0]
    for msg, name in zip(written[1:], ("cv.txt", "t.sbs", "t.jj"), strict=True):
        assert "CONFIDENTIAL, not for publication" in msg and name in msg
    assert not _first_text(ex2 / "pub.txt").startswith("//")
