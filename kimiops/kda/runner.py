"""One KDA call end to end: validation, the chosen implementation, pools, and the custom op.

``chunk_kda`` (prefill) and ``fused_recurrent_kda`` (decode) differ only in the kernel they launch,
the pool dtypes they accept and what a padded (-1) pool index means; both go through here.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass, replace

import torch

from kimiops.env import env_var
from kimiops.kda.args import POOL_DTYPES_DECODE, STATE_DTYPES, check_kda_args, sequence_lengths
from kimiops.kda.dispatch import kda_backend
from kimiops.kda.torch_path import kda_torch
from kimiops.kda.track import check_track
from kimiops.kda.verify import check_verify
from kimiops.kda.workspace import empty_cache as _empty_workspace
from kimiops.streams import on_device
from kimiops.validation import check_tensor, debug_enabled


@dataclass(frozen=True)
class KDAKind:
    """What distinguishes the two KDA ops."""

    name: str
    chunked: bool  # torch path: chunked form (prefill) or token recurrence (decode)
    indices_name: str
    pool_dtypes: tuple
    skip_padded: bool  # -1 index: skip the sequence (zero output) instead of starting from zeros
    state_name: str = "initial_state"  # argument names in error messages
    cu_name: str = "cu_seqlens"


PREFILL = KDAKind("chunk_kda", True, "initial_state_indices", STATE_DTYPES, False)
DECODE = KDAKind("fused_recurrent_kda", False, "ssm_state_indices", POOL_DTYPES_DECODE, True)


def serving_kind(kind: KDAKind) -> KDAKind:
    """``kind`` as ``KDABackend`` calls it: errors name the backend's arguments (``ssm_states``,
    ``cache_indices``, ``query_start_loc``). Under ``torch.compile`` the registered op checks
    with the op's own names."""
    return replace(kind, indices_name="cache_indices", state_name="ssm_states", cu_name="query_start_loc")


def _launcher(kind: KDAKind):
    if kind.chunked:
        from kimiops.kda.kernels.chunk import chunk_kda_fwd

        return chunk_kda_fwd
    from kimiops.kda.kernels.recurrent import recurrent_kda_fwd

    return recurrent_kda_fwd


