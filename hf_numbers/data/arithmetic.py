"""Arithmetic tasks: xVal's multiplication and multi-operand expressions (Golkar et al., §3.1), FoNE's
addition, subtraction and multiplication (Zhou et al.) and BitTokens' division (Kreitner, Hager et al.).

Every example is ``"<expression> = <answer>"`` (``"123 * 456 = 56088"``), its answer exact in float64;
splits ``train``, ``validation``, ``test`` never share an expression. Formats and distributions:
docs/training.md, "Tasks".
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Context, Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from .formatting import format_decimal, format_scaled_integer
from .splits import draw_unique, make_dataset_dict, split_rngs
from .text_builder import TextBuilder
from .validation import check_int, check_int_range, check_seed, check_sizes

if TYPE_CHECKING:
    from datasets import DatasetDict

OPERATORS = ("+", "-", "*")
FONE_OPERATIONS = {"add": "+", "subtract": "-", "multiply": "*"}
OPERAND_FORMATS = ("sig3", "integer")
MAX_EXACT_INTEGER = 2**53
"""float64 represents every integer of magnitude below this exactly."""


def _apply(op: str, left: Fraction | int, right: Fraction | int) -> Fraction | int:
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    return left * right


def multiplication(
    digits: int = 3,
    train_size: int = 10_000,
    validation_size: int = 1_000,
    test_size: int = 1_000,
    seed: int = 0,
) -> DatasetDict:
    """xVal's multi-digit multiplication: two operands of exactly ``digits`` digits each.

    Text: ``"123 * 456 = 56088"``. Extra columns: ``operands`` (the two factors).
    ``digits`` is 1 to 7 (xVal used 3, 4 and 5); the product then stays below 2**53.

    Example:
        >>> dd = multiplication(digits=3, train_size=4, validation_size=2, test_size=2)
        >>> row = dd["train"][0]
        >>> row["operands"][0] * row["operands"][1] == row["answer"]
        True
    """
    digits = check_int("digits", digits, 1, 7)
    seed = check_seed(seed)
    sizes = check_sizes({"test": test_size, "validation": validation_size, "train": train_size})
    low, high = 10 ** (digits - 1), 10**digits - 1
    space = (high - low + 1) ** 2
    if sum(sizes.values()) > space // 2:
        raise ValueError(
            f"{digits}-digit multiplication has {space} distinct problems; the split sizes must add up "
            f"to at most half of that ({space // 2}), got {sum(sizes.values())}"
        )

    def sample(rng: np.random.Generator, split: str) -> tuple[int, int]:
        return int(rng.integers(low, high + 1)), int(rng.integers(low, high + 1))

    pairs = draw_unique(sizes, split_rngs(seed, f"multiplication{digits}", list(sizes)), sample, lambda p: p)
    rows = {split: [_binary_row(a, b, "*", 0) for a, b in items] for split, items in pairs.items()}
    return make_dataset_dict(rows, {"operands": ["float64"]})


def _binary_row(a: int, b: int, op: str, decimals: int) -> dict[str, Any]:
    """Row for ``a op b`` where ``a`` and ``b`` are mantissas scaled by ``10**-decimals``."""
    result = _apply(op, a, b)
    result_decimals = 2 * decimals if op == "*" else decimals
    builder = TextBuilder()
    builder.number(format_scaled_integer(a, decimals))
    builder.text(f" {op} ")
    builder.number(format_scaled_integer(b, decimals))
    builder.text(" = ")
    builder.number(format_scaled_integer(result, result_decimals), answer=True)
    operands = [float(format_scaled_integer(v, decimals)) for v in (a, b)]
    return builder.build(operands=operands)


@dataclass(frozen=True)
class _Node:
    """A binary expression tree: a leaf holds ``value * 10**-decimals``; an inner node ``op``, ``left``, ``right``.

    Frozen, so a tree is hashable and compares by structure (used to keep expressions unique).
    """

    value: int = 0
    decimals: int = 0
    op: str | None = None
    left: _Node | None = None
    right: _Node | None = None

    def evaluate(self) -> Fraction:
        """The exact value of the expression."""
        if self.op is None:
            return Fraction(self.value, 10**self.decimals)
        return _apply(self.op, self.left.evaluate(), self.right.evaluate())

    def write(self, builder: TextBuilder, top: bool = True) -> None:
        """Write the expression, parenthesising every inner node but the root."""
        if self.op is None:
            builder.number(format_scaled_integer(self.value, self.decimals))
            return
        builder.text("" if top else "(")
        self.left.write(builder, top=False)
        builder.text(f" {self.op} ")
        self.right.write(builder, top=False)
        builder.text("" if top else ")")

    def leaves(self) -> list[Fraction]:
        if self.op is None:
            return [self.evaluate()]
        return self.left.leaves() + self.right.leaves()

    def operators(self) -> list[str]:
        """Operators in the order they are written (in-order traversal)."""
        if self.op is None:
            return []
        return self.left.operators() + [self.op] + self.right.operators()

    def depth(self) -> int:
        return 0 if self.op is None else 1 + max(self.left.depth(), self.right.depth())


def _random_leaf(rng: np.random.Generator, operand_format: str, max_digits: int) -> _Node:
    if operand_format == "sig3":  # three significant digits, 1.00 to 99.9 (xVal: "1.32", "32.1", "8.20")
        return _Node(value=int(rng.integers(100, 1000)), decimals=int(rng.integers(1, 3)))
    digits = int(rng.integers(1, max_digits + 1))
    return _Node(value=int(rng.integers(10 ** (digits - 1) if digits > 1 else 0, 10**digits)))


def _random_tree(rng: np.random.Generator, n_leaves: int, operand_format: str, max_digits: int) -> _Node:
    if n_leaves == 1:
        return _random_leaf(rng, operand_format, max_digits)
    n_left = int(rng.integers(1, n_leaves))
    op = OPERATORS[int(rng.integers(len(OPERATORS)))]
    return _Node(
        op=op,
        left=_random_tree(rng, n_left, operand_format, max_digits),
        right=_random_tree(rng, n_leaves - n_left, operand_format, max_digits),
    )


def _exact_decimal(value: Fraction) -> str:
    """Write a fraction whose denominator is a power of ten as its exact shortest decimal."""
    decimals = 0
    while (value * 10**decimals).denominator != 1:
        decimals += 1
    return format_scaled_integer(int(value * 10**decimals), decimals)


def multi_operand(
    operands: tuple[int, int] = (2, 4),
    operand_format: str = "sig3",
    max_digits: int = 3,
    train_size: int = 10_000,
    validation_size: int = 1_000,
    test_size: int = 1_000,
    seed: int = 0,
) -> DatasetDict:
    """xVal's multi-operand arithmetic: random binary trees of ``+``, ``-``, ``*``, inner nodes parenthesised.

    ``operands`` is the inclusive range of leaves (2 to 8). ``operand_format``: ``"sig3"`` (three
    significant digits, 1.00 to 99.9, as the paper's ``((1.32 * 32.1) + (1.42 - 8.20)) = 35.592``) or
    ``"integer"`` (up to ``max_digits`` digits, 1 to 4). Extra columns: ``operands`` and ``operators``
    (in written order), ``depth``.

    Example:
        >>> dd = multi_operand(train_size=4, validation_size=2, test_size=2)
        >>> 2 <= len(dd["test"][0]["operands"]) <= 4
        True
    """
    low, high = check_int_range("operands", operands, 2, 8)
    if operand_format not in OPERAND_FORMATS:
        raise ValueError(f"operand_format={operand_format!r} is unknown; allowed: {', '.join(OPERAND_FORMATS)}")
    max_digits = check_int("max_digits", max_digits, 1, 4)
    seed = check_seed(seed)
    sizes = check_sizes({"test": test_size, "validation": validation_size, "train": train_size})

    def sample(rng: np.random.Generator, split: str) -> _Node:
        while True:  # redraw the rare tree whose value float64 cannot hold exactly
            tree = _random_tree(rng, int(rng.integers(low, high + 1)), operand_format, max_digits)
            if abs(tree.evaluate()) < MAX_EXACT_INTEGER:
                return tree

    stream = f"multi_operand{low}-{high}-{max_digits}" + ("" if operand_format == "integer" else f"-{operand_format}")
    trees = draw_unique(sizes, split_rngs(seed, stream, list(sizes)), sample, lambda t: t)
    rows = {split: [_tree_row(tree) for tree in items] for split, items in trees.items()}
    return make_dataset_dict(
        rows,
        {"operands": ["float64"], "operators": ["string"], "depth": "int32"},
    )


def _tree_row(tree: _Node) -> dict[str, Any]:
    builder = TextBuilder()
    tree.write(builder)
    builder.text(" = ")
    builder.number(_exact_decimal(tree.evaluate()), answer=True)
    return builder.build(operands=[float(v) for v in tree.leaves()], operators=tree.operators(), depth=tree.depth())


def fone_arithmetic(
    operation: str = "add",
    int_digits: int = 6,
    frac_digits: int = 0,
    train_size: int = 10_000,
    validation_size: int = 1_000,
    test_size: int = 1_000,
    seed: int = 0,
    nonnegative: bool = False,
) -> DatasetDict:
    """FoNE's integer and decimal arithmetic: ``a + b``, ``a - b`` or ``a * b`` (``"12.50 + 3.07 = 15.57"``).

    ``operation``: ``"add"``, ``"subtract"`` or ``"multiply"``. Operands have at most ``int_digits``
    integer digits and exactly ``frac_digits`` decimals (together at most 15, or 7 to multiply).
    ``nonnegative=True`` (subtraction only) puts the larger operand first. Extra columns:
    ``operands``, ``operation``.

    Example:
        >>> dd = fone_arithmetic("add", int_digits=6, train_size=4, validation_size=2, test_size=2)
        >>> row = dd["train"][0]
        >>> sum(row["operands"]) == row["answer"]
        True
    """
    if operation not in FONE_OPERATIONS:
        raise ValueError(f"operation={operation!r} is unknown; allowed: {', '.join(FONE_OPERATIONS)}")
    max_total = 7 if operation == "multiply" else 15
    int_digits = check_int("int_digits", int_digits, 1, max_total)
    frac_digits = check_int("frac_digits", frac_digits, 0, max_total - int_digits)
    seed = check_seed(seed)
    if not isinstance(nonnegative, bool):
        raise ValueError(f"nonnegative must be True or False, got {nonnegative!r}")
    if nonnegative and operation != "subtract":
        raise ValueError(f"nonnegative applies to operation='subtract' only ({operation} answers are >= 0)")
    sizes = check_sizes({"test": test_size, "validation": validation_size, "train": train_size})
    total_digits = int_digits + frac_digits
    space = 10 ** (2 * total_digits)
    if sum(sizes.values()) > space // 2:
        raise ValueError(
            f"{operation} with {int_digits} integer and {frac_digits} decimal digits has {space} distinct "
            f"problems; the split sizes must add up to at most {space // 2}, got {sum(sizes.values())}"
        )
    op = FONE_OPERATIONS[operation]

    def sample(rng: np.random.Generator, split: str) -> tuple[int, int]:
        a, b = int(rng.integers(0, 10**total_digits)), int(rng.integers(0, 10**total_digits))
        return (max(a, b), min(a, b)) if nonnegative else (a, b)

    pairs = draw_unique(
        sizes, split_rngs(seed, f"fone-{operation}-{int_digits}-{frac_digits}", list(sizes)), sample, lambda p: p
    )
    rows = {
        split: [{**_binary_row(a, b, op, frac_digits), "operation": operation} for a, b in items]
        for split, items in pairs.items()
    }
    return make_dataset_dict(rows, {"operands": ["float64"], "operation": "string"})


def division(
    digits: int = 3,
    exponents: tuple[int, int] = (0, 2),
    answer_digits: int = 6,
    train_size: int = 10_000,
    validation_size: int = 1_000,
    test_size: int = 1_000,
    seed: int = 0,
) -> DatasetDict:
    """BitTokens' division: ``a / b`` with the quotient rounded to ``answer_digits`` significant digits.

    Operands have exactly ``digits`` significant digits (1 to 7), a magnitude ``10^e`` with ``e`` in
    ``exponents`` (within +-6) and either sign: ``"-4.25 / 0.3 = -14.1667"``. Score it with
    ``log_smape`` beside ``exact_match``. Extra columns: ``operands``.

    Example:
        >>> row = division(train_size=4, validation_size=2, test_size=2)["train"][0]
        >>> a, b = row["operands"]
        >>> abs(row["answer"] - a / b) <= 5e-6 * abs(a / b)
        True
    """
    digits = check_int("digits", digits, 1, 7)
    lowest, highest = check_int_range("exponents", exponents, -6, 6)
    answer_digits = check_int("answer_digits", answer_digits, 1, 15)
    seed = check_seed(seed)
    sizes = check_sizes({"test": test_size, "validation": validation_size, "train": train_size})
    space = (2 * 9 * 10 ** (digits - 1) * (highest - lowest + 1)) ** 2
    if sum(sizes.values()) > space // 2:
        raise ValueError(
            f"division with {digits}-digit operands and exponents {exponents} has {space} distinct problems; "
            f"the split sizes must add up to at most half of that ({space // 2}), got {sum(sizes.values())}"
        )

    def operand(rng: np.random.Generator) -> str:
        mantissa = int(rng.integers(10 ** (digits - 1), 10**digits)) * (1 if rng.random() < 0.5 else -1)
        return format_decimal(mantissa, int(rng.integers(lowest, highest + 1)) - digits + 1)

    stream = f"division-{digits}-{lowest}-{highest}"
    pairs = draw_unique(sizes, split_rngs(seed, stream, list(sizes)), lambda rng, _: (operand(rng), operand(rng)),
                        lambda pair: pair)  # fmt: skip
    context = Context(prec=answer_digits, rounding=ROUND_HALF_EVEN)
    rows = {split: [_division_row(a, b, context) for a, b in items] for split, items in pairs.items()}
    return make_dataset_dict(rows, {"operands": ["float64"]})


def _division_row(a: str, b: str, context: Context) -> dict[str, Any]:
    quotient = context.divide(Decimal(a), Decimal(b))  # exact, then rounded to the context's digits
    builder = TextBuilder()
    builder.number(a)
    builder.text(" / ")
    builder.number(b)
    builder.text(" = ")
    builder.number(format(quotient.normalize(context), "f"), answer=True)
    return builder.build(operands=[float(a), float(b)])
