"""argusqt against the τ-Argus engine (pytauargus) on the same batch files: time, memory, cost, audit.

Every run is a whole process (`argusqt batch` / `tauargus run`) on one batch file, measured
from process start to exit: wall time and peak resident memory (os.wait4). Each engine
writes the protected table as code-value with statuses; the statuses are read back onto
argusqt's own tabulation of the table and judged by argusqt's audit (the publication audit
when the package has it), so both engines' patterns face the same judge. Cost = Σ cost
variable over secondary cells (11, 12).

GH and NET run in argusqt only (the engine needs τ-Argus's external executables for them);
their rows compare with the engine's MOD, and on the enterprise act × product table with
τ-Argus's own GH pattern (scenario test_1's expected file), shown as the "τ-file" row.

The reference engine is optional: without `pytauargus` (never a dependency of argusqt) the
τ-Argus rows are skipped with a line saying so. Install it for a comparison with
`pip install pytauargus`.

Usage:
    python benchmarks/bench_vs_tauargus.py [--instances b520,testw_p,...] [--methods OPT,MOD,HEUR]
        [--opt-minutes 10] [--mod-minutes 1] [--timeout 900] [--workdir DIR] [--list]
    (methods by default: OPT,MOD,HEUR,GH,NET, each where the instance allows it)
"""

from __future__ import annotations

import argparse
import compileall
import csv
import importlib.util
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from business_tables import (  # noqa: E402
    BIG_SURVEYS,
    RULES,
    SURVEYS,
    batch_text,
    write_survey,
)

TAU_DATA = ROOT.parent / "shared" / "data" / "tauargus"
OURS = "argusqt"
TAU = "τ-Argus"
TAU_FILE = "τ-file"  # τ-Argus's own output shipped with its test data
#: a τ-Argus pattern that fails our audit, made safe by argusqt's insider repair: the cheapest
#: safe pattern built on τ-Argus's, the fair reference for cost when τ-Argus's own is unsafe
TAU_SAFE = "τ+repair"


# ---------------------------------------------------------------------- instances
@dataclass
class Instance:
    """One table: where its files come from and how the batch files specify it."""

    name: str
    label: str
    setup: Callable[[Path], None]  # copies/generates the input files into the folder
    data: str
    meta: str
    variables: list[str]
    response: str
    rules: str
    cost: str = ""
    methods: tuple[str, ...] = ("OPT", "MOD", "HEUR")
    tabular: bool = False  # a ready batch file (batch_ex1), run as is
    batch: str = ""
    #: `<SUPPRESS>` calls that differ from suppress_call's, by method
    calls: dict[str, str] = field(default_factory=dict)
    #: τ-Argus's own protected output for a method (a file of its test data), judged as a row
    expected: dict[str, Path] = field(default_factory=dict)
    #: more tables over the same records (issue 26 goal 3: read and tabulate only, memory)
    more_tables: list[list[str]] = field(default_factory=list)
    engine: bool = True  # False: too long for the τ-Argus engine (100M records)


def _copy(src: Path, rename_hrc: bool = False) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        if not src.is_dir():
            raise FileNotFoundError(f"τ-Argus data not found: {src}")
        for f in src.iterdir():
            if f.is_file():
                dst = folder / f.name
                shutil.copyfile(f, dst)
        if rename_hrc:  # .rda naming hierarchy files by absolute Windows paths: base names
            for rda in folder.glob("*.rda"):
                lines = []
                for line in rda.read_text(encoding="latin-1").splitlines():
                    if "<HIERCODELIST>" in line and "\\" in line:
                        name = line.split('"')[1].split("\\")[-1]
                        line = f'  <HIERCODELIST> "{name}"'
                    lines.append(line)
                rda.write_text("\n".join(lines) + "\n", encoding="latin-1")

    return setup


def _survey(key: str) -> Callable[[Path], None]:
    return lambda folder: write_survey(SURVEYS[key], folder) and None


def _survey_big(key: str) -> Callable[[Path], None]:
    return lambda folder: write_survey(BIG_SURVEYS[key], folder) and None


