"""Launcher of the chunked KDA prefill pipeline (two kernels, no host synchronization).

Stages:

1. ``chunk_intra_kernel`` (``chunk_intra.py``), grid ``(NC, HV)``: per chunk slot and value head,
   gate + cumsum + L2 norm + beta sigmoid + A_kk + A_qk + (I + A_kk)^-1 + w, all on chip;
   writes w, Tinv diag(beta), qg, kg, A_qk, gC to scratch (``workspace.py``).
2. ``chunk_state_kernel`` (``chunk_state.py``), grid ``(HV, V // BV, N)``: walks the chunks of
   each sequence with the state in registers (forming ``u = Tinv (beta v)`` from v), writes o
   and the final state. Varlen batches of up
   to ``ORDER_MAX_SEQS`` sequences first sort the lengths (``longest_first_kernel``, one program)
   so the longest sequences are dispatched first.

Pipelined parts (``PIPELINE_CONFIG``): the chunk slots are cut into ``P`` contiguous ranges (the
state of a sequence that goes on is carried to the next part through fp32 scratch, so the result is
bit-identical to one part), so that the state stage of part ``p``, which at small batches has too
few tiles to fill the GPU, runs while stage 1 works on part ``p + 1`` in the rest of each SM.
Where programmatic dependent launch exists (``kimiops.arch.supports_pdl``, ``"pdl"``) the launches
are chained on the current stream, stage 1 (0), state (0), stage 1 (1), ... (see ``_launch``);
elsewhere, after stage 1 of part ``p`` an event hands over to a forked high-priority stream
(``kimiops.streams.forked_stream``) where the state stage walks part ``p``, and the current stream
waits for the fork before the call returns. With ``P = 1`` (small problems, batches of several
sequences, or 64 and more (sequence, head) pairs) both stages run on the current stream.

Segments (``segment_layout``): calls of at most 16 (sequence, value head) pairs (tensor-parallel
serving of a 32-head model puts 4-16 heads on a GPU) run the state stage as chained segments
instead of parts: stage 1, then every segment's state map and local state at once
(``chunk_state_kernel`` with ``SEG = 1``), the chained start states (``segment_starts_kernel``),
then every segment with the output (``SEG = 2``); four launches on the current stream. Outputs
differ from the one-piece walk by rounding only.

Launches go through ``kimiops.launch`` (raw addresses after the first call of a specialization):
eager calls in parts were host-bound before.

Chunk slots: fixed length ``NC = B * cdiv(T, C)``; varlen ``NC = T // C + N`` (sequence ``n``
owns slots ``cu[n] // C + n + c``; distinct and below that bound for any non-decreasing
``cu_seqlens``), so grids depend only on shapes and everything is capturable in a CUDA graph.
No zero fills: every scratch element a kernel reads was written by stage 1 of the same call.

HBM traffic per token and value head (K = V = 128, default dtypes): inputs q, k, g, beta read by
stage 1 (bf16: ~770 B), v by stage 2 (256 B), scratch written by stage 1 and read by stage 2 (w,
qg, kg fp16 3 x 256 B, Tinv diag(beta) fp32 128 B, A_qk fp16 128 B, gC 8 B), o written once,
states read/written once. (Until the ninth session stage 1 also read v and wrote u = Tinv (beta v)
in fp32, 512 B per token and head, which stage 2 read back.)
"""

from __future__ import annotations

import torch
import triton.language as tl

from kimiops.kda.kernels.chunk_intra import (
    GATE_LOWER_BOUND,
    GATE_NONE,
    GATE_SOFTPLUS,
    INTRA_CONFIG,
    chunk_intra_kernel,
)
from kimiops.kda.kernels.chunk_state import (
    SEGMENT_STARTS_CONFIG,
    STATE_CONFIG_WIDE,
    chunk_state_kernel,
    longest_first_kernel,
    segment_starts_kernel,
    starts_map_columns,
    state_config_for,
)
from kimiops.arch import supports_pdl
from kimiops.intmath import cdiv, next_power_of_2
from kimiops.kda.track import TRACK_CHUNK
from kimiops.kda.workspace import get_buffer
import kimiops.launch as fast_launch
from kimiops.launch import launch, no_launch_hooks, recording, specialization
from kimiops.streams import forked_stream

__all__ = ["chunk_kda_fwd", "BoundPrefill", "ElasticPrefill", "elastic_layout", "pipeline_parts", "CHUNK_SIZE",
           "NUMERICS_CONFIG", "INTRA_CONFIG", "STATE_CONFIG_WIDE", "PIPELINE_CONFIG"]

