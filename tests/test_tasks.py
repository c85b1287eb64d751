"""Task generators: reproducibility, disjoint splits, held-out ranges, correct answers,
physically sensible orbits and temperatures that are the vega_datasets series."""

from __future__ import annotations

import ast
import json
import math
import re
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from datasets import DatasetDict
from vega_datasets import local_data

from hf_numbers.data import TASKS, make_task, task_scaling
from hf_numbers.modeling import NumberScaling

# Small but non-trivial sizes, so the whole file runs in seconds.
SMALL = {
    "multiplication": {"digits": 4, "train_size": 300, "validation_size": 50, "test_size": 50},
    "multi_operand": {"train_size": 300, "validation_size": 50, "test_size": 50},
    "fone_arithmetic": {"train_size": 300, "validation_size": 50, "test_size": 50},
    "lookup": {"train_size": 300, "validation_size": 50, "test_size": 50, "test_ood_size": 50},
    "orbits": {
        "train_size": 20,
        "validation_size": 5,
        "test_size": 5,
        "test_ood_a1_size": 8,
        "test_ood_stepsize_size": 8,
    },
    "temperature": {"stride": 12},
    "numeracy_words": {"train_size": 300, "validation_size": 50, "test_size": 50},
    "minmax": {"train_size": 300, "validation_size": 50, "test_size": 50},
    "interval": {"train_size": 300, "validation_size": 50, "test_size": 50},
    "division": {"train_size": 300, "validation_size": 50, "test_size": 50},
}
NUMBER_ANSWERS = sorted(name for name in SMALL if name != "numeracy_words")  # numeracy_words' answer is a word

# Every number the generators write: an optional glued sign, digits, optional decimals,
# not glued to a word on the left. The generators put spaces around binary operators.
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?")


@pytest.fixture(scope="module")
def datasets_by_task() -> dict[str, DatasetDict]:
    return {name: make_task(name, **options) for name, options in SMALL.items()}


def test_registry_covers_every_task() -> None:
    assert set(SMALL) == set(TASKS)


@pytest.mark.parametrize("name", NUMBER_ANSWERS)
def test_core_columns_are_consistent(datasets_by_task: dict[str, DatasetDict], name: str) -> None:
    for split, dataset in datasets_by_task[name].items():
        assert len(dataset) > 0, split
        for row in dataset:
            text, prompt, literal = row["text"], row["prompt"], row["answer_text"]
            assert text.startswith(prompt + literal)
            assert row["answer"] == float(literal)
            assert row["numbers"][row["answer_index"]] == row["answer"]
            found = [(m.start(), float(m.group())) for m in NUMBER.finditer(text)]
            assert [value for _, value in found] == row["numbers"]
            assert found[row["answer_index"]][0] == len(prompt)
            assert "e" not in literal.lower() and all(math.isfinite(v) for v in row["numbers"])


@pytest.mark.parametrize("name", sorted(SMALL))
def test_numbers_column_matches_the_number_parser(datasets_by_task: dict[str, DatasetDict], name: str) -> None:
    parsing = pytest.importorskip("hf_numbers.modeling.parsing")
    for dataset in datasets_by_task[name].values():
        for row in dataset.select(range(min(20, len(dataset)))):
            spans = parsing.find_numbers(row["text"])
            assert [span[2] for span in spans] == row["numbers"]
            if "answer_index" in row:
                assert spans[row["answer_index"]][0] == len(row["prompt"])


@pytest.mark.parametrize("name", sorted(SMALL))
def test_same_seed_same_data_other_seed_other_data(datasets_by_task: dict[str, DatasetDict], name: str) -> None:
    first = datasets_by_task[name]
    again = make_task(name, **SMALL[name])
    other = make_task(name, **SMALL[name], seed=1)
    assert list(first) == list(again) == list(other)
    for split in first:
        assert first[split].to_list() == again[split].to_list()
    assert first["train"]["text"] != other["train"]["text"]


