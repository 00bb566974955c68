"""Runs a `.arb` file on a Session in the order of argusqt/docs/formats.md §8.2; errors name the
batch line."""

from __future__ import annotations

import contextlib
import gc
from dataclasses import field
from enum import Enum
from pathlib import Path, PureWindowsPath
from typing import Any

from argusqt.batch.arb import Command, parse_arb
from argusqt.dataclass import dataclass
from argusqt.errors import ArgusError, BatchError
from argusqt.export.writetable import is_confidential
from argusqt.io.atomic import atomic_write_text
from argusqt.io.logbook import Logbook
from argusqt.io.text import NOT_FOUND, resolve_path
from argusqt.model import scipy_sparse
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, no_progress
from argusqt.session import Session


class State(Enum):
    START = "start"
    DATA = "data file named"  # waiting for OPENMETADATA
    META = "metadata opened"  # waiting for SPECIFYTABLE
    SPECIFIED = "table specified"  # waiting for SAFETYRULE (or READTABLE for tabular)
    RULES = "safety rules given"
    READY = "tables computed"


#: Commands allowed in any state.
ANYTIME = {
    "LOGBOOK",
    "SOLVER",
    "SILENT",
    "COVER",
    "JJ",
    "ANCO",
    "VERSIONINFO",
    "CLEAR",
    "GOINTERACTIVE",
}
#: Commands that need the tables.
AFTER_TABLES = {"SUPPRESS", "WRITETABLE", "APRIORI", "RECODE", "AUDIT", "COPIED"}


@dataclass
class BatchOutcome:
    """What a batch run did: ok or the error, the session (for the GUI), files written."""

    path: Path
    session: Session
    ok: bool = True
    error: BatchError | None = None
    interactive: bool = False  # stopped at <GOINTERACTIVE> for the GUI
    cancelled: bool = False
    commands_run: int = 0
    files_written: list[Path] = field(default_factory=list)
    #: the files written that are not for publication (internal outputs, reports)
    confidential: set[Path] = field(default_factory=set)
    #: the reports of its `<AUDIT>` commands (export.audit_report.AuditReport)
    audits: list[Any] = field(default_factory=list)

    @property
    def audit_passed(self) -> bool:
        """Every `<AUDIT>` of the run passed (True when there was none)."""
        return all(r.ok for r in self.audits)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def raise_for_error(self) -> None:
        if self.error is not None:
            raise self.error


