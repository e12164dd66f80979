"""Host time of eager decode whose batch size changes, as engines without CUDA graphs run it.

vLLM's ``--enforce-eager`` and SGLang without graphs call decode eagerly, and the batch size N
changes whenever a request joins or leaves. This times ``KDABackend.decode`` (pool, softplus gate,
L2 norm and beta sigmoid in the kernel, H = HV = 32, K = V = 128, bf16, one token per request, fp32
V-first pool) over three sequences of batch sizes, each call on its own inputs and slots:

* ``walk``: 400 steps, N starts at 24 and moves by 1-4 on 30% of the steps, within [1, 64];
* ``spread``: 300 steps, N drawn anew in [1, 192] on every step;
* ``fixed``: 300 steps at N = 1 (the repeated-signature path, the issue's eager figure).

Each sequence runs twice after a warm-up that compiled every config (first pass: the shortcut's
entries are made as the sizes come; second pass: they exist). Per pass: the median and the mean host
time until a call returns after an idle GPU (the mean counts the calls that took the full path),
the back-to-back pace (calls enqueued without synchronizing) and the wall time of a lone call
(until the GPU finished it). GPU time of the walk's calls from
CUDA events around calls queued behind a sleep. FLA's ``fused_recurrent_kda_fwd`` on the same
inputs where it is installed (as ``benchmarks/bench_kda_decode.py`` calls it).

Runs on whichever kimiops is first on the path, so two trees can be compared in one machine run
(``--label`` names the tree in the output).

    PYTHONPATH=$PWD python3 benchmarks/tools/decode_batch_sizes_gpu.py [--label NAME] [--no-fla]
"""
import argparse
import random

import torch

import kimiops
from kimiops.bench.timing import each_call_us, queued_gpu_us
from kimiops.kda import runner

H = HV = 32
K = V = 128
SLOTS = 256


def walk(steps: int, rng: random.Random) -> list:
    sizes, n = [], 24
    for _ in range(steps):
        if rng.random() < 0.3:
            n = min(64, max(1, n + rng.choice((-1, 1)) * rng.randint(1, 4)))
        sizes.append(n)
    return sizes


def make_steps(sizes: list, gen: torch.Generator) -> list:
    """Per step: (q, k, v, g, beta, slots) of N requests, token-major ``[1, N, ...]`` bf16."""
    out = []
    for n in sizes:
        q, k, g = (torch.randn(1, n, H, K, device="cuda", generator=gen).to(torch.bfloat16) for _ in range(3))
        v = torch.randn(1, n, HV, V, device="cuda", generator=gen).to(torch.bfloat16)
        beta = torch.randn(1, n, HV, device="cuda", generator=gen).to(torch.bfloat16)
        idx = torch.randperm(SLOTS, device="cuda", generator=gen)[:n].to(torch.int32)
        out.append((q, k, v, g, beta, idx))
    return out


def _times(t) -> str:
    return (f"until return median {t.until:.1f} us, mean {t.until_mean:.1f} us; pace {t.pace:.1f} us; "
            f"wall median {t.wall:.1f} us")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--label", default="this tree")
    p.add_argument("--no-fla", action="store_true")
    args = p.parse_args()
    gen = torch.Generator(device="cuda").manual_seed(0)
    rng = random.Random(0)
    pool = torch.randn(SLOTS, HV, V, K, device="cuda", generator=gen) * 0.1
    A_log = torch.log(torch.rand(HV, device="cuda", generator=gen) * 15 + 1)
    dt_bias = torch.randn(HV * K, device="cuda", generator=gen)
    backend = kimiops.KDABackend(H, K, V)

    def ours(step):
        q, k, v, g, beta, idx = step
        return lambda: backend.decode(q, k, v, g, beta, ssm_states=pool, cache_indices=idx, A_log=A_log,
                                      dt_bias=dt_bias)

    fla_fwd = None
    if not args.no_fla:
        try:
            from fla.ops.kda.fused_recurrent import fused_recurrent_kda_fwd as fla_fwd  # noqa: PLC0415
        except Exception as e:  # noqa: BLE001
            print(f"FLA: import failed: {type(e).__name__}: {e}")

    def fla(step):
        q, k, v, g, beta, idx = step
        cu = torch.arange(q.shape[1] + 1, dtype=torch.int32, device="cuda")
        return lambda: fla_fwd(q=q, k=k, v=v, g=g, beta=beta, A_log=A_log, dt_bias=dt_bias, scale=K ** -0.5,
                               initial_state=pool, inplace_final_state=True, state_v_first=True, cu_seqlens=cu,
                               ssm_state_indices=idx, use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
                               use_beta_sigmoid_in_kernel=True)

    # every config of the batch table compiled before anything is timed, then nothing remembered
    for n in (1, 2, 4, 8, 64, 100):
        for step in make_steps([n, n], gen):
            ours(step)()
            if fla_fwd is not None:
                fla(step)()
    torch.cuda.synchronize()
    tiny = torch.zeros(16, device="cuda")
    add = each_call_us([lambda: tiny.add_(1)] * 200)
    print(f"kimiops {args.label} ({kimiops.__file__}); {torch.cuda.get_device_name()}; "
          f"torch.add_ until return {add.until:.1f} us, wall {add.wall:.1f} us")
    cases = (("walk", walk(400, rng)), ("spread", [rng.randint(1, 192) for _ in range(300)]), ("fixed", [1] * 300))
    for name, sizes in cases:
        steps = make_steps(sizes, gen)
        print(f"{name}: {len(sizes)} calls, {len(set(sizes))} batch sizes, N {min(sizes)}-{max(sizes)}, "
              f"{sum(a != b for a, b in zip(sizes, sizes[1:]))} changes")
        runner.forget_eager()
        fns = [ours(s) for s in steps]
        for rnd in (1, 2):
            print(f"  ours pass {rnd}: {_times(each_call_us(fns))}")
        print(f"  ours GPU time per call (median of 60): {queued_gpu_us(fns[::max(1, len(fns) // 60)]):.1f} us")
        if fla_fwd is not None:
            print(f"  FLA: {_times(each_call_us([fla(s) for s in steps]))}")


if __name__ == "__main__":
    main()
