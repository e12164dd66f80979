"""Valid public KDA calls (drawn as ``fuzz_public_ops.py`` draws them) with one argument made wrong:
the call must raise ``ValueError`` or ``TypeError`` whose message starts with that argument's name
(``"name: expected ..."``), never another exception, and never return. Value checks (indices,
``cu_seqlens``, accepted counts) run with ``KIMIOPS_DEBUG=1``, as on a GPU they only run then;
CPU tensors are always read.

    PYTHONPATH=$PWD python3 benchmarks/tools/fuzz_bad_inputs.py [--calls 300] [--seed 0] [--device cpu|cuda]
        [-v]
"""
import argparse
import os
import sys

if __name__ == "__main__" and "cuda" not in sys.argv[1:]:  # before triton is imported
    os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402

from fuzz_public_ops import Draw, call_args, describe, draw_call, make_tensors  # noqa: E402

Q, K_, V_, G, BETA = range(5)  # positions of q, k, v, g, beta


def _resized(t: torch.Tensor, dim: int, delta: int = 1) -> torch.Tensor:
    shape = list(t.shape)
    shape[dim] += delta
    return torch.zeros(shape, dtype=t.dtype, device=t.device)


def _indices_name(c):
    return "ssm_state_indices" if c["op"] == "fused_recurrent_kda" else "initial_state_indices"


# Each mutation: (label, applies(c, kw), mutate(c, ins, kw) -> the names an error may start with).
def _m_head_dim(c, ins, kw):
    ins[K_] = _resized(ins[K_], 3)
    return ("k", "q")


def _m_tokens_v(c, ins, kw):
    ins[V_] = _resized(ins[V_], 1)
    return ("v",)


def _m_gate_dim(c, ins, kw):
    ins[G] = _resized(ins[G], 3)
    return ("g",)


def _m_beta_heads(c, ins, kw):
    ins[BETA] = _resized(ins[BETA], 2)
    return ("beta",)


def _m_q_dtype(c, ins, kw):
    ins[Q] = ins[Q].double()
    return ("q",)


def _m_k_dtype(c, ins, kw):
    ins[K_] = ins[K_].to(torch.float32 if ins[Q].dtype != torch.float32 else torch.float16)
    return ("k",)


def _m_q_strided(c, ins, kw):
    q = ins[Q]
    ins[Q] = torch.zeros(*q.shape[:-1], 2 * q.shape[-1], dtype=q.dtype, device=q.device)[..., ::2]
    return ("q",)


def _m_gva(c, ins, kw):
    ins[V_] = _resized(ins[V_], 2)
    ins[G] = _resized(ins[G], 2)
    ins[BETA] = _resized(ins[BETA], 2)
    return ("v",)


def _m_lower_bound_low(c, ins, kw):
    kw["lower_bound"] = -6.0
    return ("lower_bound",)


def _m_lower_bound_zero(c, ins, kw):
    kw["lower_bound"] = 0.0
    return ("lower_bound",)


def _m_no_A_log(c, ins, kw):
    kw["A_log"] = None
    return ("A_log",)


def _m_A_log_shape(c, ins, kw):
    kw["A_log"] = _resized(kw["A_log"], 0)
    return ("A_log",)


def _m_dt_bias(c, ins, kw):
    kw["dt_bias"] = _resized(kw["dt_bias"], 0, -1)
    return ("dt_bias",)


def _m_scale(c, ins, kw):
    kw["scale"] = float("nan")
    return ("scale",)


def _m_cu_dtype(c, ins, kw):
    kw["cu_seqlens"] = kw["cu_seqlens"].float()
    return ("cu_seqlens",)


def _m_cu_total(c, ins, kw):
    cu = kw["cu_seqlens"].clone()
    cu[-1] += 1
    kw["cu_seqlens"] = cu
    return ("cu_seqlens",)


def _m_cu_order(c, ins, kw):
    cu = kw["cu_seqlens"].clone()
    cu[0] = cu[-1] + 1  # not starting at 0 and decreasing
    kw["cu_seqlens"] = cu
    return ("cu_seqlens",)


