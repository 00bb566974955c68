"""Bad-input campaign: malformed copies of the real τ-Argus files through `argusqt batch`.

Every case copies one τ-Argus folder (shared/data/tauargus) into a temporary folder, damages
one file (`.rda`, `.hrc`, `.cdl`, `.grc`, fixed/free microdata, `.tab`, `.arb`, `.hst`), runs
`python -m argusqt batch job.arb log.txt` and classifies what a user would see:

- clear     the run stopped; the message names the damaged file and a line besides the
            batch line (or, for damage of the whole file such as an empty file, the file)
- warning   the run finished and the logbook holds a warning the unmutated run has not
- unchanged the run finished with the unmutated run's outputs, no warning (harmless damage)
- silent    the run finished without a warning but its outputs differ, are missing, or the
            damage asked for something (an option, a time limit) that was not done; or any
            run changed one of its input files (an output written over an input)
- unclear   the run stopped without naming the damaged file and a line, or said "internal
            error", or drowned its message (over 100 kB of stderr or logbook: input echoed
            whole) or printed a solver's own ERROR lines
- traceback a Python traceback, a crash or a hang

Issue 23's hostile files (names starting `23/`: outputs over inputs, contradictory
hierarchies, 2 GB sparse NUL files, UTF-16, devices and folders, 1e300 values, absurd time
limits, 5 MB codes) run with the rest; `--only 23/` runs them alone.

Usage: python benchmarks/bad_input_campaign.py [--repo PATH] [--jobs N] [--seed N] [--show]
(`--repo` selects the argusqt checkout to test; default: this one). Not part of the suite.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve()
REPO = HERE.parents[1]
TAUARGUS = REPO.parent / "shared" / "data" / "tauargus"

Mutation = Callable[[bytes, random.Random], bytes]


# ------------------------------------------------------------------------- base runs
@dataclass(frozen=True)
class Base:
    """One unmutated batch run: a τ-Argus folder, the job, the outputs it writes."""

    folder: str
    job: str
    outputs: tuple[str, ...]


BASES: dict[str, Base] = {
    "testw": Base(
        "tau_testW",
        """<OPENMICRODATA> "tau_testW.asc"
<OPENMETADATA> "tau_testW.rda"
<SPECIFYTABLE> "Size""Region"|"Var2"||
<SAFETYRULE> NK(2,75)|NK(0,0)
<READMICRODATA>
<RECODE> 1, Size, "GK.GRC"
<SUPPRESS> MOD(1,1,1,1,1)
<WRITETABLE> (1, 3, AS+FL+, "out.txt")
""",
        ("out.txt",),
    ),
    "ex2": Base(
        "batch_ex2",
        """<OPENMICRODATA> "microdata_ex2.asc"
<OPENMETADATA> "metadata_ex2.rda"
<SPECIFYTABLE> "region""gender"|"num1"|""|""
<SAFETYRULE> FREQ(5,20)|P(20,5)|
<READMICRODATA>
<SOLVER> FREE
<SUPPRESS> OPT(1,1)
<WRITETABLE> (1, 3, AS+FL+, "out.txt")
""",
        ("out.txt",),
    ),
    "ex1": Base(
        "batch_ex1",
        """<OPENTABLEDATA> "tabdata_ex1.tab"
<OPENMETADATA> "metadata_ex1.rda"
<SPECIFYTABLE> "region""gender"|"freq"|""|""
<SAFETYRULE> MAN(20)
<READTABLE>
<SUPPRESS> OPT(1,1)
<WRITETABLE> (1, 3, AS+FL+, "out.txt")
""",
        ("out.txt",),
    ),
    "pp": Base(
        "tableinput",
        """<OPENTABLEDATA>  "pp.tab"
<OPENMETADATA>   "pp.rda"
<SPECIFYTABLE>   "Size""Region"|"Var2"|"Var2_Shadow"|"Var2"
<READTABLE> 1T
<SUPPRESS> MOD(1,1,1,1,1)
<WRITETABLE> (1, 3, AS+FL+, "out.txt")
""",
        ("out.txt",),
    ),
    "ent": Base(
        "enterprise",
        """<OPENMICRODATA> "example_enterprise.asc"
<OPENMETADATA> "example_enterprise.rda"
<SPECIFYTABLE> "region""product"|"turnover"||"turnover"
<SAFETYRULE> P(0,0)|P(0,0)|P(10,1)|ZERO(10)|MAN(10)|MIS(1)
<SPECIFYTABLE> "act""product"|"turnover"||"turnover"
<SAFETYRULE> P(0,0)|P(0,0)|P(10,1)|ZERO(10)|MAN(10)|MIS(1)
<READMICRODATA>
<APRIORI> "test_3a.hst", 1, ",", 1, 1
<SUPPRESS> MOD(1,1,1,1,1)
<WRITETABLE> (1, 3, AS+FL+, "out1.txt")
<WRITETABLE> (2, 3, AS+FL+, "out2.txt")
""",
        ("out1.txt", "out2.txt"),
    ),
}


@dataclass
class Case:
    """One malformed input: which base, which file, how it is damaged."""

    name: str
    base: str
    file: str
    mutate: Mutation
    whole_file: bool = False  # the damage is the file as a whole: naming the file suffices
    meaningful: bool = False  # the damage asks for something: no output change is no excuse
    setup: Callable[[Path], None] | None = None


# ------------------------------------------------------------------------- mutations
def lines_of(data: bytes) -> tuple[list[bytes], bytes]:
    eol = b"\r\n" if b"\r\n" in data else b"\n"
    body = data.split(eol)
    if body and body[-1] == b"":
        body.pop()
    return body, eol


def join(lines: list[bytes], eol: bytes) -> bytes:
    return eol.join(lines) + eol if lines else b""


def on_line(k: int, fn: Callable[[bytes], bytes]) -> Mutation:
    """Apply `fn` to line k (1-based; negative counts from the end)."""

    def m(data: bytes, rng: random.Random) -> bytes:
        lines, eol = lines_of(data)
        i = k - 1 if k > 0 else len(lines) + k
        lines[i] = fn(lines[i])
        return join(lines, eol)

    return m


def replace(old: bytes, new: bytes, count: int = 1) -> Mutation:
    """Replace text; line ends in `old`/`new` follow the file's (LF or CRLF)."""

    def m(data: bytes, rng: random.Random) -> bytes:
        if b"\r\n" in data:
            o, n = old.replace(b"\r\n", b"\n"), new.replace(b"\r\n", b"\n")
            o, n = o.replace(b"\n", b"\r\n"), n.replace(b"\n", b"\r\n")
        else:
            o, n = old.replace(b"\r\n", b"\n"), new.replace(b"\r\n", b"\n")
        if o not in data:
            raise ValueError(f"{o!r} not in the file")
        return data.replace(o, n, count)

    return m


