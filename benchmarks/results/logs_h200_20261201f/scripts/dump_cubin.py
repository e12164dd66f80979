"""Launch the N = 1 packed decode once (as one_token_ab.py) with the kimiops tree first on sys.path and save
the compiled decode kernels' cubins and metadata to OUT/<label>_*.cubin / .json, for offline SASS diffs.

    PYTHONPATH=<tree>:$PWD/benchmarks python3 dump_cubin.py <label> <out>
"""
import hashlib
import json
import os
import sys

import torch

from kimiops.kda.kernels import recurrent as rec  # first: the tree under test
import kimiops  # noqa: E402

label, out = sys.argv[1], sys.argv[2]
H, K, V, N = 32, 128, 128, 1
gen = torch.Generator(device="cuda").manual_seed(0)
bf = torch.bfloat16
A_log = torch.log(torch.rand(H, device="cuda", generator=gen) * 15 + 1)
dt_bias = torch.randn(H * K, device="cuda", generator=gen)
pool = torch.randn(8, H, V, K, device="cuda", generator=gen) * 0.1
mixed = torch.randn(N, 3 * H * K, device="cuda", generator=gen).to(bf)
raw_g = torch.randn(1, N, H, K, device="cuda", generator=gen).to(bf)
raw_beta = torch.randn(1, N, H, device="cuda", generator=gen).to(bf)
rs = mixed.stride(0)
q, k, v = (mixed.as_strided((N, 1, H, K), (rs, rs, K, 1), off * H * K) for off in range(3))
idx = torch.tensor([3], dtype=torch.int32, device="cuda")
for _ in range(3):
    kimiops.fused_recurrent_kda(q, k, v, raw_g.view(N, 1, H, K), raw_beta.view(N, 1, H), None, pool,
                                use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True,
                                A_log=A_log, dt_bias=dt_bias, state_v_first=True, ssm_state_indices=idx)
torch.cuda.synchronize()
for i, (key, launch) in enumerate(rec._launch_cache.items()):
    ck = launch.compiled
    cubin = ck.asm["cubin"]
    with open(os.path.join(out, f"{label}_{i}.cubin"), "wb") as f:
        f.write(cubin)
    meta = {"key": repr(key), "sha1": hashlib.sha1(cubin).hexdigest()[:12], "n_regs": ck.n_regs,
            "metadata": {k: repr(x) for k, x in ck.metadata._asdict().items()} if hasattr(ck.metadata, "_asdict")
            else repr(ck.metadata)}
    with open(os.path.join(out, f"{label}_{i}.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(label, i, meta["sha1"], ck.n_regs, repr(key)[:300])
