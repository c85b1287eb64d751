"""benchmarks/bench_peers.py runs end to end (``--quick``: tiny models, a few steps) where x-transformers is installed.

x-transformers is an optional benchmark dependency (setup.cfg's ``bench`` extra); without it the test skips.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hf_numbers import BACKBONES

ROOT = Path(__file__).parents[1]


def test_quick_run_trains_both_models_with_both_losses(tmp_path: Path) -> None:
    pytest.importorskip("x_transformers")
    backbone = next(name for name, spec in BACKBONES.items() if spec.causal)
    results = tmp_path / "peers"
    command = [sys.executable, "benchmarks/bench_peers.py", "--quick", "--tasks", "mult3", "--backbones", backbone,
               "--loss", "answer", "every", "--results", str(results)]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's hf_numbers, as pytest imports it
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    records = [json.loads(path.read_text()) for path in sorted(results.glob("*.json"))]
    assert [record["loss"] for record in records] == ["answer", "every"]
    assert {record["hf_step"] for record in records} == {"loss_only"}  # the training loop's step by default
    for record in records:
        for label in ("hf_numbers", "x-transformers"):
            assert record[label]["steps_per_cpu_s"] > 0 and 0.0 <= record[label]["invalid_rate"] <= 1.0
    table = results.with_suffix(".md").read_text()
    assert table.count(f"| mult3 | {backbone} |") == 2 and "bench_peers.py --quick" in table
