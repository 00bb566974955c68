"""The τ-Argus logbook: append-only lines `dd-Mon-yyyy HH:MM:SS : message`
(argusqt/docs/formats.md §11)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from argusqt.errors import InputError

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def timestamp(when: datetime) -> str:
    """`22-Nov-2026 05:01:02`, English month names whatever the locale."""
    return f"{when.day:02d}-{_MONTHS[when.month - 1]}-{when.year:04d} {when:%H:%M:%S}"


def format_entry(when: datetime, message: str) -> str:
    """One entry; continuation lines of a multi-line message are indented."""
    first, *rest = str(message).splitlines() or [""]
    out = f"{timestamp(when)} : {first}\n"
    return out + "".join(f"    {line}\n" for line in rest)


class Logbook:
    """An append-only log file; each write opens, appends and closes (nothing lost on a crash)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8"):
                pass
        except OSError as exc:
            raise InputError(
                f"cannot open the logbook for appending ({exc.strerror})", file=path
            ) from None

    def write(self, message: str, when: datetime | None = None) -> None:
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(format_entry(when or datetime.now(), message))
