"""Host-side Python cost of a prefill call's pieces, measured on a CPU machine (no GPU needed).

Times, per call, ``chunk_kda_fwd``'s plan (``_plan``: shapes, configs, scratch buffers) for B1
T8192 H = HV = 32, K = V = 128 on CPU tensors, and the part of a fast launch that is Python
(``kimiops.launch.specialization_key`` plus the raw-argument list) for stage 1 and the state stage
with that plan's arguments. CUDA calls (stream queries, the launch itself) are not included, so
these are lower bounds of what the GPU host spends.

    python benchmarks/tools/prefill_host_cpu.py
"""
import torch

from kimiops.bench.timing import loop_us
from kimiops.kda.kernels import chunk as cm
from kimiops.kda.kernels.chunk_intra import chunk_intra_kernel
from kimiops.kda.kernels.chunk_state import chunk_state_kernel
from kimiops.launch import specialization_key


def key_and_args_us(kernel, n_params):
    """Key plus raw arguments, as ``kimiops.launch.launch`` forms them on a hit, for a kernel whose
    runtime arguments are mostly tensors and ints (constexprs as given)."""
    t = torch.empty(64)
    values = [t if i % 3 else 4096 for i in range(n_params)]
    tensors = [i for i in range(n_params) if isinstance(values[i], torch.Tensor) and not kernel.params[i].is_constexpr]

    def key_and_raw():
        vals = list(values)
        specialization_key(kernel, 0, vals, {})
        for i in tensors:
            vals[i] = vals[i].data_ptr()
    return loop_us(key_and_raw)


def main():
    B, T, H, K, V = 1, 8192, 32, 128, 128
    q = torch.empty(B, T, H, K, dtype=torch.bfloat16)
    beta = torch.empty(B, T, H, dtype=torch.bfloat16)
    kw = dict(scale=0.1, cu_seqlens=None, h0=None, h0_indices=None, ht=torch.empty(1, H, K, V), ht_indices=None,
              state_v_first=False, use_qk_l2norm=True, use_beta_sigmoid=False, gate="none", A_log=None,
              dt_bias=None, lower_bound=None, out=torch.empty(B, T, H, V, dtype=torch.bfloat16),
              intra_config=None, state_config=None)
    plan = cm._plan(q, q, q, q, beta, **kw)
    print(f"B1 T8192: {len(plan['parts'])} parts")
    print(f"_plan: {loop_us(lambda: cm._plan(q, q, q, q, beta, **kw)):.1f} us per call")
    for name, kernel in (("stage 1", chunk_intra_kernel), ("state", chunk_state_kernel)):
        n = len(kernel.arg_names)
        print(f"{name}: {n} parameters, key + raw arguments {key_and_args_us(kernel, n):.1f} us per launch")


if __name__ == "__main__":
    main()
