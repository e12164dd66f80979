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
eager calls in parts were host-bound before. The rules that cut a call (chunk size, parts,
segments, grid form) are in ``chunk_layout.py``; eager calls that repeat a recorded call replay it
through ``chunk_replay.py``.

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
from kimiops.kda.kernels.chunk_layout import (  # noqa: F401 (some re-exported for tests and benchmarks)
    CHUNK_SIZE,
    ORDER_MAX_SEQS,
    PIPELINE_CONFIG,
    SUB_CHUNK,
    chunk_slots,
    cut,
    elastic_layout,
    fits_grid_3d,
    kernel_rows,
    order_block,
    ordered,
    pipeline_parts,
    segment_count,
    segment_layout,
    varlen_slots,
)
from kimiops.kda.kernels.chunk_replay import _SCRATCH_KEYS, BoundPrefill, ElasticPrefill  # noqa: F401
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
from kimiops.validation import LOWER_BOUND_RANGE
from kimiops.intmath import cdiv
from kimiops.kda.track import TRACK_CHUNK
from kimiops.kda.workspace import get_buffer
from kimiops.launch import launch, recording
from kimiops.streams import forked_stream

__all__ = ["chunk_kda_fwd", "BoundPrefill", "ElasticPrefill", "elastic_layout", "pipeline_parts", "segment_count",
           "segment_layout", "CHUNK_SIZE", "NUMERICS_CONFIG", "INTRA_CONFIG", "STATE_CONFIG_WIDE", "PIPELINE_CONFIG"]

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
    zero_padding_rows: bool = False,
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
            appended, then an :class:`ElasticPrefill` or ``None`` (the eager shortcut of
            ``kimiops.kda.runner``).
        track_state, track_chunk_idx: state snapshots (``kimiops.kda.track``): fp32 rows laid out
            as ``ht`` (``[N, HV, ...]``) and int32/int64 ``[N]`` chunk indices in units of
            ``TRACK_CHUNK`` tokens (-1: none); row n gets sequence n's state after
            ``track_chunk_idx[n] * TRACK_CHUNK`` tokens.
        zero_padding_rows: a varlen call's token rows past ``cu_seqlens[N]`` (CUDA-graph padding,
            ``KDABackend.extend``) get zero output rows; otherwise nothing writes them.
    Returns:
        o ``[B, T, HV, V]`` in v's dtype.
    """
    plan = _plan(q, k, v, g, beta, scale=scale, cu_seqlens=cu_seqlens, h0=h0, h0_indices=h0_indices, ht=ht,
                 ht_indices=ht_indices, state_v_first=state_v_first, use_qk_l2norm=use_qk_l2norm,
                 use_beta_sigmoid=use_beta_sigmoid, gate=gate, A_log=A_log, dt_bias=dt_bias,
                 lower_bound=lower_bound, out=out, intra_config=intra_config, state_config=state_config,
                 pipeline_config=pipeline_config, allow_neg_eigval=allow_neg_eigval, track_state=track_state,
                 track_chunk_idx=track_chunk_idx, zero_padding_rows=zero_padding_rows)
    if plan["N"] == 0:  # no sequence: every row is padding (no kernel runs)
        if plan["zero_padding_rows"]:
            plan["o"].zero_()
    else:
        if bind is None or out is not None:
            _launch(plan)
        else:
            with recording([]) as launches:
                _launch(plan)
            bound = BoundPrefill.build(plan, launches, (q, k, v, g, beta, h0, h0_indices, ht, ht_indices,
                                                        cu_seqlens, A_log, dt_bias, track_state, track_chunk_idx))
            if bound is not None:
                bind.append(bound)
                bind.append(ElasticPrefill.build(plan, launches, bound))
    return plan["o"]


def _plan(q, k, v, g, beta, *, scale, cu_seqlens, h0, h0_indices, ht, ht_indices, state_v_first,
          use_qk_l2norm, use_beta_sigmoid, gate, A_log, dt_bias, lower_bound, out, intra_config, state_config,
          pipeline_config=None, allow_neg_eigval=False, track_state=None, track_chunk_idx=None,
          zero_padding_rows=False):
    """Shapes, configs, output and scratch buffers of one call (host-only work, no device sync); the
    arguments as ``chunk_kda_fwd``'s."""
    B, T, H, K = q.shape
    HV, V = v.shape[2], v.shape[3]
    C = CHUNK_SIZE
    dev = q.device
    o = out if out is not None else torch.empty(B, T, HV, V, dtype=v.dtype, device=dev)
    ic = dict(INTRA_CONFIG, **(intra_config or {}))
    is_varlen = cu_seqlens is not None
    N = cu_seqlens.numel() - 1 if is_varlen else B
    NT, NC = chunk_slots(T, N, is_varlen)
    pc = dict(PIPELINE_CONFIG, **(pipeline_config or {}))
    sc = state_config_for(K)
    sc.update(state_config or {})
    seg_len, seg_max, parts = cut(B, T, N, HV, K, NC, pc)
    if len(parts) > 1 and "num_stages" not in (state_config or {}):
        sc["num_stages"] = pc["state_stages"]
    plan = dict(q=q, k=k, v=v, g=g, beta=beta, o=o, B=B, T=T, H=H, K=K, HV=HV, V=V, C=C, N=N, NT=NT, NC=NC,
                ic=ic, sc=sc, is_varlen=is_varlen, scale=float(scale), cu=cu_seqlens if is_varlen else q,
                h0=h0, h0_indices=h0_indices, ht=ht, ht_indices=ht_indices, state_v_first=bool(state_v_first),
                use_qk_l2norm=bool(use_qk_l2norm), use_beta_sigmoid=bool(use_beta_sigmoid),
                neg_eigval=bool(allow_neg_eigval), gate=_GATES[gate],
                A_log=A_log, dt_bias=dt_bias,
                lower_bound=float(lower_bound) if lower_bound is not None else 0.0,
                track=track_state, track_idx=track_chunk_idx,
                zero_padding_rows=bool(zero_padding_rows) and is_varlen)
    if N == 0:
        return plan
    inter = NUMERICS_CONFIG["inter_dtype"]
    plan["w"] = get_buffer("kda_w", dev, inter, HV, (C, K), NC)
    plan["tb"] = get_buffer("kda_tb", dev, torch.float32, HV, (C, C), NC)
    plan["qg"] = get_buffer("kda_qg", dev, inter, HV, (C, K), NC)
    plan["kg"] = get_buffer("kda_kg", dev, inter, HV, (C, K), NC)
    plan["aqk"] = get_buffer("kda_aqk", dev, inter, HV, (C, C), NC)
    plan["gc"] = get_buffer("kda_gc", dev, torch.float32, HV, (K,), NC)
    if is_varlen and ordered(N) and sc.get("longest_first", True):
        plan["order"] = get_buffer("kda_order", dev, torch.int32, 1, (), N)
    plan["parts"] = parts
    plan["high_priority"] = bool(pc["high_priority"])
    plan["pdl"] = supports_pdl(dev)
    plan["pdl_chain"] = bool(pc["pdl"]) and len(parts) > 1 and plan["pdl"]
    if plan["pdl_chain"]:  # one completion counter per part (left at zero by every launch)
        plan["chain"] = get_buffer("kda_chain", dev, torch.int32, 1, (), len(parts), zeroed=True)
    if len(plan["parts"]) > 1:
        plan["carry"] = get_buffer("kda_carry", dev, torch.float32, HV, (K, V), N)
    plan["seg_len"], plan["seg_max"] = seg_len, seg_max
    if seg_max > 1:
        plan["seg_maps"] = get_buffer("kda_seg_maps", dev, torch.float32, HV, (K + V, K), N * (seg_max - 1))
        plan["seg_starts"] = get_buffer("kda_seg_starts", dev, torch.float32, HV, (V, K), N * seg_max)
    return plan


