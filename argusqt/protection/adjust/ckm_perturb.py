"""The perturbation of the cell key method: counts and magnitudes as τ-Argus 4.2 computes
them (argusqt/docs/methods.md §16.2–§16.3), vectorized over the cells.

Pure arithmetic on arrays: the same cell keys, values and ptable give the same perturbed
values on any machine (no clock, no random draw).
"""

from __future__ import annotations

import numpy as np

from argusqt.dataclass import dataclass
from argusqt.model.cellkey import CellKeys, MagnitudeCKM, shift_first_digit_units
from argusqt.model.ptable import PRow, PTable
from argusqt.model.status import Status

#: statuses of primary cells (μc applies to them): τ-Argus's CS_UNSAFE_RULE … CS_UNSAFE_MANUAL
_UNSAFE = (int(Status.UNSAFE_RULE), int(Status.UNSAFE_MANUAL))


def row_noise(row: PRow, keys: np.ndarray) -> np.ndarray:
    """v of the first transition of `row` whose p_int_ub exceeds the key (0 past the last)."""
    idx = np.searchsorted(row.ub, keys, side="right")
    v = np.zeros(keys.shape[0])
    ok = idx < row.ub.shape[0]
    v[ok] = row.v[idx[ok]]
    return v


# ------------------------------------------------------------------------------ counts
def perturb_counts(
    count: np.ndarray,
    weight: np.ndarray | None,
    key: np.ndarray,
    status: np.ndarray,
    ptable: PTable,
) -> tuple[np.ndarray, np.ndarray]:
    """(published value, noise v) of every cell of a frequency table (argusqt/docs/methods.md §16.2).

    Row min(n, maxNi) of the ptable, the transition where the cell key falls; empty cells
    0, protected cells unchanged; weighted: (n + v)·W/n."""
    rows = ptable.table("all")
    n = np.rint(np.asarray(count, dtype=float)).astype(np.int64)
    r = np.minimum(n, len(rows) - 1)
    noise = np.zeros(n.shape[0])
    status = np.asarray(status)
    empty = status == Status.EMPTY
    keep = status == Status.PROTECTED
    todo = ~empty & ~keep
    for i in np.unique(r[todo]):
        at = np.flatnonzero(todo & (r == i))
        noise[at] = row_noise(rows[int(i)], np.asarray(key)[at])
    published = (n + noise).astype(float)
    if weight is not None:
        w = np.asarray(weight, dtype=float)
        scale = np.divide(w, n, out=np.ones_like(w), where=n > 0)
        published = published * scale
        noise = noise * scale
    published[empty] = 0.0
    noise[empty] = 0.0
    return published, noise


# ------------------------------------------------------------------------------ magnitudes
def flex(z: np.ndarray, z_s: float, ckm: MagnitudeCKM) -> np.ndarray:
    """Relative noise per unit of a reference value z ≥ 0 (argusqt/docs/methods.md §16.3)."""
    s0, s1, xs, q = ckm.sigma0, ckm.sigma1, ckm.xstar, ckm.q
    out = np.where(z > z_s, s1, 0.0)
    if ckm.scaling == "F":
        big = z >= xs
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            f = s0 * (1.0 + ((s1 * z - s0 * xs) / (s0 * xs)) * ((2 * xs) / (z + xs)) ** q)
        out = np.where(big, f, out)
    return out


def lookup(rows: list[PRow], z: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Noise at a (fractional) row z, interpolated between the rows around it; from the last
    row up, that row's noise (τ-Argus's LookUpVinptable)."""
    out = np.zeros(z.shape[0])
    if not rows or z.shape[0] == 0:
        return out
    ii = np.array([r.i for r in rows], dtype=float)
    jmax = ii[-1]
    last = z >= jmax
    if last.any():
        out[last] = row_noise(rows[-1], keys[last])
    inside = np.flatnonzero((z >= ii[0]) & (z < jmax))
    if inside.size:
        zz = z[inside]
        r1 = np.searchsorted(ii, zz, side="right")
        r0 = r1 - 1
        a0, a1 = ii[r0], ii[r1]
        lam = (zz - a0) / (a1 - a0)
        d0 = np.zeros(inside.size)
        d1 = np.zeros(inside.size)
        for r in np.unique(r0):
            m = r0 == r
            d0[m] = row_noise(rows[int(r)], keys[inside[m]])
        far = np.abs(a0 - zz) > 1e-8
        for r in np.unique(r1[far]):
            m = far & (r1 == r)
            d1[m] = row_noise(rows[int(r)], keys[inside[m]])
        out[inside] = (1.0 - lam) * d0 + lam * d1
    return out


@dataclass(frozen=True)
class MagnitudeSetup:
    """The tables and thresholds of a magnitude run (computed once per table)."""

    large: PTable
    small: PTable | None
    z_s: float  # below it a reference value is "small"
    mu_c: float = 0.0


def magnitude_setup(
    ckm: MagnitudeCKM, large: PTable, small: PTable | None, mu_c: float = 0.0
) -> MagnitudeSetup:
    """z_s = m1/(σ1·√E) from the small-value ptable's last row with separation, else 0."""
    if not ckm.separation:
        return MagnitudeSetup(large, None, 0.0, mu_c)
    if small is None or not small.table("all"):
        raise ValueError("<SEPARATION> Y needs a small-value ptable with rows of type all")
    last = small.table("all")[-1]
    m1 = float(np.sqrt(np.sum((last.j - last.i) ** 2 * last.p)))
    k = ckm.top_k if ckm.type == "T" else 1
    e = float(sum(x * x for x in ckm.epsilon[:k])) if k > 1 else 1.0
    return MagnitudeSetup(large, small, m1 / (ckm.sigma1 * np.sqrt(e)), mu_c)


