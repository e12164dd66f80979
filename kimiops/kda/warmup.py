"""Warm-up of :class:`kimiops.KDABackend`: run, before the first request, an extend of every layout a
varlen call can take and decode steps, so that the kernels serving meets are compiled (or loaded from
Triton's disk cache) before a request waits on them. With an empty cache each new kernel costs about a
second on its first call (an H100: ten extends of new shapes took 7.5 s, the issue's varlen case alone
3.4 s; ``benchmarks/results/logs_h100_20261205e/``).

Which calls: the chunked prefill lays a call out by its token and request counts
(``chunk_layout.elastic_layout``): one part with or without the longest-first sort, pipelined parts
(one long prompt), segments (few value heads); the sort compiles per block (``order_block``: 32 up to
32 requests, then 64, 128, ...). Every other count is a runtime argument of the same kernels
(``chunk_layout.CALL_COUNTS``). The warm-up runs the smallest call of each (form, sort block) up to
``max_requests`` requests: a few thousand tokens at most. The decode kernel compiles per tile config,
chosen by ``N * HV`` from one table per form (one token per request, or with ``query_start_loc``,
``recurrent.config_for``); the warm-up runs the smallest batch of each.

The calls run on the caller's pool with every request padded (index -1), which by the pool contract
reads and writes no slot, so the pool is left as it was and the kernels see the pool's own pointer and
strides (what Triton specializes on).

Compiles in threads: the calls run twice. First inside ``kimiops.launch.compiling_in_background``,
where no kernel launches and each variant they meet starts compiling on a thread of its own (Triton's
compile releases the GIL in its LLVM passes and runs ptxas as a subprocess), then for real, when every
kernel is compiled and only loads. One thread (``compile_workers=1``) runs them once, compiling each
kernel where it first launches.
"""

from __future__ import annotations

import os

import torch

from kimiops.kda.kernels.chunk_layout import ORDER_MIN_BLOCK, elastic_layout, order_block
from kimiops.kda.kernels.recurrent import config_for
from kimiops.launch import compiling_in_background

# compile threads by default: one per CPU this process may run on, at most this many (a warm-up at 32
# heads of 128 compiles 18 kernel variants, ``benchmarks/tools/warmup_compile_offline.py``)
MAX_COMPILE_WORKERS = 16

# prompt lengths tried for the layouts of one long request (the smallest of each form is kept)
_LONG_PROMPTS = tuple(2 ** e for e in range(6, 16))


def extend_batches(num_v_heads: int, head_k_dim: int, max_requests: int) -> list[list[int]]:
    """Request lengths of the extends that cover every (layout form, sort block) a varlen call of at
    most ``max_requests`` requests can take at ``num_v_heads`` value heads of ``head_k_dim``, the
    smallest call of each, shortest first."""
    sizes, block = [1, 2], ORDER_MIN_BLOCK
    while block + 1 <= max_requests:  # the first request count of each larger sort block
        sizes.append(block + 1)
        block *= 2
    candidates = [[1] * n for n in sizes if n <= max_requests] + [[t] for t in _LONG_PROMPTS]
    chosen = {}
    for lens in candidates:
        form = elastic_layout(sum(lens), len(lens), num_v_heads, head_k_dim)[0]
        ordered = form[0] != "segments" and form[1]
        chosen.setdefault((form, order_block(len(lens)) if ordered else 0), lens)
    return sorted(chosen.values(), key=sum)


def decode_batches(num_v_heads: int, max_requests: int, varlen: bool) -> list[int]:
    """Request counts of the decode steps that cover every tile config (``recurrent.config_for``: one per
    range of ``N * HV``, a table per form; ``varlen``: called with ``query_start_loc``) of at most
    ``max_requests`` requests, the smallest count of each."""
    seen, counts = set(), []
    for n in range(1, max_requests + 1):
        cfg = config_for(n * num_v_heads, varlen)
        if cfg not in seen:
            seen.add(cfg)
            counts.append(n)
    return counts


