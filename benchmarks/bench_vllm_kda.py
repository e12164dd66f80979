"""kimiops against vLLM's own KDA kernels, in the calls vLLM's Kimi-Linear layer makes.

vLLM 0.33 runs Kimi-Linear's KDA layer (``KimiGatedDeltaNetAttention._forward``) on three functions
of ``vllm.models.kimi_k3.nvidia.ops.third_party.kda``; this script times each against the kimiops
call that computes the same thing, with the same inputs, in one process:

- ``packed``: ``fused_recurrent_kda_packed_decode(mixed_qkv, raw_g, raw_beta, A_log, dt_bias,
  lower_bound, pool, state_indices)``, one token per request from the convolution's packed output,
  against ``kimiops.fused_recurrent_kda`` on ``[N, 1, heads, dim]`` views of ``mixed_qkv``;
- ``spec``: ``fused_recurrent_kda(q, k, v, raw_g, raw_beta, ..., cu_seqlens, ssm_state_indices
  [N, 4], num_accepted_tokens)``, speculative decode with 4 tokens per request, against
  ``kimiops.fused_recurrent_kda`` with the same indices;
- both decodes also through ``kimiops.integrations.vllm``'s adapters (the functions vLLM's module
  holds once the integration is enabled; their bits must be the direct call's);
- ``prefill``: ``chunk_kda_with_fused_gate(q, k, v, raw_g, raw_beta, A_log, g_bias, ...,
  initial_state, output_final_state=True, use_qk_l2norm_in_kernel=True, cu_seqlens)`` against
  ``kimiops.chunk_kda`` with the gate, the L2 norm and the sigmoid in its kernels, and against the
  same call through ``kimiops.integrations.vllm`` (``enable()`` on the loaded vLLM module; its
  output must be the bits of the direct call).

Shapes as vLLM hands them over: H = 32 heads, K = V = 128, bf16 activations, fp32 pool
``[slots, H, V, K]`` (slot 0 is vLLM's null block: every request gets a slot >= 1), softplus gate
with ``A_log [H]`` and ``dt_bias [H * K]``. Decode calls: CUDA-graph medians of 20 chained calls,
best of 3 interleaved rounds, with the same slots in every call and with 20 disjoint slot sets
(cold); eager as the pace of back-to-back calls. Prefill: eager medians (vLLM's prefill syncs
with the host to build its chunk indices, so it cannot be captured) and ours also as a CUDA-graph
replay. Before timing, each pair is run from the
same pool and compared (outputs and written states, relative error). vLLM's prefill writes its
output into ``v`` (it passes ``o=v`` to its last kernel when no ``out`` is given), so it gets its own
copy of ``v``.

vLLM's kernels are loaded from the directory that ``benchmarks/tools/vllm_kda_extract.py`` builds
out of a vLLM wheel (``--vllm-src``, default ``.exp/vllm_kda``).

    PYTHONPATH=$PWD python3 benchmarks/bench_vllm_kda.py --vllm-src .exp/vllm_kda
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys

import torch
import triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checkout_path  # noqa: E402

checkout_path.import_path()

import kimiops  # noqa: E402
from bench_kda_decode import GRAPH_CALLS, versions  # noqa: E402
from kimiops.bench.results import write_result  # noqa: E402
from kimiops.integrations.engine import packed_token_views  # noqa: E402
from kimiops.bench.timing import graph_us, loop_us  # noqa: E402
from kimiops.testing import rel_err  # noqa: E402

H = 32
K = V = 128
SPEC = 4
PREFILL_CASES = [("B1_T8192", [8192]), ("B8_T1024", [1024] * 8), ("B4_T4096", [4096] * 4),
                 ("B1_T32768", [32768]), ("varlen7_16384", [4096, 2048, 1000, 3000, 512, 5000, 728])]


def load_vllm(src):
    sys.path.insert(0, os.path.abspath(src))
    from vllm.models.kimi_k3.nvidia.ops.third_party import kda  # noqa: PLC0415

    with open(os.path.join(src, "SOURCE")) as f:
        return kda, f.read().strip()


def gate_params(gen):
    return (torch.log(torch.rand(H, device="cuda", generator=gen) * 15 + 1),
            torch.randn(H * K, device="cuda", generator=gen))


def best_us(fns: dict, rounds: int) -> dict:
    """Graph medians per name (each entry a list of callables captured back to back), best round."""
    best: dict = {}
    for _ in range(rounds):
        for name, calls in fns.items():
            us = graph_us(calls)
            best[name] = min(best.get(name, us), us)
    return best


def decode_rows(vk, ns, rounds, gen):
    from kimiops.integrations import vllm as vl  # noqa: PLC0415

    bf = torch.bfloat16
    A_log, dt_bias = gate_params(gen)
    slots = 1 + GRAPH_CALLS * SPEC * max(ns)
    pool = torch.randn(slots, H, V, K, device="cuda", generator=gen) * 0.1
    rows = []
    for N in ns:
        perm = 1 + torch.randperm(slots - 1, device="cuda", generator=gen).to(torch.int32)  # never slot 0
        sets = [perm[i * N:(i + 1) * N].contiguous() for i in range(GRAPH_CALLS)]
        mixed = torch.randn(N, 3 * H * K, device="cuda", generator=gen).to(bf)
        raw_g = torch.randn(1, N, H, K, device="cuda", generator=gen).to(bf)
        raw_beta = torch.randn(1, N, H, device="cuda", generator=gen).to(bf)
        q, k, v = packed_token_views(mixed, H, H, K, V)

        def vllm_packed(idx):
            return lambda: vk.fused_recurrent_kda_packed_decode(mixed, raw_g, raw_beta, A_log, dt_bias, None, pool, idx)

        def adapter_packed(idx):  # the call vLLM's layer makes, with kimiops.integrations.vllm enabled
            return lambda: vl.fused_recurrent_kda_packed_decode(mixed, raw_g, raw_beta, A_log, dt_bias, None, pool, idx)

        def ours_packed(idx):
            return lambda: kimiops.fused_recurrent_kda(
                q, k, v, raw_g.view(N, 1, H, K), raw_beta.view(N, 1, H), None, pool, use_qk_l2norm_in_kernel=True,
                use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True, A_log=A_log, dt_bias=dt_bias,
                state_v_first=True, ssm_state_indices=idx)

        # speculative decode: 4 tokens per request, the state after each token to its own slot
        T = N * SPEC
        smixed = torch.randn(T, 3 * H * K, device="cuda", generator=gen).to(bf)
        sq, sk, sv = (x.unflatten(-1, (H, K)).unsqueeze(0) for x in smixed.split(H * K, dim=-1))
        sg = torch.randn(1, T, H, K, device="cuda", generator=gen).to(bf)
        sb = torch.randn(1, T, H, device="cuda", generator=gen).to(bf)
        cu = torch.arange(N + 1, dtype=torch.int32, device="cuda") * SPEC
        acc = torch.randint(1, SPEC + 1, (N,), dtype=torch.int32, device="cuda", generator=gen)
        spec_sets = [perm[i * T:(i + 1) * T].view(N, SPEC).contiguous() for i in range(GRAPH_CALLS)]

        def vllm_spec(idx):
            return lambda: vk.fused_recurrent_kda(sq, sk, sv, sg, sb, A_log, dt_bias, None, pool, cu, idx,
                                                  num_accepted_tokens=acc)

        def adapter_spec(idx):
            return lambda: vl.fused_recurrent_kda(sq, sk, sv, sg, sb, A_log, dt_bias, None, pool, cu, idx,
                                                  num_accepted_tokens=acc)

        def ours_spec(idx):
            return lambda: kimiops.fused_recurrent_kda(
                sq, sk, sv, sg, sb, None, pool, use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
                use_beta_sigmoid_in_kernel=True, A_log=A_log, dt_bias=dt_bias, state_v_first=True, cu_seqlens=cu,
                ssm_state_indices=idx, num_accepted_tokens=acc)

        # the same step from the same pool: outputs and every written slot; the adapter's bits are ours
        check = {}
        for name, (fv, fo, fa, idx, out_view) in {
            "packed": (vllm_packed, ours_packed, adapter_packed, sets[0], lambda o: o.reshape(N, H, V)),
            "spec": (vllm_spec, ours_spec, adapter_spec, spec_sets[0], lambda o: o.reshape(T, H, V)),
        }.items():
            saved = pool.clone()
            outs = []
            for f in (fv, fo, fa):
                pool.copy_(saved)
                outs.append((out_view(f(idx)()[0]).float(), pool[idx.long().flatten()].clone()))
            pool.copy_(saved)
            (ov, sv_), (oo, so), (oa, sa) = outs
            check[name] = {"o": rel_err(oo, ov), "states": rel_err(so, sv_),
                           "adapter_bits_equal_ours": bool(torch.equal(oa, oo) and torch.equal(sa, so))}
        fns = {
            "vllm_packed": [vllm_packed(sets[0])] * GRAPH_CALLS, "ours_packed": [ours_packed(sets[0])] * GRAPH_CALLS,
            "vllm_packed_cold": [vllm_packed(i) for i in sets], "ours_packed_cold": [ours_packed(i) for i in sets],
            "vllm_spec": [vllm_spec(spec_sets[0])] * GRAPH_CALLS, "ours_spec": [ours_spec(spec_sets[0])] * GRAPH_CALLS,
            "adapter_packed": [adapter_packed(sets[0])] * GRAPH_CALLS,
            "adapter_spec": [adapter_spec(spec_sets[0])] * GRAPH_CALLS,
        }
        t = best_us(fns, rounds)
        # eager: the pace of back-to-back calls (host-bound at small N), same slots
        eager = {name: loop_us(calls[0], n=500, rounds=5, sync=torch.cuda.synchronize, warmup=3)
                 for name, calls in fns.items() if not name.endswith("_cold")}
        rows.append({"N": N, **{f"{k}_us": round(x, 3) for k, x in t.items()},
                     **{f"{k}_eager_us": round(x, 2) for k, x in eager.items()}, "check_ours_vs_vllm": check})
        print(f"{N:>4} | packed vllm {t['vllm_packed']:7.2f} ours {t['ours_packed']:7.2f} "
              f"({t['vllm_packed'] / t['ours_packed']:.2f}x) cold vllm {t['vllm_packed_cold']:7.2f} "
              f"ours {t['ours_packed_cold']:7.2f} ({t['vllm_packed_cold'] / t['ours_packed_cold']:.2f}x) | spec vllm "
              f"{t['vllm_spec']:7.2f} ours {t['ours_spec']:7.2f} ({t['vllm_spec'] / t['ours_spec']:.2f}x) | adapter "
              f"packed {t['adapter_packed']:7.2f} spec {t['adapter_spec']:7.2f} | {json.dumps(check)}", flush=True)
        print("       eager, us per back-to-back call: " + "  ".join(f"{k} {x:.1f}" for k, x in eager.items()),
              flush=True)
    return rows


def prefill_rows(vk, cases, rep_ms, gen):
    from triton.testing import do_bench  # noqa: PLC0415

    from kimiops.integrations import vllm as vl  # noqa: PLC0415

    vllm_prefill = vk.chunk_kda_with_fused_gate
    vl.enable()  # vLLM's module now holds kimiops' adapter: the call vLLM's layer makes
    adapter_prefill = vk.chunk_kda_with_fused_gate
    bf = torch.bfloat16
    A_log, dt_bias = gate_params(gen)
    rows = []
    for name, lens in cases:
        T, N = sum(lens), len(lens)
        cu = torch.tensor([0] + torch.tensor(lens).cumsum(0).tolist(), dtype=torch.int32, device="cuda")
        q, k, v = (torch.randn(1, T, H, K, device="cuda", generator=gen).to(bf) for _ in range(3))
        raw_g = torch.randn(1, T, H, K, device="cuda", generator=gen).to(bf)
        raw_beta = torch.randn(1, T, H, device="cuda", generator=gen).to(bf)
        h0 = torch.randn(N, H, V, K, device="cuda", generator=gen) * 0.1

        v_vllm = v.clone()  # vLLM's prefill writes its output into v (``o=v`` when no ``out`` is given)

        def vllm_fn():
            return vllm_prefill(q, k, v_vllm, raw_g, raw_beta, A_log, dt_bias, initial_state=h0,
                                output_final_state=True, use_qk_l2norm_in_kernel=True, cu_seqlens=cu)

        def adapter_fn():
            return adapter_prefill(q, k, v, raw_g, raw_beta, A_log, dt_bias, initial_state=h0,
                                   output_final_state=True, use_qk_l2norm_in_kernel=True, cu_seqlens=cu)

        def ours_fn():
            return kimiops.chunk_kda(q, k, v, raw_g, raw_beta, initial_state=h0, output_final_state=True,
                                     use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
                                     use_beta_sigmoid_in_kernel=True, A_log=A_log, dt_bias=dt_bias,
                                     state_v_first=True, cu_seqlens=cu)

        oo, so = ours_fn()
        oa, sa = adapter_fn()
        ov, sv = vllm_fn()
        check = {"o": rel_err(oo.float(), ov.float()), "state": rel_err(so, sv),
                 "adapter_bits_equal_ours": bool(torch.equal(oa, oo) and torch.equal(sa, so))}
        t_v = do_bench(vllm_fn, warmup=max(5, rep_ms // 4), rep=rep_ms, return_mode="median") * 1e3
        t_o = do_bench(ours_fn, warmup=max(5, rep_ms // 4), rep=rep_ms, return_mode="median") * 1e3
        t_a = do_bench(adapter_fn, warmup=max(5, rep_ms // 4), rep=rep_ms, return_mode="median") * 1e3
        t_og = graph_us([ours_fn], reps=20)
        rows.append({"case": name, "lens": lens, "vllm_eager_us": round(t_v, 1), "ours_eager_us": round(t_o, 1),
                     "adapter_eager_us": round(t_a, 1), "ours_graph_us": round(t_og, 1), "check_ours_vs_vllm": check})
        print(f"{name:>14} | vllm {t_v:9.1f} us | ours {t_o:9.1f} eager, {t_og:9.1f} graph | adapter {t_a:9.1f} | "
              f"{t_v / t_a:.2f}x (vllm / adapter) | {json.dumps(check)}", flush=True)
    vl.disable()
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vllm-src", default=".exp/vllm_kda", help="output of benchmarks/tools/vllm_kda_extract.py")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    ap.add_argument("--ns", type=int, nargs="*", default=[1, 8, 64])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rep", type=int, default=100, help="do_bench rep (ms) per prefill measurement")
    ap.add_argument("--no-prefill", action="store_true")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("bench_vllm_kda: needs a CUDA GPU")
    vk, source = load_vllm(args.vllm_src)
    gen = torch.Generator(device="cuda").manual_seed(0)
    res = {"benchmark": "vllm_kda", "device": torch.cuda.get_device_name(), "versions": versions(),
           "vllm_kernels": source, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "shape": {"H": H, "K": K, "V": V, "inputs": "bf16", "pool": "fp32 [slots, H, V, K]", "spec_tokens": SPEC,
                     "graph_calls": GRAPH_CALLS, "rounds": args.rounds}}
    print(f"{res['device']}  torch {torch.__version__}  triton {triton.__version__}  vLLM kernels from {source}")
    print("decode, graph medians (us), vLLM / ours:")
    res["decode"] = decode_rows(vk, args.ns, args.rounds, gen)
    if not args.no_prefill:
        print("prefill (chunk), eager medians (us):")
        res["prefill"] = prefill_rows(vk, PREFILL_CASES, args.rep, gen)
    print("wrote", write_result(res, args.out, "vllm_kda"))


if __name__ == "__main__":
    main()
