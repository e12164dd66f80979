"""Prefill of a transformers Kimi-Linear model with and without kimiops (GPU, bf16).

Builds a random ``KimiLinearForCausalLM`` (default: hidden 2048, 3 KDA layers with 16 heads of
dim 128 plus 1 MLA full-attention layer, dense MLPs), times one prefill of ``--seq-len`` tokens
(default 8192, batch 1, ``logits_to_keep=1``, cache on as in ``generate``) with transformers' own
KDA (its torch fallback unless flash-linear-attention is installed) and with
``kimiops.integrations.transformers.enable(model)``, and also times the chunked KDA function alone
on one layer's shapes. Prints the JSON and writes it to ``--out DIR/bench_transformers.json``.

    python benchmarks/bench_transformers.py --out benchmarks/results

transformers' fallback on 8k tokens loops over chunks in Python and materializes a
``[B, H, T/64, 64, 64, K]`` fp32 tensor per layer (~4 GiB at 16 heads): a run takes well under a
minute on an H200 with the defaults; lower ``--layers`` or ``--repeats`` if it does not.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import sys
import time

import torch


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="directory for bench_transformers.json")
    p.add_argument("--seq-len", type=int, default=8192)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--kda-layers", type=int, default=3, help="KDA layers (one MLA layer is added)")
    p.add_argument("--heads", type=int, default=16, help="KDA heads")
    p.add_argument("--head-dim", type=int, default=128, help="KDA head dim")
    p.add_argument("--dtype", choices=["bf16", "fp16"], default="bf16")
    p.add_argument("--repeats", type=int, default=3, help="timed prefills per variant (median reported)")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def build_model(args, dtype):
    from transformers import KimiLinearConfig, KimiLinearForCausalLM

    n = args.kda_layers + 1
    layer_types = ["linear_attention"] * n
    layer_types[n // 2] = "full_attention"
    cfg = KimiLinearConfig(
        vocab_size=32000, hidden_size=args.hidden, intermediate_size=2 * args.hidden, moe_intermediate_size=256,
        num_hidden_layers=n, num_attention_heads=16, num_key_value_heads=16, kv_lora_rank=512, q_lora_rank=None,
        qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128, linear_head_dim=args.head_dim,
        linear_num_heads=args.heads, layer_types=layer_types, mlp_layer_types=["dense"] * n,
        pad_token_id=0, bos_token_id=1, eos_token_id=2,
    )
    torch.manual_seed(args.seed)
    with torch.device("cuda"):
        model = KimiLinearForCausalLM(cfg)
    return model.to(dtype).eval(), cfg


def cuda_time(fn, repeats: int, warmup: int) -> list[float]:
    """Wall times (s) of ``fn()`` after ``warmup`` untimed calls, each bracketed by synchronizes."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return times


def main(argv=None) -> dict:
    args = parse_args(argv)
    if not torch.cuda.is_available():
        sys.exit("bench_transformers: needs a CUDA GPU")
    import transformers
    from transformers.models.kimi_linear import modeling_kimi_linear as M

    import kimiops
    from kimiops.integrations import transformers as kt
    from kimiops.testing import rel_err

    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[args.dtype]
    model, cfg = build_model(args, dtype)
    ids = torch.randint(3, cfg.vocab_size, (args.batch, args.seq_len), device="cuda",
                        generator=torch.Generator("cuda").manual_seed(args.seed))

    def prefill():
        with torch.inference_mode():
            return model(ids, use_cache=True, logits_to_keep=1).logits

    t_start = time.perf_counter()
    # transformers' own path first (torch fallback unless FLA is installed)
    base_logits = prefill().float()
    fallback = cuda_time(prefill, args.repeats, warmup=0)
    kt.enable(model)
    kimi_logits = prefill().float()  # also compiles / autotunes the kernels
    kimi = cuda_time(prefill, max(args.repeats, 5), warmup=1)
    kt.disable(model)
    logits_rel_err = rel_err(kimi_logits, base_logits)

    # the chunked KDA function alone, one layer's shapes, as transformers calls it
    B, T, H, K = args.batch, args.seq_len, args.heads, args.head_dim
    g_ = torch.Generator("cuda").manual_seed(1)
    q, k, v = (torch.randn(B, T, H, K, device="cuda", generator=g_, dtype=dtype) for _ in range(3))
    g = -torch.rand(B, T, H, K, device="cuda", generator=g_) * torch.rand(H, 1, device="cuda", generator=g_) * 5
    beta = torch.rand(B, T, H, device="cuda", generator=g_, dtype=dtype)
    original = M.chunk_kimi_delta_attention

    def op_call(fn):
        def run():
            with torch.inference_mode():
                return fn(q, k, v, g=g, beta=beta, initial_state=None, output_final_state=True,
                          use_qk_l2norm_in_kernel=True)
        return run

    op_fallback = cuda_time(op_call(original), args.repeats, warmup=1)
    kt.enable()
    op_kimi = cuda_time(op_call(M.chunk_kimi_delta_attention), 10, warmup=2)
    kt.disable()

    def ms(ts):
        return round(statistics.median(ts) * 1e3, 3)

    result = {
        "benchmark": "transformers Kimi-Linear prefill, with and without kimiops",
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "device": torch.cuda.get_device_name(),
        "capability": list(torch.cuda.get_device_capability()),
        "family": kimiops.device_family(torch.device("cuda")),
        "versions": {
            "kimiops": kimiops.__version__, "transformers": transformers.__version__, "torch": torch.__version__,
            "triton": _version("triton"), "cuda": torch.version.cuda, "python": platform.python_version(),
            "flash_linear_attention": _version("flash-linear-attention"),
        },
        "config": {
            "batch": B, "seq_len": T, "dtype": args.dtype, "hidden": args.hidden, "kda_layers": args.kda_layers,
            "full_attention_layers": 1, "kda_heads": H, "kda_head_dim": K, "mlp": "dense",
        },
        "model_prefill_ms": {"transformers": ms(fallback), "kimiops": ms(kimi),
                             "transformers_all": [round(t * 1e3, 3) for t in fallback],
                             "kimiops_all": [round(t * 1e3, 3) for t in kimi]},
        "model_prefill_speedup": round(statistics.median(fallback) / statistics.median(kimi), 2),
        "chunk_kda_op_ms": {"transformers": ms(op_fallback), "kimiops": ms(op_kimi)},
        "chunk_kda_op_speedup": round(statistics.median(op_fallback) / statistics.median(op_kimi), 2),
        "last_token_logits_rel_err_kimiops_vs_transformers": logits_rel_err,
        "wall_s": round(time.perf_counter() - t_start, 1),
    }
    text = json.dumps(result, indent=2)
    print(text)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "bench_transformers.json"), "w") as f:
        f.write(text + "\n")
    return result


def _version(distribution: str) -> str | None:
    """Installed version of a distribution, or None when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


if __name__ == "__main__":
    main()
