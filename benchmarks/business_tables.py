"""Synthetic business surveys for the large-table benchmarks, written as τ-Argus input files.

A survey is fixed-format microdata (activity, region, size class, turnover) with its `.rda`,
two `.hrc` hierarchies (activity and region, two levels each) and `.arb` batch files that
both argusqt and the τ-Argus engine run unchanged: p%(15,1) + FREQ(3,30), cost = turnover.
Everything is deterministic for a given seed.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

#: safety rules of every synthetic instance (issue 15)
RULES = "P(15,1)|FREQ(3,30)"


@dataclass(frozen=True)
class Survey:
    """Shape of a synthetic survey: children per level-1 node of each hierarchy."""

    name: str
    activity: tuple[int, ...]  # level-2 children of each level-1 activity section
    region: tuple[int, ...]  # level-2 children of each level-1 region
    size_classes: int  # 0 = a 2-D table activity × region
    records: int
    seed: int = 1
    sigma: float = 1.3  # log-sd of turnover: larger = more dominant enterprises
    skew: float = 1.0  # power of the category shares: larger = more small (sensitive) cells

    @property
    def n_cells(self) -> int:
        cells = (1 + len(self.activity) + sum(self.activity)) * (
            1 + len(self.region) + sum(self.region)
        )
        return cells * (1 + self.size_classes if self.size_classes else 1)

    @property
    def variables(self) -> list[str]:
        return ["act", "reg"] + (["size"] if self.size_classes else [])


#: the instances of issue 15: 520, 7,290, 31,808 and ~100k cells; primaries (τ-Argus engine and
#: argusqt agree): 61, 1,408, 7,193 and 19,308
SURVEYS = {
    # the I1-style peer table of issue 22 (78 cells): process start plus a small OPT/MOD
    "p78": Survey("p78", (3, 3, 3), (4,), 0, 260, sigma=1.7, skew=1.5),
    "b520": Survey("b520", (4, 4, 4, 4, 4), (4, 4, 4, 3), 0, 6_500),
    "b7290": Survey("b7290", (9,) * 8, (3, 3, 2, 2), 5, 100_000, sigma=1.7),
    "b31808": Survey("b31808", (6,) * 10, (10,) * 5, 7, 500_000),
    "b97768": Survey("b97768", (11,) * 10, (9,) * 10, 7, 1_000_000, skew=0.4),
}

#: issue 26 goal 3: microdata too large to hold as text, written and read in chunks; the
#: shape of b31808 (31,808 cells act × reg × size)
BIG_SURVEYS = {
    "m10": Survey("m10", (6,) * 10, (10,) * 5, 7, 10_000_000, seed=26),
    "m100": Survey("m100", (6,) * 10, (10,) * 5, 7, 100_000_000, seed=26),
}
#: records generated at a time by `write_survey` for the big surveys
GEN_CHUNK = 2_000_000


def _width(children: tuple[int, ...]) -> tuple[int, int]:
    """Digits for the level-1 part and the level-2 part of a leaf code."""
    return len(str(len(children))), len(str(max(children)))


def _codes(children: tuple[int, ...]) -> tuple[list[str], list[str], list[int]]:
    """Level-1 codes, leaf codes and the level-1 index of every leaf (all of one width)."""
    a, b = _width(children)
    tops = [f"S{k + 1:0{a + b - 1}d}" for k in range(len(children))]
    leaves: list[str] = []
    top_of: list[int] = []
    for k, n in enumerate(children):
        for j in range(n):
            leaves.append(f"{k + 1:0{a}d}{j + 1:0{b}d}")
            top_of.append(k)
    return tops, leaves, top_of


def _hrc(children: tuple[int, ...]) -> str:
    tops, leaves, top_of = _codes(children)
    lines = []
    for k, top in enumerate(tops):
        lines.append(top)
        lines += [f"@{leaf}" for leaf, t in zip(leaves, top_of, strict=True) if t == k]
    return "".join(line + "\n" for line in lines)


def _zipf_probs(rng: np.random.Generator, n: int, skew: float) -> np.ndarray:
    """Category shares: a shuffled power law, so some categories are small (sensitive)."""
    p = 1.0 / np.arange(1, n + 1) ** skew
    rng.shuffle(p)
    return p / p.sum()


def microdata(survey: Survey) -> str:
    """Fixed-format records: act, reg, size, turnover (13 wide, 2 decimals), blank-separated."""
    rng = np.random.default_rng(survey.seed)
    _, act_leaves, _ = _codes(survey.activity)
    _, reg_leaves, _ = _codes(survey.region)
    n = survey.records
    act = rng.choice(
        len(act_leaves), size=n, p=_zipf_probs(rng, len(act_leaves), 1.1 * survey.skew)
    )
    reg = rng.choice(
        len(reg_leaves), size=n, p=_zipf_probs(rng, len(reg_leaves), 0.9 * survey.skew)
    )
    # every code occurs at least once
    act[: len(act_leaves)] = np.arange(len(act_leaves))
    reg[: len(reg_leaves)] = np.arange(len(reg_leaves))
    k = max(survey.size_classes, 1)
    size = np.minimum(rng.geometric(0.45, size=n) - 1, k - 1)
    turnover = np.round(rng.lognormal(4.0 + 1.1 * size, survey.sigma, size=n) * 10, 2)
    act_s = np.array(act_leaves)[act]
    reg_s = np.array(reg_leaves)[reg]
    if survey.size_classes:
        size_s = (size + 1).astype(str)
    else:
        size_s = np.full(n, "1")
    parts = [act_s, np.full(n, " "), reg_s, np.full(n, " "), size_s, np.full(n, " ")]
    lines = parts[0]
    for p in parts[1:]:
        lines = np.char.add(lines, p)
    lines = np.char.add(lines, np.char.rjust(np.char.mod("%.2f", turnover), 13))
    return "\n".join(lines.tolist()) + "\n"


def _code_bytes(codes: list[str]) -> np.ndarray:
    """(n codes, width) byte matrix of codes of one width."""
    return np.frombuffer("".join(codes).encode("ascii"), dtype=np.uint8).reshape(len(codes), -1)


def _amount_bytes(x: np.ndarray, width: int) -> np.ndarray:
    """(n, width) bytes of `%{width}.2f` for non-negative amounts, vectorised on integers."""
    cents = np.round(x * 100).astype(np.int64)
    out = np.full((x.shape[0], width), ord(" "), dtype=np.uint8)
    out[:, width - 3] = ord(".")
    rest = cents
    for col in range(width - 1, -1, -1):
        if col == width - 3:
            continue
        digit = rest % 10
        rest = rest // 10
        show = (rest > 0) | (digit > 0) | (col >= width - 4)  # "0.05": digits to the units
        out[show, col] = (48 + digit[show]).astype(np.uint8)
        if col < width - 4 and not (rest > 0).any():
            break
    return out


def microdata_chunks(survey: Survey):
    """The records of a big survey as byte blocks (same layout as `microdata`), GEN_CHUNK
    records at a time, each from its own seeded generator: deterministic, never all in memory."""
    _, act_leaves, _ = _codes(survey.activity)
    _, reg_leaves, _ = _codes(survey.region)
    act_b, reg_b = _code_bytes(act_leaves), _code_bytes(reg_leaves)
    wa, wr = act_b.shape[1], reg_b.shape[1]
    line = wa + 1 + wr + 1 + 1 + 1 + 13 + 1
    rng0 = np.random.default_rng(survey.seed)
    p_act = _zipf_probs(rng0, len(act_leaves), 1.1 * survey.skew)
    p_reg = _zipf_probs(rng0, len(reg_leaves), 0.9 * survey.skew)
    k = max(survey.size_classes, 1)
    for c0 in range(0, survey.records, GEN_CHUNK):
        n = min(GEN_CHUNK, survey.records - c0)
        rng = np.random.default_rng([survey.seed, c0 // GEN_CHUNK])
        act = rng.choice(len(act_leaves), size=n, p=p_act)
        reg = rng.choice(len(reg_leaves), size=n, p=p_reg)
        if c0 == 0:  # every code occurs at least once
            act[: len(act_leaves)] = np.arange(len(act_leaves))
            reg[: len(reg_leaves)] = np.arange(len(reg_leaves))
        size = np.minimum(rng.geometric(0.45, size=n) - 1, k - 1)
        turnover = np.minimum(rng.lognormal(4.0 + 1.1 * size, survey.sigma, size=n) * 10, 9e9)
        mat = np.full((n, line), ord(" "), dtype=np.uint8)
        mat[:, :wa] = act_b[act]
        mat[:, wa + 1 : wa + 1 + wr] = reg_b[reg]
        mat[:, wa + wr + 2] = 48 + (size + 1 if survey.size_classes else 1)
        mat[:, wa + wr + 4 : line - 1] = _amount_bytes(turnover, 13)
        mat[:, -1] = ord("\n")
        yield mat.tobytes()


def rda(survey: Survey) -> str:
    """Metadata of `microdata(survey)`: two hierarchies from `.hrc` files, size, turnover."""
    wa = sum(_width(survey.activity))
    wr = sum(_width(survey.region))
    return f"""act 1 {wa}
  <RECODEABLE>
  <HIERARCHICAL>
  <HIERCODELIST> "act.hrc"
  <HIERLEADSTRING> "@"
