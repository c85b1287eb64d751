"""The documentation: README.md and docs/ (the MkDocs site, mkdocs.yml).

- Every ```` ```python ```` block of README.md and docs/**/*.md (and of the files a page includes
  with ``--8<--``) runs: a page's blocks in order in one namespace, in a scratch folder, offline,
  as a reader would paste them. A block that cannot run there (minutes of training, the Hub) is
  marked ```` ```python notest ```` and is only compiled. Shell commands are ```` ```bash ```` and not run.
- ``mkdocs build --strict`` passes (a broken link, anchor, include or API reference fails it);
  skipped where the ``docs`` extra (mkdocs, mkdocs-material, mkdocstrings) is not installed.
- The API reference documents every public name of ``hf_numbers.modeling``; the README stays a front door, its
  links point at files that exist (the site's build does not read it), and its results table is the results page's.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import hf_numbers

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)\n", re.MULTILINE)
_INCLUDE = re.compile(r'^--8<-- "(?P<path>[^":]+)(?::(?P<where>[^"]*))?"[ \t]*$', re.MULTILINE)
_LINES = re.compile(r"(?P<start>\d*)(?::(?P<end>\d*))?")
_SECTION_MARKER = re.compile(r"--8<-- \[(?:start|end):[\w-]+\]")


def _expand_includes(text: str) -> str:
    """The page as the site shows it: pymdownx.snippets' ``--8<-- "path:start:end"`` and ``--8<-- "path:section"``
    lines replaced by those lines of the file, or by its section (between ``--8<-- [start:section]`` and
    ``--8<-- [end:section]`` markers, as in README.md's HTML comments); marker lines are left out, as snippets does."""

    def include(match: re.Match) -> str:
        lines = (ROOT / match["path"]).read_text(encoding="utf-8").splitlines()
        where = match["where"] or ""
        if lines_match := _LINES.fullmatch(where):
            start = int(lines_match["start"]) if lines_match["start"] else 1
            end = int(lines_match["end"]) if lines_match["end"] else len(lines)
            lines = lines[start - 1 : end]
        else:
            starts = [i for i, line in enumerate(lines) if f"--8<-- [start:{where}]" in line]
            ends = [i for i, line in enumerate(lines) if f"--8<-- [end:{where}]" in line]
            if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
                raise ValueError(f"{match['path']} has no single section {where!r} (--8<-- [start:{where}] ... end)")
            lines = lines[starts[0] + 1 : ends[0]]
        return "\n".join(line for line in lines if not _SECTION_MARKER.search(line))

    return _INCLUDE.sub(include, text)


def code_blocks(text: str) -> list[tuple[int, str, list[str], str]]:
    """``(line, language, options, code)`` of every fenced block of a Markdown text (indented blocks in lists too)."""
    blocks = []
    position = 0
    while match := _FENCE.search(text, position):
        indent, fence = match["indent"], match["fence"]
        closing = re.compile(rf"^{re.escape(indent)}{re.escape(fence)}[ \t]*$", re.MULTILINE)
        end = closing.search(text, match.end())
        if end is None:
            raise ValueError(f"line {text.count(chr(10), 0, match.start()) + 1}: a code fence that is never closed")
        body = text[match.end() : end.start()]
        code = "\n".join(line[len(indent) :] if line.startswith(indent) else line for line in body.splitlines())
        language, *options = match["info"].split() or [""]
        blocks.append((text.count("\n", 0, match.start()) + 1, language, options, code))
        position = end.end()
    return blocks


def python_blocks(page: Path) -> list[tuple[int, str, bool]]:
    """``(line, code, run)`` of the page's Python blocks; ``run`` is False for ``notest`` blocks."""
    text = _expand_includes(page.read_text(encoding="utf-8"))
    return [
        (line, code, "notest" not in options)
        for line, language, options, code in code_blocks(text)
        if language in ("python", "py", "python3")
    ]


RUNNABLE = [page for page in PAGES if any(run for *_, run in python_blocks(page))]


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("page", RUNNABLE, ids=_name)
def test_python_blocks_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    namespace: dict = {"__name__": "__main__"}
    for line, code, run in python_blocks(page):
        if not run:
            continue
        try:
            exec(compile(code, f"{_name(page)}:{line}", "exec"), namespace)  # noqa: S102
        except Exception as error:
            raise AssertionError(f"the Python block at {_name(page)}, line {line}, failed: {error!r}") from error


@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks(p)], ids=_name)
def test_python_blocks_compile(page: Path) -> None:
    """Blocks marked ``notest`` are still valid Python."""
    for line, code, _ in python_blocks(page):
        compile(code, f"{_name(page)}:{line}", "exec")


def test_few_blocks_are_not_run() -> None:
    skipped = [(_name(page), line) for page in PAGES for line, _, run in python_blocks(page) if not run]
    ran = [1 for page in PAGES for *_, run in python_blocks(page) if run]
    assert len(skipped) <= 5 and len(skipped) < len(ran) / 3, skipped


def test_code_block_reader() -> None:
    text = "a\n\n```python\nx = 1\n```\n\n- item\n\n    ```python notest\n    y = 2\n    ```\n\n```bash\nls\n```\n"
    assert code_blocks(text) == [
        (3, "python", [], "x = 1"),
        (9, "python", ["notest"], "y = 2"),
        (13, "bash", [], "ls"),
    ]


