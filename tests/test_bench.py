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
