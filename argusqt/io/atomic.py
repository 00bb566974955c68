"""Atomic file writes: a crash or a full disk never leaves a half-written output file.

One file: written to `.NAME.aqt-XXXXXXXX.tmp` in the same folder (locked while it is being
written), then renamed onto NAME. A set of files that belong together (an intermediate
table with its `.rda` and `.hrc`): every member written to its temp file first, then a
journal naming the renames is committed, then the renames, then the journal removed, so a
crash leaves the old set or, once the journal is settled, the new one (docs/design.md,
D-23). Every write first tidies its folder: journals of writers that died
are settled, our temp files that no live process holds are removed.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import json
import os
import re
import signal
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: a file open in another process cannot be deleted there
    fcntl = None  # type: ignore[assignment]

#: Our temp files: `.NAME.aqt-` + mkstemp's 8 random characters + `.tmp`.
_OURS = re.compile(r"\..+\.aqt-[a-z0-9_]{8}\.tmp\Z")
#: Journal of a file set between its commit and its last rename.
_JOURNAL = re.compile(r"\..+\.aqt-set-[a-z0-9_]{8}\.json\Z")
#: An unlocked temp file younger than this may belong to a writer that has not locked it yet.
GRACE_SECONDS = 10.0
#: Age after which a temp file whose lock cannot be probed is taken as abandoned.
ABANDONED_SECONDS = 3600.0


def _lock(fd: int, shared: bool = False, wait: bool = False) -> bool:
    """flock `fd`; False when it is held elsewhere (and not `wait`) or locks are unsupported."""
    if fcntl is None:
        return False
    flags = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
    if not wait:
        flags |= fcntl.LOCK_NB
    try:
        fcntl.flock(fd, flags)
    except OSError:
        return False
    return True


def _held(path: Path) -> bool | None:
    """True when a live process holds `path` locked, False when not, None when unknown."""
    if fcntl is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return True  # cannot open it: not ours to judge
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return None  # the file system has no locks
    finally:
        os.close(fd)
    return False


def _stale(path: Path, now: float) -> bool:
    """Nobody holds it (past the grace for a writer about to lock), or it is very old."""
    try:
        age = now - path.stat().st_mtime
    except OSError:
        return False
    if age <= GRACE_SECONDS:  # never probe a lock its writer may be about to take
        return False
    held = _held(path)
    return held is False or (held is None and age > ABANDONED_SECONDS)


@contextlib.contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """Exclusive lock on the folder while a file set is renamed or settled (best effort)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        yield
        return
    try:
        _lock(fd, wait=True)
        yield
    finally:
        os.close(fd)


def _hidden_names(folder: Path) -> list[str]:
    try:
        return [e.name for e in os.scandir(folder) if e.name.startswith(".")]
    except OSError:
        return []


def settle_sets(folder: str | Path) -> None:
    """Finish the file sets whose writer died after committing them (call before reading)."""
    folder = Path(folder)
    journals = [n for n in _hidden_names(folder) if _JOURNAL.match(n)]
    if journals:
        with _folder_lock(folder):
            for name in journals:
                _settle(folder / name)


def stale_files(folder: str | Path) -> list[Path]:
    """Our temp files in `folder` that no live writer holds (left by a killed run; some hold
    confidential data), oldest first."""
    folder = Path(folder)
    now = time.time()
    found = [folder / n for n in _hidden_names(folder) if _OURS.match(n)]
    return sorted((p for p in found if _stale(p, now)), key=_mtime)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def tidy_folder(folder: str | Path) -> list[Path]:
    """Settle the journals of dead writers, then remove our temp files nobody holds; returns
    the files removed."""
    folder = Path(folder)
    settle_sets(folder)
    removed = []
    for path in stale_files(folder):
        with contextlib.suppress(OSError):
            path.unlink()
            removed.append(path)
    return removed


#: Temp files this process has created and not yet renamed or removed: removed on exit and
#: on SIGTERM/SIGHUP (install_cleanup), so only SIGKILL or a crash can leave one behind.
_LIVE: set[str] = set()


