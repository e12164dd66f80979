"""Make vLLM's own KDA kernels importable without vLLM's runtime, as a comparator for
``benchmarks/bench_vllm_kda.py``.

vLLM (0.33) runs Kimi-Linear's KDA layer (``vllm/model_executor/layers/mamba/gdn/kimi_gdn_linear_attn.py``)
on ``vllm.models.kimi_k3.nvidia.ops.third_party.kda``: ``fused_recurrent_kda_packed_decode`` (decode),
``fused_recurrent_kda`` (speculative decode) and ``chunk_kda_with_fused_gate`` (prefill). Importing
them normally pulls in vLLM's whole runtime (its platform detection, envs, compiled extensions), which
the GPU machine cannot install. This script copies the kernel modules unmodified out of a vLLM wheel
into ``OUT`` and writes a minimal stand-in ``vllm`` package around them (written here: the platform
object, ``triton_utils``, ``math_utils``, ``gpu_sync_debug``, ``torch_utils.async_tensor_h2d``) whose
answers are those of vLLM on an H100/H200 (CUDA, programmatic dependent launch supported). Nothing of
vLLM is committed to this repository; the output directory goes to the GPU machine as a carried path.

    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \\
        --platform manylinux_2_28_x86_64 -d /tmp/vllm vllm==0.33.0
    python3 benchmarks/tools/vllm_kda_extract.py /tmp/vllm/vllm-0.33.0-*.whl .exp/vllm_kda
    PYTHONPATH=.exp/vllm_kda python3 -c "from vllm.models.kimi_k3.nvidia.ops.third_party import kda"
"""
import os
import sys
import zipfile

KERNEL_FILES = [
    "vllm/models/kimi_k3/nvidia/ops/third_party/kda/__init__.py",
    "vllm/models/kimi_k3/nvidia/ops/third_party/kda/chunk.py",
    "vllm/models/kimi_k3/nvidia/ops/third_party/kda/chunk_intra.py",
    "vllm/models/kimi_k3/nvidia/ops/third_party/kda/chunk_intra_token_parallel.py",
    "vllm/models/kimi_k3/nvidia/ops/third_party/kda/fused_recurrent.py",
    "vllm/third_party/flash_linear_attention/ops/chunk_delta_h.py",
    "vllm/third_party/flash_linear_attention/ops/cumsum.py",
    "vllm/third_party/flash_linear_attention/ops/index.py",
    "vllm/third_party/flash_linear_attention/ops/l2norm.py",
    "vllm/third_party/flash_linear_attention/ops/op.py",
    "vllm/third_party/flash_linear_attention/ops/utils.py",
]
# packages whose real __init__ would import vLLM's runtime: empty here
EMPTY_PACKAGES = [
    "vllm/models", "vllm/models/kimi_k3", "vllm/models/kimi_k3/nvidia", "vllm/models/kimi_k3/nvidia/ops",
    "vllm/models/kimi_k3/nvidia/ops/third_party", "vllm/third_party", "vllm/third_party/flash_linear_attention",
    "vllm/third_party/flash_linear_attention/ops", "vllm/utils",
]
SHIMS = {
    "vllm/__init__.py": '"""Stand-in for vLLM around its KDA kernels (benchmarks/tools/vllm_kda_extract.py)."""\n',
    "vllm/platforms/__init__.py": '''import torch


class _CudaPlatform:
    """What vLLM's platform object answers on an NVIDIA GPU of capability >= 9.0."""

    def is_rocm(self):
        return False

    def is_cuda(self):
        return True

    def is_cuda_alike(self):
        return True

    def is_xpu(self):
        return False

    def is_arch_support_pdl(self):
        return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 9

    def has_device_capability(self, capability, device_id=0):
        major, minor = torch.cuda.get_device_capability(device_id)
        return major * 10 + minor >= capability

    def get_device_capability(self, device_id=0):
        return torch.cuda.get_device_capability(device_id)


current_platform = _CudaPlatform()
''',
    "vllm/triton_utils/__init__.py": '''import triton
import triton.language as tl
import triton.language.extra.libdevice as tldevice

HAS_TRITON = True
''',
    "vllm/utils/math_utils.py": '''RCP_LN2 = 1.4426950216  # the constant vLLM's math_utils defines


def cdiv(a, b):
    return -(a // -b)


def next_power_of_2(n):
    return 1 if n < 1 else 1 << (n - 1).bit_length()
''',
    "vllm/utils/gpu_sync_debug.py": '''import contextlib


def gpu_sync_allowed(first_only=False):
    return contextlib.nullcontext()
''',
    "vllm/utils/torch_utils.py": '''import torch


def async_tensor_h2d(data, device=None, dtype=None, out=None, **kwargs):
    """Host data to the device without waiting (pinned staging), as vLLM's helper does."""
    t = data if isinstance(data, torch.Tensor) else torch.as_tensor(data, dtype=dtype)
    if dtype is not None:
        t = t.to(dtype)
    t = t.pin_memory()
    if out is not None:
        out.copy_(t, non_blocking=True)
        return out
    return t.to(device, non_blocking=True)
''',
}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    wheel, out = sys.argv[1], sys.argv[2]
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        missing = [f for f in KERNEL_FILES if f not in names]
        if missing:
            sys.exit(f"{wheel}: missing {missing} (a vLLM version with another KDA layout?)")
        for f in KERNEL_FILES:
            path = os.path.join(out, f)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as dst:
                dst.write(z.read(f))
        version = next((n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA")), "unknown")
    for pkg in EMPTY_PACKAGES:
        os.makedirs(os.path.join(out, pkg), exist_ok=True)
        init = os.path.join(out, pkg, "__init__.py")
        if not os.path.exists(init):
            open(init, "w").close()
    for f, text in SHIMS.items():
        path = os.path.join(out, f)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as dst:
            dst.write(text)
    with open(os.path.join(out, "SOURCE"), "w") as dst:
        dst.write(f"{os.path.basename(wheel)} ({version})\n")
    print(f"wrote {len(KERNEL_FILES)} kernel files of {version} and {len(SHIMS)} shims to {out}")


if __name__ == "__main__":
    main()
