"""The user pages ship inside the package, and every reference to them points at a section
that exists (argusqt/docs/…); the project's private working notes are never cited; the
developer pages (docs/, docs/dev/) link only to files and headings that exist."""

from __future__ import annotations

import fnmatch
import re
import sys
import tomllib
from pathlib import Path

import argusqt
from argusqt.docs import DOCS_DIR, PAGES, USER_GUIDE

ROOT = Path(__file__).resolve().parents[1]
#: Where references are checked: the package, the developer docs, tests and benchmarks.
SCANNED = ("argusqt", "docs", "tests", "benchmarks", "scripts", "README.md")
SUFFIXES = {".py", ".md", ".sh", ".toml", ".txt"}
THIS = Path(__file__).resolve()

#: A page name: `formats.md` etc.; examples.md belongs to the private notes, never shipped.
PAGE_NAME = re.compile(r"\b(formats|rules|methods|examples|user_guide)\.md\b")
#: What a § refers to: a page (by path or as a Markdown link) or the τ-Argus manual.
ATTRIBUTION = re.compile(
    r"(?:argusqt/docs/|\]\()(?P<page>formats|rules|methods|user_guide)\.md|(?P<manual>manual)"
)
SECTION = re.compile(r"§\s*(\d+(?:\.\d+)*)(?:\s*[–-]\s*(\d+(?:\.\d+)*))?")
HEADING = re.compile(r"^#{2,4}\s+(\d+(?:\.\d+)*)\.?\s", re.MULTILINE)
PRIVATE = re.compile(r"shared/spec|\.\./spec/")


def _files() -> list[Path]:
    out: list[Path] = []
    for name in SCANNED:
        p = ROOT / name
        if p.is_file():
            out.append(p)
        elif p.is_dir():
            out += [
                f
                for f in sorted(p.rglob("*"))
                if f.suffix in SUFFIXES and f.is_file() and "__pycache__" not in f.parts
            ]
    return [f for f in out if f.resolve() != THIS]


def _sections(page: str) -> set[str]:
    return set(HEADING.findall((DOCS_DIR / f"{page}.md").read_text(encoding="utf-8")))


def _qualified(line: str, start: int, end: int) -> bool:
    """A page name with its path, or a bare file name in quotes (code naming the file)."""
    if line[:start].endswith("argusqt/docs/"):
        return True
    quote = line[start - 1 : start]
    return quote in ("'", '"') and line[end : end + 1] == quote


def _problems(path: Path) -> list[str]:
    """Every reference in `path` that is not to an existing section of a shipped page."""
    own = path.stem if path.parent == DOCS_DIR else None
    return _problems_in(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)), own)


def _problems_in(text: str, label: str, own_page: str | None) -> list[str]:
    """`own_page`: the page this text is (its bare § and sibling links are its own)."""
    found: list[str] = []
    for no, line in enumerate(text.splitlines(), start=1):
        where = f"{label}:{no}"
        if PRIVATE.search(line):
            found.append(f"{where}: cites the private spec folder: {line.strip()}")
        for m in PAGE_NAME.finditer(line):
            if m.group(1) == "examples":
                found.append(f"{where}: examples.md is not a page of ours: {line.strip()}")
            elif not (own_page or _qualified(line, m.start(), m.end())):
                found.append(f"{where}: {m.group(0)} without its path argusqt/docs/")
        for m in SECTION.finditer(line):
            before = list(ATTRIBUTION.finditer(line[: m.start()]))
            if before and before[-1].group("manual"):
                continue  # a section of the τ-Argus manual
            page = before[-1].group("page") if before else own_page
            if page is None:
                found.append(f"{where}: '{m.group(0)}' does not say which page")
                continue
            known = _sections(page)
            for number in filter(None, m.groups()):
                if number not in known:
                    found.append(f"{where}: {page}.md has no section {number}")
    return found


def test_references_point_at_existing_sections_of_shipped_pages():
    problems = [p for f in _files() for p in _problems(f)]
    assert not problems, "\n".join(problems)


def test_the_checker_accepts_our_references_and_refuses_the_others():
    good = "See argusqt/docs/formats.md §8.5, §9.3 and argusqt/docs/rules.md §2–5; manual §4.4.4."
    assert _problems_in(good, "good.py", None) == []
    assert _problems_in('text = (DOCS_DIR / "formats.md").read_text()', "code.py", None) == []
    in_page = "Bare §1.3 and §9 here, [rules.md](rules.md) §3.8 there."
    assert _problems_in(in_page, "methods.md", "methods") == []
    bad = (
        "formats.md §8.5; ../shared/spec/rules.md; examples.md E8; a bare §3;\n"
        "argusqt/docs/methods.md §99."
    )
    found = "\n".join(_problems_in(bad, "bad.py", None))
    for what in (
        "formats.md without its path",
        "private spec folder",
        "examples.md is not a page",
        "'§3' does not say which page",
        "methods.md has no section 99",
    ):
        assert what in found, found


def test_pages_are_package_data_of_argusqt_docs():
    """`pip install .` carries every page and picture: they are package data of argusqt.docs."""
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    setup = cfg["tool"]["setuptools"]
    assert any(fnmatch.fnmatch("argusqt.docs", p) for p in setup["packages"]["find"]["include"])
    patterns = setup["package-data"]["argusqt.docs"]
    assert DOCS_DIR == Path(argusqt.__file__).resolve().parent / "docs"
    assert (DOCS_DIR / "__init__.py").exists()
    shipped = [
        f.relative_to(DOCS_DIR).as_posix()
        for f in DOCS_DIR.rglob("*")
        if f.is_file() and f.suffix in (".md", ".png")
    ]
    for name in PAGES:
        assert name in shipped, f"{name} is missing from argusqt/docs"
    for name in shipped:
        assert any(fnmatch.fnmatch(name, p) for p in patterns), f"{name} would not ship"


