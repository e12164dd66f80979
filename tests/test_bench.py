"""``kimiops bench`` plumbing that runs without a GPU: row extraction, table, plot."""

import json
from pathlib import Path

import pytest

from kimiops.bench import benchmarks_dir, floor_panel, plot, print_table, rows_of, speedup_panel, speedup_ticks

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


def _latest(pattern):
    files = sorted(RESULTS.glob(pattern))
    if not files:
        pytest.skip(f"no committed {pattern}")
    return json.loads(files[-1].read_text())


@pytest.mark.parametrize("op, pattern", [("prefill", "kda_prefill_*.json"), ("decode", "kda_decode_*.json"),
                                         ("linear", "linear_sm90*.json")])
def test_rows_from_committed_results(op, pattern, capsys, tmp_path):
    rows = rows_of(op, _latest(pattern))
    assert rows and all(r["ours_us"] > 0 for r in rows)
    print_table(rows)
    assert op in capsys.readouterr().out
    pytest.importorskip("matplotlib")
    assert plot(rows, tmp_path / "p.png", "t") and (tmp_path / "p.png").stat().st_size > 1000


def test_benchmark_scripts_are_found():
    assert benchmarks_dir() is not None


def _row(case, speedup, pct):
    return {"op": "linear", "case": case, "ours_us": 1.0, "baseline": "cuBLAS", "baseline_us": speedup,
            "speedup": speedup, "pct_floor": pct}


def test_speedup_bars_start_at_1x(tmp_path):
    """Bars run from the 1x line: down and red below 1x, up and green above; labelled; limits hold 1x and all bars."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba

    sel = [_row("slow", 0.64, 4.9), _row("fast", 1.44, 95.5), _row("none", None, None), _row("even", 1.0, 50.0)]
    fig, (ax, ax2) = plt.subplots(1, 2)
    try:
        speedup_panel(ax, sel)
        bars = ax.patches
        assert len(bars) == 3  # no bar without a baseline
        ends = sorted((min(b.get_y(), b.get_y() + b.get_height()), max(b.get_y(), b.get_y() + b.get_height()),
                       b.get_facecolor()) for b in bars)
        (lo0, hi0, c0), (lo1, hi1, c1), (lo2, hi2, c2) = ends
        assert (lo0, hi0) == pytest.approx((0.64, 1.0)) and c0 == to_rgba("tab:red")
        assert (lo1, hi1) == pytest.approx((1.0, 1.0)) and c1 == to_rgba("tab:green")
        assert (lo2, hi2) == pytest.approx((1.0, 1.44)) and c2 == to_rgba("tab:green")
        ylo, yhi = ax.get_ylim()
        assert ax.get_yscale() == "log" and ylo < 0.64 and yhi > 1.44
        assert [t.get_text() for t in ax.texts] == ["0.64x", "1.44x", "n/a", "1.00x"]
        assert 1.0 in list(ax.get_yticks())

        floor_panel(ax2, sel)
        assert len(ax2.patches) == 3 and ax2.get_ylim()[1] > 100
        assert [t.get_text() for t in ax2.texts] == ["4.9%", "95.5%", "n/a", "50.0%"]
    finally:
        plt.close(fig)
    assert plot(sel, tmp_path / "p.png", "t") and (tmp_path / "p.png").stat().st_size > 1000


def test_speedup_ticks():
    assert speedup_ticks(0.5, 1.25) == [0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.2]
    wide = speedup_ticks(0.05, 30)
    assert 1.0 in wide and len(wide) <= 9 and min(wide) >= 0.05 and max(wide) <= 30


def test_decode_config_names_round_trip(monkeypatch):
    """Every decode table config's name (bench_kda_decode's ``config_label``, printed in its table)
    parses back to that config (``decode_config_ab.parse_config``, what the A/B tool takes)."""
    tools = Path(__file__).resolve().parents[1] / "benchmarks" / "tools"
    monkeypatch.syspath_prepend(str(tools.parent))
    monkeypatch.syspath_prepend(str(tools))
    import decode_config_ab

    from kimiops.kda.kernels.recurrent import _CONFIGS

    configs = {cfg for rows in _CONFIGS.values() for _, cfg in rows}
    assert any(cfg.wait_first for cfg in configs) and any(cfg.early_inputs for cfg in configs)
    for cfg in configs:
        assert decode_config_ab.parse_config(decode_config_ab.config_name(cfg)) == cfg
    assert decode_config_ab.config_name(decode_config_ab.parse_config("32x4hew")) == "32x4hew"


def test_each_call_us_times_every_call_once_then_back_to_back(monkeypatch):
    """``each_call_us`` (the serving-loop tools' timer) calls each callable once with a
    synchronize around it, then all of them again back to back; its figures are positive and the
    mean counts a slow call the median ignores."""
    import time

    import torch

    from kimiops.bench.timing import each_call_us

    syncs, calls = [], []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: syncs.append(len(calls)))

    def call(i):
        def fn():
            calls.append(i)
            if i == 0 and len(calls) == 1:
                time.sleep(0.02)  # the first call is slow (as one that records)
        return fn

    t = each_call_us([call(i) for i in range(5)])
    assert calls == [0, 1, 2, 3, 4] * 2
    assert syncs[:10] == [0, 1, 1, 2, 2, 3, 3, 4, 4, 5] and syncs[-1] == 10
    assert 0 < t.until < t.until_mean and t.until_mean > 20000 / 5 * 0.9 and t.wall >= t.until and t.pace > 0
