"""``kimiops bench``: the benchmark scripts side by side with FLA and cuBLAS, one summary.

It measures the machine's two ceilings (copy bandwidth, bf16 matrix rate), runs the benchmark
scripts of the source tree (``benchmarks/bench_kda_prefill.py``, ``bench_kda_decode.py``,
``bench_linear.py``; each compares against FLA when ``fla-core`` is installed, and cuBLAS, in its
own process) with their JSON written under ``OUT/raw``, then prints one table (medians, speedup,
% of the hardware floor), and writes ``OUT/summary.json`` and ``OUT/summary.png``.
"""

from __future__ import annotations

import glob
import json
import math
import os
import subprocess
import sys
from pathlib import Path

OPS = ("prefill", "decode", "linear")
SCRIPTS = {"prefill": "bench_kda_prefill.py", "decode": "bench_kda_decode.py", "linear": "bench_linear.py"}
RESULT_GLOBS = {"prefill": "kda_prefill_*.json", "decode": "kda_decode_*.json", "linear": "linear_*.json"}


def benchmarks_dir() -> Path | None:
    """The source tree's ``benchmarks/`` (present with ``pip install -e .`` or a checkout)."""
    candidate = Path(__file__).resolve().parents[2] / "benchmarks"
    return candidate if (candidate / SCRIPTS["prefill"]).is_file() else None


def script_args(op: str, raw: Path, quick: bool) -> list[str]:
    args = ["--out", str(raw)]
    if op == "linear":
        args += ["--table-out", str(raw / "linear_table.json")]
        if quick:
            args += ["--shapes", "2048x4096,7168x2048", "--ms", "1,8"]
    elif op == "decode" and quick:
        args += ["--ns", "1", "8", "64", "--no-sweep"]
    elif op == "prefill" and quick:
        args += ["--quick", "--no-sweep"]
    return args


def rows_of(op: str, result: dict) -> list[dict]:
    """Summary rows ``{op, case, ours_us, baseline, baseline_us, speedup, pct_floor}`` of one result file."""
    rows = []
    if op == "prefill":
        for r in result["rows"]:
            fla = r.get("fla_graph_ms") or r.get("fla_eager_ms")
            rows.append({"op": op, "case": f"{r['case']} {r['mode']}", "ours_us": r["ours_graph_ms"] * 1e3,
                         "baseline": "FLA", "baseline_us": fla * 1e3 if fla else None, "speedup": r.get("speedup"),
                         "pct_floor": r.get("pct_of_floor")})
    elif op == "decode":
        for r in result["rows"]:
            fla = r.get("fla_graph_us")
            rows.append({"op": op, "case": f"N={r['N']}", "ours_us": r["ours_graph_us"], "baseline": "FLA",
                         "baseline_us": fla, "speedup": fla / r["ours_graph_us"] if fla else None,
                         "pct_floor": r.get("ours_pct_bw")})
    elif op == "linear":
        for c in result["cells"]:
            rows.append({"op": op, "case": f"M={c['M']} {c['N']}x{c['K']}", "ours_us": c["auto_graph_us"],
                         "baseline": "cuBLAS", "baseline_us": c["cublas_graph_us"], "speedup": c["speedup_graph"],
                         "pct_floor": c.get("auto_pct_copy_bw")})
    return rows


def print_table(rows: list[dict]) -> None:
    print(f"{'op':<8} {'case':<26} {'ours us':>10} {'baseline':>9} {'base us':>10} {'speedup':>8} {'% floor':>8}")
    for r in rows:
        base = f"{r['baseline_us']:10.2f}" if r["baseline_us"] else f"{'-':>10}"
        speed = f"{r['speedup']:7.2f}x" if r["speedup"] else f"{'-':>8}"
        floor = f"{r['pct_floor']:7.1f}%" if r["pct_floor"] is not None else f"{'-':>8}"
        print(f"{r['op']:<8} {r['case']:<26} {r['ours_us']:10.2f} {r['baseline']:>9} {base} {speed} {floor}")


def speedup_limits(speedups: list[float], margin: float = 1.25) -> tuple[float, float]:
    """Log-axis y-limits holding 1x and every speedup, with a ``margin`` factor (room for the labels) either side."""
    lo, hi = min([1.0, *speedups]), max([1.0, *speedups])
    return lo / margin, hi * margin


def speedup_ticks(lo: float, hi: float, most: int = 9) -> list[float]:
    """Tick values for a log speedup axis over ``[lo, hi]``: the finest of a few 1-2-5-like ladders that puts at
    most ``most`` ticks in range (matplotlib's log locator leaves a sub-decade range above 1x without labels)."""
    ladders = ((1, 1.2, 1.4, 1.6, 1.8, 2, 2.5, 3, 4, 5, 6, 7, 8, 9), (1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 2, 5), (1, 3),
               (1,))
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    for ladder in ladders:
        ticks = [round(m * 10.0 ** d, 6) for d in decades for m in ladder]
        ticks = [t for t in ticks if lo <= t <= hi]
        if len(ticks) <= most:
            return ticks
    return ticks


