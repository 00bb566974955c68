"""Session files (`.aqs`): save the user's work on the tables and load it back, audited.

A session file is UTF-8 JSON (written atomically) with this layout (format version 2; version
1 files are read too):

```
{"confidential": "CONFIDENTIAL — not for publication: …",
 "format": "argusqt-session", "version": 2, "argusqt": "<version>", "saved": "<ISO time>",
 "kind": "microdata" | "tabular",
 "data": {"path": ..., "absolute": ...}, "metadata": {"path": ..., "absolute": ...},  # micro
 "sources": [{"data": {...}, "metadata": {...}, "table": 1 | null}, ...],           # tabular
 "read_mode": [totals_mode, keep_status],
 "specs": [{"explanatory": [...], "response": ..., "shadow": ..., "cost": {...},
            "rules": {...SafetyRules fields...}}, ...],
 "actions": [{"action": "recode" | "apriori" | "change_status" | "protect" | "write_table",
              ...}, ...],   # what was done to the computed tables, in order (argusqt/actions.py)
 "insight": {"<table>": {"recode_history": [...], "methods": [...]}},  # the GUI's docks
 "tables": [{"n_cells": N, "codes": [[codes of dim 1], ...], "value_digest": sha256,
             "value": ARRAY,   # cell values: equal up to rounding when the digest differs
             "recodes": [{"variable": v, "description": d, "grc": text | null,
                          "codelist": {...}, "node_map": [original node -> new node]}],
             "status": ARRAY, "lpl": ARRAY, "upl": ARRAY, "cost": ARRAY,
             "published": ARRAY | null, "method": "HEUR" | null,
             "suppressed_from": ARRAY | null,  # the method's secondaries' former statuses
             "result": {...ProtectionResult figures, interval bounds as ARRAY...} | null}],
 "printed": [{"table": N, "where": file name, "path": {...} | null,  # published faces (D-81)
              "codes": [[...], ...], "recodes": [...as a table's...],  # its codings (D-90)
              "status": ARRAY, "lpl": ARRAY, "upl": ARRAY, "published": ARRAY | null,
              "interval_lower": ARRAY | null, "interval_upper": ARRAY | null,
              "protection": {"method", "face", "params", "public"} | null}]}
```

Paths are relative to the session file's folder when possible ("path") with the absolute
path as a fallback ("absolute"); on load they are found like other names inside τ-Argus
files (`argusqt.io.text.resolve_path`: relative, by base name, ignoring case). An ARRAY is
`{"dtype": "float64" | "int8", "n": N, "zlib_base64": ...}`: the little-endian bytes of the
array, zlib-compressed, base64-encoded.

Recodes are redone exactly: each recoded variable stores its new codelist (codes, parents,
missing flags, labels) and the map from the original codelist's nodes to the new nodes; the
`.grc` text is kept in the recode action (version 1 files: when the recode file named in the
history still existed). The actions (manual status changes by cell codes, protections with
their typed parameters, a-priori files, written tables) are history: the per-table arrays
are the state; a batch file written after loading replays them. Version 1 files kept the
history as batch lines, without the manual changes: those stay in the tables but not in the
history (the log says so).

Loading reopens the data, recomputes the tables, redoes the recodes, checks that every
table has the saved cells (codes and a digest of the cell values), restores the per-cell
state and re-runs the audit of every table with secondary suppressions or a suppression
method: a table saved as protected by a suppression method (HEUR, MOD, OPT) that no longer
passes raises AuditError (an unverified pattern is never shown as protected). Every table
restored as protected then gets the publication gate's verdict (outsider, insiders for its
publication form, sums of suppressed cells, and the joint audit of tables protected
together): it reads "protected (publication audit passed)" or NOT PUBLISHABLE, as saving
would say (docs/design.md, D-51).

"method" and "result" are saved only while the table's statuses are still the method's
pattern; after later manual changes (undo secondaries, a new unsafe cell, …) they are saved
as null with "changed_after_protection": true, and the table loads as unprotected work in
progress: its secondaries (manual, a-priori) are audited and the verdict is logged only.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import os
import re
import zlib
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from argusqt import __version__
from argusqt.actions import (
    TABLE_ACTIONS,
    ApplyApriori,
    ChangeStatus,
    CopyTable,
    Protect,
    Recode,
    TableAction,
    WriteTable,
)
from argusqt.batch.arb import parse_arb_lines
from argusqt.errors import ArgusError, AuditError, Cancelled, InputError, PublicationError
from argusqt.export.gate import (
    fingerprint,
    linked_fingerprint,
    linked_table_verdicts,
    mark_protected,
    protection_state,
    table_verdict,
)
from argusqt.export.writetable import is_confidential
from argusqt.io.atomic import atomic_write_text
from argusqt.io.confidential import CONFIDENTIAL_BANNER
from argusqt.io.outputs import check_outputs
from argusqt.io.text import read_lines, read_text_bytes, resolve_path
from argusqt.model.codelist import CodeList
from argusqt.model.rulespec import DominanceRule, FreqRule, PRule, RequestRule, SafetyRules
from argusqt.model.status import Status, is_secondary, is_suppressed
from argusqt.model.table import CostSpec, ProtectionInfo, Table, TableSpec
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, no_progress
from argusqt.protection.core.result import ProtectionResult, public_figures
from argusqt.recode.apply import RecodeState, recode_table, undo_recode
from argusqt.rules.cost import compute_cost
from argusqt.session import Session
from argusqt.workflow.output import remember_printed

FORMAT = "argusqt-session"
#: what a session file says about itself in its first key
CONFIDENTIAL_NOTE = (
    f"{CONFIDENTIAL_BANNER}: statuses, protection levels and audit intervals of every cell"
)
VERSION = 2
#: versions this argusqt reads
READABLE = (1, 2)
SUFFIX = ".aqs"


class SessionFileError(InputError):
    """A session file cannot be read or no longer matches its data."""


# ---------------------------------------------------------------------------- arrays
def encode_array(a: np.ndarray | None, dtype: str) -> dict | None:
    """{"dtype", "n", "zlib_base64"} of a 1-d array (little-endian bytes, zlib, base64)."""
    if a is None:
        return None
    arr = np.ascontiguousarray(np.asarray(a).ravel(), dtype=np.dtype(dtype).newbyteorder("<"))
    data = base64.b64encode(zlib.compress(arr.tobytes(), 6)).decode("ascii")
    return {"dtype": dtype, "n": int(arr.size), "zlib_base64": data}


def decode_array(obj: Any, where: str, what: str) -> np.ndarray | None:
    if obj is None:
        return None
    try:
        dtype = np.dtype(obj["dtype"]).newbyteorder("<")
        if obj["dtype"] not in ("float64", "int8", "int64", "bool"):
            raise ValueError(f"unsupported dtype {obj['dtype']}")
        raw = zlib.decompress(base64.b64decode(obj["zlib_base64"]))
        arr = np.frombuffer(raw, dtype=dtype).astype(dtype.newbyteorder("="))
        if arr.size != int(obj["n"]):
            raise ValueError(f"{arr.size} values, expected {obj['n']}")
    except (KeyError, TypeError, ValueError, zlib.error) as exc:
        raise SessionFileError(
            f"{what}: expected an encoded array {{dtype, n, zlib_base64}} ({exc})", file=where
        ) from None
    return arr


def _digest(values: np.ndarray) -> str:
    arr = np.ascontiguousarray(np.asarray(values, dtype="<f8"))
    return hashlib.sha256(arr.tobytes()).hexdigest()


# ---------------------------------------------------------------------------- specs
def rules_to_dict(rules: SafetyRules) -> dict:
    return dataclasses.asdict(rules)


def rules_from_dict(d: dict) -> SafetyRules:
    def opt(cls, v):
        return None if v is None else cls(**v)

    return SafetyRules(
        nk_individual=[DominanceRule(**r) for r in d.get("nk_individual", [])],
        nk_holding=[DominanceRule(**r) for r in d.get("nk_holding", [])],
        p_individual=[PRule(**r) for r in d.get("p_individual", [])],
        p_holding=[PRule(**r) for r in d.get("p_holding", [])],
        freq_individual=opt(FreqRule, d.get("freq_individual")),
        freq_holding=opt(FreqRule, d.get("freq_holding")),
        req_individual=opt(RequestRule, d.get("req_individual")),
        req_holding=opt(RequestRule, d.get("req_holding")),
        zero_range=d.get("zero_range"),
        manual_margin=float(d.get("manual_margin", 20.0)),
        use_weights=bool(d.get("use_weights", False)),
        missing_safe=bool(d.get("missing_safe", False)),
        combined=d.get("combined"),
    )


def spec_to_dict(spec: TableSpec) -> dict:
    return {
        "explanatory": list(spec.explanatory),
        "response": spec.response,
        "shadow": spec.shadow,
        "cost": dataclasses.asdict(spec.cost),
        "rules": rules_to_dict(spec.rules),
    }


def spec_from_dict(d: dict) -> TableSpec:
    return TableSpec(
        explanatory=[str(e) for e in d["explanatory"]],
        response=d.get("response"),
        shadow=d.get("shadow"),
        cost=CostSpec(**d.get("cost", {})),
        rules=rules_from_dict(d.get("rules", {})),
    )


def codelist_to_dict(cl: CodeList) -> dict:
    return {
        "name": cl.name,
        "codes": list(cl.codes),
        "parent": [int(p) for p in cl.parent],
        "missing": [bool(m) for m in cl.is_missing],
        "total_code": cl.total_code,
        "hierarchical": bool(cl.hierarchical),
        "labels": dict(cl.labels),
    }


def codelist_from_dict(d: dict) -> CodeList:
    return CodeList(
        d["name"],
        [str(c) for c in d["codes"]],
        np.asarray(d["parent"], dtype=np.int64),
        np.asarray(d["missing"], dtype=bool),
        d.get("total_code", "Total"),
        bool(d.get("hierarchical", False)),
        dict(d.get("labels", {})),
    )


# ---------------------------------------------------------------------------- paths
def _path_entry(p: Path | None, base: Path) -> dict | None:
    if p is None:
        return None
    absolute = Path(os.path.abspath(p))
    try:
        rel = os.path.relpath(absolute, base)
    except ValueError:  # another drive (Windows)
        rel = str(absolute)
    return {"path": Path(rel).as_posix(), "absolute": str(absolute)}


def _find(entry: Any, session_path: Path, what: str, log: list[str]) -> Path:

    if not isinstance(entry, dict) or not entry.get("path"):
        raise SessionFileError(f"expected the {what} path in the session file", file=session_path)
    try:
        return resolve_path(str(entry["path"]), session_path, log)
    except InputError:
        pass
    absolute = entry.get("absolute")
    if absolute and Path(absolute).is_file():
        return Path(absolute)
    raise SessionFileError(
        f"the {what} '{entry['path']}' was not found (looked next to the session file and at "
        f"'{absolute}'); put it back or move the session file next to it",
        file=session_path,
    )


# ---------------------------------------------------------------------------- actions
def action_to_json(a: Any, base: Path) -> dict:
    """One table action as JSON (paths as path entries relative to the session's folder)."""
    if isinstance(a, Recode):
        return {
            "action": "recode",
            "table": a.table,
            "variable": a.variable,
            "level": a.level,
            "grc_text": a.grc_text,
            "source": _path_entry(a.source, base),
            "folder": _path_entry(a.folder, base),
        }
    if isinstance(a, ApplyApriori):
        return {
            "action": "apriori",
            "table": a.table,
            "path": _path_entry(a.path, base),
            "sep": a.sep,
            "ignore_errors": a.ignore_errors,
            "expand_trivial": a.expand_trivial,
        }
    if isinstance(a, ChangeStatus):
        return {
            "action": "change_status",
            "table": a.table,
            "change": a.change,
            "cells": [list(c) for c in a.cells],
            "value": a.value,
            "upper": a.upper,
        }
    if isinstance(a, Protect):
        return {
            "action": "protect",
            "table": a.table,
            "method": a.method,
            "params": a.params.to_mapping(),
        }
    if isinstance(a, WriteTable):
        return {
            "action": "write_table",
            "table": a.table,
            "out_type": a.out_type,
            "options": a.options,
            "path": _path_entry(a.path, base),
        }
    if isinstance(a, CopyTable):
        return {"action": "copy", "table": a.table}
    raise TypeError(f"not a table action: {a!r}")


def _entry_path(entry: Any, session_path: Path) -> Path | None:
    """A path entry back to a path: next to the session file when it is there, else absolute
    (history only: the file need not exist)."""
    if entry is None:
        return None
    rel = session_path.parent / str(entry["path"])
    if rel.exists() or not entry.get("absolute"):
        return rel
    return Path(str(entry["absolute"]))


def _action_from_json(d: Any, path: Path, k: int) -> TableAction:
    # lazy: the method registry and parameters (a run that only tabulates needs none)
    from argusqt.protection.core import registry

    try:
        kind = d["action"]
        table = int(d["table"])
        if kind == "recode":
            level = d.get("level")
            return Recode(
                table,
                str(d["variable"]),
                level=None if level is None else int(level),
                grc_text=d.get("grc_text"),
                source=_entry_path(d.get("source"), path),
                folder=_entry_path(d.get("folder"), path),
            )
        if kind == "apriori":
            where = _entry_path(d["path"], path)
            assert where is not None
            return ApplyApriori(
                table, where, str(d["sep"]), bool(d["ignore_errors"]), bool(d["expand_trivial"])
            )
        if kind == "change_status":
            change = str(d["change"])
            if change not in ("safe", "unsafe", "protected", "cost", "levels"):
                raise ValueError(f"unknown change {change!r}")
            return ChangeStatus(
                table,
                change,  # type: ignore[arg-type]
                tuple(tuple(str(c) for c in cell) for cell in d["cells"]),
                None if d.get("value") is None else float(d["value"]),
                None if d.get("upper") is None else float(d["upper"]),
            )
        if kind == "protect":
            desc = registry.get(str(d["method"]))
            return Protect(table, desc.name, desc.params.from_mapping(d.get("params") or {}))
        if kind == "write_table":
            where = _entry_path(d["path"], path)
            assert where is not None
            return WriteTable(table, int(d["out_type"]), str(d["options"]), where)
        if kind == "copy":
            return CopyTable(table)
        raise ValueError(f"unknown action {kind!r}")
    except ArgusError as exc:
        raise SessionFileError(f"action {k}: {exc.message}", file=path) from None
    except (KeyError, TypeError, ValueError, AssertionError) as exc:
        raise SessionFileError(f"action {k} is malformed ({exc})", file=path) from None


def _v1_actions(history: list[str], path: Path, s: Any) -> list[TableAction]:
    """The actions of a version-1 file's batch lines; its manual changes were not kept."""
    lines = []
    for line in history:
        m = re.match(r"^<APRIORI> @manual:(\d+)$", line)
        if m:
            s.add_log(
                f"warning: the manual status changes of table {m.group(1)} from this version-1 "
                "session file are in the table but not in its history; a batch file written "
                "now will not repeat them"
            )
            continue
        lines.append(line)
    try:
        commands = parse_arb_lines(lines, path)
    except ArgusError as exc:
        raise SessionFileError(f"the history cannot be read: {exc.message}", file=path) from None
    out: list[TableAction] = []
    for c in commands:
        a = c.args
        if c.name == "RECODE":
            if a.level is not None:
                out.append(Recode(a.table, a.variable, level=a.level))
                continue
            source = Path(a.file)
            text = None
            if source.is_file():
                text = "".join(x + "\n" for x in read_lines(source))
            out.append(Recode(a.table, a.variable, grc_text=text, source=source))
        elif c.name == "APRIORI":
            out.append(
                ApplyApriori(a.table, Path(a.path), a.sep, a.ignore_errors, a.expand_trivial)
            )
        elif c.name == "SUPPRESS":
            out.append(Protect(a.table, a.method, a.params))
        elif c.name == "WRITETABLE":
            out.append(WriteTable(a.table, a.out_type, a.options_text, Path(a.path)))
    return out


# ---------------------------------------------------------------------------- save
def _recode_files(session) -> dict[tuple[int, str], str]:
    """(table, variable) → `.grc` text of the last recode that has one."""
    out: dict[tuple[int, str], str] = {}
    for a in session.actions:
        if isinstance(a, Recode) and a.grc_text is not None:
            out[(a.table, a.variable.lower())] = a.grc_text
    return out


def _recodes_of(table: Table, table_no: int, grc: dict[tuple[int, str], str]) -> list[dict]:

    state = table.recode_state
    if not isinstance(state, RecodeState) or not state.recodes:
        return []
    names = [v.lower() for v in table.spec.explanatory]
    leaf_maps = table.source[1]
    out = []
    for var, desc in state.recodes.items():
        d = names.index(var.lower())
        orig_leaf = np.asarray(state.original_leaf_maps[d])
        cur_leaf = np.asarray(leaf_maps[d])
        node_map = np.full(len(state.original_dims[d]), -1, dtype=np.int64)
        ok = orig_leaf >= 0
        node_map[orig_leaf[ok]] = cur_leaf[ok]
        out.append(
            {
                "variable": table.spec.explanatory[d],
                "description": desc,
                "grc": grc.get((table_no, var.lower())),
                "codelist": codelist_to_dict(table.dims[d]),
                "node_map": [int(x) for x in node_map],
            }
        )
    return out


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, str | int | float | bool) or v is None:
        return v
    if isinstance(v, list | tuple) and all(isinstance(x, str | int | float | bool) for x in v):
        return list(v)
    return dataclasses.MISSING