def move_separator(data: bytes, rng: random.Random) -> bytes:
    """`<SEPARATOR>` moved from the first line to after the first option line."""
    lines, eol = lines_of(data)
    sep = lines.pop(0)
    lines.insert(2, sep)
    return join(lines, eol)


def const(value: bytes) -> Mutation:
    return lambda data, rng: value


def field_set(k: int, fields: list[int], value: bytes, sep: bytes) -> Mutation:
    """Set separated fields (0-based) of line k to `value`."""

    def fn(line: bytes) -> bytes:
        parts = line.split(sep)
        for f in fields:
            parts[f] = value
        return sep.join(parts)

    return on_line(k, fn)


def fixed_set(k: int, start: int, width: int, value: bytes) -> Mutation:
    """Overwrite columns start..start+width-1 (1-based) of line k with `value` right-aligned."""

    def fn(line: bytes) -> bytes:
        v = value.rjust(width)[:width]
        return line[: start - 1] + v + line[start - 1 + width :]

    return on_line(k, fn)


def insert_after(k: int, text: bytes) -> Mutation:
    def m(data: bytes, rng: random.Random) -> bytes:
        lines, eol = lines_of(data)
        lines.insert(k, text)
        return join(lines, eol)

    return m


def move_line_to_end(k: int) -> Mutation:
    def m(data: bytes, rng: random.Random) -> bytes:
        lines, eol = lines_of(data)
        lines.append(lines.pop(k - 1))
        return join(lines, eol)

    return m


#: Bytes that are never part of a valid number, so a flip to one of them cannot turn a
#: number into another valid number (digits, blanks, tabs, signs, dots, commas and exponent
#: letters can).
BAD_BYTES = b"xXzZqQ#!?/\\'&$%~^`|\x00\x01\x1b\x7f\xff\xe9\xa0"


def source_bytes(base: str, file: str) -> bytes:
    """The unmutated bytes of one file of a base run."""
    if file == "job.arb":
        return BASES[base].job.encode()
    folder = TAUARGUS / BASES[base].folder
    path = folder / file if (folder / file).is_file() else folder / "expected" / file
    return path.read_bytes()


def line_edit(op: str, pos: int, arg: bytes) -> Callable[[bytes], bytes]:
    """One damage of a line at `pos`: flip to `arg`, cut, split, insert `arg`, delete, append."""

    def fn(s: bytes) -> bytes:
        if op == "flip":
            return s[:pos] + arg + s[pos + 1 :]
        if op == "truncate":
            return s[:pos]
        if op == "insert":
            return s[:pos] + arg + s[pos:]
        if op == "delete":
            return s[:pos] + s[pos + 1 :]
        return s + arg  # append (arg starts with a line end for a garbage line)

    return fn


def random_mutations(base: str, file: str, n: int, rng: random.Random, kind: str) -> list[Case]:
    """`n` random damages of one file: flips to bad bytes, cut or split lines, shifted text."""
    out: list[Case] = []
    lines, _ = lines_of(source_bytes(base, file))
    ops = ["flip", "flip", "truncate", "split", "shift", "garbage"]
    if kind in ("free", "tab"):
        ops.append("field")
    if kind in ("rda", "arb", "grc", "hst"):
        ops = ["flip", "flip", "flip", "garbage"]
    for _ in range(n):
        op = rng.choice(ops)
        k = rng.randrange(len(lines)) + 1
        while not lines[k - 1].strip():
            k = rng.randrange(len(lines)) + 1
        pos = rng.randrange(max(len(lines[k - 1]), 1))
        if op == "flip":
            b = bytes([rng.choice(BAD_BYTES)])
            fn, desc = line_edit("flip", pos, b), f"line {k} col {pos + 1} → {b!r}"
        elif op == "truncate":
            fn, desc = line_edit("truncate", pos, b""), f"line {k} cut to {pos} chars"
        elif op == "split":
            fn, desc = line_edit("insert", pos, b"\n"), f"line {k} split at col {pos + 1}"
        elif op == "shift" and rng.random() < 0.5:
            fn, desc = line_edit("insert", pos, b"7"), f"line {k}: '7' inserted at col {pos + 1}"
        elif op == "shift":
            fn, desc = line_edit("delete", pos, b""), f"line {k}: col {pos + 1} deleted"
        elif op == "field":
            sep = b";" if base == "pp" else b","
            fn, desc = line_edit("insert", pos, sep + b"X"), f"line {k}: field at col {pos + 1}"
        else:
            g = rng.choice([b"@@@@", b"garbage here", b"\x00\x00\x00", b"<NOTAKEYWORD>", b";;;,,,"])
            fn, desc = line_edit("append", 0, b"\n" + g), f"garbage line {g!r} after line {k}"
        out.append(Case(f"random {file} {op}: {desc}", base, file, on_line(k, fn)))
    return out


def make_dir(name: str) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        (folder / name).mkdir()

    return setup