def _m_pool_shape(c, ins, kw):
    kw["initial_state"] = _resized(kw["initial_state"], 1)
    return ("initial_state",)


def _m_pool_dtype(c, ins, kw):
    kw["initial_state"] = kw["initial_state"].double()
    return ("initial_state",)


def _m_dense_count(c, ins, kw):
    kw["initial_state"] = _resized(kw["initial_state"], 0)
    return ("initial_state",)


def _m_index_range(c, ins, kw):
    name = _indices_name(c)
    idx = kw[name].clone()
    idx.view(-1)[0] = kw["initial_state"].shape[0]  # one past the last slot
    kw[name] = idx
    return (name,)


def _m_index_dtype(c, ins, kw):
    name = _indices_name(c)
    kw[name] = kw[name].float()
    return (name,)


def _m_index_count(c, ins, kw):
    name = _indices_name(c)
    kw[name] = _resized(kw[name], 0)
    return (name,)


def _m_accepted(c, ins, kw):
    acc = kw["num_accepted_tokens"].clone()
    acc[0] = kw["ssm_state_indices"].shape[1] + 1
    kw["num_accepted_tokens"] = acc
    return ("num_accepted_tokens",)


def _m_track_idx(c, ins, kw):
    idx = kw["track_chunk_idx"].clone()
    idx[0] = 10 ** 4  # past every sequence
    kw["track_chunk_idx"] = idx
    return ("track_chunk_idx",)


def _m_track_dtype(c, ins, kw):
    kw["track_state"] = kw["track_state"].double()
    return ("track_state",)


def _m_cu_with_batch(c, ins, kw):
    B = ins[Q].shape[0]
    kw["cu_seqlens"] = torch.arange(B + 1, dtype=torch.int32, device=ins[Q].device) * ins[Q].shape[1]
    return ("cu_seqlens", "q")


def _m_cu_2d(c, ins, kw):
    kw["cu_seqlens"] = kw["cu_seqlens"][None]
    return ("cu_seqlens",)


def _m_pool_layout(c, ins, kw):
    kw["initial_state"] = kw["initial_state"].transpose(-1, -2).contiguous()  # the other layout's shape
    return ("initial_state",)


def _m_index_below(c, ins, kw):
    name = _indices_name(c)
    idx = kw[name].clone()
    idx.view(-1)[0] = -2
    kw[name] = idx
    return (name,)


def _m_indices_without_state(c, ins, kw):
    N = kw["cu_seqlens"].shape[0] - 1 if kw["cu_seqlens"] is not None else ins[Q].shape[0]
    kw[_indices_name(c)] = torch.zeros(N, dtype=torch.int32, device=ins[Q].device)
    return (_indices_name(c), "initial_state")


def _m_track_alone(c, ins, kw):
    del kw["track_chunk_idx"]
    return ("track_state", "track_chunk_idx")


def _m_neg_eigval(c, ins, kw):
    kw["allow_neg_eigval"] = True
    kw["use_beta_sigmoid_in_kernel"] = False
    return ("allow_neg_eigval",)