def speedup_panel(ax, sel: list[dict]) -> None:
    """Speedup bars on a log axis, drawn from the 1x line: up and green for >= 1x, down and red for < 1x; each bar
    labelled with its value (rows without a baseline get no bar and an ``n/a`` label at 1x)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    speed = [r["speedup"] if r["speedup"] and r["speedup"] > 0 else None for r in sel]
    shown = [(x, s) for x, s in enumerate(speed) if s is not None]
    if shown:
        ax.bar([x for x, _ in shown], [s - 1 for _, s in shown], bottom=1,
               color=["tab:green" if s >= 1 else "tab:red" for _, s in shown])
    ax.set_yscale("log")
    ax.set_ylim(*speedup_limits([s for _, s in shown]))
    ax.set_xlim(-0.6, len(sel) - 0.4)
    ax.axhline(1.0, color="black", linewidth=0.8)
    for x, s in enumerate(speed):
        up = s is None or s >= 1
        ax.annotate("n/a" if s is None else f"{s:.2f}x", xy=(x, 1 if s is None else s), xytext=(0, 3 if up else -3),
                    textcoords="offset points", ha="center", va="bottom" if up else "top", fontsize=8)
    ax.yaxis.set_major_locator(FixedLocator(speedup_ticks(*ax.get_ylim())))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{value:g}x"))
    ax.tick_params(axis="y", labelsize=8)
    ax.set_ylabel(f"speedup vs {sel[0]['baseline']}")


def floor_panel(ax, sel: list[dict]) -> None:
    """% of the hardware floor per row, each bar labelled with its value (``n/a`` where not measured)."""
    pct = [r["pct_floor"] for r in sel]
    shown = [(x, p) for x, p in enumerate(pct) if p is not None]
    if shown:
        ax.bar([x for x, _ in shown], [p for _, p in shown], color="tab:blue")
    ax.set_ylim(0, 1.1 * max([100.0, *(p for _, p in shown)]))  # headroom for the labels
    ax.set_xlim(-0.6, len(sel) - 0.4)
    ax.set_yticks(range(0, 101, 20))
    for x, p in enumerate(pct):
        ax.annotate("n/a" if p is None else f"{p:.1f}%", xy=(x, p or 0), xytext=(0, 3), textcoords="offset points",
                    ha="center", va="bottom", fontsize=8)
    ax.set_ylabel("% of hardware floor")


def plot(rows: list[dict], path: Path, title: str) -> bool:
    """Two panels per op: speedup over the baseline (log scale, bars from 1x) and % of the hardware floor."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install 'kimiops[bench]'): no PNG written")
        return False
    ops = [op for op in OPS if any(r["op"] == op for r in rows)]
    fig, axes = plt.subplots(len(ops), 2, figsize=(16, 4.2 * len(ops)), squeeze=False)
    for i, op in enumerate(ops):
        sel = [r for r in rows if r["op"] == op]
        speedup_panel(axes[i][0], sel)
        axes[i][0].set_title(f"{op}: speedup (higher is better)")
        floor_panel(axes[i][1], sel)
        axes[i][1].set_title(f"{op}: % of floor")
        for ax in axes[i]:
            ax.set_xticks(range(len(sel)))
            ax.set_xticklabels([r["case"] for r in sel], rotation=60, ha="right", fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def run_bench(op: str, out: str | None = None, quick: bool = False) -> int:
    """Run ``op`` (or ``all``); returns a process exit code."""
    import torch

    from kimiops.bench.timing import copy_bandwidth, environment, matmul_rate

    if not torch.cuda.is_available():
        print("kimiops bench: needs a CUDA GPU (the benchmarks time GPU kernels)", file=sys.stderr)
        return 2
    root = benchmarks_dir()
    if root is None:
        print("kimiops bench: the benchmark scripts come with the source tree; install with "
              "`pip install -e .` from a checkout", file=sys.stderr)
        return 2
    out_dir = Path(out or "bench_out")
    raw = out_dir / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    env = environment()
    bw, rate = copy_bandwidth(), matmul_rate()
    print(f"{env.get('device')}: copy bandwidth {bw / 1e12:.2f} TB/s (read+write), bf16 matmul {rate / 1e12:.0f} TFLOP/s")
    ops = OPS if op == "all" else (op,)
    rows, failed = [], []
    child_env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(root.parent), os.environ.get("PYTHONPATH")])))
    for name in ops:
        before = set(glob.glob(str(raw / RESULT_GLOBS[name])))
        cmd = [sys.executable, str(root / SCRIPTS[name]), *script_args(name, raw, quick)]
        print(f"\n== {name}: {' '.join(cmd[1:])}", flush=True)
        if subprocess.run(cmd, env=child_env).returncode != 0:
            failed.append(name)
        new = sorted(set(glob.glob(str(raw / RESULT_GLOBS[name]))) - before, key=os.path.getmtime)
        new = [p for p in new if not p.endswith("linear_table.json")]
        if new:
            with open(new[-1]) as fh:
                rows += rows_of(name, json.load(fh))
    print()
    print_table(rows)
    speedups = [r["speedup"] for r in rows if r["speedup"]]
    geo = math.exp(sum(math.log(s) for s in speedups) / len(speedups)) if speedups else None
    summary = {**env, "copy_bandwidth_TBps": bw / 1e12, "bf16_matmul_TFLOPs": rate / 1e12, "rows": rows,
               "geomean_speedup": geo, "failed": failed}
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    png = out_dir / "summary.png"
    title = f"kimiops on {env.get('device')} ({env['date'][:10]}): CUDA-graph medians vs FLA / cuBLAS"
    if plot(rows, png, title):
        print(f"wrote {out_dir / 'summary.json'} and {png}")
    if failed:
        print(f"benchmarks that failed: {failed}", file=sys.stderr)
        return 1
    return 0
