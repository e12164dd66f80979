"""The main job: a Kimi-Linear-48B-shaped KDA layer serving a batch of requests.

Random weights; H = 32 heads, K = V = 128, hidden 2304, softplus gate from raw projections (the
short convolution of the real model is omitted). Prompts of mixed lengths are prefilled through
``KDABackend.extend`` into a state pool, then decoded step by step through ``KDABackend.decode``;
every projection goes through ``kimiops.linear``. One request is re-computed by the fp64
reference recurrence and compared.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import torch

from kimiops.gemm.linear import linear
from kimiops.kda.backend import KDABackend
from kimiops.kda.gate import kda_gate, l2norm
from kimiops.kda.reference import naive_recurrent_kda
from kimiops.testing import rel_err


@dataclass
class DemoConfig:
    hidden: int = 2304
    heads: int = 32
    head_dim: int = 128
    prompts: int = 3
    max_prompt_len: int = 96
    decode_steps: int = 4
    device: str = "cpu"
    dtype: torch.dtype = torch.bfloat16  # kimiops.linear takes bf16/fp16
    seed: int = 0
    progress: bool = True

    @classmethod
    def for_device(cls, device: str, **overrides) -> "DemoConfig":
        """Defaults that run anywhere: small on CPU, full size (bf16) on a GPU."""
        if device.startswith("cuda"):
            base = cls(prompts=16, max_prompt_len=4096, decode_steps=64, device=device, dtype=torch.bfloat16)
        else:
            base = cls(device=device)
        for name, value in overrides.items():
            if value is not None:
                setattr(base, name, value)
        return base


class KDALayer:
    """Projections of one KDA layer (random weights) around a :class:`KDABackend`."""

    def __init__(self, cfg: DemoConfig, gen: torch.Generator):
        D, H, K = cfg.hidden, cfg.heads, cfg.head_dim
        dev, dt = cfg.device, cfg.dtype

        def weight(n, k):
            return (torch.randn(n, k, generator=gen) * k**-0.5).to(dev, dt)

        self.cfg = cfg
        self.w_qkv = weight(3 * H * K, D)
        self.w_gate = weight(H * K, D)
        self.w_beta = weight(H, D)
        self.w_out = weight(D, H * K)
        self.A_log = torch.log(torch.rand(H, generator=gen) * 199 + 1).to(dev)  # exp(A_log) in [1, 200]
        self.dt_bias = torch.randn(H * K, generator=gen).to(dev)
        self.backend = KDABackend(H, K, K)

    def project(self, x: torch.Tensor):
        """x ``[T, D]`` -> q, k, v ``[T, H, K]``, raw gate ``[T, H, K]``, beta logits ``[T, H]``."""
        H, K = self.cfg.heads, self.cfg.head_dim
        qkv = linear(x, self.w_qkv).view(-1, 3, H, K)
        g = linear(x, self.w_gate).view(-1, H, K)
        b = linear(x, self.w_beta)
        return qkv[:, 0], qkv[:, 1], qkv[:, 2], g, b

    def extend(self, x, pool, slots, cu):
        q, k, v, g, b = self.project(x)
        o = self.backend.extend(q, k, v, g, b, ssm_states=pool, cache_indices=slots, query_start_loc=cu,
                                A_log=self.A_log, dt_bias=self.dt_bias)
        return o, linear(o.reshape(o.shape[0], -1), self.w_out)

    def decode(self, x, pool, slots):
        q, k, v, g, b = self.project(x)
        o = self.backend.decode(q, k, v, g, b, ssm_states=pool, cache_indices=slots,
                                A_log=self.A_log, dt_bias=self.dt_bias)
        return o, linear(o.reshape(o.shape[0], -1), self.w_out)

    def reference(self, x: torch.Tensor) -> torch.Tensor:
        """fp64 KDA output ``[T, H, V]`` of one request's tokens x ``[T, D]`` from a zero state."""
        q, k, v, g, b = (t.double() for t in self.project(x))
        g = kda_gate(g, self.A_log.double(), self.dt_bias.double(), output_dtype=torch.float64)
        o, _ = naive_recurrent_kda(l2norm(q)[None], l2norm(k)[None], v[None], g[None], torch.sigmoid(b)[None])
        return o[0]