def default_compile_workers(device: torch.device) -> int:
    """Threads that compile the warm-up's kernels on ``device``: one per CPU this process may run on
    (at most ``MAX_COMPILE_WORKERS``) on a GPU, one elsewhere (the interpreter compiles nothing)."""
    if device.type != "cuda":
        return 1
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(MAX_COMPILE_WORKERS, cpus))


def warmup_calls(backend, ssm_states: torch.Tensor, *, dtype: torch.dtype, gate_dtype: torch.dtype,
                 max_requests: int, A_log=None, dt_bias=None, lower_bound=None) -> list[tuple]:
    """The warm-up's calls, ``(phase, size, call)``: :meth:`KDABackend.extend` (phase ``"extend"``, size:
    the request lengths) for each of :func:`extend_batches` and :meth:`KDABackend.decode` for each of
    :func:`decode_batches`, one token per request, without and with ``query_start_loc`` (phases
    ``"decode"`` and ``"decode_cu_seqlens"``, size: the request count); inputs zeros, made when a
    call runs (so one call's inputs are held at a time), every request padded, on ``ssm_states``;
    each phase only where it runs Triton kernels (the torch path compiles nothing)."""
    H, HV, K, V = backend.num_heads, backend.num_v_heads, backend.head_k_dim, backend.head_v_dim
    dev = ssm_states.device

    def inputs(T):
        """q, k, v, g, beta of ``T`` tokens, zeros (finite through the L2 norm and every gate)."""
        shapes = ((H, K, dtype), (H, K, dtype), (HV, V, dtype), (HV, K, gate_dtype))
        return (*(torch.zeros(1, T, n, d, dtype=dt, device=dev) for n, d, dt in shapes),
                torch.zeros(1, T, HV, dtype=gate_dtype, device=dev))

    gate = dict(A_log=A_log, dt_bias=dt_bias, lower_bound=lower_bound)
    calls = []
    compiled = {phase: name == "triton" for phase, name in backend.kernels(dev).items()}  # torch: nothing to compile
    for lens in extend_batches(HV, K, max_requests) if compiled["extend"] else ():
        cu = torch.tensor([0] + lens, dtype=torch.int32).cumsum(0, dtype=torch.int32).to(dev)
        padded = torch.full((len(lens),), -1, dtype=torch.int32, device=dev)
        calls.append(("extend", lens, lambda T=sum(lens), padded=padded, cu=cu: backend.extend(
            *inputs(T), ssm_states=ssm_states, cache_indices=padded, query_start_loc=cu, **gate)))
    for varlen, phase in ((False, "decode"), (True, "decode_cu_seqlens")):
        for n in decode_batches(HV, max_requests, varlen) if compiled["decode"] else ():
            padded = torch.full((n,), -1, dtype=torch.int32, device=dev)
            cu = torch.arange(n + 1, dtype=torch.int32, device=dev) if varlen else None
            calls.append((phase, n, lambda n=n, padded=padded, cu=cu: backend.decode(
                *inputs(n), ssm_states=ssm_states, cache_indices=padded, query_start_loc=cu, **gate)))
    return calls


def warm_backend(backend, ssm_states: torch.Tensor, *, compile_workers: int, **options) -> dict:
    """Run :func:`warmup_calls` (``options``: its keyword arguments); with ``compile_workers`` > 1
    first without launching, compiling on that many threads (see the module docstring). Returns what
    ran: ``{"extend": [request lengths, ...], "decode": [request counts], "decode_cu_seqlens": [request
    counts], "compiled_in_background": int}`` (the last: kernel variants compiled on the threads; 0
    with one worker)."""
    calls = warmup_calls(backend, ssm_states, **options)
    ran = {"extend": [], "decode": [], "decode_cu_seqlens": [], "compiled_in_background": 0}
    if compile_workers > 1 and calls:
        with compiling_in_background(compile_workers) as mode:
            for _, _, call in calls:
                call()
        ran["compiled_in_background"] = len(mode.future_kernels)
    for phase, size, call in calls:
        call()
        ran[phase].append(size)
    return ran
