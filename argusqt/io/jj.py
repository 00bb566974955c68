"""JJ format (argusqt/docs/formats.md §9): cells with bounds and protection levels plus linear
relations.

Written for exchange with other CSP solvers (type 6 output); read back as a CSPProblem.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from argusqt.errors import InputError
from argusqt.io.atomic import atomic_write_text
from argusqt.io.confidential import jj_first_line, strip_comment
from argusqt.io.text import read_text_bytes
from argusqt.model.codelist import CodeList
from argusqt.model.status import JJ_LETTER, Status
from argusqt.model.table import Table, build_relations
from argusqt.protection.core.problem import CSPProblem

#: τ-Argus's "max scaled cost".
MAX_SCALED_COST = 20000
_LETTERS = np.array([JJ_LETTER.get(s, "s") for s in range(16)])
_STATUS_OF_LETTER = {
    "s": Status.SAFE,
    "u": Status.UNSAFE_MANUAL,
    "m": Status.SECONDARY,
    "z": Status.PROTECTED,
}


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


#: most decimals the writer adds to keep values exact when the metadata declares fewer
MAX_WRITTEN_DECIMALS = 6


def needed_decimals(values: np.ndarray, declared: int) -> int:
    """Decimals that write `values` exactly (at least `declared`, at most MAX_WRITTEN_DECIMALS).

    `<DECIMALS>` only says how a variable is printed; data with 3 decimals and no
    `<DECIMALS>` must not be rounded to integers in a JJ file, or its relations no longer
    hold and a solver reading it sees an inconsistent table.
    """
    v = np.abs(np.asarray(values, dtype=float))
    v = v[np.isfinite(v)]
    for d in range(max(declared, 0), MAX_WRITTEN_DECIMALS + 1):
        scaled = v * 10.0**d
        if np.all(np.abs(scaled - np.rint(scaled)) <= 1e-6 * np.maximum(1.0, scaled)):
            return d
    return max(declared, MAX_WRITTEN_DECIMALS)


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
    """The JJ text of a problem (τ-Argus number formatting, more decimals where values need them)."""
    d = problem.decimals
    dv = needed_decimals(problem.values, d)
    db = needed_decimals(np.r_[problem.lower, problem.upper], dv)
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
        _fmt(problem.values, dv),
        list(map(str, scaled_costs(problem.cost, unity).tolist())),
        letters.tolist(),
        _fmt(problem.lower, db),
        _fmt(problem.upper, db),
        _fmt(lpl, max(d, dv) + 3),
        _fmt(upl, max(d, dv) + 3),
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
    # true values, statuses and protection levels: confidential, said on the first line
    # (jj_text starts with the line "0", which the banner line carries)
    rest = jj_text(problem, unity).partition("\n")[2]
    banner = jj_first_line("values, statuses and protection levels of every cell")
    atomic_write_text(path, banner + rest)


def read_jj(path: str | Path, cost: np.ndarray | None = None) -> CSPProblem:
    """Read a JJ file into a CSPProblem (any numeric coefficient and rhs accepted).

    Checks: every relation must hold for the cell values up to rounding noise (half a unit of the
    file's last value decimal per term, absorbed into the right-hand side); a larger difference is
    an InputError naming the relation's line. The problem's decimals are the file's; when the
    relations are exactly those of a table (as argusqt and τ-Argus write them) the table's
    dimensions are recovered, so MOD and the neighbourhood heuristics can use them. Costs in a JJ
    file are τ-Argus's scaled integers (1..20000, argusqt/docs/formats.md §9.2), which loses the
    small costs' differences: pass the real `cost` per cell when known.
    """
    path = Path(path)
    raw = read_text_bytes(path, "JJ file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    # tokens with their line numbers, for error messages
    tokens: list[tuple[str, int]] = []
    for no, line in enumerate(text.splitlines(), start=1):
        line = strip_comment(line)  # the CONFIDENTIAL banner after the leading 0
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
    decimals = _written_decimals(table[:, 1])
    vals = vals[:, 1:]  # value, cost, lb, ub, lpl, upl, spl
    m = int(number("the number of relations", integer=True))
    rows: list[int] = []
    cols: list[int] = []
    data: list[float] = []
    rhs = np.zeros(m)
    rel_line = np.zeros(m, dtype=np.int64)
    for r in range(m):
        rhs[r] = number("the right-hand side of a relation")
        rel_line[r] = tokens[pos - 1][1]
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
    relations = sp.csr_matrix((data, (rows, cols)), shape=(m, n))
    values = vals[:, 0].copy()
    rhs = _checked_rhs(relations, values, rhs, decimals, path, rel_line)
    unsafe = status == Status.UNSAFE_MANUAL
    if cost is not None:
        cost = np.asarray(cost, dtype=float)
        if cost.shape != (n,):
            raise InputError(f"{cost.size} real costs given for {n} cells", file=path)
    return CSPProblem(
        values=values,
        lower=vals[:, 2].copy(),
        upper=vals[:, 3].copy(),
        cost=vals[:, 1].copy() if cost is None else cost.copy(),
        status=status,
        lpl=np.where(unsafe, vals[:, 4], 0.0),
        upl=np.where(unsafe, vals[:, 5], 0.0),
        relations=relations,
        rhs=rhs,
        spl=vals[:, 6].copy(),
        decimals=decimals,
        dims=table_dims(relations, rhs),
    )


def _written_decimals(tokens: np.ndarray) -> int:
    """Most digits after the decimal point among the value fields (0 for integers)."""
    text = np.char.lower(tokens.astype(str))
    if np.char.find(text, "e").max(initial=-1) >= 0:  # exponent notation: no fixed decimals
        return MAX_WRITTEN_DECIMALS
    dot = np.char.find(text, ".")
    frac = np.where(dot >= 0, np.char.str_len(text) - dot - 1, 0)
    return int(frac.max(initial=0))


def _checked_rhs(
    relations: sp.csr_matrix,
    values: np.ndarray,
    rhs: np.ndarray,
    decimals: int,
    path: Path,
    lines: np.ndarray,
) -> np.ndarray:
    """rhs made to hold exactly for the values when they miss only by rounding noise.

    A published table's values are rounded to its decimals, so a relation of k terms may
    miss by up to k half-units of the last decimal; a solver needs the relations to hold
    exactly for the values it protects (an attacker LP is otherwise infeasible). Larger
    misses mean a wrong file.
    """
    if relations.shape[0] == 0:
        return rhs
    residual = relations @ values - rhs
    terms = np.diff(relations.indptr)
    scale = np.asarray(abs(relations).max(axis=1).todense()).ravel()
    allowed = terms * scale * 0.5 * 10.0 ** (-decimals) * (1 + 1e-6) + 1e-9
    bad = np.abs(residual) > allowed
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"relation {r + 1} does not hold for the cell values: Σ coefficient × value = "
            f"{rhs[r] + residual[r]:.{decimals + 3}g}, right-hand side {rhs[r]:g} "
            f"({int(bad.sum())} of {bad.size} relations miss by more than rounding to "
            f"{decimals} decimals explains)",
            file=path,
            line=int(lines[r]),
        )
    # float noise of exact data stays out of the right-hand sides (they stay 0 for a table)
    noise = np.abs(residual) <= 1e-9 * np.maximum(1.0, abs(relations) @ np.abs(values))
    return rhs + np.where(noise, 0.0, residual)


def table_dims(relations: sp.csr_matrix, rhs: np.ndarray) -> list[CodeList] | None:
    """Codelists of the table whose relations are exactly these (row-major cells), or None.

    The relations of cell 0 (the grand total) as parent give one dimension each; the
    smallest child index of each is that dimension's stride. The codelists are then read
    from the relations on each dimension's axis and accepted only if they regenerate the
    whole relation set.
    """
    n = relations.shape[1]
    rel = relations.tocsr()
    if rel.shape[0] == 0 or np.any(rhs != 0) or not np.all(np.isin(rel.data, (-1.0, 1.0))):
        return None
    neg = rel.data < 0
    if not np.array_equal(np.add.reduceat(neg.astype(int), rel.indptr[:-1]), np.ones(rel.shape[0])):
        return None  # each relation: one total (−1) and its parts (+1)
    row_of = np.repeat(np.arange(rel.shape[0]), np.diff(rel.indptr))
    parent = np.full(rel.shape[0], -1, dtype=np.int64)
    parent[row_of[neg]] = rel.indices[neg]
    top = np.flatnonzero(parent == 0)
    strides = []
    for r in top:
        kids = rel.indices[rel.indptr[r] : rel.indptr[r + 1]]
        strides.append(int(kids[kids != 0].min()))
    strides = sorted(set(strides), reverse=True)
    if len(strides) != top.size or not strides or strides[-1] != 1:
        return None
    bounds = [n, *strides]
    if any(bounds[k] % bounds[k + 1] for k in range(len(strides))):
        return None
    dims = []
    for k, stride in enumerate(strides):
        size = bounds[k] // stride
        par = np.full(size, -2, dtype=np.int64)
        par[0] = -1
        on_axis = np.zeros(n, dtype=bool)
        on_axis[np.arange(size) * stride] = True
        for r in np.flatnonzero(on_axis[parent]):
            cells = rel.indices[rel.indptr[r] : rel.indptr[r + 1]]
            if not on_axis[cells].all():
                continue
            kids = cells[cells != parent[r]] // stride
            if np.any(par[kids] != -2):
                return None
            par[kids] = parent[r] // stride
        if np.any(par == -2) or np.any(par[1:] >= np.arange(1, size)):
            return None  # a node without parent, or not in pre-order
        codes = ["Total", *[str(i) for i in range(1, size)]]
        hier = bool(np.any(par[1:] > 0))
        dims.append(CodeList(f"dim{k + 1}", codes, par, np.zeros(size, dtype=bool), "Total", hier))
    if not _same_relations(build_relations(dims), rel):
        return None
    return dims


def _same_relations(a: sp.csr_matrix, b: sp.csr_matrix) -> bool:
    """Same set of relations (rows compared as sets of (cell, coefficient))."""
    if a.shape != b.shape or a.nnz != b.nnz:
        return False

    def keys(m: sp.csr_matrix) -> list[bytes]:
        m = m.tocsr().copy()
        m.sort_indices()
        return sorted(
            m.indices[m.indptr[r] : m.indptr[r + 1]].tobytes()
            + m.data[m.indptr[r] : m.indptr[r + 1]].tobytes()
            for r in range(m.shape[0])
        )

    return keys(a) == keys(b)


def _first_bad_number(fields: np.ndarray, lines: np.ndarray, path: Path) -> np.ndarray:
    """Raise the InputError for the first field of the cell block that is not a number."""
    for f, no in zip(fields.ravel().tolist(), lines.ravel().tolist(), strict=True):
        try:
            float(f)
        except ValueError:
            raise InputError(f"expected a number, got {f!r}", file=path, line=no) from None
    return fields.astype(float)
