"""Input generators with realistic gates and the error metric, shared by tests and benchmarks."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from kimiops.kda.gate import kda_gate, l2norm

GATE_FAMILIES = ("mild", "softplus", "lower_bound")


def rel_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    """``||out - ref|| / ||ref||`` in fp64 on ``out``'s device; ``inf`` if ``out`` holds NaN/Inf (never NaN)."""
    out64 = out.detach().to(torch.float64)
    ref64 = ref.detach().to(device=out64.device, dtype=torch.float64)
    if not torch.isfinite(out64).all():
        return math.inf
    den = ref64.norm().item()
    num = (out64 - ref64).norm().item()
    return num / den if den > 0 else num


def tf32_rounded(x: torch.Tensor) -> torch.Tensor:
    """fp32 ``x`` (normal values and zeros) rounded to the nearest tf32 value (11 significant bits),
    ties away from zero, computed in float64 (a model of the kernels' ``dot_operands.tf32_rna``)."""
    x64 = x.detach().to(torch.float64)
    _, exp = torch.frexp(x64)                        # |x| in [2^(exp-1), 2^exp)
    ulp = torch.ldexp(torch.ones_like(x64), exp - 11)
    return (torch.sign(x64) * torch.floor(x64.abs() / ulp + 0.5) * ulp).to(torch.float32)


@dataclass
class KDAInputs:
    """One set of KDA inputs. ``g`` is what the op receives: raw logits when ``gate_kwargs`` is
    non-empty (pass ``use_gate_in_kernel=True`` and ``**gate_kwargs``), else the log decay.
    ``g_decay`` is the log decay in fp64 either way (what the oracle needs)."""

    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    g: torch.Tensor
    beta: torch.Tensor
    g_decay: torch.Tensor
    gate_kwargs: dict = field(default_factory=dict)

    def oracle_args(self) -> tuple[torch.Tensor, ...]:
        """fp64 ``(q, k, v, g, beta)`` for :mod:`kimiops.kda.reference` (q, k as given)."""
        return self.q.double(), self.k.double(), self.v.double(), self.g_decay, self.beta.double()


def make_kda_inputs(
    B: int, T: int, H: int, K: int, V: int, HV: int | None = None, *, gate: str = "mild",
    raw_gate: bool = False, dtype: torch.dtype = torch.float32, device: str | torch.device = "cpu",
    generator: torch.Generator | None = None,
) -> KDAInputs:
    """Random KDA inputs with q, k already L2-normalized and beta in (0, 1).

    gate:
        ``"mild"``: log decay in about [-0.1, 0) (precomputed, ``raw_gate`` ignored).
        ``"softplus"``: Kimi-Linear-like, ``exp(A_log)`` in [1, 200], per-step ``|g|`` up to ~3e3.
        ``"lower_bound"``: lower-bound gate at -5 with ``A_log``.
    raw_gate: return the raw logits plus ``gate_kwargs`` (A_log, dt_bias, lower_bound) for the
        in-kernel gate; otherwise the precomputed log decay.
    """
    if gate not in GATE_FAMILIES:
        raise ValueError(f"gate: expected one of {GATE_FAMILIES}, got {gate!r}")
    HV = H if HV is None else HV
    kw = {"generator": generator, "device": "cpu"}
    q = l2norm(torch.randn(B, T, H, K, dtype=torch.float64, **kw))
    k = l2norm(torch.randn(B, T, H, K, dtype=torch.float64, **kw))
    v = torch.randn(B, T, HV, V, dtype=torch.float64, **kw)
    beta = torch.rand(B, T, HV, dtype=torch.float64, **kw) * 0.9 + 0.05
    gate_kwargs: dict = {}
    if gate == "mild":
        g_raw = None
        g_decay = -torch.rand(B, T, HV, K, dtype=torch.float64, **kw) * 0.1
    elif gate == "softplus":
        A_log = torch.log(torch.rand(HV, dtype=torch.float64, **kw) * 199 + 1)
        dt_bias = torch.randn(HV * K, dtype=torch.float64, **kw)
        g_raw = torch.randn(B, T, HV, K, dtype=torch.float64, **kw) * 5
        gate_kwargs = {"A_log": A_log.float(), "dt_bias": dt_bias.float()}
    else:
        A_log = torch.randn(HV, dtype=torch.float64, **kw)
        dt_bias = torch.randn(HV * K, dtype=torch.float64, **kw)
        g_raw = torch.randn(B, T, HV, K, dtype=torch.float64, **kw) * 3
        gate_kwargs = {"A_log": A_log.float(), "dt_bias": dt_bias.float(), "lower_bound": -5.0}
    if g_raw is not None:
        g_raw = g_raw.to(dtype).double()  # the logits the op sees, rounded like its input
        g_decay = kda_gate(g_raw, gate_kwargs["A_log"].double(), gate_kwargs["dt_bias"].double(),
                           gate_kwargs.get("lower_bound"), output_dtype=torch.float64)
    q, k, v, beta = (x.to(dtype) for x in (q, k, v, beta))
    if raw_gate and g_raw is not None:
        g = g_raw.to(dtype)
    else:
        g = g_decay.to(torch.float32 if dtype != torch.float64 else dtype)
        g_decay = g.double()
        gate_kwargs = {}
    dev = torch.device(device)
    gate_kwargs = {n: (t.to(dev) if isinstance(t, torch.Tensor) else t) for n, t in gate_kwargs.items()}
    return KDAInputs(q.to(dev), k.to(dev), v.to(dev), g.to(dev), beta.to(dev), g_decay.to(dev), gate_kwargs)


def offline_sm90() -> None:
    """Compile for sm_90 on a machine without a GPU (this process only, for good): Triton's JIT asks a
    stubbed driver for its target (sm_90), device (0) and stream (0); programmatic dependent launch
    counts as supported, as on Hopper; the KDA ops run their Triton kernels on CPU tensors instead of
    the torch path. Nothing can launch afterwards: run the calls inside
    ``kimiops.launch.compiling_in_background`` and read the compiled kernels from its futures. Not under
    ``TRITON_INTERPRET=1`` (the interpreter compiles nothing)."""
    import triton
    from triton.backends.compiler import GPUTarget

    from kimiops.kda import backend, runner
    from kimiops.kda.kernels import chunk, recurrent

    class Sm90Offline:
        def get_current_target(self):
            return GPUTarget("cuda", 90, 32)

        def get_current_device(self):
            return 0

        def get_current_stream(self, device=None):
            return 0

    triton.runtime.driver.set_active(Sm90Offline())
    torch._C._cuda_getDevice = lambda: 0  # the decode launcher's raw device query
    chunk.supports_pdl = recurrent.supports_pdl = lambda device: True
    backend.kda_backend = runner.kda_backend = lambda *args, **kwargs: "triton"
