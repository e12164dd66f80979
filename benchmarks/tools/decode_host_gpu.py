"""Host-side pieces of an eager decode call at N = 1, timed on a GPU machine's host.

The public call (``kimiops.fused_recurrent_kda`` in pool mode, the case of
``benchmarks/bench_kda_decode.py``) next to each piece of its repeated-signature path
(``kimiops.kda.runner.eager_call`` -> ``_EagerCall`` -> ``BoundLaunch`` -> ``RawLaunch``): the
scalar key, its lookup, the tensor guard's check, the output allocation, the current device and
stream, the launch-hook check, the raw addresses, the launch itself (Triton's C entry point)
against Triton's Python launcher, and a lone ``torch.add_`` as the host's floor for any launch.

Launching pieces are timed one call at a time on an idle stream (host time until the call
returns, median); pure host pieces in loops (median over rounds of the mean).

    PYTHONPATH=$PWD python3 benchmarks/tools/decode_host_gpu.py
"""
import sys
from pathlib import Path

import torch
import triton

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_kda_decode as bench  # noqa: E402

import kimiops  # noqa: E402
from kimiops.bench.timing import host_us, loop_us  # noqa: E402
from kimiops.kda import runner  # noqa: E402
from kimiops.kda.kernels import recurrent as rec  # noqa: E402
from kimiops.launch import fast_launch_allowed  # noqa: E402
from kimiops.validation import debug_enabled  # noqa: E402


# position of PDL among the kernel's constexpr arguments (``cex`` in ``recurrent._launch``)
PDL_IN_CONSTEXPRS = [p.name for p in rec._recurrent_kda_fwd_kernel.params if p.is_constexpr].index("PDL")


def launch_us(fn, iters=400) -> float:
    return host_us(fn, iters=iters)[1]