class _Runner:
    def __init__(self, path: Path, session: Session, interactive: bool, progress, cancel):
        self.report = False  # write each table's HTML report beside it (`--report`)
        self.path = path
        self.folder = path.parent
        self.session = session
        self.interactive = interactive
        self.progress = progress
        self.cancel = cancel
        self.state = State.START
        self.kind: str | None = None  # "microdata" | "tabular"
        self.pending_data: tuple[Path, int] | None = None
        self.fixed_logbook = False  # a logbook named on the command line wins over <LOGBOOK>
        self.log_start = len(session.log)  # first log entry of this run
        self.outcome = BatchOutcome(path, session)
        self.last = ""  # name of the last command run

    # ------------------------------------------------------------------ helpers
    def fail(self, cmd: Command, message: str) -> BatchError:
        return BatchError(f"{cmd}: {message}", file=self.path, line=cmd.line)

    def input_file(self, name: str, cmd: Command) -> Path:
        log: list[str] = []
        try:
            found = resolve_path(name, self.path, log, cmd.line)
        except ArgusError as exc:
            if NOT_FOUND not in exc.message:  # there, but a folder or a device: say so
                raise self.fail(cmd, exc.message) from None
            raise self.fail(
                cmd, f"file '{name}' not found (looked relative to {self.folder})"
            ) from None
        for line in log:
            self.session.add_log(line)
        return found

    def output_file(self, name: str, quiet: bool = False) -> Path:
        p = Path(name)
        if p.is_absolute():
            return p
        win = PureWindowsPath(name)
        if win.is_absolute() or win.drive:
            out = self.folder / win.name
            if not quiet:
                self.session.add_log(f"'{name}' is a Windows path; writing {out} instead")
            return out
        return self.folder / Path(*win.parts)

    def named_inputs(self, commands: list[Command]) -> list[tuple[str, Path]]:
        """(role, path) of every file the batch will read that exists: the batch file, the
        data and metadata with the hierarchies and codelists they name, a-priori and recode
        files (resolved as the commands will resolve them)."""
        from argusqt.io.rda import read_rda

        roles = {
            "OPENMICRODATA": "microdata",
            "OPENTABLEDATA": "table file",
            "OPENMETADATA": "metadata",
            "APRIORI": "a-priori file",
            "RECODE": "recode file",
        }
        found: list[tuple[str, Path]] = [("batch file", self.path)]
        for cmd in commands:
            role = roles.get(cmd.name)
            name = cmd.args if isinstance(cmd.args, str) else getattr(cmd.args, "path", None)
            if cmd.name == "RECODE":
                name = cmd.args.file
            if role is None or not name:
                continue
            try:
                path = resolve_path(name, self.path)
            except ArgusError:
                continue  # not there: the command itself will say so
            found.append((role, path))
            if role == "metadata":
                try:
                    meta = read_rda(path)
                except ArgusError:
                    continue
                for var in meta.variables:
                    for kind, ref in (("hierarchy", var.hier_file), ("codelist", var.codelist)):
                        if ref:
                            with contextlib.suppress(ArgusError):
                                found.append((kind, resolve_path(ref, path)))
        return found

    def output_paths(self, cmd: Command) -> list[Path]:
        """The files a command would write (with a table's side files)."""
        from argusqt.io.confidential import confidential_path, sidecar_path

        if cmd.name == "LOGBOOK" and not self.fixed_logbook:
            return [self.output_file(cmd.args, quiet=True)]
        if cmd.name == "VERSIONINFO":
            return [self.output_file(cmd.args, quiet=True)]
        if cmd.name == "AUDIT" and cmd.args.path:
            return [self.output_file(cmd.args.path, quiet=True)]
        if cmd.name == "WRITETABLE":
            out = self.output_file(cmd.args.path, quiet=True)
            side = {1: confidential_path(out), 5: out.with_suffix(".rda")}
            paths = [out, side.get(cmd.args.out_type, sidecar_path(out))]
            return paths + ([report_path(out)] if self.report else [])
        return []

    def check_outputs(self, commands: list[Command]) -> None:
        """Refuse, before anything runs, an output that is one of the batch's inputs."""
        from argusqt.io.outputs import KnownInputs, check_outputs

        named = self.named_inputs(commands)
        self.session.other_inputs = [named[0]]
        self.tidy({self.folder} | {p.parent for c in commands for p in self.output_paths(c)})
        inputs = KnownInputs(named)  # each input resolved once for every command (D-89)
        logbook = getattr(self.session.logbook, "path", None)  # None: the console
        if logbook is not None:
            check_outputs([logbook], inputs, "the logbook")
        for cmd in commands:
            try:
                check_outputs(self.output_paths(cmd), inputs, f"<{cmd.name}>")
            except ArgusError as exc:
                raise self.fail(cmd, exc.message) from None

    def tidy(self, folders: set[Path]) -> None:
        """Remove the temp files a killed earlier run left where this run writes (they may
        hold confidential data), and say so."""
        from argusqt.io.atomic import tidy_folder

        for folder in sorted(folders):
            if folder.is_dir():
                removed = tidy_folder(folder)
                if removed:
                    names = ", ".join(p.name for p in removed)
                    self.session.add_log(
                        f"Removed {len(removed)} temporary file(s) an interrupted earlier run "
                        f"left in {folder}: {names}"
                    )

    def order_error(self, cmd: Command, expected: str) -> BatchError:
        return self.fail(
            cmd, f"command out of order: expected {expected} (state: {self.state.value})"
        )

    # ------------------------------------------------------------------ state machine
    def check_order(self, cmd: Command) -> None:
        n, s = cmd.name, self.state
        if n in ANYTIME:
            return
        if n in ("OPENMICRODATA", "OPENTABLEDATA"):
            linked = (
                n == "OPENTABLEDATA"
                and self.kind == "tabular"
                and s in (State.SPECIFIED, State.RULES)
            )
            if s != State.START and not linked:
                raise self.order_error(cmd, "<CLEAR> before opening other data")
        elif n == "OPENMETADATA":
            if s != State.DATA:
                raise self.order_error(
                    cmd, "<OPENMICRODATA> or <OPENTABLEDATA> before <OPENMETADATA>"
                )
        elif n == "SPECIFYTABLE":
            ok = s == State.META or (s == State.RULES and self.kind == "microdata")
            if not ok:
                if s == State.SPECIFIED and self.kind == "microdata":
                    raise self.order_error(cmd, "<SAFETYRULE> for the previous table first")
                raise self.order_error(
                    cmd, "<OPENMETADATA> (and for a next table file <OPENTABLEDATA>) first"
                )
        elif n == "SAFETYRULE":
            if s != State.SPECIFIED:
                raise self.order_error(cmd, "<SPECIFYTABLE> directly before <SAFETYRULE>")
        elif n == "SAFETYRULEHOLDING":
            if s != State.RULES or self.last != "SAFETYRULE":
                raise self.order_error(cmd, "<SAFETYRULE> directly before <SAFETYRULEHOLDING>")
        elif n == "READMICRODATA":
            if self.kind != "microdata" or s != State.RULES:
                raise self.order_error(
                    cmd,
                    "microdata opened, at least one <SPECIFYTABLE> + <SAFETYRULE> before <READMICRODATA>",
                )
        elif n == "READTABLE":
            if self.kind != "tabular" or s not in (State.SPECIFIED, State.RULES):
                raise self.order_error(
                    cmd, "a table file opened and <SPECIFYTABLE> before <READTABLE>"
                )
        elif n in AFTER_TABLES:
            if s != State.READY:
                raise self.order_error(cmd, "<READMICRODATA> or <READTABLE> before this command")

    # ------------------------------------------------------------------ commands
    def run_command(self, cmd: Command) -> bool:
        """Execute one command; False means stop (GOINTERACTIVE)."""
        ses = self.session
        n, a = cmd.name, cmd.args
        if n == "LOGBOOK":
            if self.fixed_logbook:
                ses.add_log(
                    f"<LOGBOOK> '{a}' ignored: the logbook given on the command line is kept"
                )
            else:
                out = self.output_file(a)
                ses.check_outputs(out, action="<LOGBOOK>")
                ses.logbook = Logbook(out)
                for entry in ses.log[self.log_start :]:  # this run's start goes there too
                    ses.logbook.write(entry.message, entry.when)
                ses.add_log(f"Logbook: {ses.logbook.path}")
        elif n in ("SILENT", "COVER", "JJ"):
            ses.add_log(f"<{n}> accepted and ignored (internal command of later τ-Argus versions)")
        elif n == "ANCO":
            ses.add_log(
                "<ANCO> accepted and ignored: it switches on τ-Argus 4.2's expert mode (its "
                "solvers' temporary files kept, extra fields in its dialogs); argusqt has no "
                "such mode and its results do not depend on it"
            )
        elif n == "SOLVER":
            ses.add_log(f"Solver {a} requested; argusqt uses its own free solvers (SCIP, HiGHS)")
        elif n == "VERSIONINFO":
            from argusqt import __version__

            out = self.output_file(a)
            ses.check_outputs(out, action="<VERSIONINFO>")
            atomic_write_text(out, f"argusqt {__version__}\n")
            self.outcome.files_written.append(out)
        elif n == "CLEAR":
            ses.clear()
            self.state, self.kind, self.pending_data = State.START, None, None
        elif n == "GOINTERACTIVE":
            if self.interactive:
                ses.add_log("<GOINTERACTIVE>: batch stopped, continuing in the GUI")
                self.outcome.interactive = True
            else:
                ses.add_log("<GOINTERACTIVE>: headless batch run ends here")
            return False
        elif n in ("OPENMICRODATA", "OPENTABLEDATA"):
            self.pending_data = (self.input_file(a, cmd), cmd.line)
            self.kind = "microdata" if n == "OPENMICRODATA" else "tabular"
            self.state = State.DATA
        elif n == "OPENMETADATA":
            meta = self.input_file(a, cmd)
            assert self.pending_data is not None
            data, data_line = self.pending_data
            try:
                if self.kind == "microdata":
                    ses.open_microdata(data, meta)
                else:
                    ses.open_table_data(data, meta)
            except ArgusError as exc:
                raise self.fail(
                    cmd, f"opening {data.name} (line {data_line}) with metadata {meta.name}: {exc}"
                ) from None
            self.state = State.META
        elif n == "SPECIFYTABLE":
            ses.specify_table(a)
            self.state = State.SPECIFIED
        elif n == "SAFETYRULE":
            ses.set_safety_rules(a)
            self.state = State.RULES
        elif n == "SAFETYRULEHOLDING":
            from argusqt.rules.parse import add_holding_rules

            rules = ses.specs[-1].rules
            ses.set_safety_rules(add_holding_rules(rules, a, self.path, cmd.line))
        elif n == "AUDIT":
            self.audit(cmd)
        elif n == "COPIED":  # what the GUI's copy let out is judged beside what follows
            if not ses.remember_copied(ses.table(a)):
                ses.add_log(
                    f"<COPIED> {a}: table {a} has not passed the publication audit, so its "
                    "copy was marked not for publication and is not counted"
                )
        elif n == "READMICRODATA":
            ses.compute_tables(self.progress, self.cancel)
            self.state = State.READY if ses.tables else self.state
        elif n == "READTABLE":
            ses.compute_tables(self.progress, self.cancel, a.totals_mode, a.keep_status)
            self.state = State.READY if ses.tables else self.state
        elif n == "APRIORI":
            ses.apply_apriori(
                a.table, self.input_file(a.path, cmd), a.sep, a.ignore_errors, a.expand_trivial
            )
        elif n == "RECODE":
            target = a.level if a.level is not None else self.input_file(a.file, cmd)
            ses.recode(a.table, a.variable, target)
        elif n == "SUPPRESS":
            if a.table == 0:
                results = ses.protect_linked(a.method, a.params, self.progress, self.cancel)
            else:
                if a.ptables is not None:  # CKM(t) "ptable" | "sep": files beside the batch
                    first, sep = (None if x is None else self.input_file(x, cmd) for x in a.ptables)
                    ses.set_ckm_ptables(a.table, first, sep)
                results = [ses.protect(a.table, a.method, a.params, self.progress, self.cancel)]
            if any(r.cancelled for r in results):
                self.outcome.cancelled = True
        elif n == "WRITETABLE":
            out = self.output_file(a.path)
            files = ses.write_table(a.table, a.out_type, a.options, out)
            if self.report:  # asked for (`argusqt batch --report`): τ-Argus's `<name>.html`,
                # confidential, marked inside (argusqt/docs/formats.md §11.2)
                files.append(ses.write_report(a.table, report_path(out), tau_name=True))
            # all files of an internal output; of a publication only the report
            confidential = is_confidential(a.out_type, a.options, out)
            self.outcome.confidential.update(files if confidential else files[1:])
            self.outcome.files_written.extend(files)
        else:  # pragma: no cover - the parser knows every command
            raise self.fail(cmd, "command not implemented")
        return True

    def audit(self, cmd: Command) -> None:
        """`<AUDIT> [table[, "file"]]`: the verdict and every primary's attacker interval in
        the logbook, the report (confidential) in the file when one is named."""
        numbers = (
            [cmd.args.table] if cmd.args.table else list(range(1, len(self.session.tables) + 1))
        )
        reports = [
            self.session.audit_report(no, None, self.progress, self.cancel) for no in numbers
        ]
        self.outcome.audits.extend(reports)
        if cmd.args.path:
            out = self.output_file(cmd.args.path)
            self.session.check_outputs(out, action="<AUDIT>")
            from argusqt.export.audit_report import write_audit_report

            write_audit_report(out, reports)
            self.outcome.files_written.append(out)
            self.outcome.confidential.add(out)
            self.session.add_log(f"Audit report (CONFIDENTIAL) written: {out}")

    def run(self, commands: list[Command]) -> BatchOutcome:
        total = max(len(commands), 1)
        self.check_outputs(commands)
        for k, cmd in enumerate(commands):
            if self.cancel is not None and self.cancel.cancelled:
                self.outcome.cancelled = True
                raise self.fail(cmd, "batch run cancelled before this command")
            self.progress(ProgressEvent(f"Line {cmd.line}: <{cmd.name}>", fraction=k / total))
            self.check_order(cmd)
            self.session.add_log(f"Batch line {cmd.line}: {cmd}")
            try:
                go_on = self.run_command(cmd)
            except BatchError:
                raise
            except ArgusError as exc:
                raise self.fail(cmd, str(exc)) from None
            except OSError as exc:  # atomic writes name the target, never their temp file
                words = exc.strerror or str(exc) or type(exc).__name__
                where = f"{exc.filename}: " if exc.filename else ""
                raise self.fail(cmd, f"{where}{words}") from None
            except Exception as exc:  # internal error: still name the batch line, no traceback
                raise self.fail(
                    cmd, f"internal error, please report: {type(exc).__name__}: {exc}"
                ) from exc
            self.outcome.commands_run += 1
            self.last = cmd.name
            if not go_on:
                break
        self.progress(ProgressEvent("Batch finished", fraction=1.0))
        return self.outcome


