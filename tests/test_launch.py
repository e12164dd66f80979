"""The fast launch path's cache key (``kimiops.launch``): it must separate every call Triton would
compile differently. The launches themselves run on the GPU only (``tests/kda``'s
``test_gpu_fast_launch_bit_identical_and_keyed_on_alignment``); the key is host-only."""

import pytest
import torch
import triton.language as tl
from triton.runtime.errors import OutOfResources
from triton.runtime.jit import JITFunction

from kimiops.launch import specialization_key


def _kernel(x, n, scale, B: tl.constexpr):
    pass


# a JITFunction built directly: under the interpreter ``triton.jit`` returns a wrapper without
# parameter metadata, and the key only reads the parameters
KERNEL = JITFunction(_kernel)


def key(x, n, scale=1.0, B=16, **options):
    return specialization_key(KERNEL, 0, [x, n, scale, B], options)


def test_key_separates_what_triton_specializes():
    buf = torch.empty(64, dtype=torch.float16)
    aligned, shifted = buf[:32], buf[1:33]  # data_ptr % 16: 0 and 2
    assert aligned.data_ptr() % 16 == 0 and shifted.data_ptr() % 16 == 2
    base = key(aligned, 32)
    assert key(buf[8:40], 32) == base                    # another 16-byte-aligned address
    assert key(shifted, 32) != base                      # alignment
    assert key(aligned.float(), 32) != base              # dtype
    assert key(aligned, 48) == base                      # both divisible by 16
    assert key(aligned, 33) != base                      # divisibility by 16
    assert key(aligned, 1) != key(aligned, 17)           # the value 1 is a constant
    assert key(aligned, 2**40) != key(aligned, 2**4)     # int64 vs int32
    assert key(aligned, 32, scale=2.0) == base           # floats are not specialized
    assert key(aligned, 32, B=32) != base                # constexpr values
    assert key(aligned, 32, num_warps=4) != key(aligned, 32, num_warps=8)  # launch options
    assert key(aligned, 32, launch_pdl=True) != base


# the same kernel with ``n`` left unspecialized and ``x`` without its alignment
UNSPECIALIZED = JITFunction(_kernel, do_not_specialize=["n"], do_not_specialize_on_alignment=["x"])


def test_key_leaves_out_what_the_kernel_does_not_specialize():
    """Triton compiles one kernel for every value of a ``do_not_specialize`` int and every alignment
    of a ``do_not_specialize_on_alignment`` pointer: the key does not separate them (a key that did
    would only send such calls through Triton's own launch path once more), but still separates
    the int's width and the pointer's dtype, which Triton compiles apart."""
    buf = torch.empty(64, dtype=torch.float16)

    def key_of(x, n):
        return specialization_key(UNSPECIALIZED, 0, [x, n, 1.0, 16], {})

    base = key_of(buf[:32], 32)
    assert key_of(buf[1:33], 33) == key_of(buf[:32], 1) == base  # alignment, divisibility, the value 1
    assert key_of(buf[:32], 2**40) != base                      # int64 vs int32
    assert key_of(buf[:32].float(), 32) != base                 # dtype


def test_specialization_flags_read_jit_and_interpreter_kernels_alike():
    """``specialization_flags`` gives each non-constexpr parameter's ``(specialize_value, align)``
    from Triton's own parameters, or, for the interpreter's kernels (which keep only their source
    and ``jit`` options), from the signature and those options: the two agree, and the prefill
    kernels leave ``CALL_COUNTS`` unspecialized."""
    from triton.runtime.interpreter import InterpretedFunction

    from kimiops.kda.kernels import chunk_intra, chunk_state
    from kimiops.kda.kernels.chunk_layout import CALL_COUNTS
    from kimiops.launch import specialization_flags

    interpreted = InterpretedFunction(_kernel, do_not_specialize=["n"], do_not_specialize_on_alignment=["x"])
    assert specialization_flags(UNSPECIALIZED) == specialization_flags(interpreted) == {
        0: (True, False), 1: (False, True), 2: (True, True)}
    assert specialization_flags(KERNEL) == {0: (True, True), 1: (True, True), 2: (True, True)}
    for kernel in (chunk_intra.chunk_intra_kernel, chunk_state.chunk_state_kernel, chunk_state.segment_starts_kernel):
        flags = specialization_flags(kernel)
        names = kernel.arg_names
        assert {names[i] for i, (value, _) in flags.items() if not value} == set(CALL_COUNTS) & set(names)
        assert "T" not in names or flags[names.index("T")] == (True, True)  # fixed-length row arithmetic


class _FakeLauncher:
    """Stands in for triton 3.6's ``CudaLauncher``: records what reaches its C entry point
    (``launch``) and its Python ``__call__``."""

    def __init__(self, scratch: int):
        self.global_scratch_size, self.profile_scratch_size = scratch, 0
        self.launch_cooperative_grid, self.launch_pdl = False, True
        self.c_calls, self.py_calls = [], []
        self.launch = lambda *a: self.c_calls.append(a)

    def __call__(self, *a):
        self.py_calls.append(a)