def remove_own_temps() -> None:
    """Remove this process's unfinished temp files (at exit, on a terminating signal)."""
    for tmp in list(_LIVE):
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        _LIVE.discard(tmp)


atexit.register(remove_own_temps)


def install_cleanup(signals: tuple[str, ...] = ("SIGTERM", "SIGHUP")) -> None:
    """On these signals remove our temp files, then die of the signal as before (main thread
    only; where a signal does not exist it is skipped)."""

    def handler(signum: int, frame: object) -> None:
        remove_own_temps()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for name in signals:
        sig = getattr(signal, name, None)
        if sig is None:
            continue
        with contextlib.suppress(ValueError, OSError):  # not the main thread
            if signal.getsignal(sig) in (signal.SIG_DFL, None):
                signal.signal(sig, handler)


def _settle(journal: Path) -> None:
    """Finish the renames a journal names (its writer died after the commit point)."""
    try:
        fd = os.open(journal, os.O_RDONLY)
    except OSError:
        return
    try:
        if fcntl is not None and not _lock(fd):
            return  # its writer is alive and renaming
        with os.fdopen(os.dup(fd), "rb") as fh:
            text = fh.read()
        try:
            renames = [tuple(map(str, r)) for r in json.loads(text.decode("utf-8"))["renames"]]
        except (ValueError, KeyError, TypeError):
            # written only in part: its writer died before the commit point, nothing was
            # renamed (its temps are removed as stale)
            journal.unlink()
            return
        folder = journal.parent
        if not all(len(r) == 3 and _plain_plan(*r) for r in renames):
            return  # not a journal of ours
        for tmp, target, backup in renames:
            with contextlib.suppress(FileNotFoundError):
                os.replace(folder / tmp, folder / target)
            if backup:
                with contextlib.suppress(FileNotFoundError):
                    (folder / backup).unlink()
        journal.unlink()
    except OSError:
        pass  # a journal we cannot read is left for a later look
    finally:
        os.close(fd)


def _plain_plan(tmp: str, target: str, backup: str) -> bool:
    """A journal line renames one of our temps onto a file of the same folder."""
    names = (tmp, target, backup) if backup else (tmp, target)
    return (
        all(n and Path(n).name == n and n not in (".", "..") for n in names)
        and _OURS.match(tmp) is not None
        and (not backup or ".aqt-bak-" in backup)
    )


def _new_mode(path: Path) -> int:
    """The permissions of the file we replace, or the umask's default for a new one."""
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


#: tempfile's name characters; its open flags (the fd not inherited, no symlink followed)
_NAME_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_"
_TEMP_FLAGS = (
    os.O_RDWR
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NOINHERIT", 0)
    | getattr(os, "O_BINARY", 0)
)
#: names tried before giving up (tempfile.TMP_MAX)
_TEMP_TRIES = 10000


def _mkstemp(folder: Path, prefix: str, suffix: str) -> tuple[int, str]:
    """tempfile.mkstemp's file (created exclusively, mode 0600, 8 random name characters)
    without importing tempfile, whose import (shutil, lzma, bz2, random) was ≈ 1.4 % of a
    table file's batch run (docs/design.md, D-114)."""
    base = os.path.abspath(folder)
    for _ in range(_TEMP_TRIES):
        name = "".join(_NAME_CHARS[b % len(_NAME_CHARS)] for b in os.urandom(8))
        file = os.path.join(base, prefix + name + suffix)
        try:
            return os.open(file, _TEMP_FLAGS, 0o600), file
        except FileExistsError:
            continue
        except PermissionError:
            # Windows says so when a folder of that name exists (tempfile's own test)
            if os.name == "nt" and os.path.isdir(base) and os.access(base, os.W_OK):
                continue
            raise
    raise FileExistsError(errno.EEXIST, "No usable temporary file name found")


def _write_temp(path: Path, data: bytes) -> tuple[int, str]:
    """A locked, fsynced temp file beside `path` holding `data`; returns (open fd, its path)."""
    mode = _new_mode(path)
    fd, tmp = _mkstemp(path.parent, f".{path.name}.aqt-", ".tmp")
    _LIVE.add(tmp)
    try:
        _lock(fd)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
        os.chmod(tmp, mode)
    except BaseException:
        _drop(fd, tmp)
        raise
    return fd, tmp