def report_path(table_file: Path) -> Path:
    """τ-Argus's name of the report of a saved table: the table file with `.html` (and
    `.report.html` when the table file itself ends in `.html`)."""
    html = table_file.with_suffix(".html")
    return html if html != table_file else table_file.with_suffix(".report.html")


def run_batch(
    path: str | Path,
    logbook: str | Path | None = None,
    tempdir: str | Path | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    interactive: bool = False,
    session: Session | None = None,
    freeze_modules: bool = False,
    report: bool = False,
    skip: frozenset[str] = frozenset(),
) -> BatchOutcome:
    """Run a batch file; the outcome carries ok/error (a BatchError with file and line) and the session.

    `freeze_modules` (only for the headless command, whose process ends with the run): once
    parsing has imported the methods' modules, everything alive moves to the garbage
    collector's permanent generation (`gc.freeze`), so its later passes skip it
    (docs/design.md, D-16), and the collector, which the command turns off while the
    modules are imported (D-57), is on again. Never in the GUI or a caller that goes on:
    what is frozen is never collected as a cycle.

    `skip`: command names not run (`argusqt audit JOB.arb OUTPUT` builds the tables of the
    job without its `<SUPPRESS>` and `<WRITETABLE>`); each is logged as skipped.
    """
    path = Path(path)
    session = session or Session()
    if tempdir is not None:
        session.tempdir = Path(tempdir)
        session.tempdir.mkdir(parents=True, exist_ok=True)
    runner = _Runner(path, session, interactive, progress, cancel)
    runner.report = report
    outcome = runner.outcome
    parsed: list[Command] | None = None
    try:
        if logbook is not None:
            # never appended to an input (nothing is logged before this check)
            from argusqt.io.outputs import check_outputs

            with contextlib.suppress(BatchError):  # a syntax error is reported below
                parsed = parse_arb(path)
                named = runner.named_inputs(parsed)
                check_outputs([Path(logbook)], named, "the logbook")
            check_outputs([Path(logbook)], [("batch file", path)], "the logbook")
            session.logbook = Logbook(logbook)
            runner.fixed_logbook = True
        elif session.tempdir is not None:
            session.logbook = Logbook(session.tempdir / "Logbook.txt")
        session.add_log(f"Batch file {path} started")
        # parsed once when the logbook's check read it already (the same file, D-89)
        commands = parse_arb(path) if parsed is None else parsed
        for cmd in commands:
            if cmd.name in skip:
                session.add_log(f"Batch line {cmd.line}: {cmd} skipped (not part of this run)")
        commands = [c for c in commands if c.name not in skip]
        if freeze_modules:
            gc.freeze()
            scipy_sparse.REFREEZE = True  # its mid-run import frozen too (D-78)
            gc.enable()  # the command kept the collector off through the imports (D-57)
        runner.run(commands)
    except BatchError as exc:
        outcome.ok = False
        outcome.error = exc
    except ArgusError as exc:  # e.g. the logbook cannot be opened
        outcome.ok = False
        outcome.error = BatchError(str(exc), file=path)
    if outcome.error is not None:
        _safe_log(session, f"Batch file {path.name} stopped with an error: {outcome.error}")
    else:
        _safe_log(session, f"Batch file {path.name} finished")
    return outcome


def _safe_log(session: Session, message: str) -> None:
    try:
        session.add_log(message)
    except OSError:  # the logbook itself failed; the caller reports the error anyway
        session.logbook = None
        session.add_log(message)