def instances() -> dict[str, Instance]:
    out: dict[str, Instance] = {}
    for key, s in SURVEYS.items():
        label = f"synthetic {' × '.join(s.variables)}, {s.records:,} records, {RULES}"
        methods = ("OPT", "MOD", "HEUR", "GH") if s.n_cells <= 10_000 else ("MOD", "HEUR", "GH")
        out[key] = Instance(
            key, label, _survey(key), "survey.asc", "survey.rda", s.variables, "turnover",
            RULES, "turnover", methods,
        )  # fmt: skip
    testw = _copy(TAU_DATA / "tau_testW")
    for key, rule in (("testw_p", "P(15,1)"), ("testw_nk", "NK(3,70)")):
        out[key] = Instance(
            key, f"tau_testW Size × Region | Var2, {rule}", testw, "tau_testW.asc",
            "tau_testW.rda", ["Size", "Region"], "Var2", rule,
            methods=("OPT", "MOD", "HEUR", "GH", "NET"),
        )  # fmt: skip
    out["sample"] = Instance(
        "sample", "sample_data activity × region | turnover, NK(3,75)+FREQ(3,30)",
        _copy(ROOT / "sample_data"), "enterprise.asc", "enterprise.rda",
        ["activity", "region"], "turnover", "NK(3,75)|FREQ(3,30)",
    )  # fmt: skip
    ent = _copy(TAU_DATA / "enterprise", rename_hrc=True)
    ent_rules = "P(0,0)|P(0,0)|P(10,1)|ZERO(10)|MAN(10)|MIS(1)"
    for key, dims in (
        ("ent_act_prod", ["act", "product"]),
        ("ent_reg_mun", ["region", "mun"]),
        ("ent_reg_prod", ["region", "product"]),
    ):
        out[key] = Instance(
            key, f"enterprise {' × '.join(dims)} | turnover, holding p%(10,1)", ent,
            "example_enterprise.asc", "example_enterprise.rda", dims, "turnover", ent_rules,
            "turnover",
        )  # fmt: skip
    # scenario test_1 of the data README: act × product with GH(1,100,1,1); τ-Argus's own
    # pattern is its expected file
    act_prod = out["ent_act_prod"]
    act_prod.methods = ("OPT", "MOD", "HEUR", "GH", "NET")
    act_prod.calls = {"GH": "GH(1,100,1,1)"}
    act_prod.expected = {"GH": TAU_DATA / "enterprise" / "expected" / "test_1.txt"}
    for key, s in BIG_SURVEYS.items():
        dims = [["act", "reg", "size"], ["act", "reg"], ["reg", "size"]]
        out[key] = Instance(
            key, f"synthetic {s.records:,} records (generated in chunks), 3 tables "
            f"{'; '.join(' × '.join(d) for d in dims)}, {RULES}: read + tabulate",
            _survey_big(key), "survey.asc", "survey.rda", dims[0], "turnover", RULES,
            "turnover", (), more_tables=dims[1:], engine=s.records <= 10_000_000,
        )  # fmt: skip
    out["batch_ex1"] = Instance(
        "batch_ex1", "batch_ex1 (15-cell tabular table, OPT): process start to exit",
        _copy(TAU_DATA / "batch_ex1"), "", "", [], "", "", methods=("OPT",), tabular=True,
        batch="batch_ex1.arb",
    )  # fmt: skip
    return out


# ---------------------------------------------------------------------- processes
@dataclass
class Run:
    engine: str
    method: str
    wall: float = float("nan")
    rss_mb: float = float("nan")
    cpu: float = float("nan")  # user + system seconds of the process and its children
    ok: bool = False
    note: str = ""
    status: np.ndarray | None = None
    cost: float = float("nan")
    n_secondary: int = 0
    verdict: str = "-"
    extra: dict = field(default_factory=dict)


TIME = shutil.which("time") or "/usr/bin/time"


