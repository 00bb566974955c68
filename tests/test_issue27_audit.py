"""Issue 27 item 1 (US#314): the audit outside the GUI — `<AUDIT>` in batch files and
`argusqt audit`, which judges a pattern made elsewhere (τ-Argus's own outputs) against the
data it came from, outsider and insiders, exit 0/1, a readable report."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from protect_helpers import lp_protected
from shared_paths import copy_case

from argusqt.batch.runner import run_batch
from argusqt.cli import main
from argusqt.errors import InputError
from argusqt.io.confidential import CONFIDENTIAL_BANNER
from argusqt.io.pattern import read_pattern
from argusqt.protection.core.problem import CSPProblem

ENTERPRISE_RULES = "P(0,0)|P(0,0)|P(10,1)|ZERO(10)|MIS(1)|MAN(10)"


def _job(folder: Path, name: str, dims: list[list[str]], tail: str) -> Path:
    """A batch job as τ-Argus's enterprise scenarios were run (shared README)."""
    lines = ['<OPENMICRODATA> "example_enterprise.asc"', '<OPENMETADATA> "example_enterprise.rda"']
    for d in dims:
        lines.append(f'<SPECIFYTABLE> {"".join(f"{chr(34)}{v}{chr(34)}" for v in d)}'
                     '|"turnover"||"turnover"')  # fmt: skip
        lines.append(f"<SAFETYRULE> {ENTERPRISE_RULES}")
    lines.append("<READMICRODATA>")
    path = folder / name
    path.write_text("\n".join(lines) + "\n" + tail)
    return path


@pytest.fixture
def enterprise(tmp_path):
    return copy_case("enterprise", tmp_path)


def _primary_lines(out: str) -> list[str]:
    return [x for x in out.splitlines() if "| 3 Unsafe" in x or "| 6 Unsafe" in x]


def test_cli_audits_tau_argus_hypercube_pattern(enterprise, capsys):
    """τ-Argus's GH pattern of test_1 (act × product): every primary listed, all covered."""
    job = _job(enterprise, "test_1.arb", [["act", "product"]],
               '<SUPPRESS> GH(1,100,1,1)\n<WRITETABLE> (1, 3, AS+QU+, "test_1.txt")\n')  # fmt: skip
    rc = main(["audit", str(job), str(enterprise / "expected" / "test_1.txt")])
    out = capsys.readouterr().out
    assert rc == 0
    assert out.startswith(f"// {CONFIDENTIAL_BANNER}")
    assert "Audit passed" in out and "holdings alone in a suppressed cell" in out
    lines = _primary_lines(out)
    assert len(lines) == 283  # every primary of the scenario (argusqt/docs/rules.md §3.8)
    assert all(x.endswith("| protected") for x in lines)
    assert "act=02 × product=05 | 3 Unsafe (dominance/p%) | HP1 | 1923.58" in out


def test_cli_fails_tau_argus_linked_modular_pattern_with_exit_1(enterprise, capsys):
    """τ-Argus's linked MOD patterns (test_2a, test_2b) let holdings alone in a suppressed
    cell recompute other primaries: exit 1, the cells and the reason named."""
    job = _job(
        enterprise,
        "test_2.arb",
        [["act", "product"], ["act", "region"]],
        '<SUPPRESS> MOD(0,5,1,1,1)\n<WRITETABLE> (1, 3, AS+QU+, "test_2a.txt")\n'
        '<WRITETABLE> (2, 3, AS+QU+, "test_2b.txt")\n',
    )
    rc = main(["audit", str(job), str(enterprise / "expected" / "test_2b.txt")])
    out = capsys.readouterr().out
    assert rc == 1
    assert "AUDIT FAILED" in out
    assert "(table 2)" in out  # the table whose <WRITETABLE> wrote test_2b.txt
    failed = [x for x in _primary_lines(out) if "DISCLOSED (insider)" in x]
    assert failed and "region" in failed[0]
    # the figure the user guide quotes (argusqt/docs/user_guide.md §7.3), insiders and sums;
    # 47 before D-91, 55 since: 8 more narrowed by a holding sharing a suppressed cell
    assert "339 primary cell(s), 127 secondary cell(s); 55 primary cell(s) disclosed." in out
    assert any("DISCLOSED (combined" in x for x in _primary_lines(out))


