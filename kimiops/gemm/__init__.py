"""Low-latency BF16 linear layers: :func:`kimiops.gemm.linear.linear` and its dispatch tables."""

from kimiops.gemm.linear import linear

__all__ = ["linear"]