def reference(ckm: MagnitudeCKM, j: int, cells: CellKeys, value: np.ndarray, weighted: bool):
    """x_j of every cell for the `<CKM>` type (argusqt/docs/methods.md §16.3)."""
    if ckm.type == "T":
        x = cells.top[:, j - 1]
        return x * cells.top_weight[:, j - 1] if weighted else x
    if ckm.type == "M":
        den = cells.weight if weighted else cells.count
        return np.divide(value, den, out=np.zeros_like(value), where=den != 0)
    if ckm.type == "D":
        return cells.top[:, 0] - cells.xmin
    return np.asarray(value, dtype=float)  # V


def _large_rows(setup: MagnitudeSetup, ckm: MagnitudeCKM, count: np.ndarray) -> np.ndarray:
    """Per cell, 0 for `all` rows, or 1 (even) / 2 (odd) with `<PARITY> Y`."""
    if not ckm.parity:
        if not setup.large.table("all"):
            raise ValueError("the magnitude ptable has no rows of type all (<PARITY> N)")
        return np.zeros(count.shape[0], dtype=np.int8)
    if not setup.large.table("even") or not setup.large.table("odd"):
        raise ValueError("<PARITY> Y needs rows of type even and odd in the magnitude ptable")
    return np.where(np.rint(count).astype(np.int64) % 2 == 0, 1, 2).astype(np.int8)


def _lookup_by_type(
    setup: MagnitudeSetup, kinds: np.ndarray, z: np.ndarray, keys: np.ndarray
) -> np.ndarray:
    """Lookup in the large ptable's rows per cell kind (0 all, 1 even, 2 odd, 3 small)."""
    out = np.zeros(z.shape[0])
    for kind, rows in (
        (0, setup.large.table("all")),
        (1, setup.large.table("even")),
        (2, setup.large.table("odd")),
        (3, setup.small.table("all") if setup.small is not None else setup.large.table("all")),
    ):
        m = kinds == kind
        if m.any():
            out[m] = lookup(rows, z[m], keys[m])
    return out


def perturb_magnitudes(
    value: np.ndarray,
    status: np.ndarray,
    cells: CellKeys,
    ckm: MagnitudeCKM,
    setup: MagnitudeSetup,
    weighted: bool,
) -> np.ndarray:
    """The published value of every cell of a magnitude table (argusqt/docs/methods.md §16.3)."""
    x = np.array(value, dtype=float)
    status = np.asarray(status)
    todo = (status != Status.EMPTY) & (status != Status.PROTECTED)
    units = np.where(todo, cells.key_units if ckm.include_zeros else cells.key_nonzero_units, 0)
    d = cells.decimals
    scale = 10.0**d
    kinds = _large_rows(setup, ckm, cells.count)
    z_s = setup.z_s
    s1 = ckm.sigma1
    idx = np.flatnonzero(todo)
    xs = x[idx]
    units = shift_first_digit_units(units[idx], d)
    # j = 1
    x1 = reference(ckm, 1, cells, x, weighted)[idx]
    st = status[idx]
    unsafe = (st >= _UNSAFE[0]) & (st <= _UNSAFE[1])
    mu = np.where(unsafe & (np.abs(x1) >= z_s), setup.mu_c, 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        xdelta = np.where(np.abs(x1) >= z_s, x1 * flex(np.abs(x1), z_s, ckm), 1.0)
        m = np.abs(xs) < np.abs(xdelta)
        xdelta = np.where(m, xs, xdelta)
        x1 = np.where(m, xs / s1, x1)
        xdelta = np.where(m & (np.abs(x1) < z_s), 1.0, xdelta)
        small = ~(np.abs(x1) > z_s) & (setup.small is not None)
        kind1 = np.where(small, 3, kinds[idx])
        z = np.abs(xs / xdelta)
    v = _lookup_by_type(setup, kind1, np.nan_to_num(z, nan=0.0), units / scale)
    v = np.where(xdelta == 0, 0.0, v)
    sign_x = np.where(xs >= 0, 1.0, -1.0)
    sign_v = np.where(v >= 0, 1.0, -1.0)
    help1 = sign_x * np.abs(xdelta) * sign_v * (mu + np.abs(v))
    xs = np.where(
        v >= 0,
        xs + help1,
        np.where(xs < 0, xs + np.minimum(help1, -xs), xs + np.maximum(help1, -xs)),
    )
    # j = 2 … k
    k = ckm.top_k if ckm.type == "T" else 1
    count = cells.count[idx]
    for j in range(2, k + 1):
        eps = ckm.epsilon[j - 1]
        xj = reference(ckm, j, cells, x, weighted)[idx]
        active = (j <= count) & (np.abs(xj) >= z_s)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            xdelta = xj * eps * flex(np.abs(xj), z_s, ckm)
            m = active & (np.abs(xs) < np.abs(xdelta))
            xdelta = np.where(m, xs, xdelta)
            xj = np.where(m, xs / (eps * s1), xj)
            use = active & (np.abs(xj) >= z_s)
            units = np.where(use, shift_first_digit_units(units, d), units)
            z = np.abs(xs / xdelta)
        v = np.zeros(xs.shape[0])
        if use.any():
            v[use] = _lookup_by_type(
                setup, kinds[idx][use], np.nan_to_num(z[use]), units[use] / scale
            )
        v = np.where(use & (xdelta != 0), v, 0.0)
        xs = xs + np.where(xs >= 0, 1.0, -1.0) * np.abs(xdelta) * v
    out = np.array(value, dtype=float)
    out[idx] = xs
    out[status == Status.EMPTY] = 0.0
    return out