def _launch(p):
    """Both stages, part by part (see the module docstring); no host synchronization."""
    parts = p["parts"]
    if len(parts) == 1:
        # stage 1 as the first part of a chain compiles (PDL 1): one kernel serves both. Its early
        # trigger does nothing here, as no launch after it is a programmatic dependent.
        _launch_intra(p, pdl=int(p["pdl"]))
        _launch_state(p)
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
    dev = p["q"].device
    if dev.type != "cuda":  # interpreter: one stream, same parts
        for lo, hi in parts:
            _launch_intra(p, lo, hi)
            _launch_state(p, lo, hi)
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
        IS_VARLEN=p["is_varlen"],
        DOT_DT=_TL_DOT[NUMERICS_CONFIG["dot_dtype"]], INV_PREC=NUMERICS_CONFIG["inv_prec"],
        LOOP_STAGES=ic["loop_stages"], ABL=ic.get("ablate", 0), PDL=pdl,
        # the stash parks fp16 halves in the qg / kg tiles: it needs 16-bit storage there
        STASH_G=bool(ic["stash_g"]) and NUMERICS_CONFIG["inter_dtype"].itemsize == 2,
        # the anchored diagonal's bound needs every step's g >= -5 (the public ops check lower_bound)
        DIAG_ANCHOR=gate_id == GATE_LOWER_BOUND and bool(ic["diag_anchor"])
        and p["lower_bound"] >= LOWER_BOUND_RANGE[0],
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
        p["scale"], p["lower_bound"], kernel_rows(p["T"], p["is_varlen"]), p["N"], p["NT"], lo, (hi - lo) * p["HV"],
        **common,
    )


