"""Everything a saved checkpoint needs at load time: one flat folder, copied into every checkpoint.

A checkpoint loads with ``trust_remote_code`` where hf_numbers is not installed because its folder holds these
modules; so no module here imports anything from ``hf_numbers`` outside this folder (``tests/test_modeling.py``
loads checkpoints that way; docs/design.md, "The Hub rule").
"""

import transformers
from transformers import AutoConfig, AutoModel, AutoTokenizer

from .backbones import (
    BACKBONES,
    BYTE_LEVEL_BPE,
    METASPACE_BPE,
    WORDPIECE,
    BackboneSpec,
    SizeFields,
    get_backbone,
)
from .checks import check_tokenizer_matches
from .composed_backbones import ZOO, ComposedBackboneSpec, composable_model_types, composed_backbone
from .configuration_number import NumberConfigFields
from .configuration_number_families import (
    NumberBertConfig,
    NumberGPT2Config,
    NumberLlamaConfig,
    NumberModernBertConfig,
    NumberRobertaConfig,
)
from .configuration_number_lm import NumberCausalLMConfig, NumberMaskedLMConfig
from .encoding_base import EncodingOption, NumberEncoding
from .encoding_exponent import ExponentEncoding
from .encoding_float import FloatBitEncoding
from .encoding_fone import FoNEEncoding
from .encoding_registry import (
    NUMBER_ENCODINGS,
    NUMBER_ENCODINGS_REGISTRY,
    add_option_fields,
    build_number_encoding,
    encoding_options,
    get_encoding,
)
from .encoding_xval import XValEncoding
from .generation_number import NumberGenerateOutput
from .modeling_number import (
    NumberBertForMaskedLM,
    NumberCausalLMOutput,
    NumberGPT2ForCausalLM,
    NumberMaskedLMOutput,
    NumberRobertaForMaskedLM,
)
from .modeling_number_base import NUMBER_TOKEN_INITS, NumberModelMixin
from .modeling_number_llama import NumberLlamaForCausalLM
from .modeling_number_lm import NumberForCausalLM, NumberForMaskedLM
from .modeling_number_modernbert import NumberModernBertForMaskedLM
from .number_scaling import NumberScaling
from .parsing import (
    NEUTRAL_NUMBER,
    NUMBER_OUTPUTS,
    NumberPieces,
    NumberSpan,
    find_numbers,
    format_number,
    replace_numbers,
    split_numbers,
)
from .pipeline_number import NumberFillMaskPipeline, NumberGenerationPipeline, register_pipelines
from .tokenization_number import (
    NumberBertTokenizer,
    NumberGPT2Tokenizer,
    NumberRobertaTokenizer,
    NumberTokenizer,
    NumberTokenizerMixin,
)
from .tokenization_number_llama import NumberLlamaTokenizer
from .tokenization_number_modernbert import NumberModernBertTokenizer


def register_auto_classes() -> None:
    """Register every backbone's config, model and tokenizer with the transformers Auto classes.

    Models go to ``AutoModel`` and their task class (``spec.auto_class_name``). Also marks them
    for remote code, so that ``save_pretrained`` writes ``auto_map`` and copies this folder's
    code into the checkpoint. Safe to call more than once.

    Example:
        >>> register_auto_classes()
        >>> from transformers import AutoConfig
        >>> type(AutoConfig.for_model("number_gpt2")).__name__
        'NumberGPT2Config'
    """
    composed = {spec.config_class: spec for spec in map(composed_backbone, ZOO)}.values()  # one per composed class
    for spec in (*BACKBONES.values(), *composed):
        AutoConfig.register(spec.config_class.model_type, spec.config_class, exist_ok=True)
        AutoTokenizer.register(spec.config_class, tokenizer_class=spec.tokenizer_class, exist_ok=True)
        spec.config_class.register_for_auto_class()
        spec.tokenizer_class.register_for_auto_class("AutoTokenizer")
        spec.model_class.register_for_auto_class(spec.auto_class_name)
        AutoModel.register(spec.config_class, spec.model_class, exist_ok=True)
        getattr(transformers, spec.auto_class_name).register(spec.config_class, spec.model_class, exist_ok=True)


__all__ = [
    "NEUTRAL_NUMBER",
    "NUMBER_OUTPUTS",
    "ZOO",
    "ComposedBackboneSpec",
    "NumberCausalLMConfig",
    "NumberForCausalLM",
    "NumberForMaskedLM",
    "NumberMaskedLMConfig",
    "NumberTokenizer",
    "composable_model_types",
    "composed_backbone",
    "BACKBONES",
    "BYTE_LEVEL_BPE",
    "NUMBER_ENCODINGS",
    "NUMBER_ENCODINGS_REGISTRY",
    "NUMBER_TOKEN_INITS",
    "BackboneSpec",
    "EncodingOption",
    "ExponentEncoding",
    "FloatBitEncoding",
    "FoNEEncoding",
    "METASPACE_BPE",
    "NumberBertConfig",
    "NumberBertForMaskedLM",
    "NumberBertTokenizer",
    "NumberCausalLMOutput",
    "NumberConfigFields",
    "NumberEncoding",
    "NumberFillMaskPipeline",
    "NumberGPT2Config",
    "NumberGPT2ForCausalLM",
    "NumberGPT2Tokenizer",
    "NumberGenerateOutput",
    "NumberGenerationPipeline",
    "NumberLlamaConfig",
    "NumberLlamaForCausalLM",
    "NumberLlamaTokenizer",
    "NumberMaskedLMOutput",
    "NumberModelMixin",
    "NumberModernBertConfig",
    "NumberModernBertForMaskedLM",
    "NumberModernBertTokenizer",
    "NumberRobertaConfig",
    "NumberRobertaForMaskedLM",
    "NumberRobertaTokenizer",
    "NumberPieces",
    "NumberScaling",
    "NumberSpan",
    "NumberTokenizerMixin",
    "SizeFields",
    "WORDPIECE",
    "XValEncoding",
    "add_option_fields",
    "build_number_encoding",
    "check_tokenizer_matches",
    "encoding_options",
    "find_numbers",
    "format_number",
    "get_backbone",
    "get_encoding",
    "register_auto_classes",
    "register_pipelines",
    "replace_numbers",
    "split_numbers",
]
