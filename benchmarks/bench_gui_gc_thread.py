"""Where Python's cyclic GC frees GUI-thread widgets while a GUI job runs, and how often it crashes.

Each run (a fresh process) leaves cyclic garbage holding live Qt widgets on the GUI thread,
then runs core-like jobs (pandas Series.where, object churn) on the GUI worker through
argusqt's JobRunner. Prints, per run, how many widget holders were freed on the GUI thread
and off it, and whether the process crashed. Usage:

    python benchmarks/bench_gui_gc_thread.py [RUNS] [ROUNDS]

Run it from a checkout (the argusqt of the current folder is used).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import sys, threading
from PySide6.QtWidgets import QApplication, QLabel, QTableView, QWidget
from argusqt.gui.jobs import JobRunner

app = QApplication([])
runner = JobRunner(QWidget())
freed_on = []

class Holder:
    def __init__(self):
        self.me = self            # a reference cycle: only the cyclic GC frees it
        self.view = QTableView()  # GUI-thread widgets owned by Python
        self.view.show()
        self.label = QLabel("x")
    def __del__(self):
        freed_on.append(threading.get_ident())

def job(progress, cancel):
    import numpy as np
    import pandas as pd
    for _ in range(20):
        s = pd.Series(np.arange(200_000).astype(str), dtype=object)
        s.where(s.str.len() > 3, s.str[1:])
        class C: pass
        for _ in range(20_000):
            c = C(); c.me = c
    return threading.get_ident()

for _ in range(int(sys.argv[1])):
    for _ in range(50):
        Holder()
    done = []
    runner.start("job", job, done.append, show_dialog=False)
    while not done:
        app.processEvents()
gui = threading.get_ident()
print(sum(t == gui for t in freed_on), sum(t != gui for t in freed_on))
"""


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    rounds = sys.argv[2] if len(sys.argv) > 2 else "5"
    root = Path.cwd()
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(root))
    crashes = 0
    print(f"{'run':>4} {'exit':>5} {'freed on GUI thread':>20} {'freed off it':>13}")
    for k in range(1, runs + 1):
        p = subprocess.run(
            [sys.executable, "-c", CHILD, rounds], env=env, capture_output=True, text=True
        )
        crashes += p.returncode != 0
        on, off = (p.stdout.split() + ["-", "-"])[:2]
        print(f"{k:>4} {p.returncode:>5} {on:>20} {off:>13}")
    print(f"crashed {crashes} of {runs} runs")


if __name__ == "__main__":
    main()