# Chunk of 32 tokens (two 16-row sub-chunks): the intra-chunk stage is the bottleneck and its work
# per token grows with the chunk (C x C score blocks, the inverse's levels), while the state stage
# pays per chunk step. H200, CUDA-graph medians of each stage alone, H=HV=32, K=V=128 bf16 (logs
# benchmarks/results/logs_h200_20261129d/prefill_ablate_chunk32_round*.log): stage 1 1.102 ms at
# C = 64 -> 0.695 ms at C = 32 (B1 T8192); the state stage 0.395 -> 0.58 ms at B1 T8192 (twice the
# sequential steps), 0.313 -> 0.296 ms at B8 T1024. Whole-pipeline figures: docs/prefill.md.
CHUNK_SIZE = 32
SUB_CHUNK = 16
# varlen batches of up to this many sequences run the state stage longest sequence first (one
# extra single-program launch sorts the lengths on the device); larger batches keep index order
ORDER_MAX_SEQS = 1024
# Pipelined parts: P = min(max(min_parts, NC // part_slots), max_parts, NC // min_part_slots), at
# least 1, and only below `below_pairs` (sequence, head) pairs, where one state tile per SM is
# latency-bound; with more pairs the state stage fills the SMs itself and parts only add launches.
# state_stages: num_stages of the state stage when there are parts (below). high_priority: the
# forked stream of the state stage gets the highest stream priority (eager launches; graphs
# replay with the priority of the launching stream).
# H200, CUDA-graph medians of the whole call, H=HV=32 K=V=128 bf16 (logs_h200_20261130b/
# ablate_pipeline.log): B1 T8192 1.180 ms in one part -> 1.148 (2 or 4 parts), 1.171 (8), 1.551 (16);
# B1 T32768 4.654 -> 4.406 (2), 4.330 (4), 4.404 (8); in-kernel gate: 1.341 -> 1.326, 5.392 -> 5.016.
# Eager (ablate_pipeline_b1_eager.log), where more parts mean more host launches: B1 T8192 with the
# gate 1.354 ms in one part, 1.314 in 2, 1.394 in 4; hence, until the eighth session, at least 128
# slots per part (T8192: 2 parts).
# After stage 1 got faster (ablate_pipeline_after_stage1.log): B1 T8192 0.970 -> 0.929 ms (2 parts),
# B1 T32768 3.832 -> 3.470 (4 parts); with the gate 1.072 -> 1.032, 4.218 -> 3.880; batches still
# lose (B8 T1024 0.711 -> 0.722 in 2 parts, B4 T4096 1.391 -> 1.613, varlen 1.466 -> 1.668).
# With 128 pairs or more every part count loses: B8 T1024 0.913 -> 0.935 (2 parts), 1.030 (4);
# B4 T4096 1.787 -> 2.026 (2); varlen 7 sequences 1.884 -> 2.092 (2).
# Eighth session (logs_h200_20261130d/ablate_pipeline_b1.log; the state stage in parts now takes the
# wide tiles, now the default everywhere: see ``chunk_state.py``): B1 T8192 2 parts 0.737 ms, 4 parts 0.750 (narrow state) or
# 0.710 (wide), 8 parts 0.795; B1 T32768 4 parts 2.799 (narrow) or 2.711 (wide). Eager, 4 parts and
# wide: 0.747 / 2.652 ms against 0.747 / 2.796 before. Hence at least 64 slots per part (T8192: 4).
# Ninth session (logs_h200_20261130e/ablate_pipeline_b1_streamed.log, with the gate): in graph replays
# the parts gain little (T8192 0.788 ms in 1 part, 0.789 in 4; T32768 3.075 -> 2.982, 8 parts 2.954);
# eager, the forked stream's priority matters (T32768, 4 parts: 2.657 with it, 2.904 without) and
# many parts are host-bound at T8192 (0.790 in 1 part, 0.986 in 4). A streamed alternative (one
# state launch fed chunk by chunk through ready counters; branch exp/stream-state, docs/prefill.md)
# was slower in both.
# pdl: chain the parts on the current stream by programmatic dependent launch instead of forking
# the state stage onto a high-priority stream (see ``_launch``); on the families that have it.
# Eleventh session (logs_h200_20261130g/ablate_pipeline_pdl_parts.log), graph medians, chain vs forked
# stream: B1 T8192 4 parts 0.653 vs 0.674 ms (gate 0.710 vs 0.791), 8 parts 0.639 vs 0.684 (gate
# 0.719 vs 0.825); B1 T32768 4 parts 2.428 vs 2.476 (gate 2.660 vs 2.983), 8 parts 2.328 vs 2.383
# (gate 2.599 vs 2.961). Hence the chain, and up to 8 parts of at least 64 slots (T8192: 4, T32768: 8).
# Nineteenth session (logs_h200_20261130o/, benchmarks/tools/prefill_part_layouts.py; graph medians
# in ms, g / gate; logs r1-r3): state_stages, the state stage's pipeline depth in parts. With 4
# stages its CTA needs 134 KiB of shared memory (3 stages: 100 KiB;
# offline_compile_20261130o_state_stages.log), more than half an SM's 227, so two state CTAs that
# PDL places early beside a stage-1 part can no longer share an SM (the twelfth session's timeline
# showed such pairs; reserving shared memory by hand then gave -3.5% / +0.7%). In parts, 4 stages
# against 3: T4096 4 parts 0.323 / 0.346 against 0.345 / 0.362; T8192 4 parts 0.616 / 0.647 against
# 0.647 / 0.678; T32768 8 parts 2.195 / 2.343 against 2.311 / 2.416 (r2, r3). In one part (batches)
# 4 stages lose (B8 T1024 0.551 against 0.511, B4 T4096 1.058 / 0.989, varlen 1.093 / 1.040; g, r3),
# so they apply to parts only. Part counts with 4 stages (r2, r3): T1024 1 or 2 parts 0.100 / 0.101
# (4 parts 0.130); T2048 4 parts 0.176 (2: 0.181, one part with 3 stages 0.185); T4096 4 parts 0.323
# (2: 0.333, 8: 0.329); T8192 4 parts 0.617 / 0.649 (8: 0.613 / 0.659, 16: 0.635 / 0.678); T16384 4
# parts 1.154 / 1.220 (8: 1.171 / 1.237, 16: 1.183 / 1.267); T32768 8 parts 2.195 / 2.343 (16: 2.268
# / 2.422). Hence P = NC // part_slots clamped to [min_parts, max_parts], at most NC //
# min_part_slots, at least 1. Cuts with small first and last parts (16, 32, 80, 80, 32, 16 slots at
# T8192) lost to equal parts (0.684 against 0.643 ms, r1).
# Twentieth session (logs_h200_20261130p/r1_*_layouts.log; g, graph medians in ms, one part against
# the 4 parts the slot cut gave below 128 pairs): batches of 2 and 3 sequences at 32 heads run
# faster in one part, where their 128-192 state tiles fill the GPU: B2 T4096 0.540 against 0.615,
# B3 T4096 0.798 / 0.889, varlen 2 x 4096 0.542 / 0.627, varlen 6000 + 4000 + 2288 0.833 / 0.891;
# only a very uneven pair (7000 + 1192 tokens: in effect one sequence) lost, 0.650 against 0.599.
# Cutting the chunk indices of every sequence instead of the slot range (branch
# exp/chunk-range-parts) did not beat one part either (0.569, 0.885, 0.568, 0.899; 0.641 uneven).
# Hence parts only below 64 pairs.
# Twenty-first session (logs_h200_20261130q/r6_layouts_*.log; g / gate, graph medians in ms, the
# rule's 4 parts against one part): below 64 pairs, batches still run faster in one part. 16 heads:
# B2 T4096 (32 pairs) 0.445 / 0.458 in parts against 0.357 / 0.378 in one part, B3 T4096 (48 pairs)
# 0.580 / 0.590 against 0.450 / 0.476. One prompt keeps winning in parts: 16 heads B1 T8192 0.448 /
# 0.466 against 0.504 / 0.528, 48 heads 0.841 / 0.894 against 0.856 / 0.923. Hence parts only for
# one sequence (max_seqs; the slot cut serializes a batch's sequences, see above).
PIPELINE_CONFIG = {"min_parts": 4, "max_parts": 16, "part_slots": 128, "min_part_slots": 16, "below_pairs": 64,
                   "max_seqs": 1, "state_stages": 4, "high_priority": True, "pdl": True,
                   "segments": 0, "segment_max_pairs": 16, "segment_budget": 128, "max_segments": 16,
                   "segment_min_chunks": 16, "segment_min_per_seq": 4,
                   "long_segments_max_pairs": 2, "long_segments_max": 32, "long_segments_min_chunks": 32}
