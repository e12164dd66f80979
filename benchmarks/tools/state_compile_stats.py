"""Offline compile of ``chunk_state_kernel`` for sm_90 (no GPU needed: ``triton.compile`` plus the
bundled ``ptxas -v``) from the source tree given as the first argument, with the narrow and the
wide state configs (``STATE_CONFIG``, ``STATE_CONFIG_WIDE``) at HV = 32, K = V = 128, bf16 v/o,
fp16 scratch: registers, spill stores, shared memory, and the mma/wgmma instructions in the PTX.

    python benchmarks/tools/state_compile_stats.py <tree>     # e.g. a git worktree of a revision
"""
import hashlib
import inspect
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from kimiops.kda.kernels import chunk_state as cs  # noqa: E402

params = list(inspect.signature(cs.chunk_state_kernel.fn).parameters)
ptr = {"w": "*fp16", "u": "*fp32", "tb": "*fp32", "qg": "*fp16", "kg": "*fp16", "aqk": "*fp16", "gc": "*fp32",
       "v": "*bf16", "o": "*bf16", "h0": "*fp32", "h0_indices": "*i32", "ht": "*fp32", "ht_indices": "*i32",
       "cu_seqlens": "*i32", "order": "*i32", "carry": "*fp32"}
for name, cfg in (("narrow", cs.STATE_CONFIG), ("wide", cs.STATE_CONFIG_WIDE)):
    const = dict(HV=32, K=128, V=128, C=32, BV=cfg["BV"], STATE_V_FIRST=True, HAS_H0=True, HAS_H0_IDX=False,
                 HAS_HT=True, HAS_HT_IDX=False, IS_VARLEN=False, ORDERED=False, HI_FIRST=cfg["hi_first"],
                 SPLIT_WS=cfg["split_ws"], SPLIT_KV=cfg["split_kv"], V_TILES_ADJACENT=False, GRID_3D=True,
                 PARTED=False, INV_PREC="tf32")
    const = {n: x for n, x in const.items() if n in params}
    sig = {p: ptr[p] if p in ptr else "constexpr" if p in const else "i64" if p.startswith("s_") else "i32"
           for p in params}
    attrs = {(params.index(n),): [["tt.divisibility", 16]] for n in params if n in ptr or n.startswith("s_")}
    k = triton.compile(ASTSource(cs.chunk_state_kernel, sig, const, attrs), target=GPUTarget("cuda", 90, 32),
                       options=dict(num_warps=cfg["num_warps"], num_stages=cfg["num_stages"]))
    ptxas = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/ptxas")
    f = tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False)
    f.write(k.asm["ptx"])
    f.close()
    r = subprocess.run([ptxas, "-arch=sm_90a", "-v", f.name, "-o", "/dev/null"], capture_output=True, text=True)
    regs = " ".join(re.findall(r"Used \d+ registers|\d+ bytes spill stores", r.stderr))
    mma = {m: len(re.findall(m, k.asm["ptx"])) for m in ("mma.sync", "wgmma.mma_async")}
    digest = hashlib.sha1(k.asm["ptx"].encode()).hexdigest()[:12]
    print(f"{name} {cfg}: {regs}; shared {k.metadata.shared} B; {mma}; PTX sha1 {digest}", flush=True)
