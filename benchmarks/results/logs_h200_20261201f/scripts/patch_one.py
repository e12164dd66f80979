"""Variant O: batch mode with one token per sequence (T == 1) known at compile time: bounds are constants and
the loop issues no next-token loads."""
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace("""    ST_ROW: tl.constexpr, HAS_PARENT: tl.constexpr, EARLY_INPUTS: tl.constexpr,
):""", """    ST_ROW: tl.constexpr, HAS_PARENT: tl.constexpr, EARLY_INPUTS: tl.constexpr, ONE_TOKEN: tl.constexpr = False,
):""")
old = """    else:
        bos = T * 0
        eos = T
"""
assert old in s
s = s.replace(old, """    elif ONE_TOKEN:
        bos = n64 * 0
        eos = bos + 1
    else:
        bos = T * 0
        eos = T
""")
old = """        n_q, n_k, n_g, n_v, n_b = _token_inputs(p_q, p_k, p_g, p_v, p_b, t + 1, s_qt, s_kt, s_gt, s_vt, s_bt,
                                                mask_k, mask_v, t + 1 < eos)
"""
assert old in s
s = s.replace(old, """        if ONE_TOKEN:
            n_q, n_k, n_g, n_v, n_b = c_q, c_k, c_g, c_v, c_b
        else:
            n_q, n_k, n_g, n_v, n_b = _token_inputs(p_q, p_k, p_g, p_v, p_b, t + 1, s_qt, s_kt, s_gt, s_vt, s_bt,
                                                    mask_k, mask_v, t + 1 < eos)
""")
# launcher: ONE_TOKEN from the env for the experiment (batch mode, T == 1)
old = """        int(token_steps), st_row, parents is not None, bool(early),
    )"""
assert old in s
s = s.replace(old, """        int(token_steps), st_row, parents is not None, bool(early),
        bool(os.environ.get("KIMIOPS_ONE_TOKEN") == "1" and not varlen and T == 1 and not spec),
    )""")
open(p, "w").write(s)