reg {wa + 2} {wr}
  <RECODEABLE>
  <HIERARCHICAL>
  <HIERCODELIST> "reg.hrc"
  <HIERLEADSTRING> "@"
size {wa + wr + 3} 1
  <RECODEABLE>
turnover {wa + wr + 5} 13
  <NUMERIC>
  <DECIMALS> 2
"""


def write_survey(survey: Survey, folder: Path) -> Path:
    """Write data, metadata and hierarchies into `folder` (once); returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "survey.asc"
    if not data.exists():
        (folder / "act.hrc").write_text(_hrc(survey.activity))
        (folder / "reg.hrc").write_text(_hrc(survey.region))
        (folder / "survey.rda").write_text(rda(survey))
        tmp = data.with_suffix(".tmp")
        if survey.records > GEN_CHUNK:
            with tmp.open("wb") as f:
                for block in microdata_chunks(survey):
                    f.write(block)
        else:
            tmp.write_text(microdata(survey))
        tmp.replace(data)
    return folder


def batch_text(
    data: str,
    meta: str,
    variables: list[str],
    response: str,
    rules: str,
    suppress: str | None,
    output: str,
    cost: str = "",
) -> str:
    """A microdata batch file: one table, its rules, an optional SUPPRESS, a code-value output."""
    spec = "".join(f'"{v}"' for v in variables)
    cost_field = f'"{cost}"' if cost else ""
    lines = [
        f'<OPENMICRODATA> "{data}"',
        f'<OPENMETADATA> "{meta}"',
        f'<SPECIFYTABLE> {spec}|"{response}"||{cost_field}',
        f"<SAFETYRULE> {rules}",
        "<READMICRODATA>",
    ]
    if suppress:
        lines.append(f"<SUPPRESS> {suppress}")
    lines.append(f'<WRITETABLE> (1, 3, AS+, "{output}")')
    return "".join(line + "\n" for line in lines)


def cpu() -> float:
    """CPU-seconds of this process (user + system): the machine is shared, wall is not."""
    t = os.times()
    return t.user + t.system


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def tabulated(instance: str, workdir: Path | None, log: str = "bench_log.txt") -> tuple[Path, Any]:
    """(folder, table): the survey `instance` written (once) and tabulated by a batch run
    with RULES, as the big-table benchmarks start."""
    from argusqt.batch.runner import run_batch

    survey = SURVEYS[instance]
    folder = write_survey(survey, (workdir or Path(tempfile.mkdtemp())) / survey.name)
    batch = folder / "tab.arb"
    text = batch_text(
        "survey.asc", "survey.rda", survey.variables, "turnover", RULES, None, "tab.txt",
        "turnover",
    )  # fmt: skip
    batch.write_text(text)
    outcome = run_batch(batch, logbook=folder / log)
    outcome.raise_for_error()
    return folder, outcome.session.tables[0]
