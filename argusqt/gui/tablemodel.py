"""Qt model of one table: rows × columns of two dimensions, the others fixed by a layer choice.

Hierarchical dimensions are shown as indented trees whose branches expand and collapse; only
visible nodes become rows/columns, so the model never holds a Python object per cell.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QFont

from argusqt.gui import statuscolors
from argusqt.gui.formatting import format_number
from argusqt.model.codelist import CodeList
from argusqt.model.status import Status, is_primary, is_suppressed
from argusqt.model.table import Table

CELL_ROLE = Qt.ItemDataRole.UserRole + 1  # cell index of a model index
NODE_ROLE = Qt.ItemDataRole.UserRole + 2  # node index in a header section


class DimensionView:
    """Expanded/collapsed state of one dimension and the nodes currently visible."""

    def __init__(self, dim: CodeList) -> None:
        self.dim = dim
        self.expanded = np.ones(len(dim), dtype=bool)
        self.visible = np.arange(len(dim))

    def has_children(self, node: int) -> bool:
        return bool(self.dim.children[node])

    def update(self) -> None:
        """Visible = every proper ancestor expanded; computed level by level (pre-order)."""
        dim = self.dim
        vis = np.ones(len(dim), dtype=bool)
        depth = dim.depth
        parent = dim.parent
        for d in range(1, dim.n_levels + 1):
            idx = np.flatnonzero(depth == d)
            p = parent[idx]
            vis[idx] = vis[p] & self.expanded[p]
        self.visible = np.flatnonzero(vis)

    def set_level(self, level: int) -> None:
        """Show the hierarchy down to `level` (0 = total only)."""
        self.expanded = self.dim.depth < level
        self.update()


class TableModel(QAbstractTableModel):
    """Cells of `table` for the chosen row/column dimensions and layer nodes."""

    def __init__(self, table: Table, parent=None) -> None:
        super().__init__(parent)
        self.table = table
        self.show_labels = False
        self.show_published = table.published is not None
        self.preview_safe = False  # show suppressed cells as "x" (the published table)
        self.row_dim = 0
        self.col_dim = 1 if table.ndim >= 2 else None
        self.layer = [0] * table.ndim  # node of each dimension not shown on an axis
        self.views = [DimensionView(d) for d in table.dims]
        self.audit_lower: np.ndarray | None = None
        self.audit_upper: np.ndarray | None = None
        self._strides = np.array(
            [int(np.prod(table.shape[i + 1 :])) for i in range(table.ndim)], dtype=np.int64
        )

    # ---------------------------------------------------------------- axis control
    def set_axes(self, row_dim: int, col_dim: int | None) -> None:
        self.beginResetModel()
        self.row_dim, self.col_dim = row_dim, col_dim
        self.endResetModel()

    def set_layer(self, dim: int, node: int) -> None:
        self.layer[dim] = node
        self._all_changed()

    def set_preview_safe(self, on: bool) -> None:
        self.preview_safe = on
        self._all_changed()

    def set_show_labels(self, on: bool) -> None:
        self.show_labels = on
        self.headerDataChanged.emit(Qt.Orientation.Vertical, 0, max(0, self.rowCount() - 1))
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, max(0, self.columnCount() - 1))

    def toggle(self, dim: int, node: int) -> None:
        """Expand or collapse one branch of dimension `dim`."""
        v = self.views[dim]
        if not v.has_children(node):
            return
        self.beginResetModel()
        v.expanded[node] = not v.expanded[node]
        v.update()
        self.endResetModel()

    def set_level(self, dim: int, level: int) -> None:
        self.beginResetModel()
        self.views[dim].set_level(level)
        self.endResetModel()

    def refresh(self) -> None:
        """Statuses or values changed in the table: repaint everything."""
        self.show_published = self.show_published and self.table.published is not None
        self._all_changed()

    def _all_changed(self) -> None:
        if self.rowCount() and self.columnCount():
            self.dataChanged.emit(
                self.index(0, 0), self.index(self.rowCount() - 1, self.columnCount() - 1)
            )

    def visible_cells(self) -> np.ndarray:
        """(rows × columns) cell indices shown under the current axes and layer."""
        if self.table.ndim == 0:
            return np.zeros((1, 1), dtype=np.int64)
        rows = self.views[self.row_dim].visible
        cols = self.views[self.col_dim].visible if self.col_dim is not None else np.array([0])
        base = int(np.dot(self.layer, self._strides))
        base -= self.layer[self.row_dim] * self._strides[self.row_dim]
        cells = base + rows[:, None] * self._strides[self.row_dim]
        if self.col_dim is not None:
            base_c = self.layer[self.col_dim] * self._strides[self.col_dim]
            cells = cells - base_c + cols[None, :] * self._strides[self.col_dim]
        return cells

    def primary_positions(self) -> np.ndarray:
        """(row, col) of the unsafe cells visible under the current axes and layer, row-major."""
        st = self.table.status[self.visible_cells()]
        return np.argwhere(is_primary(st))

    def widest_texts(self) -> list[str]:
        """Per column, the texts that print widest (largest and most negative shown value)."""
        cells = self.visible_cells()
        if cells.size == 0:
            return []
        t = self.table
        shown = t.published if self.show_published and t.published is not None else t.value
        v = np.where(t.status[cells] == Status.EMPTY, 0.0, shown[cells])
        d = self.decimals()
        out = []  # numbers as printed (an "x" of the preview is never the widest)
        for hi, lo in zip(v.max(axis=0), v.min(axis=0), strict=True):
            out.append(max(format_number(hi, d), format_number(lo, d), key=len))
        return out

    def decimals(self) -> int:
        """Printed decimals: the table's; none for rounded values (multiples of a whole base)."""
        t = self.table
        rounded = t.protection is not None and t.protection.face == "round"
        if self.show_published and t.published is not None and rounded:
            return 0
        return max(0, int(t.decimals))

    # ---------------------------------------------------------------- geometry
    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid() or self.table.ndim == 0:
            return 0 if parent.isValid() else 1
        return len(self.views[self.row_dim].visible)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid():
            return 0
        if self.col_dim is None:
            return 1
        return len(self.views[self.col_dim].visible)

    def row_node(self, row: int) -> int:
        return int(self.views[self.row_dim].visible[row])

    def col_node(self, col: int) -> int | None:
        if self.col_dim is None:
            return None
        return int(self.views[self.col_dim].visible[col])

    def cell_at(self, row: int, col: int) -> int:
        """Cell index of a view position (row-major over all dimensions)."""
        if self.table.ndim == 0:
            return 0
        nodes = list(self.layer)
        nodes[self.row_dim] = self.row_node(row)
        if self.col_dim is not None:
            nodes[self.col_dim] = self.col_node(col)
        return int(np.dot(nodes, self._strides))

    def find(self, cell: int) -> QModelIndex:
        """Model index showing `cell` under the current axes/layer, invalid if hidden."""
        nodes = self.table.cell_nodes(cell)
        rows = np.flatnonzero(self.views[self.row_dim].visible == nodes[self.row_dim])
        if not len(rows):
            return QModelIndex()
        col = 0
        if self.col_dim is not None:
            cols = np.flatnonzero(self.views[self.col_dim].visible == nodes[self.col_dim])
            if not len(cols):
                return QModelIndex()
            col = int(cols[0])
        return self.index(int(rows[0]), col)

    # ---------------------------------------------------------------- display
    def format_value(self, cell: int) -> str:
        t = self.table
        st = int(t.status[cell])
        if st == Status.EMPTY:
            return "-"
        if self.preview_safe and bool(is_suppressed(st)) and t.published is None:
            return "x"  # as the safe table will publish it
        v = t.published[cell] if self.show_published and t.published is not None else t.value[cell]
        return format_number(float(v), self.decimals())

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        cell = self.cell_at(index.row(), index.column())
        st = int(self.table.status[cell])
        if role == Qt.ItemDataRole.DisplayRole:
            return self.format_value(cell)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.BackgroundRole:
            return statuscolors.background(st)
        if role == Qt.ItemDataRole.ForegroundRole:
            return statuscolors.foreground(st)
        if role == Qt.ItemDataRole.FontRole and bool(is_suppressed(st)):
            f = QFont()
            f.setBold(True)
            return f
        if role == Qt.ItemDataRole.ToolTipRole:
            codes = " × ".join(c.strip() or "(blank)" for c in self.table.cell_codes(cell))
            return f"{codes}\n{statuscolors.label(st)}\nfrequency {self.table.freq[cell]:,.0f}"
        if role == CELL_ROLE:
            return cell
        return None

    def node_name(self, dim: int, node: int) -> str:
        """The code (or label) of a node as a reader copies it: no indent, no fold mark."""
        d = self.table.dims[dim]
        name = d.label(node) if self.show_labels else d.codes[node]
        name = name.strip() or "(blank)"
        if d.is_missing[node]:
            name += " (missing)"
        return name

    def _node_text(self, dim: int, node: int) -> str:
        d = self.table.dims[dim]
        name = self.node_name(dim, node)
        v = self.views[dim]
        if v.has_children(node):
            mark = "▾ " if v.expanded[node] else "▸ "
        else:
            mark = "   "
        indent = "    " * int(d.depth[node]) if d.hierarchical else ""
        return indent + mark + name if d.hierarchical else name

    def headerData(self, section: int, orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Vertical:
            if self.table.ndim == 0 or section >= self.rowCount():
                return None
            dim, node = self.row_dim, self.row_node(section)
        else:
            if self.col_dim is None:
                if role == Qt.ItemDataRole.DisplayRole:
                    return self.table.spec.response or "Frequency"
                return None
            if section >= self.columnCount():
                return None
            dim, node = self.col_dim, self.col_node(section)
        if role == Qt.ItemDataRole.DisplayRole:
            return self._node_text(dim, node)
        if role == NODE_ROLE:
            return node
        if role == Qt.ItemDataRole.TextAlignmentRole and orientation == Qt.Orientation.Vertical:
            return int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.FontRole and (node == 0 or self.views[dim].has_children(node)):
            f = QFont()
            f.setBold(True)
            return f
        if role == Qt.ItemDataRole.ToolTipRole:
            d = self.table.dims[dim]
            return f"{d.name}: {d.codes[node].strip()} — {d.label(node)}"
        return None
