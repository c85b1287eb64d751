"""Train or fine-tune a number-aware causal LM (GPT-2, Llama) on your own CSV, JSON or text files.

Like transformers' ``run_clm.py``, with every number of the text as one ``[NUM]`` token plus its
value. After training, the model predicts one number of each validation text from the text before
it; ``python examples/run_number_clm.py --help`` lists the options, examples/README.md shows a run.
"""

from number_lm import run

if __name__ == "__main__":
    run(causal=True)
