"""The scientific suite: xVal's look-up (appendix B.6), planets (Table 5) and temperature (Table 4).

Every encoding at one model size and budget; the report puts the paper's values beside ours, plots
predictions on the out-of-distribution splits, and compares temperature with the persistence baseline.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from .common import Row, _minutes, _num, _pct, _result_cell, _sci, _split_cell, report_note, run_data

SCIENTIFIC_ENCODINGS = ("xval", "fone", "float", "exponent", "p10", "p1000", "fp15", "text")
SCIENTIFIC_SIZE = [
    "--hidden_size",
    "128",
    "--num_layers",
    "4",
    "--num_heads",
    "4",
    "--max_steps",
    "2000",
    "--per_device_train_batch_size",
    "64",
    "--data_seed",
    "1",
]
# The planets at CPU scale: 2 planets, the first 4 positions of each series, 2 decimals, 4,000 systems
# (with 8 positions a system is 179 tokens with xVal, 335 with P10, and xVal took 1.3 s a step on one thread);
# held-out step sizes (0.40, 0.60) and first semi-major axes (2.0, 2.4): gaps inside the training ranges.
ORBITS_OPTIONS = [
    "num_planets=(2,2)",
    "max_times=4",
    "decimals=2",
    "heldout_stepsize=(0.40,0.60)",
    "heldout_a1=(2.0,2.4)",
    "train_size=4000",
    "validation_size=200",
    "test_size=200",
    "test_ood_a1_size=200",
    "test_ood_stepsize_size=200",
]
ORBIT_TARGETS = {"stepsize": "test_ood_stepsize", "a1": "test_ood_a1"}
# The planets model is trained once per encoding, by the a1 row: the target only marks which number of the
# description is asked at evaluation (training masks numbers at random), so a step-size row trained alone
# ends with the same weights (measured: byte-identical `text` models); the step-size rows evaluate it.
ORBITS_TRAINED_TARGET = "a1"
# xVal Table 5 (MSE; OoD = held-out values of that parameter) and appendix Tables 11-12 (look-up).
PAPER_ORBITS = {
    "p10": {"a1": 7.6e-4, "a1_ood": 0.0076, "stepsize": 0.0, "stepsize_ood": 0.0036},
    "p1000": {"a1": 4.5e-6, "a1_ood": 0.048, "stepsize": 0.0, "stepsize_ood": 0.011},
    "fp15": {"a1": 4.0e-6, "a1_ood": 0.050, "stepsize": 0.0065, "stepsize_ood": 0.0075},
    "xval": {"a1": 6.4e-5, "a1_ood": 0.0010, "stepsize": 6.6e-5, "stepsize_ood": 0.0021},
}
PAPER_LOOKUP = {
    "p10": {"mse": 2.1e-2, "acc3": 0.91, "mse_ood": 3.8e-1, "acc3_ood": 0.657},
    "fp15": {"mse": 7e-3, "acc3": 0.999, "mse_ood": 0.9e-1, "acc3_ood": 0.345},
    "xval": {"mse": 3e-3, "acc3": 0.06, "mse_ood": 3.5e-3, "acc3_ood": 0.015},
}
# The look-up details of a row's record (see _lookup_details), in the order of the table's last cells.
LOOKUP_DETAIL_CELLS = (
    ("test_mse_to_dict_mean", _sci),
    ("test_sign_right", _pct),
    ("test_sign_and_integer_right", _pct),
)
TEMPERATURE_ENCODINGS = ("xval", "fp15", "p1000")
LARGE_TEMPERATURE_ERROR = 2.0  # °F: an error the persistence reference (1.1 °F RMS) rarely makes


def _note(name: str, **fields: Any) -> str:
    """The report's prose note ``name`` (``notes/scientific.md``)."""
    return report_note("scientific", name, **fields)


