"""Global recoding (argusqt/docs/formats.md §6): `.grc` files, codelist transforms, recoded
tables."""

from argusqt.recode.apply import (
    RecodeState,
    fold_hierarchy,
    load_recode,
    original_codelist,
    recode_flat,
    recode_table,
    recode_variable,
    undo_recode,
)
from argusqt.recode.grc import RecodeSpec, parse_grc, read_grc, write_grc

__all__ = [
    "RecodeSpec",
    "RecodeState",
    "fold_hierarchy",
    "load_recode",
    "original_codelist",
    "parse_grc",
    "read_grc",
    "recode_flat",
    "recode_table",
    "recode_variable",
    "undo_recode",
    "write_grc",
]