def _sync(device: str):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _progress(enabled: bool, done: int, total: int, label: str):
    if enabled:
        width = 30
        filled = width * done // max(total, 1)
        end = "\n" if done == total else ""
        print(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}", end=end, file=sys.stderr, flush=True)


def run_demo(cfg: DemoConfig) -> int:
    """Run the demo, print the table; returns the process exit code (1 if the check fails)."""
    gen = torch.Generator().manual_seed(cfg.seed)
    layer = KDALayer(cfg, gen)
    H, K = cfg.heads, cfg.head_dim
    lengths = torch.randint(1, cfg.max_prompt_len + 1, (cfg.prompts,), generator=gen)
    lengths[0] = cfg.max_prompt_len
    total = int(lengths.sum())
    cu = torch.zeros(cfg.prompts + 1, dtype=torch.int32)
    cu[1:] = torch.cumsum(lengths, 0)
    cu = cu.to(cfg.device)
    slots = torch.arange(cfg.prompts, dtype=torch.int32, device=cfg.device) * 2 + 1  # sparse slots in the pool
    pool = torch.zeros(2 * cfg.prompts + 1, H, K, K, dtype=torch.float32, device=cfg.device)
    prompt_x = torch.randn(total, cfg.hidden, generator=gen).to(cfg.device, cfg.dtype)
    steps_x = torch.randn(cfg.decode_steps, cfg.prompts, cfg.hidden, generator=gen).to(cfg.device, cfg.dtype)

    # warm-up on a copy of the pool so compilation stays out of the timings
    layer.extend(prompt_x, pool.clone(), slots, cu)
    if cfg.decode_steps:
        layer.decode(steps_x[0], pool.clone(), slots)
    _sync(cfg.device)

    t0 = time.perf_counter()
    o_prefill, _ = layer.extend(prompt_x, pool, slots, cu)
    _sync(cfg.device)
    t_prefill = time.perf_counter() - t0

    sample = int(torch.argmin(lengths))
    sample_out = [o_prefill[int(cu[sample]):int(cu[sample + 1])]]
    t0 = time.perf_counter()
    for step in range(cfg.decode_steps):
        o_step, _ = layer.decode(steps_x[step], pool, slots)
        sample_out.append(o_step[sample:sample + 1])
        _progress(cfg.progress and cfg.decode_steps >= 16, step + 1, cfg.decode_steps, "decode")
    _sync(cfg.device)
    t_decode = time.perf_counter() - t0

    x_sample = torch.cat([prompt_x[int(cu[sample]):int(cu[sample + 1])], steps_x[:, sample]])
    err = rel_err(torch.cat(sample_out), layer.reference(x_sample))
    tol = 1e-2  # o is returned in bf16 (rounding ~2e-3); a wrong kernel gives O(1)
    kernels = layer.backend.kernels(torch.device(cfg.device))

    rows = [
        ("prefill", total, t_prefill, kernels["extend"]),
        ("decode", cfg.decode_steps * cfg.prompts, t_decode, kernels["decode"]),
    ]
    print(f"kimiops demo: Kimi-Linear-48B-shaped KDA layer (H={H}, K=V={K}, hidden={cfg.hidden}) "
          f"on {cfg.device}, {cfg.dtype}, {cfg.prompts} prompts of {lengths.min()}..{lengths.max()} tokens")
    print(f"{'phase':<8} {'tokens':>8} {'time ms':>10} {'tokens/s':>12}  backend")
    for phase, tokens, secs, backend in rows:
        rate = f"{tokens / secs:>12.0f}" if tokens else f"{'-':>12}"
        print(f"{phase:<8} {tokens:>8} {secs * 1e3:>10.2f} {rate}  {backend}")
    verdict = "PASS" if err <= tol else "FAIL"
    print(f"check: request {sample} ({int(lengths[sample])} prompt + {cfg.decode_steps} decode tokens) "
          f"vs fp64 reference: rel err {err:.2e} (tolerance {tol:.0e}) {verdict}")
    return 0 if err <= tol else 1
