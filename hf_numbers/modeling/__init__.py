"""Everything a saved checkpoint needs at load time (one flat folder, see DESIGN.md)."""

from transformers import AutoConfig, AutoModel, AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

from .configuration_number import NumberBertConfig, NumberConfigFields, NumberGPT2Config, NumberRobertaConfig
from .encoding_base import EncodingOption, NumberEncoding
from .encoding_registry import (
    NUMBER_ENCODINGS,
    NUMBER_ENCODINGS_REGISTRY,
    add_option_fields,
    build_number_encoding,
    encoding_options,
    get_encoding,
)
from .encodings import ExponentEncoding, FloatBitEncoding, FoNEEncoding, XValEncoding
from .generation_number import NumberGenerateOutput
from .modeling_number import (
    NumberBertForMaskedLM,
    NumberCausalLMOutput,
    NumberGPT2ForCausalLM,
    NumberMaskedLMOutput,
    NumberModelMixin,
    NumberRobertaForMaskedLM,
)
from .parsing import NEUTRAL_NUMBER, NumberSpan, find_numbers, format_number, replace_numbers
from .tokenization_number import (
    NumberBertTokenizer,
    NumberGPT2Tokenizer,
    NumberRobertaTokenizer,
    NumberTokenizerMixin,
)

BACKBONE_CLASSES = {
    "gpt2": (NumberGPT2Config, NumberGPT2ForCausalLM, NumberGPT2Tokenizer),
    "bert": (NumberBertConfig, NumberBertForMaskedLM, NumberBertTokenizer),
    "roberta": (NumberRobertaConfig, NumberRobertaForMaskedLM, NumberRobertaTokenizer),
}
"""Config, model and tokenizer class of each backbone, by name."""


def register_auto_classes() -> None:
    """Register configs, models and tokenizers with the transformers Auto classes.

    Models go to ``AutoModel`` and their task class (``AutoModelForCausalLM`` /
    ``AutoModelForMaskedLM``). Also marks them for remote code, so that ``save_pretrained``
    writes ``auto_map`` and copies this folder's code into the checkpoint. Safe to call more
    than once.

    Example:
        >>> register_auto_classes()
        >>> from transformers import AutoConfig
        >>> type(AutoConfig.for_model("number_gpt2")).__name__
        'NumberGPT2Config'
    """
    for config_class, model_class, tokenizer_class in BACKBONE_CLASSES.values():
        AutoConfig.register(config_class.model_type, config_class, exist_ok=True)
        AutoTokenizer.register(config_class, tokenizer_class=tokenizer_class, exist_ok=True)
        config_class.register_for_auto_class()
        tokenizer_class.register_for_auto_class("AutoTokenizer")
        AutoModel.register(config_class, model_class, exist_ok=True)
        task_auto_class = AutoModelForCausalLM if model_class.causal else AutoModelForMaskedLM
        task_auto_class.register(config_class, model_class, exist_ok=True)


__all__ = [
    "NEUTRAL_NUMBER",
    "BACKBONE_CLASSES",
    "NUMBER_ENCODINGS",
    "NUMBER_ENCODINGS_REGISTRY",
    "EncodingOption",
    "ExponentEncoding",
    "FloatBitEncoding",
    "FoNEEncoding",
    "NumberBertConfig",
    "NumberBertForMaskedLM",
    "NumberBertTokenizer",
    "NumberCausalLMOutput",
    "NumberConfigFields",
    "NumberEncoding",
    "NumberGPT2Config",
    "NumberGPT2ForCausalLM",
    "NumberGPT2Tokenizer",
    "NumberGenerateOutput",
    "NumberMaskedLMOutput",
    "NumberModelMixin",
    "NumberRobertaConfig",
    "NumberRobertaForMaskedLM",
    "NumberRobertaTokenizer",
    "NumberSpan",
    "NumberTokenizerMixin",
    "XValEncoding",
    "add_option_fields",
    "build_number_encoding",
    "encoding_options",
    "find_numbers",
    "format_number",
    "get_encoding",
    "register_auto_classes",
    "replace_numbers",
]