def hand_picked() -> list[Case]:
    """The issue's cases, then a spread over every file kind."""
    c: list[Case] = []
    add = c.append
    # --- the cases of the issue
    add(
        Case(
            "asc: Var2 on line 3 cut (line 30 chars)",
            "testw",
            "tau_testW.asc",
            on_line(3, lambda s: s[:30]),
        )
    )
    add(
        Case(
            "rda: Var2 starts at column 200",
            "testw",
            "tau_testW.rda",
            replace(b"Var2 28", b"Var2 200"),
        )
    )
    add(Case("asc: empty file", "testw", "tau_testW.asc", const(b""), whole_file=True))
    add(
        Case(
            "asc: Var2 equals its missing value",
            "testw",
            "tau_testW.asc",
            fixed_set(5, 28, 10, b"9999999999"),
        )
    )
    add(
        Case("ent: holding split in two runs", "ent", "example_enterprise.asc", move_line_to_end(3))
    )
    add(
        Case(
            "tab: negative frequency on a detail line",
            "pp",
            "pp.tab",
            field_set(9, [3], b"-3", b";"),
        )
    )
    add(Case("tab: negative cost", "pp", "pp.tab", field_set(9, [5], b"-5,00", b";")))
    add(Case("tab: empty file", "pp", "pp.tab", const(b""), whole_file=True))
    add(Case("tab: inf in a total line (1T)", "pp", "pp.tab", field_set(1, [2], b"inf", b";")))
    add(
        Case(
            "rda: <CKM> option",
            "testw",
            "tau_testW.rda",
            replace(b"  <DECIMALS>  2 \r\nVar3", b'  <DECIMALS>  2 \r\n  <CKM> "T"\r\nVar3'),
            meaningful=True,
        )
    )
    add(Case("arb: empty", "testw", "job.arb", const(b""), whole_file=True, meaningful=True))
    add(Case("arb: OPT(1,-1)", "ex2", "job.arb", replace(b"OPT(1,1)", b"OPT(1,-1)")))
    add(
        Case(
            "arb: a variable twice in SPECIFYTABLE",
            "testw",
            "job.arb",
            replace(b'"Size""Region"', b'"Region""Region"'),
        )
    )
    add(
        Case(
            "rda: <SEPARATOR> not on the first line",
            "ex2",
            "metadata_ex2.rda",
            move_separator,
        )
    )
    add(
        Case(
            "hrc: garbage",
            "testw",
            "region2.hrc",
            const(b"\x00\x01garbage\xff\n@@@\n#!?\n"),
            whole_file=True,
        )
    )
    add(
        Case(
            "asc: line 4 too short for Region",
            "testw",
            "tau_testW.asc",
            on_line(4, lambda s: s[:10]),
        )
    )
    add(
        Case(
            "rda: lead string differs from the .hrc",
            "testw",
            "tau_testW.rda",
            replace(b'<HIERLEADSTRING> "@"', b'<HIERLEADSTRING> "#"'),
        )
    )
    add(
        Case(
            "free: 1e308 responses overflow",
            "ex2",
            "microdata_ex2.asc",
            lambda d, r: d.replace(b"77.38", b"1e308").replace(b"112.02", b"1e308"),
        )
    )
    add(Case("tab: inf in a detail line", "pp", "pp.tab", field_set(9, [2], b"inf", b";")))
    add(Case("tab: 1e400 in a detail line", "pp", "pp.tab", field_set(9, [2], b"1e400", b";")))
    add(
        Case(
            "arb: WRITETABLE to a directory",
            "ex2",
            "job.arb",
            replace(b'"out.txt"', b'"outdir"'),
            setup=make_dir("outdir"),
        )
    )
    # --- fixed-format microdata
    add(Case("asc: letters in Var2", "testw", "tau_testW.asc", fixed_set(7, 28, 10, b"12x45")))
    add(Case("asc: nan in Var2", "testw", "tau_testW.asc", fixed_set(8, 28, 10, b"nan")))
    add(Case("asc: inf in Var2", "testw", "tau_testW.asc", fixed_set(8, 28, 10, b"inf")))
    add(Case("asc: -inf in Var2", "testw", "tau_testW.asc", fixed_set(8, 28, 10, b"-inf")))
    add(Case("asc: 1e400 in Var2", "testw", "tau_testW.asc", fixed_set(8, 28, 10, b"1e400")))
    add(
        Case(
            "asc: 1e308 in Var2 twice",
            "testw",
            "tau_testW.asc",
            lambda d, r: fixed_set(9, 28, 10, b"1e308")(fixed_set(10, 28, 10, b"1e308")(d, r), r),
        )
    )
    add(
        Case(
            "asc: decimal comma in Var2", "testw", "tau_testW.asc", fixed_set(11, 28, 10, b"96,00")
        )
    )
    add(Case("asc: tab inside Var2", "testw", "tau_testW.asc", fixed_set(12, 28, 10, b"9\t6")))
    add(Case("asc: two numbers in Var2", "testw", "tau_testW.asc", fixed_set(12, 28, 10, b"12 34")))
    add(Case("asc: unknown Region code", "testw", "tau_testW.asc", fixed_set(13, 12, 2, b"77")))
    add(Case("asc: last line cut", "testw", "tau_testW.asc", on_line(-1, lambda s: s[:20])))
    add(
        Case(
            "asc: a line split in two",
            "testw",
            "tau_testW.asc",
            on_line(20, lambda s: s[:33] + b"\r\n" + s[33:]),
        )
    )
    add(
        Case(
            "asc: a character inserted (shifted line)",
            "testw",
            "tau_testW.asc",
            on_line(21, lambda s: s[:5] + b"1" + s[5:]),
        )
    )
    add(
        Case(
            "asc: a character deleted (shifted line)",
            "testw",
            "tau_testW.asc",
            on_line(22, lambda s: s[:5] + s[6:]),
        )
    )
    add(
        Case(
            "asc: binary garbage",
            "testw",
            "tau_testW.asc",
            const(bytes(range(256)) * 20),
            whole_file=True,
        )
    )
    add(
        Case(
            "asc: NUL bytes in a line",
            "testw",
            "tau_testW.asc",
            on_line(23, lambda s: s[:27] + b"\x00" * 10 + s[37:]),
        )
    )
    add(
        Case(
            "asc: only blank lines",
            "testw",
            "tau_testW.asc",
            const(b"\r\n\r\n\r\n"),
            whole_file=True,
        )
    )
    add(
        Case(
            "ent: turnover 1e308 overflow",
            "ent",
            "example_enterprise.asc",
            lambda d, r: fixed_set(3, 19, 8, b"1e308")(fixed_set(4, 19, 8, b"1e308")(d, r), r),
        )
    )
    add(Case("ent: holding code blank", "ent", "example_enterprise.asc", fixed_set(5, 1, 9, b"")))
    # --- free-format microdata
    add(
        Case(
            "free: too few fields",
            "ex2",
            "microdata_ex2.asc",
            on_line(3, lambda s: s.rsplit(b",", 1)[0]),
        )
    )
    add(Case("free: too many fields", "ex2", "microdata_ex2.asc", on_line(4, lambda s: s + b",9")))
    add(Case("free: inf in num1", "ex2", "microdata_ex2.asc", field_set(5, [4], b"inf", b",")))
    add(Case("free: nan in num1", "ex2", "microdata_ex2.asc", field_set(5, [4], b"nan", b",")))
    add(Case("free: 1e400 in num1", "ex2", "microdata_ex2.asc", field_set(5, [4], b"1e400", b",")))
    add(
        Case(
            "free: quote inside num1", "ex2", "microdata_ex2.asc", field_set(6, [4], b'77"38', b",")
        )
    )
    add(Case("free: empty num1", "ex2", "microdata_ex2.asc", field_set(7, [4], b"", b",")))
    add(Case("free: unknown region", "ex2", "microdata_ex2.asc", field_set(8, [0], b"Q", b",")))
    add(Case("free: empty file", "ex2", "microdata_ex2.asc", const(b""), whole_file=True))
    add(Case("free: unbalanced quote", "ex2", "microdata_ex2.asc", field_set(9, [0], b'"A', b",")))
    # --- .rda
    add(
        Case(
            "rda: width not a number", "testw", "tau_testW.rda", replace(b"Size 9  2", b"Size 9  x")
        )
    )
    add(
        Case(
            "rda: unknown keyword",
            "testw",
            "tau_testW.rda",
            replace(b"<RECODEABLE>", b"<RECODABEL>"),
        )
    )
    add(
        Case(
            "rda: unterminated quote",
            "testw",
            "tau_testW.rda",
            replace(b'"region.cdl"', b'"region.cdl'),
        )
    )
    add(
        Case(
            "rda: hierarchy file missing",
            "testw",
            "tau_testW.rda",
            replace(b"region2.hrc", b"nothere.hrc"),
        )
    )
    add(
        Case(
            "rda: HIERLEVELS do not add up",
            "testw",
            "tau_testW.rda",
            replace(b"<HIERLEVELS>  3 1 1 0 0", b"<HIERLEVELS>  3 1 0 0 0"),
        )
    )
    add(Case("rda: empty", "testw", "tau_testW.rda", const(b""), whole_file=True))
    add(Case("rda: variable twice", "testw", "tau_testW.rda", replace(b"Var3 38", b"Var2 38")))
    add(
        Case(
            "rda: Var2 width 1 (number cut)",
            "testw",
            "tau_testW.rda",
            replace(b"Var2 28  10", b"Var2 28  1"),
        )
    )
    add(
        Case(
            "rda: Var2 one column late",
            "testw",
            "tau_testW.rda",
            replace(b"Var2 28  10", b"Var2 29  10"),
        )
    )
    add(
        Case(
            "rda: Var2 width 9 (last digit cut)",
            "testw",
            "tau_testW.rda",
            replace(b"Var2 28  10", b"Var2 28  9"),
        )
    )
    add(
        Case(
            "rda ex2: width not a number",
            "ex2",
            "metadata_ex2.rda",
            replace(b"gender 6", b"gender six"),
        )
    )
    add(
        Case(
            "rda ex2: fewer variables than fields",
            "ex2",
            "metadata_ex2.rda",
            lambda d, r: d[: d.index(b"num2")],
        )
    )
    add(
        Case(
            "rda tab: missing TOTCODE",
            "pp",
            "pp.rda",
            replace(b'    <TOTCODE> "Total"\r\nRegion', b"Region"),
        )
    )
    add(
        Case(
            "rda tab: two status columns",
            "pp",
            "pp.rda",
            replace(b"Top2\r\n    <MAXSCORE>", b"Top2\r\n    <STATUS>"),
        )
    )
    add(
        Case(
            "rda: <DECIMALS> negative",
            "testw",
            "tau_testW.rda",
            replace(b"<DECIMALS>  2", b"<DECIMALS>  -2"),
        )
    )
    add(
        Case(
            "rda: <DISTANCE> letters",
            "testw",
            "tau_testW.rda",
            replace(b"<DISTANCE>  1  2  3  4  5", b"<DISTANCE>  a b"),
        )
    )
    add(
        Case(
            "rda: <REQUEST> without codes",
            "testw",
            "tau_testW.rda",
            replace(b'<REQUEST>  "1" "2"', b"<REQUEST>"),
        )
    )
    # --- .hrc
    add(Case("hrc: depth jump", "testw", "region2.hrc", replace(b"@ 2", b"@@ 2")))
    add(Case("hrc: empty code", "testw", "region2.hrc", replace(b"@ 2", b"@")))
    add(Case("hrc: duplicate leaf", "testw", "region2.hrc", replace(b"@ 3", b"@ 2")))
    add(Case("hrc: empty file", "testw", "region2.hrc", const(b""), whole_file=True))
    add(Case("hrc: a leaf missing", "testw", "region2.hrc", replace(b"@ 3\r\n", b"")))
    add(Case("hrc: tab instead of @", "testw", "region2.hrc", replace(b"@ 1", b"\t 1")))
    add(Case("hrc ent: a code misspelt", "ent", "KohStatReg.hrc", replace(b"@05", b"@5")))
    add(
        Case(
            "hrc ex1: a code missing (tabular)", "ex1", "hier_region_ex1.hrc", replace(b"B\n", b"")
        )
    )
    # --- .cdl
    add(Case("cdl: no comma", "testw", "region.cdl", on_line(2, lambda s: s.replace(b",", b" "))))
    add(Case("cdl: binary", "testw", "region.cdl", const(b"\xff\xfe\x00\x01"), whole_file=True))
    # --- .grc
    add(Case("grc: bad range", "testw", "GK.GRC", const(b"1:1-x\n")))
    add(Case("grc: unknown code", "testw", "GK.GRC", const(b"1:1-5\n2:77\n")))
    add(Case("grc: empty", "testw", "GK.GRC", const(b""), whole_file=True))
    add(Case("grc: no colon", "testw", "GK.GRC", const(b"1 1-5\n")))
    # --- .tab
    add(Case("tab: field missing", "pp", "pp.tab", on_line(5, lambda s: s.rsplit(b";", 1)[0])))
    add(Case("tab: unknown status", "pp", "pp.tab", field_set(6, [8], b"Q", b";")))
    add(Case("tab: code not in hierarchy", "pp", "pp.tab", field_set(7, [1], b'"77"', b";")))
    add(Case("tab: letters in Var2", "pp", "pp.tab", field_set(8, [2], b"12x", b";")))
    add(Case("tab: nan in Var2", "pp", "pp.tab", field_set(8, [2], b"nan", b";")))
    add(Case("tab: -inf shadow", "pp", "pp.tab", field_set(8, [4], b"-inf", b";")))
    add(
        Case(
            "tab: top-n increasing",
            "pp",
            "pp.tab",
            lambda d, r: field_set(10, [7], b"999999,00", b";")(
                field_set(10, [6], b"1,00", b";")(d, r), r
            ),
        )
    )
    add(
        Case(
            "tab: cell twice",
            "pp",
            "pp.tab",
            lambda d, r: join(lines_of(d)[0] + [lines_of(d)[0][3]], lines_of(d)[1]),
        )
    )
    add(
        Case(
            "tab ex1: not additive (mode 0)",
            "ex1",
            "tabdata_ex1.tab",
            replace(b"A,  male, 895", b"A,  male, 995"),
        )
    )
    add(Case("tab ex1: inf", "ex1", "tabdata_ex1.tab", replace(b" 895", b"inf")))
    add(
        Case(
            "tab ex1: 1e308 everywhere",
            "ex1",
            "tabdata_ex1.tab",
            lambda d, r: re.sub(rb",\s*\d+,([SU]),", rb",1e308,\1,", d),
        )
    )
    add(
        Case("tab ex1: negative frequency", "ex1", "tabdata_ex1.tab", replace(b" 137,U", b"-137,U"))
    )
    add(
        Case(
            "tab: negative frequency in a total (1T)",
            "pp",
            "pp.tab",
            field_set(1, [3], b"-5", b";"),
        )
    )
    # --- .arb
    add(Case("arb: unknown command", "ex2", "job.arb", replace(b"<SOLVER>", b"<SOLVR>")))
    add(Case("arb: out of order", "ex2", "job.arb", replace(b"<READMICRODATA>\n", b"")))
    add(Case("arb: bad safety rule", "ex2", "job.arb", replace(b"P(20,5)", b"P(20,x)")))
    add(Case("arb: SUPPRESS table 9", "ex2", "job.arb", replace(b"OPT(1,1)", b"OPT(9,1)")))
    add(Case("arb: unknown method", "ex2", "job.arb", replace(b"OPT(1,1)", b"XYZ(1,1)")))
    add(Case("arb: WRITETABLE type 9", "ex2", "job.arb", replace(b"(1, 3,", b"(1, 9,")))
    add(
        Case(
            "arb: unterminated quote",
            "ex2",
            "job.arb",
            replace(b'"microdata_ex2.asc"', b'"microdata_ex2.asc'),
        )
    )
    add(Case("arb: binary", "ex2", "job.arb", const(b"\x00\xff\xfe<<>>"), whole_file=True))
    add(
        Case(
            "arb: only comments",
            "ex2",
            "job.arb",
            const(b"// nothing\n// here\n"),
            whole_file=True,
            meaningful=True,
        )
    )
    add(
        Case(
            "arb: MOD time 0",
            "testw",
            "job.arb",
            replace(b"MOD(1,1,", b"MOD(1,0,"),
            meaningful=True,
        )
    )
    add(Case("arb: MOD time -5", "testw", "job.arb", replace(b"MOD(1,1,", b"MOD(1,-5,")))
    add(Case("arb: OPT time inf", "ex2", "job.arb", replace(b"OPT(1,1)", b"OPT(1,inf)")))
    add(Case("arb: OPT time nan", "ex2", "job.arb", replace(b"OPT(1,1)", b"OPT(1,nan)")))
    add(Case("arb: OPT time 1e400", "ex2", "job.arb", replace(b"OPT(1,1)", b"OPT(1,1e400)")))
    add(Case("arb: lambda 2", "testw", "job.arb", replace(b'"Var2"||', b'"Var2"||"Var2"|2')))
    add(
        Case(
            "arb: empty explanatory name",
            "testw",
            "job.arb",
            replace(b'"Size""Region"', b'"Size"""'),
        )
    )
    add(Case("arb: unknown response", "testw", "job.arb", replace(b'"Var2"', b'"Var9"')))
    add(Case("arb: RECODE unknown variable", "testw", "job.arb", replace(b"1, Size,", b"1, Sise,")))
    add(
        Case(
            "arb: READMICRODATA with argument",
            "testw",
            "job.arb",
            replace(b"<READMICRODATA>", b"<READMICRODATA> now"),
        )
    )
    add(Case("arb: READTABLE 3", "pp", "job.arb", replace(b"<READTABLE> 1T", b"<READTABLE> 3")))
    add(Case("arb: APRIORI bad flag", "ent", "job.arb", replace(b'",", 1, 1', b'",", 7, 1')))
    add(Case("arb: APRIORI table 5", "ent", "job.arb", replace(b'.hst", 1,', b'.hst", 5,')))
    add(Case("arb: SAFETYRULE P(200,1)", "ex2", "job.arb", replace(b"P(20,5)", b"P(200,5)")))
    add(Case("arb: SAFETYRULE NK(3,0)", "testw", "job.arb", replace(b"NK(2,75)", b"NK(2,0)")))
    add(
        Case(
            "arb: SAFETYRULE FREQ(-1,20)", "ex2", "job.arb", replace(b"FREQ(5,20)", b"FREQ(-1,20)")
        )
    )
    add(Case("arb: WRITETABLE options garbage", "ex2", "job.arb", replace(b"AS+FL+", b"ZZ+")))
    add(
        Case(
            "arb: WRITETABLE into a missing folder",
            "ex2",
            "job.arb",
            replace(b'"out.txt"', b'"nofolder/sub/out.txt"'),
            meaningful=True,
        )
    )
    add(
        Case(
            "arb: LOGBOOK is a directory",
            "ex2",
            "job.arb",
            lambda d, r: b'<LOGBOOK> "logdir"\n' + d,
            setup=make_dir("logdir"),
        )
    )
    add(
        Case(
            "arb: SPECIFYTABLE numeric explanatory",
            "testw",
            "job.arb",
            replace(b'"Size""Region"', b'"Size""Var3"'),
        )
    )
    add(
        Case(
            "arb: 7 explanatory variables",
            "testw",
            "job.arb",
            replace(b'"Size""Region"', b'"Size""Region""Year""IndustryCode""Size""Region""Year"'),
        )
    )
    # --- .hst
    add(Case("hst: unknown action", "ent", "test_3a.hst", on_line(3, lambda s: s[:-1] + b"Q")))
    add(Case("hst: too few fields", "ent", "test_3a.hst", on_line(4, lambda s: s.split(b",")[0])))
    add(Case("hst: unknown code", "ent", "test_3a.hst", on_line(5, lambda s: b"Zz" + s[2:])))
    add(Case("hst: negative cost", "ent", "test_3a.hst", on_line(5, lambda s: s[:-1] + b"C,-4")))
    add(Case("hst: inf cost", "ent", "test_3a.hst", on_line(5, lambda s: s[:-1] + b"C,inf")))
    add(Case("hst: nan levels", "ent", "test_3a.hst", on_line(6, lambda s: s[:-1] + b"PL,nan,1")))
    add(Case("hst: empty", "ent", "test_3a.hst", const(b""), whole_file=True, meaningful=True))
    add(Case("hst: binary", "ent", "test_3a.hst", const(b"\xff\x00\x01\x02"), whole_file=True))
    return c


