"""How a chunked prefill call is cut (host-side rules, no device work): the chunk size, pipelined
parts of one long prompt, segments for few (sequence, head) pairs, and the state stage's grid form.
``chunk.py`` plans and launches by these rules; ``chunk_replay.py`` checks that a call it repeats
keeps the layout it recorded. The measurements that chose each constant are next to it.
"""

from __future__ import annotations

from kimiops.intmath import cdiv, next_power_of_2

__all__ = ["CHUNK_SIZE", "SUB_CHUNK", "CALL_COUNTS", "ORDER_MAX_SEQS", "ORDER_MIN_BLOCK", "PIPELINE_CONFIG",
           "GRID_3D_MAX_SEQS", "segment_count", "segment_layout", "pipeline_parts", "cut", "varlen_slots",
           "chunk_slots", "kernel_rows", "ordered", "order_block", "fits_grid_3d", "elastic_layout"]

# Chunk of 32 tokens (two 16-row sub-chunks): the intra-chunk stage is the bottleneck and its work
# per token grows with the chunk (C x C score blocks, the inverse's levels), while the state stage
# pays per chunk step. H200, CUDA-graph medians of each stage alone, H=HV=32, K=V=128 bf16 (logs
# benchmarks/results/logs_h200_20261129d/prefill_ablate_chunk32_round*.log): stage 1 1.102 ms at
# C = 64 -> 0.695 ms at C = 32 (B1 T8192); the state stage 0.395 -> 0.58 ms at B1 T8192 (twice the
# sequential steps), 0.313 -> 0.296 ms at B8 T1024. Whole-pipeline figures: docs/prefill.md.
CHUNK_SIZE = 32
SUB_CHUNK = 16
# Integer arguments of the prefill kernels that follow a call's counts and layout (sequences, chunks per
# sequence, parts, segments, grid size): the kernels mark them ``do_not_specialize``. Triton otherwise
# compiles a variant per combination of "is 1" / "divisible by 16" / other, so eager extends with new
# counts would compile again and again (each whole call 2-8 s with an empty cache on the H100,
# benchmarks/results/logs_h100_20261205c/) for the same machine code: offline sm_90, these
# arguments' specialization changes no SASS opcode in stage 1, the state stage, the segmented walk
# and the segment starts at the shapes of benchmarks/tools/int_specialization_sass.py
# (``cpu_checks_20261205_s50/int_specialization_sass.log``). The sequence count ``N`` (read by stage 1's
# search of a varlen slot's sequence only) changes none at 2-1000 sequences; as 1 it would drop the
# search's loop (a one-sequence call runs one comparison of it) and, in a fixed-length call of one
# sequence where ``N`` is unread, move 8 integer instructions (benchmarks/results/cpu_checks_20261205_s51:
# ``locate_search_sass_*.log``, ``sass_b1_part_n.log``); timed on the H100, B1 T8192's stage 1 is 1.2%
# (precomputed g) and 0.3% (softplus gate) faster with ``N`` unspecialized, the call -0.4% / +0.4%
# (``logs_h100_20261205d/r2_ab_means.log``, tree nspec). ``T`` stays specialized: fixed-length calls'
# row arithmetic uses it (with ``T`` divisible by 16, stage 1 at B8 T1024 has 8 SASS instructions
# fewer, the segmented walk's maps at B1 T8192 32 fewer), and a varlen call passes ``T`` as 0
# (:func:`kernel_rows`). ``rows``, o's token rows, is read only where a varlen call zeroes its padding
# rows (``chunk_state.py``, ``ZERO_PADDING_ROWS``).
CALL_COUNTS = ("N", "NT", "slot_off", "n_programs", "slot_lo", "slot_hi", "seg_len", "seg_max", "rows")


def kernel_rows(T: int, varlen: bool) -> int:
    """The kernels' ``T`` argument: the token rows of each sequence of a fixed-length call, 0 for a
    varlen call, whose kernels take every row bound from ``cu_seqlens`` and never read ``T`` (a new
    token count then selects no new compiled variant)."""
    return 0 if varlen else T


