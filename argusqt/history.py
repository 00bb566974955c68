"""Undo and redo of the actions on computed tables (status changes, recodes, a-priori files,
protection), for the GUI's Edit menu and Python users (no Qt).

A step keeps what one Session action changed, as the state *before* and *after* it: per
table, the cells whose statuses, protection levels, costs, published values or intervals
changed (numpy indices and values, or the whole array when most cells changed), the table's
fingerprints, method and audit, and the Session's table objects (a recode makes a new one),
results, linked set and action log. Undo restores the before-state exactly, redo the
after-state; nothing is re-run (a protection that took a minute is redone at once and
identically). docs/design.md, D-11, says why.

Steps are undone last first, so the current state always equals the after-state of the
newest step to undo; a change made outside the steps (tables recomputed, data reopened)
makes the history stale and it is forgotten.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any

import numpy as np

from argusqt.actions import (
    SETUP_ACTIONS,
    Action,
    ApplyApriori,
    ChangeStatus,
    CopyTable,
    Protect,
    Recode,
    WriteTable,
)
from argusqt.dataclass import dataclass

if TYPE_CHECKING:
    from argusqt.model.table import Table

#: per-cell arrays an action on a table may change (replaced or changed in place)
CELL_ARRAYS = (
    "status", "lpl", "upl", "cost", "published", "interval_lower", "interval_upper",
    "suppressed_from",
)  # fmt: skip
#: what else of a Table an action may change (compared by identity; notes by value)
TABLE_FIELDS = (
    "protected_print",
    "cleared_print",
    "refused_print",
    "protection",
    "audit",
    "recode_state",
    "name",
)
#: the last steps kept (τ-Argus has no undo; 50 is what office programs keep by default)
MAX_STEPS = 50
#: memory the kept steps may hold; the oldest steps go first beyond it
MAX_BYTES = 512 * 2**20


def _fields(table: Table) -> dict[str, Any]:
    out = {name: getattr(table, name, None) for name in TABLE_FIELDS}
    out["notes"] = list(table.notes)
    return out


def _array(table: Table, name: str) -> np.ndarray | None:
    arr = getattr(table, name, None)
    return None if arr is None else np.array(arr, copy=True)


@dataclass
class _Patch:
    """One per-cell array of one table: the cells that differ, before and after (index None:
    the whole array, e.g. published values that appeared)."""

    name: str
    index: np.ndarray | None
    before: np.ndarray | None
    after: np.ndarray | None

    @property
    def nbytes(self) -> int:
        arrays = (self.index, self.before, self.after)
        return sum(a.nbytes for a in arrays if a is not None)

    def put(self, table: Table, after: bool) -> None:
        values = self.after if after else self.before
        if self.index is None:
            setattr(table, self.name, None if values is None else values.copy())
            return
        current = np.array(getattr(table, self.name), copy=True)  # never into a shared array
        current[self.index] = values
        setattr(table, self.name, current)


def _patch(name: str, old: np.ndarray | None, new: Any) -> _Patch | None:
    """What changed in one array (None: nothing)."""
    cur = None if new is None else np.asarray(new)
    if old is None and cur is None:
        return None
    if old is None or cur is None or old.shape != cur.shape or old.dtype != cur.dtype:
        return _Patch(name, None, old, None if cur is None else cur.copy())
    differ = old != cur
    if old.dtype.kind == "f":
        differ &= ~(np.isnan(old) & np.isnan(cur))
    index = np.flatnonzero(differ)
    if index.size == 0:
        return None
    if index.size * 2 > old.size:  # most cells changed: the arrays are smaller than index+values
        return _Patch(name, None, old, cur.copy())
    return _Patch(name, index, old[index], cur[index].copy())


@dataclass
class _TableChange:
    """What one step changed in one Table object."""

    table: Table
    patches: list[_Patch]
    before: dict[str, Any]
    after: dict[str, Any]

    def put(self, after: bool) -> None:
        for p in self.patches:
            p.put(self.table, after)
        for name, value in (self.after if after else self.before).items():
            setattr(self.table, name, list(value) if name == "notes" else value)


@dataclass(frozen=True)
class _SessionState:
    """The Session's side of a step (references: tables, actions and results are not copied)."""

    tables: tuple[Table, ...]
    actions: tuple[Action, ...]
    results: dict[int, Any]
    linked: tuple[int, ...]
    linked_cleared: str | None

    @classmethod
    def of(cls, session: Any) -> _SessionState:
        return cls(
            tuple(session.tables),
            tuple(session.actions),
            dict(session.results),
            tuple(session.linked),
            session.linked_cleared,
        )

    def setup(self) -> tuple[Action, ...]:
        return tuple(a for a in self.actions if isinstance(a, SETUP_ACTIONS))


