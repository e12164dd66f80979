"""``kimiops`` command line: ``info``, ``demo``, ``bench``."""

from __future__ import annotations

import argparse
import platform
import sys

import torch


def cmd_info(_args) -> int:
    import triton

    from kimiops.arch import device_family
    from kimiops.gemm.dispatch import table_for
    from kimiops.gemm.skinny_gluon import GluonConfig
    from kimiops.kda.dispatch import kda_backend

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    family = device_family(device)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or "cpu"
    print(f"python   {platform.python_version()}")
    print(f"torch    {torch.__version__}")
    print(f"triton   {triton.__version__}")
    print(f"device   {device} ({name})")
    print(f"family   {family}")
    print("backends (automatic choice for tensors on this device):")
    for op in ("chunk_kda", "fused_recurrent_kda"):
        try:
            chosen = kda_backend(op, None, device)
        except RuntimeError as err:
            chosen = f"error: {err}"
        print(f"  {op:<20} {chosen}")
    table = table_for(family)
    if family == "cpu":
        linear = "torch (CPU tensors)"
    elif table:
        gluon = sum(isinstance(b.config, GluonConfig) for e in table.values() for b in e.buckets)
        kernels = f"triton (gluon in {gluon} M buckets)" if gluon else "triton"
        linear = (f"auto: {kernels} where the measured {family} table says it wins ({len(table)} shapes), "
                  "cuBLAS elsewhere")
    else:
        linear = f"cublas (no measured table for {family})"
    print(f"  {'linear':<20} {linear}")
    return 0


def cmd_demo(args) -> int:
    from kimiops.demo import DemoConfig, run_demo

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    cfg = DemoConfig.for_device(
        device, prompts=args.prompts, max_prompt_len=args.max_prompt_len, decode_steps=args.decode_steps,
        seed=args.seed, progress=not args.no_progress,
    )
    return run_demo(cfg)


def cmd_bench(args) -> int:
    from kimiops.bench import run_bench

    return run_bench(args.op, out=args.out, quick=args.quick)


def _count(minimum: int):
    """argparse type: an int >= ``minimum`` (argparse turns the error into usage and exit code 2)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {value}")
        return value
    return parse


def _device(text: str) -> str:
    """argparse type: a torch device string this machine can run on (``cpu``, ``cuda``, ``cuda:i``)."""
    try:
        device = torch.device(text)
    except (RuntimeError, ValueError):
        raise argparse.ArgumentTypeError(f"expected cpu, cuda or cuda:<index>, got {text!r}") from None
    if device.type not in ("cpu", "cuda"):
        raise argparse.ArgumentTypeError(f"expected cpu, cuda or cuda:<index>, got {text!r}")
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise argparse.ArgumentTypeError(f"{text!r}: this torch build or machine has no CUDA device")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise argparse.ArgumentTypeError(f"{text!r}: only {torch.cuda.device_count()} CUDA device(s)")
    return text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kimiops", description="KDA and BF16 linear kernels for Kimi models")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="versions, device, capability family, backend per op").set_defaults(func=cmd_info)
    demo = sub.add_parser("demo", help="run a Kimi-Linear-shaped KDA layer: prefill + decode, checked")
    demo.add_argument("--device", type=_device, help="cpu or cuda[:i] (default: cuda if available)")
    demo.add_argument("--prompts", type=_count(1), help="number of requests")
    demo.add_argument("--max-prompt-len", type=_count(1), help="longest prompt (others are random, shorter)")
    demo.add_argument("--decode-steps", type=_count(0), help="decode steps after prefill (0: prefill only)")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--no-progress", action="store_true", help="no progress bar")
    demo.set_defaults(func=cmd_demo)
    bench = sub.add_parser("bench", help="benchmarks side by side with FLA and cuBLAS")
    bench.add_argument("op", nargs="?", default="all", choices=["prefill", "decode", "linear", "all"])
    bench.add_argument("--out", help="directory for JSON results and the PNG plot")
    bench.add_argument("--quick", action="store_true", help="a small subset of cases")
    bench.set_defaults(func=cmd_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