def run_process(
    cmd: list[str], cwd: Path, timeout: float, root: Path = ROOT
) -> tuple[float, float, int, str, float]:
    """Wall seconds, peak RSS (MB), exit code, stderr and CPU seconds (user + system) of a
    child process; killed after `timeout`.

    Peak memory comes from GNU time when it is there: a child forked from this (large)
    process would otherwise inherit its high-water mark.
    """
    usage_file = cwd / ".rusage"
    usage_file.unlink(missing_ok=True)
    wrap = [TIME, "-f", "%M", "-o", str(usage_file)] if Path(TIME).exists() else []
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        # argusqt from this checkout, whatever is installed in the environment
        env = dict(
            os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])
        )
        proc = subprocess.Popen(
            wrap + cmd,
            cwd=cwd,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )
        killed = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t0 > timeout and not killed:
                os.killpg(proc.pid, signal.SIGKILL)
                killed = True
            time.sleep(0.002)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode("utf-8", "replace").strip()
    rss = usage.ru_maxrss / 1024.0
    if wrap and usage_file.exists():
        try:
            rss = float(usage_file.read_text().split()[-1]) / 1024.0
        except (ValueError, IndexError):
            pass
    code = -9 if killed else proc.returncode
    return wall, rss, code, text, usage.ru_utime + usage.ru_stime


def tauargus_exe() -> str | None:
    """The `tauargus` command of the pytauargus package, or None when it is not installed."""
    if importlib.util.find_spec("pytauargus") is None:
        return None
    exe = Path(sys.executable).with_name("tauargus")
    return str(exe) if exe.exists() else shutil.which("tauargus")


#: methods the τ-Argus engine (pytauargus) cannot run: argusqt's own, and GH/NET, which need
#: τ-Argus's external executables; their rows compare with the engine's MOD
NOT_IN_ENGINE = ("HEUR", "GH", "NET")


def suppress_call(method: str, opt_minutes: int, mod_minutes: int) -> str:
    if method == "MOD":
        return f"MOD(1, {mod_minutes}, 1, 1, 1)"
    if method == "GH":
        return "GH(1, 100, 0, 1)"
    if method == "NET":
        return "NET(1)"
    return f"{method}(1, {opt_minutes})"


def load(path: Path) -> list[tuple[tuple[str, ...], float, int]]:
    """Rows of a code-value output with status: (codes, value, status)."""
    rows = []
    with path.open(newline="", encoding="latin-1") as f:
        for rec in csv.reader(f):
            if not rec or rec[0].startswith("//"):  # the confidential file's header line
                continue
            value = float(rec[-2]) if rec[-2].strip() not in ("", "-", "x") else float("nan")
            rows.append((tuple(c.strip() for c in rec[:-2]), value, int(rec[-1])))
    return rows


# ---------------------------------------------------------------------- judging
class Judge:
    """argusqt's tabulation of an instance: maps output rows to cells and audits patterns."""

    def __init__(self, folder: Path, batch: Path):
        from argusqt.batch.runner import run_batch
        from argusqt.protection.core.problem import CSPProblem

        outcome = run_batch(batch, logbook=folder / "judge_log.txt")
        outcome.raise_for_error()
        self.table = outcome.session.tables[0]
        self.problem = CSPProblem.from_table(self.table)
        self.index = {
            tuple(c.strip() for c in self.table.cell_codes(i)): i for i in range(self.table.n_cells)
        }
        self.cost = np.asarray(self.problem.cost, dtype=float)

    @property
    def n_primary(self) -> int:
        return int(self.problem.primary.sum())

    def status_of(self, rows) -> tuple[np.ndarray, int]:
        """Statuses on our cells and the number of primaries that differ from ours."""
        st = np.asarray(self.table.status, dtype=np.int16).copy()
        for codes, _value, s in rows:
            i = self.index.get(codes)
            if i is not None:
                st[i] = s
        theirs = (st >= 3) & (st <= 9)
        return st, int((theirs != self.problem.primary).sum())

    def judge(self, status: np.ndarray) -> tuple[str, float, int]:
        """Verdict text, cost and number of secondaries of a status vector."""
        from argusqt.model.status import is_secondary, is_suppressed

        sup = is_suppressed(status)
        sec = is_secondary(status)
        try:
            from argusqt.protection.audit.publication import publication_audit
        except ImportError:
            publication_audit = None
        if publication_audit is not None:
            v = publication_audit(self.problem, sup, intervals=False)
            verdict = "pass" if v.ok else f"FAIL {v.failing_cells.size}"
        else:
            from argusqt.protection.audit.outsider import audit

            a = audit(self.problem, sup, intervals=False)
            verdict = "pass*" if a.ok else f"FAIL* {a.failures.size}"
        return verdict, float(self.cost[sec].sum()), int(sec.sum())

    def repaired(self, status: np.ndarray) -> tuple[str, float, int]:
        """A failing pattern after argusqt's insider repair: verdict, cost, secondaries."""
        from argusqt.model.status import is_suppressed
        from argusqt.protection.audit.insider_repair import make_publishable

        try:
            fixed, verdict, _ = make_publishable(
                self.problem, is_suppressed(status), intervals=False
            )
        except Exception as err:  # an outsider failure is not repaired there
            return f"no: {str(err)[:40]}", float("nan"), 0
        sec = fixed & ~self.problem.primary
        return ("pass" if verdict.ok else "FAIL"), float(self.cost[sec].sum()), int(sec.sum())


