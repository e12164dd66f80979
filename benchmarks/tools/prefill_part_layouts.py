"""Whole prefill calls (CUDA-graph medians, optionally eager) under different cuts of the chunk
slots into pipelined parts, at B1 where the parts run (``chunk.pipeline_parts``).

A layout is a string:

* ``rule``: what the library's ``pipeline_parts`` gives (one part for several sequences or at 64
  sequence-head pairs or more);
* ``uP``: P near-equal parts;
* ``h1,h2,..|M|t1,t2,..``: head parts of h1, h2, .. slots, then near-equal parts of about M slots,
  then tail parts of t1, t2, .. slots (either list may be empty);

optionally followed by ``@key=value,..``: state-stage config overrides for that layout (e.g.
``u8@num_stages=4``).

Each layout's output and final state are compared bit for bit with the one-part call (the parts
chain the state through fp32 scratch, so every cut must give the same bits); layouts with other
state configs that change the arithmetic (e.g. ``@split_kv=0``) print their relative difference instead.

    PYTHONPATH=$PWD:$PWD/benchmarks python3 benchmarks/tools/prefill_part_layouts.py \
        --cases B1_T8192 --layouts "u4;u8;16,32|64|32,16"
"""
import argparse

import torch

from bench_kda_prefill import (EXTRA_CASES, HV, K, V, VARLEN_LENS, bench_eager, bench_graph, make_case, ours_fn,
                               parse_overrides)
import kimiops
from kimiops.kda import workspace
from kimiops.testing import rel_err
from kimiops.kda.runner import forget_eager
from kimiops.kda.kernels import chunk as chunk_mod

CASES = {  # name: (B, T, varlen lengths or None)
    **{f"B1_T{t}": (1, t, None) for t in (256, 1024, 2048, 4096, 8192, 16384, 32768)},
    "B8_T1024": (8, 1024, None), "B4_T4096": (4, 4096, None), "varlen7_16384": (1, sum(VARLEN_LENS), VARLEN_LENS),
    # few sequences (below 128 sequence-head pairs at 32 heads, where the library cut them into parts
    # until the twentieth session: a part's slot range holds whole runs of one sequence's chunks)
    **{name: (B, T, lens) for name, B, T, lens in EXTRA_CASES},
    "varlen2_8192": (1, 8192, [4096, 4096]), "varlen3_12288": (1, 12288, [6000, 4000, 2288]),
}


def state_overrides(spec: str) -> dict | None:
    """The state config overrides after ``@`` in ``spec`` (ints), or None."""
    if "@" not in spec:
        return None
    return parse_overrides(spec.split("@", 1)[1])


def part_bounds(spec: str, n_slots: int) -> list[tuple[int, int]]:
    """Slot ranges ``[lo, hi)`` of layout ``spec`` over ``n_slots`` chunk slots."""
    spec = spec.split("@", 1)[0]
    if spec.startswith("u"):
        n = int(spec[1:])
        return [(n_slots * i // n, n_slots * (i + 1) // n) for i in range(n)]
    head_s, mid_s, tail_s = spec.split("|")
    head = [int(x) for x in head_s.split(",") if x]
    tail = [int(x) for x in tail_s.split(",") if x]
    rest = n_slots - sum(head) - sum(tail)
    if rest < 0:
        raise ValueError(f"layout {spec!r}: head and tail exceed {n_slots} slots")
    n_mid = max(1, round(rest / int(mid_s))) if rest else 0
    sizes = head + [rest * (i + 1) // n_mid - rest * i // n_mid for i in range(n_mid)] + tail
    bounds, lo = [], 0
    for s in sizes:
        bounds.append((lo, lo + s))
        lo += s
    assert lo == n_slots
    return bounds


def public_fn(c):
    """An eager call of the public ``kimiops.chunk_kda`` on case ``c`` (final state out)."""
    def run():
        return kimiops.chunk_kda(c["q"], c["k"], c["v"], c["g"], c["beta"], scale=K**-0.5,
                                 output_final_state=True, use_qk_l2norm_in_kernel=True,
                                 use_gate_in_kernel=c["mode"] == "gate", A_log=c["A_log"], dt_bias=c["dt_bias"],
                                 cu_seqlens=c["cu"])
    return run


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cases", default="B1_T8192,B1_T32768")
    p.add_argument("--modes", default="g,gate")
    p.add_argument("--layouts", default="u4;u8", help="layouts separated by ';'")
    p.add_argument("--rounds", type=int, default=2, help="timing rounds over all layouts (alternated)")
    p.add_argument("--eager", action="store_true", help="also time eager calls of the public kimiops.chunk_kda "
                   "(after its first calls: the eager shortcut's replay of the recorded launches)")
    p.add_argument("--rep", type=int, default=20)
    p.add_argument("--heads", type=int, default=HV, help="q/k and value heads (H = HV) of every case")
    args = p.parse_args()
    layouts = [x for x in args.layouts.split(";") if x]
    orig = chunk_mod.pipeline_parts
    for name in args.cases.split(","):
        B, T, lens = CASES[name]
        for mode in args.modes.split(","):
            c = make_case(B, T, mode, lens=lens, h=args.heads, hv=args.heads)
            N = len(lens) if lens else B
            ref_ht = torch.empty(N, args.heads, K, V, device="cuda")
            ref_o = torch.empty_like(c["v"])
            chunk_mod.pipeline_parts = lambda n, pairs, config=None, seqs=1: [(0, n)]
            ours_fn(c, ref_ht, ref_o)()
            torch.cuda.synchronize()
            times = {spec: [] for spec in layouts}
            for rnd in range(args.rounds):
                for spec in layouts if rnd % 2 == 0 else layouts[::-1]:
                    if spec.split("@", 1)[0] == "rule":
                        chunk_mod.pipeline_parts = orig
                    else:
                        chunk_mod.pipeline_parts = lambda n, pairs, config=None, seqs=1, s=spec: part_bounds(s, n)
                    ht = torch.empty_like(ref_ht)
                    out = torch.empty_like(ref_o)
                    fn = ours_fn(c, ht, out, state=state_overrides(spec))
                    fn()
                    torch.cuda.synchronize()
                    if rnd == 0:
                        same = torch.equal(out, ref_o) and torch.equal(ht, ref_ht)
                        n_slots = T // 32 + N if lens else B * ((T + 31) // 32)
                        if spec.startswith("rule"):
                            bounds = orig(n_slots, N * args.heads, seqs=N)
                        else:
                            bounds = part_bounds(spec, n_slots)
                        sizes = [hi - lo for lo, hi in bounds]
                        diff = "" if same else (f" (rel diff o {rel_err(out, ref_o):.2e}, "
                                                f"state {rel_err(ht, ref_ht):.2e})")
                        print(f"{name} {mode} {spec}: {len(sizes)} parts {sizes} bit-equal to one part: {same}{diff}",
                              flush=True)
                    times[spec].append(bench_graph(fn, args.rep))
                    if args.eager and rnd == 0:
                        forget_eager()  # the shortcut must record this layout's launches
                        print(f"  eager {name} {mode} {spec}: {bench_eager(public_fn(c), args.rep):.3f} ms", flush=True)
            for spec in layouts:
                ts = " / ".join(f"{t:.3f}" for t in times[spec])
                heads = f" ({args.heads} heads)" if args.heads != HV else ""
                print(f"graph {name} {mode} {spec:<24} {ts} ms{heads}", flush=True)
            chunk_mod.pipeline_parts = orig
            del c
            workspace.empty_cache()


if __name__ == "__main__":
    main()