def _result_to_dict(result: Any) -> dict | None:
    if result is None:
        return None
    figures = {}
    for k, v in (getattr(result, "figures", None) or {}).items():
        j = _jsonable(v)
        if j is not dataclasses.MISSING:
            figures[str(k)] = j
    return {
        "method": result.method,
        "cost": float(result.cost),
        "lower_bound": None if result.lower_bound is None else float(result.lower_bound),
        "gap": None if result.gap is None else float(result.gap),
        "optimal": bool(result.optimal),
        "cancelled": bool(result.cancelled),
        "timed_out": bool(result.timed_out),
        "elapsed": float(result.elapsed),
        "interval_lower": encode_array(result.interval_lower, "float64"),
        "interval_upper": encode_array(result.interval_upper, "float64"),
        "log": [str(x) for x in (result.log or [])],
        "figures": figures,
    }


def session_to_dict(
    session,
    path: str | Path,
    microdata: tuple[Path, Path] | None = None,
    ready_tables: dict[Path, tuple[Path, Path]] | None = None,
) -> dict:
    """The JSON-ready content of a session file written at `path`; `microdata` names the
    data and metadata files of a session opened from a data frame, `ready_tables` those of
    ready tables from data frames (old table path → new files), written beside it."""
    if session.kind is None:
        raise ArgusError("there is nothing to save: open data and specify tables first")
    renamed = ready_tables or {}
    if any(src.temporary and src.tab_path not in renamed for src in session.sources):
        raise ArgusError(
            "this session's table came from a data frame: save it with save_session, which "
            "writes the table beside the session file"
        )
    if session.from_frame and microdata is None:
        raise ArgusError(
            "this session's microdata came from a data frame: save it with save_session, "
            "which writes the data beside the session file"
        )
    base = Path(os.path.abspath(path)).parent
    doc: dict[str, Any] = {
        # first key, so the file's first lines say it: the file holds every cell's status
        # (primary vs secondary), protection levels and audit intervals
        "confidential": CONFIDENTIAL_NOTE,
        "format": FORMAT,
        "version": VERSION,
        "argusqt": __version__,
        "saved": datetime.now().isoformat(timespec="seconds"),
        "kind": session.kind,
        "read_mode": [int(session.read_mode[0]), bool(session.read_mode[1])],
        "specs": [spec_to_dict(s) for s in session.specs],
        "actions": [
            action_to_json(a, base) for a in session.actions if isinstance(a, TABLE_ACTIONS)
        ],
    }
    if session.kind == "microdata":
        data, meta = microdata or (session.data_path, session.meta_path)
        doc["data"] = _path_entry(data, base)
        doc["metadata"] = _path_entry(meta, base)
    else:
        doc["sources"] = [
            {
                "data": _path_entry(renamed.get(src.tab_path, (src.tab_path,))[0], base),
                "metadata": _path_entry(
                    renamed.get(src.tab_path, (src.tab_path, src.meta_path))[1], base
                ),
                "table": next((i for i, s in enumerate(session.specs, 1) if s is src.spec), None),
            }
            for src in session.sources
        ]
    grc = _recode_files(session)
    tables = []
    for no, t in enumerate(session.tables, 1):
        method = t.protection.method if t.protection is not None else None
        result = session.results.get(no)
        changed = result is not None and not np.array_equal(
            np.asarray(result.status), np.asarray(t.status)
        )
        if changed:  # statuses changed after protection: no longer the method's pattern
            method = result = None
        tables.append(
            {
                "n_cells": t.n_cells,
                "codes": [list(d.codes) for d in t.dims],
                "value_digest": _digest(t.value),
                "value": encode_array(t.value, "float64"),
                "recodes": _recodes_of(t, no, grc),
                "status": encode_array(t.status, "int8"),
                "lpl": encode_array(t.lpl, "float64"),
                "upl": encode_array(t.upl, "float64"),
                "cost": encode_array(t.cost, "float64"),
                "published": encode_array(t.published, "float64"),
                "suppressed_from": encode_array(t.suppressed_from, "int8"),
                "method": method,
                "changed_after_protection": changed,
                "result": _result_to_dict(result),
            }
        )
    doc["tables"] = tables
    doc["printed"] = [_printed_to_dict(p, base) for p in session.printed]
    doc["insight"] = _insight_json(session)
    if session.protection_seed is not None:  # confidential, like the whole file
        doc["protection_seed"] = int(session.protection_seed)
    return doc