def sparse(name: str, size: int = 2 * 1024**3, head: bytes = b"") -> Callable[[Path], None]:
    """Make `name` a sparse file of `size` bytes (NUL bytes after `head`): costs no disk."""

    def setup(folder: Path) -> None:
        with (folder / name).open("wb") as fh:
            fh.write(head)
            fh.truncate(size)

    return setup


def responses(value: bytes, rows: tuple[int, ...] = (5, 50, 90)) -> Mutation:
    """Set num1 (field 5) of batch_ex2's microdata on these lines (0-based) to `value`."""

    def m(data: bytes, rng: random.Random) -> bytes:
        lines = data.split(b"\n")
        for i in rows:
            fields = lines[i].split(b",")
            fields[4] = value
            lines[i] = b",".join(fields)
        return b"\n".join(lines)

    return m


def utf16(bom: bool) -> Mutation:
    return lambda d, r: d.decode("latin-1").encode("utf-16" if bom else "utf-16-le")


def issue23_cases() -> list[Case]:
    """Issue 23's hostile files (items 7, 8, 9, 13) and our variants of them."""
    c: list[Case] = []
    add = c.append
    wt = b'<WRITETABLE> (1, 3, AS+FL+, "out.txt")'

    def write_over(name: bytes, out_type: int = 3, base: str = "ex2") -> Mutation:
        if base == "ent":  # two tables, written to out1.txt and out2.txt
            return replace(b'"out1.txt"', b'"' + name + b'"')
        return replace(wt, b'<WRITETABLE> (1, %d, AS+FL+, "%s")' % (out_type, name))

    # --- item 7: outputs over inputs (refused before anything is written)
    for base, name in (
        ("ex2", b"microdata_ex2.asc"),
        ("ex2", b"metadata_ex2.rda"),
        ("ex2", b"hier_region_ex2.hrc"),
        ("ex2", b"job.arb"),
        ("testw", b"GK.GRC"),
        ("testw", b"region.cdl"),
        ("ex1", b"tabdata_ex1.tab"),
        ("ent", b"test_3a.hst"),
    ):
        over = write_over(name, base=base)
        add(Case(f"23/7 arb: WRITETABLE over {name.decode()}", base, "job.arb", over))
    add(
        Case(
            "23/7 arb: WRITETABLE type 5 whose .rda is the metadata",
            "ex2",
            "job.arb",
            write_over(b"metadata_ex2.tab", 5),
        )
    )
    for name in (b"microdata_ex2.asc", b"job.arb", b"hier_gender_ex2.hrc"):
        add(
            Case(
                f"23/7 arb: LOGBOOK {name.decode()}",
                "ex2",
                "job.arb",
                lambda d, r, n=name: b'<LOGBOOK> "' + n + b'"\n' + d,
            )
        )
    add(
        Case(
            "23/7 arb: VERSIONINFO over the metadata",
            "ex2",
            "job.arb",
            lambda d, r: d + b'<VERSIONINFO> "metadata_ex2.rda"\n',
        )
    )
    # --- item 8: contradictory hierarchies
    for label, text in (
        ("leaf A also a parent", b"X\r\n@A\r\n@B\r\nA\r\n@C\r\n@D\r\n"),
        ("A its own child", b"AB\r\n@A\r\n@@A\r\n@B\r\nC\r\nD\r\n"),
        ("leaf twice", b"A\r\nB\r\nC\r\nD\r\nB\r\n"),
        ("leaf twice at two depths", b"X\r\n@A\r\n@B\r\nC\r\nD\r\nY\r\n@A\r\n"),
    ):
        add(Case(f"23/8 hrc: {label}", "ex2", "hier_region_ex2.hrc", const(text)))
    # --- item 9: NUL and binary files, huge ones sparse
    add(
        Case(
            "23/9 hrc: 2 GB of NUL bytes",
            "ex2",
            "hier_region_ex2.hrc",
            const(b""),
            whole_file=True,
            setup=sparse("hier_region_ex2.hrc"),
        )
    )
    add(
        Case(
            "23/9 asc: 2 GB of NUL bytes",
            "ex2",
            "microdata_ex2.asc",
            const(b""),
            whole_file=True,
            setup=sparse("microdata_ex2.asc"),
        )
    )
    add(
        Case(
            "23/9 asc: fixed-format 2 GB of NUL bytes",
            "testw",
            "tau_testW.asc",
            const(b""),
            whole_file=True,
            setup=sparse("tau_testW.asc"),
        )
    )
    add(
        Case(
            "23/9 hrc: text, then 2 GB of NUL bytes",
            "ex2",
            "hier_region_ex2.hrc",
            const(b""),
            setup=sparse("hier_region_ex2.hrc", head=b"A\nB\nC\nD\n"),
        )
    )
    add(
        Case(
            "23/9 rda: 2 GB of NUL bytes",
            "ex2",
            "metadata_ex2.rda",
            const(b""),
            whole_file=True,
            setup=sparse("metadata_ex2.rda"),
        )
    )
    add(Case("23/9 asc: 100 NUL bytes", "ex2", "microdata_ex2.asc", const(b"\0" * 100), True))
    add(Case("23/9 hrc: 100 NUL bytes", "ex2", "hier_region_ex2.hrc", const(b"\0" * 100), True))
    add(Case("23/9 tab: 100 NUL bytes", "ex1", "tabdata_ex1.tab", const(b"\0" * 100), True))
    # --- item 13: extreme values, echoed input, UTF-16, devices and folders
    add(
        Case(
            "23/13 asc: three responses 1e300, OPT", "ex2", "microdata_ex2.asc", responses(b"1e300")
        )
    )
    add(
        Case(
            "23/13 asc: one response 3e16, OPT",
            "ex2",
            "microdata_ex2.asc",
            responses(b"3e16", (7,)),
        )
    )
    add(
        Case(
            "23/13 arb: OPT(1,1e300)",
            "ex2",
            "job.arb",
            replace(b"OPT(1,1)", b"OPT(1,1e300)"),
            meaningful=True,
        )
    )
    add(
        Case(
            "23/13 asc: a 5 MB code",
            "ex2",
            "microdata_ex2.asc",
            on_line(6, lambda s: b"Q" * 5_000_000 + s[1:]),
        )
    )
    add(
        Case(
            "23/13 hrc: a 5 MB code",
            "ex2",
            "hier_region_ex2.hrc",
            on_line(2, lambda s: b"Q" * 5_000_000),
        )
    )
    add(
        Case(
            "23/13 arb: a 5 MB variable name",
            "ex2",
            "job.arb",
            replace(b'"region""gender"', b'"' + b"r" * 5_000_000 + b'""gender"'),
        )
    )
    for file in ("microdata_ex2.asc", "metadata_ex2.rda", "hier_region_ex2.hrc", "job.arb"):
        for bom in (True, False):
            label = "with BOM" if bom else "no BOM"
            add(Case(f"23/13 UTF-16 {label}: {file}", "ex2", file, utf16(bom), whole_file=True))
    for target in (b"/dev/zero", b"adir"):
        add(
            Case(
                f"23/13 rda: hierarchy is {target.decode()}",
                "ex2",
                "metadata_ex2.rda",
                replace(b"hier_region_ex2.hrc", target),
                setup=make_dir("adir"),
            )
        )
        add(
            Case(
                f"23/13 arb: microdata is {target.decode()}",
                "ex2",
                "job.arb",
                replace(b'"microdata_ex2.asc"', b'"' + target + b'"'),
                setup=make_dir("adir"),
            )
        )
    add(
        Case(
            "23/13 arb: metadata is /dev/zero",
            "ex2",
            "job.arb",
            replace(b'"metadata_ex2.rda"', b'"/dev/zero"'),
        )
    )
    add(
        Case(
            "23/13 arb: WRITETABLE onto a folder",
            "ex2",
            "job.arb",
            replace(b'"out.txt"', b'"adir"'),
            meaningful=True,
            setup=make_dir("adir"),
        )
    )
    return c


