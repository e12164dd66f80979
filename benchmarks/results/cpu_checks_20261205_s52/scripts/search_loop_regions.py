"""Varlen stage 1 (7 sequences, 16,384 tokens, H = HV = 32, K = V = 128) per region, offline sm_90: instruction
counts, a hash of the opcode sequence and the top opcodes. argv: tree, gate (0 precomputed g, 1 softplus).
    python3 benchmarks/results/cpu_checks_20261205_s52/scripts/search_loop_regions.py <tree> <gate>
"""
import sys, re, os, subprocess, tempfile, hashlib, collections
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools"))  # this repo's tools
import triton
from int_specialization_sass import as_launched, intra_const, intra_options, varlen_intra
from sm90_compile import INTRA_POINTERS, compile_sm90
from kimiops.kda.kernels import chunk_intra as ci
gate = int(sys.argv[2])
kernel = ci.chunk_intra_kernel
log_n = "LOG_N" in kernel.arg_names
N, T = 7, 16384
ones, div = as_launched(varlen_intra(T, N, T // 32 + N), True)
const = dict(intra_const(True, 3 if log_n else 0, 0), GATE=gate, HAS_A=gate != 0, HAS_DT_BIAS=gate != 0, **{n: 1 for n in ones})
if not log_n: const.pop("LOG_N", None)
k, regs = compile_sm90(kernel, INTRA_POINTERS, const, intra_options(), divisible=div)
nvdisasm = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/nvdisasm")
with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
    f.write(k.asm["cubin"])
lines = subprocess.run([nvdisasm, "-c", f.name], capture_output=True, text=True).stdout.splitlines()
INSTR = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")
labels = [i for i, x in enumerate(lines) if re.match(r"\.L_x_\d+:", x)]
loops = []
for b, x in enumerate(lines):
    m = re.search(r"BRA `\((\.L_x_\d+)\)", x)
    if not m: continue
    st = next((i for i in labels if lines[i].startswith(m.group(1) + ":")), None)
    if st is not None and st + 1 < b:
        loops.append((st, b + 1))
loops.sort()
big = [l for l in loops if l[1] - l[0] > 100]
print(sys.argv[1], "gate", gate, regs, "loops", [(a, b - a) for a, b in loops])
(a1, b1), (a2, b2) = big
for name, (a, b) in {"prologue": (0, a1), "pass1": (a1, b1), "between": (b1, a2), "pass2": (a2, b2), "epi": (b2, len(lines))}.items():
    ops = [m.group(2) for x in lines[a:b] if (m := INSTR.search(x))]
    print(f"  {name:9s} {len(ops):5d} {hashlib.md5(' '.join(ops).encode()).hexdigest()[:8]}  {collections.Counter(ops).most_common(6)}")