@pytest.mark.parametrize("name", sorted(SMALL))
def test_splits_are_disjoint(datasets_by_task: dict[str, DatasetDict], name: str) -> None:
    texts = {split: set(dataset["text"]) for split, dataset in datasets_by_task[name].items()}
    for split, dataset in datasets_by_task[name].items():
        assert len(texts[split]) == len(dataset), f"repeated text inside {split}"
    splits = list(texts)
    for i, a in enumerate(splits):
        for b in splits[i + 1 :]:
            assert not texts[a] & texts[b], f"{a} and {b} share examples"


def test_test_split_does_not_depend_on_train_size() -> None:
    small = make_task("lookup", train_size=10, validation_size=20, test_size=20, test_ood_size=20)
    large = make_task("lookup", train_size=200, validation_size=20, test_size=20, test_ood_size=20)
    for split in ("validation", "test", "test_ood"):
        assert small[split]["text"] == large[split]["text"]


def test_multiplication_answers_and_digits(datasets_by_task: dict[str, DatasetDict]) -> None:
    for dataset in datasets_by_task["multiplication"].values():
        for row in dataset:
            a, b = (int(v) for v in row["operands"])
            assert len(str(a)) == len(str(b)) == 4
            assert row["text"] == f"{a} * {b} = {a * b}"
            assert row["answer"] == a * b


def test_five_digit_products_are_exact() -> None:
    dataset = make_task("multiplication", digits=5, train_size=50, validation_size=0, test_size=0)["train"]
    for row in dataset:
        a, b = (int(v) for v in row["operands"])
        assert int(row["answer_text"]) == a * b and int(row["answer"]) == a * b


def _evaluate_expression(source: str) -> Fraction:
    """Evaluate + - * exactly (decimal literals as fractions) from the syntax tree, independently of the generator."""

    def walk(node: ast.AST) -> Fraction:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return Fraction(ast.get_source_segment(source, node))
        if isinstance(node, ast.BinOp) and type(node.op) in (ast.Add, ast.Sub, ast.Mult):
            left, right = walk(node.left), walk(node.right)
            return {ast.Add: left + right, ast.Sub: left - right, ast.Mult: left * right}[type(node.op)]
        raise AssertionError(f"unexpected syntax {ast.dump(node)}")

    return walk(ast.parse(source, mode="eval"))


def test_multi_operand_answers_recomputed(datasets_by_task: dict[str, DatasetDict]) -> None:
    """The default operands are the xVal paper's: three significant digits, 1.00 to 99.9, written in full."""
    leaf_counts = set()
    for dataset in datasets_by_task["multi_operand"].values():
        for row in dataset:
            expression = row["prompt"].removesuffix(" = ")
            assert _evaluate_expression(expression) == Fraction(row["answer_text"])
            assert float(row["answer_text"]) == row["answer"] and not row["answer_text"].endswith("0.")
            assert len(row["operators"]) == len(row["operands"]) - 1
            assert set(row["operators"]) <= {"+", "-", "*"}
            leaf_counts.add(len(row["operands"]))
            assert all(1.0 <= v < 100 for v in row["operands"])
            literals = [m.group() for m in NUMBER.finditer(expression)]
            assert all(len(lit.replace(".", "")) == 3 for lit in literals)  # 8.20 keeps its zero
    assert leaf_counts == {2, 3, 4}


def test_multi_operand_integer_operands() -> None:
    dd = make_task("multi_operand", operand_format="integer", train_size=200, validation_size=20, test_size=20)
    for row in dd["train"]:
        expression = row["prompt"].removesuffix(" = ")
        assert _evaluate_expression(expression) == int(row["answer_text"]) == row["answer"]
        assert all(0 <= v < 1000 and v == int(v) for v in row["operands"])
    with pytest.raises(ValueError, match="operand_format='hex' is unknown; allowed: sig3, integer"):
        make_task("multi_operand", operand_format="hex")


