"""Console entry `argusqt`: the GUI, `argusqt batch FILE.arb [LOGBOOK] [TEMPDIR]`, `--version`."""

from __future__ import annotations

import gc
import os
import signal
import sys
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, NoReturn

from argusqt import __version__

if TYPE_CHECKING:
    import argparse


def _parser() -> argparse.ArgumentParser:
    import argparse  # lazy: a plain `argusqt batch FILE.arb` needs none of it (_plain_batch)

    p = argparse.ArgumentParser(
        prog="argusqt",
        description="Statistical disclosure control of tables (τ-Argus 4.1 compatible).",
    )
    p.add_argument("--version", action="version", version=f"argusqt {__version__}")
    sub = p.add_subparsers(dest="command")
    b = sub.add_parser("batch", help="run a τ-Argus batch file (.arb) without the GUI")
    b.add_argument("arb", help="the batch file")
    b.add_argument("logbook", nargs="?", help="append the log to this file")
    b.add_argument("tempdir", nargs="?", help="folder for temporary files")
    b.add_argument(
        "--report",
        action="store_true",
        help="write each saved table's CONFIDENTIAL HTML report beside it (<name>.html)",
    )
    a = sub.add_parser(
        "audit",
        help="audit a suppression pattern (e.g. a τ-Argus output) against the data it came "
        "from: outside attacker and insiders; exit 0 passed, 1 failed, 2 not audited",
        description="Audit a pattern made elsewhere. Either JOB.arb OUTPUT: the batch file "
        "that made OUTPUT (its data, table and rules are used; its <SUPPRESS> and "
        "<WRITETABLE> are not run), or --microdata/--table with --metadata, --explanatory, "
        "--response and --rules, then OUTPUT. OUTPUT is a code-value file (with its status "
        "column, or x/- for suppressed values) or a JJ file of the table. The report is "
        "CONFIDENTIAL (true values).",
    )
    a.add_argument("files", nargs="+", help="[JOB.arb] OUTPUT")
    a.add_argument("-n", "--number", type=int, default=None,
                   help="table number in the job (default: the table whose <WRITETABLE> "
                   "wrote OUTPUT, else 1)")  # fmt: skip
    src = a.add_mutually_exclusive_group()
    src.add_argument("--microdata", help="microdata file (with --metadata)")
    src.add_argument("--table", help="table file (tabular input, with --metadata)")
    a.add_argument("--metadata", help="the .rda metadata of --microdata or --table")
    a.add_argument("--explanatory", nargs="+", help="the table's explanatory variables")
    a.add_argument("--response", help="the response variable (default: frequency table)")
    a.add_argument("--shadow", help="the shadow variable (default: the response)")
    a.add_argument("--rules", default="", help='safety rules, e.g. "P(0,0)|P(0,0)|P(10,1)"')
    a.add_argument("--report", help="also write the CONFIDENTIAL report to this file")
    t = sub.add_parser(
        "tidy",
        help="list and remove the hidden temporary files (.NAME.aqt-*.tmp) a killed run left",
    )
    t.add_argument("folders", nargs="*", default=["."], help="folders to tidy (default: .)")
    g = sub.add_parser("gui", help="start the graphical interface (the default)")
    g.add_argument("files", nargs="*", help="files to open")
    return p


class ConsoleLog:
    """Stands in for the logbook while a batch run has none: each entry, the one-line
    summary of a step, goes to stdout (a `<LOGBOOK>` command replaces it)."""

    path = None

    def write(self, message: str, when=None) -> None:
        from datetime import datetime

        from argusqt.io.logbook import format_entry

        print(format_entry(when or datetime.now(), message), end="", flush=True)


