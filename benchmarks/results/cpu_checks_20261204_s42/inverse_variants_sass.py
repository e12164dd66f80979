"""Offline sm_90 counts of three other forms of the candidate's inverse (branch exp/inverse-products,
candidate_inverse_products.patch), softplus gate: tf32x3 products, every product operand rounded to
tf32 first, and the product form over the whole 32x32 inverse (four squarings, 2-D dots). Each is
made from the candidate's chunk_intra.py by text substitution in a temporary worktree of the branch,
then counted there by benchmarks/tools/intra_sass_regions.py --gate.

    python3 inverse_variants_sass.py        # from the repository root; needs the branch
"""
import os
import subprocess
import tempfile

CAND = '''        l1 = tf32_operand(dg_kk, INV_PREC)
        l2 = tl.dot(l1, l1, input_precision=INV_PREC)
        l4 = tl.dot(l2, l2, input_precision=INV_PREC)
        l8 = tl.dot(l4, l4, input_precision=INV_PREC)
        d3 = tl.dot(-l1, l2, eye3 - l1 + l2, input_precision=INV_PREC)   # (I - L)(I + L^2)
        d3 = tl.dot(d3, l4, d3, input_precision=INV_PREC)                  # ... (I + L^4)
        d3 = tl.dot(d3, l8, d3, input_precision=INV_PREC)                  # ... (I + L^8)
'''
R = "tf32_operand({}, INV_PREC)"
VARIANTS = {
    "tf32x3 products": CAND.replace("tf32_operand(dg_kk, INV_PREC)", "dg_kk").replace('INV_PREC)', '"tf32x3")'),
    "every operand rounded": '''        l1 = tf32_operand(dg_kk, INV_PREC)
        l2 = tf32_operand(tl.dot(l1, l1, input_precision=INV_PREC), INV_PREC)
        l4 = tf32_operand(tl.dot(l2, l2, input_precision=INV_PREC), INV_PREC)
        l8 = tf32_operand(tl.dot(l4, l4, input_precision=INV_PREC), INV_PREC)
        d3 = tl.dot(-l1, l2, eye3 - dg_kk + l2, input_precision=INV_PREC)
        d3 = tl.dot(tf32_operand(d3, INV_PREC), l4, d3, input_precision=INV_PREC)
        d3 = tl.dot(tf32_operand(d3, INV_PREC), l8, d3, input_precision=INV_PREC)
''',
}
FULL_OLD_END = "    else:  # ablation: keep a_off_kk live"
FULL = '''        a_full = tf32_operand(a_off_kk + tl.reshape(tl.where(blk_same, dg_kk[:, :, None, :], 0.0), (C, C)), INV_PREC)
        a2 = tl.dot(a_full, a_full, input_precision=INV_PREC)
        a4 = tl.dot(a2, a2, input_precision=INV_PREC)
        a8 = tl.dot(a4, a4, input_precision=INV_PREC)
        a16 = tl.dot(a8, a8, input_precision=INV_PREC)
        t_inv = tl.dot(-a_full, a2, eye - a_full + a2, input_precision=INV_PREC)
        t_inv = tl.dot(t_inv, a4, t_inv, input_precision=INV_PREC)
        t_inv = tl.dot(t_inv, a8, t_inv, input_precision=INV_PREC)
        t_inv = tl.dot(t_inv, a16, t_inv, input_precision=INV_PREC)
'''


def count(src: str, label: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        wt = os.path.join(tmp, "wt")
        subprocess.run(["git", "worktree", "add", "-q", "--detach", wt, "exp/inverse-products"], check=True)
        try:
            path = os.path.join(wt, "kimiops/kda/kernels/chunk_intra.py")
            open(path, "w").write(src)
            out = subprocess.run(["python3", "benchmarks/tools/intra_sass_regions.py", "--gate"], cwd=wt,
                                 capture_output=True, text=True).stdout
            lines = [x for x in out.splitlines() if "registers" in x or x.startswith(("between", "per warp"))]
            print(f"## {label}\n" + "\n".join(lines), flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", wt], check=True)


def main() -> None:
    base = subprocess.run(["git", "show", "exp/inverse-products:kimiops/kda/kernels/chunk_intra.py"],
                          capture_output=True, text=True, check=True).stdout
    assert CAND in base
    count(base, "the candidate")
    for label, body in VARIANTS.items():
        count(base.replace(CAND, body), label)
    a = base.index("        eye3 = tl.where(ii == jj, 1.0, 0.0)")
    b = base.index(FULL_OLD_END)
    count(base[:a] + FULL + base[b:], "the whole 32x32 inverse as products (2-D dots)")


if __name__ == "__main__":
    main()