# Segments (twenty-second session): one sequence with few heads leaves most SMs idle in the state
# stage, parts or not (H200, one prompt, 4 heads: B1 T8192 0.353 ms against FLA's 0.322,
# logs_h200_20261201/r3_heads_4.log). The call's chunks are then cut into P segments of equal length
# (each sequence into as many as its chunks fill), walked at once (``chunk_state.py``, ``SEG``): each
# segment's state map and local state, the chained start states (``segment_starts_kernel``), then
# each segment again with the output. Measured (g, graph medians in ms, ours without segments / with
# P / FLA; logs_h200_20261201/r5_segments_heads_4.log, r4_segments_heads_8.log and
# logs_h200_20261201b/r2_batches_heads_4.log, r3_batches_heads_8.log, r3_heads_16.log):
#   | heads | case      | pairs | none  | P = 8 | P = 16 | P = 32 | FLA   |
#   | 4     | B1 T8192  | 4     | 0.356 | -     | 0.161  | 0.200  | 0.319 |  (64: 0.312)
#   | 4     | B1 T32768 | 4     | 1.348 | -     | 0.450  | 0.482  | 1.179 |  (64: 0.587)
#   | 4     | B1 T4096  | 4     | 0.194 | 0.106 | 0.109  | 0.152  | 0.174 |
#   | 4     | B2 T8192  | 8     | 0.411 | 0.304 | 0.238  | 0.256  | 0.417 |
#   | 8     | B1 T8192  | 8     | 0.381 | -     | 0.253  | -      | 0.417 |
#   | 4     | B4 T4096  | 16    | 0.261 | 0.299 | 0.227  | 0.233  | 0.329 |  (P = 8: 2 per sequence)
#   | 8     | B2 T8192  | 16    | 0.506 | 0.423 | 0.416  | 0.449  | 0.630 |
#   | 16    | B1 T8192  | 16    | 0.443 | 0.415 | 0.447  | -      | 0.633 |
#   | 16    | B1 T32768 | 16    | 1.632 | 1.500 | 1.508  | -      | 2.411 |
#   | 8     | B4 T4096  | 32    | 0.356 | 0.402 | 0.409  | 0.443  | 0.536 |
#   | 16    | B2 T8192  | 32    | 0.686 | 0.764 | 0.794  | -      | 1.042 |
#   | 4     | B8 T1024  | 32    | 0.101 | 0.102 | 0.123  | 0.136  | 0.168 |  (2-4 per sequence)
# Two segments per sequence lose (the walks' chain is as long as without, plus the maps), 32 pairs
# lose at every P. The best P falls as heads grow (about 128 segments x heads: walk 2 then runs ~2 CTAs
# per SM). Hence, at most segment_max_pairs (sequence, head) pairs and K <= 128 (at K = 256, 4
# heads, B1 T8192, 8 / 16 segments took 0.604 / 0.837 ms against 0.582 without: r5_segments_k256.log),
# P = min(max_segments, segment_budget // heads, chunks // segment_min_chunks), and no segments
# unless a sequence as long as the call's bound gets segment_min_per_seq. "segments" > 0 forces P
# (benchmarks, tests). Not measured: batches of more than 4 sequences within 16 pairs.
# 1-2 heads, one prompt (twenty-fourth session, logs_h200_20261201c/r5_segments_heads_*.log and
# r6_segments_t16384_heads_*.log; g, ms, P = 16 (the rule then) / 32 / 64, no segments, FLA):
#   | heads | T     | P = 16 | P = 32 | P = 64 | none  | FLA   |
#   | 2     | 8192  | 0.125  | 0.148  | 0.230  | 0.353 | 0.262 |
#   | 2     | 16384 | 0.195  | 0.200  | -      | -     | 0.518 |
#   | 2     | 32768 | 0.330  | 0.296  | 0.379  | 1.308 | 0.996 |
#   | 1     | 8192  | 0.117  | 0.135  | 0.207  | 0.354 | 0.235 |
#   | 1     | 16384 | 0.170  | 0.167  | -      | -     | 0.425 |
#   | 1     | 32768 | 0.287  | 0.238  | 0.282  | 1.309 | 0.892 |
# 32 segments pay where each holds 32 chunks or more: with at most long_segments_max_pairs pairs,
# P is also allowed min(long_segments_max, chunks // long_segments_min_chunks). (At 4 heads 32
# segments of B1 T32768 lost: 0.482 against 0.450.)
# Measured and not kept (twenty-fourth session, commit f26f24c): the four launches of a segmented
# call chained by programmatic dependent launch, each scheduled as the one before starts its last
# programs. Slower at 4 heads (g, ms, chained / stream order: B1 T8192 0.165 / 0.160, B2 T8192
# 0.253 / 0.237, B1 T32768 0.480 / 0.447), within 1% at 8 (B1 T8192 0.249 / 0.251, B2 T8192 0.410 /
# 0.414; logs_h200_20261201c/r4_segment_pdl_heads_4.log, _8.log).
# CUDA caps the grid's y and z extents at 65535: more sequences than this use the flat grid
GRID_3D_MAX_SEQS = 65535

# Precision knobs (benchmarks can flip them; the accuracy tests run with the defaults):
# inter_dtype: storage of w, qg, kg, A_qk (operands of the state stage's fp16 dots, which convert
#   them to fp16; every one is bounded by |q|, |k| times factors <= 1); u and gC are always fp32.
# dot_dtype: operand dtype of the intra-chunk score dots (every operand is bounded by |q|, |k|).
# inv_prec: input_precision of the fp32 dots of the inverse, w (intra stage) and u (state stage).
NUMERICS_CONFIG = {"inter_dtype": torch.float16, "dot_dtype": "fp16", "inv_prec": "tf32"}

_GATES = {"none": GATE_NONE, "softplus": GATE_SOFTPLUS, "lower_bound": GATE_LOWER_BOUND}
_TL_DOT = {"fp16": tl.float16, "fp32": tl.float32}


