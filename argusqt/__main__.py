"""`python -m argusqt` = the `argusqt` console command."""

import sys

from argusqt.cli import main

sys.exit(main())