class _FakeCompiled:
    def __init__(self, scratch: int):
        self.run, self.function, self.packed_metadata = _FakeLauncher(scratch), 1234, (4, 1, 0)


def test_raw_launch_calls_the_c_entry_with_the_launcher_layout():
    """Without scratch, ``RawLaunch`` hands the C entry point the arguments ``CudaLauncher.__call__``
    would: grid, stream, function, cooperative / PDL flags, no scratch, metadata, no hooks, args."""
    from kimiops.launch import RawLaunch

    ck = _FakeCompiled(scratch=0)
    RawLaunch(ck)(7, 1, 1, 99, 111, 222, 3.5)
    assert ck.run.c_calls == [(7, 1, 1, 99, 1234, False, True, None, None, (4, 1, 0), None, None, None, 111, 222, 3.5)]
    assert ck.run.py_calls == []


def test_raw_launch_goes_through_the_launcher_when_the_kernel_needs_scratch():
    from kimiops.launch import RawLaunch

    ck = _FakeCompiled(scratch=256)
    RawLaunch(ck)(7, 1, 1, 99, 111)
    assert ck.run.c_calls == []
    assert ck.run.py_calls == [(7, 1, 1, 99, 1234, (4, 1, 0), None, None, None, 111)]


class _FakeJIT:
    """Stands in for a ``@triton.jit`` kernel in ``launch``: the parameters of ``KERNEL``, and
    ``kernel[grid](...)`` (Triton's own launch) records the call and returns a compiled kernel."""

    params, arg_names = KERNEL.params, KERNEL.arg_names

    def __init__(self):
        self.jit_calls, self.compiled = [], _FakeCompiled(scratch=0)

    def __getitem__(self, grid):
        def run(*args, **kwargs):
            self.jit_calls.append((grid, args, kwargs))
            return self.compiled
        return run


@pytest.fixture
def stubbed_launch(monkeypatch, cuda_queries):
    """``kimiops.launch`` with an empty cache and the CUDA queries stubbed (``cuda_queries``)."""
    import kimiops.launch as fast_launch

    monkeypatch.setattr(fast_launch, "_CACHE", {})
    return fast_launch


def test_launch_compiles_once_then_passes_raw_addresses(stubbed_launch):
    """``launch``: the first call of a specialization goes through Triton; later ones with the same
    key hand the C entry point each tensor's address in its parameter's place (constexprs and other
    scalars as given); a call that Triton would specialize differently goes through Triton again."""
    fast_launch = stubbed_launch
    kernel = _FakeJIT()
    buf = torch.empty(64, dtype=torch.float16)
    x, y = buf[:32], buf[16:48]  # both 16-byte aligned
    assert fast_launch.launch(kernel, (3,), x, 32, 1.5, B=16) is kernel.compiled
    assert len(kernel.jit_calls) == 1 and kernel.compiled.run.c_calls == []
    fast_launch.launch(kernel, (3,), y, 48, 2.5, B=16, num_warps=4)     # a new key (launch option)
    fast_launch.launch(kernel, (3,), y, 48, 2.5, B=16)                  # same key as the first call
    assert len(kernel.jit_calls) == 2
    assert kernel.compiled.run.c_calls == [
        (3, 1, 1, 77, 1234, False, True, None, None, (4, 1, 0), None, None, None, y.data_ptr(), 48, 2.5, 16)]
    fast_launch.launch(kernel, (3,), buf[1:33], 32, 1.5, B=16)          # misaligned: Triton again
    assert len(kernel.jit_calls) == 3


def test_recording_keeps_what_repeats_each_launch(monkeypatch, stubbed_launch):
    """Inside ``recording``, each launch leaves its raw launch, grid, arguments (tensors as given),
    tensor positions and kernel, whether compiled just now or found; a launch through Triton's own
    path leaves ``None``."""
    fast_launch = stubbed_launch
    kernel = _FakeJIT()
    x = torch.empty(32, dtype=torch.float16)
    with fast_launch.recording([]) as rec:
        fast_launch.launch(kernel, (3, 2), x, 32, 1.5, B=16)   # compiled now
        fast_launch.launch(kernel, (3, 2), x, 32, 1.5, B=16)   # found
    assert len(rec) == 2 and rec[0][0] is rec[1][0]
    for raw, grid, values, positions, launched in rec:
        assert grid == (3, 2, 1) and values[0] is x and values[1:] == [32, 1.5, 16] and positions == (0,)
        assert launched is kernel
    monkeypatch.setattr(fast_launch, "FAST_LAUNCH", False)
    with fast_launch.recording([]) as rec:
        fast_launch.launch(kernel, (3,), x, 32, 1.5, B=16)
    assert rec == [None]
    assert fast_launch._THREAD.into is None  # recording ends with its block


