"""Stubbed prefill launches for host-side tools and tests on a CPU machine (no GPU needed).

:func:`install` replaces ``chunk.launch`` by a stand-in that records as ``kimiops.launch.launch``
does (so the eager shortcut builds its replays) and, instead of launching, appends ``(gx, gy, gz,
stream, kernel name, specialization key, *values)`` (tensors as addresses) to a list, and in
``kimiops.launch.compiling_in_background`` ``("compile", kernel name, specialization key)`` once per
variant instead (submitted to the mode as Triton's ``warmup`` would be); it also turns
the fast launch path on, stubs the CUDA queries (device 0, stream 77) and programmatic dependent
launch (parts are chained). :func:`canonical` makes two such launches comparable across calls that
may be served from different scratch buffers.
"""
import types

import torch

import kimiops.launch as kl
from kimiops.kda import workspace
from kimiops.kda.kernels import chunk

KERNELS = {k.fn.__name__: k for k in (chunk.chunk_intra_kernel, chunk.chunk_state_kernel, chunk.longest_first_kernel,
                                        chunk.segment_starts_kernel)}


def _key(kernel, values, kwargs):
    """What ``kl.specialization_key`` holds, runtime arguments by name."""
    flags = kl.specialization_flags(kernel)
    return (tuple(kwargs.get(o) for o in kl.LAUNCH_OPTIONS), tuple(x for i, x in enumerate(values) if i not in flags),
            tuple((kernel.arg_names[i], kl.specialization(values[i], *f)) for i, f in flags.items()))


def install(calls: list, setattr_=setattr) -> None:
    """Stub the launches (appending to ``calls``), the CUDA queries and PDL. ``setattr_``: how to
    set an attribute (``monkeypatch.setattr`` in tests, so it is undone)."""

    def launch(kernel, grid, *args, **kwargs):
        values = list(args) + [kwargs[n] for n in kernel.arg_names[len(args):]]
        variant = (kernel.fn.__name__, _key(kernel, values, kwargs))
        background = kl._THREAD.background
        if background is not None:  # kl.compiling_in_background: a compile starts, nothing launches
            if variant not in background.future_kernels:
                calls.append(("compile", *variant))
            background.submit(variant, lambda: variant, lambda compiled: None)
            return None
        tensors = tuple(i for i, x in enumerate(values) if isinstance(x, torch.Tensor))
        raw = types.SimpleNamespace(entry=lambda *c: calls.append(c), head=variant)
        gx, gy, gz = (tuple(grid) + (1, 1))[:3]
        record = kl._THREAD.into
        if record is not None:
            record.append((raw, (gx, gy, gz), list(values), tensors, kernel))
        raw.entry(gx, gy, gz, 77, *raw.head, *[x.data_ptr() if i in tensors else x for i, x in enumerate(values)])

    setattr_(kl, "FAST_LAUNCH", True)
    setattr_(torch._C, "_cuda_getDevice", lambda: 0)
    setattr_(torch._C, "_cuda_getCurrentRawStream", lambda dev: 77)
    setattr_(chunk, "launch", launch)
    setattr_(chunk, "supports_pdl", lambda device: True)


def scratch_spans(extra=()) -> list:
    """``(start, end)`` of every scratch buffer the workspace holds or retired, and of ``extra``."""
    bufs = [e[0] for e in workspace._CACHE.values()] + list(workspace._RETIRED) + list(extra)
    return [(b.untyped_storage().data_ptr(), b.untyped_storage().data_ptr() + b.untyped_storage().nbytes())
            for b in bufs]


def canonical(call: tuple, named: dict, spans: list, temporaries: bool = False) -> tuple:
    """A stub launch with the addresses of ``named`` tensors (``{label: tensor}``, e.g. o and a
    dense final state, which each call allocates) as their labels, addresses inside scratch as
    their offset in it, and the scratch strides (``s_*``) left out, values and specialization
    alike: a call may be served from buffers grown since a replay's recording, which holds its own
    (large enough: the replay checks) with their own strides. ``temporaries``: any other address
    as ``"temporary"`` (a contiguous copy the full path made of a strided input; ``named`` must
    then hold every tensor of the call)."""
    names = KERNELS[call[4]].arg_names
    labels = {t.data_ptr(): label for label, t in named.items() if t is not None}
    options, consts, runtime = call[5]
    out = [*call[:5], (options, consts, tuple(x for x in runtime if not x[0].startswith("s_")))]
    for name, x in zip(names, call[6:]):
        if name.startswith("s_"):
            x = "stride"
        elif type(x) is int and x > 1 << 20:
            if x in labels:
                x = labels[x]
            else:
                for lo, hi in spans:
                    if lo <= x < hi:
                        x = ("scratch", x - lo)
                        break
                else:
                    if temporaries:
                        x = "temporary"
        out.append(x)
    return tuple(out)


def first_difference(mine: list, theirs: list) -> str:
    """Where two lists of canonical launches first differ."""
    if len(mine) != len(theirs):
        return f"{len(mine)} launches against {len(theirs)}"
    for i, (a, b) in enumerate(zip(mine, theirs)):
        if a != b:
            diff = [(j, x, y) for j, (x, y) in enumerate(zip(a, b)) if x != y]
            return f"launch {i} ({a[4]}): (position, first, second) {diff[:6]}"
    return "none"
