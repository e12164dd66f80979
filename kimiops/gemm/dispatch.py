"""Which implementation of ``linear`` runs for a (capability family, M, N, K), from measured tables.

A table is a JSON file ``kimiops/gemm/tables/<family>.json`` written by
``benchmarks/bench_linear.py`` on a GPU of that family::

    {"format": 2, "family": "sm90", "device": ..., "date": ..., "torch": ..., "triton": ...,
     "min_speedup": 1.03,
     "shapes": {"<N>x<K>": {"block_k": 128, "k_split": 1024, "block_n": 64,
                            "buckets": [{"m_max": 1, "backend": "triton", "block_m": 16,
                                         "num_warps": 4, "num_stages": 4, "pdl": true,
                                         "us": 5.1, "cublas_us": 9.9}, ...]}}}

Buckets are sorted by ``m_max``; bucket ``i`` covers ``m_max[i-1] < M <= m_max[i]``. A bucket
says ``"triton"`` only where the kernel beat cuBLAS by ``min_speedup`` in that measurement.
``block_k``/``k_split`` (the reduction order over K) and ``block_n`` (the weight-tile height,
which also fixes the MMA instruction family: ``mma.sync`` below 64 rows, ``wgmma`` from 64 on
Hopper) belong to the shape, not the bucket, so a row's bits do not depend on M under the
Triton backend. ``pdl`` (optional, default false) launches with programmatic dependent launch
and prefetches the first weight tiles into L2 before waiting on the previous kernel (sm90+); it
does not change any result bit. Format 1 (``block_n`` per bucket) is no longer read.

A bucket may instead say ``"gluon"`` (sm90 tables only) with its own ``block_k``, ``k_split``,
``num_stages``, ``pdl`` and ``cluster`` (optional, default false: the split-K hand-off in
distributed shared memory, same bits as without): the Gluon kernel of
:mod:`kimiops.gemm.skinny_gluon`, whose K order is then that bucket's, so under ``auto`` a row's
bits may change between M buckets (as they do where a bucket says cuBLAS). ``backend="triton"``
never runs it.

``backend="auto"`` takes the table's kernel config where one exists and cuBLAS everywhere else
(no table for the family, shape not listed, M outside every bucket, bucket says cuBLAS, Gluon
bucket on a Triton without Gluon).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from kimiops.arch import GLUON_LINEAR_FAMILIES
from kimiops.gemm import skinny_gluon
from kimiops.gemm.skinny import SkinnyConfig, block_m_for, default_config, default_stages
from kimiops.gemm.skinny_gluon import GluonConfig

TABLE_DIR = Path(__file__).resolve().parent / "tables"
TABLE_FORMAT = 2
_TILE_FIELDS = ("block_m", "num_warps", "num_stages")


@dataclass(frozen=True)
class Bucket:
    m_max: int
    config: SkinnyConfig | GluonConfig | None  # None: cuBLAS won (or no kernel won by the margin)


@dataclass(frozen=True)
class ShapeEntry:
    block_k: int
    k_split: int
    block_n: int
    buckets: tuple[Bucket, ...]

    def bucket(self, M: int) -> Bucket | None:
        for b in self.buckets:
            if M <= b.m_max:
                return b
        return None


def shape_key(N: int, K: int) -> str:
    return f"{N}x{K}"


def _field(source: str, where: str, entry: dict, name: str, kind: type = int):
    value = entry.get(name)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ValueError(f"{source}: {where}.{name}: expected {kind.__name__}, got {value!r}")
    return value


def parse_table(data: dict, source: str = "table") -> dict[str, ShapeEntry]:
    """Validate a decoded table and return its shapes as ``{"<N>x<K>": ShapeEntry}``."""
    if not isinstance(data, dict) or data.get("format") != TABLE_FORMAT:
        raise ValueError(f"{source}: expected a JSON object with format {TABLE_FORMAT}")
    shapes = data.get("shapes")
    if not isinstance(shapes, dict):
        raise ValueError(f"{source}: expected an object under 'shapes', got {type(shapes).__name__}")
    parsed = {}
    for key, entry in shapes.items():
        where = f"shapes[{key!r}]"
        block_k = _field(source, where, entry, "block_k")
        k_split = _field(source, where, entry, "k_split")
        block_n = _field(source, where, entry, "block_n")
        SkinnyConfig(block_n=block_n, block_m=16, block_k=block_k, k_split=k_split)  # validates
        buckets = []
        for i, b in enumerate(entry.get("buckets", [])):
            bwhere = f"{where}.buckets[{i}]"
            m_max = _field(source, bwhere, b, "m_max")
            backend = _field(source, bwhere, b, "backend", str)
            if backend == "triton":
                tiles = {name: _field(source, bwhere, b, name) for name in _TILE_FIELDS}
                if "pdl" in b:
                    tiles["pdl"] = _field(source, bwhere, b, "pdl", bool)
                config = SkinnyConfig(block_n=block_n, block_k=block_k, k_split=k_split, **tiles)
            elif backend == "gluon":
                if data.get("family") not in GLUON_LINEAR_FAMILIES:
                    raise ValueError(f"{source}: {bwhere}.backend: 'gluon' runs on "
                                     f"{sorted(GLUON_LINEAR_FAMILIES)} only, the table is for {data.get('family')!r}")
                config = GluonConfig(block_k=_field(source, bwhere, b, "block_k"),
                                     k_split=_field(source, bwhere, b, "k_split"),
                                     num_stages=_field(source, bwhere, b, "num_stages"),
                                     pdl=_field(source, bwhere, b, "pdl", bool) if "pdl" in b else False,
                                     cluster=_field(source, bwhere, b, "cluster", bool) if "cluster" in b else False)
            elif backend == "cublas":
                config = None
            else:
                raise ValueError(f"{source}: {bwhere}.backend: expected 'triton', 'gluon' or 'cublas', got {backend!r}")
            buckets.append(Bucket(m_max, config))
        if [b.m_max for b in buckets] != sorted({b.m_max for b in buckets}):
            raise ValueError(f"{source}: {where}.buckets: expected strictly increasing m_max")
        parsed[key] = ShapeEntry(block_k, k_split, block_n, tuple(buckets))
    return parsed


@functools.lru_cache(maxsize=None)
def table_for(family: str) -> dict[str, ShapeEntry]:
    """The measured table of ``family`` (empty when none is committed)."""
    path = TABLE_DIR / f"{family}.json"
    if not path.is_file():
        return {}
    with path.open() as f:
        return parse_table(json.load(f), str(path))


def auto_config(family: str, M: int, N: int, K: int) -> SkinnyConfig | GluonConfig | None:
    """The kernel config ``auto`` runs for this problem (:class:`SkinnyConfig` for the Triton
    kernel, :class:`GluonConfig` for the Gluon one), or ``None`` for cuBLAS, which also stands in
    for a Gluon entry when this Triton has no Gluon."""
    entry = table_for(family).get(shape_key(N, K))
    bucket = entry.bucket(M) if entry is not None else None
    config = bucket.config if bucket is not None else None
    if isinstance(config, GluonConfig) and (M > skinny_gluon.MAX_M or not skinny_gluon.available()):
        return None
    return config


def triton_config(family: str, M: int, N: int, K: int) -> SkinnyConfig:
    """The config ``backend="triton"`` runs: the measured one where the table has it, otherwise
    the table's K decomposition and ``block_n`` for the shape (or the default ones) with default
    tiles, so every M of a shape sums over K in the same order."""
    entry = table_for(family).get(shape_key(N, K))
    if entry is None:
        return default_config(N, K, M)
    bucket = entry.bucket(M)
    if bucket is not None and isinstance(bucket.config, SkinnyConfig):
        return bucket.config
    return SkinnyConfig(block_n=entry.block_n, block_m=block_m_for(M), block_k=entry.block_k, k_split=entry.k_split,
                        num_stages=default_stages(entry.block_n, block_m_for(M), entry.block_k))
