"""Interval protection against respondents who share cells (docs/design.md, D-91, ipl18):
the intervals grow until no respondent narrows a primary with its own contributions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from lower_bound_attacker import attack

import argusqt

# rev17's IP session seed 21 (2 × 61 records): refused on lb18 ("AUDIT FAILED ... (insider)":
# IP's own model had only the respondents alone in a cell), published now
SEED21 = (
    "BB:21 AB:19 BC:10 CA:9 CC:4 DA:56 AB:18 BB:16 DA:28 AA:46 CA:187 DA:13 DA:11 CA:28 DB:5 "
    "AC:148 DA:86 CC:60 CB:17 DB:64 DC:105 AB:44 DA:13 DC:1 BC:89 CA:12 DB:5 AB:81 BA:34 AA:2 "
    "BA:17 DB:13 BB:96 BC:1 DB:11 BC:16 AB:187 CA:4 DB:0 BB:2 DC:30 AA:72 DA:306 BC:38 DA:6 "
    "BA:81 CB:20 DA:15 DB:21 CA:149 CA:5 BB:4 AC:18 AC:18 AC:6 DB:5 AA:36 AB:164 AC:62 CA:59 "
    "BB:142"
)


def _seed21() -> pd.DataFrame:
    rows = [(k[0], k[1], float(v)) for k, v in (x.split(":") for x in SEED21.split())]
    return pd.DataFrame(rows, columns=["v0", "v1", "y"])


def _ip(data: pd.DataFrame, explanatory: list[str], rules):
    return argusqt.protect(
        data, explanatory=explanatory, response="y", rules=rules, method="IP", cost="unity",
        progress=False,
    )[0]  # fmt: skip


def test_a_session_refused_before_is_published_and_no_insider_breaks_it():
    p = _ip(_seed21(), ["v0", "v1"], [argusqt.P(10, 1), argusqt.FREQ(3, 10.0)])
    t = p.table
    assert t is not None and t.interval_lower is not None
    assert p.audit().ok
    assert attack(t) == []  # the independent attacker, on the printed intervals
    assert p.result.figures.get("floor_attackers", 0) > 0  # the floors made it grow


def _skewed(seed: int) -> pd.DataFrame:
    """A skewed 2-D survey with a few dominant records (as rev17's sessions)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(40, 80))
    x = np.round(np.exp(rng.normal(3, 2.0, n)), 0)
    big = rng.choice(n, size=max(1, n // 15), replace=False)
    x[big] *= rng.uniform(5, 30, size=big.size)
    return pd.DataFrame(
        {"v0": rng.choice(list("ABCD"), n), "v1": rng.choice(list("ABC"), n), "y": x}
    )


@pytest.mark.parametrize("seed", range(4))
def test_an_independent_attacker_finds_nothing_on_what_interval_protection_publishes(seed):
    p = _ip(_skewed(seed), ["v0", "v1"], [argusqt.P(10, 1), argusqt.FREQ(3, 10.0)])
    assert p.audit().ok
    assert attack(p.table) == []