def run_batch_command(
    arb: str,
    logbook: str | None,
    tempdir: str | None,
    process_ends: bool = False,
    report: bool = False,
) -> int:
    """Run a batch file headless; errors on stderr as `FILE.arb, line N: message`. Without a
    logbook its lines (one per step) are printed instead.

    `process_ends`: the process exits after the run (the `argusqt` command itself). Then
    what is alive after the imports (numpy, argusqt's modules, the methods' modules) lives
    until exit anyway and is frozen out of the garbage collector's passes (`gc.freeze`):
    the later passes and the exit's own collection skip it (docs/design.md,
    D-16); the collector is off until then, its passes over objects that live on being
    wasted (D-57). Unfreezing before exit would cost the whole gain, so a caller that goes
    on (the tests) gets no freeze at all.
    """
    if process_ends:  # no collector passes over the imports: they live until exit (D-57)
        gc.disable()
        lazy_binding()
    from argusqt.batch.runner import run_batch
    from argusqt.io.atomic import install_cleanup
    from argusqt.progress import CancelToken
    from argusqt.session import Session

    if process_ends:
        gc.freeze()
        install_cleanup()  # SIGTERM/SIGHUP: our temp files go first (only this process's)

    token = CancelToken()

    def on_interrupt(signum, frame) -> None:  # 1st Ctrl-C: cancel (best safe result); 2nd: abort
        if token.cancelled:
            raise KeyboardInterrupt
        token.cancel()
        print("argusqt: cancelling… (Ctrl-C again to abort)", file=sys.stderr)

    try:
        previous = signal.signal(signal.SIGINT, on_interrupt)
    except ValueError:  # not the main thread
        previous = None
    try:
        session = Session()
        if logbook is None and tempdir is None:
            session.logbook = ConsoleLog()  # type: ignore[assignment]
        outcome = run_batch(
            arb,
            logbook=logbook,
            tempdir=tempdir,
            cancel=token,
            freeze_modules=process_ends,
            report=report,
            session=session,
        )
    except KeyboardInterrupt:
        print(f"{arb}: interrupted", file=sys.stderr)
        return 130
    finally:
        if process_ends:
            gc.enable()  # on again at the freeze; here when the run stopped before it
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    if outcome.error is not None:
        print(str(outcome.error), file=sys.stderr)
        return outcome.exit_code
    for f in outcome.files_written:
        # internal outputs and reports (τ-Argus's `<name>.html`): say so here too
        note = " (CONFIDENTIAL, not for publication)" if f in outcome.confidential else ""
        print(f"written: {f}{note}")
    return outcome.exit_code


def end_process(code: int) -> NoReturn:
    """Exit without the interpreter's teardown of the modules a batch run loaded (~4 % of a
    small run's CPU, D-57): every file is closed by then (atomic writes; the logbook
    appends and closes each line), so the standard streams are flushed and the exit
    functions run (our temp files' clean-up) as at a normal exit."""
    import atexit

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more to say
            pass
    atexit._run_exitfuncs()
    os._exit(code)


def x_display_reachable(display: str, timeout: float = 2.0) -> bool:
    """Whether an X server answers at DISPLAY (":N", "unix:N", "host:N", with ".S").

    Qt's xcb plugin aborts the process when it cannot connect; probing the socket first
    (stdlib only: loading libxcb through ctypes would be heavier and no more exact) lets us
    say so in one line instead.
    """
    import socket

    host, sep, rest = display.rpartition(":")
    number = rest.split(".", 1)[0]
    if not sep or not number.isdigit():
        return True  # a form we do not know: let Qt judge
    if host in ("", "unix"):
        # the socket file, then Linux's abstract socket of the same name
        for path in (f"/tmp/.X11-unix/X{number}", f"\0/tmp/.X11-unix/X{number}"):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(timeout)
                try:
                    sock.connect(path)
                    return True
                except OSError:
                    continue
        if host == "unix":
            return False
        host = "localhost"  # ":N" may also be served over TCP
    try:
        with socket.create_connection((host, 6000 + int(number)), timeout=timeout):
            return True
    except OSError:
        return False