def scientific_rows() -> list[Row]:
    """Look-up (xVal B.6), planets (Table 5) and temperature (Table 4), every encoding at one size and budget."""
    rows = []
    for encoding in SCIENTIFIC_ENCODINGS:
        argv = (
            "--task",
            "lookup",
            "--number_encoding",
            encoding,
            "--train_size",
            "10000",
            "--eval_size",
            "500",
            *SCIENTIFIC_SIZE,
        )
        details = _with_predictions(_lookup_details, "test_ood")
        rows.append(Row(f"lookup-{encoding}", argv, {"task": "lookup", "encoding": encoding}, details))
    for target in ORBIT_TARGETS:
        for encoding in SCIENTIFIC_ENCODINGS:
            options = ("--task_options", f"target={target}", *ORBITS_OPTIONS, "--max_length", "512")
            cell = {"task": f"orbits-{target}", "encoding": encoding}
            details = _with_predictions(None, ORBIT_TARGETS[target])
            if target == ORBITS_TRAINED_TARGET:
                argv = ("--task", "orbits", "--number_encoding", encoding, *options, *SCIENTIFIC_SIZE)
                rows.append(Row(f"orbits-{target}-{encoding}", argv, cell, details))
            else:  # masked number inference trains the same model whatever the target: ask that model
                argv = ("--task", "orbits", *options, "--seed", str(_suite_seed()))
                model_of = f"orbits-{ORBITS_TRAINED_TARGET}-{encoding}"
                rows.append(Row(f"orbits-{target}-{encoding}", argv, cell, details, model_of=model_of))
    for encoding in TEMPERATURE_ENCODINGS:
        argv = ("--task", "temperature", "--number_encoding", encoding, "--max_length", "1024", *SCIENTIFIC_SIZE)
        cell = {"task": "temperature", "encoding": encoding}
        rows.append(Row(f"temperature-{encoding}", argv, cell, _with_predictions(None, "test")))
    return rows


def _predicted_values(predictions: list[float | None]) -> np.ndarray:
    """A split's recorded predictions as floats, NaN where the answer was invalid (recorded as None)."""
    return np.array([np.nan if p is None else p for p in predictions], dtype=float)


def _lookup_details(run_dir: Path) -> dict[str, Any]:
    """Per split, the MSE between the predictions and the mean of the dictionary's values; on the test
    split, the share of valid predictions with the answer's sign and with its sign and integer part.

    An MSE to the mean near 0 while the MSE to the answer is large: the model averages the dictionary
    instead of looking the queried key up. The sign and integer part show a lookup learned in part (the
    first pieces of the value, not its digits). The run's own data (``training_args.json``) gives the
    dictionaries.
    """
    data = run_data(run_dir, "lookup")
    predictions = json.loads((run_dir / "predictions.json").read_text())
    details = {}
    for split in ("test", "test_ood"):
        predicted = _predicted_values(predictions[split]["predictions"])
        means = np.array([np.mean(values) for values in data[split]["values"]])
        valid = ~np.isnan(predicted)
        details[f"{split}_mse_to_dict_mean"] = float(np.mean((predicted[valid] - means[valid]) ** 2))
        if split == "test":
            written, answers = predicted[valid], np.asarray(predictions[split]["references"], dtype=float)[valid]
            sign = np.sign(written) == np.sign(answers)
            details["test_sign_right"] = float(np.mean(sign))
            details["test_sign_and_integer_right"] = float(np.mean(sign & (np.trunc(written) == np.trunc(answers))))
    return details


def _record_cell(result: dict[str, Any] | None, key: str, fmt: Callable[[float | None], str]) -> str:
    """A value a row's details put in its record, formatted; "-" if the row has no record or ran before
    its details recorded that value."""
    return "-" if result is None or key not in result else fmt(result[key])


def _with_predictions(
    details: Callable[[Path], dict[str, Any]] | None, *splits: str
) -> Callable[[Path], dict[str, Any]]:
    """A row's details: those of ``details`` (if any) and the run's predictions and references on ``splits``.

    The held-out table, the error cells and the plots read the predictions from the row's record, so a
    fresh clone rebuilds the whole report with ``--report_only`` (``runs/`` is not committed).
    """

    def read(run_dir: Path) -> dict[str, Any]:
        saved = json.loads((run_dir / "predictions.json").read_text())
        kept = {split: {key: saved[split][key] for key in ("predictions", "references")} for split in splits}
        return (details(run_dir) if details is not None else {}) | {"predictions": kept}

    return read


def _saved_predictions(results: dict[str, dict[str, Any]], name: str) -> dict[str, Any] | None:
    """The predictions kept in row ``name``'s record, or None if the row has no record, failed, or ran
    before records kept them (see :func:`_missing_predictions`)."""
    result = results.get(name)
    if result is None or result.get("error"):
        return None
    return result.get("predictions")


