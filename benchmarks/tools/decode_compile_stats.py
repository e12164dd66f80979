"""Offline compile of the decode kernel (``_recurrent_kda_fwd_kernel``) for sm_90 (no GPU needed,
``sm90_compile.py``) from the source tree given as the first argument, for the bench case of
``benchmarks/bench_kda_decode.py`` (pool mode, softplus gate, L2 norm and sigmoid in the kernel,
bf16 inputs, fp32 V-first pool) with each config of both tables (the cu_seqlens form's and batch
mode's): registers, spills, shared memory, and the
layout conversions (TTGIR), barriers and warp shuffles (PTX) on the path of one token. The optional
second argument is a file stem: each config's TTGIR and PTX are written beside it. ``--const NAME=INT``
adds or overrides a constexpr of the kernel (a patched tree's new one, e.g. ``SLOT_BLOCK=64``).

    python benchmarks/tools/decode_compile_stats.py <tree> [stem] [--const NAME=INT ...]
"""
import argparse
import re
import sys

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("tree")
parser.add_argument("stem", nargs="?")
parser.add_argument("--const", action="append", default=[], metavar="NAME=INT")
args = parser.parse_args()
sys.path.insert(0, args.tree)
from sm90_compile import compile_sm90, ptx_digest, sass_instruction_count, sass_opcode_digest  # noqa: E402

from kimiops.kda.kernels import recurrent as rec  # noqa: E402

POINTERS = {n: "*bf16" for n in ("q", "k", "v", "g", "beta", "o")}
POINTERS.update({"h0": "*fp32", "ht": "*fp32", "h0_idx": "*i32", "ht_idx": "*i32", "cu_seqlens": "*i32",
                 "A_log": "*fp32", "dt_bias": "*fp32", "num_acc": "*i32", "parent": "*i32"})
EXTRA = {name: int(value) for name, value in (c.split("=") for c in args.const)}
K = V = 128
HV = 32
for varlen, bv, nw, hints, early, *order in sorted({(varlen, *cfg) for varlen, rows in getattr(rec, "_CONFIGS").items()
                                                    for _, cfg in rows}):
    wait_first = bool(order and order[0])  # trees before the twenty-eighth session have 4-field configs
    const = dict(HV=HV, G=1, K=K, V=V, BK=K, BV=bv, NV=V // bv, S0_SLOT=HV * V * K, S0_HEAD=V * K,
                 ST_SLOT=HV * V * K, ST_HEAD=V * K, V_FIRST=True, IS_VARLEN=varlen, HAS_H0=True, HAS_H0_IDX=True,
                 HAS_HT=True, HAS_HT_IDX=True, INPLACE=True, SKIP_PADDED=True, USE_QK_L2NORM=True,
                 USE_BETA_SIGMOID=True, USE_GATE=True, USE_LOWER_BOUND=False, HAS_A=True, HAS_DT_BIAS=True,
                 EVEN_K=True, EVEN_V=True, PDL=True, STREAM_HINTS=hints, NEG_EIGVAL=False, SPEC=False,
                 HAS_NUM_ACC=False, STEPS=0, ST_ROW=0, HAS_PARENT=False,
                 EARLY_INPUTS=early, WAIT_FIRST=wait_first, PAD_SLOT=-1)
    const.update(EXTRA)
    k, regs = compile_sm90(rec._recurrent_kda_fwd_kernel, POINTERS, const, dict(num_warps=nw, num_stages=1))
    ttgir, ptx = k.asm["ttgir"], k.asm["ptx"]
    stats = {
        "convert_layout": len(re.findall(r"ttg\.convert_layout", ttgir)),
        "bar.sync": len(re.findall(r"\bbar\.sync|barrier\.sync", ptx)),
        "shfl": len(re.findall(r"shfl\.sync", ptx)),
        "st.shared": len(re.findall(r"st\.shared", ptx)),
        "ld.shared": len(re.findall(r"ld\.shared", ptx)),
    }
    stats["SASS instructions"] = sass_instruction_count(k.asm["cubin"])
    print(f"{'cu_seqlens' if varlen else 'batch'} BV={bv} num_warps={nw} stream_hints={hints} early_inputs={early}"
          f"{' wait_first=True' if wait_first else ''}{''.join(f' {n}={v}' for n, v in EXTRA.items())}: "
          f"{regs}; shared {k.metadata.shared} B; {stats}; PTX sha1 {ptx_digest(ptx)}; "
          f"SASS opcodes sha1 {sass_opcode_digest(k.asm['cubin'])}",
          flush=True)
    if args.stem:
        stem = f"{args.stem}_{'var' if varlen else 'batch'}_bv{bv}_w{nw}_h{int(hints)}_e{int(early)}_o{int(wait_first)}"
        open(f"{stem}.ttgir", "w").write(ttgir)
        open(f"{stem}.ptx", "w").write(ptx)
