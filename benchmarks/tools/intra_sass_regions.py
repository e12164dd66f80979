"""Where stage 1's instructions are (offline sm_90, no GPU needed): the SASS of
``chunk_intra_kernel`` at the default config (H = HV = 32, K = V = 128, bf16, precomputed g or the
softplus or lower-bound gate), cut at its two K loops into the prologue, pass 1's loop body, what lies between
(scaling, the inverse, pass 2's prologue), pass 2's loop body and the epilogue; per region the
instruction count and the top opcodes, per warp and program the instructions issued (loop bodies
times their K / BK trips), and the source lines of pass 1's body with the most instructions.

    python benchmarks/tools/intra_sass_regions.py [--gate | --lower-bound [--no-diag-anchor]] [--between]
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from sm90_compile import INTRA_POINTERS as POINTERS, compile_sm90  # noqa: E402

from kimiops.kda.kernels import chunk_intra as ci  # noqa: E402

INSTR = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)")
LINE = re.compile(r'File "(.*?)", line (\d+)')


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gate", action="store_true", help="the softplus gate in the kernel (STASH_G as the launcher sets it)")
    p.add_argument("--lower-bound", action="store_true", help="the lower-bound gate in the kernel")
    p.add_argument("--between", action="store_true",
                   help="also list the source lines of the region between the loops (scaling, inverse, pass 2 prologue)")
    p.add_argument("--no-diag-anchor", action="store_true",
                   help="with --lower-bound: the diagonal hierarchy instead of the anchored diagonal blocks")
    args = p.parse_args()
    gate = 2 if args.lower_bound else 1 if args.gate else 0
    cfg = ci.INTRA_CONFIG
    K, BK = 128, cfg["BK"]
    const = dict(H=32, HV=32, K=K, C=32, BC=16, BK=BK, BK2=cfg["BK2"], GATE=gate, HAS_A=gate != 0,
                 HAS_DT_BIAS=gate != 0, USE_L2NORM=True, USE_BETA_SIGMOID=False, NEG_EIGVAL=False, IS_VARLEN=False,
                 DOT_DT=tl.float16, INV_PREC="tf32", LOOP_STAGES=cfg["loop_stages"], ABL=0,
                 STASH_G=cfg["stash_g"], DIAG_ANCHOR=gate == 2 and not args.no_diag_anchor, PDL=0)
    kernel, regs = compile_sm90(ci.chunk_intra_kernel, POINTERS, const,
                                dict(num_warps=cfg["num_warps"], num_stages=cfg["num_stages"], maxnreg=cfg["maxnreg"]))
    nvdisasm = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/nvdisasm")
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(kernel.asm["cubin"])
    lines = subprocess.run([nvdisasm, "-c", "-gi", f.name], capture_output=True, text=True).stdout.splitlines()
    os.unlink(f.name)
    labels = [i for i, x in enumerate(lines) if re.match(r"\.L_x_\d+:", x)]
    backs = [i for i, x in enumerate(lines) if re.search(r"BRA `\(\.L_x_\d+\)", x)]
    # the two K loops: a label followed later by a branch back to it
    loops = []
    for b in backs:
        target = re.search(r"BRA `\((\.L_x_\d+)\)", lines[b]).group(1)
        start = next((i for i in labels if lines[i].startswith(target + ":")), None)
        if start is not None and start + 1 < b:  # not the self-branch after EXIT
            loops.append((start, b + 1))
    loops.sort()
    if len(loops) != 2:
        raise SystemExit(f"expected two loops, found {len(loops)}")
    (a1, b1), (a2, b2) = loops
    regions = {"prologue": (0, a1), "pass 1 body": (a1, b1), "between (scaling, inverse, pass 2 prologue)": (b1, a2),
               "pass 2 body": (a2, b2), "epilogue": (b2, len(lines))}
    trips = {"pass 1 body": K // BK, "pass 2 body": K // cfg["BK2"]}
    print(f"chunk_intra_kernel, gate={gate}, DIAG_ANCHOR={const['DIAG_ANCHOR']}, {cfg}: {regs}")
    issued = 0
    weighted = collections.Counter()
    for name, (a, b) in regions.items():
        ops = collections.Counter(m.group(2) for x in lines[a:b] if (m := INSTR.search(x)))
        n = sum(ops.values())
        issued += n * trips.get(name, 1)
        for op, c in ops.items():
            weighted[op] += c * trips.get(name, 1)
        print(f"{name}: {n} instructions (x{trips.get(name, 1)} per program); top: {ops.most_common(10)}")
    print("per warp and program, shared-memory and shuffle traffic: "
          + ", ".join(f"{op} {weighted[op]}" for op in ("SHFL", "LDS", "LDSM", "STS", "BAR", "MUFU", "HMMA")))
    warps, programs = cfg["num_warps"], 8192
    per_s = 132 * 4 * 1.98e9  # H200: SMs x schedulers x boost clock, one warp instruction per cycle each
    print(f"per warp and program: ~{issued} instructions issued (loop bodies counted once per trip); "
          f"B1 T8192 at 32 heads ({programs} programs of {warps} warps) at one instruction per cycle per "
          f"scheduler: {issued * warps * programs / per_s * 1e3:.3f} ms")
    bodies = [("pass 1", (a1, b1), 16), ("pass 2", (a2, b2), 10)] + ([("between", (b1, a2), 30)] if args.between else [])
    for body, (a, b), top in bodies:
        src, cur = collections.Counter(), None
        for x in lines[a:b]:
            m = LINE.search(x)
            if m:
                cur = f"{os.path.basename(m.group(1))}:{m.group(2)}"
            elif INSTR.search(x):
                src[cur] += 1
        print(f"{body} body by source line (innermost inlined location):")
        for where, n in src.most_common(top):
            text = ""
            if where and where.startswith("chunk_intra.py:"):
                no = int(where.split(":")[1])
                with open(ci.__file__) as fh:
                    text = fh.read().splitlines()[no - 1].strip()
            print(f"  {n:5d}  {where}  {text[:90]}")


if __name__ == "__main__":
    main()
