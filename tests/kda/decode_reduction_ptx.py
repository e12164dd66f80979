"""Offline sm_90 PTX of the decode kernel's reductions, for ``test_recurrent_kernel.py`` (no GPU needed).

Run as a script in a process of its own, without Triton's interpreter (the CPU tests turn it on). Compiles
the decode kernel for each ``DIM,V_FIRST,N[,DTYPE,STATE]`` argument (32 value heads, inputs in ``DTYPE``: bf16
by default, or fp16 / fp32; the softplus gate, L2 norms and beta sigmoid in the kernel; batch mode, so ``N``
picks the tile config; ``STATE`` ``pool``, the default, or ``none`` for no initial state) with the driver
stubbed (``kimiops.testing.offline_sm90``), and prints a JSON object mapping each argument to ``[stores,
fused]``:

- ``stores``: unpredicated ``st.shared`` instructions that write the result of a butterfly reduction (a
  layout conversion of a reduced tensor whose copies every lane writes);
- ``fused``: how many ``fma`` in those reductions (followed back through ``add.f32`` and
  ``shfl.sync.bfly`` from the stored registers) take a shuffled value as an operand. Such an FMA rounds
  its own product and its partner's differently, so the lanes' copies differ and the store races
  (benchmarks/results/logs_20261206_s56/, docs/history/decode.md).

    python3 tests/kda/decode_reduction_ptx.py 16,0,1 32,1,2,fp32,none [...]
"""
import json
import re
import sys

import torch

import kimiops
from kimiops.launch import compiling_in_background
from kimiops.testing import offline_sm90

_INSTR = re.compile(r"^\s*(@!?%p\d+\s+)?([a-z][\w.:]*)\s+(.*?);\s*$")


def reduction_stores(ptx: str) -> tuple[int, int]:
    """``(stores, fused)`` as the module docstring defines them."""
    defs, stores = {}, []
    for line in ptx.splitlines():
        m = _INSTR.match(line)
        if not m:
            continue
        pred, op, args = m.groups()
        regs = re.findall(r"%r\d+", args)
        if op.startswith("st.shared"):
            if not pred:
                stores.append(re.findall(r"%r\d+", args.split("],", 1)[1]) if "]," in args else [])
        elif regs:
            defs[regs[0]] = (op, regs[1:])
    n_stores = n_fused = 0
    for values in stores:
        seen, todo, shuffled, fused = set(), list(values), False, 0
        while todo:
            reg = todo.pop()
            if reg in seen or reg not in defs:
                continue
            seen.add(reg)
            op, srcs = defs[reg]
            if op.startswith("shfl.sync.bfly"):
                shuffled = True
                todo += srcs
            elif op.startswith("add.f32"):
                todo += srcs
            elif op.startswith("fma") and any(defs.get(s, ("",))[0].startswith("shfl.sync.bfly") for s in srcs):
                fused += 1
                todo += [s for s in srcs if defs.get(s, ("",))[0].startswith("shfl.sync.bfly")]
        if shuffled:
            n_stores += 1
            n_fused += fused
    return n_stores, n_fused


DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def decode_ptx(dim: int, v_first: bool, n: int, dtype: str = "bf16", state: str = "pool") -> str:
    heads = 32
    q = torch.randn(n, 1, heads, dim, dtype=DTYPES[dtype])
    pool = dict(initial_state=torch.zeros(n, heads, dim, dim), ssm_state_indices=torch.arange(n, dtype=torch.int32))
    with compiling_in_background(1) as mode:
        kimiops.fused_recurrent_kda(q, q, q, q, torch.randn(n, 1, heads, dtype=q.dtype), use_qk_l2norm_in_kernel=True,
                                    use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True, A_log=torch.zeros(heads),
                                    dt_bias=torch.zeros(heads * dim), state_v_first=v_first,
                                    **{"pool": pool, "none": {}}[state])
    (kernel,) = [fk.future.result() for fk in mode.future_kernels.values()]
    return kernel.asm["ptx"]


def main() -> None:
    offline_sm90()
    out = {}
    for arg in sys.argv[1:]:
        dim, v_first, n, *rest = arg.split(",")
        out[arg] = reduction_stores(decode_ptx(int(dim), bool(int(v_first)), int(n), *rest))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