@pytest.mark.parametrize(
    ("operation", "int_digits", "frac_digits"),
    [("add", 6, 0), ("subtract", 5, 0), ("multiply", 3, 0), ("add", 4, 2), ("subtract", 3, 3), ("multiply", 2, 2)],
)
def test_fone_answers_recomputed_exactly(operation: str, int_digits: int, frac_digits: int) -> None:
    dd = make_task(
        "fone_arithmetic",
        operation=operation,
        int_digits=int_digits,
        frac_digits=frac_digits,
        train_size=100,
        validation_size=20,
        test_size=20,
    )
    negative = False
    for dataset in dd.values():
        for row in dataset:
            left, op, right, equals, answer = row["text"].split(" ")
            assert equals == "=" and op == {"add": "+", "subtract": "-", "multiply": "*"}[operation]
            a, b = Decimal(left), Decimal(right)
            expected = {"add": a + b, "subtract": a - b, "multiply": a * b}[operation]
            assert Decimal(answer) == expected and row["answer"] == float(expected)
            for operand in (left, right):
                whole, _, decimals = operand.partition(".")
                assert len(whole) <= int_digits and len(decimals) == frac_digits
            result_decimals = 2 * frac_digits if operation == "multiply" else frac_digits
            assert len(answer.partition(".")[2]) == result_decimals
            negative |= answer.startswith("-")
    assert negative == (operation == "subtract")


def test_fone_nonnegative_subtraction_puts_the_larger_operand_first() -> None:
    sizes = {"train_size": 200, "validation_size": 20, "test_size": 20}
    dd = make_task("fone_arithmetic", operation="subtract", int_digits=3, nonnegative=True, **sizes)
    for dataset in dd.values():
        for row in dataset:
            a, b = row["operands"]
            assert a >= b and row["answer"] == a - b >= 0
    for bad, message in [
        ({"operation": "add", "nonnegative": True}, "nonnegative applies to operation='subtract' only"),
        ({"operation": "subtract", "nonnegative": "yes"}, "nonnegative must be True or False, got 'yes'"),
    ]:
        with pytest.raises(ValueError, match=re.escape(message)):
            make_task("fone_arithmetic", **bad, **sizes)


def test_lookup_heldout_interval(datasets_by_task: dict[str, DatasetDict]) -> None:
    dd = datasets_by_task["lookup"]
    for split in ("train", "validation", "test"):
        values = np.concatenate([np.array(v) for v in dd[split]["values"]])
        assert not np.any((values > 0.3) & (values < 0.5)), split
        assert values.min() >= -3 and values.max() <= 3
    for row in dd["test_ood"]:
        assert 0.3 < row["answer"] < 0.5
    for dataset in dd.values():
        for row in dataset:
            assert len(set(row["keys"])) == len(row["keys"]) and 3 <= len(row["keys"]) <= 8
            assert row["values"][row["keys"].index(row["query"])] == row["answer"]
            assert row["text"].endswith(f"}} {row['query']}={row['answer_text']}")
            assert all(
                re.fullmatch(r"-?\d\.\d\d", part.split(":")[1]) for part in row["text"][1:].split("}")[0].split(", ")
            )


def test_orbit_heldout_parameters(datasets_by_task: dict[str, DatasetDict]) -> None:
    dd = datasets_by_task["orbits"]

    def inside(values: list[float], low: float, high: float) -> np.ndarray:
        array = np.array(values)
        return (array > low) & (array < high)

    for split in ("train", "validation", "test"):
        assert not inside(dd[split]["a1"], 1.4, 1.5).any()
        assert not inside(dd[split]["stepsize"], 0.45, 0.5).any()
    assert inside(dd["test_ood_a1"]["a1"], 1.4, 1.5).all()
    assert not inside(dd["test_ood_a1"]["stepsize"], 0.45, 0.5).any()
    assert inside(dd["test_ood_stepsize"]["stepsize"], 0.45, 0.5).all()
    assert not inside(dd["test_ood_stepsize"]["a1"], 1.4, 1.5).any()
    assert dd["train"]["answer"] == dd["train"]["a1"]


def test_orbit_text_is_the_json_of_the_columns(datasets_by_task: dict[str, DatasetDict]) -> None:
    for dataset in datasets_by_task["orbits"].values():
        for row in dataset:
            sample = json.loads(row["text"])
            planets = sample["description"]["planets"]
            assert [p["m"] for p in planets] == row["masses"]
            assert [p["a"] for p in planets] == row["semi_major_axes"]
            assert [p["e"] for p in planets] == row["eccentricities"]
            assert sample["description"]["stepsize"] == row["stepsize"]
            assert sample["data"] == row["positions"]
            assert len(sample["data"]) == row["num_steps"] and 30 <= row["num_steps"] <= 59
            assert 2 <= len(planets) <= 5
            assert all(1 <= p["m"] <= 5 and 1 <= p["a"] <= 3 and 0 <= p["e"] <= 2 for p in planets)


