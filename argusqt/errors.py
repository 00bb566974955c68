"""Errors that carry the file, line and what was expected, so users can fix their input."""

from __future__ import annotations

import re
from pathlib import Path

#: An echoed piece of input longer than this (a code, a field) is cut in messages and logs.
ECHO_LIMIT = 200
#: A whole message longer than this is cut too (an input echoed many times).
MESSAGE_LIMIT = 20_000
_LONG = re.compile(rf"\S{{{ECHO_LIMIT + 1},}}")


def clip_echo(text: str) -> str:
    """`text` with every run of more than ECHO_LIMIT non-blank characters (a 5 MB code read
    from a file) cut to its start and end, saying how much was left out; so is the whole."""

    def cut(m: re.Match[str]) -> str:
        t = m.group(0)
        return f"{t[:80]}…[{len(t) - 100:,} characters cut]…{t[-20:]}"

    text = _LONG.sub(cut, text)
    if len(text) > MESSAGE_LIMIT:
        text = f"{text[: MESSAGE_LIMIT - 200]}…[{len(text) - MESSAGE_LIMIT + 200:,} characters cut]"
    return text


class ArgusError(Exception):
    """Base class of every error argusqt reports to a user (never shown as a traceback)."""

    def __init__(
        self,
        message: str,
        file: str | Path | None = None,
        line: int | None = None,
        column: int | None = None,
    ):
        self.message = clip_echo(str(message))
        self.file = str(file) if file is not None else None
        self.line = line
        self.column = column
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = ""
        if self.file is not None:
            where = self.file
            if self.line is not None:
                where += f", line {self.line}"
                if self.column is not None:
                    where += f", column {self.column}"
            where += ": "
        return where + self.message


class InputError(ArgusError):
    """A data, metadata, hierarchy, codelist, recode, a-priori or table file is malformed."""


class SpecificationError(ArgusError):
    """A table specification or safety rule is inconsistent with the metadata."""


class BatchError(ArgusError):
    """A batch (.arb) command failed; names the batch file and line."""


class MethodError(ArgusError):
    """A protection method cannot run (infeasible, unsupported options, not available)."""


class ParameterError(MethodError):
    """A method parameter is unknown or out of range; names the method, the parameter and the
    values allowed (the batch parser adds the file and line)."""

    def __init__(
        self,
        message: str,
        method: str = "",
        parameter: str | None = None,
        allowed: str = "",
        file: str | Path | None = None,
        line: int | None = None,
    ):
        self.method = method
        self.parameter = parameter
        self.allowed = allowed
        super().__init__(message, file=file, line=line)


class TimeLimitError(MethodError):
    """The user's time limit (and its stated grace) ran out before the method had a pattern
    that passed the audit: a clear refusal, nothing is published or changed."""


class AuditError(ArgusError):
    """The audit found a primary cell whose protection interval is not covered."""


class Cancelled(ArgusError):
    """Raised only where no safe partial result exists to return after a cancel."""


class PublicationError(ArgusError):
    """A table may not be published: its current statuses fail (or were never given) the audit.

    `cells` names the failing cells by their codes so users can find them; nothing was written.
    `beside`: the faces published before (e.g. "table 1 as published in t1.txt") that the
    table, alone publishable, would disclose with (docs/design.md, D-81); empty otherwise.
    """

    def __init__(
        self,
        message: str,
        cells: list[tuple[str, ...]] | None = None,
        file: str | Path | None = None,
        line: int | None = None,
        beside: list[str] | None = None,
    ):
        self.cells = list(cells or [])
        self.beside = list(beside or [])
        super().__init__(message, file=file, line=line)
