"""Data for hf_numbers: the papers' tasks as ``datasets.DatasetDict`` objects, and the number scaling each task
recommends (:func:`task_scaling`, a ``NumberScaling`` fitted on the training numbers, which the model applies).

Example:
    >>> from hf_numbers.data import make_task
    >>> dd = make_task("lookup", train_size=100, validation_size=10, test_size=10, test_ood_size=10)
    >>> dd["train"][0]["text"].startswith(dd["train"][0]["prompt"])
    True
"""

from .arithmetic import division, fone_arithmetic, multi_operand, multiplication
from .collators import DataCollatorForNumberCausalLM, DataCollatorForNumberMLM, number_token_masks, prompt_lengths
from .column_numbers import column_numbers
from .comparison import interval, minmax
from .loading import load_task, parse_task_options, recorded_task, save_task, task_name, tokenize_dataset
from .lookup import lookup
from .numeracy import numeracy_words
from .orbits import orbits
from .tasks import TASK_FILE, TASKS, TaskSpec, make_task, task_scaling
from .temperature import load_city_temperatures, temperature
from .tokenizer_training import train_number_tokenizer, train_plain_tokenizer

__all__ = [
    "DataCollatorForNumberCausalLM",
    "DataCollatorForNumberMLM",
    "TASKS",
    "TASK_FILE",
    "TaskSpec",
    "column_numbers",
    "division",
    "fone_arithmetic",
    "interval",
    "load_city_temperatures",
    "load_task",
    "lookup",
    "make_task",
    "minmax",
    "multi_operand",
    "multiplication",
    "number_token_masks",
    "numeracy_words",
    "orbits",
    "parse_task_options",
    "prompt_lengths",
    "recorded_task",
    "save_task",
    "task_name",
    "task_scaling",
    "temperature",
    "tokenize_dataset",
    "train_number_tokenizer",
    "train_plain_tokenizer",
]