# varlen batches of up to this many sequences run the state stage longest sequence first (one
# extra single-program launch sorts the lengths on the device); larger batches keep index order
ORDER_MAX_SEQS = 1024
# The sort's block is at least one warp's 32 lanes (a sort within a warp), so batches of 2-32 sequences
# share one compiled sort instead of five (BLOCK 2-32); that one program runs 176 SASS instructions
# where BLOCK 2-16 ran 48-128 (offline sm_90, benchmarks/results/cpu_checks_20261205_s51/sort_block_sass.log)
ORDER_MIN_BLOCK = 32
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
# Forty-first session (logs_h200_20261202h/r2_layouts_*.log, graph ms): the batched cells in
# 2, 4 or 8 parts tie with one part (B8 T1024 g 0.454-0.457 against 0.454-0.456, B4 T4096 g 0.883-
# 0.894 against 0.882, varlen 7 / 16384 0.879-0.900 against 0.879-0.889).
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



def varlen_slots(T: int, N: int) -> int:
    """Chunk slots ``NC`` of a varlen call of ``T`` token rows and ``N`` sequences: sequence ``n``
    owns slots ``cu[n] // C + n + c``, distinct and below this bound for any ``cu_seqlens``."""
    return T // CHUNK_SIZE + N


def chunk_slots(T: int, N: int, varlen: bool) -> tuple[int, int]:
    """``(NT, NC)`` of a call of ``N`` sequences and ``T`` token rows: chunks per sequence (fixed
    length; 0 for varlen, where slots follow ``cu_seqlens``) and chunk slots (varlen:
    :func:`varlen_slots`; fixed length: ``N * NT``, sequence ``b`` owning slots ``b * NT + c``)."""
    if varlen:
        return 0, varlen_slots(T, N)
    NT = cdiv(T, CHUNK_SIZE)
    return NT, N * NT


def ordered(N: int) -> bool:
    """Whether a varlen batch of ``N`` sequences runs its state stage longest sequence first."""
    return 1 < N <= ORDER_MAX_SEQS


def order_block(N: int) -> int:
    """The longest-first sort's block (``BLOCK``: a power of two holding ``N`` lengths, at least
    ``ORDER_MIN_BLOCK``)."""
    return max(ORDER_MIN_BLOCK, next_power_of_2(N))


def fits_grid_3d(N: int) -> bool:
    """Whether the state stage's 3-D grid holds ``N`` sequences in its z extent."""
    return N <= GRID_3D_MAX_SEQS


def cut(B: int, T: int, N: int, HV: int, K: int, NC: int, config: dict | None = None):
    """``(seg_len, seg_max, parts)`` of a call: its segments (``segment_layout``; ``(0, 1)``: none)
    and, without segments, its pipelined parts (``pipeline_parts``; one part ``[(0, NC)]`` with)."""
    seq_chunks = cdiv(T, CHUNK_SIZE)  # chunks of each sequence (varlen: a bound, with B == 1)
    seg_len, seg_max = segment_layout(B * seq_chunks, seq_chunks, N, HV, K, config)
    parts = pipeline_parts(NC, N * HV, config, seqs=N) if seg_max == 1 else [(0, NC)]
    return seg_len, seg_max, parts


def elastic_layout(T: int, N: int, HV: int, K: int,
                   varlen: bool = True) -> tuple[tuple, int, int, list[tuple[int, int]]]:
    """How ``_plan`` lays out a call of ``T`` tokens and ``N`` sequences (varlen, or one sequence of
    fixed length with ``varlen=False``) with the default configs, for :class:`ElasticPrefill`:
    ``(form, seg_len, seg_max, parts)`` (``cut``'s values) with ``form`` what a replay must share
    with its recording: ``("one", ordered, grid_3d)`` (one part; longest-first order, the state
    stage's 3-D grid), ``("parts", ordered, grid_3d)`` (pipelined parts of one long prompt) or
    ``("segments",)`` (few (sequence, head) pairs)."""
    seg_len, seg_max, parts = cut(1 if varlen else N, T, N, HV, K, chunk_slots(T, N, varlen)[1])
    if seg_max > 1:
        return ("segments",), seg_len, seg_max, parts
    order = varlen and ordered(N)
    return ("one" if len(parts) == 1 else "parts", order, fits_grid_3d(N)), seg_len, seg_max, parts
