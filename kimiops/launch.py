"""Triton launches that skip the argument binder and the driver's pointer checks after the first one.

``kernel[grid](*args, **kwargs)`` binds every argument in Python and, for every tensor argument,
has Triton's launcher ask the driver to validate the pointer (``cuPointerGetAttribute``). On the
H200 host that costs tens of microseconds per launch: a B1 T8192 prefill call in 4 pipelined parts
(8 launches, ~30 tensor arguments each) took 0.53-0.96 ms of host time per call, more than its
0.65 ms on the GPU, so its eager calls ran at the host's pace
(``benchmarks/results/logs_h200_20261130g/eager_prefill_pipeline.log``).

:func:`launch` makes the first launch of a specialization through Triton and keeps the compiled
kernel; later launches with the same key hand the launcher raw device addresses. The key is what
Triton specializes on (``native_specialize_impl``, triton 3.6: dtype and 16-byte alignment of each
pointer, the width of each int, its divisibility by 16 and the value 1; neither for parameters the
kernel names in ``do_not_specialize_on_alignment`` / ``do_not_specialize``), every constexpr value,
the launch options and the current device. The caller guarantees that tensors live on the current
device (the pointer check is what is skipped). Launch hooks (profilers) and
``KIMIOPS_TRITON_FAST_LAUNCH=0`` take Triton's own path on every call.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import torch
import triton
from triton.backends.compiler import BaseBackend
from triton.runtime.errors import OutOfResources
from triton.runtime.jit import KernelParam, native_specialize_impl

from kimiops.interpreter import interpreter_enabled

__all__ = ["launch", "jit_launch", "compiled_kernel", "fast_launch_allowed", "specialization_key", "specialization",
           "specialization_flags", "RawLaunch", "recording", "compiling_in_background"]

# the one switch of the fast path (prefill and decode read it at call time; tests and benchmarks flip it)
FAST_LAUNCH = (not interpreter_enabled()) and os.environ.get("KIMIOPS_TRITON_FAST_LAUNCH", "1") == "1"
LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "launch_pdl", "launch_cooperative_grid")

_CACHE: dict = {}


class _ThreadState(threading.local):
    into = None  # recording(): the list this thread's launches append to
    background = None  # compiling_in_background(): the triton.AsyncCompileMode this thread submits to


_THREAD = _ThreadState()
# threads now in compiling_in_background: the fast path reads the thread-local state only while one is
# (on the CPU machine fast_launch_allowed() took 203 ns reading it on every call, 166-178 ns so, and
# no_launch_hooks() before it 164-168 ns: benchmarks/results/cpu_checks_20261206_s53/fast_launch_allowed_ns.log)
_BACKGROUND_THREADS = 0
_BACKGROUND_LOCK = threading.Lock()


def fast_launch_allowed() -> bool:
    """True when launches may skip Triton's own path: no launch hook (profiler) is registered (the
    fast path passes none) and this thread is not in :func:`compiling_in_background`."""
    if _BACKGROUND_THREADS and _THREAD.background is not None:
        return False
    rt = triton.knobs.runtime
    for hook in (rt.launch_enter_hook, rt.launch_exit_hook):
        # triton 3.6: a HookChain (empty ``calls`` = no hook); older: None or a callable
        if hook is not None and getattr(hook, "calls", True):
            return False
    return True


def compiled_kernel(ck):
    """The CompiledKernel behind a JIT launch's return value (a future when compiled in the background)."""
    return ck.result() if hasattr(ck, "result") else ck


class RawLaunch:
    """Launches of one compiled kernel with raw arguments (device addresses as ints, scalars), no
    launch hooks: ``RawLaunch(ck)(gx, gy, gz, stream, *args)``.

    Calls Triton 3.6's C entry point (``CudaLauncher.launch``) directly when the kernel needs no
    global or profile scratch: ``CudaLauncher.__call__`` only allocates those and adds ~1.3 us of
    Python on the H200 host (5.6 vs 4.3 us per decode launch,
    ``benchmarks/results/logs_h200_20261130i/decode_host_gpu_before.log``). Otherwise it goes through
    ``CudaLauncher.__call__``.

    ``entry`` and ``head`` are public so a caller on a hot path (``recurrent.BoundLaunch``) can make
    the call itself, ``entry(gx, gy, gz, stream, *head, *args)``, without this frame.
    """

    __slots__ = ("compiled", "function", "entry", "head")

    def __init__(self, ck):
        launcher = ck.run  # property: loads the binary (already done by the JIT launch that built ck)
        self.compiled = ck
        self.function = ck.function
        c_launch = getattr(launcher, "launch", None)
        if c_launch is not None and not getattr(launcher, "global_scratch_size", 1) \
                and not getattr(launcher, "profile_scratch_size", 1):
            self.entry = c_launch
            self.head = (ck.function, launcher.launch_cooperative_grid, launcher.launch_pdl, None, None,
                         ck.packed_metadata, None, None, None)
        else:
            self.entry = launcher
            self.head = (ck.function, ck.packed_metadata, None, None, None)

    def __call__(self, gx: int, gy: int, gz: int, stream: int, *args) -> None:
        self.entry(gx, gy, gz, stream, *self.head, *args)