def _insight_json(session) -> dict:
    """The windows' recode history and methods compared, when JSON can hold them."""
    insight = getattr(session, "insight", None) or {}
    try:
        return json.loads(json.dumps(insight, allow_nan=False))
    except (TypeError, ValueError) as exc:
        session.add_log(f"warning: the recode history and methods compared were not saved ({exc})")
        return {}


def save_session(session, path: str | Path) -> Path:
    """Write the session to `path` (JSON, atomic); returns the path written."""
    path = Path(path)
    # saving over the session file it was loaded from is File | Save; over any other input not
    inputs = [(role, p) for role, p in session.input_files() if role != "session file"]
    check_outputs([path], inputs, "saving the session")
    microdata = None
    if session.from_frame:  # no files to name: the data go beside the session file
        session_to_dict(session, path, (path, path))  # nothing written when it cannot be saved
        data, meta, *_ = session.write_microdata_files(path)
        microdata = (data, meta)
    tables = None
    if any(src.temporary for src in session.sources):  # ready tables from data frames
        dry = {src.tab_path: (path, path) for src in session.sources}
        session_to_dict(session, path, None, dry)  # nothing written when it cannot be saved
        tables = session.write_temporary_tables(path)
    doc = session_to_dict(session, path, microdata, tables)
    text = json.dumps(doc, indent=1, ensure_ascii=False)
    atomic_write_text(path, text + "\n")
    session.add_log(f"Session saved to {path} (CONFIDENTIAL, not for publication: cell statuses)")
    return path