def missing_display(
    environ: Mapping[str, str],
    platform: str = sys.platform,
    reachable: Callable[[str], bool] = x_display_reachable,
) -> str | None:
    """Why Qt could not open a window here, or None. Without a display Qt's xcb plugin
    aborts the process with a page of plugin diagnostics; we say it in one line first."""
    if not platform.startswith("linux") or environ.get("QT_QPA_PLATFORM"):
        return None  # Windows/macOS always have a display; a chosen platform is Qt's business
    if environ.get("WAYLAND_DISPLAY"):
        return None
    display = environ.get("DISPLAY")
    if display:
        if reachable(display):
            return None
        return (
            f"argusqt: cannot reach the display DISPLAY={display} (no X server answers there); "
            "check DISPLAY or the X forwarding, or run batch files headless: "
            "argusqt batch FILE.arb"
        )
    return (
        "argusqt: no display to open a window on (DISPLAY and WAYLAND_DISPLAY are not set); "
        "start it from a desktop session, or run batch files headless: argusqt batch FILE.arb"
    )


def start_gui(argv: Sequence[str]) -> int:
    """Import the GUI only when asked for (the core never needs Qt)."""
    reason = missing_display(os.environ)
    if reason is not None:
        print(reason, file=sys.stderr)
        return 2
    try:
        from argusqt.gui.app import main as gui_main
    except ImportError as exc:
        print(f"argusqt: the graphical interface is not available ({exc})", file=sys.stderr)
        print("Use 'argusqt batch FILE.arb' to run a batch file.", file=sys.stderr)
        return 2
    return int(gui_main(list(argv)) or 0)


#: BLAS thread pools numpy's and scipy's OpenBLAS start at import (docs/design.md, D-57)
BLAS_THREADS = ("OPENBLAS_NUM_THREADS",)


def one_blas_thread(environ: MutableMapping[str, str] = os.environ) -> None:
    """One OpenBLAS thread unless the user chose otherwise: starting its pool of threads costs
    ~6 % of a small batch run's CPU at numpy's import, and argusqt's BLAS calls are dot
    products of a few cells (a performance setting only: the API does not set it, D-57)."""
    for name in BLAS_THREADS:
        environ.setdefault(name, "1")


def lazy_binding() -> None:
    """C libraries loaded from now on bind a function at its first call, not all at load
    (RTLD_LAZY for Python's RTLD_NOW): numpy's, HiGHS's and SCIP's bind thousands a batch
    run never calls, ≈ 1.5 % of batch_ex1's instructions (the batch command only, D-92)."""
    if hasattr(sys, "setdlopenflags") and hasattr(os, "RTLD_LAZY"):
        sys.setdlopenflags(sys.getdlopenflags() & ~os.RTLD_NOW | os.RTLD_LAZY)


def _plain_batch(args_in: Sequence[str]) -> tuple[str, str | None, str | None] | None:
    """`batch ARB [LOGBOOK [TEMPDIR]]` with no option: its three positionals, as the parser
    would give them; None for anything else (the parser judges it). Building the parser
    costs argparse's and gettext's import and their first messages, ~2 % of a small run's
    CPU (docs/design.md, D-73)."""
    rest = args_in[1:]
    if args_in[:1] != ["batch"] or not 1 <= len(rest) <= 3:
        return None
    if any(a.startswith("-") for a in rest):  # an option, `--`, `-` or a negative number
        return None
    logbook = rest[1] if len(rest) > 1 else None
    tempdir = rest[2] if len(rest) > 2 else None
    return rest[0], logbook, tempdir


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None and "numpy" not in sys.modules:  # our own process, before numpy loads
        one_blas_thread()
    args_in = list(sys.argv[1:] if argv is None else argv)
    verbs = ("batch", "gui", "tidy", "audit")
    if args_in and not args_in[0].startswith("-") and args_in[0] not in verbs:
        return start_gui(args_in)  # `argusqt data.asc`: open files in the GUI
    plain = _plain_batch(args_in)
    if plain is not None:
        return _batch(*plain, argv is None, report=False)
    args = _parser().parse_args(args_in)
    if args.command == "batch":
        return _batch(args.arb, args.logbook, args.tempdir, argv is None, report=args.report)
    if args.command == "tidy":
        return tidy_command(args.folders)
    if args.command == "audit":
        return audit_command(args)
    files = getattr(args, "files", []) or []
    return start_gui(files)


