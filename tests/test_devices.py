"""Inputs on a CUDA device other than the current one: every launch runs on the inputs' device.

Triton launches on the current device's stream, so the ops switch to the inputs' device around
their kernel launches (``kimiops.streams.on_device``). The GPU test needs two GPUs.
"""

import contextlib

import pytest
import torch

import kimiops
from kimiops.streams import on_device


def test_on_device_is_a_no_op_off_cuda():
    assert isinstance(on_device(torch.device("cpu")), contextlib.nullcontext)


@pytest.mark.gpu
def test_gpu_on_device_is_a_no_op_on_the_current_device():
    assert isinstance(on_device(torch.device("cuda", torch.cuda.current_device())), contextlib.nullcontext)


def _kda_inputs(device, T=300, H=2, K=64, V=64):
    g = torch.Generator().manual_seed(0)
    q, k = (torch.randn(1, T, H, K, generator=g) for _ in range(2))
    v = torch.randn(1, T, H, V, generator=g)
    gl = -torch.rand(1, T, H, K, generator=g) * 0.1
    beta = torch.rand(1, T, H, generator=g)
    return [x.to(device=device, dtype=torch.bfloat16) for x in (q, k, v, gl, beta)]


def _all_ops(device):
    """chunk_kda, fused_recurrent_kda and linear (Triton backends) on tensors of ``device``."""
    q, k, v, g, beta = _kda_inputs(device)
    o_p, s_p = kimiops.chunk_kda(q, k, v, g, beta, output_final_state=True, use_qk_l2norm_in_kernel=True,
                                 backend="triton")
    o_d, s_d = kimiops.fused_recurrent_kda(q[:, :4], k[:, :4], v[:, :4], g[:, :4], beta[:, :4],
                                           output_final_state=True, use_qk_l2norm_in_kernel=True, backend="triton")
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(8, 2048, generator=gen).to(device=device, dtype=torch.bfloat16)
    w = torch.randn(1024, 2048, generator=gen).to(device=device, dtype=torch.bfloat16)
    y = kimiops.linear(x, w, backend="triton")
    torch.cuda.synchronize(device)
    return [t.cpu() for t in (o_p, s_p, o_d, s_d, y)]


@pytest.mark.gpu
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA GPUs")
def test_gpu_inputs_on_a_non_current_device():
    """With cuda:0 current, inputs on cuda:1 give the bits of the same calls with cuda:1 current."""
    other = torch.device("cuda", 1)
    with torch.cuda.device(1):
        expected = _all_ops(other)
    with torch.cuda.device(0):
        got = _all_ops(other)
    for e, r in zip(expected, got):
        assert torch.equal(e, r)