def _missing_predictions(results: dict[str, dict[str, Any]]) -> list[str]:
    """A sentence naming the finished rows whose record keeps no predictions (they ran before records kept
    them), so the report says why they are absent from the held-out table, the plots and the error cells."""
    names = sorted(n for n, r in results.items() if not r.get("error") and "predictions" not in r)
    if not names:
        return []
    return ["", _note("missing_predictions", names=", ".join(f"`{n}`" for n in names))]


def _plot_ood(results: dict[str, dict[str, Any]], rows: list[str], split: str, path: Path, title: str) -> bool:
    """Prediction against the true value on an OoD split, one panel per encoding (xVal Fig. 5 style)."""
    found = []
    for name in rows:
        saved = _saved_predictions(results, name)
        if saved is not None:
            found.append((name, saved[split]))
    if not found:
        path.unlink(missing_ok=True)  # a plot of rows no record keeps predictions of would be stale
        return False
    figure, axes = plt.subplots(1, len(found), figsize=(2.6 * len(found), 2.8), sharex=True, sharey=True)
    for axis, (name, data) in zip(np.atleast_1d(axes), found):
        refs = np.array(data["references"], dtype=float)
        preds = _predicted_values(data["predictions"])
        axis.scatter(refs, preds, s=6, alpha=0.6)
        low, high = np.nanmin(refs), np.nanmax(refs)
        axis.plot([low, high], [low, high], color="grey", linewidth=0.8)
        axis.set_title(name.rsplit("-", 1)[-1], fontsize=9)
        axis.set_xlabel("true")
    np.atleast_1d(axes)[0].set_ylabel("predicted")
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return True


def scientific_report(results: dict[str, dict[str, Any]], out: Path) -> list[str]:
    """Markdown of the scientific suite: look-up, planets and temperature, with the paper's values beside."""
    lines = ["## Look-up, planets and temperature (Golkar et al., appendix B.6, Tables 5 and 4)", ""]
    lines += [_note("intro", size=" ".join(SCIENTIFIC_SIZE)), *_missing_predictions(results), ""]
    return lines + _lookup_section(results, out) + _planets_section(results, out) + _temperature_section(results)