# ---------------------------------------------------------------------------- load
def _digits(value: Any) -> bool:
    return isinstance(value, str) and value.strip().isdigit()


def read_session_file(path: str | Path) -> dict:
    """The parsed JSON of a session file, format and version checked."""
    path = Path(path)
    if not path.exists():
        raise SessionFileError("the session file does not exist", file=path)
    try:  # a folder, a device, binary or UTF-16 content: said at once, never read whole
        text = read_text_bytes(path, "session file").decode("utf-8")
    except InputError as exc:
        raise SessionFileError(exc.message, file=path, line=exc.line) from None
    except UnicodeDecodeError as exc:
        raise SessionFileError(f"cannot read the session file ({exc})", file=path) from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SessionFileError(
            f"not a valid session file: expected JSON ({exc.msg})", file=path, line=exc.lineno
        ) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise SessionFileError(
            f'not an argusqt session file: expected "format": "{FORMAT}"', file=path
        )
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise SessionFileError(
            f'"version" must be a whole number such as {VERSION}, got '
            + (f"the text {version!r}" if isinstance(version, str) else f"{version!r}")
            + (f" (write {version} without quotes)" if _digits(version) else ""),
            file=path,
        )
    if version not in READABLE:
        newer = isinstance(version, int) and version > VERSION
        raise SessionFileError(
            f"session file format version {version!r}; this argusqt reads versions "
            f"{', '.join(map(str, READABLE))}"
            + ("; it was written by a newer argusqt" if newer else ""),
            file=path,
        )
    if doc.get("kind") not in ("microdata", "tabular"):
        raise SessionFileError(
            f'expected "kind": "microdata" or "tabular", got {doc.get("kind")!r}', file=path
        )
    return doc


