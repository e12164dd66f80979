"""Can FLA 0.6's chunk_kda run in Triton's interpreter (to compare accuracy without a GPU)? Unpacks the
fla-core wheel into a temporary folder, makes three of its loops interpreter-friendly (a runtime
``range`` over tensors, ``.to`` on a Python loop index), skips the autotuners' timing and lets 1-element
tensors serve as indices; then runs its forward stages on one fp32 and one bf16 input and compares
the first chunk with torch. Needs einops beside the wheel (``pip install --target``).

    python3 benchmarks/results/cpu_checks_20261205_s44/fla_interpreter_probe.py .whl/fla_core-0.6.0-py3-none-any.whl
"""
import os
import sys
import tempfile
import zipfile

os.environ["TRITON_INTERPRET"] = "1"
import torch  # noqa: E402
import triton.runtime.interpreter as interp  # noqa: E402
from triton.runtime.autotuner import Autotuner  # noqa: E402

site = tempfile.mkdtemp()
zipfile.ZipFile(sys.argv[1]).extractall(site)
EDITS = {
    "fla/ops/kda/chunk_intra_token_parallel.py": [(
        "for j in range(i_ts, min(i_t + 1, min(T, i_ts + BC))):",
        "for j in range(int(i_ts), min(int(i_t) + 1, min(int(T), int(i_ts) + BC))):")],
    "fla/ops/common/chunk_delta_h.py": [("i_t_int64 = i_t.to(tl.int64)", "i_t_int64 = tl.full([], i_t, tl.int64)")],
}
for path, edits in EDITS.items():
    f = os.path.join(site, path)
    src = open(f).read()
    for old, new in edits:
        assert old in src, (path, old)
        src = src.replace(old, new)
    open(f, "w").write(src)
sys.path.insert(0, site)

Autotuner.do_bench = property(lambda self: (lambda fn, quantiles=None: [0.0, 0.0, 0.0]))  # no timing
_patch_tensor = interp._patch_lang_tensor


def _patch_tensor_with_index(tensor, scope):
    _patch_tensor(tensor, scope)
    scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))  # 1-element scalars


interp._patch_lang_tensor = _patch_tensor_with_index

from fla.ops.common.chunk_delta_h import chunk_gated_delta_rule_fwd_h  # noqa: E402
from fla.ops.gla.chunk import chunk_gla_fwd_o_gk  # noqa: E402
from fla.ops.kda.chunk_intra import chunk_kda_fwd_intra  # noqa: E402

LN2 = 0.6931471805599453
T, H, K, V, C = 128, 2, 128, 128, 64
for dtype in (torch.float32, torch.bfloat16):
    torch.manual_seed(0)
    g = -0.1 * torch.rand(1, T, H, K)
    G = g.view(1, T // C, C, H, K).cumsum(2).view(1, T, H, K)             # natural-log cumsum per chunk
    q = torch.randn(1, T, H, K).to(dtype)
    k = torch.nn.functional.normalize(torch.randn(1, T, H, K), dim=-1).to(dtype)
    v = torch.randn(1, T, H, V).to(dtype)
    beta = torch.rand(1, T, H).to(dtype)
    w, u, qg, kg, Aqk, Akk = chunk_kda_fwd_intra(q=q, k=k, v=v, gk=G / LN2, beta=beta, scale=K ** -0.5, chunk_size=C)
    h, v_new, _ = chunk_gated_delta_rule_fwd_h(k=kg, w=w, u=u, gk=G / LN2, initial_state=None,
                                               output_final_state=True, chunk_size=C)
    o = chunk_gla_fwd_o_gk(q=q, v=v_new, g=G / LN2, A=Aqk, h=h, scale=K ** -0.5, chunk_size=C)
    # torch, first chunk of head 0 (state 0): A_kk, its inverse, w, and o = A_qk u
    qq, kk, bb, GG = q[0, :C, 0].double(), k[0, :C, 0].double(), beta[0, :C, 0].double(), G[0, :C, 0].double()
    dec = torch.exp(GG[:, None, :] - GG[None, :, :])
    A = torch.tril((kk[:, None] * kk[None] * dec).sum(-1), -1) * bb[:, None]
    inv = torch.linalg.inv(torch.eye(C, dtype=torch.float64) + A)
    w_ref = inv @ (kk * bb[:, None] * torch.exp(GG))
    u_ref = inv @ (v[0, :C, 0].double() * bb[:, None])
    o_ref = torch.tril((qq[:, None] * kk[None] * dec).sum(-1)) * K ** -0.5 @ u_ref
    err = lambda x, r: ((x[0, :C, 0].double() - r).abs().max() / r.abs().max()).item()  # noqa: E731
    print(f"{str(dtype):15s} stored dtypes: Akk {Akk.dtype}, w {w.dtype}, u {u.dtype}, kg {kg.dtype}, h {h.dtype}; "
          f"first chunk max rel err: inverse {err(Akk, inv):.1e}, w {err(w, w_ref):.1e}, u {err(u, u_ref):.1e}, "
          f"o {err(o, o_ref):.1e}")
