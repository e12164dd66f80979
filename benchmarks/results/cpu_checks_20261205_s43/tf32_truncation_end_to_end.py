"""End-to-end errors on aligned keys with slow decay (``cpu_checks_20261204_s42/aligned_keys_end_to_end.py``)
, on random inputs in the tests' gate regimes (``random_end_to_end.py``) and on the bf16 aligned-keys
case of ``benchmarks/tools/prefill_aligned_keys_accuracy.py`` (T = 1024, H = 4) with the H200's tf32 truncation emulated in Triton's interpreter, which otherwise multiplies tf32 dots in
fp32: a copy of the tree's kimiops whose stage-1 chunk-level inverse products (N = D A_off,
Tinv = (I - N) D) and w's product (w = Tinv x) take operands with the 13 low significand bits cleared,
as the MMA reads fp32 operands (dot_operands.py). Rounded operands (``tf32_operand``) pass unchanged,
as on the GPU; the state stage's tf32 product u = tb v already sees tf32-exact operands (tb rounded,
bf16 / fp16 v exact).

    python3 tf32_truncation_end_to_end.py <tree> [<tree> ...]
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = [os.path.join(HERE, "..", "cpu_checks_20261204_s42", "aligned_keys_end_to_end.py"),
         os.path.join(HERE, "random_end_to_end.py"),
         os.path.join(HERE, "..", "..", "tools", "prefill_aligned_keys_accuracy.py")]
TRUNC = '''@triton.jit
def _tf32_truncated(x):
    """fp32 ``x`` as the MMA reads it (emulation for the interpreter)."""
    return (x.to(tl.int32, bitcast=True) & -0x2000).to(tl.float32, bitcast=True)


@triton.jit
def _chain_tail'''
EDITS = [("n_mat = tl.dot(dblk, a_off_kk,", "n_mat = tl.dot(_tf32_truncated(dblk), _tf32_truncated(a_off_kk),"),
         ("t_inv = tl.dot(eye - n_mat, dblk,", "t_inv = tl.dot(_tf32_truncated(eye - n_mat), _tf32_truncated(dblk),"),
         ("b_w = tl.dot(t_inv, x,", "b_w = tl.dot(_tf32_truncated(t_inv), _tf32_truncated(x),"),
         ("@triton.jit\ndef _chain_tail", TRUNC)]


def main():
    for tree in sys.argv[1:]:
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(os.path.join(tree, "kimiops"), os.path.join(tmp, "kimiops"))
            shutil.copytree(os.path.join(tree, "tests"), os.path.join(tmp, "tests"))
            path = os.path.join(tmp, "kimiops", "kda", "kernels", "chunk_intra.py")
            src = open(path).read()
            for old, new in EDITS:
                if src.count(old) != 1:
                    raise SystemExit(f"{tree}: expected one '{old}' in chunk_intra.py")
                src = src.replace(old, new)
            open(path, "w").write(src)
            head = subprocess.run(["git", "-C", tree, "log", "--format=%h", "-1"], capture_output=True, text=True)
            for case in CASES:
                out = subprocess.run([sys.executable, case], cwd=tmp, capture_output=True, text=True,
                                     env=dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=tmp))
                print(f"# {tree} at {head.stdout.strip()}, {os.path.basename(case)}, truncation emulated")
                print(out.stdout + out.stderr[-2000:] if out.returncode else out.stdout, end="", flush=True)


if __name__ == "__main__":
    main()
