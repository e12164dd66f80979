"""kimiops: GPU kernels for serving Kimi Delta Attention models and their BF16 decode linears.

Public API:
    chunk_kda, fused_recurrent_kda, kda_gate   -- FLA-compatible KDA ops
    KDABackend                                 -- extend/decode over a state pool (serving)
    linear                                     -- low-latency BF16 linear
    arch_family, device_family                 -- capability families
    empty_cache                                -- release the KDA ops' cached scratch buffers and eager launches
"""

from kimiops.interpreter import interpreter_enabled, patch_interpreter_for_numpy_2_4

if interpreter_enabled():
    patch_interpreter_for_numpy_2_4()

from kimiops.arch import arch_family, device_family  # noqa: E402
from kimiops.gemm.linear import linear
from kimiops.kda import KDABackend, chunk_kda, fused_recurrent_kda, kda_gate, l2norm
from kimiops.kda.runner import empty_cache

__version__ = "0.1.0"

__all__ = [
    "KDABackend",
    "arch_family",
    "chunk_kda",
    "device_family",
    "empty_cache",
    "fused_recurrent_kda",
    "kda_gate",
    "l2norm",
    "linear",
    "__version__",
]