def all_cases(seed: int) -> list[Case]:
    rng = random.Random(seed)
    cases = hand_picked() + issue23_cases()
    for base, file, n, kind in (
        ("testw", "tau_testW.asc", 14, "fixed"),
        ("testw", "tau_testW.rda", 8, "rda"),
        ("testw", "region2.hrc", 5, "hrc"),
        ("testw", "GK.GRC", 2, "grc"),
        ("testw", "job.arb", 6, "arb"),
        ("ent", "example_enterprise.asc", 8, "fixed"),
        ("ent", "example_enterprise.rda", 5, "rda"),
        ("ent", "KohStatReg.hrc", 3, "hrc"),
        ("ent", "test_3a.hst", 4, "hst"),
        ("ex2", "microdata_ex2.asc", 10, "free"),
        ("ex2", "metadata_ex2.rda", 5, "rda"),
        ("ex2", "hier_gender_ex2.hrc", 2, "hrc"),
        ("ex2", "job.arb", 4, "arb"),
        ("pp", "pp.tab", 10, "tab"),
        ("pp", "pp.rda", 5, "rda"),
        ("ex1", "tabdata_ex1.tab", 6, "tab"),
        ("ex1", "metadata_ex1.rda", 3, "rda"),
    ):
        cases += random_mutations(base, file, n, rng, kind)
    return cases