def _batch(
    arb: str, logbook: str | None, tempdir: str | None, own_process: bool, report: bool
) -> int:
    """`argusqt batch`; `own_process`: our own command line, so the process ends with the run."""
    code = run_batch_command(arb, logbook, tempdir, own_process, report=report)
    if own_process:
        end_process(code)
    return code


def audit_command(args: argparse.Namespace) -> int:
    """`argusqt audit`: build the table the pattern was made for, audit the pattern, print
    the report; 0 passed, 1 failed, 2 when it could not be audited (the message says why)."""
    from pathlib import Path

    from argusqt.errors import ArgusError

    files = [Path(f) for f in args.files]
    try:
        if args.microdata or args.table:
            if len(files) != 1:
                raise ArgusError("with --microdata or --table give one OUTPUT file to audit")
            session, number = _audit_session_from_options(args), 1
        else:
            if len(files) != 2:
                raise ArgusError(
                    "expected JOB.arb OUTPUT (or --microdata/--table … OUTPUT), "
                    f"got {len(files)} file(s)"
                )
            session, number = _audit_session_from_job(files[0], files[1], args.number)
        report = session.audit_report(number, files[-1])
    except ArgusError as exc:
        print(f"argusqt audit: {exc}", file=sys.stderr)
        return 2
    title = f"argusqt audit of {files[-1]} (table {number})"
    if args.report:
        from argusqt.export.audit_report import write_audit_report

        try:
            write_audit_report(args.report, [report], title)
        except OSError as exc:
            print(f"argusqt audit: cannot write {args.report}: {exc}", file=sys.stderr)
            return 2
        print(report.summary)  # "Audit passed: …" or "AUDIT FAILED: …"
        print(f"written: {args.report} (CONFIDENTIAL, not for publication)")
    else:
        print(report.text(title), end="")
    return 0 if report.ok else 1


def _audit_session_from_job(job, output, number: int | None):
    """The session of a batch job run without its protection and writes, and the number of
    the table that wrote `output` (or `number`, or 1)."""
    from argusqt.batch.arb import parse_arb
    from argusqt.batch.runner import run_batch
    from argusqt.errors import ArgusError

    outcome = run_batch(job, skip=frozenset({"SUPPRESS", "WRITETABLE", "AUDIT", "LOGBOOK"}))
    if outcome.error is not None:
        raise outcome.error
    if number is None:
        number = 1
        for cmd in parse_arb(job):
            if cmd.name == "WRITETABLE" and cmd.args.path.replace("\\", "/").split("/")[-1] == (
                output.name
            ):
                number = cmd.args.table
    if not 1 <= number <= len(outcome.session.tables):
        raise ArgusError(f"{job} makes {len(outcome.session.tables)} table(s), not table {number}")
    return outcome.session, number


def _audit_session_from_options(args: argparse.Namespace):
    """A session with one table from --microdata/--table, --metadata and the spec options."""
    from argusqt.errors import ArgusError
    from argusqt.model.table import TableSpec
    from argusqt.rules.parse import parse_safety_rule
    from argusqt.session import Session

    if not args.metadata or not args.explanatory:
        raise ArgusError("--microdata/--table need --metadata and --explanatory")
    session = Session()
    if args.microdata:
        session.open_microdata(args.microdata, args.metadata)
    else:
        session.open_table_data(args.table, args.metadata)
    session.specify_table(TableSpec(list(args.explanatory), args.response, args.shadow))
    session.set_safety_rules(parse_safety_rule(args.rules))
    session.compute_tables()
    return session


def tidy_command(folders: Sequence[str]) -> int:
    """`argusqt tidy FOLDER…`: remove argusqt's stale temp files there, one line per file."""
    from argusqt.io.atomic import tidy_folder

    for folder in folders:
        if not os.path.isdir(folder):
            print(f"argusqt tidy: {folder} is not a folder", file=sys.stderr)
            return 2
        removed = tidy_folder(folder)
        for path in removed:
            print(f"removed: {path}")
        print(f"{folder}: {len(removed)} stale temporary file(s) of argusqt removed")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
