"""Stage 1's register cap (``INTRA_CONFIG["maxnreg"]``, 168) against 144 (7 CTAs of 2 warps per SM
instead of 6) and, for the lower-bound gate's anchored variant, 128: CUDA-graph medians of stage 1
alone and of the whole call, caps alternating in one process, two rounds; o and the final state of
every cap compared bit for bit with 168's (a register cap changes allocation, not arithmetic).
Offline sm_90 spills: ``cpu_checks_20261201_s33/intra_register_caps.log``.

    PYTHONPATH=$PWD:$PWD/benchmarks python3 benchmarks/results/logs_h200_20261201l/scripts/regcap_ab.py
"""
import torch

import bench_kda_prefill as bk

CAPS = {"lb": (168, 144, 128), "gate": (168, 144), "g": (168, 144)}
CASES = [("B8_T1024", 8, 1024), ("B1_T8192", 1, 8192)]
REP = 30


def main():
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}", flush=True)
    for name, B, T in CASES:
        for mode, caps in CAPS.items():
            c = bk.make_case(B, T, mode)
            ht = torch.empty(B, bk.HV, bk.K, bk.V, device="cuda")
            out = torch.empty_like(c["v"])
            ref, res = None, {cap: [] for cap in caps}
            for cap in caps:
                intra = dict(bk.INTRA_CONFIG, maxnreg=cap)
                bk.ours_fn(c, ht, out, intra)()
                torch.cuda.synchronize()
                bits = (out.clone(), ht.clone())
                if ref is None:
                    ref = bits
                same = torch.equal(bits[0].view(torch.int16), ref[0].view(torch.int16)) and \
                    torch.equal(bits[1].view(torch.int32), ref[1].view(torch.int32))
                print(f"  {name} {mode} maxnreg={cap}: bits equal to 168's: {same}", flush=True)
            for rnd in range(2):
                for cap in caps:
                    intra = dict(bk.INTRA_CONFIG, maxnreg=cap)
                    s1 = bk.bench_graph(bk.ours_fn(c, ht, out, intra, stage="intra"), REP)
                    whole = bk.bench_graph(bk.ours_fn(c, ht, out, intra), REP)
                    res[cap].append((s1, whole))
            line = ", ".join(f"{cap}: stage 1 {sum(x[0] for x in r) / 2 * 1e3:.1f} us, call "
                             f"{sum(x[1] for x in r) / 2 * 1e3:.1f} us" for cap, r in res.items())
            print(f"{name} {mode}: {line}", flush=True)
            del c, ht, out


if __name__ == "__main__":
    main()