# the session's line: "Table 1: OPT finished in 1,234.5 s: …" (or "cancelled, … kept in …")
FINISHED = re.compile(r"Table \d+: \w+ (?:finished|cancelled[^:]*?) in ([0-9,.]+) s\b")
GAP = re.compile(r"\bgap ([0-9.]+) ?%")


def our_log_figures(log: Path) -> dict:
    """Method time (and OPT's final gap when logged) as argusqt's logbook reports them."""
    out: dict = {}
    if not log.exists():
        return out
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        m = FINISHED.search(line)
        if m:
            out["method_s"] = float(m.group(1).replace(",", ""))
        g = GAP.search(line)
        if g:
            out["gap"] = f"gap {g.group(1)} %"
    return out


# ---------------------------------------------------------------------- running
def write_batches(inst: Instance, folder: Path, engine: str, methods, args) -> dict[str, Path]:
    """One batch file per method (and None = read and tabulate only) for an engine."""
    tag = "our" if engine == OURS else "tau"
    files = {}
    for method in [None, *methods]:
        m = method or "TAB"
        out = f"{tag}_{m}.txt"
        text = batch_text(
            inst.data,
            inst.meta,
            inst.variables,
            inst.response,
            inst.rules,
            (inst.calls.get(method) or suppress_call(method, args.opt_minutes, args.mod_minutes))
            if method
            else None,
            out,
            inst.cost,
        )
        path = folder / f"{tag}_{m}.arb"
        path.write_text(text)
        files[m] = path
    return files


def run_engine(
    engine: str,
    batch: Path,
    method: str,
    timeout: float,
    exe: str | None,
    output: str = "",
    root: Path = ROOT,
) -> Run:
    """Run one batch file; ok when the process exits 0 and wrote its output table (argusqt
    from the checkout `root`)."""
    folder = batch.parent
    out = folder / (output or f"{batch.stem}.txt")
    out.unlink(missing_ok=True)
    log = folder / f"{batch.stem}.log"
    log.unlink(missing_ok=True)
    if engine == TAU:
        cmd = [str(exe), "run", str(batch)]
    else:
        cmd = [sys.executable, "-m", "argusqt", "batch", str(batch), str(log)]
    wall, rss, code, err, cpu = run_process(cmd, folder, timeout, root)
    run = Run(engine, method, wall, rss, cpu)
    if code == -9:
        run.note = f"killed after {timeout:.0f} s"
    elif code != 0 or not out.exists():
        run.note = (err.splitlines() or ["no output"])[-1][:100]
    else:
        run.ok = True
    if engine == OURS:
        run.extra = our_log_figures(log)
    return run


def load_text() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def fmt(x: float, spec: str) -> str:
    return "-" if x != x else format(x, spec)


