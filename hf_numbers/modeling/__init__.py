"""Everything a saved checkpoint needs at load time (one flat folder, see DESIGN.md)."""

from transformers import AutoConfig, AutoTokenizer

from .configuration_number import (
    NUMBER_ENCODINGS,
    NumberBertConfig,
    NumberConfigFields,
    NumberGPT2Config,
    NumberRobertaConfig,
)
from .parsing import NumberSpan, find_numbers, format_number, replace_numbers
from .tokenization_number import (
    NumberBertTokenizer,
    NumberGPT2Tokenizer,
    NumberRobertaTokenizer,
    NumberTokenizerMixin,
)

_TOKENIZERS = {
    NumberGPT2Config: NumberGPT2Tokenizer,
    NumberBertConfig: NumberBertTokenizer,
    NumberRobertaConfig: NumberRobertaTokenizer,
}


def register_auto_classes() -> None:
    """Register configs, models and tokenizers with the transformers Auto classes.

    Also marks them for remote code, so that ``save_pretrained`` writes ``auto_map`` and
    copies this folder's code into the checkpoint. Safe to call more than once.

    Example:
        >>> register_auto_classes()
        >>> from transformers import AutoConfig
        >>> type(AutoConfig.for_model("number_gpt2")).__name__
        'NumberGPT2Config'
    """
    for config_class, tokenizer_class in _TOKENIZERS.items():
        AutoConfig.register(config_class.model_type, config_class, exist_ok=True)
        AutoTokenizer.register(config_class, tokenizer_class=tokenizer_class, exist_ok=True)
        config_class.register_for_auto_class()
        tokenizer_class.register_for_auto_class("AutoTokenizer")


__all__ = [
    "NUMBER_ENCODINGS",
    "NumberBertConfig",
    "NumberBertTokenizer",
    "NumberConfigFields",
    "NumberGPT2Config",
    "NumberGPT2Tokenizer",
    "NumberRobertaConfig",
    "NumberRobertaTokenizer",
    "NumberSpan",
    "NumberTokenizerMixin",
    "find_numbers",
    "format_number",
    "register_auto_classes",
    "replace_numbers",
]
