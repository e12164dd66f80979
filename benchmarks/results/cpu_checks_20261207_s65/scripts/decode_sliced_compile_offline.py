"""Sixty-fifth session: offline sm_90 compile of the decode kernel's tiles-per-program path for the bench case (BV 8,
one warp, each form with its table's flags; the sixty-fourth session's script did batch mode alone).

1. Batch mode and the cu_seqlens form with 1, 8 or 16 V tiles per program (TileConfig.slices) at 2-4 pipeline
   stages: registers, shared memory, async copies in the TTGIR, SASS instructions.
2. The cu_seqlens form at 16 tiles and 3 stages under register caps: registers, spill stores, and where the first
   local load or store (a spill) falls in the SASS listing against the last async copy (LDGSTS).

    PYTHONPATH=$PWD python3 benchmarks/results/cpu_checks_20261207_s65/scripts/decode_sliced_compile_offline.py
"""
import re
import sys

sys.path.insert(0, "benchmarks/tools")  # run from the repository root with PYTHONPATH=$PWD
from sm90_compile import compile_sm90, sass_instruction_count, sass_text  # noqa: E402

from kimiops.kda.kernels import recurrent as rec  # noqa: E402

POINTERS = {n: "*bf16" for n in ("q", "k", "v", "g", "beta", "o")}
POINTERS.update({"h0": "*fp32", "ht": "*fp32", "h0_idx": "*i32", "ht_idx": "*i32", "cu_seqlens": "*i32",
                 "A_log": "*fp32", "dt_bias": "*fp32", "num_acc": "*i32", "parent": "*i32"})
if "NS" not in rec._recurrent_kda_fwd_kernel.arg_names:
    sys.exit("needs the kernel of decode_sliced_v2.patch (TileConfig.slices); main has no tiles-per-program path")
K = V = 128
HV = 32


def compile_case(varlen, ns, stages, hints, maxnreg=None):
    const = dict(HV=HV, G=1, K=K, V=V, BK=K, BV=8, NV=16, S0_SLOT=HV * V * K, S0_HEAD=V * K,
                 ST_SLOT=HV * V * K, ST_HEAD=V * K, V_FIRST=True, IS_VARLEN=varlen, HAS_H0=True, HAS_H0_IDX=True,
                 HAS_HT=True, HAS_HT_IDX=True, INPLACE=True, SKIP_PADDED=True, USE_QK_L2NORM=True,
                 USE_BETA_SIGMOID=True, USE_GATE=True, USE_LOWER_BOUND=False, HAS_A=True, HAS_DT_BIAS=True,
                 EVEN_K=True, EVEN_V=True, PDL=True, STREAM_HINTS=hints, NEG_EIGVAL=False, SPEC=False,
                 HAS_NUM_ACC=False, STEPS=0, ST_ROW=0, HAS_PARENT=False,
                 EARLY_INPUTS=not varlen, WAIT_FIRST=False, PAD_SLOT=-1, NS=ns, NS_STAGES=stages)
    options = dict(num_warps=1, num_stages=1)
    if maxnreg:
        options["maxnreg"] = maxnreg
    return compile_sm90(rec._recurrent_kda_fwd_kernel, POINTERS, const, options)


for varlen in (False, True):
    for ns, stages, hints in ((1, 1, True), (16, 2, True), (16, 3, True), (16, 4, True), (16, 3, False),
                              (8, 3, True)):
        k, regs = compile_case(varlen, ns, stages, hints)
        copies = len(re.findall("async_copy_global_to_local", k.asm["ttgir"]))
        print(f"{'cu_seqlens' if varlen else 'batch'} NS={ns} stages={stages} hints={hints}: {regs}; "
              f"shared {k.metadata.shared} B; async copies {copies}; SASS {sass_instruction_count(k.asm['cubin'])}",
              flush=True)
for cap in (None, 96, 80, 72, 64):
    k, regs = compile_case(True, 16, 3, True, cap)
    lines = sass_text(k.asm["cubin"])
    spills = [i for i, line in enumerate(lines) if re.search(r"\b(STL|LDL)\b", line)]
    last_copy = max(i for i, line in enumerate(lines) if "LDGSTS" in line)
    print(f"cu_seqlens NS=16 stages=3 maxnreg={cap}: {regs}; SASS {sass_instruction_count(k.asm['cubin'])}; "
          f"local loads/stores {len(spills)}, the first at listing line {spills[0] if spills else '-'}; "
          f"last LDGSTS at line {last_copy}", flush=True)