def bench_instance(inst: Instance, root: Path, args, exe: str | None) -> list[Run]:
    folder = root / inst.name
    folder.mkdir(parents=True, exist_ok=True)
    inst.setup(folder)
    methods = [m for m in inst.methods if m in args.methods]
    if inst.tabular:
        return bench_process_start(inst, folder, args, exe)
    if inst.more_tables:
        return bench_memory(inst, folder, args, exe if inst.engine else None)
    ours = write_batches(inst, folder, OURS, methods, args)
    theirs = write_batches(inst, folder, TAU, [m for m in methods if m not in NOT_IN_ENGINE], args)
    judge = Judge(folder, ours["TAB"])
    print(
        f"\n== {inst.name}: {inst.label}\n   {judge.table.n_cells:,} cells, {judge.n_primary:,} "
        f"primaries; load {load_text()}",
        flush=True,
    )
    runs: list[Run] = []
    plan = [(OURS, "TAB"), *[(OURS, m) for m in methods]]
    if exe is not None:
        plan += [(TAU, "TAB"), *[(TAU, m) for m in methods if m not in NOT_IN_ENGINE]]
    for engine, method in plan:
        batch = (ours if engine == OURS else theirs)[method]
        timeout = args.timeout if method != "TAB" else max(args.timeout, 600)
        run = run_engine(engine, batch, method, timeout, exe)
        if run.ok:
            rows = load(batch.with_suffix(".txt"))
            st, diff = judge.status_of(rows)
            run.status = st
            if diff:
                run.note = f"{diff} primaries differ from argusqt's"
            if method != "TAB":
                run.verdict, run.cost, run.n_secondary = judge.judge(st)
        runs.append(run)
        print(f"   … {engine} {method}: {run.wall:.1f} s", file=sys.stderr, flush=True)
    for run in [r for r in runs if r.engine == TAU and r.ok and r.verdict.startswith("FAIL")]:
        safe = Run(TAU_SAFE, run.method, ok=True, note="τ-Argus's pattern + our insider repair")
        safe.verdict, safe.cost, safe.n_secondary = judge.repaired(run.status)
        runs.append(safe)
    for method, path in inst.expected.items():
        if method not in methods or not path.exists():
            continue
        run = Run(TAU_FILE, method, ok=True, note=f"τ-Argus's pattern from {path.name}")
        run.status, diff = judge.status_of(load(path))
        if diff:
            run.note += f"; {diff} primaries differ from argusqt's"
        run.verdict, run.cost, run.n_secondary = judge.judge(run.status)
        runs.append(run)
    print_runs(runs)
    print(f"   load after: {load_text()}")
    return runs


def print_runs(runs: list[Run]) -> None:
    """The table of one instance; ratios against the τ-Argus engine's run of the same method
    (HEUR against its MOD), time ratios of argusqt also against its own tabulation."""
    print(
        f"   {'engine':8} {'method':6} {'wall s':>8} {'CPU s':>7} {'peak MB':>8} {'sec':>6} "
        f"{'cost':>16} {'audit':>8} {'t/τ':>7} {'cpu/τ':>7} {'cost/τ':>7}  notes"
    )
    ref = {r.method: r for r in runs if r.engine == TAU and r.ok}
    ref |= {r.method: r for r in runs if r.engine == TAU_FILE and r.ok}
    tab = next((r for r in runs if r.engine == OURS and r.method == "TAB" and r.ok), None)
    safe_ref = {r.method: r for r in runs if r.engine == TAU_SAFE and r.cost == r.cost}
    for run in runs:
        same = ref.get(run.method) or (ref.get("MOD") if run.method in NOT_IN_ENGINE else None)
        ours = run.engine == OURS and same is not None and run.ok
        t_ratio = run.wall / same.wall if ours and same.engine == TAU else float("nan")
        cpu_ratio = run.cpu / same.cpu if ours and same.engine == TAU else float("nan")
        c_ratio = run.cost / same.cost if ours and same.cost > 0 else float("nan")
        notes = [run.note] if run.note else []
        if run.engine == OURS and tab is not None and run.method != "TAB" and run.ok:
            notes.append(f"{run.wall / tab.wall:.1f}× tabulation")
        safe = safe_ref.get(run.method) or (
            safe_ref.get("MOD") if run.method in NOT_IN_ENGINE else None
        )
        if run.engine == OURS and run.ok and safe is not None and safe.cost > 0:
            notes.append(f"cost/(τ+repair) {run.cost / safe.cost:.3f}")
        if "method_s" in run.extra:
            notes.append(f"method {run.extra['method_s']:.1f} s")
        if "gap" in run.extra:
            notes.append(run.extra["gap"])
        protected = run.method != "TAB" and run.ok
        print(
            f"   {run.engine:8} {run.method:6} {fmt(run.wall, '8.2f')} {fmt(run.cpu, '7.2f')} "
            f"{fmt(run.rss_mb, '8.0f')} "
            f"{run.n_secondary if protected else '-':>6} "
            f"{fmt(run.cost, '16,.0f') if protected else '-':>16} {run.verdict:>8} "
            f"{fmt(t_ratio, '7.2f')} {fmt(cpu_ratio, '7.2f')} {fmt(c_ratio, '7.3f')}  "
            f"{'; '.join(notes)}",
            flush=True,
        )


