"""Offline sm_90 compiles of stage 1 (4 variants: gate 0/1 x PDL 0/1, B8 T1024), on one thread or on
threads: does Triton's compile run in parallel in threads (GIL released in the LLVM passes; ptxas a
subprocess)? From the repository root, in an empty Triton cache each:
    python3 benchmarks/results/cpu_checks_20261206_s53/scripts/stage1_compile_threads.py <workers>
"""
import os, sys, time, tempfile
from concurrent.futures import ThreadPoolExecutor
sys.path.insert(0, os.getcwd()); sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks/tools"))
workers = int(sys.argv[1])
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()
from int_specialization_sass import as_launched, intra_const, intra_options
from sm90_compile import INTRA_POINTERS, compile_sm90
from kimiops.kda.kernels import chunk_intra as ci
def job(gate, pdl):
    ones, div = as_launched(dict(T=1024, N=8, NT=32, slot_off=0, n_programs=0), False)
    const = dict(intra_const(False, 0, pdl), GATE=gate, HAS_A=gate != 0, HAS_DT_BIAS=gate != 0, **{n: 1 for n in ones})
    const.pop("LOG_N", None)
    return compile_sm90(ci.chunk_intra_kernel, INTRA_POINTERS, const, intra_options(), divisible=div)[1]
jobs = [(g, p) for g in (0, 1) for p in (0, 1)]
t0 = time.perf_counter()
if workers == 1:
    res = [job(*j) for j in jobs]
else:
    with ThreadPoolExecutor(workers) as ex:
        res = list(ex.map(lambda j: job(*j), jobs))
print(f"workers {workers}: {len(jobs)} compiles in {time.perf_counter() - t0:.1f} s")
