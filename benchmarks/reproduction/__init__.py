"""The suites of ``benchmarks/reproduce.py``: one module per paper's tables, and what they share.

- :mod:`.common`: the row type, running a row through ``hf-numbers train``, and the table cells;
- :mod:`.tries`: a row stopped partway going on from its last checkpoint (``--resume``);
- :mod:`.fone`, :mod:`.arithmetic`, :mod:`.scientific`, :mod:`.frozen_bert`, :mod:`.bittokens`: each suite's rows (the
  ``hf-numbers train`` arguments of every cell), its constants and the papers' numbers, its report
  (markdown) and plots.

``benchmarks/`` is on ``sys.path`` when a script there runs (``python benchmarks/reproduce.py``), so the
driver imports ``reproduction.<module>``, as the other benchmark scripts import ``bench_common``.
"""

import matplotlib

# before any suite imports pyplot: the reports draw to files, never to a screen
matplotlib.use("Agg")