def _lookup_section(results: dict[str, dict[str, Any]], out: Path) -> list[str]:
    """The look-up table (in and out of the training range) and its out-of-range plot."""
    lines = ["### Look-up (values in [-3, 3], (0.3, 0.5) held out)", ""]
    lines += [
        "| encoding | MSE | MSE OoD | 3 s.f. acc. | 3 s.f. acc. OoD | invalid | invalid OoD | MSE to dict. mean "
        "| sign right | sign and integer part right | paper MSE / OoD |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for encoding in SCIENTIFIC_ENCODINGS:
        result = results.get(f"lookup-{encoding}")
        cells = [
            _result_cell(result, "mse", _sci),
            _split_cell(result, "test_ood", "mse", _sci),
            _result_cell(result, "accuracy_3sf", _pct),
            _split_cell(result, "test_ood", "accuracy_3sf", _pct),
            _result_cell(result, "invalid_rate", _pct),
            _split_cell(result, "test_ood", "invalid_rate", _pct),
            *(_record_cell(result, key, fmt) for key, fmt in LOOKUP_DETAIL_CELLS),
        ]
        paper = PAPER_LOOKUP.get(encoding)
        paper_text = "-" if paper is None else f"{_sci(paper['mse'])} / {_sci(paper['mse_ood'])}"
        lines.append(f"| {encoding} | " + " | ".join(cells) + f" | {paper_text} |")
    lines += ["", _note("lookup_columns")]
    if _plot_ood(
        results,
        [f"lookup-{e}" for e in SCIENTIFIC_ENCODINGS],
        "test_ood",
        out / "reproduction_lookup_ood.png",
        "Look-up, held-out values (0.3, 0.5)",
    ):
        lines += ["", "![look-up OoD](reproduction_lookup_ood.png)"]
    return lines


def _planets_section(results: dict[str, dict[str, Any]], out: Path) -> list[str]:
    """The planets table with the training mean's row, the held-out table and the out-of-range plots."""
    lines = ["", "### Planets (2 planets, 4 positions, 2 decimals; step size and a1 held out)", ""]
    lines += [
        "| encoding | a1 MSE | a1 MSE OoD | step MSE | step MSE OoD | invalid (a1 / step) | paper a1 / OoD | "
        "paper step / OoD |",
        "|---|---:|---:|---:|---:|---|---|---|",
    ]
    for encoding in SCIENTIFIC_ENCODINGS:
        a1, step = results.get(f"orbits-a1-{encoding}"), results.get(f"orbits-stepsize-{encoding}")
        cells = [
            _result_cell(a1, "mse", _sci),
            _split_cell(a1, "test_ood_a1", "mse", _sci),
            _result_cell(step, "mse", _sci),
            _split_cell(step, "test_ood_stepsize", "mse", _sci),
            f"{_result_cell(a1, 'invalid_rate', _pct)} / {_result_cell(step, 'invalid_rate', _pct)}",
        ]
        paper = PAPER_ORBITS.get(encoding)
        paper_cells = (
            ["-", "-"]
            if paper is None
            else [
                f"{_sci(paper['a1'])} / {_sci(paper['a1_ood'])}",
                f"{_sci(paper['stepsize'])} / {_sci(paper['stepsize_ood'])}",
            ]
        )
        lines.append(f"| {encoding} | " + " | ".join(cells + paper_cells) + " |")
    lines.append(_training_mean_row(results))
    lines += ["", _note("training_mean"), "", *_one_model_per_encoding(results)]
    lines += _heldout_table(results)
    for target, split in ORBIT_TARGETS.items():
        if _plot_ood(
            results,
            [f"orbits-{target}-{e}" for e in SCIENTIFIC_ENCODINGS],
            split,
            out / f"reproduction_orbits_{target}_ood.png",
            f"Planets: {target}, held-out values",
        ):
            lines += ["", f"![planets {target} OoD](reproduction_orbits_{target}_ood.png)"]
    return lines


def _training_mean_row(results: dict[str, dict[str, Any]]) -> str:
    """The planets table's row of the training mean (no model), for the targets that have a row run."""
    baseline = {
        target: _orbits_mean_baseline(target)
        for target in ORBIT_TARGETS
        if any(f"orbits-{target}-{e}" in results for e in SCIENTIFIC_ENCODINGS)
    }
    cells = [  # in the table's column order: a1, then step size
        _sci(baseline[target][split]) if target in baseline else "-"
        for target in ("a1", "stepsize")
        for split in ("test", ORBIT_TARGETS[target])
    ]
    return "| training mean (no model) | " + " | ".join(cells) + " | - | - | - |"


def _temperature_section(results: dict[str, dict[str, Any]]) -> list[str]:
    """The temperature table with the paper's Table 4 beside, and the persistence baseline's note."""
    lines = ["", "### Temperature (vega-datasets hourly series, next value; train/validation/test by time blocks)", ""]
    lines += [
        "| encoding | test MSE (°F²) | test R² | invalid | median / largest error (°F) "
        f"| off by > {LARGE_TEMPERATURE_ERROR:g} °F (share of the MSE) | wall time | paper (Table 4, equal samples) |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    paper_temperature = {"xval": "1.75 (9h)", "fp15": "2.14 (19h)", "p1000": "20 (2d 2h)"}
    for encoding in TEMPERATURE_ENCODINGS:
        name = f"temperature-{encoding}"
        result = results.get(name)
        wall = "-" if result is None else _minutes(result["wall_s"])
        spread, large = _error_cells(results, name)
        lines.append(
            f"| {encoding} | {_result_cell(result, 'mse', _num)} | {_result_cell(result, 'r2', _num)} | "
            f"{_result_cell(result, 'invalid_rate', _pct)} | {spread} | {large} | {wall} | "
            f"{paper_temperature[encoding]} |"
        )
    persistence = _persistence_baseline()
    return lines + ["", _note("persistence", mse=f"{persistence['mse']:.4f}", r2=f"{persistence['r2']:.4f}")]


def _error_cells(results: dict[str, dict[str, Any]], name: str) -> tuple[str, str]:
    """Two cells of row ``name``'s valid test predictions, ``-`` without kept ones: ``median / largest``
    absolute error, and how many are off by more than ``LARGE_TEMPERATURE_ERROR`` with their share of the MSE.

    The MSE alone hides the shape: a text encoding can be as close as xVal on most answers and far off
    on a few (a wrong mantissa token), which these cells show.
    """
    saved = _saved_predictions(results, name)
    if saved is None:
        return "-", "-"
    predicted = _predicted_values(saved["test"]["predictions"])
    errors = np.abs(predicted - np.array(saved["test"]["references"], dtype=float))
    errors = errors[~np.isnan(errors)]
    if errors.size == 0:
        return "-", "-"
    large = errors > LARGE_TEMPERATURE_ERROR
    share = float(np.sum(errors[large] ** 2) / np.sum(errors**2)) if errors.any() else 0.0
    return f"{np.median(errors):.2f} / {errors.max():.2f}", f"{int(large.sum())} ({_pct(share)})"


def _heldout_interval(target: str) -> tuple[float, float]:
    """The held-out interval of ``target`` (``a1`` or ``stepsize``) in the suite's planets options."""
    from hf_numbers.data import parse_task_options

    low, high = parse_task_options(ORBITS_OPTIONS)[f"heldout_{target}"]
    return float(low), float(high)


def _heldout_table(results: dict[str, dict[str, Any]]) -> list[str]:
    """Per planets row with kept predictions: how its predictions on the held-out split sit in the held-out interval.

    The paper's point: text encodings fall back to values seen in training, so few of their predictions
    land inside the interval no training answer came from, while xVal's follow the held-out value. The
    share inside the interval and the correlation with the true value say that in two numbers (read from
    the predictions kept in the row's record; rows without them are left out).
    """
    rows = []
    for target, split in ORBIT_TARGETS.items():
        low, high = _heldout_interval(target)
        for encoding in SCIENTIFIC_ENCODINGS:
            name = f"orbits-{target}-{encoding}"
            saved = _saved_predictions(results, name)
            if saved is None:
                continue
            data = saved[split]
            predicted, true = _predicted_values(data["predictions"]), np.array(data["references"], dtype=float)
            valid = ~np.isnan(predicted)
            inside = float(np.mean((predicted[valid] > low) & (predicted[valid] < high))) if valid.any() else None
            corr = float(np.corrcoef(predicted[valid], true[valid])[0, 1]) if valid.sum() > 1 else None
            rows.append(f"| {target} ({low:g}, {high:g}) | {encoding} | {_pct(inside)} | {_num(corr)} |")
    if not rows:
        return []
    return [
        "",
        _note("heldout"),
        "",
        "| target (held-out interval) | encoding | predictions inside | correlation with the truth |",
        "|---|---|---:|---:|",
        *rows,
    ]


def _one_model_per_encoding(results: dict[str, dict[str, Any]]) -> list[str]:
    """The note that a planets model answers every target, naming the rows recorded before it did."""
    asked = [row.name for row in scientific_rows() if row.model_of is not None]
    alone = [f"`{name}`" for name in asked if name in results and not results[name].get("error")
             and "model_of" not in results[name]]  # fmt: skip
    note = _note("one_model", target=ORBITS_TRAINED_TARGET)
    if alone:
        note += _note("one_model_recorded_alone", names=", ".join(alone))
    return [note]


def _orbits_mean_baseline(target: str) -> dict[str, float]:
    """Per test split of the suite's planets, the MSE of predicting the mean of the training answers."""
    from hf_numbers.data import load_task, parse_task_options

    data = load_task("orbits", seed=_suite_seed(), options=parse_task_options([f"target={target}", *ORBITS_OPTIONS]))
    mean = float(np.mean(data["train"]["answer"]))
    return {split: float(np.mean((np.array(data[split]["answer"]) - mean) ** 2)) for split in data if split != "train"}


def _suite_seed() -> int:
    """The data seed every row of the suite trains and is scored with (``--data_seed`` of ``SCIENTIFIC_SIZE``)."""
    return int(SCIENTIFIC_SIZE[SCIENTIFIC_SIZE.index("--data_seed") + 1])


def _persistence_baseline() -> dict[str, float]:
    """Test metrics of predicting the value before the answer (the temperature of the previous hour).

    On the rows' own test split: the seed assigns the series' time blocks to the splits.
    """
    from hf_numbers.data import make_task
    from hf_numbers.evaluation import compute_number_metrics

    test = make_task("temperature", seed=_suite_seed())["test"]
    return compute_number_metrics([row["numbers"][row["answer_index"] - 1] for row in test], test["answer"])
