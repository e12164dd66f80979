"""PDL order A/B over configs and batch sizes: our decode kernel as committed (R: gdc_launch_dependents,
then gdc_wait) against the same kernel with gdc_wait first (W, vLLM's order; run 2: N = 1 2.89-3.01
against 3.13-3.27 us, N = 2 at 8x4 4.30-4.35 against 4.17-4.23), both loaded in one process. CUDA-graph
medians of 20 chained calls, best of 2 interleaved rounds; same slots (and cold slots up to N = 16);
batch mode and the cu_seqlens form; % of copy bandwidth.

    PYTHONPATH=$PWD:$PWD/benchmarks python3 order_sweep.py
"""
import importlib.util
import sys

import torch

sys.path.insert(0, "benchmarks/tools")
import bench_kda_decode as bench  # noqa: E402
from decode_config_ab import config_name, parse_config  # noqa: E402
from kimiops.bench.timing import copy_bandwidth, graph_us  # noqa: E402
from kimiops.kda.kernels import recurrent as rec  # noqa: E402

OLD = """        tl.extra.cuda.gdc_launch_dependents()
        tl.extra.cuda.gdc_wait()"""
NEW = """        tl.extra.cuda.gdc_wait()
        tl.extra.cuda.gdc_launch_dependents()"""
src = open(rec.__file__).read()
assert src.count(OLD) == 1
open("/tmp/rec_W.py", "w").write(src.replace(OLD, NEW))
spec = importlib.util.spec_from_file_location("rec_W", "/tmp/rec_W.py")
rec_w = importlib.util.module_from_spec(spec)
sys.modules["rec_W"] = rec_w
spec.loader.exec_module(rec_w)
MODS = {"R": rec, "W": rec_w}

SMALL = ["8x1", "8x2", "8x4", "16x2", "16x4", "32x4"]
LARGE = ["8x1", "8x1h", "8x2", "16x2"]
NS = [int(x) for x in sys.argv[1:]] or [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
gen = torch.Generator(device="cuda").manual_seed(0)
bw = copy_bandwidth()
print(f"{torch.cuda.get_device_name()} torch {torch.__version__}; copy bandwidth {bw / 1e12:.3f} TB/s", flush=True)
pool = torch.randn(bench.GRAPH_CALLS * 16 + 2 * max(NS), bench.HV, bench.V, bench.K, device="cuda", generator=gen) * 0.1
for N in NS:
    case = bench.Case(N, pool, gen)
    forms = {"varlen": (case.q, case.k, case.v, case.g, case.beta)}
    forms["batch"] = tuple(t.view(N, 1, *t.shape[2:]) for t in forms["varlen"])
    names = SMALL if N <= 8 else LARGE
    for form, x in forms.items():
        cfgs = [parse_config(c) for c in names]
        if form == "batch":
            cfgs += [parse_config(c + "e") for c in names]
        slot_modes = {"same": [case.idx] * bench.GRAPH_CALLS}
        if N <= 16:
            slot_modes["cold"] = case.idx_sets

        def calls(mod, cfg, idx_sets):
            def one(idx):
                kw = case.launch_kwargs(idx)
                if form == "batch":
                    kw["cu_seqlens"] = None
                return lambda: mod.recurrent_kda_fwd_config(cfg[0], cfg[1], *x, stream_hints=cfg[2],
                                                            early_inputs=cfg[3], **kw)
            return [one(i) for i in idx_sets]

        best = {}
        for _ in range(2):
            for mode, idx_sets in slot_modes.items():
                for cfg in cfgs:
                    for m, mod in MODS.items():
                        us = graph_us(calls(mod, cfg, idx_sets))
                        key = (mode, cfg, m)
                        best[key] = min(best.get(key, us), us)
        table = rec.config_for(N * bench.HV, form == "varlen")
        for mode in slot_modes:
            cells = []
            for cfg in cfgs:
                r, w = best[(mode, cfg, "R")], best[(mode, cfg, "W")]
                cells.append(f"{config_name(cfg)}{'*' if cfg == table else ''} {r:.2f}/{w:.2f}")
            bw_note = ""
            if mode == "same":
                top_r = min(best[(mode, c, "R")] for c in cfgs)
                top_w = min(best[(mode, c, "W")] for c in cfgs)
                bw_note = (f" | best R {top_r:.2f} ({100 * case.nbytes() / (top_r * 1e-6) / bw:.1f}%) "
                           f"W {top_w:.2f} ({100 * case.nbytes() / (top_w * 1e-6) / bw:.1f}%)")
            print(f"N={N} {form} {mode} (R/W us): " + "; ".join(cells) + bw_note, flush=True)
