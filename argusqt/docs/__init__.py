"""The user documentation, shipped inside the package so Help works offline (docs/design.md).

Pages are Markdown files in this folder: the user guide and the reference pages on file
formats, sensitivity rules and protection methods that the code cites by section.
"""

from __future__ import annotations

from pathlib import Path

#: Folder of the shipped pages (and of the screenshots the user guide shows).
DOCS_DIR = Path(__file__).resolve().parent
#: The page Help → User guide opens.
USER_GUIDE = DOCS_DIR / "user_guide.md"
#: The project's web site for Help → Online. argusqt has none yet: None makes Help → Online
#: open the shipped guide and say so (never another project's page).
PROJECT_URL: str | None = None
#: Every page the package ships, by file name.
PAGES = ("user_guide.md", "formats.md", "rules.md", "methods.md")