def load_session(
    path: str | Path,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    session: Any = None,
) -> Any:
    """A Session rebuilt from a session file: data reopened, tables recomputed and recoded,
    per-cell state restored, every protected pattern audited again and given the publication
    gate's verdict (D-51).

    Raises SessionFileError (an InputError) for unreadable files, missing data or data that
    no longer give the saved tables; AuditError when a saved protected pattern fails the
    audit; Cancelled when cancelled.
    """
    path = Path(path)
    doc = read_session_file(path)
    s = session if session is not None else Session()
    s.other_inputs = [("session file", path)]  # never written over while open
    where = str(path)
    log: list[str] = []
    try:
        specs = [spec_from_dict(d) for d in doc.get("specs", [])]
    except (KeyError, TypeError, ValueError) as exc:
        raise SessionFileError(f"a table specification is malformed ({exc})", file=path) from None

    progress(ProgressEvent(f"Opening the data of {path.name}", fraction=0.0))
    if doc["kind"] == "microdata":
        data = _find(doc.get("data"), path, "data file", log)
        meta = _find(doc.get("metadata"), path, "metadata file", log)
        s.open_microdata(data, meta)
        for spec in specs:
            s.specify_table(spec)
    else:
        for src in doc.get("sources", []):
            data = _find(src.get("data"), path, "table file", log)
            meta = _find(src.get("metadata"), path, "metadata file", log)
            s.open_table_data(data, meta)
            no = src.get("table")
            if no is not None:
                s.specify_table(specs[int(no) - 1])
    s._log_lines(log)
    seed = doc.get("protection_seed")
    if isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0:
        s.protection_seed = seed
    insight = doc.get("insight", {})
    if isinstance(insight, dict):
        s.insight = insight
    else:  # display only: a damaged entry never stops the session from loading
        s.add_log("warning: the session file's recode history and methods compared are unreadable")
    saved_tables = doc.get("tables", [])
    if not saved_tables:
        s.add_log(f"Session {path.name} loaded (no tables computed)")
        return s
    mode, keep = doc.get("read_mode", [0, False])
    tables = s.compute_tables(progress, cancel, totals_mode=int(mode), keep_status=bool(keep))
    if len(tables) < len(specs) or (cancel is not None and cancel.cancelled):
        raise Cancelled("loading the session was cancelled")
    if len(tables) != len(saved_tables):
        raise SessionFileError(
            f"the session has {len(saved_tables)} tables but {len(tables)} were computed",
            file=path,
        )
    for no, saved in enumerate(saved_tables, 1):
        _redo_recodes(s, no, saved, where)
        _check_cells(s.table(no), no, saved, where)
    results: dict[int, Any] = {}
    for no, saved in enumerate(saved_tables, 1):
        progress(ProgressEvent(f"Restoring table {no}", fraction=no / (len(saved_tables) + 1)))
        results[no] = _restore(s.table(no), saved, where, f"table {no}")
    for no in range(1, len(saved_tables) + 1):
        if cancel is not None and cancel.cancelled:
            raise Cancelled("loading the session was cancelled")
        _audit_table(s, no, results.get(no), where, progress, cancel)
    if doc.get("version") == 1:
        history = _v1_actions([str(x) for x in doc.get("history", [])], path, s)
    else:
        history = [_action_from_json(a, path, k) for k, a in enumerate(doc.get("actions", []), 1)]
    s.actions += history
    if any(isinstance(a, Protect) and a.table == 0 for a in history):
        s.linked = list(range(1, len(s.tables) + 1))  # protected together: audited together
    _gate_verdicts(s, progress, cancel)
    if not _restore_printed(s, doc, path, where):
        _remember_written(s, history)
    s.add_log(f"Session {path.name} loaded: {len(saved_tables)} table(s) restored")
    return s