class _WarmingJIT(_FakeJIT):
    """A ``_FakeJIT`` whose ``warmup`` (Triton's compile without launch) records the call and submits a
    compile of 50 ms to the thread's ``AsyncCompileMode``, as Triton does for a variant not compiled."""

    def __init__(self):
        super().__init__()
        self.warmups, self.finished = [], []

    def warmup(self, *args, grid, **kwargs):
        import time

        from kimiops.launch import _THREAD

        self.warmups.append((grid, args, kwargs))
        return _THREAD.background.submit(len(self.warmups), lambda: time.sleep(0.05) or self.compiled,
                                         self.finished.append)


def test_compiling_in_background_starts_compiles_and_launches_nothing(monkeypatch, stubbed_launch):
    """In ``compiling_in_background`` a launch, of a variant compiled before or not, hands Triton's
    ``warmup`` the call's arguments, grid and options, launches nothing and records ``None``; the
    fast path (and with it every replay) steps aside until the block ends, which waits for the
    compiles."""
    fast_launch = stubbed_launch
    monkeypatch.setattr(fast_launch, "interpreter_enabled", lambda: False)
    kernel = _WarmingJIT()
    x = torch.empty(32, dtype=torch.float16)
    fast_launch.launch(kernel, (3,), x, 32, 1.5, B=16)  # compiled and launched: a fast-path hit from now on
    kernel.jit_calls.clear()
    with fast_launch.compiling_in_background(2) as mode:
        assert not fast_launch.fast_launch_allowed()
        with fast_launch.recording([]) as rec:
            assert fast_launch.launch(kernel, (3,), x, 32, 1.5, B=16) is None
            assert fast_launch.launch(kernel, (5, 2), x, 48, 2.5, B=32, num_warps=8) is None
        assert rec == [None, None]
    assert kernel.warmups == [((3,), (x, 32, 1.5), {"B": 16}), ((5, 2), (x, 48, 2.5), {"B": 32, "num_warps": 8})]
    assert kernel.finished == [kernel.compiled] * 2 and len(mode.future_kernels) == 2
    assert kernel.jit_calls == [] and kernel.compiled.run.c_calls == []
    assert fast_launch.fast_launch_allowed()
    fast_launch.launch(kernel, (3,), x, 32, 1.5, B=16)
    assert len(kernel.compiled.run.c_calls) == 1


class _SharedHungryJIT(_FakeJIT):
    """A kernel needing ``fixed_kib`` plus 40 KiB per pipeline stage of shared memory on a device
    with 100 KiB per CTA: Triton's launch raises ``OutOfResources`` (naming ``resource``) above 2
    stages by default, as on sm86 / sm89 / sm120."""

    def __init__(self, resource="shared memory", fixed_kib=0):
        super().__init__()
        self.resource, self.fixed_kib = resource, fixed_kib

    def __getitem__(self, grid):
        def run(*args, num_stages=3, **kwargs):
            self.jit_calls.append(num_stages)
            need = (self.fixed_kib + 40 * num_stages) * 1024
            if need > 100 * 1024:
                raise OutOfResources(need, 100 * 1024, self.resource)
            return self.compiled
        return run


def test_launch_takes_fewer_stages_where_shared_memory_is_short(stubbed_launch):
    """A config tuned on the H200 whose pipeline does not fit the device runs with one stage fewer
    at a time; the fitted kernel is cached under the requested config (one retry per key)."""
    fast_launch = stubbed_launch
    kernel = _SharedHungryJIT()
    x = torch.empty(32, dtype=torch.float16)
    assert fast_launch.launch(kernel, (3,), x, 32, 1.5, B=16, num_stages=4) is kernel.compiled
    assert kernel.jit_calls == [4, 3, 2]
    fast_launch.launch(kernel, (3,), x, 32, 1.5, B=16, num_stages=4)
    assert kernel.jit_calls == [4, 3, 2] and len(kernel.compiled.run.c_calls) == 1
    fast_launch.launch(kernel, (3,), x, 32, 1.5, B=16)  # Triton's default of 3 stages
    assert kernel.jit_calls == [4, 3, 2, 3, 2]


def test_launch_reraises_other_shortages(stubbed_launch):
    """Only shared memory is traded for stages; another resource, or a kernel that does not fit
    in one stage, raises Triton's error."""
    fast_launch = stubbed_launch
    x = torch.empty(32, dtype=torch.float16)
    with pytest.raises(OutOfResources, match="threads"):
        fast_launch.launch(_SharedHungryJIT("threads"), (3,), x, 32, 1.5, B=16, num_stages=4)
    too_big = _SharedHungryJIT(fixed_kib=200)
    with pytest.raises(OutOfResources, match="shared memory"):
        fast_launch.jit_launch(too_big, (3,), (x,), {"num_stages": 2})
    assert too_big.jit_calls == [2, 1]
