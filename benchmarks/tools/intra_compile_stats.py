"""Offline compile of ``chunk_intra_kernel`` for sm_90 (no GPU needed: ``triton.compile`` plus the
bundled ``ptxas -v``) from the source tree given as the first argument, with the default stage-1
config at H = HV = 32, K = V = 128, bf16 inputs, without and with the softplus gate: registers,
spill stores, ``__nv_fast_logf`` calls (gate evaluations) per loop of the TTGIR, and a hash of the
PTX without debug lines (equal hashes: the same machine code before ptxas).

    python benchmarks/tools/intra_compile_stats.py <tree>     # e.g. a git worktree of a revision
"""
import sys, os, re, subprocess, tempfile, inspect, hashlib
sys.path.insert(0, sys.argv[1])
import triton, triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from kimiops.kda.kernels import chunk_intra as ci
def strip(p): return "\n".join(l for l in p.split("\n") if not l.strip().startswith((".loc", ".file", "//", ".b8", ".b32", ".section", "$L__", ".debug")) and "debug" not in l)
params = list(inspect.signature(ci.chunk_intra_kernel.fn).parameters)
ptr = {"q":"*bf16","k":"*bf16","v":"*bf16","g":"*bf16","beta":"*bf16","A_log":"*fp32","dt_bias":"*fp32","cu_seqlens":"*i32",
       "w_out":"*fp16","u_out":"*fp32","tb_out":"*fp32","qg_out":"*fp16","kg_out":"*fp16","aqk_out":"*fp16","gc_out":"*fp32"}
for gate in (0, 1):
    const = dict(H=32, HV=32, K=128, V=128, C=32, BC=16, BK=16, BK2=16, BVI=32, GATE=gate, HAS_A=gate != 0, HAS_DT_BIAS=gate != 0,
                 USE_L2NORM=True, USE_BETA_SIGMOID=False, IS_VARLEN=False, LOG_N=1, DOT_DT=tl.float16, INV_PREC="tf32", LOOP_STAGES=3, ABL=0)
    if "STASH" in params: const["STASH"] = True
    const = {n: x for n, x in const.items() if n in params}  # revisions differ (BVI and V went in the ninth session)
    sig = {p: ptr[p] if p in ptr else "constexpr" if p in const else "i64" if p.startswith("s_") else "fp32" if p in ("scale", "lower_bound") else "i32" for p in params}
    attrs = {(params.index(n),): [["tt.divisibility", 16]] for n in params if n in ptr or n.startswith("s_")}
    k = triton.compile(ASTSource(ci.chunk_intra_kernel, sig, const, attrs), target=GPUTarget("cuda", 90, 32), options=dict(num_warps=2, num_stages=1, maxnreg=168))
    ptxas = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/ptxas")
    f = tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False); f.write(k.asm["ptx"]); f.close()
    r = subprocess.run([ptxas, "-arch=sm_90a", "-v", "--maxrregcount=168", f.name, "-o", "/dev/null"], capture_output=True, text=True)
    loops, per = 0, {}
    for l in k.asm["ttgir"].split("\n"):
        if "scf.for" in l: loops += 1
        if "__nv_fast_logf" in l: per[loops] = per.get(loops, 0) + 1
    regs = " ".join(re.findall(r"Used \d+ registers|\d+ bytes spill stores", r.stderr))
    digest = hashlib.sha1(strip(k.asm["ptx"]).encode()).hexdigest()[:12]
    print(f"gate={gate}: {regs}; fast_logf per loop (1 = pass 1, 2 = pass 2) {per}; PTX sha1 {digest}", flush=True)
