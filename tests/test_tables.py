"""The two tables drive the code and the tests: no code compares backbone or encoding names, and an encoding
registered as docs/design.md says ("Adding an encoding") runs the test matrix with no test edited."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from model_helpers import CAUSAL, ENCODINGS, MASKED
from throwaway_encoding import NAME

from hf_numbers import BACKBONES

REPO = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent

# ---------------------------------------------------------------------- no code compares names
SEARCHED = ("hf_numbers", "tests", "benchmarks", "examples")
TABLES = {REPO / "hf_numbers" / "modeling" / "backbones.py", REPO / "hf_numbers" / "modeling" / "encoding_registry.py"}
"""The tables themselves, where the names are defined."""


def comparison_pattern(names: list[str]) -> re.Pattern[str]:
    """A comparison with one of ``names`` in quotes, either side of ``==`` or ``!=``."""
    alternatives = "|".join(re.escape(name) for name in names)
    return re.compile(rf"""[=!]=\s*(["'])(?:{alternatives})\1|(["'])(?:{alternatives})\2\s*[=!]=""")


def name_comparisons(names: list[str]) -> list[str]:
    """``file:line: text`` of every line outside the tables that compares something with one of ``names``:
    what ``grep -rnE '== "(gpt2|bert|...)"' hf_numbers tests benchmarks`` finds, and more."""
    pattern = comparison_pattern(names)
    found = []
    for folder in SEARCHED:
        for path in sorted((REPO / folder).rglob("*")):
            if not path.is_file() or path in TABLES or "__pycache__" in path.parts:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:  # a binary file
                continue
            found += [f"{path.relative_to(REPO)}:{number}: {line.strip()}"
                      for number, line in enumerate(text.splitlines(), 1) if pattern.search(line)]  # fmt: skip
    return found


def test_no_code_compares_a_backbone_or_encoding_name() -> None:
    """Code asks the table (``spec.causal``, ``spec.size_fields``) or the registry (``needs_scaling``, ...)."""
    assert name_comparisons([*BACKBONES, *ENCODINGS]) == []


def test_the_search_finds_comparisons_either_way_with_either_quotes() -> None:
    pattern = comparison_pattern(["alpha", "beta"])
    found = ['if backbone == "alpha":', "ok = encoding != 'beta'", 'if "alpha" == name:', "x=='beta'"]
    missed = ['name = "alpha"', 'x == "alphabet"', "x == 'alpha\"", 'f("alpha") or beta == 1']
    assert [line for line in found + missed if pattern.search(line)] == found


# ---------------------------------------------------------------------- adding an encoding
MATRIX_FILES = ("test_modeling.py", "test_generation.py", "test_number_scaling.py", "test_mixed_precision.py",
                "test_encodings.py", "test_text_models.py", "test_docs.py")  # fmt: skip
SELECTION = (
    f"({NAME} and not remote)"  # the matrix's cases of the new encoding; remote code: see the test's docstring
    " or test_encodings.py or test_number_scaling.py"  # every test of the encodings and of scaling: all of them
    " or test_config_validation_is_strict or test_the_matrix_is_every_backbone"  # tests that list the registry
    " or test_python_blocks_run"  # the docs' examples (README.md, docs/), which print or assert on the registry
)
CORE_CHECKS = {
    "test_forward_shapes_loss_and_backward": list(BACKBONES),
    "test_a_few_steps_lower_the_loss": list(BACKBONES),
    "test_save_and_load_give_identical_outputs": list(BACKBONES),
    "test_the_model_applies_its_scaling_to_inputs_labels_and_predictions": list(BACKBONES),  # it needs scaling
    "test_generate_returns_numbers_aligned_and_fed_back": CAUSAL,
    "test_greedy_generation_is_the_same_with_and_without_cache": CAUSAL,
    "test_fill_mask_fills_tokens_and_numbers": MASKED,
}
"""The checks every backbone must pass with the new encoding: forward, loss and backward, a few steps, save and
load, the scaling applied inside the model, and generation (causal) or fill-mask (masked)."""


def run_tests_with_the_throwaway_encoding(tmp_path: Path) -> tuple[subprocess.CompletedProcess, ElementTree.Element]:
    """pytest in a fresh interpreter with ``-p throwaway_encoding``; its result and its JUnit report."""
    report = tmp_path / "report.xml"
    python_path = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "pytest", "-p", "throwaway_encoding", "-p", "no:cacheprovider", "-q", "-n", "0",
               "--basetemp", str(tmp_path / "basetemp"), "--junitxml", str(report), "-k", SELECTION,
               *(str(TESTS / name) for name in MATRIX_FILES)]  # fmt: skip
    result = subprocess.run(command, cwd=REPO, env=dict(os.environ, PYTHONPATH=python_path), capture_output=True,
                            text=True, timeout=600)  # fmt: skip
    return result, ElementTree.parse(report).getroot() if report.exists() else ElementTree.Element("none")


def test_a_registered_encoding_runs_the_matrix_on_every_backbone_with_no_test_edited(tmp_path: Path) -> None:
    """``tests/throwaway_encoding.py`` adds an encoding as docs/design.md says (a subclass with its own name and
    option, one registry entry) before the configs are built, which only a fresh interpreter allows (the configs'
    option fields come from the registry when their classes are created). The matrix then runs it on every
    backbone, and the tests that read the registry, the docs' code blocks among them, pass unchanged.

    Remote code is left out: a checkpoint carries the code of ``hf_numbers/modeling/``, where a real encoding
    lives, not a test's; ``test_remote_code_load_in_a_fresh_interpreter`` covers every registered one.
    """
    result, report = run_tests_with_the_throwaway_encoding(tmp_path)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    passed = {
        case.get("name")
        for case in report.iter("testcase")
        if not any(child.tag in ("failure", "error", "skipped") for child in case)
    }
    for check, backbones in CORE_CHECKS.items():
        for backbone in backbones:
            ran = [name for name in passed if name.startswith(f"{check}[") and {NAME, backbone} <= params(name)]
            assert ran, f"{check} did not pass for {backbone} with the {NAME!r} encoding"
    assert "test_registry_names_and_options_are_the_config_fields" in passed  # its option is a config field
    assert "test_unknown_encoding_is_a_value_error" in passed  # the registry's names, the new one included
    assert "test_python_blocks_run[docs/contributing.md]" in passed  # the docs' blocks that read the registry


def params(test_name: str) -> set[str]:
    """The parameter ids of a parametrised test's name (``"t[gpt2-xval]"`` -> ``{"gpt2", "xval"}``)."""
    return set(test_name.partition("[")[2].rstrip("]").split("-"))
