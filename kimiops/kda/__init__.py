"""Kimi Delta Attention: chunked prefill, recurrent decode, the serving backend and references."""

from kimiops.kda.backend import KDABackend
from kimiops.kda.decode import fused_recurrent_kda
from kimiops.kda.gate import kda_gate, l2norm
from kimiops.kda.prefill import chunk_kda

__all__ = ["KDABackend", "chunk_kda", "fused_recurrent_kda", "kda_gate", "l2norm"]
