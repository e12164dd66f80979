"""Chunked KDA prefill: kimiops Triton pipeline vs FLA 0.6 ``chunk_kda`` on one GPU.

Usage (GPU):
    python benchmarks/bench_kda_prefill.py                 # sweep + full table, JSON to benchmarks/results/
                                                           # (rewritten after every row; "complete": true at the end)
    python benchmarks/bench_kda_prefill.py --quick         # small subset
    python benchmarks/bench_kda_prefill.py --no-sweep      # default configs only
    python benchmarks/bench_kda_prefill.py --intra BK=16,num_warps=4 --state BV=64,num_warps=8

What it does:
1. Correctness gate: ours on a small bf16 case (T=512, H=2, softplus gate, varlen) against the fp64
   ``naive_recurrent_kda``; the run aborts if the error exceeds 5e-3 or anything is non-finite.
2. Sweep (unless --no-sweep): every intra candidate (with the default state config) and every state
   candidate (with the default intra config) on B1 T8192 and B8 T1024 (precomputed g), CUDA-graph
   medians; the pair of winners is used for the table and written to the JSON.
3. Table: cases B1 T8192, B8 T1024, B4 T4096, B1 T32768, varlen 7 sequences totalling 16384; H=HV=32,
   K=V=128, bf16, q/k L2 norm in kernel, final state output; gate modes (``--modes``): ``g`` (precomputed
   log decay) and ``gate`` (softplus gate in kernel on raw logits, A_log, dt_bias), the issue's cells; ``lb``
   (lower-bound gate at -5 in kernel; FLA with ``safe_gate``, its fast path for bounded gates) and ``gk``
   (precomputed g made by the softplus gate from ``gate``'s logits: Kimi-like decays, most steps below
   -5, where ``g``'s ``logsigmoid(x + 2)`` stays above; a kernel whose speed depends on the gates'
   size shows it here), outside the geomean. For each: ours eager
   and CUDA-graph medians, per-stage graph medians (intra, state), FLA eager and graph medians (FLA
   graph only where it captures; varlen FLA is eager only), speedup (graph vs graph where both exist,
   else eager vs eager), TFLOP/s and % of the memory floor.

FLOP count (per chunk of C=64 tokens and value head; K, V head dims), the algorithmic work of the
chunked form at C = 64, kept as the nominal count whatever chunk the kernels use (CHUNK_SIZE is 32),
so TFLOP/s figures compare across versions:
    scores A_kk, A_qk (lower triangles)   2 * C^2 * K
    triangular inverse                     C^3 / 3
    w, u (triangular times [C, K+V])       C^2 * (K + V)
    state pass: w S, q S, k^T v'           6 * C * K * V
    A_qk v' (lower triangle)               C^2 * V
Memory floor: q, k, v, g, beta read once (input dtype), o written once, final state written once
(fp32), at the copy bandwidth 4.27 TB/s measured on the H200 (DESIGN.md section 4).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import sys
import time

import torch
import triton
import triton.testing

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checkout_path  # noqa: E402

checkout_path.import_path()

from kimiops.bench.timing import copy_bandwidth  # noqa: E402
from kimiops.kda import workspace  # noqa: E402
from kimiops.kda.gate import kda_gate, l2norm  # noqa: E402
from kimiops.kda.kernels import chunk as chunk_mod  # noqa: E402
from kimiops.kda.kernels.chunk_intra import INTRA_CANDIDATES, INTRA_CONFIG  # noqa: E402
from kimiops.kda.kernels.chunk_state import STATE_CANDIDATES, STATE_CONFIG_NARROW, STATE_CONFIG_WIDE  # noqa: E402
from kimiops.kda.reference import naive_recurrent_kda  # noqa: E402
from kimiops.testing import rel_err  # noqa: E402

try:
    from fla.ops.kda import chunk_kda as fla_chunk_kda

    import fla

    FLA_VERSION = getattr(fla, "__version__", "?")
except Exception as e:  # noqa: BLE001
    fla_chunk_kda = None
    FLA_VERSION = f"unavailable ({type(e).__name__}: {e})"

H = HV = 32
K = V = 128
C = 64  # chunk of the nominal FLOP count (see the docstring), not the kernels' chunk
VARLEN_LENS = [4096, 2048, 1000, 3000, 512, 5000, 728]  # 7 sequences, 16384 tokens
# the cells: (name, B, T, varlen lengths or None)
TABLE_CASES = (("B1_T8192", 1, 8192, None), ("B8_T1024", 8, 1024, None), ("B4_T4096", 4, 4096, None),
               ("B1_T32768", 1, 32768, None), ("varlen7_16384", 1, sum(VARLEN_LENS), VARLEN_LENS))
# --extra: batches of 2-3 sequences (below 128 sequence-head pairs at 32 heads, run in one part since
# the twentieth session), outside the cells and so outside the geomean; the part-layouts tool
# times them too: (name, B, T, varlen lengths or None)
EXTRA_CASES = [("B2_T4096", 2, 4096, None), ("B3_T4096", 3, 4096, None),
               ("varlen2_uneven", 1, 8192, [7000, 1192])]
EXTRA_NAMES = {c[0] for c in EXTRA_CASES}


def parse_overrides(text: str) -> dict:
    """Config overrides ``"key=value,key=value"`` -> dict (integer values as int, others as str);
    the command-line form of every prefill benchmark and tool."""
    def val(x):
        return int(x) if x.lstrip("-").isdigit() else x
    return {kv.split("=")[0]: val(kv.split("=")[1]) for kv in text.split(",") if kv}


# --------------------------------------------------------------------------- inputs
# gate modes: precomputed log decay, softplus gate in the kernel, lower-bound gate in the kernel
GATE_OF_MODE = {"g": "none", "gk": "none", "gate": "softplus", "lb": "lower_bound"}
ACCEPTANCE_MODES = ("g", "gate")  # the cells (the geomean); "lb" and "gk" are reported beside them
LOWER_BOUND = -5.0


def make_case(B, T, mode, lens=None, dtype=torch.bfloat16, seed=0, h=H, hv=HV):
    gen = torch.Generator(device="cuda").manual_seed(seed)

    def rnd(*shape):
        return torch.randn(*shape, generator=gen, device="cuda")

    q = rnd(B, T, h, K).to(dtype)
    k = rnd(B, T, h, K).to(dtype)
    v = rnd(B, T, hv, V).to(dtype)
    beta = torch.rand(B, T, hv, generator=gen, device="cuda").to(dtype)
    A_log = dt_bias = None
    if mode == "g":
        g = torch.nn.functional.logsigmoid(rnd(B, T, hv, K) + 2.0).to(dtype)
    else:  # raw logits for the softplus gate ("gate") or the lower-bound gate at -5 ("lb"); exp(A_log) in [1, 16]
        g = rnd(B, T, hv, K).to(dtype)
        A_log = torch.log(torch.rand(hv, generator=gen, device="cuda") * 15 + 1)
        dt_bias = rnd(hv * K) * 0.5
        if mode == "gk":  # those logits through the softplus gate, handed over precomputed
            g = kda_gate(g, A_log, dt_bias).to(dtype)
            A_log = dt_bias = None
    cu = None
    if lens is not None:
        cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32, device="cuda")
    return dict(q=q, k=k, v=v, g=g, beta=beta, A_log=A_log, dt_bias=dt_bias, cu=cu, mode=mode)


def warm_case(B, T, mode, lens=None):
    """``(case, ht, out)``: the inputs of ``make_case``, a final-state and an output buffer, after
    one call of ours (kernels compiled, every scratch buffer written)."""
    c = make_case(B, T, mode, lens=lens)
    ht = torch.empty(len(lens) if lens else B, HV, K, V, device="cuda")
    out = torch.empty_like(c["v"])
    ours_fn(c, ht, out)()
    return c, ht, out


def ours_fn(c, ht, out, intra=None, state=None, stage=None, pipeline=None, zero_padding_rows=False):
    """A call of ours on case ``c`` (``stage``: ``"intra"`` or ``"state"`` alone, from one plan);
    ``zero_padding_rows`` as ``KDABackend.extend`` passes it."""
    kwargs = dict(
        scale=K**-0.5, cu_seqlens=c["cu"], h0=None, h0_indices=None, ht=ht, ht_indices=None,
        state_v_first=False, use_qk_l2norm=True, use_beta_sigmoid=False,
        gate=GATE_OF_MODE[c["mode"]], A_log=c["A_log"], dt_bias=c["dt_bias"],
        lower_bound=LOWER_BOUND if c["mode"] == "lb" else None, out=out, intra_config=intra, state_config=state,
        pipeline_config=pipeline, zero_padding_rows=zero_padding_rows,
    )
    args = (c["q"], c["k"], c["v"], c["g"], c["beta"])
    if stage is None:
        return lambda: chunk_mod.chunk_kda_fwd(*args, **kwargs)
    plan = chunk_mod._plan(*args, **kwargs)
    launch = chunk_mod._launch_intra if stage == "intra" else chunk_mod._launch_state
    return lambda: launch(plan)


def fla_fn(c):
    if fla_chunk_kda is None:
        return None
    cu = c["cu"].long() if c["cu"] is not None else None
    # the lower-bound gate with FLA's fast path for bounded gates (safe_gate: M = 16 tensor-core sub-chunks)
    lb = dict(safe_gate=True, lower_bound=LOWER_BOUND) if c["mode"] == "lb" else {}

    def run():
        return fla_chunk_kda(
            c["q"], c["k"], c["v"], c["g"], c["beta"], scale=K**-0.5, initial_state=None,
            output_final_state=True, use_qk_l2norm_in_kernel=True, use_gate_in_kernel=GATE_OF_MODE[c["mode"]] != "none",
            A_log=c["A_log"], dt_bias=c["dt_bias"], cu_seqlens=cu, **lb,
        )

    return run


# --------------------------------------------------------------------------- timing
def bench_eager(fn, rep):
    return triton.testing.do_bench(fn, warmup=max(5, rep // 4), rep=rep, return_mode="median")


def _capture(fn, keep_graph=False):
    """``fn`` warmed up and captured on a side stream (the warm-up's stream: same workspace key)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph(keep_graph=keep_graph)
    with torch.cuda.graph(graph, stream=s):
        fn()
    torch.cuda.synchronize()
    return graph


def bench_graph(fn, rep):
    """Median of CUDA-graph replays (ms), or None when ``fn`` cannot be captured."""
    try:
        graph = _capture(fn)
    except Exception as e:  # noqa: BLE001
        print(f"    (graph capture failed: {type(e).__name__}: {str(e)[:120]})")
        torch.cuda.synchronize()
        return None
    return triton.testing.do_bench(graph.replay, warmup=max(5, rep // 4), rep=rep, return_mode="median")


# CUgraphInstantiate_flags of the CUDA driver API: replay each kernel node at the priority it was
# captured with (copied from its stream's priority during capture) instead of the launching stream's
CU_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY = 8


def bench_graph_node_priority(fn, rep):
    """Median (ms) of replays of ``fn``'s CUDA graph instantiated with
    ``CU_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY`` (driver API through ctypes; torch instantiates
    without it, so its replays run the forked stream's kernels at the launching stream's priority)."""
    import ctypes

    cuda = ctypes.CDLL("libcuda.so.1")
    graph = _capture(fn, keep_graph=True)
    exe = ctypes.c_void_p()
    rc = cuda.cuGraphInstantiateWithFlags(ctypes.byref(exe), ctypes.c_void_p(graph.raw_cuda_graph()),
                                          ctypes.c_ulonglong(CU_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY))
    if rc != 0:
        raise RuntimeError(f"cuGraphInstantiateWithFlags returned CUresult {rc}")

    def replay():
        err = cuda.cuGraphLaunch(exe, ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
        if err != 0:
            raise RuntimeError(f"cuGraphLaunch returned CUresult {err}")

    try:
        return triton.testing.do_bench(replay, warmup=max(5, rep // 4), rep=rep, return_mode="median")
    finally:
        torch.cuda.synchronize()
        cuda.cuGraphExecDestroy(exe)
        del graph


def ablate_graph_priority(rep, modes=("g",), names=None):
    """B1 cases (pipelined parts on a forked high-priority stream): eager, torch's graph replay, and
    the same graph instantiated to keep the captured node priorities."""
    for name, T in (("B1_T8192", 8192), ("B1_T32768", 32768)):
        if names and name not in names:
            continue
        for mode in modes:
            c = make_case(1, T, mode)
            ht = torch.empty(1, HV, K, V, device="cuda")
            out = torch.empty_like(c["v"])
            fn = ours_fn(c, ht, out)
            try:
                eager, graph = bench_eager(fn, rep), bench_graph(fn, rep)
                prio = bench_graph_node_priority(fn, rep)
                print(f"  priority {name}_{mode}: eager {eager:.3f} ms, graph {graph:.3f}, "
                      f"graph with node priorities {prio:.3f}")
            except Exception as e:  # noqa: BLE001
                print(f"  priority {name}_{mode} failed: {type(e).__name__}: {str(e)[:300]}")
            del c, ht, out
            workspace.empty_cache()


def flops(lens):
    per_chunk = 2 * C * C * K + C**3 / 3 + C * C * (K + V) + 6 * C * K * V + C * C * V
    return sum(math.ceil(L / C) for L in lens) * HV * per_chunk


def floor_bytes(c, N):
    b = sum(c[n].numel() * c[n].element_size() for n in ("q", "k", "v", "g", "beta"))
    b += c["v"].numel() * c["v"].element_size()  # o
    b += N * HV * K * V * 4  # final state
    return b


# --------------------------------------------------------------------------- stages
def correctness_gate():
    lens = [0, 1, 63, 64, 65, 300, 19]
    c = make_case(1, sum(lens), "gate", lens=lens, seed=1, h=2, hv=2)
    N = len(lens)
    ht = torch.empty(N, 2, K, V, device="cuda")
    out = torch.empty_like(c["v"])
    ours_fn(c, ht, out)()
    torch.cuda.synchronize()
    q, k = l2norm(c["q"].double()), l2norm(c["k"].double())
    g = kda_gate(c["g"].double(), c["A_log"], c["dt_bias"], None, output_dtype=torch.float64)
    ro, rs = naive_recurrent_kda(q, k, c["v"].double(), g, c["beta"].double(), scale=K**-0.5,
                                 output_final_state=True, cu_seqlens=c["cu"])
    eo, es = rel_err(out, ro), rel_err(ht, rs)  # inf for any NaN/Inf
    ok = eo < 5e-3 and es < 5e-3
    print(f"correctness gate: rel err o {eo:.2e}, state {es:.2e} -> {'ok' if ok else 'FAILED'}")
    return {"rel_err_o": eo, "rel_err_state": es, "ok": ok}


def sweep(rep):
    cases = [("B1_T8192", 1, 8192), ("B8_T1024", 8, 1024)]
    trials = [(i, STATE_CONFIG_NARROW) for i in INTRA_CANDIDATES] + [(INTRA_CONFIG, s) for s in STATE_CANDIDATES]
    results = []
    for intra, state in trials:
        times = []
        for name, B, T in cases:
            c = make_case(B, T, "g")
            ht = torch.empty(B, HV, K, V, device="cuda")
            out = torch.empty_like(c["v"])
            try:
                t = bench_graph(ours_fn(c, ht, out, intra, state), rep)
            except Exception as e:  # noqa: BLE001
                print(f"    config {intra} {state} failed: {type(e).__name__}: {str(e)[:200]}")
                t = None
            times.append(t)
            workspace.empty_cache()
        ok = all(t is not None for t in times)
        geo = math.exp(sum(math.log(t) for t in times) / len(times)) if ok else None
        results.append({"intra": intra, "state": state, "ms": times, "geomean_ms": geo})
        print(f"  sweep intra={intra} state={state}: " + ", ".join(
            f"{n}={t:.3f}ms" if t else f"{n}=fail" for (n, _, _), t in zip(cases, times)))
    best_intra = min((r for r in results[: len(INTRA_CANDIDATES)] if r["geomean_ms"]), key=lambda r: r["geomean_ms"])
    best_state = min((r for r in results[len(INTRA_CANDIDATES):] if r["geomean_ms"]), key=lambda r: r["geomean_ms"])
    print(f"  best intra {best_intra['intra']}, best state {best_state['state']}")
    return results, best_intra["intra"], best_state["state"]


ABLATE_INTRA = [  # (label, intra config overrides); "ablate" bits skip parts (timing only)
    ("default", {}),
    ("BK2 32", {"BK2": 32}),
    ("no register cap", {"maxnreg": 0}),
    ("maxnreg 192", {"maxnreg": 192}),
    ("maxnreg 128", {"maxnreg": 128}),
    ("loop stages 2", {"loop_stages": 2}),
    ("loop stages 1", {"loop_stages": 1}),
    ("4 warps", {"num_warps": 4}),
    ("no off-diag", {"ablate": 1}),
    ("no diag", {"ablate": 2}),
    ("no inverse", {"ablate": 4}),
    ("no w/qg/kg", {"ablate": 8}),
    ("pass 1 only", {"ablate": 4 | 8}),
    ("loads+stores", {"ablate": 15}),
    ("pass-2 gate skipped", {"ablate": 16}),
    ("gate evaluated twice", {"stash_g": False}),
]
ABLATE_STATE = [  # rows override STATE_CONFIG_NARROW (the default is the wide tile); see chunk_state.py
    ("BV16 2w 4st (narrow)", {}),
    ("BV16 2w 4st split both", {"split_ws": True, "split_kv": True}),
    ("BV16 2w 4st split none", {"split_ws": False, "split_kv": False}),
    ("BV16 2w 3st", {"num_stages": 3}),
    ("BV64 4w 3st (wide)", dict(STATE_CONFIG_WIDE)),
    ("BV64 4w 3st split both", dict(STATE_CONFIG_WIDE, split_ws=True, split_kv=True)),
    ("BV64 4w 3st split none", dict(STATE_CONFIG_WIDE, split_ws=False, split_kv=False)),
]


def ablate(rep, which="all", modes=("g",), rows=()):
    """Per-stage CUDA-graph medians of intra configs on B1 T8192 (B8 T1024 measured the same within
    2%; once per gate mode of ``modes``) and of state configs on B1 T8192, B4 T4096 and B8 T1024
    (precomputed g: the state stage does not see the gate), with the compiled kernels' registers
    and spills. ``rows``: label substrings; only matching rows run (all when empty)."""
    runs = [("B1_T8192", 1, 8192, m, ("intra",) + (("state",) if m == "g" else ())) for m in modes]
    if "g" not in modes:
        runs.append(("B1_T8192", 1, 8192, "g", ("state",)))
    runs += [("B4_T4096", 4, 4096, "g", ("state",)), ("B8_T1024", 8, 1024, "g", ("state",))]
    for name, B, T, mode, stage_names in runs:
        c = make_case(B, T, mode)
        ht = torch.empty(B, HV, K, V, device="cuda")
        out = torch.empty_like(c["v"])
        stages = [st for st in (("intra", ABLATE_INTRA, INTRA_CONFIG), ("state", ABLATE_STATE, STATE_CONFIG_NARROW))
                  if st[0] in stage_names]
        name = f"{name}_{mode}"
        for stage, table, base in (st for st in stages if which in ("all", st[0])):
            ours_fn(c, ht, out)()  # valid scratch for the state stage
            for label, over in table:
                if rows and not any(r in label for r in rows):
                    continue
                cfg = dict(base, **over)
                try:
                    fn = ours_fn(c, ht, out, cfg if stage == "intra" else None, cfg if stage == "state" else None,
                                 stage=stage)
                    ck = fn()
                    torch.cuda.synchronize()
                    t = bench_graph(fn, rep)
                    regs, spills = getattr(ck, "n_regs", "?"), getattr(ck, "n_spills", "?")
                    print(f"  ablate {name} {stage:<6}{label:<28}{t:8.3f} ms  regs {regs} spills {spills}  {over}")
                except Exception as e:  # noqa: BLE001
                    print(f"  ablate {name} {stage} {label} failed: {type(e).__name__}: {str(e)[:300]}")
        del c, ht, out
        workspace.empty_cache()


def _forced_parts(n):
    """Pipeline config that cuts every case into ``n`` parts (and no segments)."""
    return {"min_parts": n, "max_parts": n, "min_part_slots": 1, "below_pairs": 1 << 30, "max_seqs": 1 << 30,
            "segments": 1}


ABLATE_PIPELINE = [  # (label, state config overrides, pipeline config); the sixth session's first runs
    # also had the flat state grid, 8-32 parts and parts without stream priority (logs_h200_20261130b/).
    # Rows without state overrides take the library's default (the wide state tile).
    ("1 part", {}, {"max_parts": 1}),
    ("2 parts", {}, _forced_parts(2)),
    ("2 parts, narrow state", dict(STATE_CONFIG_NARROW), _forced_parts(2)),
    ("4 parts", {}, _forced_parts(4)),
    ("4 parts, narrow state", dict(STATE_CONFIG_NARROW), _forced_parts(4)),
    ("4 parts, state BV32 2w", dict(STATE_CONFIG_NARROW, BV=32), _forced_parts(4)),
    ("8 parts", {}, _forced_parts(8)),
    ("2 parts, forked stream", {}, dict(_forced_parts(2), pdl=False)),
    ("4 parts, forked stream", {}, dict(_forced_parts(4), pdl=False)),
    ("8 parts, forked stream", {}, dict(_forced_parts(8), pdl=False)),
    ("default", {}, None),
]


def ablate_pipeline(rep, modes=("g",), names=None):
    """Whole-pipeline CUDA-graph and eager medians for the number of pipelined parts, the stream
    priority and the state grid's shape, on the benchmark cases (``names``: a subset)."""
    cases = list(TABLE_CASES)
    for name, B, T, lens in cases:
        if names and name not in names:
            continue
        for mode in modes:
            c = make_case(B, T, mode, lens=lens)
            N = len(lens) if lens else B
            ht = torch.empty(N, HV, K, V, device="cuda")
            out = torch.empty_like(c["v"])
            for label, state, pipe in ABLATE_PIPELINE:
                fn = ours_fn(c, ht, out, state=state or None, pipeline=pipe)  # merged into the library's rule
                try:
                    fn()
                    torch.cuda.synchronize()
                    t = bench_graph(fn, rep)
                    eager = bench_eager(fn, rep)
                    print(f"  pipeline {name}_{mode} {label:<26}{t:8.3f} ms  eager {eager:.3f}")
                except Exception as e:  # noqa: BLE001
                    print(f"  pipeline {name}_{mode} {label} failed: {type(e).__name__}: {str(e)[:300]}")
            del c, ht, out
            workspace.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="B1 T8192 and varlen only, precomputed g")
    ap.add_argument("--no-sweep", action="store_true", help="skip the config sweep")
    ap.add_argument("--intra", default="", help="intra config override, e.g. BK=16,num_warps=4")
    ap.add_argument("--state", default="", help="state config override, e.g. BV=64,num_warps=8")
    ap.add_argument("--cases", default="", help="comma-separated case names to run (default: all)")
    ap.add_argument("--extra", action="store_true", help="also run EXTRA_CASES (not in the geomean)")
    ap.add_argument("--modes", default="g,gate", help="gate modes: g (precomputed), gate (softplus in the kernel), "
                                                      "lb (lower-bound gate at -5 in the kernel; FLA with safe_gate), "
                                                      "gk (precomputed Kimi-like g, the gate of gate's logits)")
    ap.add_argument("--ablate", nargs="?", const="all", choices=["all", "intra", "state", "pipeline", "priority"],
                    help="per-stage ablations / config timings (of one stage if named), then exit")
    ap.add_argument("--rows", default="", help="--ablate: comma-separated label substrings of the rows to run")
    ap.add_argument("--rep", type=int, default=30, help="do_bench rep (ms) per measurement")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("needs a CUDA GPU")
        return 1
    t_start = time.time()

    dev = torch.cuda.get_device_name()
    print(f"device {dev}, torch {torch.__version__}, triton {triton.__version__}, fla {FLA_VERSION}, "
          f"kimiops from {os.path.dirname(chunk_mod.__file__)}")
    gate = correctness_gate()
    if not gate["ok"]:
        return 2
    if args.ablate == "pipeline":
        ablate_pipeline(args.rep, args.modes.split(","), [c for c in args.cases.split(",") if c])
        return 0
    if args.ablate == "priority":
        ablate_graph_priority(args.rep, args.modes.split(","), [c for c in args.cases.split(",") if c])
        return 0
    if args.ablate:
        ablate(args.rep, args.ablate, args.modes.split(","), tuple(r for r in args.rows.split(",") if r))
        return 0

    intra, state = dict(INTRA_CONFIG), {}  # state: the launcher's choice by N * HV unless overridden
    sweep_results = None
    if not args.no_sweep and not args.quick:
        # the sweep's state winner is reported only: the launcher picks the state config by N * HV
        sweep_results, intra, _ = sweep(args.rep)
    intra.update(parse_overrides(args.intra))
    state.update(parse_overrides(args.state))
    print(f"configs: intra {intra}, state {state}")
    copy_bw = copy_bandwidth()  # bytes/s, read + write, measured in this process
    print(f"copy bandwidth {copy_bw / 1e12:.2f} TB/s (read+write)")

    cases = list(TABLE_CASES)
    modes = args.modes.split(",")
    if args.quick:
        cases = [cases[0], cases[4]]
        modes = ["g"]
    elif args.cases:
        cases = [c for c in cases if c[0] in args.cases.split(",")]
    if args.extra:
        cases += EXTRA_CASES
    rows = []
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"kda_prefill_{'quick_' if args.quick else ''}"
                                  f"{datetime.datetime.now().strftime('%Y%m%d_%H%M%S')}.json")

    def save(complete):
        """(Re)write the results file; after every row, so a run cut short still leaves its rows."""
        sp = [r["speedup"] for r in rows if r["speedup"] and r["acceptance"]]
        geo = math.exp(sum(map(math.log, sp)) / len(sp)) if sp else None
        result = dict(
            bench="kda_prefill", date=datetime.datetime.now(datetime.timezone.utc).isoformat(), device=dev,
            capability=list(torch.cuda.get_device_capability()), torch=torch.__version__, triton=triton.__version__,
            fla=FLA_VERSION, python=platform.python_version(), H=H, HV=HV, K=K, V=V, dtype="bfloat16",
            numerics=dict((k2, str(v2)) for k2, v2 in chunk_mod.NUMERICS_CONFIG.items()),
            intra_config=intra, state_config=state, pipeline_config=dict(chunk_mod.PIPELINE_CONFIG),
            correctness_gate=gate, sweep=sweep_results, rows=rows,
            complete=complete, geomean_speedup=geo, min_speedup=min(sp) if sp else None, copy_bw=copy_bw,
            flop_formula="per chunk & head: 2C^2K + C^3/3 + C^2(K+V) + 6CKV + C^2V",
            wall_s=time.time() - t_start,
        )
        with open(path, "w") as fh:
            json.dump(result, fh, indent=1)
        return geo, sp

    header = (f"{'case':<15}{'mode':<6}{'ours eager':>11}{'ours graph':>11}{'intra':>8}{'state':>8}"
              f"{'FLA eager':>10}{'FLA graph':>10}{'speedup':>8}{'TFLOP/s':>8}{'%floor':>7}")
    print(header)
    for name, B, T, lens in cases:
        for mode in modes:
            c = make_case(B, T, mode, lens=lens)
            N = len(lens) if lens else B
            seq_lens = lens if lens else [T] * B
            ht = torch.empty(N, HV, K, V, device="cuda")
            out = torch.empty_like(c["v"])
            ours = ours_fn(c, ht, out, intra, state)
            ours()
            e_ours = bench_eager(ours, args.rep)
            g_ours = bench_graph(ours, args.rep)
            g_intra = bench_graph(ours_fn(c, ht, out, intra, state, stage="intra"), args.rep)
            g_state = bench_graph(ours_fn(c, ht, out, intra, state, stage="state"), args.rep)
            e_fla = g_fla = None
            f = fla_fn(c)
            if f is not None:
                try:
                    f()
                    e_fla = bench_eager(f, args.rep)
                    if lens is None:
                        g_fla = bench_graph(f, args.rep)
                except Exception as e:  # noqa: BLE001
                    print(f"    FLA failed: {type(e).__name__}: {str(e)[:200]}")
            if g_fla is not None and g_ours is not None:
                speedup, basis = g_fla / g_ours, "graph"
            elif e_fla is not None:
                speedup, basis = e_fla / e_ours, "eager"
            else:
                speedup, basis = None, None
            best = g_ours if g_ours is not None else e_ours
            tflops = flops(seq_lens) / (best * 1e-3) / 1e12
            floor_ms = floor_bytes(c, N) / copy_bw * 1e3
            row = dict(case=name, mode=mode, B=B, T=T, lens=seq_lens, ours_eager_ms=e_ours, ours_graph_ms=g_ours,
                       intra_graph_ms=g_intra, state_graph_ms=g_state, fla_eager_ms=e_fla, fla_graph_ms=g_fla,
                       speedup=speedup, speedup_basis=basis, tflops=tflops, floor_ms=floor_ms,
                       pct_of_floor=100 * floor_ms / best,
                       acceptance=name not in EXTRA_NAMES and mode in ACCEPTANCE_MODES)
            rows.append(row)
            save(complete=False)

            def fmt(x, w, p=3):
                return f"{x:>{w}.{p}f}" if x is not None else f"{'-':>{w}}"

            print(f"{name:<15}{mode:<6}{fmt(e_ours, 11)}{fmt(g_ours, 11)}{fmt(g_intra, 8)}{fmt(g_state, 8)}"
                  f"{fmt(e_fla, 10)}{fmt(g_fla, 10)}{fmt(speedup, 8, 2)}{fmt(tflops, 8, 1)}"
                  f"{fmt(row['pct_of_floor'], 7, 1)}")
            del c, ht, out
            workspace.empty_cache()
            torch.cuda.empty_cache()
    geo, sp = save(complete=True)
    if geo:
        print(f"speedup vs FLA over the issue's cells: geomean {geo:.2f}x, min {min(sp):.2f}x")
    print(f"wrote {path} ({time.time() - t_start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
