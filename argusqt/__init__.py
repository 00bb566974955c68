"""argusqt: statistical disclosure control of tables, τ-Argus compatible, free solvers only."""

__version__ = "0.1.0"