def _printed_to_dict(p: Any, base: Path) -> dict:
    """A face published (export.shared.Printed) as it was: its statuses and printed figures
    over its table's codes (docs/design.md, D-81)."""
    t = p.table
    info = t.protection
    return {
        "table": p.number,
        "where": p.where,
        "path": _path_entry(Path(p.path), base) if p.path is not None else None,
        "codes": [list(d.codes) for d in t.dims],
        # its codings as written: the face is rebuilt from them after a later recode
        "recodes": _recodes_of(t, p.number, {}),
        "status": encode_array(t.status, "int8"),
        # its protection levels as written (manual ones, rules changed since)
        "lpl": encode_array(t.lpl, "float64"),
        "upl": encode_array(t.upl, "float64"),
        "published": encode_array(t.published, "float64"),
        "interval_lower": encode_array(t.interval_lower, "float64"),
        "interval_upper": encode_array(t.interval_upper, "float64"),
        "protection": None
        if info is None
        else {
            "method": info.method,
            "face": info.face,
            "params": info.params,
            "public": [[k, float(v)] for k, v in info.public],
        },
    }


def _restore_printed(s, doc: dict, path: Path, where: str) -> bool:
    """The faces published before the session was saved, over their tables as restored, or
    as they were coded when written (a recode since: rebuilt from the data with the codings
    the face records); False when the file has none recorded (older files:
    _remember_written). A face that cannot be rebuilt is said in the log."""
    from argusqt.export.shared import Printed, snapshot  # lazy: a session that published

    entries = doc.get("printed")
    if not isinstance(entries, list):
        return False
    for k, e in enumerate(entries, 1):
        try:
            no = int(e["table"])
            table = s.table(no)
            recorded = e.get("recodes")
            if [list(d.codes) for d in table.dims] != e["codes"] or (
                isinstance(recorded, list)
                and _coding(recorded) != _coding(_recodes_of(table, no, {}))
            ):  # recoded since (the same codes may group other data codes)
                table = _as_coded(s, table, recorded, where, k)
            if table is None or [list(d.codes) for d in table.dims] != e["codes"]:
                s.add_log(
                    f"warning: {e.get('where')} was written from table {no} before a recode "
                    "and cannot be rebuilt; it is not known to the audit of tables published "
                    "beside it"
                )
                continue
            status = decode_array(e["status"], where, f"published face {k}")
            if status is None or status.size != table.n_cells:
                raise ValueError(f"its statuses do not fit table {no}")
            face = snapshot(table)
            face.status = status
            for name in ("lpl", "upl"):  # older files: the levels of the table as restored
                levels = decode_array(e.get(name), where, f"published face {k}")
                if levels is not None:
                    if levels.size != table.n_cells:
                        raise ValueError(f"its {name} do not fit table {no}")
                    setattr(face, name, levels)
            face.published = decode_array(e.get("published"), where, f"published face {k}")
            face.interval_lower = decode_array(e.get("interval_lower"), where, "interval")
            face.interval_upper = decode_array(e.get("interval_upper"), where, "interval")
            info = e.get("protection")
            face.protection = (
                None
                if info is None
                else ProtectionInfo(
                    str(info["method"]),
                    info["face"],
                    str(info.get("params", "")),
                    tuple((str(a), float(b)) for a, b in info.get("public", [])),
                )
            )
            file = _entry_path(e.get("path"), path)
        except (KeyError, TypeError, ValueError, ArgusError) as exc:
            raise SessionFileError(f"published face {k} is malformed ({exc})", file=where) from None
        written = None if file is None else str(file.resolve())
        s.printed.append(Printed(no, face, str(e.get("where", "")), written))
    return True


def _coding(recodes: list[Any]) -> list[tuple[str, str, list[int]]]:
    """A table's recodes (as `_recodes_of` writes them) in a form that compares: which data
    codes each printed code of each variable sums."""
    return sorted(
        (
            str(r["variable"]).lower(),
            json.dumps(r["codelist"], sort_keys=True),
            [int(x) for x in r["node_map"]],
        )
        for r in recodes
    )


def _as_coded(s, table: Table, recodes: Any, where: str, k: int) -> Table | None:
    """The table coded as a published face recorded (`recodes`, as `_recodes_of` writes
    them): its recodes applied, the variables it had uncoded put back; None for an older
    file that did not record them."""
    if not isinstance(recodes, list):
        return None
    try:
        wanted = {str(r["variable"]).lower(): r for r in recodes}
        for var in table.spec.explanatory:
            rec = wanted.get(var.lower())
            if rec is not None:
                table = _recoded(s, table, rec)
            elif isinstance(table.recode_state, RecodeState) and any(
                v.lower() == var.lower() for v in table.recode_state.recodes
            ):
                table = undo_recode(table, var, s._distances(table))
    except (KeyError, TypeError, ValueError, ArgusError) as exc:
        raise SessionFileError(
            f"published face {k}: its codings cannot be redone on the data ({exc})", file=where
        ) from None
    return table


def _remember_written(s, history: list[Any]) -> None:
    """Files an older session file had written for publication (no faces recorded): their
    tables' faces as restored join the joint audit of what is published next (docs/design.md,
    D-81); the face written unless the table was changed after writing."""
    for a in history:
        if not isinstance(a, WriteTable) or not 1 <= a.table <= len(s.tables):
            continue
        if is_confidential(a.out_type, a.options, a.path):
            continue
        if protection_state(s.table(a.table)) in ("cleared", "nothing to protect"):
            remember_printed(s, a.table, a.path)


