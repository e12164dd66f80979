"""SGLang's KDA decode steps on kimiops (kimiops/integrations/sglang.py) against the direct calls and FLA.

One decode step of N requests at H = HV = 32, K = V = 128, bf16 inputs, fp32 V-first pool, shaped as
SGLang 0.5.23 hands it to its kernel object: the short convolution's output ``mixed_qkv``
``[N, 3 * 4096]``, raw gate ``a`` ``[N, 4096]``, beta logits ``b`` ``[1, N, 32]``, ``A_log``
``[1, 1, 32, 1]``. Timed as CUDA-graph medians of 20 chained calls (best of ``--rounds``
interleaved rounds), in one process:

- ``packed``: ``KimiopsKDAKernel.packed_decode`` (q, k, v are strided views of ``mixed_qkv``);
- ``decode``: ``KimiopsKDAKernel.decode`` (SGLang's unpacked call, with ``query_start_loc``);
- ``backend``: ``KDABackend.decode`` on contiguous q, k, v without ``query_start_loc``: what the
  adapter adds or saves over the library's own call;
- ``fla``: FLA 0.6 ``fused_recurrent_kda_fwd`` on contiguous inputs (``bench_kda_decode.Case``).

Also: target verify (4 draft tokens per request) through the adapter and through ``KDABackend``,
the bits of ``packed`` against ``backend`` from the same pool, and eager host times at N = 1
(wall until the GPU finished, and until the call returned). JSON to ``--out``.

    PYTHONPATH=$PWD:$PWD/benchmarks python3 benchmarks/bench_sglang_decode.py
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys

import torch
import triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import kimiops  # noqa: E402
from bench_kda_decode import GRAPH_CALLS, Case, fla_impl, versions  # noqa: E402
from kimiops.bench.results import write_result  # noqa: E402
from kimiops.bench.timing import best_graph_us, host_us  # noqa: E402
from kimiops.integrations import sglang as sg  # noqa: E402

H = HV = 32
K = V = 128
SPEC = 4


class _SGLangKernelStub:
    """Stands in for SGLang's ``TritonKDAKernel`` (not installed on the GPU machine): a hand-off
    to it would raise, so every timed call is known to have run on kimiops."""

    def __getattr__(self, name):
        raise RuntimeError(f"handed to SGLang: {name}")


Kernel = sg.kernel_class(_SGLangKernelStub)


def sglang_inputs(N, gen):
    bf = torch.bfloat16
    return dict(
        qkv=torch.randn(N, 2 * H * K + HV * V, device="cuda", generator=gen).to(bf),
        a=torch.randn(N, HV * K, device="cuda", generator=gen).to(bf),
        b=torch.randn(1, N, HV, device="cuda", generator=gen).to(bf),
        A_log=torch.log(torch.rand(1, 1, HV, 1, device="cuda", generator=gen) * 15 + 1),
        dt_bias=torch.randn(HV * K, device="cuda", generator=gen),
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    ap.add_argument("--ns", type=int, nargs="*", default=[1, 8, 64])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("bench_sglang_decode: needs a CUDA GPU")
    gen = torch.Generator(device="cuda").manual_seed(0)
    res = {"benchmark": "sglang_decode", "device": torch.cuda.get_device_name(), "versions": versions(),
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "shape": {"H": H, "HV": HV, "K": K, "V": V, "inputs": "bf16", "pool": "fp32 [slots, HV, V, K]",
                     "graph_calls": GRAPH_CALLS, "rounds": args.rounds}, "rows": []}
    print(f"{res['device']}  torch {torch.__version__}  triton {triton.__version__}  fla {res['versions']['fla']}")
    fla_fwd, fla_err = fla_impl()
    if fla_err:
        print("FLA:", fla_err)
    slots = 2 * SPEC * max(args.ns) + 8
    pool = torch.randn(slots, HV, V, K, device="cuda", generator=gen) * 0.1
    kern = Kernel()
    print(f"{'N':>4} {'packed':>8} {'decode':>8} {'backend':>8} {'fla':>8} {'fla/pk':>7} | "
          f"{'verify':>8} {'be_ver':>8} | bits")
    for N in args.ns:
        x = sglang_inputs(N, gen)
        idx = torch.randperm(slots, device="cuda", generator=gen)[:N].to(torch.int32)
        qsl = torch.arange(N + 1, dtype=torch.int32, device="cuda")
        q, k, v = x["qkv"].split([H * K, H * K, HV * V], dim=-1)
        q, k, v = (t.unflatten(-1, (-1, d)).unsqueeze(0) for t, d in ((q, K), (k, K), (v, V)))
        qc, kc, vc = (t.contiguous() for t in (q, k, v))
        g = x["a"].view(1, N, HV, K)
        be = kimiops.KDABackend(H, K, V, HV, scale=K**-0.5)
        fns = {
            "packed": lambda: kern.packed_decode(x["qkv"], x["a"], x["b"], A_log=x["A_log"], dt_bias=x["dt_bias"],
                                                 scale=K**-0.5, ssm_states=pool, cache_indices=idx, num_v_heads=HV,
                                                 head_v_dim=V),
            "decode": lambda: kern.decode(q, k, v, x["a"], x["b"], A_log=x["A_log"], dt_bias=x["dt_bias"],
                                          ssm_states=pool, cache_indices=idx, query_start_loc=qsl),
            "backend": lambda: be.decode(qc, kc, vc, g, x["b"], ssm_states=pool, cache_indices=idx,
                                         A_log=x["A_log"].view(-1), dt_bias=x["dt_bias"]),
        }
        # bits: the adapter's packed call and the library's own call from the same pool
        p1, p2 = pool.clone(), pool.clone()
        o1 = kern.packed_decode(x["qkv"], x["a"], x["b"], A_log=x["A_log"], dt_bias=x["dt_bias"], scale=K**-0.5,
                                ssm_states=p1, cache_indices=idx, num_v_heads=HV, head_v_dim=V)
        o2 = be.decode(qc, kc, vc, g, x["b"], ssm_states=p2, cache_indices=idx, A_log=x["A_log"].view(-1),
                       dt_bias=x["dt_bias"])
        bits = bool(torch.equal(o1, o2) and torch.equal(p1, p2))
        if fla_fwd is not None:
            case = Case(N, pool, gen)
            fns["fla"] = case.fla(fla_fwd)
        # target verify, SPEC draft tokens per request, fp32 buffer
        xv = sglang_inputs(N * SPEC, gen)
        qv, kv_, vv = xv["qkv"].split([H * K, H * K, HV * V], dim=-1)
        qv, kv_, vv = (t.unflatten(-1, (-1, d)).unsqueeze(0) for t, d in ((qv, K), (kv_, K), (vv, V)))
        cu = torch.arange(N + 1, dtype=torch.int32, device="cuda") * SPEC
        rows = torch.arange(N, dtype=torch.int32, device="cuda")
        buf = torch.zeros(N, SPEC, HV, V, K, device="cuda")
        fns["verify"] = lambda: kern.target_verify(
            xv["A_log"], xv["dt_bias"], qv, kv_, vv, xv["a"], xv["b"], ssm_states=pool, cache_indices=idx,
            query_start_loc=cu, intermediate_states_buffer=buf, intermediate_state_indices=rows, cache_steps=SPEC,
            retrieve_parent_token=None)
        fns["backend_verify"] = lambda: be.target_verify(
            qv, kv_, vv, xv["a"].view(1, N * SPEC, HV, K), xv["b"], ssm_states=pool, cache_indices=idx,
            query_start_loc=cu, intermediate_states_buffer=buf, intermediate_state_indices=rows, cache_steps=SPEC,
            A_log=xv["A_log"].view(-1), dt_bias=xv["dt_bias"])
        t = best_graph_us(dict(fns), GRAPH_CALLS, args.rounds)
        row = {"N": N, **{f"{name}_graph_us": us for name, us in t.items()}, "packed_bits_equal_backend": bits}
        if N == 1:
            one = torch.zeros(1, device="cuda")
            fns["torch_add"] = lambda: one.add_(1.0)  # a lone torch op on this host, for scale
            for name in ("packed", "decode", "backend", "torch_add"):
                wall, launch = host_us(fns[name])
                row[f"{name}_eager_wall_us"], row[f"{name}_eager_return_us"] = wall, launch
        res["rows"].append(row)
        fla = t.get("fla", float("nan"))
        print(f"{N:>4} {t['packed']:8.2f} {t['decode']:8.2f} {t['backend']:8.2f} {fla:8.2f} "
              f"{fla / t['packed']:7.2f} | {t['verify']:8.2f} {t['backend_verify']:8.2f} | {bits}")
        if N == 1:
            print("     eager N=1 wall (until return), us: " + ", ".join(
                f"{name} {row[f'{name}_eager_wall_us']:.1f} ({row[f'{name}_eager_return_us']:.1f})"
                for name in ("packed", "decode", "backend", "torch_add")))
    assert all(kern.calls[key] for key in kern.calls) and all(route == "kimiops" for _, route in kern.calls)
    res["calls"] = {f"{m}:{r}": n for (m, r), n in kern.calls.items()}
    print("wrote", write_result(res, args.out, "sglang_decode"))


if __name__ == "__main__":
    main()
