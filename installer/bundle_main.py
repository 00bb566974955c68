"""Entry of the bundled program: argusqt's command line (GUI, `batch`, `--version`), plus the
bundle's self-checks for installer/smoke.sh: `--check-help` (Help offline,
scripts/check_installed_help.py) and `--check-libs` (each bundled native library loads and works)."""

from __future__ import annotations

import sys


def check_libs() -> int:
    """Load and use each native library the bundle carries, the ones batch runs reach and
    the ones only the GUI or a Parquet/CSV file would (pyarrow): a library left out or cut
    too short by the recipe fails here, not on a statistician's desktop."""
    import io

    failures = 0

    def check(name: str, run) -> None:
        nonlocal failures
        try:
            print(f"ok   {name}: {run()}")
        except Exception as exc:  # every failure is reported, the next library still runs
            failures += 1
            print(f"FAIL {name}: {type(exc).__name__}: {exc}")

    def scip() -> str:
        from pyscipopt import Model

        m = Model()
        m.hideOutput()
        x = m.addVar(vtype="I", lb=0, ub=10)
        y = m.addVar(vtype="I", lb=0, ub=10)
        m.addCons(2 * x + 3 * y >= 7)
        m.setObjective(x + y, "minimize")
        m.optimize()
        assert m.getStatus() == "optimal" and round(m.getObjVal()) == 3
        return f"SCIP {m.version()} solved a small integer program"

    def highs() -> str:
        import highspy
        import numpy as np

        # argusqt's one way to make a HiGHS (banner silenced; the Windows paths of issue 28)
        from argusqt.protection.lp.quiet_highs import quiet_highs

        h = quiet_highs()
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = 2, 1
        lp.col_cost_ = np.array([1.0, 1.0])
        lp.col_lower_, lp.col_upper_ = np.array([0.0, 0.0]), np.array([10.0, 10.0])
        lp.row_lower_, lp.row_upper_ = np.array([7.0]), np.array([highspy.kHighsInf])
        lp.a_matrix_.start_ = np.array([0, 1, 2], dtype=np.int32)
        lp.a_matrix_.index_ = np.array([0, 0], dtype=np.int32)
        lp.a_matrix_.value_ = np.array([2.0, 3.0])
        h.passModel(lp)
        h.run()
        value = h.getInfo().objective_function_value
        assert abs(value - 7 / 3) < 1e-9, value
        return "HiGHS solved a small LP"

    def arrow() -> str:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.csv as pcsv
        import pyarrow.parquet as pq

        table = pa.table({"size": ["1", "2"], "turnover": [1.5, 2.5]})
        buf = io.BytesIO()
        pq.write_table(table, buf)
        back = pq.read_table(io.BytesIO(buf.getvalue()))
        assert back.equals(table)
        csv = pcsv.read_csv(io.BytesIO(b"a,b\n1,2\n"))
        assert pc.sum(csv["a"]).as_py() == 1
        return f"pyarrow {pa.__version__} wrote and read Parquet and CSV"

    def excel() -> str:
        import openpyxl

        wb = openpyxl.Workbook()
        wb.active["A1"] = "cell"
        buf = io.BytesIO()
        wb.save(buf)
        assert openpyxl.load_workbook(io.BytesIO(buf.getvalue())).active["A1"].value == "cell"
        return f"openpyxl {openpyxl.__version__} wrote and read a workbook"

    for name, run in (
        ("pyscipopt", scip),
        ("highspy", highs),
        ("pyarrow", arrow),
        ("openpyxl", excel),
    ):
        check(name, run)
    return 1 if failures else 0


def main() -> int:
    """Dispatch: `--check-help [--shots DIR]`, `--check-libs`; all else is argusqt's command."""
    if sys.argv[1:2] == ["--check-help"]:
        import check_installed_help

        sys.argv = [sys.argv[0], *sys.argv[2:]]
        return check_installed_help.main()
    if sys.argv[1:2] == ["--check-libs"]:
        return check_libs()
    from argusqt.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