def tables_batch(inst: Instance, tag: str) -> str:
    """Read the microdata, compute every table of the instance and write each (no method)."""
    tables = [inst.variables, *inst.more_tables]
    lines = [f'<OPENMICRODATA> "{inst.data}"', f'<OPENMETADATA> "{inst.meta}"']
    for dims in tables:
        spec = "".join(f'"{v}"' for v in dims)
        lines += [f'<SPECIFYTABLE> {spec}|"{inst.response}"||"{inst.cost}"',
                  f"<SAFETYRULE> {inst.rules}"]  # fmt: skip
    lines.append("<READMICRODATA>")
    lines += [f'<WRITETABLE> ({k}, 3, AS+, "{tag}_t{k}.txt")' for k in range(1, len(tables) + 1)]
    return "".join(line + "\n" for line in lines)


def bench_memory(inst: Instance, folder: Path, args, exe: str | None) -> list[Run]:
    """Goal 3: read + tabulate only, whole processes: wall, CPU, peak RSS of each engine, and
    whether the tables they write agree cell by cell (value and status)."""
    size = (folder / inst.data).stat().st_size / 2**20
    print(
        f"\n== {inst.name}: {inst.label}\n   file {size:,.0f} MiB; load {load_text()}", flush=True
    )
    engines = [(OURS, ROOT)] + [(f"argusqt@{b.name}", b) for b in args.baseline]
    if exe is not None:
        engines.append((TAU, ROOT))
    elif not inst.engine:
        print("   τ-Argus engine: not run on this instance (its read alone would take > 10 min)")
    runs, outputs = [], {}
    for engine, root in engines:
        tag = re.sub(r"\W", "_", engine)
        batch = folder / f"{tag}_tables.arb"
        batch.write_text(tables_batch(inst, tag))
        run = run_engine(engine, batch, "TAB", max(args.timeout, 900), exe, f"{tag}_t1.txt", root)
        runs.append(run)
        if run.ok:
            outputs[engine] = [load(folder / f"{tag}_t{k}.txt")
                               for k in range(1, len(inst.more_tables) + 2)]  # fmt: skip
        print(f"   … {engine}: {run.wall:.1f} s", file=sys.stderr, flush=True)
    print(f"   {'engine':16} {'wall s':>8} {'CPU s':>8} {'peak MB':>8}  tables against {OURS}")
    ref = outputs.get(OURS)
    for run in runs:
        agree = "-"
        mine = outputs.get(run.engine)
        if ref is not None and mine is not None and run.engine != OURS:
            agree = "; ".join(_agreement(a, b) for a, b in zip(ref, mine, strict=True))
        print(f"   {run.engine:16} {fmt(run.wall, '8.2f')} {fmt(run.cpu, '8.2f')} "
              f"{fmt(run.rss_mb, '8.0f')}  {agree} {run.note}", flush=True)  # fmt: skip
    print(f"   load after: {load_text()}")
    return runs


def _agreement(ours, theirs) -> str:
    """Cells of one table both wrote, and how many differ in value (> 0.005) or status."""
    mine = {codes: (v, s) for codes, v, s in ours}
    both = value = status = 0
    for codes, v, s in theirs:
        if codes in mine:
            both += 1
            mv, ms = mine[codes]
            value += int(not (abs(mv - v) <= 0.005 or (mv != mv and v != v)))
            status += int(ms != s)
    return f"{both} cells, {value} values and {status} statuses differ"