def _recoded(s, table: Table, rec: dict) -> Table:
    """The table with one recode a session file records (as `_recodes_of` writes it) redone."""
    return recode_table(
        table, str(rec["variable"]), codelist_from_dict(rec["codelist"]),
        np.asarray(rec["node_map"], dtype=np.int64), str(rec.get("description") or "recoded"),
        s._distances(table),
    )  # fmt: skip


def _redo_recodes(s, no: int, saved: dict, where: str) -> None:

    for rec in saved.get("recodes", []) or []:
        try:
            var = str(rec["variable"])
            new = _recoded(s, s.table(no), rec)
        except (KeyError, TypeError, ValueError) as exc:
            raise SessionFileError(
                f"table {no}: a recode is malformed ({exc})", file=where
            ) from None
        except ArgusError as exc:
            raise SessionFileError(
                f"table {no}: the recode of {var} cannot be redone on the data ({exc.message})",
                file=where,
            ) from None
        if new.spec.cost.kind == "distance":
            compute_cost(new, s._distances(new))
        s.tables[no - 1] = new
        s.add_log(f"Table {no}: variable {var} recoded ({rec.get('description') or 'recoded'})")


def _check_cells(table: Table, no: int, saved: dict, where: str) -> None:
    n = saved.get("n_cells")
    if n != table.n_cells:
        raise SessionFileError(
            f"table {no}: the data now give {table.n_cells} cells, the session has {n}; "
            "the data or metadata changed since the session was saved",
            file=where,
        )
    codes = saved.get("codes")
    if codes is not None:
        for d, saved_codes in zip(table.dims, codes, strict=False):
            if list(d.codes) != list(saved_codes):
                raise SessionFileError(
                    f"table {no}: the codes of {d.name} differ from the saved ones; "
                    "the data or metadata changed since the session was saved",
                    file=where,
                )
    digest = saved.get("value_digest")
    if (
        digest is not None
        and digest != _digest(table.value)
        and not _same_sums(table, saved, where)
    ):
        raise SessionFileError(
            f"table {no}: the cell values differ from the saved ones; "
            "the data changed since the session was saved",
            file=where,
        )


#: cell values equal "up to the order of summation": the same records summed in another order
#: (chunks, category order) differ in the last bits; far below any real change of the data
VALUE_RTOL = 1e-9


def _same_sums(table: Table, saved: dict, where: str) -> bool:
    """The cell values equal the saved ones up to rounding (bit-for-bit is the digest)."""
    old = decode_array(saved.get("value"), where, "cell values")
    now = np.asarray(table.value, dtype=float)
    if old is None or old.shape != now.shape:
        return False
    scale = float(np.abs(old).max(initial=0.0))
    return bool(np.allclose(now, old, rtol=VALUE_RTOL, atol=VALUE_RTOL * max(scale, 1.0)))


def _restore(table: Table, saved: dict, where: str, what: str) -> Any:

    n = table.n_cells
    arrays: dict[str, Any] = {}
    for key, required in (
        ("status", True), ("lpl", True), ("upl", True), ("cost", True), ("published", False),
    ):  # fmt: skip
        arr = decode_array(saved.get(key), where, f"{what} {key}")
        if arr is None and required:
            raise SessionFileError(f"{what}: expected the cell {key} array", file=where)
        if arr is not None and arr.size != n:
            raise SessionFileError(
                f"{what}: {key} has {arr.size} values, the table has {n} cells", file=where
            )
        arrays[key] = arr
    status = arrays["status"].astype(np.int8)
    if ((status < Status.SAFE) | (status > Status.EMPTY)).any():
        raise SessionFileError(f"{what}: expected cell statuses 1–14", file=where)
    _check_primaries(table, status, where, what)
    table.status = status
    table.lpl = arrays["lpl"].astype(float)
    table.upl = arrays["upl"].astype(float)
    table.cost = arrays["cost"].astype(float)
    table.published = arrays["published"]
    table.suppressed_from = _suppressed_from(saved, n, where, what)
    method = saved.get("method")
    table.protection = None
    if method:
        # lazy: the method registry and parameters (a run that only tabulates needs none)
        from argusqt.protection.core import registry

        try:
            desc = registry.get(str(method))
        except ArgusError as exc:
            raise SessionFileError(f"{what}: {exc.message}", file=where) from None
        figures = (saved.get("result") or {}).get("figures", {}) or {}
        public = public_figures(desc.face, figures)
        table.protection = ProtectionInfo(desc.name, desc.face, public=public)
    table.audit = None
    r = saved.get("result")
    if not r:
        return None
    result = ProtectionResult(
        method=str(r.get("method") or method or ""),
        status=table.status.copy(),
        cost=float(r.get("cost", 0.0)),
        lower_bound=r.get("lower_bound"),
        gap=r.get("gap"),
        optimal=bool(r.get("optimal", False)),
        cancelled=bool(r.get("cancelled", False)),
        timed_out=bool(r.get("timed_out", False)),
        elapsed=float(r.get("elapsed", 0.0)),
        published=None if table.published is None else table.published.copy(),
        interval_lower=decode_array(r.get("interval_lower"), where, f"{what} interval_lower"),
        interval_upper=decode_array(r.get("interval_upper"), where, f"{what} interval_upper"),
        log=[str(x) for x in r.get("log", [])],
        figures=dict(r.get("figures", {})),
    )
    lo, hi = result.interval_lower, result.interval_upper
    if table.protection is not None and table.protection.face == "interval":
        if lo is not None and hi is not None and lo.size == n and hi.size == n:
            table.interval_lower, table.interval_upper = lo.copy(), hi.copy()  # IP's face
    return result