def _drop(fd: int, tmp: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)
    with contextlib.suppress(OSError):
        os.close(fd)
    _LIVE.discard(tmp)


@contextlib.contextmanager
def _naming(target: Path) -> Iterator[None]:
    """An OSError while writing names the file the user asked for, not our hidden temp file
    (or nothing, as a full disk's error does)."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None and Path(exc.filename) == target:
            raise
        words = exc.strerror or str(exc) or type(exc).__name__
        raise type(exc)(exc.errno, f"cannot write the file: {words}", str(target)) from None


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write `data` to a temp file in the same folder, then os.replace it onto `path`."""
    path = Path(path)
    tidy_folder(path.parent)
    with _naming(path):
        fd, tmp = _write_temp(path, data)
        try:
            os.replace(tmp, path)
        except BaseException:
            _drop(fd, tmp)
            raise
        _LIVE.discard(tmp)
        os.close(fd)


def atomic_write_text(path: str | Path, data: str, encoding: str = "utf-8") -> None:
    """Text version of `atomic_write_bytes` (newlines written as given)."""
    atomic_write_bytes(path, data.encode(encoding))


def atomic_write_set(files: Mapping[Path, bytes]) -> None:
    """Write files that belong together (one folder) so that a crash leaves all old or all new.

    Temps first; then, under the folder lock, a journal (the commit point), backups of the old
    files as hard links, the renames, and the journal removed. An error in the rename phase
    puts the old files back; a crash after the commit is settled by the next `tidy_folder`.
    """
    targets = [Path(p) for p in files]
    if not targets:
        return
    folder = targets[0].parent
    if any(t.parent != folder for t in targets):
        raise ValueError("the files of a set must be in one folder")
    tidy_folder(folder)
    temps: list[tuple[int, str]] = []
    try:
        for target, data in zip(targets, files.values(), strict=True):
            with _naming(target):
                temps.append(_write_temp(target, data))
        with _naming(targets[0]), _folder_lock(folder):
            _commit(folder, targets, [tmp for _, tmp in temps])
    finally:
        for fd, tmp in temps:
            _drop(fd, tmp)  # after a commit the temp names are gone: only the fds close


def _commit(folder: Path, targets: list[Path], temps: list[str]) -> None:
    """Journal, back up, rename; on an error undo the renames done so far."""
    backups = [f".{t.name}.aqt-bak-{os.urandom(4).hex()}" if t.exists() else "" for t in targets]
    plan = {
        "renames": [
            [Path(tmp).name, t.name, b] for tmp, t, b in zip(temps, targets, backups, strict=True)
        ]
    }
    jfd, journal = _mkstemp(folder, f".{targets[0].name}.aqt-set-", ".json")
    _lock(jfd)  # held until the set is complete: `_settle` leaves a live writer alone
    try:
        os.write(jfd, json.dumps(plan).encode("utf-8"))
        os.fsync(jfd)
        done: list[int] = []
        try:
            for k, (tmp, target, backup) in enumerate(zip(temps, targets, backups, strict=True)):
                if backup:
                    _backup(target, folder / backup)
                os.replace(tmp, target)
                done.append(k)
        except BaseException:
            os.unlink(journal)  # no roll-forward of a set we are undoing
            for k in reversed(done):
                if backups[k]:
                    os.replace(folder / backups[k], targets[k])
                else:
                    targets[k].unlink()
            raise
        finally:
            for b in backups:
                if b:
                    with contextlib.suppress(OSError):
                        (folder / b).unlink()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(journal)
        _fsync_folder(folder)
    finally:
        os.close(jfd)


def _backup(target: Path, backup: Path) -> None:
    """The old file under a second name (a hard link; a copy where links are not possible)."""
    try:
        os.link(target, backup)
    except OSError:
        backup.write_bytes(target.read_bytes())


def _fsync_folder(folder: Path) -> None:
    """Make the renames durable (POSIX; a no-op where folders cannot be opened)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
