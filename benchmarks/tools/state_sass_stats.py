"""SASS statistics of the wide ``chunk_state_kernel`` config (``STATE_CONFIG_WIDE``) of a source tree,
compiled offline for sm_90 (``sm90_compile.py``, then Triton's ptxas and nvdisasm; no GPU needed):
registers and spills, and in the chunk loop the wgmma instructions and waits, the reciprocals
(``MUFU.RCP``), the CTA barriers (``BAR.SYNC``), the global stores (``STG``) and the longest chain
of dependent max / shuffle instructions (the row maxima of the fp16 splits), counted through
register def-use.

    python benchmarks/tools/state_sass_stats.py <tree> [<tree> ...]   # e.g. git worktrees of branches
"""
import collections
import os
import re
import subprocess
import sys
import tempfile

import triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sm90_compile import compile_sm90  # noqa: E402

POINTERS = {n: "*fp16" for n in ("w", "wq", "ke", "qg", "kg", "aqk")}
POINTERS.update({n: "*fp32" for n in ("u", "tb", "gc", "rn", "h0", "ht", "carry", "track")})
POINTERS.update({"v": "*bf16", "o": "*bf16", "h0_indices": "*i32", "ht_indices": "*i32", "cu_seqlens": "*i32",
                 "order": "*i32", "track_idx": "*i32"})
BIN = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin")


def loop_stats(sass: str) -> dict:
    """Counts over the first loop body (from ``.L_x_1:`` to the branch back to it): instructions,
    wgmma instructions and waits, reciprocals, barriers, global stores, spill stores and loads, the
    longest max / shuffle chain, the wgmma groups in issue order (``HGMMA`` count between an ``ARRIVE`` and its wait), where
    in the loop (instruction index) its plain loads, shared-memory stores, barriers and wgmma waits
    sit, and the top opcodes."""
    lines = sass.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(".L_x_1:"))
    depth, longest, counts = {}, 0, {"HGMMA": 0, "WARPGROUP.DEPBAR": 0, "MUFU.RCP": 0, "BAR.SYNC": 0, "STG": 0, "STL": 0, "LDL": 0}
    ops, groups, marks = collections.Counter(), [], []
    for line in lines[start + 1:]:
        if "BRA" in line and ".L_x_1" in line:
            break
        for op in counts:
            counts[op] += op in line
        m = re.search(r"/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", line)
        if m:
            ops[m.group(2)] += 1
            full = line[m.end(1) if m.group(1) else m.start(2):].split()[0]
            if m.group(2) in ("LDG", "STS", "STSM", "BAR") or full == "WARPGROUP.DEPBAR.LE":
                marks.append(f"{sum(ops.values())}:{full}")
        if "WARPGROUP.ARRIVE" in line:
            groups.append(0)
        elif "HGMMA" in line and groups:
            groups[-1] += 1
        m = re.search(r"\s(FMNMX|SHFL\.\w+)\s+(R\d+),\s*(.*);", line)
        if m:
            d = 1 + max([depth.get(r, 0) for r in re.findall(r"R\d+", m.group(3))] + [0])
            depth[m.group(2)] = d
            longest = max(longest, d)
    return dict(counts, longest_max_chain=longest, instructions=sum(ops.values()), wgmma_groups=groups,
                marks=" ".join(marks), top=ops.most_common(12))


def main() -> None:
    for tree in sys.argv[1:]:
        sys.path.insert(0, tree)
        for mod in [m for m in sys.modules if m.startswith("kimiops")]:
            del sys.modules[mod]
        from kimiops.kda.kernels import chunk_state as cs
        cfg = cs.STATE_CONFIG_WIDE
        const = dict(HV=32, K=128, V=128, C=32, BV=cfg["BV"], STATE_V_FIRST=True, HAS_H0=True, HAS_H0_IDX=False,
                     HAS_HT=True, HAS_HT_IDX=False, IS_VARLEN=False, ORDERED=False, HI_FIRST=cfg["hi_first"],
                     SPLIT_WS=cfg["split_ws"], SPLIT_KV=cfg["split_kv"], V_TILES_ADJACENT=False, GRID_3D=True,
                     PARTED=False, INV_PREC="tf32", PDL=False, ROW_NORMS=True, SLICE=16,
                     FUSE_WQ=cfg.get("fuse_wq", False), TREE_MAX=cfg.get("tree_max", False),
                     POW2_SCALE=cfg.get("pow2_scale", False), SEG=0, TRACK_STEPS=0)
        k, regs = compile_sm90(cs.chunk_state_kernel, POINTERS, const,
                               dict(num_warps=cfg["num_warps"], num_stages=cfg["num_stages"]))
        with tempfile.TemporaryDirectory() as d:
            ptx, cubin = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
            with open(ptx, "w") as f:
                f.write(k.asm["ptx"])
            subprocess.run([os.path.join(BIN, "ptxas"), "-arch=sm_90a", ptx, "-o", cubin], check=True)
            sass = subprocess.run([os.path.join(BIN, "nvdisasm"), "-c", cubin], check=True, capture_output=True,
                                  text=True).stdout
        print(f"{tree}: wide {cfg}: {regs}; chunk loop {loop_stats(sass)}", flush=True)
        sys.path.remove(tree)


if __name__ == "__main__":
    main()