def test_cli_published_primary_and_missing_secondary(tmp_path, capsys):
    """batch_ex1 (tabular, τ-Argus's OPT pattern from the shared README): passes; without
    the secondaries of row C the primary (A, female) is recomputed (exit 1); published, it
    is disclosed outright. The verdict agrees with an independent linprog attacker."""
    folder = copy_case("batch_ex1", tmp_path)
    pattern = {("A", "male"): 11, ("A", "female"): 3, ("C", "male"): 11, ("C", "female"): 11}
    opts = ["--table", str(folder / "tabdata_ex1.tab"), "--metadata",
            str(folder / "metadata_ex1.rda"), "--explanatory", "region", "gender",
            "--response", "freq", "--rules", "MAN(20)"]  # fmt: skip

    def write(pat: dict, name: str) -> Path:
        rows = [
            (r, g, 0, pat.get((r, g), 1))
            for r in ("Total", "A", "B", "C", "D")
            for g in ("Total", "male", "female")
        ]
        path = folder / name
        with path.open("w", newline="") as f:
            csv.writer(f, quoting=csv.QUOTE_NONNUMERIC).writerows(rows)
        return path

    assert main(["audit", *opts, str(write(pattern, "ok.txt"))]) == 0
    assert "Audit passed" in capsys.readouterr().out
    weak = {k: v for k, v in pattern.items() if k[0] != "C"}
    assert main(["audit", *opts, str(write(weak, "weak.txt"))]) == 1
    out = capsys.readouterr().out
    assert "region=A × gender=female | 9 Unsafe (manual) | M | 137 | ≤ 136 and ≥ 138 | " in out
    assert "DISCLOSED (outsider)" in out
    shown = {**pattern, ("A", "female"): 1}
    report = tmp_path / "r.txt"
    assert main(["audit", *opts, "--report", str(report), str(write(shown, "shown.txt"))]) == 1
    printed = capsys.readouterr().out
    assert printed.startswith("AUDIT FAILED: 1 primary cell(s) published outright")
    assert "CONFIDENTIAL" in printed
    assert "DISCLOSED (published" in report.read_text()

    # the independent attacker agrees on both patterns
    from argusqt.export.audit_report import apply_pattern
    from argusqt.session import Session

    s = Session()
    s.open_table_data(folder / "tabdata_ex1.tab", folder / "metadata_ex1.rda")
    from argusqt.model.table import TableSpec
    from argusqt.rules.parse import parse_safety_rule

    s.specify_table(TableSpec(["region", "gender"], "freq"))
    s.set_safety_rules(parse_safety_rule("MAN(20)"))
    s.compute_tables()
    import copy

    for name, expect in (("ok.txt", True), ("weak.txt", False)):
        t = copy.copy(s.table(1))
        apply_pattern(t, read_pattern(folder / name, t))
        problem = CSPProblem.from_table(t)
        sup = np.isin(np.asarray(t.status), [3, 4, 5, 6, 7, 8, 9, 11, 12])
        assert lp_protected(problem, sup) is expect


def test_cli_says_why_it_cannot_audit(tmp_path, capsys):
    folder = copy_case("batch_ex1", tmp_path)
    bad = folder / "bad.txt"
    bad.write_text('"Total","Total",5146,1\n"Q","male",1,1\n')
    rc = main(["audit", "--table", str(folder / "tabdata_ex1.tab"), "--metadata",
               str(folder / "metadata_ex1.rda"), "--explanatory", "region", "gender",
               "--response", "freq", str(bad)])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 2
    assert "bad.txt, line 2" in err and "Q, male are not a cell" in err
    assert main(["audit", str(bad)]) == 2
    assert "expected JOB.arb OUTPUT" in capsys.readouterr().err


