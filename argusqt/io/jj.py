"""JJ format (formats.md §9): cells with bounds and protection levels plus linear relations.

Written for exchange with other CSP solvers (type 6 output); read back as a CSPProblem.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from argusqt.errors import InputError
from argusqt.io.atomic import atomic_write_text
from argusqt.model.codelist import CodeList
from argusqt.model.table import Table, build_relations
from argusqt.protect.problem import CSPProblem
from argusqt.rules.status import JJ_LETTER

#: τ-Argus's "max scaled cost".
MAX_SCALED_COST = 20000
_LETTERS = np.array([JJ_LETTER.get(s, "s") for s in range(16)])
_STATUS_OF_LETTER = {"s": 1, "u": 9, "m": 11, "z": 10}


def scaled_costs(cost: np.ndarray, unity: bool = False) -> np.ndarray:
    """Integer costs: 1 for unity, else round(c·20000 / max c) with minimum 1."""
    c = np.abs(np.asarray(cost, dtype=float))
    if unity or c.size == 0 or c.max() <= 0:
        return np.ones(c.shape, dtype=np.int64)
    return np.maximum(1, np.rint(c * MAX_SCALED_COST / c.max())).astype(np.int64)


def _fmt(values: np.ndarray, decimals: int) -> list[str]:
    """Numbers with `decimals` decimals (`%`-format mapped in C: fast on big tables)."""
    v = np.asarray(values, dtype=float)
    v = np.where(v == 0, 0.0, v)
    return list(map(f"%.{max(decimals, 0)}f".__mod__, v.tolist()))


def _coef(c: float) -> str:
    return str(int(c)) if float(c).is_integer() else repr(float(c))


def reduce_trivial(dims: list[CodeList]) -> tuple[list[CodeList], list[np.ndarray]]:
    """Drop every node that is the only child of its parent (`TR+`); its parent stands for both.

    Returns the reduced codelists and, per dimension, the kept node indices of the original.
    """
    out: list[CodeList] = []
    kept_all: list[np.ndarray] = []
    for dim in dims:
        n_children = np.array([len(c) for c in dim.children])
        parent = dim.parent
        drop = np.zeros(len(dim), dtype=bool)
        drop[1:] = n_children[parent[1:]] == 1
        kept = np.flatnonzero(~drop)
        new_index = -np.ones(len(dim), dtype=np.int64)
        new_index[kept] = np.arange(len(kept))
        new_parent = np.empty(len(kept), dtype=np.int64)
        for j, i in enumerate(kept):  # nodes of one dimension, not cells
            p = int(parent[i])
            while p >= 0 and drop[p]:
                p = int(parent[p])
            new_parent[j] = new_index[p] if p >= 0 else -1
        out.append(
            CodeList(
                dim.name,
                [dim.codes[i] for i in kept],
                new_parent,
                dim.is_missing[kept],
                dim.total_code,
                dim.hierarchical,
                dim.labels,
            )
        )
        kept_all.append(kept)
    return out, kept_all


def problem_for_jj(table: Table, trivial_removed: bool = False) -> tuple[CSPProblem, bool]:
    """The CSPProblem written for a table (optionally without trivial levels) and 'unity cost'."""
    problem = CSPProblem.from_table(table)
    unity = table.spec.cost.kind == "unity"
    if not trivial_removed:
        return problem, unity
    dims, kept = reduce_trivial(table.dims)
    grid = np.ix_(*kept)
    cells = np.arange(table.n_cells).reshape(table.shape)[grid].ravel()
    rel = build_relations(dims)
    sub = CSPProblem(
        values=problem.values[cells],
        lower=problem.lower[cells],
        upper=problem.upper[cells],
        cost=problem.cost[cells],
        status=problem.status[cells],
        lpl=problem.lpl[cells],
        upl=problem.upl[cells],
        relations=rel,
        rhs=np.zeros(rel.shape[0]),
        spl=np.zeros(len(cells)),
        decimals=problem.decimals,
        dims=dims,
        freq=None if problem.freq is None else problem.freq[cells],
    )
    return sub, unity


def jj_text(problem: CSPProblem, unity: bool = False) -> str:
    """The JJ text of a problem (τ-Argus number formatting)."""
    d = problem.decimals
    status = np.asarray(problem.status, dtype=np.int64)
    letters = _LETTERS[status]
    unsafe = letters == "u"
    lpl = np.where(unsafe, problem.lpl, 0.0)
    upl = np.where(unsafe, np.maximum(problem.upl, 10.0 ** (-d)), 0.0)
    spl = problem.spl if problem.spl is not None else np.zeros(problem.n_cells)
    spl_txt = [("0" if x == 0 else repr(float(x))) for x in np.unique(spl).tolist()]
    spl_of = dict(zip(np.unique(spl).tolist(), spl_txt, strict=True))
    cols = [
        list(map(str, range(problem.n_cells))),
        _fmt(problem.values, d),
        list(map(str, scaled_costs(problem.cost, unity).tolist())),
        letters.tolist(),
        _fmt(problem.lower, d),
        _fmt(problem.upper, d),
        _fmt(lpl, d + 3),
        _fmt(upl, d + 3),
        list(map(spl_of.__getitem__, np.asarray(spl, dtype=float).tolist())),
    ]
    lines = ["0", str(problem.n_cells), *map(" ".join, zip(*cols, strict=True))]
    rel = sp.csr_matrix(problem.relations)
    rel.sort_indices()
    rhs = np.asarray(problem.rhs, dtype=float)
    lines.append(str(rel.shape[0]))
    uniq, inv = np.unique(rel.data, return_inverse=True)
    coef_txt = np.array([_coef(c) for c in uniq.tolist()], dtype=object)[inv].tolist()
    terms = list(map("{} ({})".format, rel.indices.tolist(), coef_txt))
    ptr = rel.indptr.tolist()
    rhs_txt = [_coef(x) for x in rhs.tolist()]
    for r in range(rel.shape[0]):  # one line per relation
        lo, hi = ptr[r], ptr[r + 1]
        lines.append(f"{rhs_txt[r]} {hi - lo} : {' '.join(terms[lo:hi])}")
    return "".join(line + "\n" for line in lines)


def write_jj(
    problem_or_table: CSPProblem | Table, path: str | Path, trivial_removed: bool = False
) -> None:
    """Write the JJ file of a table (τ-Argus bounds, scaled costs) or of a ready CSPProblem."""
    if isinstance(problem_or_table, Table):
        problem, unity = problem_for_jj(problem_or_table, trivial_removed)
    else:
        problem = problem_or_table
        unity = bool(np.all(np.asarray(problem.cost) == 1))
        if trivial_removed and problem.dims:
            raise InputError("TR+ needs the table, not a bare problem", file=path)
    atomic_write_text(path, jj_text(problem, unity))


def read_jj(path: str | Path) -> CSPProblem:
    """Read a JJ file into a CSPProblem (any numeric coefficient and rhs accepted)."""
    path = Path(path)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    # tokens with their line numbers, for error messages
    tokens: list[tuple[str, int]] = []
    for no, line in enumerate(text.splitlines(), start=1):
        tokens.extend((tok, no) for tok in line.replace("(", " ( ").replace(")", " ) ").split())
    pos = 0

    def take(what: str) -> tuple[str, int]:
        nonlocal pos
        if pos >= len(tokens):
            last = tokens[-1][1] if tokens else 1
            raise InputError(f"expected {what}, got the end of the file", file=path, line=last)
        tok = tokens[pos]
        pos += 1
        return tok

    def number(what: str, integer: bool = False) -> float:
        tok, no = take(what)
        try:
            return int(tok) if integer else float(tok)
        except ValueError:
            raise InputError(f"expected {what}, got {tok!r}", file=path, line=no) from None

    number("the leading 0", integer=True)
    n = int(number("the number of cells", integer=True))
    block = tokens[pos : pos + 9 * n]
    if len(block) < 9 * n:
        raise InputError(
            f"expected {n} cell lines of 9 fields, the file ends early",
            file=path,
            line=tokens[-1][1] if tokens else 1,
        )
    pos += 9 * n
    table = np.array([t for t, _ in block], dtype=object).reshape(n, 9)
    lines_of = np.array([no for _, no in block]).reshape(n, 9)
    letters = np.char.lower(table[:, 3].astype(str))
    bad = ~np.isin(letters, list(_STATUS_OF_LETTER))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"expected a status s, u, m or z, got {table[i, 3]!r}",
            file=path,
            line=int(lines_of[i, 3]),
        )
    status = np.select(
        [letters == k for k in _STATUS_OF_LETTER], list(_STATUS_OF_LETTER.values())
    ).astype(np.int16)
    numeric = np.delete(table, 3, axis=1)
    try:
        vals = numeric.astype(float)
    except ValueError:
        vals = _first_bad_number(numeric, np.delete(lines_of, 3, axis=1), path)
    if not np.array_equal(vals[:, 0], np.arange(n)):
        i = int(np.flatnonzero(vals[:, 0] != np.arange(n))[0])
        raise InputError(
            f"expected cell index {i}, got {table[i, 0]!r}", file=path, line=int(lines_of[i, 0])
        )
    vals = vals[:, 1:]  # value, cost, lb, ub, lpl, upl, spl
    m = int(number("the number of relations", integer=True))
    rows: list[int] = []
    cols: list[int] = []
    data: list[float] = []
    rhs = np.zeros(m)
    for r in range(m):
        rhs[r] = number("the right-hand side of a relation")
        nt = int(number("the number of terms", integer=True))
        colon, no = take("':'")
        if colon != ":":
            raise InputError(f"expected ':', got {colon!r}", file=path, line=no)
        for _ in range(nt):
            j = int(number("a cell index", integer=True))
            if not 0 <= j < n:
                raise InputError(
                    f"cell index {j} out of range 0..{n - 1}", file=path, line=tokens[pos - 1][1]
                )
            tok, no = take("'('")
            if tok != "(":
                raise InputError(f"expected '(', got {tok!r}", file=path, line=no)
            c = number("a coefficient")
            tok, no = take("')'")
            if tok != ")":
                raise InputError(f"expected ')', got {tok!r}", file=path, line=no)
            rows.append(r)
            cols.append(j)
            data.append(c)
    unsafe = status == 9
    return CSPProblem(
        values=vals[:, 0].copy(),
        lower=vals[:, 2].copy(),
        upper=vals[:, 3].copy(),
        cost=vals[:, 1].copy(),
        status=status,
        lpl=np.where(unsafe, vals[:, 4], 0.0),
        upl=np.where(unsafe, vals[:, 5], 0.0),
        relations=sp.csr_matrix((data, (rows, cols)), shape=(m, n)),
        rhs=rhs,
        spl=vals[:, 6].copy(),
    )


def _first_bad_number(fields: np.ndarray, lines: np.ndarray, path: Path) -> np.ndarray:
    """Raise the InputError for the first field of the cell block that is not a number."""
    for f, no in zip(fields.ravel().tolist(), lines.ravel().tolist(), strict=True):
        try:
            float(f)
        except ValueError:
            raise InputError(f"expected a number, got {f!r}", file=path, line=no) from None
    return fields.astype(float)