def test_readme_is_a_front_door() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    commands = [code for _, language, _, code in code_blocks(readme) if language == "bash"][0].splitlines()
    assert commands[0].startswith("bash scripts/setup.sh && .venv/bin/hf-numbers demo")
    assert commands[1].startswith("bash scripts/setup.sh && .venv/bin/python -m pytest -q")  # what CI runs


def backbone_table() -> list[str]:
    """README.md's backbone table, made from the pairs the tests run: the named backbones' (``MATRIX``,
    ``TEXT_MATRIX``, ``DIGIT_MATRIX``, tests/model_helpers.py) and the composed zoo's (``ZOO_MATRIX``)."""
    from model_helpers import DIGIT_ENCODINGS, DIGIT_MATRIX, ENCODINGS, MATRIX, TEXT_ENCODINGS, TEXT_MATRIX, ZOO_MATRIX

    tested = {*MATRIX, *TEXT_MATRIX, *DIGIT_MATRIX, *ZOO_MATRIX}
    columns = [*ENCODINGS, *DIGIT_ENCODINGS]
    texts = ", ".join(f"`{name}`" for name in TEXT_ENCODINGS)
    lines = [f"| backbone | class | kind | {' | '.join(f'`{name}`' for name in columns)} | text baselines ({texts}) |",
             f"| --- | --- | --- | {' | '.join(':---:' for _ in columns)} | :---: |"]  # fmt: skip
    names = [*hf_numbers.BACKBONES, *hf_numbers.ZOO]
    for name in names:
        spec = hf_numbers.get_backbone(name)
        label = f"{spec.display_name} (`{name}`)" if name in hf_numbers.BACKBONES else f"`{name}`"
        marks = ["✓" if (name, encoding) in tested else "" for encoding in columns]
        marks.append("✓" if all((name, encoding) in tested for encoding in TEXT_ENCODINGS) else "")
        kind = "causal" if spec.causal else "masked"
        lines.append(f"| {label} | `{spec.model_class.__name__}` | {kind} | {' | '.join(marks)} |")
    return lines


def test_the_readme_backbone_table_is_the_tested_matrix() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    expected = backbone_table()
    start = readme.index(expected[0]) if expected[0] in readme else None
    found = readme[start : start + len(expected) + 1] if start is not None else []
    assert found[: len(expected)] == expected and not found[-1].startswith("|"), (
        "README.md's backbone table is not the tested matrix; paste this one:\n" + "\n".join(expected)
    )


_LINK = re.compile(r"!?\[[^\]]*\]\((?P<target>[^)\s]+)\)")


def relative_link_targets(text: str) -> list[str]:
    """The targets of a Markdown text's links and images that are files of the repository (no URL, no anchor)."""
    targets = [match["target"].partition("#")[0] for match in _LINK.finditer(text)]
    return [target for target in targets if target and not re.match(r"[a-z][a-z0-9+.-]*:", target)]


def test_readme_links_point_at_files_that_exist() -> None:
    """README.md is not part of the site, so ``mkdocs build --strict`` does not check its links: this does."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = relative_link_targets(readme)
    assert "docs/contributing.md" in targets
    assert [target for target in targets if not (ROOT / target).exists()] == []


def test_relative_links_are_found() -> None:
    text = "[a](docs/a.md#x) ![p](b.png) [w](https://x.org/y) [s](#here) [m](mailto:x@y.z)"
    assert relative_link_targets(text) == ["docs/a.md", "b.png"]


def results_table(page: Path) -> list[str]:
    """The rows of a page's results table (``| task | hf_numbers | paper | page |``), each link's target
    written as the repository path it points at, so that tables on pages in different folders compare."""
    lines = page.read_text(encoding="utf-8").splitlines()
    start = lines.index("| task | hf_numbers | paper | page |")
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append(_LINK.sub(lambda m: m[0].replace(m["target"], _repository_path(page, m["target"])), line))
    return rows


def _repository_path(page: Path, target: str) -> str:
    return os.path.relpath((page.parent / target).resolve(), ROOT) if "://" not in target else target


def test_the_results_table_is_the_same_in_the_readme_and_the_results_page() -> None:
    """README.md's results table is the source; docs/results/index.md holds the same rows (its links are relative
    to docs/results/, so the site cannot include the README's table as it is)."""
    readme_rows = results_table(ROOT / "README.md")
    assert len(readme_rows) > 2
    assert results_table(ROOT / "docs/results/index.md") == readme_rows


def test_api_reference_covers_the_public_api() -> None:
    modeling_page = (ROOT / "docs/api/modeling.md").read_text()
    documented = set(re.findall(r"^::: hf_numbers\.modeling\.(\w+)$", modeling_page, re.MULTILINE))
    assert documented == set(hf_numbers.modeling.__all__)
    for module in ("data", "training", "evaluation"):
        assert f"::: hf_numbers.{module}\n" in (ROOT / f"docs/api/{module}.md").read_text()


def test_every_page_is_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = {page.relative_to(ROOT / "docs").as_posix() for page in PAGES[1:]}
    assert {page for page in pages if page not in nav} == set()


@pytest.mark.skipif(
    not all(importlib.util.find_spec(name) for name in ("mkdocs", "material", "mkdocstrings_handlers")),
    reason="the docs extra is not installed (pip install -e '.[docs]'): mkdocs, mkdocs-material, mkdocstrings[python]",
)
def test_site_builds_strict(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    for page in ("index.html", "api/modeling/index.html", "results/scientific/index.html"):
        assert (tmp_path / "site" / page).is_file()
    assert (tmp_path / "site/results/reproduction_orbits_a1_ood.png").is_file()  # served from benchmarks/results/
