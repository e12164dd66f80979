import subprocess
import sys
import time

import pytest

from kimiops.cli import main


def test_info_runs(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "family" in out and "chunk_kda" in out and "linear" in out


def test_info_names_the_linear_kernels_of_the_sm90_table(capsys, monkeypatch):
    """On an sm90 device, info says auto takes the Triton kernel and, in the buckets that name it,
    the Gluon one (counted from the committed table)."""
    import kimiops.arch
    from kimiops.gemm.dispatch import table_for
    from kimiops.gemm.skinny_gluon import GluonConfig

    monkeypatch.setattr(kimiops.arch, "device_family", lambda device=None: "sm90")
    assert main(["info"]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if l.strip().startswith("linear"))
    gluon = sum(isinstance(b.config, GluonConfig) for e in table_for("sm90").values() for b in e.buckets)
    assert "auto: triton" in line and (f"gluon in {gluon} M buckets" in line) == (gluon > 0)


@pytest.mark.parametrize("argv, message", [
    (["--prompts", "0"], "--prompts: expected an integer >= 1, got 0"),
    (["--max-prompt-len", "-3"], "--max-prompt-len: expected an integer >= 1, got -3"),
    (["--decode-steps", "-1"], "--decode-steps: expected an integer >= 0, got -1"),
    (["--prompts", "x"], "--prompts: expected an integer, got 'x'"),
    (["--device", "bogus"], "--device: expected cpu, cuda or cuda:<index>, got 'bogus'"),
    (["--device", "meta"], "--device: expected cpu, cuda or cuda:<index>, got 'meta'"),
])
def test_demo_arguments_are_usage_errors(argv, message, capsys):
    """Bad demo arguments exit with argparse's usage error (code 2), not a traceback with the code
    of a failed check (1)."""
    with pytest.raises(SystemExit) as exc:
        main(["demo", *argv])
    assert exc.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="a machine without CUDA")
def test_demo_on_cuda_without_cuda_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--device", "cuda"])
    assert exc.value.code == 2 and "no CUDA device" in capsys.readouterr().err


def test_demo_without_decode_steps_runs_prefill_only(capsys):
    assert main(["demo", "--prompts", "1", "--max-prompt-len", "8", "--decode-steps", "0", "--no-progress",
                 "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "PASS" in out and "+ 0 decode tokens" in out


def test_bench_help():
    proc = subprocess.run([sys.executable, "-m", "kimiops.cli", "bench", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "prefill" in proc.stdout


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="CPU default size")
def test_demo_on_cpu_passes_its_check_quickly():
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "kimiops.cli", "demo", "--no-progress"], capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS" in proc.stdout and "prefill" in proc.stdout and "decode" in proc.stdout
    assert elapsed < 120


