"""``python -m hf_numbers_launcher ...``: what the ``hf-numbers`` console script runs."""

from hf_numbers_launcher.launch import main

main()
