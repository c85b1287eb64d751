"""Screen: does a units-first model lose products by the order it writes the answer in, or by reading reversed factors?

``--text_digit_order units_first`` reverses every number, the prompt's and the answer's. This screen reverses the
answer alone: ``data`` writes a task's splits with each answer's digits units first (:func:`units_first`: ``157722``
as ``227751``) and the rest of the text as written, ``hf-numbers train --data_dir`` trains on them as on any data,
and ``score`` reads what the trained model writes back in the usual order and scores it against the true answers
(the run's own metrics compare reversed values, which only exact match survives). A screen, not a set-up: the
library has no flag for it.

    python benchmarks/screen_answer_order.py data --task multiplication --task_options digits=3 --output runs/screen/m3
    hf-numbers train --data_dir runs/screen/m3 <a pretrained row's flags> --output_dir runs/screen/m3-run
    python benchmarks/screen_answer_order.py score runs/screen/m3-run runs/screen/m3 --split test
    python benchmarks/screen_answer_order.py score runs/screen/m3-run runs/screen/m3 --given_digits 4

``--given_digits M`` hands the model the first M digits of each true answer (its lowest M, units first) and lets it
write the rest: whether the high digits, written last, go wrong because the digits before them did.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from datasets import DatasetDict, load_from_disk
from transformers import AutoModelForCausalLM, AutoTokenizer

from hf_numbers.data import load_task, parse_task_options, save_task
from hf_numbers.evaluation.number_metrics import compute_number_metrics
from hf_numbers.evaluation.predict import written_answers
from hf_numbers.modeling import find_numbers
from hf_numbers.modeling.parsing import units_first


def answers_units_first(dataset: DatasetDict) -> DatasetDict:
    """Every split with each answer's digits units first and the rest of its text as written.

    Example:
        >>> answers_units_first(dataset)["train"][0]["text"]  # doctest: +SKIP
        '813 * 194 = 227751'
    """

    def reverse(row: dict[str, Any], index: int) -> dict[str, Any]:
        text, start, answer = row["text"], len(row["prompt"]), row["answer_text"]
        if text[start : start + len(answer)] != answer:
            raise ValueError(f"row {index}: the answer {answer!r} does not follow the prompt in {text!r}")
        reversed_answer = units_first(answer)
        numbers = list(row["numbers"])
        numbers[row["answer_index"]] = float(reversed_answer)
        return {"text": text[:start] + reversed_answer + text[start + len(answer) :], "answer_text": reversed_answer,
                "answer": float(reversed_answer), "numbers": numbers}  # fmt: skip

    return dataset.map(reverse, with_indices=True)


def score(
    model: Any, tokenizer: Any, split: Any, batch_size: int = 64, given_digits: int = 0
) -> tuple[dict[str, float | int | None], list[dict]]:
    """Metrics of what ``model`` writes for ``split``'s answers, each read in the usual order (the first number
    written, turned back with :func:`units_first`): the library's exact, within 1%, MSE over the valid ones (None
    where none is) and invalid rate; and the rows (written text, true answer, value read). ``given_digits``: the
    first that many digits of each true answer (as the model writes it) follow the prompt, and the model writes on
    from there."""
    if len(split) == 0:
        raise ValueError("the split to score is empty")
    model.eval()
    rows = []
    for start in range(0, len(split), batch_size):
        batch = split.select(range(start, min(start + batch_size, len(split))))
        written, finite = written_answers(model, tokenizer, list(batch["text"]), list(batch["answer_index"]),
                                          given_digits=given_digits)  # fmt: skip
        written = [answer[:given_digits] + text for answer, text in zip(batch["answer_text"], written)]
        for text, ok, answer in zip(written, finite, batch["answer_text"]):
            found = find_numbers(text) if ok else []
            value = float(units_first(text[found[0].start : found[0].end])) if found else None
            rows.append({"written": text, "answer": units_first(answer), "value": value})
    every = compute_number_metrics([row["value"] for row in rows], [float(row["answer"]) for row in rows])
    return {name: every[name] for name in ("count", "exact_match", "within_1pct", "mse", "invalid_rate")}, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    data = commands.add_parser("data", help="write a task's splits with each answer units first")
    data.add_argument("--task", required=True)
    data.add_argument("--task_options", nargs="*", default=[], metavar="NAME=VALUE")
    data.add_argument("--train_size", type=int, default=6400)
    data.add_argument("--eval_size", type=int, default=500)
    data.add_argument("--seed", type=int, default=1, help="the data seed (the pretrained suite's --data_seed)")
    data.add_argument("--output", required=True)
    scoring = commands.add_parser("score", help="score a run trained on such data, answers read back")
    scoring.add_argument("run", help="the run's output_dir (its final/ model is scored)")
    scoring.add_argument("data", help="the folder `data` wrote")
    scoring.add_argument("--split", default="test")
    scoring.add_argument("--given_digits", type=int, default=0, help="the true answer's first digits handed over")
    args = parser.parse_args()
    if args.command == "data":
        task = load_task(args.task, train_size=args.train_size, eval_size=args.eval_size, seed=args.seed,
                         options=parse_task_options(args.task_options))  # fmt: skip  # as make-data and train draw it
        save_task(answers_units_first(task), args.task, args.output)
        return
    final = Path(args.run) / "final"
    model, tokenizer = AutoModelForCausalLM.from_pretrained(final), AutoTokenizer.from_pretrained(final)
    metrics, rows = score(model, tokenizer, load_from_disk(args.data)[args.split], given_digits=args.given_digits)
    name = f"answer_order_{args.split}{f'_given{args.given_digits}' if args.given_digits else ''}.json"
    (Path(args.run) / name).write_text(json.dumps({"metrics": metrics, "rows": rows}))
    print(json.dumps({"split": args.split, "given_digits": args.given_digits, **metrics}))


if __name__ == "__main__":
    main()
