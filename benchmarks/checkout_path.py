"""Which ``kimiops`` the benchmark scripts import: the one already importable (``PYTHONPATH``, an
install), else this checkout's. An A/B run puts another tree first on ``PYTHONPATH`` and must get
that tree; the scripts used to put this checkout first unconditionally, so such a run timed one
tree twice (``benchmarks/results/logs_h200_20261130i/r7_prefill_stage_times.log``: both labels
loaded ``/work/main/benchmarks/../kimiops``)."""

import importlib.util
import os
import sys

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def import_path() -> None:
    """Put this checkout first on ``sys.path`` unless ``kimiops`` can already be imported."""
    if importlib.util.find_spec("kimiops") is None:
        sys.path.insert(0, CHECKOUT)
