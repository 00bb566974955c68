"""Counts perturbed by argusqt's CKM against the ONS package `cell-key-perturbation`, on a
table where the two definitions coincide (argusqt/docs/methods.md §16.8): integer record keys
r in 0…255 written as r/256 (8 decimals, exact), counts up to 750, the ONS ptable turned into
τ-Argus intervals of 1/256 per cell key, and the cells of the cross-classification (ONS
tables have no totals)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from cell_key_perturbation.create_perturbed_table import create_perturbed_table

from argusqt.batch.arb import parse_specify_table
from argusqt.session import Session

MAX_PCV, KEYS = 750, 256


def _ons_ptable(rng: np.random.Generator) -> pd.DataFrame:
    """pcv 1…750 × ckey 0…255 with a noise in −min(2, pcv)…2 drawn per (pcv, ckey)."""
    pcv = np.repeat(np.arange(1, MAX_PCV + 1), KEYS)
    ckey = np.tile(np.arange(KEYS), MAX_PCV)
    low = -np.minimum(2, pcv)
    pvalue = low + (rng.integers(0, 5, pcv.size) % (3 - low))
    return pd.DataFrame({"pcv": pcv, "ckey": ckey, "pvalue": pvalue})


def _tau_ptable(ons: pd.DataFrame) -> str:
    """The same noise as a τ-Argus ptable: in row i, key interval [c/256, (c+1)/256) → v."""
    lines = ["i;j;p;v;p_int_ub", "0;0;1;0;1"]
    for i, part in ons.sort_values(["pcv", "ckey"]).groupby("pcv"):
        for c, v in zip(part.ckey, part.pvalue, strict=True):
            lines.append(f"{i};{i + v};{1 / KEYS!r};{v};{(c + 1) / KEYS!r}")
    return "\n".join(lines) + "\n"


def test_counts_agree_with_the_ons_package(tmp_path: Path) -> None:
    rng = np.random.default_rng(25)
    n = 6000
    data = pd.DataFrame(
        {
            "a": rng.integers(1, 5, n).astype(str),
            "b": pd.Series(rng.integers(1, 13, n)).map(lambda x: f"k{x:02d}"),
            "rk": rng.integers(0, KEYS, n),
        }
    )
    ons_pt = _ons_ptable(rng)
    ons = create_perturbed_table(data, ons_pt, [], ["a", "b"], "rk", threshold=0)
    # argusqt: the same records with keys r/256, through the Session the GUI uses
    keys = (data.rk / KEYS).map(lambda x: f"{x:.8f}")
    (tmp_path / "d.csv").write_text(
        "".join(f"{a};{b};{k}\n" for a, b, k in zip(data.a, data.b, keys, strict=True))
    )
    (tmp_path / "d.rda").write_text(
        '<SEPARATOR> ";"\na 1\n <RECODEABLE>\nb 3\n <RECODEABLE>\n'
        'rk 10\n <RECORDKEY>\n <DECIMALS> 8\n <PFILE> "pt.txt"\n'
    )
    (tmp_path / "pt.txt").write_text(_tau_ptable(ons_pt))
    s = Session()
    s.open_microdata(tmp_path / "d.csv", tmp_path / "d.rda")
    s.specify_table(parse_specify_table('"a""b"|"<freq>"||'))
    s.compute_tables()
    s.protect(1, "CKM")
    t = s.table(1)
    assert t.published is not None
    checked = 0
    for row in ons.itertuples(index=False):
        codes = [[c.strip() for c in d.codes] for d in t.dims]
        cell = t.cell_index((codes[0].index(row.a), codes[1].index(row.b)))
        assert t.value[cell] == row.pre_sdc_count
        assert t.published[cell] == row.count, (row.a, row.b)
        checked += 1
    assert checked == 4 * 12
    assert (ons["count"] != ons["pre_sdc_count"]).any()  # the noise did something
