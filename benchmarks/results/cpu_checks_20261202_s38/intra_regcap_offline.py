"""Stage 1's instructions and spills at other register caps (offline sm_90): runs
``benchmarks/tools/intra_sass_regions.py`` with ``INTRA_CONFIG["maxnreg"]`` replaced, on the tree
checked out. From the repository root:

    python3 benchmarks/results/cpu_checks_20261202_s38/intra_regcap_offline.py 128 [--gate]
"""
import os
import runpy
import sys

root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
tools = os.path.join(root, "benchmarks", "tools")
reg, rest = int(sys.argv[1]), sys.argv[2:]
sys.path[:0] = [root, tools]
from kimiops.kda.kernels import chunk_intra as ci  # noqa: E402

ci.INTRA_CONFIG = dict(ci.INTRA_CONFIG, maxnreg=reg)
sys.argv = ["intra_sass_regions.py"] + rest
runpy.run_path(os.path.join(tools, "intra_sass_regions.py"), run_name="__main__")