@dataclass
class Capture:
    """The state before an action (full copies, kept only until the action ends)."""

    session: _SessionState
    arrays: dict[int, dict[str, np.ndarray | None]]  # id(table) → copies
    fields: dict[int, dict[str, Any]]


@dataclass
class Step:
    """One undoable action: its name in the Edit menu and what it changed."""

    label: str
    before: _SessionState
    after: _SessionState
    changes: list[_TableChange]
    tables: tuple[int, ...]  # the numbers of the tables it changed

    @property
    def nbytes(self) -> int:
        n = sum(p.nbytes for c in self.changes for p in c.patches)
        # a recode's new (or old) Table object is kept alive by the step
        mine = {id(t) for t in self.after.tables} ^ {id(t) for t in self.before.tables}
        for t in (*self.before.tables, *self.after.tables):
            if id(t) in mine:
                n += sum(np.asarray(getattr(t, a)).nbytes for a in CELL_ARRAYS[:4])
        return n


def capture(session: Any) -> Capture:
    """Copy what an action on the tables may change (call before the action)."""
    arrays = {id(t): {name: _array(t, name) for name in CELL_ARRAYS} for t in session.tables}
    fields = {id(t): _fields(t) for t in session.tables}
    return Capture(_SessionState.of(session), arrays, fields)


def _step(label: str, cap: Capture, session: Any) -> Step | None:
    after = _SessionState.of(session)
    changes: list[_TableChange] = []
    for t in cap.session.tables:
        patches = [
            p
            for name in CELL_ARRAYS
            if (p := _patch(name, cap.arrays[id(t)][name], getattr(t, name, None))) is not None
        ]
        now = _fields(t)
        was = cap.fields[id(t)]
        differ = [k for k in now if (now[k] != was[k] if k == "notes" else now[k] is not was[k])]
        if patches or differ:
            changes.append(
                _TableChange(t, patches, {k: was[k] for k in differ}, {k: now[k] for k in differ})
            )
    touched = {id(c.table) for c in changes}
    numbers = tuple(
        no
        for no in range(1, max(len(after.tables), len(cap.session.tables)) + 1)
        if _at(cap.session.tables, no) is not _at(after.tables, no)
        or id(_at(after.tables, no)) in touched
        or cap.session.results.get(no) is not after.results.get(no)
    )
    same = (
        not changes
        and not numbers
        and cap.session.actions == after.actions
        and cap.session.linked == after.linked
        and cap.session.linked_cleared == after.linked_cleared
    )
    return None if same else Step(label, cap.session, after, changes, numbers)


def _at(tables: Sequence[Table], no: int) -> Table | None:
    return tables[no - 1] if 0 < no <= len(tables) else None


def _extra_actions(
    current: Sequence[Action], expected: Sequence[Action]
) -> list[WriteTable | CopyTable] | None:
    """Actions appended after `expected` (only written or copied tables may be: what left
    the program is not undone); None when the log went elsewhere (the history is stale)."""
    n = len(expected)
    if len(current) < n or any(a is not b for a, b in zip(current[:n], expected, strict=True)):
        return None
    extra = [a for a in current[n:] if isinstance(a, WriteTable | CopyTable)]
    return extra if len(extra) == len(current) - n else None