def chunk_kda_fwd(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    beta: torch.Tensor,
    *,
    scale: float,
    cu_seqlens: torch.Tensor | None,
    h0: torch.Tensor | None,
    h0_indices: torch.Tensor | None,
    ht: torch.Tensor | None,
    ht_indices: torch.Tensor | None,
    state_v_first: bool,
    use_qk_l2norm: bool,
    use_beta_sigmoid: bool,
    gate: str,
    A_log: torch.Tensor | None,
    dt_bias: torch.Tensor | None,
    lower_bound: float | None,
    out: torch.Tensor | None = None,
    intra_config: dict | None = None,
    state_config: dict | None = None,
    pipeline_config: dict | None = None,
    bind: list | None = None,
    allow_neg_eigval: bool = False,
    track_state: torch.Tensor | None = None,
    track_chunk_idx: torch.Tensor | None = None,
) -> torch.Tensor:
    """Chunked KDA forward on the Triton pipeline (inputs already validated by the caller).

    Args:
        q, k: ``[B, T, H, K]``; v: ``[B, T, HV, V]``; g: ``[B, T, HV, K]``; beta: ``[B, T, HV]``;
            fp16/bf16/fp32, contiguous. K, V in ``dispatch.CHUNK_KERNEL_DIMS`` (16 to 256).
        scale: query scale.
        cu_seqlens: ``None`` or int32/int64 ``[N+1]`` with ``B == 1``.
        h0, h0_indices, ht, ht_indices: fp32 states ``[S, HV, K, V]`` (``[S, HV, V, K]`` with
            ``state_v_first``) and optional int32/int64 ``[N]`` slot indices (-1: zeros / no
            write). ``ht`` may be ``h0``.
        use_qk_l2norm, use_beta_sigmoid: in-kernel preprocessing; ``allow_neg_eigval``: beta is
            ``2 sigmoid`` of the logits (needs ``use_beta_sigmoid``).
        gate: ``"none"`` (g is a log decay), ``"softplus"`` or ``"lower_bound"``.
        A_log: ``[HV]`` fp32 (softplus: required); dt_bias: ``[HV*K]``; lower_bound: float.
        out: optional preallocated ``[B, T, HV, V]`` output in v's dtype.
        intra_config, state_config, pipeline_config: override the tuning dicts (benchmark sweeps).
        bind: optional list; when every launch of the call took the fast path, a
            :class:`BoundPrefill` that repeats the call for new tensors of the same metadata is
            appended (the eager shortcut of ``kimiops.kda.runner``; not for calls with snapshots).
        track_state, track_chunk_idx: state snapshots (``kimiops.kda.track``): fp32 rows laid out
            as ``ht`` (``[N, HV, ...]``) and int32/int64 ``[N]`` chunk indices in units of
            ``TRACK_CHUNK`` tokens (-1: none); row n gets sequence n's state after
            ``track_chunk_idx[n] * TRACK_CHUNK`` tokens.
    Returns:
        o ``[B, T, HV, V]`` in v's dtype.
    """
    plan = _plan(q, k, v, g, beta, scale=scale, cu_seqlens=cu_seqlens, h0=h0, h0_indices=h0_indices, ht=ht,
                 ht_indices=ht_indices, state_v_first=state_v_first, use_qk_l2norm=use_qk_l2norm,
                 use_beta_sigmoid=use_beta_sigmoid, gate=gate, A_log=A_log, dt_bias=dt_bias,
                 lower_bound=lower_bound, out=out, intra_config=intra_config, state_config=state_config,
                 pipeline_config=pipeline_config, allow_neg_eigval=allow_neg_eigval)
    plan["track"], plan["track_idx"] = track_state, track_chunk_idx
    if plan["N"] > 0:
        if bind is None or out is not None or track_state is not None:
            _launch(plan)
        else:
            with recording([]) as launches:
                _launch(plan)
            bound = BoundPrefill.build(plan, launches, (q, k, v, g, beta, h0, h0_indices, ht, ht_indices,
                                                        cu_seqlens, A_log, dt_bias))
            if bound is not None:
                bind.append(bound)
                bind.append(ElasticPrefill.build(plan, launches, bound))
    return plan["o"]


_SCRATCH_KEYS = ("w", "tb", "qg", "kg", "aqk", "gc", "order", "chain", "carry", "seg_maps", "seg_starts")


class BoundPrefill:
    """The launches of one prefill call, repeatable for new tensors with the same metadata (the
    caller guarantees it: ``kimiops.kda.runner`` matches shapes, strides, dtypes, devices, flags and
    the stream). Each recorded launch keeps its compiled kernel, grid and every argument but the
    call's tensors: scalars and constexprs as given, scratch buffers as fixed addresses (the bound
    call holds those buffers, so the addresses stay valid). Calling it allocates ``o`` like v and
    repeats the launches with the new tensors' addresses; it returns ``None`` (the caller falls back
    to the full path) when the current device or stream changed, a launch hook is registered or
    the fast launch path was switched off."""

    __slots__ = ("launches", "device", "stream", "scratch")

    def __init__(self, launches, device, stream, scratch):
        self.launches, self.device, self.stream, self.scratch = launches, device, stream, scratch

    @classmethod
    def build(cls, plan, recorded, call_tensors):
        """From a call's plan, its recorded launches (``kimiops.launch.recording``) and its tensors
        ``(q, k, v, g, beta, h0, h0_indices, ht, ht_indices, cu_seqlens, A_log, dt_bias)``; ``None``
        when a launch took Triton's own path or passed a tensor that is neither the call's nor
        scratch (e.g. a contiguous copy of a strided input)."""
        if not recorded or any(r is None for r in recorded):
            return None
        if len(plan["parts"]) > 1 and not plan["pdl_chain"]:  # parts on a forked stream: not one stream's launches
            return None
        roles = {}
        for i, t in enumerate((*call_tensors, plan["o"])):  # index 12: o
            if t is not None:
                roles.setdefault(id(t), i)
        scratch = tuple(plan[n] for n in _SCRATCH_KEYS if plan.get(n) is not None)
        storages = {t.untyped_storage().data_ptr() for t in scratch}
        launches = []
        for raw, grid, values, positions, *_ in recorded:
            template, from_call = list(values), []
            for pos in positions:
                t = values[pos]
                role = roles.get(id(t))
                if role is not None:
                    from_call.append((pos, role))
                    template[pos] = None
                elif t.untyped_storage().data_ptr() in storages:  # a view of scratch (e.g. a chain counter)
                    template[pos] = t.data_ptr()
                else:
                    return None
            launches.append((raw.entry, raw.head, grid, tuple(template), tuple(from_call)))
        device = torch._C._cuda_getDevice()  # the launches went to the current device (run_kda's on_device)
        return cls(tuple(launches), device, torch._C._cuda_getCurrentRawStream(device), scratch)

    def __call__(self, q, k, v, g, beta, h0, h0_indices, ht, ht_indices, cu_seqlens, A_log, dt_bias):
        stream = _replay_stream(self.device, self.stream)
        if stream is None:
            return None
        o = torch.empty_like(v)  # v is contiguous here (a strided v was copied: such calls are not bound)
        _replay((q, k, v, g, beta, h0, h0_indices, ht, ht_indices, cu_seqlens, A_log, dt_bias, o), stream,
                [(entry, head, grid, list(template), from_call)
                 for entry, head, grid, template, from_call in self.launches])
        return o


def _replay_stream(device: int, stream: int) -> int | None:
    """The current stream (raw) where launches recorded on ``device`` and ``stream`` may be
    repeated: the same device and stream, the fast launch path on and no launch hook; else ``None``."""
    if not fast_launch.FAST_LAUNCH or torch._C._cuda_getDevice() != device or not no_launch_hooks():
        return None
    current = torch._C._cuda_getCurrentRawStream(device)
    return current if current == stream else None


def _replay(tensors: tuple, stream: int, launches) -> None:
    """Launch ``(entry, head, grid, values, from_call)`` in order, ``values[pos]`` set to the
    address of ``tensors[role]`` for each ``(pos, role)`` of ``from_call`` (``values`` is filled in place)."""
    for entry, head, (gx, gy, gz), values, from_call in launches:
        for pos, role in from_call:
            values[pos] = tensors[role].data_ptr()
        entry(gx, gy, gz, stream, *head, *values)