# ------------------------------------------------------------------------- running
def prepare(base: Base, dest: Path) -> Path:
    folder = dest / base.folder
    shutil.copytree(TAUARGUS / base.folder, folder)
    for p in folder.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    expected = folder / "expected"
    if expected.is_dir():  # the a-priori file of the enterprise case beside the batch file
        shutil.copy(expected / "test_3a.hst", folder / "test_3a.hst")
    (folder / "job.arb").write_text(base.job)
    return folder


@dataclass
class Outcome:
    rc: int
    stderr: str
    log: str
    outputs: dict[str, bytes | None]
    seconds: float
    inputs_changed: list[str] = field(default_factory=list)


def _digests(folder: Path) -> dict[str, str]:
    """Content digests of the regular files of a folder (sparse 2 GB files by size only)."""
    out = {}
    for p in folder.iterdir():
        if p.is_file() and not p.is_symlink():
            size = p.stat().st_size
            out[p.name] = f"size {size}" if size > 50_000_000 else _sha(p)
    return out


def _sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def run(folder: Path, repo: Path, timeout: float = 600) -> Outcome:
    env = dict(os.environ, PYTHONPATH=str(repo), QT_QPA_PLATFORM="offscreen")
    before = _digests(folder)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "argusqt", "batch", "job.arb", "log.txt"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            errors="replace",
        )
        rc, err = proc.returncode, proc.stderr
    except subprocess.TimeoutExpired:
        rc, err = -999, "timeout"
    log = (folder / "log.txt").read_text(errors="replace") if (folder / "log.txt").is_file() else ""
    outs = {}
    for name in ("out.txt", "out1.txt", "out2.txt"):
        p = folder / name
        outs[name] = p.read_bytes() if p.is_file() else None
    seconds = time.perf_counter() - t0
    after = _digests(folder)
    changed = sorted(n for n, d in before.items() if after.get(n, d) != d)
    return Outcome(rc, err, log, outs, seconds, changed)