def main() -> None:
    gen = torch.Generator(device="cuda").manual_seed(0)
    pool = torch.randn(16, bench.HV, bench.V, bench.K, device="cuda", generator=gen) * 0.1
    c = bench.Case(1, pool, gen)

    def api():
        return kimiops.fused_recurrent_kda(
            c.q, c.k, c.v, c.g, c.beta, initial_state=pool, ssm_state_indices=c.idx, cu_seqlens=c.cu,
            state_v_first=True, use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
            use_beta_sigmoid_in_kernel=True, A_log=c.A_log, dt_bias=c.dt_bias)

    api()
    api()  # a signature's second call leaves the bound launch
    torch.cuda.synchronize()
    hit = next(reversed(runner._eager.values()))[0]
    bound = hit.launch
    drv = triton.runtime.driver.active
    dev = drv.get_current_device()
    o_shape, o_dtype = tuple(c.v.shape), c.v.dtype  # o is [B, T, HV, V] in v's dtype
    o = torch.empty(o_shape, dtype=o_dtype, device="cuda")
    ptrs = (c.q.data_ptr(), c.k.data_ptr(), c.v.data_ptr(), c.g.data_ptr(), c.beta.data_ptr(), o.data_ptr(),
            pool.data_ptr(), pool.data_ptr(), c.idx.data_ptr(), c.idx.data_ptr(), c.cu.data_ptr(),
            c.A_log.data_ptr(), c.dt_bias.data_ptr(), None, None)  # num_acc, parent: absent
    stream = drv.get_current_stream(dev)
    raw = bound.raw
    launcher = raw.compiled.run

    def scalars():
        return runner.eager_scalars(runner.DECODE, None, pool, False, True, True, True, c.A_log, c.dt_bias, None, True,
                                    c.cu, c.idx, None, False)

    def tensors():
        return runner.eager_tensors(c.q, c.k, c.v, c.g, c.beta, pool, c.idx, c.cu, c.A_log, c.dt_bias)

    key, ts = scalars(), tensors()
    tiny = torch.zeros(16, device="cuda")
    rows = [
        ("public call fused_recurrent_kda (launch part)", launch_us(api)),
        ("  runner.eager_call (key, lookup, launch)", launch_us(
            lambda: runner.eager_call(runner.DECODE, c.q, c.k, c.v, c.g, c.beta, None, pool, False, True, True, True,
                                      c.A_log, c.dt_bias, None, True, c.cu, c.idx, None))),
        ("  _EagerCall.__call__ (bound launch + o)", launch_us(
            lambda: hit(c.q, c.k, c.v, c.g, c.beta, pool, c.idx, c.cu, c.A_log, c.dt_bias))),
        ("  BoundLaunch.__call__", launch_us(
            lambda: bound(c.q, c.k, c.v, c.g, c.beta, pool, c.idx, pool, c.idx, c.cu, c.A_log, c.dt_bias))),
        ("  RawLaunch.__call__ (raw addresses)", launch_us(
            lambda: raw(bound.grid, 1, 1, stream, *ptrs, *bound.tail))),
        ("  Triton's CudaLauncher.__call__ instead", launch_us(
            lambda: launcher(bound.grid, 1, 1, stream, raw.function, raw.compiled.packed_metadata, None, None, None,
                             *ptrs, *bound.tail))),
    ]
    # the same launch of the kernel compiled without programmatic dependent launch
    rec._PDL = False
    c.ours()()  # the launcher, not the public call (whose bound launch would be reused)
    torch.cuda.synchronize()
    rec._PDL = True
    pdl_at = PDL_IN_CONSTEXPRS
    raw_nopdl = next(r for key, r in rec._launch_cache.items() if r is not raw and key[1][pdl_at] is False)
    at = len(bound.tail) - len(next(iter(rec._launch_cache))[1]) + pdl_at  # the flag's place among the raw args
    tail_nopdl = (*bound.tail[:at], False, *bound.tail[at + 1:])
    rows.append(("  RawLaunch.__call__ of the kernel without PDL", launch_us(
        lambda: raw_nopdl(bound.grid, 1, 1, stream, *ptrs, *tail_nopdl))))
    rows += [
        ("torch.add_ on 16 floats (launch part)", launch_us(lambda: tiny.add_(1))),
        ("eager_scalars (scalar key)", loop_us(scalars)),
        ("dict lookup of the exact key", loop_us(lambda: runner._eager.get((key, c.q.shape, c.cu.shape[0])))),
        ("eager_tensors (guard arguments)", loop_us(tensors)),
        ("TensorGuards.check of the 10 tensors", loop_us(lambda: hit.guard.check(*ts))),
        ("debug_enabled()", loop_us(debug_enabled)),
        ("torch.compiler.is_compiling()", loop_us(torch.compiler.is_compiling)),
        ("q.device.type == 'cuda'", loop_us(lambda: c.q.device.type == "cuda")),
        ("torch.empty(o_shape, dtype, device=v.device)", loop_us(
            lambda: torch.empty(o_shape, dtype=o_dtype, device=c.v.device))),
        ("v.new_empty(o_shape)", loop_us(lambda: c.v.new_empty(o_shape))),
        ("torch.empty_like(v)", loop_us(lambda: torch.empty_like(c.v))),
        ("torch.empty_like(v, memory_format=torch.contiguous_format)", loop_us(
            lambda: torch.empty_like(c.v, memory_format=torch.contiguous_format))),
        ("driver get_current_device()", loop_us(drv.get_current_device)),
        ("driver get_current_stream(dev)", loop_us(lambda: drv.get_current_stream(dev))),
        ("torch._C._cuda_getCurrentRawStream(dev)", loop_us(lambda: torch._C._cuda_getCurrentRawStream(dev))),
        ("fast_launch_allowed()", loop_us(fast_launch_allowed)),
        ("13 data_ptr() calls", loop_us(lambda: (c.q.data_ptr(), c.k.data_ptr(), c.v.data_ptr(), c.g.data_ptr(),
                                                c.beta.data_ptr(), o.data_ptr(), pool.data_ptr(), pool.data_ptr(),
                                                c.idx.data_ptr(), c.idx.data_ptr(), c.cu.data_ptr(),
                                                c.A_log.data_ptr(), c.dt_bias.data_ptr()))),
        ("per tensor (shape, stride(), dtype, device), 10 tensors", loop_us(
            lambda: tuple((t.shape, t.stride(), t.dtype, t.device) for t in
                          (c.q, c.k, c.v, c.g, c.beta, pool, c.idx, c.cu, c.A_log, c.dt_bias)))),
        ("per tensor (shape, stride(), dtype, get_device()), 10 tensors", loop_us(
            lambda: tuple((t.shape, t.stride(), t.dtype, t.get_device()) for t in
                          (c.q, c.k, c.v, c.g, c.beta, pool, c.idx, c.cu, c.A_log, c.dt_bias)))),
    ]
    wall_api, _ = host_us(api)
    wall_add, _ = host_us(lambda: tiny.add_(1))
    print(f"{torch.cuda.get_device_name()} torch {torch.__version__} triton {triton.__version__}")
    print(f"wall (until the GPU finished): public call {wall_api:.1f} us, torch.add_ {wall_add:.1f} us")
    for name, us in rows:
        print(f"{us:8.2f} us  {name}")


if __name__ == "__main__":
    main()