def _suppressed_from(saved: dict, n: int, where: str, what: str) -> np.ndarray | None:
    """Which secondaries the last method added and each one's status before (None: an older
    file; the next Protect then puts back every secondary of a method's pattern)."""
    arr = decode_array(saved.get("suppressed_from"), where, f"{what} suppressed_from")
    if arr is None:
        return None
    allowed = (0, Status.SAFE, Status.SAFE_MANUAL, Status.EMPTY_NONSTRUCTURAL)
    if arr.size != n or not np.isin(arr, allowed).all():
        raise SessionFileError(
            f"{what}: expected suppressed_from with {n} values 0, 1, 2 or 13", file=where
        )
    return arr.astype(np.int8)


def _check_primaries(table: Table, saved: np.ndarray, where: str, what: str) -> None:
    """A cell the safety rules make unsafe (3–6) can only have been made safe-manual (2), then
    protected (10) or a manual secondary (12) by the allowed changes
    (argusqt/docs/rules.md §7.2); saved as 1, 11, 13 or 14 it would be published unprotected: the
    file does not fit the data."""
    rule = np.asarray(table.status)
    bad = np.flatnonzero(
        (rule >= Status.UNSAFE_RULE)
        & (rule <= Status.UNSAFE_ZERO)
        & np.isin(saved, (Status.SAFE, Status.SECONDARY, Status.EMPTY_NONSTRUCTURAL, Status.EMPTY))
    )
    if bad.size:
        c = int(bad[0])
        codes = ", ".join(x.strip() or x for x in table.cell_codes(c))
        raise SessionFileError(
            f"{what}: cell ({codes}) is unsafe by the safety rules (status {int(rule[c])}) but "
            f"the session has status {int(saved[c])}"
            + (f" (and {bad.size - 1} more cells)" if bad.size > 1 else "")
            + "; the session file was changed or does not belong to these data",
            file=where,
        )


def _audit_table(s, no: int, result: Any, where: str, progress, cancel) -> None:
    """Audit a restored table with secondaries; a failing protected pattern is an AuditError."""
    # lazy: scipy, HiGHS and the protection methods (docs/design.md, D-39)
    from argusqt.protection.audit.outsider import audit
    from argusqt.protection.core.problem import CSPProblem
    from argusqt.protection.run import EXACT_AUDIT_LIMIT

    table = s.table(no)
    face = table.protection.face if table.protection is not None else None
    method = table.protection.method if table.protection is not None else None
    protected = face == "suppress"
    if result is not None:
        s.results[no] = result
    if (face in ("round", "cta", "ckm") and table.published is not None) or (
        face == "interval" and table.interval_lower is not None
    ):
        mark_protected(table)  # saved unchanged since its method ran (else method is null)
    if not (protected or is_secondary(table.status).any()):
        return
    progress(ProgressEvent(f"Auditing table {no}"))
    problem = CSPProblem.from_table(table)
    sup = is_suppressed(table.status)
    verdict = audit(
        problem, sup, intervals=int(sup.sum()) <= EXACT_AUDIT_LIMIT, progress=progress,
        cancel=cancel,
    )  # fmt: skip
    if not verdict.ok:
        s.add_log(f"Table {no}: {verdict.summary()}")
        if protected:
            raise AuditError(
                f"table {no} was saved as protected by {method}, but its pattern fails the "
                f"audit now: {verdict.summary()} The session was not loaded.",
                file=where,
            )
        # secondaries from manual changes or an a-priori file, never claimed protected
        s.add_log(f"Table {no}: its secondary cells are not a verified protection (no method)")
        return
    if protected:
        table.audit = verdict
        if result is not None:
            result.audit = verdict
        mark_protected(table)  # the publication gate still audits it before any export
    s.add_log(f"Table {no}: {verdict.summary()}")


def _gate_verdicts(s, progress, cancel) -> None:
    """Every table restored as protected gets the publication gate's verdict (docs/design.md,
    D-51): never "protected" after the outsider audit alone, as a table saved NOT PUBLISHABLE
    would otherwise come back."""
    numbers = [
        n for n in range(1, len(s.tables) + 1) if protection_state(s.table(n)) == "protected"
    ]
    if not numbers:
        return
    verdicts: dict[int, Any] = {}
    refused: dict[int, str] = {}
    linked = [n for n in s.linked if n in numbers]
    if linked:
        tables = [s.table(n) for n in s.linked]
        progress(ProgressEvent(f"Publication audit of the linked tables {s.linked}"))
        try:
            joint = linked_table_verdicts(tables, s.linked, progress=progress, cancel=cancel)
        except PublicationError as exc:  # the set cannot be judged together: the gate refuses
            refused.update({n: exc.message for n in linked})
        else:
            verdicts.update({n: v for n, v in zip(s.linked, joint, strict=True) if n in numbers})
            if all(v.ok for v in joint):
                s.linked_cleared = linked_fingerprint(tables)
    for no in numbers:
        if no in verdicts or no in refused:
            continue
        progress(ProgressEvent(f"Publication audit of table {no}"))
        try:
            verdicts[no] = table_verdict(s.table(no), progress=progress, cancel=cancel)
        except PublicationError as exc:  # e.g. a rounding base not known: not judged
            refused[no] = exc.message
    for no in numbers:
        table = s.table(no)
        result = s.results.get(no)
        if no in refused:
            mark_protected(table)
            table.refused_print = fingerprint(table)
            s.add_log(f"Table {no}: NOT PUBLISHABLE: {refused[no]}")
            continue
        v = verdicts[no]
        mark_protected(table, v)
        if result is not None:
            result.verdict = v
        if v.ok:
            s.add_log(f"Table {no}: publication audit passed")
        else:
            s.add_log(f"Table {no}: NOT PUBLISHABLE: {v.summary()}")


__all__ = [
    "FORMAT",
    "SUFFIX",
    "VERSION",
    "SessionFileError",
    "load_session",
    "read_session_file",
    "save_session",
    "session_to_dict",
]