def test_orbits_are_physically_sensible(datasets_by_task: dict[str, DatasetDict]) -> None:
    radius_ok, kepler_errors = [], []
    for dataset in datasets_by_task["orbits"].values():
        for row in dataset:
            assert row["energy_error"] < 1e-9  # IAS15 conserves the total energy
            positions = np.array(row["positions"])  # (steps, planets, 2), barycentric
            assert np.abs(positions).max() < 10
            duration = row["stepsize"] * (row["num_steps"] - 1)
            assert abs(duration - round(duration)) < 0.05 and 15 <= round(duration) <= 24
            radius = np.linalg.norm(positions, axis=2)
            for i, (a, e_text) in enumerate(zip(row["semi_major_axes"], row["eccentricities"])):
                e = e_text / 20
                # Between peri- and apo-centre distance, up to the planets' mutual perturbations.
                radius_ok.append(radius[:, i].min() > a * (1 - e) * 0.99 and radius[:, i].max() < a * (1 + e) * 1.01)
                x, y = positions[:-1, i].T, positions[1:, i].T
                steps = np.arctan2(x[0] * y[1] - x[1] * y[0], x[0] * y[0] + x[1] * y[1])
                assert (steps > 0).all(), "orbits are prograde"
                # Kepler's third law: the angle swept is n * duration with n = a^-1.5 (G = 1, star mass 1).
                kepler_errors.append(abs(steps.sum() / (duration * a**-1.5) - 1))
    # Closely packed systems perturb each other, as in xVal's data, so these hold for most
    # planets; a wrong semi-major axis (neighbours differ by >= 0.125) would miss by > 15 %.
    assert np.mean(radius_ok) > 0.9
    assert np.median(kepler_errors) < 0.02 and np.mean(np.array(kepler_errors) < 0.05) > 0.8


def test_temperature_windows_are_the_vega_series(datasets_by_task: dict[str, DatasetDict]) -> None:
    frames = {
        "seattle": local_data.seattle_temps().sort_values("date", ignore_index=True),
        "sf": local_data.sf_temps().sort_values("date", ignore_index=True),
    }
    covered: dict[str, set[tuple[str, int]]] = {}
    for split, dataset in datasets_by_task["temperature"].items():
        covered[split] = set()
        for row in dataset:
            frame = frames[row["city"]]
            start, window = row["start_index"], len(row["values"])
            assert window == 24
            assert row["values"] == frame["temp"].iloc[start : start + window].tolist()
            dates = frame["date"].iloc[start : start + window]
            assert (dates.diff().dropna() == np.timedelta64(1, "h")).all(), "a window crosses a gap"
            first = dates.iloc[0]
            assert row["start"] == first.isoformat()
            sample = json.loads(row["text"])
            assert sample["data"] == row["values"] and row["answer"] == row["values"][-1]
            assert sample["description"]["start"] == [first.month, first.day, first.hour]
            covered[split] |= {(row["city"], h) for h in range(start, start + window)}
    assert not covered["train"] & covered["validation"]
    assert not covered["train"] & covered["test"]
    assert not covered["validation"] & covered["test"]
    sizes = {split: len(dataset) for split, dataset in datasets_by_task["temperature"].items()}
    assert sizes["train"] > 4 * sizes["validation"] > 0 and sizes["test"] > 0


