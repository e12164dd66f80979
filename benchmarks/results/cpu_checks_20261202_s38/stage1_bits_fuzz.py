"""Random calls (shapes, GVA, varlen with short sequences, gate families, fp16 / fp32, q/k L2 norm on or
off) through two source trees in Triton's interpreter, bit for bit: the score products of the
factored tiles with themselves (22c14b1) against masked operands (bbb611a). Run once per tree with
the same seed, then compare:

    cd /tmp && PYTHONPATH=<tree> python3 <this file> dump <out.pt> [calls]
    python3 <this file> compare <a.pt> <b.pt>
"""
import os
import random
import sys

os.environ.setdefault("TRITON_INTERPRET", "1")
import torch  # noqa: E402


def dump(path, calls):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "kda"))
    import kimiops
    import test_chunk_kernel as tck
    rng = random.Random(38)
    out = {"tree": os.path.dirname(kimiops.__file__), "calls": []}
    for i in range(calls):
        gate = rng.choice(["none", "softplus", "lower_bound"])
        mild = gate == "lower_bound" or rng.random() < 0.5
        dtype = rng.choice([torch.float16, torch.float32])
        H = rng.choice([1, 2])
        HV = H * rng.choice([1, 2])
        K, V = rng.choice([(32, 32), (64, 32), (64, 64)])
        l2 = rng.random() < 0.7
        lens = [rng.choice([0, 1, 5, 31, 32, 33, 64, 70]) for _ in range(rng.choice([1, 2, 3]))]
        T = sum(lens)
        cu = torch.tensor([0] + [sum(lens[:j + 1]) for j in range(len(lens))], dtype=torch.int32)
        inp = tck.make_inputs(1, max(T, 1), H, HV, K, V, gate, dtype, "cpu", seed=i, mild=mild)
        if T == 0:
            continue
        if not l2:  # keys the caller normalized (raw randn keys make the delta rule diverge: |k|^2 beta > 2)
            for name in ("q", "k"):
                inp[name] = torch.nn.functional.normalize(inp[name].float(), dim=-1).to(dtype)
        ht = torch.zeros(len(lens), HV, K, V)
        o = tck.run(inp, gate=gate, scale=K ** -0.5, ht=ht, cu_seqlens=cu, l2=l2)
        desc = f"{i}: {gate} mild={mild} {str(dtype)[6:]} H={H} HV={HV} K={K} V={V} l2={l2} lens={lens}"
        out["calls"].append((desc, o, ht))
    torch.save(out, path)
    print("dumped", out["tree"], len(out["calls"]), "calls")


def compare(a, b):
    da, db = torch.load(a), torch.load(b)
    print(da["tree"], "vs", db["tree"])
    same_all = True
    for (desc, oa, ha), (_, ob, hb) in zip(da["calls"], db["calls"]):
        ints = {torch.float16: torch.int16, torch.bfloat16: torch.int16, torch.float32: torch.int32}
        same = torch.equal(oa.view(ints[oa.dtype]), ob.view(ints[ob.dtype])) and torch.equal(ha.view(torch.int32), hb.view(torch.int32))
        same_all &= same
        fin = [bool(torch.isfinite(o.float()).all() and torch.isfinite(h).all()) for o, h in ((oa, ha), (ob, hb))]
        print(f"{desc}: bit-identical {same}, finite {fin[0]} / {fin[1]}")
    print("all bit-identical:", same_all)


if __name__ == "__main__":
    if sys.argv[1] == "dump":
        dump(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 12)
    else:
        compare(sys.argv[2], sys.argv[3])