def warnings_of(log: str) -> set[str]:
    """Warning lines of a logbook without time stamps and folders (to compare runs)."""
    out = set()
    for line in log.splitlines():
        text = line.split(" : ", 1)[-1]
        if "warning" in text.lower():
            out.add(re.sub(r"/\S*/", "", text))
    return out


#: More than this on stderr or in the logbook is input echoed whole (a 5 MB code).
ECHO_BYTES = 100_000


def classify(case: Case, got: Outcome, ref: Outcome) -> str:
    if got.rc == -999:
        return "traceback"  # a hang
    if "Traceback" in got.stderr or got.rc not in (0, 1):
        return "traceback"
    if got.inputs_changed:
        return "silent"  # an output replaced or appended to an input
    if len(got.stderr) > ECHO_BYTES or len(got.log) > ECHO_BYTES + len(ref.log):
        return "unclear"  # the message drowns in echoed input
    if re.search(r"^\[[\w.]+:\d+\] ERROR", got.stderr, re.M):
        return "unclear"  # a solver's own error lines before (or instead of) ours
    if got.rc != 0:
        msg = got.stderr
        if "internal error" in msg.lower():
            return "unclear"
        ours = [ln for ln in msg.splitlines() if ln.startswith("job.arb")]
        msg = ours[-1] if ours else msg
        if case.file != "job.arb":  # batch lines are always named: look past them
            msg = re.sub(r"^job\.arb, line \d+: ", "", msg)
            msg = re.sub(r" \(line \d+\) with metadata", " with metadata", msg)
        names_file = case.file.lower() in msg.lower()
        names_line = re.search(r"line \d+", msg) is not None
        if names_file and (names_line or case.whole_file):
            return "clear"
        return "unclear"
    if warnings_of(got.log) - warnings_of(ref.log):
        return "warning"
    if case.meaningful:
        return "silent"
    same = all(got.outputs.get(k) == v for k, v in ref.outputs.items() if v is not None)
    return "unchanged" if same else "silent"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, default=REPO, help="argusqt checkout to test")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--show", action="store_true", help="print every case, not only bad ones")
    ap.add_argument("--only", default="", help="run cases whose name contains this text")
    args = ap.parse_args()
    if not TAUARGUS.is_dir():
        print(f"τ-Argus data not found at {TAUARGUS}", file=sys.stderr)
        return 2
    cases = [c for c in all_cases(args.seed) if args.only in c.name]
    for case in cases:  # every damage applies and changes its file
        src = source_bytes(case.base, case.file)
        if case.mutate(src, random.Random(0)) == src:
            print(f"case {case.name!r} does not change {case.file}", file=sys.stderr)
            return 2
    work = Path(tempfile.mkdtemp(prefix="badinput-"))
    refs: dict[str, Outcome] = {}
    for name, base in BASES.items():
        ref = run(prepare(base, work / f"ref-{name}"), args.repo)
        if ref.rc != 0:
            print(f"base {name} fails: {ref.stderr}", file=sys.stderr)
            return 2
        refs[name] = ref

    def one(item: tuple[int, Case]) -> tuple[Case, Outcome, str]:
        k, case = item
        folder = prepare(BASES[case.base], work / f"case{k:03d}")
        (folder / case.file).write_bytes(
            case.mutate(source_bytes(case.base, case.file), random.Random(k))
        )
        if case.setup is not None:
            case.setup(folder)
        got = run(folder, args.repo)
        cls = classify(case, got, refs[case.base])
        shutil.rmtree(folder, ignore_errors=True)
        return case, got, cls

    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(one, enumerate(cases)))
    counts = Counter(cls for _, _, cls in results)
    for case, got, cls in results:
        if args.show or cls in ("silent", "unclear", "traceback"):
            first = (got.stderr.strip().splitlines() or [""])[-1][:300]
            if cls == "warning":
                first = sorted(warnings_of(got.log) - warnings_of(refs[case.base].log))[0][:300]
            print(f"[{cls:9}] {case.base:5} {case.name}\n            {first}")
    print()
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"{len(cases)} malformed inputs, {time.perf_counter() - t0:.0f} s, repo {args.repo}")
    slow = max(results, key=lambda r: r[1].seconds)
    print(
        f"largest run's memory (max RSS of a child): {rss:.0f} MB; slowest case: "
        f"{slow[0].name} ({slow[1].seconds:.1f} s); load {os.getloadavg()[0]:.1f}"
    )
    for label in ("23/",):
        part = [r for r in results if r[0].name.startswith(label)]
        if part:
            sub = Counter(cls for _, _, cls in part)
            print(f"issue 23 cases: {len(part)}: " + ", ".join(f"{k} {v}" for k, v in sub.items()))
    print("| class | count |\n|---|---|")
    for cls in ("clear", "warning", "unchanged", "silent", "unclear", "traceback"):
        print(f"| {cls} | {counts[cls]} |")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