def _launch_order(p):
    """``longest_first_kernel``: the state stage's dispatch order of a varlen batch."""
    launch(longest_first_kernel, (1,), p["cu"], p["order"], p["N"], BLOCK=order_block(p["N"]), num_warps=4)


def _or_dummy(p, x):
    """``x``, or a tensor of the call where a kernel's optional pointer is absent (never read)."""
    return x if x is not None else p["q"]


def _state_pointers(p):
    """``h0, h0_indices, ht, ht_indices`` of the call, absent ones as ``_or_dummy``."""
    return tuple(_or_dummy(p, p[n]) for n in ("h0", "h0_indices", "ht", "ht_indices"))


def _track_pointers(p):
    """``track, track_idx`` of the call (state snapshots), absent ones as ``_or_dummy``."""
    return _or_dummy(p, p["track"]), _or_dummy(p, p["track_idx"])


def _state_constexprs(p):
    """Constexprs and launch options every ``chunk_state_kernel`` launch of the call shares (the
    snapshot unit ``TRACK_STEPS`` in chunks: 0 without snapshots; the map walk sets its own 0)."""
    sc = p["sc"]
    return dict(HV=p["HV"], K=p["K"], V=p["V"], C=p["C"], STATE_V_FIRST=p["state_v_first"],
                TRACK_STEPS=TRACK_CHUNK // p["C"] if p["track"] is not None else 0,
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
    grid_3d = bool(sc.get("grid_3d", True)) and fits_grid_3d(p["N"])
    if grid_3d:
        grid = (NV, p["HV"], p["N"]) if adjacent else (p["HV"], NV, p["N"])
    else:
        grid = (p["N"] * p["HV"] * NV,)
    return launch(
        chunk_state_kernel, grid,
        *bufs, p["v"], p["o"], *_state_pointers(p), p["cu"], _or_dummy(p, order), _or_dummy(p, carry),
        *_track_pointers(p), *strides,
        carry.stride(0) if carry is not None else 0, kernel_rows(p["T"], p["is_varlen"]), p["NT"], lo, hi, 0, 0,
        p["B"] * p["T"],
        BV=BV, HAS_H0=p["h0"] is not None, HAS_HT=p["ht"] is not None, ORDERED=order is not None,
        V_TILES_ADJACENT=adjacent, GRID_3D=grid_3d, PARTED=carry is not None, SEG=0, PDL=pdl, launch_pdl=pdl,
        ZERO_PADDING_ROWS=p["zero_padding_rows"], **_state_constexprs(p),
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
    rows = kernel_rows(p["T"], p["is_varlen"])
    tail = (rows, p["NT"], 0, p["NC"], p["seg_len"], seg_max, p["B"] * p["T"])
    launch(chunk_state_kernel, (HV, (K + V) // BV1, N * (seg_max - 1)),
           *bufs, p["v"], p["o"], dummy, dummy, dummy, dummy, p["cu"], dummy, maps, dummy, dummy, *strides,
           maps.stride(0), *tail, BV=BV1, HAS_H0=False, HAS_HT=False, SEG=1, ZERO_PADDING_ROWS=False,
           **dict(common, TRACK_STEPS=0))
    stc = SEGMENT_STARTS_CONFIG
    BVC = min(stc["BV"], V)
    launch(segment_starts_kernel, (HV, V // BVC, N), maps, starts, *_state_pointers(p)[:2], p["cu"],
           maps.stride(0), starts.stride(0), rows, p["seg_len"], seg_max, HV=HV, K=K, V=V, C=p["C"], BV=BVC,
           STATE_V_FIRST=p["state_v_first"], HAS_H0=p["h0"] is not None, HAS_H0_IDX=p["h0_indices"] is not None,
           IS_VARLEN=p["is_varlen"], PREC=stc["prec"], BJ=starts_map_columns(K),
           num_warps=stc["num_warps"], num_stages=stc["num_stages"])
    return launch(chunk_state_kernel, (HV, V // BV, N * seg_max),
                  *bufs, p["v"], p["o"], *_state_pointers(p), p["cu"], dummy, starts, *track, *strides,
                  starts.stride(0), *tail,
                  BV=BV, HAS_H0=p["h0"] is not None, HAS_HT=p["ht"] is not None, SEG=2,
                  ZERO_PADDING_ROWS=p["zero_padding_rows"], **common)
