"""Stage 1 at PDL 0 and 1 (offline sm_90): per region (prologue, pass 1 body, between the loops, pass 2
body, epilogue) the SASS instruction count and a hash of the opcode sequence, fixed length (B8 T1024) and
varlen (7 sequences, 16,384 tokens), precomputed g and the softplus gate, H = HV = 32, K = V = 128.
    python3 benchmarks/results/cpu_checks_20261205_s52/scripts/one_part_pdl_sass.py <tree>
"""
import sys, re, os, subprocess, tempfile, hashlib
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[1] + "/benchmarks/tools")
import triton
from int_specialization_sass import as_launched, intra_const, intra_options, varlen_intra
from sm90_compile import INTRA_POINTERS, compile_sm90
from kimiops.kda.kernels import chunk_intra as ci
from kimiops.kda.kernels.chunk_layout import kernel_rows
INSTR = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")
nvdisasm = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/nvdisasm")
def regions(cubin):
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
    lines = subprocess.run([nvdisasm, "-c", f.name], capture_output=True, text=True).stdout.splitlines()
    labels = [i for i, x in enumerate(lines) if re.match(r"\.L_x_\d+:", x)]
    loops = []
    for b, x in enumerate(lines):
        m = re.search(r"BRA `\((\.L_x_\d+)\)", x)
        if m:
            st = next((i for i in labels if lines[i].startswith(m.group(1) + ":")), None)
            if st is not None and st + 100 < b:
                loops.append((st, b + 1))
    (a1, b1), (a2, b2) = sorted(loops)
    out = {}
    for name, (a, b) in {"prologue": (0, a1), "pass1": (a1, b1), "between": (b1, a2), "pass2": (a2, b2), "epi": (b2, len(lines))}.items():
        ops = [m.group(2) for x in lines[a:b] if (m := INSTR.search(x))]
        out[name] = (len(ops), hashlib.md5(" ".join(ops).encode()).hexdigest()[:8])
    return out
for varlen in (False, True):
    for gate in (0, 1):
        res = {}
        for pdl in (0, 1):
            if varlen:
                ones, div = as_launched(varlen_intra(16384, 7, 16384 // 32 + 7), True)
            else:
                ones, div = as_launched(dict(T=1024, N=8, NT=32, slot_off=0, n_programs=0), False)
            const = dict(intra_const(varlen, 0, pdl), GATE=gate, HAS_A=gate != 0, HAS_DT_BIAS=gate != 0, **{n: 1 for n in ones})
            const.pop("LOG_N", None)
            k, regs = compile_sm90(ci.chunk_intra_kernel, INTRA_POINTERS, const, intra_options(), divisible=div)
            res[pdl] = (regs, regions(k.asm["cubin"]))
        print(f"varlen={varlen} gate={gate}")
        for pdl, (regs, r) in res.items():
            print(f"  PDL {pdl}: {regs}; " + ", ".join(f"{n} {c} {h}" for n, (c, h) in r.items()))