def test_task_scaling_normalises_the_training_numbers(datasets_by_task: dict[str, DatasetDict]) -> None:
    dd = datasets_by_task["temperature"]
    scaling = task_scaling("temperature", dd)
    scaled = scaling.transform(np.concatenate([np.array(v) for v in dd["train"]["numbers"]]))
    assert abs(scaled.mean()) < 1e-9 and abs(scaled.std() - 1) < 1e-9  # standard
    assert task_scaling("lookup", datasets_by_task["lookup"]) == NumberScaling()
    product = task_scaling("multiplication", datasets_by_task["multiplication"])
    assert np.abs(product.transform(np.array(datasets_by_task["multiplication"]["train"]["answer"]))).max() <= 1.0
    with pytest.raises(ValueError, match="split 'dev' is not in the dataset"):
        task_scaling("lookup", datasets_by_task["lookup"], split="dev")


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("sorting", {}, r"task 'sorting' is unknown; allowed: multiplication"),
        ("lookup", {"size": 3}, r"no option size; allowed: num_pairs"),
        ("multiplication", {"digits": 8}, r"digits must be >= 1 and <= 7, got 8"),
        ("multiplication", {"digits": 1, "train_size": 60}, r"has 81 distinct problems"),
        ("multiplication", {"train_size": 0}, r"train_size must be >= 1"),
        ("multiplication", {"test_size": -1}, r"test_size must be >= 0"),
        ("multiplication", {"seed": -1}, r"seed must be >= 0"),
        ("multi_operand", {"operands": (1, 4)}, r"operands\[0\] must be >= 2"),
        ("multi_operand", {"operands": (4, 2)}, r"low <= high"),
        ("fone_arithmetic", {"operation": "divide"}, r"allowed: add, subtract, multiply"),
        ("fone_arithmetic", {"operation": "multiply", "int_digits": 5, "frac_digits": 3}, r"frac_digits must be"),
        ("lookup", {"heldout": (0.5, 0.3)}, r"heldout must satisfy -3.0 <= low < high <= 3.0"),
        ("lookup", {"heldout": (0.301, 0.309)}, r"contains no two-decimal value"),
        ("orbits", {"target": "x"}, r"allowed: a1, e1, m1, stepsize"),
        ("orbits", {"heldout_a1": (0.5, 1.2)}, r"heldout_a1 must satisfy 1.0 <= low < high <= 3.0"),
        ("temperature", {"cities": ["paris"]}, r"cities must be a non-empty list of seattle, sf"),
        ("temperature", {"window": 200}, r"window must be >= 2 and <= 168"),
        ("temperature", {"split_fractions": (0.5, 0.2, 0.2)}, r"summing to 1"),
        ("numeracy_words", {"templates": ["rainfall"]}, r"templates must be a non-empty list of temperature"),
        ("numeracy_words", {"templates": "temperature"}, r"templates must be a non-empty list"),
        ("numeracy_words", {"templates": ["temperature"], "train_size": 9, "validation_size": 50}, r"38 distinct"),
        ("numeracy_words", {"split_fractions": (0.0, 0.5, 0.5)}, r"train > 0"),
    ],
)
def test_bad_options_raise_clear_errors(name: str, options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_task(name, **options)


def test_orbits_scale_down_for_small_budgets() -> None:
    """Fewer planets and shorter series shorten the text; the step size is drawn as before."""
    small = make_task("orbits", num_planets=(2, 2), max_times=5, heldout_a1=(2.0, 2.4), train_size=6,
                      validation_size=1, test_size=1, test_ood_a1_size=2, test_ood_stepsize_size=2)
    for row in small["train"]:
        assert len(row["masses"]) == 2 and len(row["positions"]) == 5 == row["num_steps"]
        assert len(row["numbers"]) == 2 * 3 + 1 + 5 * 2 * 2
    assert all(2.0 < a < 2.4 for a in small["test_ood_a1"]["a1"])
    with pytest.raises(ValueError, match="max_times must be >= 2"):
        make_task("orbits", max_times=1)
    with pytest.raises(ValueError, match=r"num_planets\[1\] must be >= 2 and <= 5"):
        make_task("orbits", num_planets=(2, 6))


def test_orbit_targets_choose_the_answer() -> None:
    dd = make_task(
        "orbits",
        target="stepsize",
        train_size=3,
        validation_size=0,
        test_size=0,
        test_ood_a1_size=0,
        test_ood_stepsize_size=0,
    )
    for row in dd["train"]:
        assert row["answer"] == row["stepsize"] and row["prompt"].endswith('"stepsize":')
