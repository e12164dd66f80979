"""Low-latency BF16 linear layers.

The public entry is :func:`kimiops.gemm.linear.linear` (re-exported as ``kimiops.linear``);
:mod:`kimiops.gemm.dispatch` chooses the implementation from measured tables,
:mod:`kimiops.gemm.skinny` holds the Triton kernel.
"""
