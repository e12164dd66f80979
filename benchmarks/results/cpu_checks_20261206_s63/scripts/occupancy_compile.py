"""Offline sm_90 compiles (no GPU) behind the sixty-third session's register count: the state kernel as
pipelined parts launch it (wide tile, 4 warps, 4 stages) uncapped and with the maxnreg caps of run 4, and
stage 1 as the default config launches it (2 warps, maxnreg 168, softplus gate and precomputed g): registers,
spill stores, shared memory per CTA. Uses ``benchmarks/tools/sm90_compile.py`` and the constexprs of
``benchmarks/tools/state_compile_stats.py`` / ``intra_compile_stats.py``.

    python benchmarks/results/cpu_checks_20261206_s63/scripts/occupancy_compile.py
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks" / "tools")]
sys.argv = [sys.argv[0], str(ROOT)]  # state_compile_stats parses a tree argument at import
import triton.language as tl  # noqa: E402
from sm90_compile import INTRA_POINTERS, STATE_POINTERS, compile_sm90  # noqa: E402

from kimiops.kda.kernels import chunk_intra as ci  # noqa: E402
from kimiops.kda.kernels import chunk_state as cs  # noqa: E402

src = (ROOT / "benchmarks" / "tools" / "state_compile_stats.py").read_text()
ns = {}
exec(src.split("if ARGS.dims:")[0], ns)  # const_for, without the module's compile loop
for cap in (None, 232, 200, 176, 168):
    opts = dict(num_warps=4, num_stages=4, **({"maxnreg": cap} if cap else {}))
    k, regs = compile_sm90(cs.chunk_state_kernel, STATE_POINTERS, ns["const_for"](cs.STATE_CONFIG_WIDE, parted=True), opts)
    print(f"state in parts, 4 warps, 4 stages, maxnreg {cap}: {regs}; shared {k.metadata.shared} B", flush=True)
for gate in (0, 1):
    const = dict(H=32, HV=32, K=128, V=128, C=32, BC=16, BK=16, BK2=16, BVI=32, GATE=gate, HAS_A=gate != 0,
                 HAS_DT_BIAS=gate != 0, USE_L2NORM=True, USE_BETA_SIGMOID=False, NEG_EIGVAL=False, IS_VARLEN=False,
                 LOG_N=1, DOT_DT=tl.float16, INV_PREC="tf32", LOOP_STAGES=3, ABL=0, STASH=True, STASH_G=True,
                 DIAG_ANCHOR=False, PDL=2)
    k, regs = compile_sm90(ci.chunk_intra_kernel, INTRA_POINTERS, const, dict(num_warps=2, num_stages=1, maxnreg=168))
    print(f"stage 1, gate {gate}, 2 warps, maxnreg 168: {regs}; shared {k.metadata.shared} B", flush=True)