def test_user_guide_is_the_shipped_page_and_its_links_resolve():
    assert USER_GUIDE == DOCS_DIR / "user_guide.md"
    for page in PAGES:
        text = (DOCS_DIR / page).read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if "://" in target:
                continue
            assert (DOCS_DIR / target).exists(), f"{page} links to missing {target}"


def test_developer_index_links_to_every_page():
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    for page in PAGES:
        assert f"../argusqt/docs/{page}" in index


#: The developer pages (docs/dev/) and the index that links them.
DEV_DOCS = ROOT / "docs" / "dev"
DEV_PAGES = ("architecture.md", "adding_a_method.md", "testing.md")
#: A Markdown link: its target, and its #anchor if any.
LINK = re.compile(r"\]\((?P<target>[^)#\s]*)(?:#(?P<anchor>[^)\s]*))?\)")


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces → -."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    """The headings' anchors and the explicit ones (`<a id="d-17"></a>`, design.md's records)."""
    text = page.read_text(encoding="utf-8")
    slugs = {_slug(h) for h in re.findall(r"^#{1,6}\s+(.+?)\s*$", text, re.MULTILINE)}
    return slugs | set(re.findall(r'<a id="([^"]+)"></a>', text))


def _link_problems(page: Path) -> list[str]:
    """Every relative link of `page` whose file, or whose heading in a Markdown file, is missing."""
    found: list[str] = []
    text = page.read_text(encoding="utf-8")
    for no, line in enumerate(text.splitlines(), start=1):
        for m in LINK.finditer(line):
            target, anchor = m.group("target"), m.group("anchor")
            if "://" in target or target.startswith("mailto:"):
                continue
            dest = (page.parent / target).resolve() if target else page
            where = f"{page.relative_to(ROOT)}:{no}"
            if not dest.exists():
                found.append(f"{where}: links to missing {target}")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                found.append(f"{where}: {target or page.name} has no heading #{anchor}")
    return found


def test_developer_pages_exist_and_the_index_links_them():
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    for name in DEV_PAGES:
        assert (DEV_DOCS / name).is_file(), f"docs/dev/{name} is missing"
        assert f"dev/{name}" in index, f"docs/README.md does not link docs/dev/{name}"


def test_developer_pages_links_resolve():
    """docs/*.md and docs/dev/*.md: relative links reach a file, anchors a heading of it (their
    § references are checked with the rest by the first test of this file)."""
    pages = sorted((ROOT / "docs").glob("*.md")) + sorted(DEV_DOCS.glob("*.md"))
    assert DEV_DOCS / "architecture.md" in pages
    problems = [p for page in pages for p in _link_problems(page)]
    assert not problems, "\n".join(problems)


def test_the_link_checker_refuses_missing_files_and_headings(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "other.md").write_text("# Title\n\n## Layers (`a/b.py`, issue 1)\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#layers-abpy-issue-1) [top](other.md#title) [web](https://x.org/y)\n"
        "[gone](missing.md) [bad](other.md#nowhere) [self](#here)\n## Here\n"
    )
    found = "\n".join(_link_problems(page))
    assert "page.md:2: links to missing missing.md" in found
    assert "other.md has no heading #nowhere" in found
    assert found.count("page.md") == 2, found


#: A citation of a decision record: "docs/design.md, D-17" (also "design.md, D-3 and D-9").
RECORD_CITE = re.compile(r"design\.md,\s*((?:D-\d+(?:\s*(?:,|and|–|-)\s*)?)+)")
RECORD_HEADING = re.compile(r'^<a id="d-(\d+)"></a>\s*\n\s*\n## D-(\d+)\. ', re.MULTILINE)


def _records() -> set[int]:
    """The numbers of design.md's decision records (anchor and heading agree)."""
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    pairs = RECORD_HEADING.findall(text)
    assert all(a == b for a, b in pairs), f"anchor and heading differ: {pairs}"
    return {int(a) for a, _ in pairs}


def _citation_problems(text: str, label: str, records: set[int]) -> list[str]:
    found = []
    for no, line in enumerate(text.splitlines(), start=1):
        for m in RECORD_CITE.finditer(line):
            for n in re.findall(r"D-(\d+)", m.group(1)):
                if int(n) not in records:
                    found.append(f"{label}:{no}: cites D-{n}, which design.md does not have")
    return found


def test_design_records_are_numbered_in_order_and_indexed():
    """One record per decision, D-1 … D-n without gaps, each in the index at the top."""
    records = _records()
    assert records == set(range(1, len(records) + 1)), sorted(records)
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    index = text[: text.index('<a id="d-1">')]
    assert all(f"[D-{n}](#d-{n})" in index for n in records)
    for n in records:  # each record says when it was decided and where it stands
        body = text[text.index(f'<a id="d-{n}">') :].split("\n", 5)[4]
        assert re.match(r"\*20\d\d-\d\d-\d\d · \S", body), f"D-{n}: {body!r}"


def test_every_cited_design_record_exists():
    """Code comments and pages cite records ("docs/design.md, D-17"), not measurements."""
    records = _records()
    problems = [
        p
        for path in _files() + [ROOT / "pyproject.toml"]
        for p in _citation_problems(
            path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)), records
        )
    ]
    assert not problems, "\n".join(problems)


def test_the_citation_checker_refuses_a_missing_record():
    text = "# see docs/design.md, D-2\n# docs/design.md, D-1 and D-7\n"
    assert _citation_problems(text, "x.py", {1, 2}) == [
        "x.py:2: cites D-7, which design.md does not have"
    ]
