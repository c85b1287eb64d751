"""MkDocs hooks of the documentation site (mkdocs.yml: ``hooks``), and a griffe extension for mkdocstrings.

- The site also serves files that live outside ``docs/``, where the scripts that make them write
  them: the results of ``benchmarks/reproduce.py`` (plots and per-row records, under ``results/``,
  so the generated reports' relative image links work when a page includes them) and the
  reference models' cards (``model_cards/``). Nothing is copied into the repository.
- A ```` ```python notest ```` fence (a block that tests/test_docs.py does not run) is shown as
  ```` ```python ````, also in files a page includes.
- ``ExampleSections``: the library's docstrings name their doctest section ``Example:``; Google
  style (griffe) reads ``Examples:`` as code, so the extension renames it when the API pages are built.
"""

from __future__ import annotations

import re
from pathlib import Path

import griffe
from markdown import Extension
from markdown.preprocessors import Preprocessor
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
# site folder -> (repository folder, file patterns)
OUTSIDE = {
    "results": (ROOT / "benchmarks" / "results", ("*.png", "reproduce/**/*.json")),
    "model_cards": (ROOT / "model_cards", ("*.md",)),
}
_NOTEST = re.compile(r"^(\s*(?:`{3,}|~{3,})\s*python)[ \t]+notest[ \t]*$")
_EXAMPLE = re.compile(r"^(\s*)Example:[ \t]*$", re.MULTILINE)


def on_config(config):
    config.markdown_extensions.append(_NotestFences())
    return config


def on_files(files: Files, config) -> Files:
    for site_dir, (folder, patterns) in OUTSIDE.items():
        for pattern in patterns:
            for path in sorted(folder.glob(pattern)):
                uri = f"{site_dir}/{path.relative_to(folder).as_posix()}"
                files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


class _NotestPreprocessor(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        return [_NOTEST.sub(r"\1", line) for line in lines]


class _NotestFences(Extension):
    def extendMarkdown(self, md) -> None:  # noqa: N802 (Python-Markdown's name)
        # after pymdownx.snippets (32) has included files, before any fence is read (31.05, 25)
        md.preprocessors.register(_NotestPreprocessor(md), "hf_numbers_notest", 31.5)


class ExampleSections(griffe.Extension):
    """Read a docstring's ``Example:`` section as Google style's ``Examples:``, so its ``>>>`` lines are code."""

    def on_instance(self, *, node, obj, agent, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _EXAMPLE.sub(r"\1Examples:", obj.docstring.value)
