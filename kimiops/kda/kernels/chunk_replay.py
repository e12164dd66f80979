"""Eager prefill calls repeated without the Python path: the recorded launches of a call, replayed
with new tensors' addresses (``BoundPrefill``: exact shapes) or also with a new token and sequence
count (``ElasticPrefill``: varlen calls in one part). ``kimiops.kda.runner`` decides which call
may take which (its tensor guards); ``chunk.chunk_kda_fwd`` records them.
"""

from __future__ import annotations

import torch

import kimiops.launch as fast_launch
from kimiops.kda.kernels.chunk_intra import chunk_intra_kernel
from kimiops.kda.kernels.chunk_layout import (GRID_3D_MAX_SEQS, elastic_layout, locate_bits, order_block,
                                              varlen_slots)
from kimiops.kda.kernels.chunk_state import chunk_state_kernel, longest_first_kernel
from kimiops.launch import no_launch_hooks, specialization

__all__ = ["BoundPrefill", "ElasticPrefill"]

# the plan's keys of every scratch buffer ``chunk._plan`` may allocate (a replay keeps them alive)
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


# Parameters of the chunk kernels whose values follow a varlen call's token count ``T``, sequence
# count ``N`` and chunk slots ``NC = T // C + N`` in a one-part call (``ElasticPrefill``); every
# other argument depends only on the call's signature (flags, dtypes, head sizes, scratch buffers).
_ELASTIC_VALUES = {
    "T": lambda T, N, NC, HV: T,
    "N": lambda T, N, NC, HV: N,
    "n_programs": lambda T, N, NC, HV: NC * HV,   # stage 1's program count
    "slot_hi": lambda T, N, NC, HV: NC,           # the state stage's slot range [0, NC)
    "LOG_N": lambda T, N, NC, HV: locate_bits(N),   # constexprs
    "BLOCK": lambda T, N, NC, HV: order_block(N),
}
_ELASTIC_CONSTEXPRS = frozenset(("LOG_N", "BLOCK"))


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
    repeats_recorded_shapes = True  # the runner keeps no exact entry beside it

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
        # without an order buffer (one sequence, or more than the sort takes) only the layout bounds N
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
        NC = varlen_slots(T, N)
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