def run_kda(
    kind: KDAKind, q, k, v, g, beta, initial_state, pool, indices, cu_seqlens, A_log, dt_bias, scale,
    lower_bound, output_final_state, use_qk_l2norm, use_gate, use_beta_sigmoid, state_v_first, backend,
    allow_padded_tokens=False, allow_neg_eigval=False, num_accepted=None, track_state=None, track_chunk_idx=None,
    verify_buffer=None, verify_rows=None, verify_parents=None, pad_slot_id=-1, bind=None,
):
    """Validate and run; returns ``(o, final_state or None)``. ``pool`` is updated in place.
    ``pad_slot_id``: -1, or 0 for pools whose slot 0 is a null block (decode only; checked by the
    public call).
    ``bind``: see :func:`kimiops.kda.kernels.recurrent.recurrent_kda_fwd` (decode only).
    ``num_accepted``: ``num_accepted_tokens`` of speculative verification (decode only).
    ``track_state``, ``track_chunk_idx``: state snapshots (prefill only, :mod:`kimiops.kda.track`),
    ``track_state`` written in place.
    ``verify_buffer``, ``verify_rows``: target verification (decode only, :mod:`kimiops.kda.verify`):
    per-token states into the buffer, the pool read but not written."""
    state = pool if pool is not None else initial_state
    shapes = check_kda_args(
        q, k, v, g, beta, scale, state, use_gate, A_log, dt_bias, lower_bound, state_v_first, cu_seqlens,
        indices, kind.indices_name, kind.pool_dtypes, allow_padded_tokens, spec_indices=not kind.chunked,
        num_accepted=num_accepted, state_name=kind.state_name, cu_name=kind.cu_name, pad_slot_id=pad_slot_id,
    )
    if track_state is not None or track_chunk_idx is not None:  # chunk_kda / extend
        check_track(track_state, track_chunk_idx, shapes.state_shape(shapes.N, state_v_first), q.device,
                    lambda: sequence_lengths(shapes.N, shapes.T, cu_seqlens))
    steps = 0
    if verify_buffer is not None or verify_rows is not None:  # KDABackend.target_verify: a pool, [N] indices
        steps = check_verify(verify_buffer, verify_rows, N=shapes.N,
                             state_shape=shapes.state_shape(0, state_v_first)[1:], dtypes=kind.pool_dtypes,
                             device=q.device, lengths=lambda: sequence_lengths(shapes.N, shapes.T, cu_seqlens),
                             parents=verify_parents, starts=indices)
    elif verify_parents is not None:
        raise ValueError("retrieve_parent_token: needs intermediate_states_buffer (tree drafts)")
    if shapes.B * shapes.T == 0:
        return _no_tokens(shapes, v, state, indices, output_final_state, state_v_first, track_state,
                          track_chunk_idx)
    if backend == "torch":
        return kda_torch(
            q, k, v, g, beta, shapes, chunked=kind.chunked, initial_state=state, indices=indices,
            output_final_state=output_final_state, state_v_first=state_v_first, cu_seqlens=cu_seqlens,
            use_qk_l2norm=use_qk_l2norm, use_beta_sigmoid=use_beta_sigmoid, A_log=A_log, dt_bias=dt_bias,
            skip_padded=kind.skip_padded, allow_neg_eigval=allow_neg_eigval, num_accepted=num_accepted,
            track_state=track_state, track_chunk_idx=track_chunk_idx, verify_buffer=verify_buffer,
            verify_rows=verify_rows, verify_parents=verify_parents, pad_slot_id=pad_slot_id,
        )
    if steps:
        h0, ht, h0_idx, ht_idx = pool, verify_buffer, indices, verify_rows
    elif shapes.pool:
        h0, ht, h0_idx, ht_idx = pool, pool, indices, indices
    else:
        ht = (
            torch.empty(shapes.state_shape(shapes.N, state_v_first), dtype=torch.float32, device=q.device)
            if output_final_state else None
        )
        h0, h0_idx, ht_idx = initial_state, None, None
    launch = _launcher(kind)
    extra = {"allow_neg_eigval": allow_neg_eigval}
    scale, rest = shapes.scale, 1.0
    if not kind.chunked:
        extra.update(skip_padded=kind.skip_padded, bind=None if steps else bind, num_accepted=num_accepted,
                     token_steps=steps, parents=verify_parents, pad_slot_id=pad_slot_id)
    else:  # the chunk kernels index dense [B, T, heads, dim] rows
        scale, rest = split_prefill_scale(scale)
        extra.update(track_state=track_state, track_chunk_idx=track_chunk_idx, zero_padding_rows=allow_padded_tokens)
        dense = tuple(x.contiguous() for x in (q, k, v, g, beta))
        if bind is not None and rest == 1.0 and all(x is y for x, y in zip(dense, (q, k, v, g, beta))):
            extra["bind"] = bind  # a bound call repeats launches on the caller's own tensors
        q, k, v, g, beta = dense
    # The recurrent kernel takes every stride as given: no copies, and a bound launch (``bind``)
    # keeps the strides of exactly the tensors that later calls with this signature pass.
    with on_device(q.device):  # inputs may live on a GPU other than the current one
        o = launch(
            q, k, v, g, beta,
            scale=scale, cu_seqlens=cu_seqlens, h0=h0, h0_indices=h0_idx, ht=ht, ht_indices=ht_idx,
            state_v_first=state_v_first, use_qk_l2norm=use_qk_l2norm, use_beta_sigmoid=use_beta_sigmoid,
            gate=shapes.gate, A_log=A_log, dt_bias=dt_bias, lower_bound=shapes.lower_bound, **extra,
        )
    if rest != 1.0:
        o.mul_(rest)
    if shapes.pool:
        return o, (pool if output_final_state else None)
    return o, ht


#: Query scales the chunk kernels take as they are. Stage 1 stores ``scale * q * e^G`` and the
#: scaled scores ``A_qk`` in fp16 scratch (``chunk.NUMERICS_CONFIG``), whose range ends at 6.5e4
#: and whose precision fades below 6.1e-5 (subnormals): with l2-normalized q a scale of 1e-5 erred
#: 1.2e-2 and 2e5 gave Inf (the twenty-ninth session's fuzzing). Since o is linear in the scale and
#: the states do not depend on it, a scale outside runs the kernels at the nearest end of this range
#: and the output takes the rest (one extra multiply of o, only for such calls).
PREFILL_KERNEL_SCALES = (2.0**-6, 2.0**6)


def split_prefill_scale(scale: float) -> tuple[float, float]:
    """``(kernel scale, rest)`` with ``kernel * rest == scale`` (exact: powers of two) and
    ``|kernel|`` in :data:`PREFILL_KERNEL_SCALES`; ``rest`` is 1.0 for scales already inside."""
    lo, hi = PREFILL_KERNEL_SCALES
    mag = abs(scale)
    if lo <= mag <= hi:
        return scale, 1.0
    kernel = math.copysign(lo if mag < lo else hi, scale)
    return kernel, scale / kernel


