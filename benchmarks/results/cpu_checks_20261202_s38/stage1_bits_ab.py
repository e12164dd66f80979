"""Stage 1's outputs of two source trees, bit for bit, in Triton's interpreter (CPU, fp16 inputs),
and each tree's relative error against the fp64 recurrence: the score products of the factored
tiles with themselves (pairs selected from the product) against masked operands (bbb611a), and the
candidates after it. Run once per tree, then compare:

    cd /tmp && PYTHONPATH=<tree> python3 <this file> dump <out.pt>
    python3 <this file> compare <a.pt> <b.pt>
"""
import os
import sys

os.environ.setdefault("TRITON_INTERPRET", "1")
import torch  # noqa: E402

CASES = [(gate, mild) for gate in ("none", "softplus", "lower_bound") for mild in (True, False)
         if not (gate == "lower_bound" and not mild)]


def dump(path):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "kda"))
    import kimiops
    import test_chunk_kernel as tck
    from kimiops.testing import rel_err
    out = {"tree": os.path.dirname(kimiops.__file__)}
    for gate, mild in CASES:
        inp = tck.make_inputs(2, 80, 2, 4, 64, 64, gate, torch.float16, "cpu", seed=3, mild=mild)
        ht = torch.zeros(2, 4, 64, 64)
        o = tck.run(inp, gate=gate, scale=64 ** -0.5, ht=ht)
        ro, rs = tck.reference(inp, gate=gate, scale=64 ** -0.5)
        out[f"{gate}/{mild}"] = (o, ht, rel_err(o, ro), rel_err(ht, rs))
    torch.save(out, path)
    print("dumped", out["tree"])


def compare(a, b):
    da, db = torch.load(a), torch.load(b)
    print(da.pop("tree"), "vs", db.pop("tree"))
    for key in da:
        (oa, ha, *ea), (ob, hb, *eb) = da[key], db[key]
        same = torch.equal(oa.view(torch.int16), ob.view(torch.int16)) and torch.equal(ha.view(torch.int32), hb.view(torch.int32))
        errs = "".join(f", rel err o / state {e[0]:.3e} / {e[1]:.3e}" for e in (ea, eb) if e)
        print(f"{key}: o and final state bit-identical: {same}; max |o diff| {(oa.float() - ob.float()).abs().max():.3e}, "
              f"finite {bool(torch.isfinite(ob.float()).all() and torch.isfinite(hb).all())}{errs}")


if __name__ == "__main__":
    dump(sys.argv[2]) if sys.argv[1] == "dump" else compare(sys.argv[2], sys.argv[3])