_LAYOUTS: dict = {}


def _parameters(kernel) -> list[tuple[bool, bool, bool]]:
    """``(is_constexpr, do_not_specialize, do_not_specialize_on_alignment)`` per parameter of a
    ``@triton.jit`` kernel: Triton's own ``params``, or under the interpreter (whose functions keep
    only their source and the ``jit`` options) from the signature and those options."""
    params = getattr(kernel, "params", None)
    if params is None:
        options = getattr(kernel, "kwargs", {})
        dns, dns_oa = (set(options.get(o) or ()) for o in ("do_not_specialize", "do_not_specialize_on_alignment"))
        params = [KernelParam(i, p, i in dns or p.name in dns, i in dns_oa or p.name in dns_oa)
                  for i, p in enumerate(inspect.signature(kernel.fn).parameters.values())]
    return [(p.is_constexpr, p.do_not_specialize, p.do_not_specialize_on_alignment) for p in params]


def _layout(kernel) -> tuple[tuple[int, ...], tuple[tuple[int, bool, bool], ...]]:
    """(indices of the constexpr parameters, and for each other parameter ``(index, specialize_value,
    align)``: False where the kernel says ``do_not_specialize`` / ``do_not_specialize_on_alignment``,
    as Triton binds it) of a ``@triton.jit`` kernel."""
    layout = _LAYOUTS.get(kernel)
    if layout is None:
        params = _parameters(kernel)
        layout = _LAYOUTS[kernel] = (tuple(i for i, p in enumerate(params) if p[0]),
                                     tuple((i, not dns, not dns_oa) for i, (const, dns, dns_oa) in enumerate(params)
                                           if not const))
    return layout


def specialization_flags(kernel) -> dict[int, tuple[bool, bool]]:
    """``{index: (specialize_value, align)}`` of each non-constexpr parameter of a ``@triton.jit``
    kernel: what :func:`specialization` takes for that argument."""
    return {i: (s, a) for i, s, a in _layout(kernel)[1]}


def specialization_key(kernel, device: int, values: list, options: dict) -> tuple:
    """What selects the compiled kernel for a call: the kernel, the device, the launch options
    (keys of ``options`` named in ``LAUNCH_OPTIONS``), every constexpr value and Triton's
    specialization of every other argument (``values``: one per parameter, in order).

    The parameter layout is looked up once per kernel, so only the non-constexpr arguments go
    through Triton's specialization: 7.3 against 15.5 us for stage 1's 46 parameters (19 of them
    constexpr) on the CPU machine (``benchmarks/results/prefill_host_cpu_20261130j.log``)."""
    const_idx, runtime = _layout(kernel)
    # ``specialization`` written out: this runs for every argument of every launch on the full path
    return (kernel, device, tuple([options.get(o) for o in LAUNCH_OPTIONS]),
            tuple([values[i] for i in const_idx]),
            tuple([native_specialize_impl(BaseBackend, values[i], False, s, a) for i, s, a in runtime]))


def specialization(value, specialize_value: bool = True, align: bool = True) -> tuple:
    """Triton's specialization of one non-constexpr argument (triton 3.6): for a tensor its
    pointer type and (with ``align``) 16-byte alignment, for an int its width and (with
    ``specialize_value``) its divisibility by 16 or the value 1 as a constant. The flags are the
    parameter's (:func:`specialization_flags`): False where the kernel says ``do_not_specialize``
    / ``do_not_specialize_on_alignment``."""
    return native_specialize_impl(BaseBackend, value, False, specialize_value, align)


@contextlib.contextmanager
def recording(into: list):
    """Within it, every :func:`launch` of this thread appends what would repeat it to ``into``:
    ``(RawLaunch, (gx, gy, gz), values, tensor positions, kernel)`` (``values``: one per kernel
    parameter, tensors as given; ``kernel``: the ``@triton.jit`` function, whose ``arg_names`` name
    the values), or ``None`` for a launch that took Triton's own path (nothing to repeat)."""
    previous = _THREAD.into
    _THREAD.into = into
    try:
        yield into
    finally:
        _THREAD.into = previous