def _no_tokens(shapes, v, state, indices, output_final_state, state_v_first, track_state, track_chunk_idx):
    """A call without a token row (B = 0 or T = 0; varlen sequences then all have length 0):
    no kernel runs. Every sequence's final state is its initial state: a pool is left as it is,
    a dense initial state is copied to fp32, none gives zeros. Snapshots at chunk 0 (the initial
    state) are written, on the device (no sync); later ones lie past the sequence's end: none."""
    o = v.new_empty((shapes.B, shapes.T, shapes.HV, shapes.V))
    if track_state is not None and shapes.N:
        if shapes.pool:
            start = indices.to(torch.int64)
            init = torch.where((start >= 0)[:, None, None, None], state[start.clamp(min=0)], 0.0)  # -1: zeros
        elif state is not None:
            init = state
        else:
            init = torch.zeros_like(track_state)
        at_start = (track_chunk_idx == 0)[:, None, None, None]
        track_state.copy_(torch.where(at_start, init.to(track_state.dtype), track_state))
    if not output_final_state:
        return o, None
    if shapes.pool:
        return o, state
    if state is not None:
        return o, state.to(torch.float32, copy=True)
    return o, v.new_zeros(shapes.state_shape(shapes.N, state_v_first), dtype=torch.float32)


def register_kda_op(kind: KDAKind):
    """Register ``kimiops::<kind.name>`` as a torch.library custom op (pool mutated in place) with
    a fake implementation, so ``torch.compile`` traces callers without graph breaks."""

    @torch.library.custom_op(f"kimiops::{kind.name}", mutates_args=("pool", "track_state", "verify_buffer"))
    def op(
        q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, beta: torch.Tensor,
        initial_state: torch.Tensor | None, pool: torch.Tensor | None, indices: torch.Tensor | None,
        cu_seqlens: torch.Tensor | None, A_log: torch.Tensor | None, dt_bias: torch.Tensor | None,
        scale: float | None, lower_bound: float | None, output_final_state: bool, use_qk_l2norm: bool,
        use_gate: bool, use_beta_sigmoid: bool, state_v_first: bool, backend: str, allow_padded_tokens: bool,
        allow_neg_eigval: bool, num_accepted: torch.Tensor | None, track_state: torch.Tensor | None,
        track_chunk_idx: torch.Tensor | None, verify_buffer: torch.Tensor | None, verify_rows: torch.Tensor | None,
        verify_parents: torch.Tensor | None, pad_slot_id: int,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        o, ht = run_kda(
            kind, q, k, v, g, beta, initial_state, pool, indices, cu_seqlens, A_log, dt_bias, scale, lower_bound,
            output_final_state and pool is None, use_qk_l2norm, use_gate, use_beta_sigmoid, state_v_first, backend,
            allow_padded_tokens, allow_neg_eigval=allow_neg_eigval, num_accepted=num_accepted,
            track_state=track_state, track_chunk_idx=track_chunk_idx, verify_buffer=verify_buffer,
            verify_rows=verify_rows, verify_parents=verify_parents, pad_slot_id=pad_slot_id,
        )
        return o, (ht if ht is not None else o.new_empty(0, dtype=torch.float32))

    @op.register_fake
    def _(q, k, v, g, beta, initial_state, pool, indices, cu_seqlens, A_log, dt_bias, scale, lower_bound,
          output_final_state, use_qk_l2norm, use_gate, use_beta_sigmoid, state_v_first, backend, allow_padded_tokens,
          allow_neg_eigval, num_accepted, track_state, track_chunk_idx, verify_buffer, verify_rows, verify_parents,
          pad_slot_id):
        o = v.new_empty(v.shape)  # contiguous, as every implementation returns it (not v's strides)
        if not output_final_state or pool is not None:
            return o, v.new_empty(0, dtype=torch.float32)
        N = v.shape[0] if cu_seqlens is None else cu_seqlens.shape[0] - 1
        HV, K, V = v.shape[2], q.shape[3], v.shape[3]
        shape = (N, HV, V, K) if state_v_first else (N, HV, K, V)
        return o, v.new_empty(shape, dtype=torch.float32)

    return op


# Eager calls on a GPU that repeat one signature (decode in the serving loop, transformers'
# generate; prefill of repeated shapes) skip the Python layers: a full-path call (validation,
# backend choice, launcher) leaves a bound launch (decode: ``recurrent.BoundLaunch``, prefill:
# ``chunk.BoundPrefill``, the call's recorded launches); later calls with the same metadata only
# allocate and launch (``fused_recurrent_kda`` and ``chunk_kda`` look the call up before anything
# else). What the full path's outcome depends on besides tensor values is matched in two parts:
# * ``eager_scalars``: a flat tuple of the scalars and flags, the requested / environment backend,
#   which optional tensors are absent, and the state's 16-byte alignment (a kernel
#   specialization), for prefill also the stream and every tensor's 16-byte alignment
#   (``prefill_launch_context``); the dict key of ``_eager``;
# * every tensor's shape, strides, dtype, device and dispatch keys, checked in C++ by torch's own
#   tensor guard (``torch._C._dynamo.guards.TensorGuards``, what ``torch.compile``'s guards use;
#   it also compares the thread's grad / dispatch mode with the one it was built under, so a call
#   under another mode misses and gets an entry of its own). On the CPU machine the scalar key,
#   its lookup and the check of the ten tensors take 1.5 us together
#   (``benchmarks/results/decode_host_cpu_20261130j.log``) where the previous flat Python key of
#   every tensor's metadata and its lookup took 4.5 (``decode_host_cpu_20261130i.log``).
# Where that guard class is missing or cannot be built (another torch), nothing is remembered and
# every call takes the full path. Off in debug mode (value checks must run) and under
# torch.compile (the custom op is traced instead).
# A signature is remembered on its second full-path call, not its first: serving engines run
# extend (prefill) eagerly with a new token count almost every call, and building the guard and
# recording the launches would only add host time to calls whose signature never comes back.
# ``_seen`` holds the shapes of recent misses (a cheap stand-in for the signature: a wrong "seen"
# only records one call early, the guard still decides every reuse). ``_eager`` is keyed by the
# scalars, q's shape and cu_seqlens' length, so a loop whose batch size or token count changes finds
# its entry without checking those of other shapes (each check of a guard that does not match costs
# as much as one that does: 1.7-2.6 us on the H200 host, see below).
# Varlen prefill (how engines run extend) and decode also keep ``_elastic``: entries whose guard
# leaves the sequence count N free, and with cu_seqlens the token count T (``_ELASTIC_VARLEN``,
# ``_ELASTIC_BATCH``: the sizes that follow them, and the strides that follow them without being
# read), so a call must also agree with itself on T and N (``_elastic_consistent``), which the
# exact guard implied.
# * Prefill: a ``chunk.ElasticPrefill`` recomputes what follows T and N and launches. H200 host,
#   extend of one request with a new token count every call (``logs_h200_20261201i/r7_extend_host_ab.log``,
#   one process): 52.6 us until return with it, 247.4 us without it, 63 us of GPU time. One long
#   prompt in pipelined parts (32 heads, 1024-4096 tokens): 180-205 us against 952-985 (GPU 293);
#   in segments (4 and 8 heads, 2048-8192 tokens): 74-87 us against 348-513 (GPU 143 and 235;
#   ``logs_h200_20261201k/r1_extend_host_parts_segments.log``, ``r2_extend_host_ab.log``). Calls
#   that write state snapshots (SGLang's prefix cache) are kept too: their presence and alignment
#   are in the key, the two tensors in the guard (13 for prefill), handed to the launch as the call's.
# * Decode (eager serving loops, where N changes as requests join and leave): a
#   ``recurrent.ElasticDecode`` makes the bound launch of the new N, kept as an exact entry, so
#   later calls at that N cost what repeated calls always did. H200 host, ``KDABackend.decode`` with
#   a new batch size on every call (``logs_h200_20261201j/r4_batch_sizes_*.log``, two rounds each):
#   62.5 / 82.9 us until return against 276.6 / 214.2 before (5a58502), 81-82 us of GPU time.
_EAGER_CACHE_SIZE = 256     # keys (exact: scalars, q.shape, len(cu_seqlens); elastic: scalars)
_EAGER_PER_KEY = 8          # tensor signatures per key (most recent first)
_EAGER_SEEN_SIZE = 256      # recent misses whose next sighting is recorded
_eager: OrderedDict = OrderedDict()
_elastic: OrderedDict = OrderedDict()
_seen: OrderedDict = OrderedDict()
# stand-ins for absent optional tensors in a guard (absence is in the scalar key); one per position,
# since the guard never matches a call that passes one tensor object twice
_ABSENT = tuple(torch.empty(0) for _ in range(8))

try:
    from torch._C._dynamo.guards import TensorGuards as _TensorGuards
except ImportError:  # pragma: no cover - torch without dynamo's C++ guards: no shortcut
    _TensorGuards = None


class _EagerCall:
    """A KDA call with fixed metadata: its tensor guard, the bound launch(es) (decode:
    ``recurrent.BoundLaunch``, prefill: ``chunk.BoundPrefill``) and what ``run_kda`` returns around
    them."""

    __slots__ = ("guard", "launch", "pool", "ht_shape", "output_final_state")

    def __init__(self, guard, launch, pool, ht_shape, output_final_state):
        self.guard, self.launch, self.pool = guard, launch, pool
        self.ht_shape, self.output_final_state = ht_shape, output_final_state  # ht_shape[0] is None: N of the call

    def __call__(self, q, k, v, g, beta, initial_state, indices, cu_seqlens, A_log, dt_bias, num_accepted=None,
                 track=()):
        """``num_accepted``: decode's speculative verification; ``track``: prefill's snapshots
        ``(track_state, track_chunk_idx)``, or ``()`` without."""
        if self.pool:
            more = track if num_accepted is None else (num_accepted,)
            o = self.launch(q, k, v, g, beta, initial_state, indices, initial_state, indices, cu_seqlens, A_log, dt_bias,
                            *more)
            return None if o is None else (o, initial_state if self.output_final_state else None)
        ht = None
        if self.ht_shape:  # (None, HV, *, *): dense final states of the call's N sequences
            N = q.shape[0] if cu_seqlens is None else cu_seqlens.shape[0] - 1
            ht = torch.empty((N, *self.ht_shape[1:]), dtype=torch.float32, device=q.device)
        o = self.launch(q, k, v, g, beta, initial_state, None, ht, None, cu_seqlens, A_log, dt_bias, *track)
        return None if o is None else (o, ht)


def eager_scalars(kind, scale, initial_state, output_final_state, use_qk_l2norm, use_gate, use_beta_sigmoid, A_log,
                  dt_bias, lower_bound, state_v_first, cu_seqlens, indices, backend, allow_padded_tokens,
                  allow_neg_eigval=False, num_accepted=None, pad_slot_id=-1) -> tuple:
    """The scalar part of a call's signature (see ``_eager``); raises ``AttributeError`` for
    a non-tensor ``initial_state`` (the full path then raises its clear error)."""
    return (
        kind.name, backend, env_var("KIMIOPS_BACKEND"), scale, type(scale), lower_bound, type(lower_bound),
        output_final_state, use_qk_l2norm,
        use_gate, use_beta_sigmoid, state_v_first, allow_padded_tokens, allow_neg_eigval, pad_slot_id,
        None if initial_state is None else initial_state.data_ptr() % 16 == 0,
        indices is None, cu_seqlens is None, A_log is None, dt_bias is None, num_accepted is None,
    )


def eager_tensors(q, k, v, g, beta, initial_state, indices, cu_seqlens, A_log, dt_bias, num_accepted=None,
                  track=None) -> tuple:
    """The tensors of a call in guard order, ``_ABSENT`` for absent optional ones; with ``track``
    (a prefill call's ``(track_state, track_chunk_idx)``, either may be ``None``) also those two."""
    absent = _ABSENT
    tensors = (q, k, v, g, beta,
               absent[0] if initial_state is None else initial_state, absent[1] if indices is None else indices,
               absent[2] if cu_seqlens is None else cu_seqlens, absent[3] if A_log is None else A_log,
               absent[4] if dt_bias is None else dt_bias, absent[5] if num_accepted is None else num_accepted)
    if track is None:
        return tensors
    return (*tensors, absent[6] if track[0] is None else track[0], absent[7] if track[1] is None else track[1])


def tensor_guard(tensors, free=None):
    """torch's C++ guard on the metadata of ``tensors`` (static shapes and strides), or ``None``
    where this torch lacks it or the guard would never match them (it rejects a call that passes
    one tensor object twice, e.g. ``k is q``: such calls always take the full path).
    ``free``: ``(sizes, strides)``, each per tensor the dimensions whose size, or stride, the
    guard leaves unchecked (``_ELASTIC_VARLEN``, ``_ELASTIC_BATCH``)."""
    if _TensorGuards is None:
        return None
    sizes, strides = free or (((),) * len(tensors),) * 2
    try:
        guard = _TensorGuards(*tensors,
                              dynamic_dims_sizes=[[None if d in f else n for d, n in enumerate(t.shape)]
                                                  for t, f in zip(tensors, sizes)],
                              dynamic_dims_strides=[[None if d in f else n for d, n in enumerate(t.stride())]
                                                    for t, f in zip(tensors, strides)])
    except (TypeError, RuntimeError):  # pragma: no cover - another signature of the private class
        return None
    return guard if guard.check(*tensors) else None


def prefill_launch_context(q, k, v, g, beta, initial_state, indices, cu_seqlens, A_log, dt_bias, track_state=None,
                           track_chunk_idx=None) -> tuple:
    """What a prefill call's recorded launches depend on besides its scalars and the tensor guard:
    the current stream (a bound prefill call holds that stream's scratch buffers), the 16-byte
    alignment of every tensor (the chunk kernels are compiled per alignment of each pointer, as
    Triton specializes them; the guard does not see storage offsets) and which snapshot tensors
    the call passes (``kimiops.kda.track``: the state stage is compiled with or without them)."""
    return (torch._C._cuda_getCurrentRawStream(q.get_device()), track_state is None, track_chunk_idx is None,
            tuple(t is None or t.data_ptr() % 16 == 0
                  for t in (q, k, v, g, beta, initial_state, indices, cu_seqlens, A_log, dt_bias, track_state,
                            track_chunk_idx)))


def on_gpu(q) -> bool:
    """Whether the eager shortcut may take a call whose q is ``q`` (a tensor on a GPU; host-side
    tests of the shortcut on CPU tensors with stubbed launches replace this)."""
    return isinstance(q, torch.Tensor) and q.is_cuda


def eager_call(kind, q, k, v, g, beta, scale, initial_state, output_final_state, use_qk_l2norm, use_gate,
               use_beta_sigmoid, A_log, dt_bias, lower_bound, state_v_first, cu_seqlens, indices, backend,
               allow_padded_tokens=False, allow_neg_eigval=False, num_accepted=None, pad_slot_id=-1,
               track_state=None, track_chunk_idx=None):
    """The eager shortcut: ``(result, None)`` when the call repeats a signature in ``_eager`` or
    ``_elastic`` (launched here), else ``(None, key)`` with the key for ``call_kda``'s
    ``eager_key`` (``None`` where the shortcut does not apply: CPU tensors, debug mode,
    ``torch.compile`` tracing, arguments of the wrong type). Prefill keys also hold
    :func:`prefill_launch_context`; ``track_state``, ``track_chunk_idx``: prefill's snapshots."""
    if not on_gpu(q) or torch.compiler.is_compiling() or debug_enabled():
        return None, None
    try:
        scalars = eager_scalars(kind, scale, initial_state, output_final_state, use_qk_l2norm, use_gate,
                                use_beta_sigmoid, A_log, dt_bias, lower_bound, state_v_first, cu_seqlens, indices,
                                backend, allow_padded_tokens, allow_neg_eigval, num_accepted, pad_slot_id)
        if kind.chunked:
            scalars += prefill_launch_context(q, k, v, g, beta, initial_state, indices, cu_seqlens, A_log, dt_bias,
                                              track_state, track_chunk_idx)
        exact_key = (scalars, q.shape, None if cu_seqlens is None else cu_seqlens.shape[0])
        entries = _eager.get(exact_key)
    except (AttributeError, TypeError):  # a non-tensor state or cu_seqlens, an unhashable scalar: the full path raises
        return None, None
    tensors = eager_tensors(q, k, v, g, beta, initial_state, indices, cu_seqlens, A_log, dt_bias, num_accepted,
                            (track_state, track_chunk_idx) if kind.chunked else None)
    # the snapshot tensors a prefill launch takes after dt_bias (none without snapshots)
    track = () if track_state is None and track_chunk_idx is None else (track_state, track_chunk_idx)
    if entries:
        for entry in entries:
            if entry.guard.check(*tensors):
                res = entry(q, k, v, g, beta, initial_state, indices, cu_seqlens, A_log, dt_bias, num_accepted, track)
                # None: the bound launch declined (device switched, launch hook): the full path runs
                # and leaves the entry as it is
                return (res, None) if res is not None else (None, None)
    # varlen prefill: token counts change call to call (one prompt of fixed length too); decode: the
    # batch size changes
    elastic = cu_seqlens is not None or not kind.chunked or q.shape[0] == 1
    declined = []  # elastic entries of this signature that could not repeat the call
    entries = _elastic.get(scalars) if elastic else None
    for entry in entries or ():
        if entry.guard.check(*tensors) and _elastic_consistent(q, k, v, g, beta, initial_state, indices, cu_seqlens,
                                                               num_accepted, track_state, track_chunk_idx, kind.chunked):
            if kind.chunked:
                res = entry(q, k, v, g, beta, initial_state, indices, cu_seqlens, A_log, dt_bias, None, track)
            else:
                res = _elastic_decode(entry, exact_key, tensors, q, k, v, g, beta, initial_state, indices,
                                      cu_seqlens, A_log, dt_bias, num_accepted)
            if res is not None:
                return res, None
            declined.append(entry)  # another layout, a kernel variant not seen, too little scratch
    exact = seen_before((scalars, q.shape, v.shape, tensors[6].shape, tensors[7].shape))  # 6, 7: indices, cu
    if elastic and not declined:
        elastic = seen_before(("elastic", scalars, q.shape[2:], v.shape[2:], tensors[5].shape[1:]))
    if not (exact or elastic):
        return None, None  # first sighting: the full path, nothing recorded
    free = _ELASTIC_VARLEN if cu_seqlens is not None else _ELASTIC_FIXED if kind.chunked else _ELASTIC_BATCH
    return None, (exact_key, tensors, exact, tuple(declined) if declined else elastic, free)


def _elastic_decode(entry, exact_key, tensors, q, k, v, g, beta, initial_state, indices, cu_seqlens, A_log, dt_bias,
                    num_accepted):
    """A decode call that an ``_elastic`` entry's guard let through: the bound launch of its N
    (``recurrent.ElasticDecode.bound_for``), kept in ``_eager`` for the calls at that N that
    follow, then launched; ``None`` where the entry has not recorded the config of this N, or the
    launch declined."""
    N = q.shape[0] if cu_seqlens is None else cu_seqlens.shape[0] - 1
    if N < 1 or q.shape[1] < 1:  # no sequence or no token: the full path launches nothing
        return None
    bound = entry.launch.bound_for(N, q.shape[1])
    if bound is None:
        return None
    call = _EagerCall(tensor_guard(tensors), bound, entry.pool, entry.ht_shape, entry.output_final_state)
    if call.guard is not None:
        _remember(_eager, exact_key, call)
    return call(q, k, v, g, beta, initial_state, indices, cu_seqlens, A_log, dt_bias, num_accepted)


def _elastic_consistent(q, k, v, g, beta, initial_state, indices, cu_seqlens, num_accepted=None, track_state=None,
                        track_chunk_idx=None, chunked=False) -> bool:
    """Whether a call agrees with itself on what an ``_elastic`` guard leaves free (and the exact
    guard implied): the size of the free dimension of q, k, v, g, beta (tokens with cu_seqlens or
    for prefill (``chunked``), sequences for decode without), and the sequence count N of
    cu_seqlens or q, the indices, a dense state, ``num_accepted`` and the snapshot tensors."""
    d = 1 if cu_seqlens is not None or chunked else 0
    size = q.shape[d]
    if not (k.shape[d] == v.shape[d] == g.shape[d] == beta.shape[d] == size):
        return False
    N = q.shape[0] if cu_seqlens is None else cu_seqlens.shape[0] - 1
    if num_accepted is not None and num_accepted.shape[0] != N:
        return False
    for t in (track_state, track_chunk_idx):
        if t is not None and t.shape[0] != N:
            return False
    if indices is not None:
        return indices.shape[0] == N
    return initial_state is None or initial_state.shape[0] == N


# What an ``_elastic`` guard leaves free per tensor of ``eager_tensors`` (q, k, v, g, beta, state,
# indices, cu_seqlens, A_log, dt_bias, num_accepted; prefill also track_state, track_chunk_idx), as
# ``(sizes, strides)``. With cu_seqlens: the token count (dimension 1 of the token-major inputs;
# their batch dimension is 1, so its stride, which follows T in a contiguous tensor, is never read)
# and N (dimension 0 of cu_seqlens, the indices, num_accepted, the snapshot tensors and a dense
# state, or a pool's slot count). Without (decode's batch mode): N, dimension 0 of every
# per-sequence tensor; every stride stays fixed, the kernel reads them. (``tensor_guard`` reads as
# many entries as a call has tensors: decode's 11, prefill's 13.) Prefill of one sequence of fixed
# length (no cu_seqlens, batch dimension 1): only its token count, as with cu_seqlens.
_ELASTIC_VARLEN = (((1,),) * 5 + ((0,), (0,), (0,), (), (), (0,), (0,), (0,)), ((0,),) * 5 + ((),) * 8)
_ELASTIC_BATCH = (((0,),) * 5 + ((0,), (0,), (), (), (), (0,)), ((),) * 11)
_ELASTIC_FIXED = (((1,),) * 5 + ((),) * 8, ((0,),) * 5 + ((),) * 8)


def seen_before(shapes: tuple) -> bool:
    """Whether a call with these shapes missed the shortcut recently (it is then forgotten: the
    caller records this call); otherwise they are noted for next time (at most
    ``_EAGER_SEEN_SIZE``, oldest dropped first)."""
    if _seen.pop(shapes, None) is not None:
        return True
    _seen[shapes] = True
    if len(_seen) > _EAGER_SEEN_SIZE:
        _seen.popitem(last=False)
    return False


def remember_eager(key, bound, pool: bool, ht, output_final_state: bool, elastic_launch=None) -> None:
    """Keep the bound launch of a full-path call under its key from :func:`eager_call` in
    ``_eager``, and its elastic launch (``chunk.ElasticPrefill`` or ``recurrent.ElasticDecode``)
    in ``_elastic``. A varlen prefill call keeps only the elastic one: it repeats the call's own
    shapes as well, and exact entries that no later call of a changing token count matches would
    only add guard checks to every lookup."""
    # wanted: record an elastic entry (a tuple: those that declined); free: what its guard leaves free
    exact_key, tensors, exact, wanted, free = key
    scalars = exact_key[0]
    elastic = bool(wanted) and elastic_launch is not None
    ht_shape = None if pool or ht is None else (None, *ht.shape[1:])  # None: N of the call
    if exact and not (elastic and elastic_launch.repeats_recorded_shapes):
        guard = tensor_guard(tensors)
        if guard is not None:
            _remember(_eager, exact_key, _EagerCall(guard, bound, pool, ht_shape, bool(output_final_state)))
    if elastic:
        entries = _elastic.get(scalars, [])
        for old in wanted if isinstance(wanted, tuple) else ():  # entries that declined this call
            if old.launch.layout == elastic_launch.layout and old in entries:
                elastic_launch.learn(old.launch)  # the same layout: keep its kernel variants, drop its scratch
                entries.remove(old)
        guard = tensor_guard(tensors, free)
        if guard is not None:
            _remember(_elastic, scalars, _EagerCall(guard, elastic_launch, pool, ht_shape, bool(output_final_state)))


def _remember(cache: OrderedDict, scalars: tuple, entry: _EagerCall) -> None:
    entries = cache.get(scalars)
    if entries is None:
        entries = cache[scalars] = []
        if len(cache) > _EAGER_CACHE_SIZE:
            cache.popitem(last=False)
    entries.insert(0, entry)
    del entries[_EAGER_PER_KEY:]


def empty_cache() -> None:
    """Release what the KDA ops keep between calls: the kernels' scratch buffers
    (:func:`kimiops.kda.workspace.empty_cache`; only when no captured graph that used them will
    replay again) and the eager shortcut's bound launches (:func:`forget_eager`)."""
    _empty_workspace()
    forget_eager()


def forget_eager() -> None:
    """Drop the eager shortcut's bound launches and its record of recent misses."""
    _eager.clear()
    _elastic.clear()
    _seen.clear()


def call_kda(kind: KDAKind, op, q, k, v, g, beta, scale, initial_state, output_final_state, use_qk_l2norm,
             use_gate, use_beta_sigmoid, A_log, dt_bias, lower_bound, state_v_first, cu_seqlens, indices, backend,
             allow_padded_tokens=False, eager_key=None, allow_neg_eigval=False, num_accepted=None,
             track_state=None, track_chunk_idx=None, verify_buffer=None, verify_rows=None, verify_parents=None,
             pad_slot_id=-1):
    """Public-call glue: eager calls run directly (no custom-op dispatch cost); under
    ``torch.compile`` the registered op is called so the graph holds one opaque node.

    ``eager_key``: the key :func:`eager_call` returned when the caller looked the call up in
    ``_eager`` and missed a signature seen before (eager call on a GPU, not in debug mode); the full
    path then leaves a bound launch under it."""
    compiling = torch.compiler.is_compiling()
    pool = initial_state if indices is not None else None
    for name, t in (("q", q), ("v", v)):  # read below before the full checks: type first
        check_tensor(name, t, ndim=4)
    head_dims = (q.shape[-1], v.shape[-1]) if kind.chunked else None
    chosen = kda_backend(kind.name, backend, q.device, head_dims)
    args = (
        q, k, v, g, beta, None if pool is not None else initial_state, pool, indices, cu_seqlens, A_log, dt_bias,
        scale, lower_bound, bool(output_final_state), bool(use_qk_l2norm), bool(use_gate), bool(use_beta_sigmoid),
        bool(state_v_first), chosen, bool(allow_padded_tokens), bool(allow_neg_eigval), num_accepted, track_state,
        track_chunk_idx, verify_buffer, verify_rows, verify_parents, int(pad_slot_id),
    )
    if not compiling:
        bind = [] if eager_key is not None and chosen == "triton" else None
        o, ht = run_kda(kind, *args, bind=bind)
        if bind:  # [BoundPrefill, ElasticPrefill or None] or [BoundLaunch, ElasticDecode]
            remember_eager(eager_key, bind[0], pool is not None, ht, output_final_state,
                           bind[1] if len(bind) > 1 else None)
        return o, ht
    o, ht = op(*args)
    if pool is not None:
        return o, (pool if output_final_state else None)
    return o, (ht if output_final_state else None)