def _capacity(view: torch.Tensor) -> int:
    """Size of dimension 1 of the buffer a ``workspace.get_buffer`` view was cut from."""
    return (view._base if view._base is not None else view).shape[1]


def _plan(q, k, v, g, beta, *, scale, cu_seqlens, h0, h0_indices, ht, ht_indices, state_v_first,
          use_qk_l2norm, use_beta_sigmoid, gate, A_log, dt_bias, lower_bound, out, intra_config, state_config,
          pipeline_config=None, allow_neg_eigval=False):
    """Shapes, configs, output and scratch buffers of one call (host-only work, no device sync)."""
    B, T, H, K = q.shape
    HV, V = v.shape[2], v.shape[3]
    C = CHUNK_SIZE
    dev = q.device
    o = out if out is not None else torch.empty(B, T, HV, V, dtype=v.dtype, device=dev)
    ic = dict(INTRA_CONFIG, **(intra_config or {}))
    is_varlen = cu_seqlens is not None
    if is_varlen:
        N, NT, NC = cu_seqlens.numel() - 1, 0, T // C + (cu_seqlens.numel() - 1)
    else:
        N, NT = B, cdiv(T, C)
        NC = B * NT
    pc = dict(PIPELINE_CONFIG, **(pipeline_config or {}))
    sc = state_config_for(K)
    sc.update(state_config or {})
    seq_chunks = cdiv(T, C)  # chunks of each sequence (varlen: a bound, with B == 1)
    seg_len, seg_max = segment_layout(B * seq_chunks, seq_chunks, N, HV, K, pc)
    parts = pipeline_parts(NC, N * HV, pc, seqs=N) if seg_max == 1 else [(0, NC)]
    if len(parts) > 1 and "num_stages" not in (state_config or {}):
        sc["num_stages"] = pc["state_stages"]
    plan = dict(q=q, k=k, v=v, g=g, beta=beta, o=o, B=B, T=T, H=H, K=K, HV=HV, V=V, C=C, N=N, NT=NT, NC=NC,
                ic=ic, sc=sc, is_varlen=is_varlen, scale=float(scale), cu=cu_seqlens if is_varlen else q,
                h0=h0, h0_indices=h0_indices, ht=ht, ht_indices=ht_indices, state_v_first=bool(state_v_first),
                use_qk_l2norm=bool(use_qk_l2norm), use_beta_sigmoid=bool(use_beta_sigmoid),
                neg_eigval=bool(allow_neg_eigval), gate=_GATES[gate],
                A_log=A_log, dt_bias=dt_bias,
                lower_bound=float(lower_bound) if lower_bound is not None else 0.0)
    if N == 0:
        return plan
    inter = NUMERICS_CONFIG["inter_dtype"]
    plan["w"] = get_buffer("kda_w", dev, inter, HV, (C, K), NC)
    plan["tb"] = get_buffer("kda_tb", dev, torch.float32, HV, (C, C), NC)
    plan["qg"] = get_buffer("kda_qg", dev, inter, HV, (C, K), NC)
    plan["kg"] = get_buffer("kda_kg", dev, inter, HV, (C, K), NC)
    plan["aqk"] = get_buffer("kda_aqk", dev, inter, HV, (C, C), NC)
    plan["gc"] = get_buffer("kda_gc", dev, torch.float32, HV, (K,), NC)
    if is_varlen and 1 < N <= ORDER_MAX_SEQS and sc.get("longest_first", True):
        plan["order"] = get_buffer("kda_order", dev, torch.int32, 1, (), N)
    plan["parts"] = parts
    plan["high_priority"] = bool(pc["high_priority"])
    plan["pdl_chain"] = bool(pc["pdl"]) and len(parts) > 1 and supports_pdl(dev)
    if plan["pdl_chain"]:  # one completion counter per part (left at zero by every launch)
        plan["chain"] = get_buffer("kda_chain", dev, torch.int32, 1, (), len(parts), zeroed=True)
    if len(plan["parts"]) > 1:
        plan["carry"] = get_buffer("kda_carry", dev, torch.float32, HV, (K, V), N)
    plan["seg_len"], plan["seg_max"] = seg_len, seg_max
    if seg_max > 1:
        plan["seg_maps"] = get_buffer("kda_seg_maps", dev, torch.float32, HV, (K + V, K), N * (seg_max - 1))
        plan["seg_starts"] = get_buffer("kda_seg_starts", dev, torch.float32, HV, (V, K), N * seg_max)
    return plan


# Parameters of the chunk kernels whose values follow a varlen call's token count ``T``, sequence
# count ``N`` and chunk slots ``NC = T // C + N`` in a one-part call (``ElasticPrefill``); every
# other argument depends only on the call's signature (flags, dtypes, head sizes, scratch buffers).
_ELASTIC_VALUES = {
    "T": lambda T, N, NC, HV: T,
    "N": lambda T, N, NC, HV: N,
    "n_programs": lambda T, N, NC, HV: NC * HV,   # stage 1's program count
    "slot_hi": lambda T, N, NC, HV: NC,           # the state stage's slot range [0, NC)
    "LOG_N": lambda T, N, NC, HV: max(1, N.bit_length()),   # constexprs
    "BLOCK": lambda T, N, NC, HV: next_power_of_2(N),
}
_ELASTIC_CONSTEXPRS = frozenset(("LOG_N", "BLOCK"))