@contextlib.contextmanager
def compiling_in_background(workers: int):
    """Within it, this thread launches no kernel: each launch (:func:`launch`, :func:`jit_launch`)
    of a kernel variant Triton has not compiled yet starts its compile on one of ``workers`` threads
    (``triton.AsyncCompileMode``), and leaving waits for every compile it started. Yields the mode,
    whose ``future_kernels`` holds one entry per compile started.

    Triton's compile releases the GIL in its LLVM passes and runs ptxas as a subprocess, so
    compiles in threads overlap: on the 2-core CPU machine the 18 sm_90 compiles of a warm-up at 32
    heads of 128 took 9.5-9.8 s on one thread and 5.3-5.4 s on two
    (``benchmarks/results/cpu_checks_20261206_s53/warmup_compile_offline_32x128.log``). Bound
    replays and the fast path step aside (:func:`fast_launch_allowed` is False) so that every launch
    reaches Triton. A compile that fails here is dropped: the next real launch of that variant
    compiles it again and raises. Not inside another ``AsyncCompileMode`` of this thread (Triton
    raises ``RuntimeError``)."""
    global _BACKGROUND_THREADS
    with ThreadPoolExecutor(workers, thread_name_prefix="kimiops-compile") as pool, \
            triton.AsyncCompileMode(pool, ignore_errors=True) as mode:
        with _BACKGROUND_LOCK:
            _BACKGROUND_THREADS += 1
        _THREAD.background = mode
        try:
            yield mode
        finally:
            _THREAD.background = None
            with _BACKGROUND_LOCK:
                _BACKGROUND_THREADS -= 1


def jit_launch(kernel, grid: tuple, args: tuple, kwargs: dict):
    """``kernel[grid](*args, **kwargs)`` through Triton; returns the compiled kernel. With one
    pipeline stage fewer at a time while the device cannot hold the kernel's shared memory: Triton
    raises ``OutOfResources`` before anything is launched. The tuned configs were measured on the
    H200 (227 KiB per CTA); sm86, sm89 and sm120 allow 99 KiB and sm80 163 KiB. Stages change no
    result bits. (On the fast path the fitted kernel is cached under the requested config; on
    Triton's own path every call retries.) In :func:`compiling_in_background`: starts the compile
    (``kernel.warmup``; nothing under the interpreter), launches nothing and returns None."""
    if _THREAD.background is not None:
        if not interpreter_enabled():
            kernel.warmup(*args, grid=grid, **kwargs)
        return None
    while True:
        try:
            return compiled_kernel(kernel[grid](*args, **kwargs))
        except OutOfResources as e:
            stages = kwargs.get("num_stages", 3)  # Triton's default
            if e.name != "shared memory" or stages <= 1:
                raise
            kwargs = dict(kwargs, num_stages=stages - 1)


def launch(kernel, grid: tuple, *args, **kwargs):
    """``kernel[grid](*args, **kwargs)``; returns the compiled kernel (None in
    :func:`compiling_in_background`).

    Args:
        kernel: a ``@triton.jit`` function whose parameters are all given: the leading ones by
            ``args``, the others by name in ``kwargs``.
        grid: a tuple of one to three ints.
        kwargs: the remaining parameters (constexprs included) and launch options
            (``LAUNCH_OPTIONS``).
    """
    record = _THREAD.into
    if not FAST_LAUNCH or not fast_launch_allowed():
        if record is not None:
            record.append(None)
        return jit_launch(kernel, grid, args, kwargs)
    values = list(args) + [kwargs[n] for n in kernel.arg_names[len(args):]]
    device = torch._C._cuda_getDevice()  # what Triton's driver reads (torch.cuda.current_device), raw
    key = specialization_key(kernel, device, values, kwargs)
    hit = _CACHE.get(key)
    gx, gy, gz = (tuple(grid) + (1, 1))[:3]
    if hit is None:
        ck = jit_launch(kernel, grid, args, kwargs)
        if ck is not None and getattr(ck, "function", None) is not None:
            # the key fixes which arguments are tensors (their specialization is a pointer type)
            tensors = tuple(i for i, *_ in _layout(kernel)[1] if isinstance(values[i], torch.Tensor))
            hit = _CACHE[key] = (RawLaunch(ck), tensors)
        if record is not None:
            record.append(None if hit is None else (hit[0], (gx, gy, gz), values, hit[1], kernel))
        return ck
    raw, tensors = hit
    if record is not None:
        record.append((raw, (gx, gy, gz), list(values), tensors, kernel))
    for i in tensors:
        values[i] = values[i].data_ptr()
    raw(gx, gy, gz, torch._C._cuda_getCurrentRawStream(device), *values)  # Triton's stream query
    return raw.compiled
