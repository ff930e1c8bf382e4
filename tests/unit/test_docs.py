"""The docs a newcomer reads stay true: the generated references equal what docs/generate.py renders
from the code now, every relative link of the README and of docs/ leads to a file that exists, and
the README stays short and starts with the two commands."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = sorted([README, *(ROOT / "docs").glob("*.md"), *(ROOT / "docs" / "reference").glob("*.md")])
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _generator():
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def rendered() -> dict[Path, str]:
    return _generator().render()


def test_every_reference_page_is_generated(rendered):
    on_disk = set((ROOT / "docs" / "reference").glob("*.md"))
    assert on_disk == set(rendered), "docs/reference/ holds pages the generator does not make, or lacks some"


@pytest.mark.parametrize("name", ["config.md", "keys.md", "metrics.md", "summary-json.md"])
def test_reference_matches_the_code(rendered, name):
    path = ROOT / "docs" / "reference" / name
    assert path.read_text(encoding="utf-8") == rendered[path], (
        f"docs/reference/{name} differs from what the code gives: run python docs/generate.py")


def links(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)  # not in code blocks
    text = re.sub(r"`[^`\n]*`", "", text)
    return LINK.findall(text)


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as -."""
    out: set[str] = set()
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    for heading in re.findall(r"^#+\s+(.*)$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        n, base = 0, slug
        while slug in out:
            n += 1
            slug = f"{base}-{n}"
        out.add(slug)
    return out


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_lead_to_files(doc):
    bad = []
    for target in links(doc):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # a URL
        file, _, anchor = target.partition("#")
        dest = doc if not file else doc.parent / file
        if not dest.exists():
            bad.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(target + " (no such heading)")
    assert not bad, f"{doc.relative_to(ROOT)} links to files or headings that do not exist: {bad}"


def test_anchors_are_githubs(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("# Why `summary`'s hot path is compiled\n## `[thresholds]`\n## Notes\n## Notes\n")
    assert anchors(page) == {"why-summarys-hot-path-is-compiled", "thresholds", "notes", "notes-1"}


def test_the_link_finder_finds_links(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("see [a](a.md) and ![pic](img/x.svg), `[not](code.md)`, [web](https://x.org)\n"
                    "```\n[nor](block.md)\n```\n")
    assert links(page) == ["a.md", "img/x.svg", "https://x.org"]


def test_readme_is_short():
    n = len(README.read_text(encoding="utf-8").splitlines())
    assert n <= 200, f"README.md has {n} lines; at most 200 (the rest belongs in docs/)"


def test_readme_starts_with_the_two_commands():
    text = README.read_text(encoding="utf-8")
    block = re.search(r"```[^\n]*\n(.*?)```", text, re.S)
    assert block, "README.md has no command block"
    commands = [line.split("#", 1)[0].strip() for line in block.group(1).splitlines()]
    assert [c for c in commands if c][:2] == ["make demo", "make test"]
