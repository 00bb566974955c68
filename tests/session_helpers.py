"""A Session on τ-Argus example 2 (region × gender | num1), as several test modules need it."""

from __future__ import annotations

from pathlib import Path

from argusqt.batch.arb import parse_specify_table
from argusqt.rules.parse import parse_safety_rule
from argusqt.session import Session


def ex2_session(folder: Path, rules: str = "FREQ(5,20)|P(20,5)") -> Session:
    """Microdata and metadata of batch_ex2 opened, the table specified and computed."""
    s = Session()
    s.open_microdata(folder / "microdata_ex2.asc", folder / "metadata_ex2.rda")
    s.specify_table(parse_specify_table('"region""gender"|"num1"|""|""'))
    s.set_safety_rules(parse_safety_rule(rules))
    s.compute_tables()
    return s
