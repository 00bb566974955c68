"""The codes of one explanatory variable in table order, with their hierarchy.

A CodeList is one dimension of a table: index 0 is the total, then the hierarchy nodes in
file (pre-)order or the flat codes in byte order, then the declared missing codes
(argusqt/docs/formats.md §4.3). Nodes are identified by position, not by code, because a `.hrc` may
repeat a non-leaf code under two parents (NUTS.hrc).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import field
from functools import cached_property

import numpy as np

from argusqt.dataclass import dataclass


def byte_order_key(code: str) -> bytes:
    """τ-Argus sorts codes by byte order (blanks first, 'ZZ' < 'a')."""
    return code.encode("latin-1", errors="replace")


@dataclass(eq=False)
class CodeList:
    """Codes of one dimension. `parent[i]` is the index of node i's parent (-1 for the total)."""

    name: str
    codes: list[str]
    parent: np.ndarray
    is_missing: np.ndarray
    total_code: str = "Total"
    hierarchical: bool = False
    labels: dict[str, str] = field(default_factory=dict)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def flat(
        cls,
        name: str,
        codes: Iterable[str],
        missing: Sequence[str] = (),
        total_code: str = "Total",
        labels: dict[str, str] | None = None,
    ) -> CodeList:
        """A non-hierarchical variable: total, valid codes in byte order, then missing codes."""
        miss = list(dict.fromkeys(m for m in missing))
        valid = sorted({c for c in codes if c not in miss}, key=byte_order_key)
        all_codes = [total_code, *valid, *miss]
        parent = np.zeros(len(all_codes), dtype=np.int64)
        parent[0] = -1
        is_missing = np.zeros(len(all_codes), dtype=bool)
        is_missing[1 + len(valid) :] = True
        return cls(name, all_codes, parent, is_missing, total_code, False, dict(labels or {}))

    @classmethod
    def from_tree(
        cls,
        name: str,
        entries: Sequence[tuple[int, str]],
        missing: Sequence[str] = (),
        total_code: str = "Total",
        labels: dict[str, str] | None = None,
    ) -> CodeList:
        """A hierarchy from (depth, code) pairs in pre-order, depth 1 = child of the total.

        The caller (the `.hrc` reader) has already checked depth jumps and reports errors
        with line numbers; here they are asserted.
        """
        miss = [m for m in dict.fromkeys(missing)]
        codes = [total_code]
        parent = [-1]
        stack = [0]  # stack[d] = index of the last node at depth d
        for depth, code in entries:
            if depth < 1 or depth > len(stack):
                raise ValueError(f"hierarchy depth jumps to {depth} at code {code!r}")
            del stack[depth:]
            codes.append(code)
            parent.append(stack[depth - 1])
            stack.append(len(codes) - 1)
        for m in miss:
            codes.append(m)
            parent.append(0)
        is_missing = np.zeros(len(codes), dtype=bool)
        if miss:
            is_missing[-len(miss) :] = True
        return cls(
            name,
            codes,
            np.asarray(parent, dtype=np.int64),
            is_missing,
            total_code,
            True,
            dict(labels or {}),
        )

    @classmethod
    def from_digits(
        cls,
        name: str,
        codes: Iterable[str],
        levels: Sequence[int],
        missing: Sequence[str] = (),
        total_code: str = "Total",
        labels: dict[str, str] | None = None,
    ) -> CodeList:
        """A hierarchy from code digits (`<HIERLEVELS>`): every prefix that occurs is a node."""
        levels = [n for n in levels if n > 0]
        cuts = np.cumsum(levels).tolist()
        miss = set(missing)
        nodes: set[str] = set()
        for c in codes:
            if c in miss:
                continue
            for cut in cuts:
                nodes.add(c[:cut])
        depth_of_len = {cut: i + 1 for i, cut in enumerate(cuts)}
        ordered = sorted(nodes, key=byte_order_key)
        entries = [(depth_of_len.get(len(c), len(cuts)), c) for c in ordered]
        return cls.from_tree(name, entries, list(missing), total_code, labels)

    # ------------------------------------------------------------------ structure
    def __len__(self) -> int:
        return len(self.codes)

    @cached_property
    def depth(self) -> np.ndarray:
        d = np.zeros(len(self.codes), dtype=np.int64)
        for i in range(1, len(self.codes)):  # parents precede children (pre-order)
            d[i] = d[self.parent[i]] + 1
        return d

    @cached_property
    def children(self) -> list[list[int]]:
        ch: list[list[int]] = [[] for _ in self.codes]
        for i in range(1, len(self.codes)):
            ch[int(self.parent[i])].append(i)
        return ch

    @cached_property
    def is_leaf(self) -> np.ndarray:
        return np.array([len(c) == 0 for c in self.children], dtype=bool)

    @cached_property
    def parents(self) -> list[int]:
        """Nodes with children (the total first), in code order: one relation each."""
        return [i for i, c in enumerate(self.children) if c]

    @cached_property
    def leaf_index(self) -> dict[str, int]:
        """Code → node index for the leaves (microdata codes must be leaves)."""
        return {self.codes[i]: int(i) for i in np.flatnonzero(self.is_leaf)}

    @cached_property
    def ancestors(self) -> list[list[int]]:
        """For each node: itself, its parent, …, the total."""
        out: list[list[int]] = []
        for i in range(len(self.codes)):
            chain = [i]
            while self.parent[chain[-1]] >= 0:
                chain.append(int(self.parent[chain[-1]]))
            out.append(chain)
        return out

    def label(self, i: int) -> str:
        code = self.codes[i]
        return self.labels.get(code) or self.labels.get(code.strip()) or code

    def index_of(self, code: str) -> list[int]:
        """All node indices with this code (non-leaf codes may repeat)."""
        return [i for i, c in enumerate(self.codes) if c == code]

    @property
    def n_levels(self) -> int:
        return int(self.depth.max()) if len(self.codes) else 0
