"""Integer helpers for host code (launch grids, tile counts).

``triton.cdiv`` and ``triton.next_power_of_2`` are ``@triton.jit`` functions: called from Python
they go through the JIT's call machinery, 1.6-1.7 us each on the CPU machine against 0.06-0.07 us
for these (``benchmarks/results/prefill_host_cpu_20261130j.log``), and launch paths call them
several times per launch. These return the same values for the non-negative ints they get.
"""

from __future__ import annotations

__all__ = ["cdiv", "next_power_of_2"]


def cdiv(a: int, b: int) -> int:
    """``ceil(a / b)`` for ints, ``b > 0``."""
    return -(-a // b)


def next_power_of_2(n: int) -> int:
    """The smallest power of two ``>= n`` for ``n >= 1`` (0 for 0, as Triton's)."""
    return 0 if n <= 0 else 1 << (n - 1).bit_length()