@dataclass
class History:
    """The undo and redo stacks of one Session."""

    max_steps: int = MAX_STEPS
    max_bytes: int = MAX_BYTES
    undo_steps: list[Step] = field(default_factory=list)
    redo_steps: list[Step] = field(default_factory=list)
    depth: int = 0  # > 0 while an action runs (inner actions are part of the outer step)

    def clear(self) -> None:
        self.undo_steps.clear()
        self.redo_steps.clear()

    def record(self, label: str, cap: Capture, session: Any) -> Step | None:
        """Keep what the action since `cap` changed as a step (a new step forgets the redos)."""
        step = _step(label, cap, session)
        if step is None:
            return None
        self.undo_steps.append(step)
        self.redo_steps.clear()
        total = sum(s.nbytes for s in self.undo_steps)
        while self.undo_steps and (len(self.undo_steps) > self.max_steps or total > self.max_bytes):
            total -= self.undo_steps.pop(0).nbytes
        return step

    def rollback(self, cap: Capture, session: Any) -> None:
        """Put back what a failed action changed (it never half-applies)."""
        step = _step("failed action", cap, session)
        if step is not None:
            _put(session, step, after=False)

    # ------------------------------------------------------------------ what can be done
    def _fresh(self, session: Any) -> bool:
        """Forget the steps when the session changed outside them (recomputed, reopened)."""
        now = _SessionState.of(session)
        newest = (
            self.undo_steps[-1].after
            if self.undo_steps
            else self.redo_steps[-1].before
            if self.redo_steps
            else None
        )
        if newest is None:
            return False
        ok = (
            len(now.tables) == len(newest.tables)
            and all(a is b for a, b in zip(now.tables, newest.tables, strict=True))
            and now.setup() == newest.setup()
            and _extra_actions(now.actions, newest.actions) is not None
        )
        if not ok:
            self.clear()
        return ok

    def undo_label(self, session: Any) -> str | None:
        """What Undo would undo, in words (None: nothing)."""
        return self.undo_steps[-1].label if self._fresh(session) and self.undo_steps else None

    def redo_label(self, session: Any) -> str | None:
        return self.redo_steps[-1].label if self._fresh(session) and self.redo_steps else None

    # ------------------------------------------------------------------ undo / redo
    def undo(self, session: Any) -> Step | None:
        """Back to the state before the newest step; returns it (None: nothing to undo)."""
        if self.undo_label(session) is None:
            return None
        step = self.undo_steps.pop()
        _put(session, step, after=False)
        self.redo_steps.append(step)
        return step

    def redo(self, session: Any) -> Step | None:
        """The state after the newest undone step again, without running it again."""
        if self.redo_label(session) is None:
            return None
        step = self.redo_steps.pop()
        _put(session, step, after=True)
        self.undo_steps.append(step)
        return step


def _put(session: Any, step: Step, after: bool) -> None:
    """Restore one side of a step: table cells and fields, then the Session's own state."""
    current, target = (step.before, step.after) if after else (step.after, step.before)
    extra = _extra_actions(session.actions, current.actions) or []
    for change in step.changes:
        change.put(after)
    session.tables = list(target.tables)
    session.results = dict(target.results)
    session.linked = list(target.linked)
    session.linked_cleared = target.linked_cleared
    # a table written in between was written in the state now left: a batch file written
    # from the log must not write it again (it would be another table, or refused)
    kept = [a for a in extra if a.table not in step.tables]
    session.actions = [*target.actions, *kept]


def describe(actions: Sequence[Action]) -> str:
    """The Edit menu's name of the actions one step appended to the log."""
    if not actions:
        return "change"
    first = actions[0]
    numbers = sorted({int(n) for a in actions if (n := getattr(a, "table", None)) is not None})
    where = (
        f"table {numbers[0]}"
        if len(numbers) == 1
        else f"tables {', '.join(str(n) for n in numbers)}"
    )
    if isinstance(first, Recode):
        return f"recode {first.variable} in {where}"
    if isinstance(first, ChangeStatus):
        n = sum(len(a.cells) for a in actions if isinstance(a, ChangeStatus))
        cells = f"{n} cell{'s' if n != 1 else ''}"
        what = {
            "safe": "set safe",
            "unsafe": "set unsafe",
            "protected": "set protected",
            "cost": "cost change",
            "levels": "protection levels",
        }[first.change]
        return f"{what} ({cells}) in {where}"
    if isinstance(first, ApplyApriori):
        return f"a-priori file {first.path.name} on {where}"
    if isinstance(first, Protect):
        if first.table == 0:
            return f"protection {first.method} of all tables (linked)"
        return f"protection {first.method} of {where}"
    return type(first).__name__.lower()


__all__ = ["MAX_STEPS", "Capture", "History", "Step", "capture", "describe"]