def elastic_layout(T: int, N: int, HV: int, K: int) -> tuple[bool, bool] | None:
    """``(ordered, grid_3d)`` of a varlen call of ``T`` tokens and ``N`` sequences as ``_plan``
    lays it out with the default configs (longest-first order, the state stage's 3-D grid), or
    ``None`` where it takes segments or pipelined parts (calls :class:`ElasticPrefill` does not
    repeat)."""
    seq_chunks = cdiv(T, CHUNK_SIZE)
    if segment_layout(seq_chunks, seq_chunks, N, HV, K)[1] > 1:
        return None
    if len(pipeline_parts(T // CHUNK_SIZE + N, N * HV, seqs=N)) > 1:
        return None
    return 1 < N <= ORDER_MAX_SEQS, N <= GRID_3D_MAX_SEQS


class ElasticPrefill:
    """The launches of a one-part varlen prefill call, repeatable for new tensors with the same
    signature except for the token count ``T`` and the sequence count ``N`` (the caller guarantees
    the rest: ``kimiops.kda.runner`` matches flags, dtypes, head sizes, strides of every other
    dimension, alignments and the stream). Serving engines run extend eagerly with a new ``T`` on
    almost every call, which a :class:`BoundPrefill` (exact shapes) never repeats.

    A replay recomputes the arguments that follow ``T`` and ``N`` (``_ELASTIC_VALUES``) and the
    grids, and takes the compiled kernel of each launch from the variants seen so far: Triton
    specializes integer arguments on the value 1 and on divisibility by 16, so ``T`` and ``N``
    select among a few kernels of one signature (``variants``: the specialization of the elastic
    arguments -> the launcher entry and head; :meth:`learn` adds those of another call). It
    returns ``None`` (the full path runs) when the call needs a layout this recording does not
    cover (segments, pipelined parts, another ordering or grid form), more scratch than the
    recording's buffers hold, a kernel variant not seen yet, or when the device or stream changed,
    a launch hook is registered or the fast launch path was switched off; nothing is launched then.
    """

    __slots__ = ("launches", "device", "stream", "scratch", "slot_cap", "seq_cap", "layout", "HV", "K", "fixed_spec")

    def __init__(self, launches, device, stream, scratch, slot_cap, seq_cap, layout, HV, K, fixed_spec):
        self.launches, self.device, self.stream, self.scratch = launches, device, stream, scratch
        self.slot_cap, self.seq_cap, self.layout, self.HV, self.K = slot_cap, seq_cap, layout, HV, K
        self.fixed_spec = fixed_spec  # Triton's specialization of the int arguments that do not follow T and N

    @classmethod
    def build(cls, plan, recorded, bound):
        """From a call's plan, its recorded launches (``kimiops.launch.recording``, with their
        kernels) and the :class:`BoundPrefill` built from them; ``None`` when the call is not a
        one-part varlen call or a launch is not one of the pipeline's kernels."""
        if not plan["is_varlen"] or len(plan["parts"]) != 1 or plan.get("seg_max", 1) != 1 \
                or plan.get("track") is not None:
            return None
        N0 = plan["N"]
        layout = elastic_layout(plan["T"], N0, plan["HV"], plan["K"])
        if layout is None or layout[0] != (plan.get("order") is not None):
            return None
        launches, fixed_spec = [], []
        for (_, grid, values, _, kernel), (entry, head, _, template, from_call) in zip(recorded, bound.launches):
            names = kernel.arg_names
            if kernel is chunk_intra_kernel:
                grid_of = "slots"   # (NC, HV)
            elif kernel is longest_first_kernel:
                grid_of = "fixed"   # one program
            elif kernel is chunk_state_kernel and values[names.index("GRID_3D")] == layout[1]:
                grid_of = "seqs_z" if layout[1] else "seqs_x"  # (HV, NV, N) or (NV, HV, N); (N * HV * NV,)
                if not layout[1]:
                    grid = (grid[0] // N0, grid[1], grid[2])
            else:
                return None
            elastic = tuple((i, n) for i, n in enumerate(names) if n in _ELASTIC_VALUES)
            const = tuple(i for i, n in elastic if n in _ELASTIC_CONSTEXPRS)
            ints = tuple(i for i, n in elastic if n not in _ELASTIC_CONSTEXPRS)
            variants = {_elastic_variant(values, ints, const): (entry, head)}
            launches.append((grid_of, grid, template, from_call, elastic, ints, const, variants))
            follows = {i for i, _ in elastic}
            fixed_spec.append(tuple(specialization(x) for i, x in enumerate(template)
                                    if type(x) is int and i not in follows))
        slot_cap = min(_capacity(plan[n]) for n in ("w", "tb", "qg", "kg", "aqk", "gc"))
        seq_cap = _capacity(plan["order"]) if plan.get("order") is not None else GRID_3D_MAX_SEQS
        return cls(tuple(launches), bound.device, bound.stream, bound.scratch, slot_cap, seq_cap, layout,
                   plan["HV"], plan["K"], tuple(fixed_spec))

    def learn(self, other: "ElasticPrefill") -> None:
        """Add the kernel variants of ``other`` (a recording of the same signature and layout) to
        this one's, where the two specialize their other integer arguments alike (their scratch
        strides follow each one's buffers)."""
        if other.fixed_spec != self.fixed_spec or len(other.launches) != len(self.launches):
            return
        for mine, theirs in zip(self.launches, other.launches):
            for key, value in theirs[-1].items():
                mine[-1].setdefault(key, value)

    def __call__(self, q, k, v, g, beta, h0, h0_indices, ht, ht_indices, cu_seqlens, A_log, dt_bias):
        stream = _replay_stream(self.device, self.stream)
        if stream is None:
            return None
        T, N = q.shape[1], cu_seqlens.shape[0] - 1
        NC = T // CHUNK_SIZE + N
        if T < 1 or N < 1 or NC > self.slot_cap or N > self.seq_cap \
                or elastic_layout(T, N, self.HV, self.K) != self.layout:
            return None
        ready = []
        for grid_of, grid, template, from_call, elastic, ints, const, variants in self.launches:
            values = list(template)
            for pos, name in elastic:
                values[pos] = _ELASTIC_VALUES[name](T, N, NC, self.HV)
            hit = variants.get(_elastic_variant(values, ints, const))
            if hit is None:
                return None
            if grid_of == "slots":
                grid = (NC, grid[1], grid[2])
            elif grid_of == "seqs_z":
                grid = (grid[0], grid[1], N)
            elif grid_of == "seqs_x":  # one flat dimension of N * HV * NV programs (grid[0]: per sequence)
                grid = (grid[0] * N, grid[1], grid[2])
            ready.append((*hit, grid, values, from_call))
        o = torch.empty_like(v)  # v is contiguous here (a strided v was copied: such calls are not bound)
        _replay((q, k, v, g, beta, h0, h0_indices, ht, ht_indices, cu_seqlens, A_log, dt_bias, o), stream, ready)
        return o


def _elastic_variant(values, ints, const) -> tuple:
    """What selects the compiled kernel among calls of one signature: Triton's specialization of
    the elastic integer arguments and the elastic constexprs' values."""
    return tuple([specialization(values[i]) for i in ints]), tuple([values[i] for i in const])


def _pipeline_config(config: dict | None) -> dict:
    """``PIPELINE_CONFIG`` with ``config``'s keys overridden (read only; no copy without overrides:
    the elastic replay asks for the layout on every call)."""
    return dict(PIPELINE_CONFIG, **config) if config else PIPELINE_CONFIG


def segment_count(total_chunks: int, seqs: int, heads: int, K: int, config: dict | None = None) -> int:
    """Segments the call's chunks are cut into (1: none; ``PIPELINE_CONFIG`` explains the rule).

    Args:
        total_chunks: chunks of the call (``B * cdiv(T, C)``; varlen: ``cdiv(T, C)``, a bound).
        seqs: sequences of the call.
        heads: value heads (HV).
        K: head dim of q and k (the rule takes segments at K <= 128 only, where they were timed).
        config: ``PIPELINE_CONFIG`` keys to override.
    """
    pc = _pipeline_config(config)
    if total_chunks < 2 or seqs < 1 or heads < 1:
        return 1
    if pc["segments"]:
        return max(1, min(pc["segments"], total_chunks))
    if seqs * heads > pc["segment_max_pairs"] or K > 128:
        return 1
    p = min(pc["max_segments"], pc["segment_budget"] // heads, total_chunks // max(1, pc["segment_min_chunks"]))
    if seqs * heads <= pc["long_segments_max_pairs"]:  # one prompt at 1-2 heads: longer prompts take more
        p = max(p, min(pc["long_segments_max"], total_chunks // max(1, pc["long_segments_min_chunks"])))
    return p if p >= 2 else 1


def segment_layout(total_chunks: int, seq_chunks: int, seqs: int, heads: int, K: int,
                   config: dict | None = None) -> tuple[int, int]:
    """``(seg_len, seg_max)``: segments of ``seg_len`` chunks, at most ``seg_max`` per sequence
    (``(0, 1)``: no segments). The call's ``segment_count`` segments set the length, so a sequence
    of ``c`` chunks gets ``cdiv(c, seg_len)`` of them (known on the device only, for varlen); by
    the rule (not when forced) a sequence as long as ``seq_chunks`` must get at least
    ``segment_min_per_seq``.

    Args:
        total_chunks, seqs, heads, K, config: as ``segment_count``.
        seq_chunks: chunks of the longest possible sequence (``cdiv(T, C)``).
    """
    pc = _pipeline_config(config)
    p = segment_count(total_chunks, seqs, heads, K, config)
    seg_len = cdiv(total_chunks, p)
    seg_max = cdiv(seq_chunks, seg_len)
    fewest = 2 if pc["segments"] else max(2, pc["segment_min_per_seq"])
    if p == 1 or seg_max < fewest or seqs * seg_max > GRID_3D_MAX_SEQS:
        return 0, 1
    return seg_len, seg_max


def pipeline_parts(n_slots: int, pairs: int, config: dict | None = None, seqs: int = 1) -> list[tuple[int, int]]:
    """Slot ranges ``[lo, hi)`` of the pipelined parts (contiguous, covering ``[0, n_slots)``).

    Args:
        n_slots: chunk slots of the call (``NC``).
        pairs: sequences x value heads (``N * HV``).
        config: ``PIPELINE_CONFIG`` keys to override.
        seqs: sequences of the call (``N``).
    Returns:
        ``[(0, n_slots)]`` (one part) at ``config["below_pairs"]`` pairs or more or above
        ``config["max_seqs"]`` sequences, else
        ``min(max(min_parts, n_slots // part_slots), max_parts, n_slots // min_part_slots)``
        near-equal parts (at least one).
    """
    pc = _pipeline_config(config)
    n = max(pc["min_parts"], n_slots // max(1, pc["part_slots"]))
    n = max(1, min(n, pc["max_parts"], n_slots // max(1, pc["min_part_slots"])))
    if pairs >= pc["below_pairs"] or seqs > pc["max_seqs"]:
        n = 1
    return [(n_slots * i // n, n_slots * (i + 1) // n) for i in range(n)]


def _launch(p):
    """Both stages, part by part (see the module docstring); no host synchronization."""
    parts = p["parts"]
    if len(parts) == 1:
        _launch_intra(p)
        _launch_state(p)
        return
    dev = p["q"].device
    if dev.type != "cuda":  # interpreter: one stream, same parts
        for lo, hi in parts:
            _launch_intra(p, lo, hi)
            _launch_state(p, lo, hi)
        return
    if p["pdl_chain"]:
        # One stream: stage 1 of part 0, then state(0), stage1(1), state(1), ... each launched as a
        # programmatic dependent of the one before. A state launch is scheduled while its stage 1
        # drains and waits (griddepcontrol.wait) for it; the next stage 1 is scheduled once every
        # state program runs, so the state stage holds its SMs without a stream priority (which CUDA
        # graph replays drop). Stage 1 of part p + 1 reads only the call's inputs, so it may overlap
        # both; its last program waits for state(p), so state(p + 1), which waits for that stage 1,
        # also runs after state(p) (the carry).
        if p.get("order") is not None:
            _launch_order(p)
        for i, (lo, hi) in enumerate(parts):
            _launch_intra(p, lo, hi, pdl=1 if i == 0 else 2, chain_index=i)
            _launch_state(p, lo, hi, pdl=True, order_done=True)
        return
    main = torch.cuda.current_stream(dev)
    side, handoff = forked_stream(dev, p["high_priority"])
    for lo, hi in parts:
        _launch_intra(p, lo, hi)
        handoff.record(main)
        side.wait_event(handoff)
        with torch.cuda.stream(side):
            _launch_state(p, lo, hi)
    handoff.record(side)
    main.wait_event(handoff)


def _scratch(p):
    bufs = (p["w"], p["tb"], p["qg"], p["kg"], p["aqk"], p["gc"])
    return bufs, tuple(b.stride(0) for b in bufs)


def _launch_intra(p, lo=0, hi=None, pdl=0, chain_index=0):
    """Stage 1 (``chunk_intra_kernel``) on the chunk slots ``[lo, hi)`` (default all ``NC``), grid
    ``(hi - lo, HV)``; returns the compiled kernel. ``pdl``: the kernel's ``PDL`` mode (2: launched
    as a programmatic dependent, completion counter ``chain[chain_index]``)."""
    hi = p["NC"] if hi is None else hi
    if hi <= lo:
        return
    ic = p["ic"]
    bufs, strides = _scratch(p)
    dummy = p["q"]
    gate_id = p["gate"]
    common = dict(
        H=p["H"], HV=p["HV"], K=p["K"], C=p["C"], BC=SUB_CHUNK,
        GATE=gate_id, HAS_A=p["A_log"] is not None and gate_id != GATE_NONE,
        HAS_DT_BIAS=p["dt_bias"] is not None and gate_id != GATE_NONE,
        USE_L2NORM=p["use_qk_l2norm"], USE_BETA_SIGMOID=p["use_beta_sigmoid"], NEG_EIGVAL=p["neg_eigval"],
        IS_VARLEN=p["is_varlen"], LOG_N=max(1, p["N"].bit_length()),
        DOT_DT=_TL_DOT[NUMERICS_CONFIG["dot_dtype"]], INV_PREC=NUMERICS_CONFIG["inv_prec"],
        LOOP_STAGES=ic["loop_stages"], ABL=ic.get("ablate", 0), PDL=pdl,
        # the stash parks fp16 halves in the qg / kg tiles: it needs 16-bit storage there
        STASH_G=gate_id != GATE_NONE and bool(ic["stash_g"]) and NUMERICS_CONFIG["inter_dtype"].itemsize == 2,
        num_warps=ic["num_warps"], num_stages=ic.get("num_stages", 1),
    )
    if pdl == 2:
        common.update(launch_pdl=True)
    common.update(BK=min(ic.get("BK", 16), p["K"]), BK2=min(ic.get("BK2", ic.get("BK", 16)), p["K"]))
    if ic.get("maxnreg"):  # register cap per thread (more CTAs per SM, possibly spills)
        common.update(maxnreg=ic["maxnreg"])
    return launch(
        chunk_intra_kernel, (hi - lo, p["HV"]),
        p["q"], p["k"], p["g"], p["beta"],
        p["A_log"] if p["A_log"] is not None else dummy,
        p["dt_bias"] if p["dt_bias"] is not None else dummy,
        p["cu"], *bufs, p["chain"][0, chain_index:] if pdl == 2 else dummy, *strides,
        p["scale"], p["lower_bound"], p["T"], p["N"], p["NT"], lo, (hi - lo) * p["HV"], **common,
    )


def _launch_order(p):
    """``longest_first_kernel``: the state stage's dispatch order of a varlen batch."""
    launch(longest_first_kernel, (1,), p["cu"], p["order"], p["N"], BLOCK=next_power_of_2(p["N"]), num_warps=4)


def _or_dummy(p, x):
    """``x``, or a tensor of the call where a kernel's optional pointer is absent (never read)."""
    return x if x is not None else p["q"]


def _state_pointers(p):
    """``h0, h0_indices, ht, ht_indices`` of the call, absent ones as ``_or_dummy``."""
    return tuple(_or_dummy(p, p[n]) for n in ("h0", "h0_indices", "ht", "ht_indices"))


def _track_pointers(p):
    """``track, track_idx`` of the call (state snapshots), absent ones as ``_or_dummy``."""
    return _or_dummy(p, p.get("track")), _or_dummy(p, p.get("track_idx"))


def _state_constexprs(p):
    """Constexprs and launch options every ``chunk_state_kernel`` launch of the call shares (the
    snapshot unit ``TRACK_STEPS`` in chunks: 0 without snapshots; the map walk sets its own 0)."""
    sc = p["sc"]
    return dict(HV=p["HV"], K=p["K"], V=p["V"], C=p["C"], STATE_V_FIRST=p["state_v_first"],
                TRACK_STEPS=TRACK_CHUNK // p["C"] if p.get("track") is not None else 0,
                HAS_H0_IDX=p["h0_indices"] is not None, HAS_HT_IDX=p["ht_indices"] is not None,
                IS_VARLEN=p["is_varlen"], HI_FIRST=bool(sc["hi_first"]), SPLIT_WS=bool(sc["split_ws"]),
                SPLIT_KV=bool(sc["split_kv"]), POW2_SCALE=bool(sc.get("pow2_scale", False)),
                INV_PREC=NUMERICS_CONFIG["inv_prec"], num_warps=sc["num_warps"], num_stages=sc["num_stages"])


def _launch_state(p, lo=0, hi=None, pdl=False, order_done=False):
    """Stage 2 (``chunk_state_kernel``) on the chunks in slots ``[lo, hi)`` (default: all, in one
    launch without carry), after ``longest_first_kernel`` for varlen batches (first part only,
    unless ``order_done``); returns the compiled state kernel. ``pdl``: launched as a programmatic
    dependent of its part's stage 1 (see ``_launch``)."""
    if hi is None and p.get("seg_max", 1) > 1:
        return _launch_segments(p)
    sc = p["sc"]
    BV = min(sc["BV"], p["V"])
    NV = cdiv(p["V"], BV)
    bufs, strides = _scratch(p)
    parted = hi is not None
    hi = p["NC"] if hi is None else hi

    order = p.get("order")
    if order is not None and lo == 0 and not order_done:
        _launch_order(p)
    carry = p.get("carry") if parted else None
    adjacent = bool(sc.get("v_tiles_adjacent", False))
    grid_3d = bool(sc.get("grid_3d", True)) and p["N"] <= GRID_3D_MAX_SEQS
    if grid_3d:
        grid = (NV, p["HV"], p["N"]) if adjacent else (p["HV"], NV, p["N"])
    else:
        grid = (p["N"] * p["HV"] * NV,)
    return launch(
        chunk_state_kernel, grid,
        *bufs, p["v"], p["o"], *_state_pointers(p), p["cu"], _or_dummy(p, order), _or_dummy(p, carry),
        *_track_pointers(p), *strides,
        carry.stride(0) if carry is not None else 0, p["T"], p["NT"], lo, hi, 0, 0,
        BV=BV, HAS_H0=p["h0"] is not None, HAS_HT=p["ht"] is not None, ORDERED=order is not None,
        V_TILES_ADJACENT=adjacent, GRID_3D=grid_3d, PARTED=carry is not None, SEG=0, PDL=pdl, launch_pdl=pdl,
        **_state_constexprs(p),
    )


def _launch_segments(p):
    """The state stage in segments of ``p["seg_len"]`` chunks (``chunk_state.py``, ``SEG``): maps
    and local states of all segments but each sequence's last, the chained start states, then every
    segment with the output; returns the compiled output walk."""
    sc = p["sc"]
    K, V, HV, N, seg_max = p["K"], p["V"], p["HV"], p["N"], p["seg_max"]
    BV = min(sc["BV"], V)
    BV1 = min(BV, K, V)  # the map walk's tiles must not straddle the map and state columns
    bufs, strides = _scratch(p)
    dummy = _or_dummy(p, None)
    maps, starts = p["seg_maps"], p["seg_starts"]

    common = dict(_state_constexprs(p), ORDERED=False, V_TILES_ADJACENT=False, GRID_3D=True, PARTED=False, PDL=False)
    track = _track_pointers(p)
    tail = (p["T"], p["NT"], 0, p["NC"], p["seg_len"], seg_max)
    launch(chunk_state_kernel, (HV, (K + V) // BV1, N * (seg_max - 1)),
           *bufs, p["v"], p["o"], dummy, dummy, dummy, dummy, p["cu"], dummy, maps, dummy, dummy, *strides,
           maps.stride(0), *tail, BV=BV1, HAS_H0=False, HAS_HT=False, SEG=1, **dict(common, TRACK_STEPS=0))
    stc = SEGMENT_STARTS_CONFIG
    BVC = min(stc["BV"], V)
    launch(segment_starts_kernel, (HV, V // BVC, N), maps, starts, *_state_pointers(p)[:2], p["cu"],
           maps.stride(0), starts.stride(0), p["T"], p["seg_len"], seg_max, HV=HV, K=K, V=V, C=p["C"], BV=BVC,
           STATE_V_FIRST=p["state_v_first"], HAS_H0=p["h0"] is not None, HAS_H0_IDX=p["h0_indices"] is not None,
           IS_VARLEN=p["is_varlen"], PREC=stc["prec"], BJ=starts_map_columns(K),
           num_warps=stc["num_warps"], num_stages=stc["num_stages"])
    return launch(chunk_state_kernel, (HV, V // BV, N * seg_max),
                  *bufs, p["v"], p["o"], *_state_pointers(p), p["cu"], dummy, starts, *track, *strides,
                  starts.stride(0), *tail,
                  BV=BV, HAS_H0=p["h0"] is not None, HAS_HT=p["ht"] is not None, SEG=2, **common)