MUTATIONS = [
    ("k head dim", lambda c, kw: True, _m_head_dim),
    ("v tokens", lambda c, kw: True, _m_tokens_v),
    ("g head dim", lambda c, kw: True, _m_gate_dim),
    ("beta heads", lambda c, kw: True, _m_beta_heads),
    ("q fp64", lambda c, kw: True, _m_q_dtype),
    ("k dtype", lambda c, kw: True, _m_k_dtype),
    ("q strided", lambda c, kw: c["K"] > 1, _m_q_strided),
    ("HV not a multiple of H", lambda c, kw: c["H"] == 2 and c["HV"] == 2, _m_gva),
    ("lower_bound -6", lambda c, kw: True, _m_lower_bound_low),
    ("lower_bound 0", lambda c, kw: True, _m_lower_bound_zero),
    ("no A_log", lambda c, kw: c["gate"] == "softplus", _m_no_A_log),
    ("A_log shape", lambda c, kw: kw.get("A_log") is not None, _m_A_log_shape),
    ("dt_bias size", lambda c, kw: kw.get("dt_bias") is not None, _m_dt_bias),
    ("scale nan", lambda c, kw: True, _m_scale),
    ("cu_seqlens dtype", lambda c, kw: kw["cu_seqlens"] is not None, _m_cu_dtype),
    ("cu_seqlens total", lambda c, kw: kw["cu_seqlens"] is not None, _m_cu_total),
    ("cu_seqlens order", lambda c, kw: kw["cu_seqlens"] is not None, _m_cu_order),
    ("pool shape", lambda c, kw: c["state"] == "pool", _m_pool_shape),
    ("pool dtype", lambda c, kw: c["state"] == "pool", _m_pool_dtype),
    ("dense state count", lambda c, kw: c["state"] == "dense", _m_dense_count),
    ("index past the pool", lambda c, kw: c["state"] == "pool", _m_index_range),
    ("index dtype", lambda c, kw: c["state"] == "pool", _m_index_dtype),
    ("index count", lambda c, kw: c["state"] == "pool", _m_index_count),
    ("accepted count", lambda c, kw: c["spec"], _m_accepted),
    ("track index", lambda c, kw: c["track"], _m_track_idx),
    ("track dtype", lambda c, kw: c["track"], _m_track_dtype),
    ("neg eigval without sigmoid", lambda c, kw: True, _m_neg_eigval),
    ("cu_seqlens with B > 1", lambda c, kw: kw["cu_seqlens"] is None and c["B"] > 1, _m_cu_with_batch),
    ("cu_seqlens 2-D", lambda c, kw: kw["cu_seqlens"] is not None, _m_cu_2d),
    ("pool in the other layout", lambda c, kw: c["state"] != "none" and c["K"] != c["V"], _m_pool_layout),
    ("index -2", lambda c, kw: c["state"] == "pool", _m_index_below),
    ("indices without a state", lambda c, kw: c["state"] == "none", _m_indices_without_state),
    ("track_state alone", lambda c, kw: c["track"], _m_track_alone),
]


def fuzz(calls: int, seed: int = 0, *, device="cpu", out=print, verbose: bool = False) -> tuple[int, dict]:
    """``calls`` bad calls; returns the number that did not raise the expected error and how many
    times each mutation ran. Sets ``KIMIOPS_DEBUG=1`` for the run."""
    device = torch.device(device)
    previous = os.environ.get("KIMIOPS_DEBUG")
    os.environ["KIMIOPS_DEBUG"] = "1"
    failed, counts = 0, {label: 0 for label, _, _ in MUTATIONS}
    try:
        for i in range(calls):
            d = Draw(seed * 100003 + i)
            c = draw_call(d, cuda=device.type == "cuda")
            x = make_tensors(d, c)
            fn, ins, kw, _ = call_args(c, x, d.pick(["triton", "torch"]), device)
            usable = [m for m in MUTATIONS if m[1](c, kw)]
            fewest = min(counts[m[0]] for m in usable)  # the least-run mutations first: rare ones get their turns
            label, _, mutate = d.pick([m for m in usable if counts[m[0]] == fewest])
            names = mutate(c, ins, kw)
            counts[label] += 1
            try:
                fn(*ins, **kw)
                verdict = "returned"
            except (ValueError, TypeError) as exc:  # "q: expected ..." or "q, v: expected ..."
                named = str(exc).split(":")[0].split(", ")
                verdict = None if any(n in named for n in names) else f"message: {exc}"
            except Exception as exc:  # any other exception is a failure of the checks
                verdict = f"raised {type(exc).__name__}: {exc}"
            if verdict:
                failed += 1
                out(f"[{i}] FAIL {label} (expected an error naming {'/'.join(names)}): {verdict}\n      {describe(c)}")
            elif verbose:
                out(f"[{i}] ok   {label}: {describe(c)}")
    finally:
        if previous is None:
            os.environ.pop("KIMIOPS_DEBUG", None)
        else:
            os.environ["KIMIOPS_DEBUG"] = previous
    return failed, counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    failed, counts = fuzz(args.calls, args.seed, device=args.device, out=lambda s: print(s, flush=True),
                          verbose=args.verbose)
    print("mutations run: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    print(f"{args.calls} bad calls, seed {args.seed}, {args.device}: {failed} not refused as expected")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
