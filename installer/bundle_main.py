"""Entry of the bundled program: argusqt's command line (GUI, `batch`, `--version`), plus
`--check-help`, the bundle's offline Help self-check (scripts/check_installed_help.py)."""

from __future__ import annotations

import sys


def main() -> int:
    """Dispatch: `--check-help [--shots DIR]` checks Help inside the bundle; all else is argusqt."""
    if sys.argv[1:2] == ["--check-help"]:
        import check_installed_help

        sys.argv = [sys.argv[0], *sys.argv[2:]]
        return check_installed_help.main()
    from argusqt.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
