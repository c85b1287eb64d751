"""Train or fine-tune a number-aware masked LM (BERT, RoBERTa, ModernBERT) on your own CSV, JSON or text files.

Like transformers' ``run_mlm.py``, with every number of the text as one ``[NUM]`` token plus its
value; a masked number hides its value too. After training, the model fills in one masked number
of each validation text. See ``--help`` for the options and examples/README.md for a run.
"""

from number_lm import run

if __name__ == "__main__":
    run(causal=False)