def bench_process_start(inst: Instance, folder: Path, args, exe: str | None) -> list[Run]:
    """Median of several whole runs of a small ready-made batch file per engine."""
    print(f"\n== {inst.name}: {inst.label}; load {load_text()}", flush=True)
    # bytecode as an installation has it (pip compiles it; PYTHONDONTWRITEBYTECODE would
    # otherwise make every run compile argusqt's ~100 modules again)
    compileall.compile_dir(ROOT / "argusqt", quiet=1)
    batch = folder / inst.batch
    runs = []
    engines = [OURS] + ([TAU] if exe is not None else [])
    # interleaved (ours, theirs, ours, …): a load that changes during the runs hits both
    walls: dict[str, list[float]] = {e: [] for e in engines}
    cpus: dict[str, list[float]] = {e: [] for e in engines}
    rss: dict[str, list[float]] = {e: [] for e in engines}
    last: dict[str, Run] = {}
    for _ in range(args.repeat):
        for engine in engines:
            r = run_engine(engine, batch, "OPT", 120, exe, output="tabout_ex1.txt")
            walls[engine].append(r.wall)
            cpus[engine].append(r.cpu)
            rss[engine].append(r.rss_mb)
            last[engine] = r
    for engine in engines:
        r = last[engine]
        run = Run(
            engine,
            "start",
            statistics.median(walls[engine]),
            max(rss[engine]),
            statistics.median(cpus[engine]),
        )
        run.ok, run.note = r.ok, r.note
        run.extra["walls"] = walls[engine]
        runs.append(run)
    for run in runs:
        ratio = run.wall / runs[-1].wall if len(runs) > 1 else float("nan")
        cpu_ratio = run.cpu / runs[-1].cpu if len(runs) > 1 else float("nan")
        print(
            f"   {run.engine:8} median wall {run.wall:.3f} s over {args.repeat} runs "
            f"(min {min(run.extra['walls']):.3f}), median CPU {run.cpu:.3f} s, peak "
            f"{run.rss_mb:.0f} MB, ratio to τ-Argus: wall {fmt(ratio, '.2f')}, CPU "
            f"{fmt(cpu_ratio, '.2f')} {run.note}",
            flush=True,
        )
    return runs


def main(argv: list[str] | None = None) -> int:
    all_inst = instances()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    big = {"m100"}  # 2.4 GB of records: only when named
    ap.add_argument("--instances", default=",".join(k for k in all_inst if k not in big))
    ap.add_argument("--methods", default="OPT,MOD,HEUR,GH,NET")
    ap.add_argument("--opt-minutes", type=int, default=10, help="OPT/HEUR time limit (both)")
    ap.add_argument("--mod-minutes", type=int, default=1, help="MOD time per subtable (both)")
    ap.add_argument("--timeout", type=float, default=900.0, help="kill a run after this (s)")
    ap.add_argument("--repeat", type=int, default=5, help="runs of the process-start batch")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--no-tauargus", action="store_true", help="argusqt only")
    ap.add_argument("--list", action="store_true", help="list the instances and exit")
    ap.add_argument(
        "--baseline", type=Path, action="append", default=[],
        help="another argusqt checkout run beside this one (read + tabulate instances)",
    )  # fmt: skip
    args = ap.parse_args(argv)
    if args.list:
        for inst in all_inst.values():
            print(f"{inst.name:14} {inst.label}")
        return 0
    args.methods = [m.strip().upper() for m in args.methods.split(",")]
    exe = None if args.no_tauargus else tauargus_exe()
    print(f"machine: {os.cpu_count()} cores; load {load_text()}; python {sys.version.split()[0]}")
    if exe is None:
        print(
            "τ-Argus engine: not installed (pip install pytauargus) — its rows are skipped"
            if not args.no_tauargus
            else "τ-Argus engine: skipped (--no-tauargus)"
        )
    else:
        print(f"τ-Argus engine: {exe}")
    root = args.workdir or Path(tempfile.mkdtemp(prefix="bench_tau_"))
    root.mkdir(parents=True, exist_ok=True)
    print(f"work folder: {root}")
    for name in args.instances.split(","):
        inst = all_inst.get(name.strip())
        if inst is None:
            print(f"unknown instance {name!r}; --list shows them")
            continue
        try:
            bench_instance(inst, root, args, exe)
        except FileNotFoundError as exc:
            print(f"\n== {inst.name}: skipped ({exc})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
