"""Variant R: the first token's loads (q, k, g, v, beta) issued before the state tile's load."""
import sys
p = sys.argv[1]
src = open(p).read().split("\n")
i_a = next(i for i, l in enumerate(src) if l.startswith("    # ---- state tile"))
i_h0 = next(i for i in range(i_a, len(src)) if src[i].startswith("    if HAS_H0:"))
i_b = next(i for i, l in enumerate(src) if l.startswith("    # ---- token loop"))
i_e = next(i for i in range(i_b, len(src)) if src[i].startswith("    c_b = tl.load(p_b + bos"))
new = src[:i_h0] + src[i_b:i_e + 1] + src[i_h0:i_b] + src[i_e + 1:]
open(p, "w").write("\n".join(new))
