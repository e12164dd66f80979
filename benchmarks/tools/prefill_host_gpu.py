"""Host time of eager ``kimiops.chunk_kda`` calls on short prompts, on a GPU machine.

B1, T in (64, 256, 1024), H = HV = 32, K = V = 128, bf16, softplus gate, L2 norm and beta sigmoid
in the kernel, final state out; the ``kimiops`` of the source tree given as the first argument (so
two trees can be compared in one device run). Per T: the median time until one call returns after
the GPU went idle, the back-to-back pace (50 calls enqueued without synchronizing, per call), and
the time between CUDA events around one call (for short prompts this is the host's time too: the
GPU waits for the launches). A lone ``torch.add_`` first, as the host's floor for any launch.

    python3 benchmarks/tools/prefill_host_gpu.py <tree>
"""
import sys
from pathlib import Path

import torch

sys.path.insert(0, sys.argv[1])
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))
import kimiops  # noqa: E402
from eager_prefill_pipeline import host_ms  # noqa: E402  (the back-to-back pace, ms per call)
from kimiops.bench.timing import host_us  # noqa: E402  (one call after an idle GPU: wall, until return)

H = HV = 32
K = V = 128


def main():
    gen = torch.Generator(device="cuda").manual_seed(0)
    tiny = torch.zeros(16, device="cuda")
    print(kimiops.__file__, "torch.add_ until return %.1f us" % host_us(lambda: tiny.add_(1))[1])
    for T in (64, 256, 1024):
        q, k, g = (torch.randn(1, T, H, K, device="cuda", generator=gen).to(torch.bfloat16) for _ in range(3))
        v = torch.randn(1, T, HV, V, device="cuda", generator=gen).to(torch.bfloat16)
        beta = torch.randn(1, T, HV, device="cuda", generator=gen).to(torch.bfloat16)
        A_log = torch.log(torch.rand(HV, device="cuda", generator=gen) * 15 + 1)
        dt = torch.randn(HV * K, device="cuda", generator=gen) * 0.5

        def call():
            return kimiops.chunk_kda(q, k, v, g, beta, output_final_state=True, use_qk_l2norm_in_kernel=True,
                                     use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True, A_log=A_log, dt_bias=dt)

        for _ in range(3):  # a signature's second call records the eager shortcut, the third replays it
            call()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        torch.cuda.synchronize()
        print(f"T={T}: until return {host_us(call)[1]:.1f} us, back-to-back pace {host_ms(call) * 1e3:.1f} us, "
              f"one call between events {start.elapsed_time(end) * 1e3:.1f} us")


if __name__ == "__main__":
    main()
