"""hf_numbers: number-aware language models for Hugging Face transformers: any causal or masked LM of transformers
held by composition (GPT-2, BERT, Llama, RoBERTa, ModernBERT, Qwen, Mistral, ...).

Importing the package registers its configs, models and tokenizers with the Auto classes,
so ``AutoTokenizer`` / ``AutoConfig`` / ``AutoModel*`` ``.from_pretrained`` return them, and its
pipelines (``number-generation``, ``number-fill-mask``) with transformers' ``pipeline``.

Example:
    >>> import hf_numbers
    >>> hf_numbers.find_numbers("x = -3.5")[0].value
    -3.5
"""

from .modeling import *  # noqa: F403
from .modeling import __all__ as _modeling_all
from .modeling import register_auto_classes, register_pipelines

register_auto_classes()
register_pipelines()

__version__ = "0.1.0"
__all__ = [*_modeling_all]
