"""``kimiops bench`` plumbing that runs without a GPU: row extraction, table, plot."""

import json
from pathlib import Path

import pytest

from kimiops.bench import benchmarks_dir, plot, print_table, rows_of

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