def test_pattern_with_a_code_at_two_levels_is_read_by_position(enterprise):
    """test_3a (region × mun): the municipality code '11' sits under two regions' parents;
    τ-Argus's file lists every cell in order, so it is read by position."""
    job = _job(enterprise, "j.arb", [["region", "mun"]], "")
    out = run_batch(job)
    assert out.ok, out.error
    table = out.session.table(1)
    pat = read_pattern(enterprise / "expected" / "test_3a.txt", table)
    assert pat.cells.tolist() == list(range(table.n_cells))
    shuffled = enterprise / "shuffled.txt"
    lines = (enterprise / "expected" / "test_3a.txt").read_text().splitlines()
    shuffled.write_text("\n".join([lines[1], lines[0], *lines[2:]]) + "\n")
    with pytest.raises(InputError, match="more than one cell"):
        read_pattern(shuffled, table)


def test_batch_audit_command_logs_verdict_and_intervals(enterprise):
    """`<AUDIT>` after `<SUPPRESS>`: the verdict and one line per primary in the logbook,
    the confidential report in the file named."""
    job = _job(
        enterprise,
        "a.arb",
        [["region", "product"]],
        '<LOGBOOK> "log.txt"\n<SUPPRESS> MOD(1,5,1,1,1)\n<AUDIT> 1, "audit1.txt"\n',
    )
    out = run_batch(job)
    assert out.ok, out.error
    assert out.audit_passed and len(out.audits) == 1
    report = out.audits[0]
    assert len(report.primaries) == 17 and all(p.ok for p in report.primaries)
    for p in report.primaries:  # each attacker interval covers the protection interval
        assert p.lower <= p.need_lower + 1e-6 and p.upper >= p.need_upper - 1e-6
    log = (enterprise / "log.txt").read_text()
    assert "Audit of table 1: Audit passed" in log
    assert log.count("Audit of table 1: region=") == 17
    written = enterprise / "audit1.txt"
    assert written in out.confidential
    assert written.read_text().startswith(f"// {CONFIDENTIAL_BANNER}")


def test_batch_audit_syntax_errors_name_the_line(tmp_path):
    from argusqt.batch.arb import parse_arb_lines
    from argusqt.errors import BatchError

    with pytest.raises(BatchError, match="expected a table number") as e:
        parse_arb_lines(["<AUDIT> x"], tmp_path / "a.arb")
    assert e.value.line == 1
    with pytest.raises(BatchError, match=r"expected \[table\[, \"file\"\]\]"):
        parse_arb_lines(['<AUDIT> 1, "a", "b"'], tmp_path / "a.arb")


def test_cli_audits_a_jj_pattern(enterprise, capsys):
    """A JJ file (τ-Argus's type 6) of the table is read cell for cell: argusqt's own MOD
    pattern passes; with its secondaries published (m → s) it fails."""
    job = _job(
        enterprise,
        "jj.arb",
        [["region", "product"]],
        '<SUPPRESS> MOD(1,5,1,1,1)\n<WRITETABLE> (1, 6, , "p.jj")\n',
    )
    out = run_batch(job)
    assert out.ok, out.error
    jj = enterprise / "p.jj"
    assert main(["audit", str(job), str(jj)]) == 0
    assert "17 primary cell(s), 8 secondary cell(s)" in capsys.readouterr().out
    lines = jj.read_text().splitlines()
    opened = [x.replace(" m ", " s ") if len(x.split()) > 5 else x for x in lines]
    weak = enterprise / "weak.jj"
    weak.write_text("\n".join(opened) + "\n")
    assert main(["audit", str(job), str(weak)]) == 1
    text = capsys.readouterr().out
    assert "0 secondary cell(s)" in text and "DISCLOSED" in text
    other = _job(enterprise, "other.arb", [["act", "product"]], "")
    assert main(["audit", str(other), str(jj)]) == 2
    assert "the JJ file has 225 cells, table act × product has 1665" in capsys.readouterr().err
