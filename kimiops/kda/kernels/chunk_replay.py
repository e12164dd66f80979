"""Eager prefill calls repeated without the Python path: the recorded launches of a call, replayed
with new tensors' addresses (``BoundPrefill``: exact shapes) or also with a new token and sequence
count (``ElasticPrefill``: varlen calls, in one part, in pipelined parts or in segments).
``kimiops.kda.runner`` decides which call may take which (its tensor guards);
``chunk.chunk_kda_fwd`` records them.
"""

from __future__ import annotations

import sys

import torch

import kimiops.launch as fast_launch
from kimiops.kda.kernels.chunk_intra import chunk_intra_kernel
from kimiops.kda.kernels.chunk_layout import chunk_slots, elastic_layout, kernel_rows, order_block
from kimiops.kda.kernels.chunk_state import chunk_state_kernel, longest_first_kernel, segment_starts_kernel
from kimiops.launch import fast_launch_allowed, specialization, specialization_flags

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
        ``(q, k, v, g, beta, h0, h0_indices, ht, ht_indices, cu_seqlens, A_log, dt_bias, track_state,
        track_chunk_idx)``, the arguments a replay is called with; ``None``
        when a launch took Triton's own path or passed a tensor that is neither the call's nor
        scratch (e.g. a contiguous copy of a strided input)."""
        if not recorded or any(r is None for r in recorded):
            return None
        if len(plan["parts"]) > 1 and not plan["pdl_chain"]:  # parts on a forked stream: not one stream's launches
            return None
        roles = {}
        for i, t in enumerate((*call_tensors, plan["o"])):  # last: o
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

    def __call__(self, q, k, v, g, beta, h0, h0_indices, ht, ht_indices, cu_seqlens, A_log, dt_bias, track_state=None,
                 track_chunk_idx=None):
        stream = _replay_stream(self.device, self.stream)
        if stream is None:
            return None
        o = torch.empty_like(v)  # v is contiguous here (a strided v was copied: such calls are not bound)
        _replay((q, k, v, g, beta, h0, h0_indices, ht, ht_indices, cu_seqlens, A_log, dt_bias, track_state,
                 track_chunk_idx, o), stream,
                [(entry, head, grid, list(template), from_call)
                 for entry, head, grid, template, from_call in self.launches])
        return o


def _replay_stream(device: int, stream: int) -> int | None:
    """The current stream (raw) where launches recorded on ``device`` and ``stream`` may be
    repeated: the same device and stream, the fast launch path on and no launch hook; else ``None``."""
    if not fast_launch.FAST_LAUNCH or torch._C._cuda_getDevice() != device or not fast_launch_allowed():
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


# What a recorded launch is in a varlen call (``chunk._launch``): stage 1 over all slots or a chain's
# first part (``PDL`` 1 where programmatic dependent launch exists, else 0), stage 1 of a later part
# (``PDL`` 2), the longest-first order, the state stage (``SEG``: 0 one piece or a part, 1 the
# segments' maps, 2 the segments with the output) and the chained segment starts.
def _role(kernel, values) -> str | None:
    names = kernel.arg_names
    if kernel is chunk_intra_kernel:
        return ("intra", "intra", "intra_chained")[values[names.index("PDL")]]
    if kernel is chunk_state_kernel:
        return ("state", "seg_maps", "seg_out")[values[names.index("SEG")]]
    if kernel is longest_first_kernel:
        return "order"
    if kernel is segment_starts_kernel:
        return "seg_starts"
    return None


# Parameters of each role whose values follow the call's token count T, its sequence count N and
# its layout (chunk slots, parts, segments); every other argument depends only on the call's
# signature (flags, dtypes, head sizes, scratch buffers). ``chain_done``: a later part's
# completion counter, an address in the chain buffer that follows the part's index.
_INTRA = ("T", "N", "NT", "slot_off", "n_programs")
_SEGMENT_WALK = ("T", "NT", "slot_lo", "slot_hi", "seg_len", "seg_max", "rows")
_ELASTIC_NAMES = {"intra": _INTRA, "intra_chained": _INTRA + ("chain_done",), "order": ("N", "BLOCK"),
                  "state": ("T", "NT", "slot_lo", "slot_hi", "rows"), "seg_maps": _SEGMENT_WALK,
                  "seg_out": _SEGMENT_WALK, "seg_starts": ("T", "seg_len", "seg_max")}
_ELASTIC_CONSTEXPRS = frozenset(("BLOCK",))


class _Role:
    """The recorded launches of one role: the first one's grid and arguments as a template, which
    positions follow the call (``elastic``: ``(position, name)``), how its grid follows the
    call (``grid_of``) and the compiled kernels seen per variant (``variants``, see
    :meth:`ElasticPrefill.learn`)."""

    __slots__ = ("grid", "grid_of", "template", "from_call", "elastic", "ints", "const", "variants", "fixed_spec")

    def __init__(self, grid, grid_of, template, from_call, elastic, ints, const, fixed_spec):
        self.grid, self.grid_of, self.template, self.from_call = grid, grid_of, template, from_call
        self.elastic, self.ints, self.const, self.fixed_spec = elastic, ints, const, fixed_spec
        self.variants = {}

    def add(self, template, entry, head):
        self.variants.setdefault(_elastic_variant(template, self.ints, self.const), (entry, head))


class ElasticPrefill:
    """The launches of a varlen prefill call, or of a fixed-length call of one sequence
    (``varlen`` False), repeatable for new tensors with the same signature except for the token
    count ``T`` and (varlen) the sequence count ``N`` (the caller guarantees the rest:
    ``kimiops.kda.runner`` matches flags, dtypes, head sizes, strides of every other dimension,
    alignments and the stream). Serving engines run extend eagerly with a new ``T`` on almost every
    call, which a :class:`BoundPrefill` (exact shapes) never repeats.

    A replay lays the call out as the full path would (``chunk_layout.elastic_layout``: one part,
    pipelined parts of one long prompt, or segments for few heads) and launches each role's
    recorded kernel (:class:`_Role`) as often as the layout asks, with the arguments that follow
    ``T``, ``N`` and the layout recomputed (``_ELASTIC_NAMES``) and the grids. The compiled kernel of
    each launch comes from the variants seen so far: Triton specializes integer arguments on the
    value 1 and on divisibility by 16 (and pointers on 16-byte alignment) unless the kernel says
    otherwise (the counts of ``chunk_layout.CALL_COUNTS``), so a fixed length's ``T`` and the sort's
    block (``BLOCK``, above 32 sequences) select among a few kernels of one signature (:meth:`learn`
    adds those of another call). It returns ``None`` (the full path runs) when the call needs another
    form of layout than the recording (``layout``), more scratch than the recording's buffers hold, a
    kernel variant not seen yet, or when the device or stream changed, a launch hook is registered or
    the fast launch path was switched off; nothing is launched then.
    """

    __slots__ = ("roles", "device", "stream", "scratch", "caps", "chain", "layout", "HV", "K", "varlen", "last")
    repeats_recorded_shapes = True  # the runner keeps no exact entry beside it

    def __init__(self, roles, device, stream, scratch, caps, chain, layout, HV, K, varlen=True):
        self.roles, self.device, self.stream, self.scratch = roles, device, stream, scratch
        self.caps = caps      # {what: capacity} of the recording's buffers (slots, sequences, parts, ...)
        self.chain = chain    # (address, bytes) of the parts' completion counters: the first, one apart
        self.layout, self.HV, self.K, self.varlen = layout, HV, K, varlen
        self.last = None      # (T, N, launches) of the last call repeated

    @classmethod
    def build(cls, plan, recorded, bound):
        """From a call's plan, its recorded launches (``kimiops.launch.recording``, with their
        kernels) and the :class:`BoundPrefill` built from them; ``None`` when the call is neither
        varlen nor of one sequence, runs parts on a forked stream, or a launch is not one of the
        pipeline's kernels."""
        varlen = plan["is_varlen"]
        if not varlen and plan["B"] != 1:  # a batch's row stride follows T: its rows are not dense at a new T
            return None
        layout, seg_len, seg_max, parts = elastic_layout(plan["T"], plan["N"], plan["HV"], plan["K"], varlen)
        if (layout[0] == "segments") != (plan.get("seg_max", 1) > 1) or len(parts) != len(plan["parts"]) \
                or (layout[0] != "segments" and layout[1] != (plan.get("order") is not None)):
            return None  # the call was cut by other rules (a config override)
        N0, roles = plan["N"], {}
        for (_, grid, values, _, kernel), (entry, head, _, template, from_call) in zip(recorded, bound.launches):
            role = _role(kernel, values)
            if role is None or (role == "state" and (layout[0] == "segments"
                                                     or values[kernel.arg_names.index("GRID_3D")] != layout[2])):
                return None
            mine = roles.get(role)
            if mine is None:
                names = kernel.arg_names
                elastic = tuple((i, n) for i, n in enumerate(names) if n in _ELASTIC_NAMES[role])
                flags = specialization_flags(kernel)
                const = tuple(i for i, n in elastic if n in _ELASTIC_CONSTEXPRS)
                ints = tuple((i, *flags[i]) for i, n in elastic if n not in _ELASTIC_CONSTEXPRS)
                follows = {i for i, _ in elastic}
                # constexprs by value, other ints (scratch addresses and strides) by their specialization
                fixed_spec = tuple(specialization(x, *flags[i]) if i in flags else x for i, x in enumerate(template)
                                   if type(x) is int and i not in follows)
                if role.startswith("intra"):
                    grid_of = "slots"        # (slots of the launch, HV)
                elif role == "order":
                    grid_of = "fixed"        # one program
                elif role == "state" and not layout[2]:
                    grid_of = "seqs_x"       # (N * HV * NV,): grid[0] kept per sequence
                    grid = (grid[0] // N0, grid[1], grid[2])
                else:
                    grid_of = "z"            # (HV, NV, sequences or segments)
                mine = roles[role] = _Role(grid, grid_of, template, from_call, elastic, ints, const, fixed_spec)
            mine.add(template, entry, head)
        caps = {"slots": min(_capacity(plan[n]) for n in ("w", "tb", "qg", "kg", "aqk", "gc")),
                # without an order buffer (one sequence, or more than the sort takes) only the layout
                # bounds N (``grid_3d`` in it: the state stage's grid)
                "seqs": _capacity(plan["order"]) if plan.get("order") is not None else sys.maxsize}
        chain = (0, 0)
        if layout[0] == "parts":
            caps["parts"], caps["carry"] = _capacity(plan["chain"]), _capacity(plan["carry"])
            chain = (plan["chain"].data_ptr(), plan["chain"].element_size())
        elif layout[0] == "segments":
            caps["seg_maps"], caps["seg_starts"] = _capacity(plan["seg_maps"]), _capacity(plan["seg_starts"])
        return cls(roles, bound.device, bound.stream, bound.scratch, caps, chain, layout, plan["HV"], plan["K"],
                   varlen)

    def learn(self, other: "ElasticPrefill") -> None:
        """Add the kernel variants of ``other`` (a recording of the same signature and layout) to
        this one's, where the two specialize their other integer arguments alike (their scratch
        strides follow each one's buffers)."""
        if other.roles.keys() != self.roles.keys() or any(
                other.roles[r].fixed_spec != mine.fixed_spec for r, mine in self.roles.items()):
            return
        for role, mine in self.roles.items():
            for key, value in other.roles[role].variants.items():
                mine.variants.setdefault(key, value)

    def _schedule(self, T: int, N: int, seg_len: int, seg_max: int, parts) -> list | None:
        """``(role, values, count)`` per launch of a call laid out as ``seg_len, seg_max, parts``
        (``count``: what the role's grid follows), in the full path's order; ``None`` where the
        recording's buffers are too small."""
        caps, HV = self.caps, self.HV
        NT, NC = chunk_slots(T, N, self.varlen)
        if NC > caps["slots"] or N > caps["seqs"]:
            return None
        common = dict(T=kernel_rows(T, self.varlen), N=N, NT=NT, BLOCK=order_block(N), rows=T,
                      seg_len=seg_len, seg_max=seg_max, slot_off=0, n_programs=NC * HV, slot_lo=0, slot_hi=NC)
        form, order = self.layout[0], self.layout[0] != "segments" and self.layout[1]
        if form == "one":
            return [("intra", common, NC), *([("order", common, 1)] if order else []), ("state", common, N)]
        if form == "segments":
            if N * (seg_max - 1) > caps["seg_maps"] or N * seg_max > caps["seg_starts"]:
                return None
            return [("intra", common, NC), ("seg_maps", common, N * (seg_max - 1)), ("seg_starts", common, N),
                    ("seg_out", common, N * seg_max)]
        if len(parts) > caps["parts"] or N > caps["carry"]:
            return None
        launches = [("order", common, 1)] if order else []
        for i, (lo, hi) in enumerate(parts):  # stage 1 and the state stage of each part, chained
            part = dict(common, slot_off=lo, n_programs=(hi - lo) * HV, slot_lo=lo, slot_hi=hi,
                        chain_done=self.chain[0] + self.chain[1] * i)
            launches += [("intra" if i == 0 else "intra_chained", part, hi - lo), ("state", part, N)]
        return launches

    def _launches_for(self, T: int, N: int) -> list | None:
        """``(entry, head, grid, values, from_call)`` per launch of a call of ``T`` tokens and ``N``
        sequences (``values``: the call's tensors still to fill in), or ``None`` where this
        recording cannot repeat it."""
        layout, seg_len, seg_max, parts = elastic_layout(T, N, self.HV, self.K, self.varlen)
        schedule = self._schedule(T, N, seg_len, seg_max, parts) if layout == self.layout else None
        if schedule is None:
            return None
        ready, roles = [], self.roles
        for name, elastic_values, count in schedule:
            role = roles.get(name)
            if role is None:  # a role the recording lacks (the layout check rules it out): decline, never raise
                return None
            values = list(role.template)
            for pos, arg in role.elastic:
                values[pos] = elastic_values[arg]
            hit = role.variants.get(_elastic_variant(values, role.ints, role.const))
            if hit is None:
                return None
            grid, grid_of = role.grid, role.grid_of
            if grid_of == "slots":
                grid = (count, grid[1], grid[2])
            elif grid_of == "z":
                grid = (grid[0], grid[1], count)
            elif grid_of == "seqs_x":
                grid = (grid[0] * count, grid[1], grid[2])
            ready.append((*hit, grid, values, role.from_call))
        return ready

    def __call__(self, q, k, v, g, beta, h0, h0_indices, ht, ht_indices, cu_seqlens, A_log, dt_bias, track_state=None,
                 track_chunk_idx=None):
        stream = _replay_stream(self.device, self.stream)
        if stream is None:
            return None
        T, N = q.shape[1], (cu_seqlens.shape[0] - 1 if self.varlen else q.shape[0])
        if T < 1 or N < 1:
            return None
        # The layers of a model run one batch after the other, so a call's counts are usually the
        # previous call's: those launches are kept (their lists copied, the replay fills them in)
        last = self.last
        if last is not None and last[0] == T and last[1] == N:
            ready = [(entry, head, grid, list(values), from_call) for entry, head, grid, values, from_call in last[2]]
        else:
            ready = self._launches_for(T, N)
            if ready is None:
                return None
            self.last = (T, N, ready)
        o = torch.empty_like(v)  # v is contiguous here (a strided v was copied: such calls are not bound)
        _replay((q, k, v, g, beta, h0, h0_indices, ht, ht_indices, cu_seqlens, A_log, dt_bias, track_state,
                 track_chunk_idx, o), stream, ready)
        return o


def _elastic_variant(values, ints, const) -> tuple:
    """What selects the compiled kernel among calls of one signature: Triton's specialization of
    the elastic integer arguments (``ints``: ``(position, specialize_value, align)``; addresses
    included: 16-byte alignment) and the elastic constexprs' values."""
    return tuple([specialization(values[i], s, a) for i, s, a in ints]), tuple([values[i] for i in const])
