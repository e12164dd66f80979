"""Scratch buffers of the KDA kernels (``kimiops.kda.workspace``), on CPU tensors."""

import torch

from kimiops.kda import workspace


def test_buffers_are_reused_grown_and_retired():
    workspace.empty_cache()
    cpu = torch.device("cpu")
    a = workspace.get_buffer("t", cpu, torch.float32, 2, (4,), 3)
    assert a.shape == (2, 3, 4)
    assert workspace.get_buffer("t", cpu, torch.float32, 2, (4,), 3) is a      # the same size: the same view
    b = workspace.get_buffer("t", cpu, torch.float32, 2, (4,), 2)              # smaller: a view of the buffer
    assert b.shape == (2, 2, 4) and b.data_ptr() == a.data_ptr() and b.stride() == a.stride()
    held = workspace.cached_bytes()
    c = workspace.get_buffer("t", cpu, torch.float32, 2, (4,), 5)              # larger: a new, doubled buffer
    assert c.shape == (2, 5, 4) and c.data_ptr() != a.data_ptr() and c.stride(0) == 6 * 4
    assert workspace.cached_bytes() == held + 2 * 6 * 4 * 4                     # the old one is retired, kept
    d = workspace.get_buffer("t", cpu, torch.float32, 2, (4,), 3)
    assert d.shape == (2, 3, 4) and d.data_ptr() == c.data_ptr()
    other = workspace.get_buffer("t", cpu, torch.float16, 2, (4,), 3)          # the dtype is part of the key
    assert other.dtype == torch.float16 and other.data_ptr() != c.data_ptr()
    z = workspace.get_buffer("z", cpu, torch.int32, 1, (), 4, zeroed=True)
    assert torch.equal(z, torch.zeros(1, 4, dtype=torch.int32))
    workspace.empty_cache()
    assert workspace.cached_bytes() == 0


def test_zeroed_buffers_first_filled_in_a_capture_are_zeroed_again(monkeypatch):
    """A zeroed buffer allocated during a CUDA-graph capture is zeroed only when that graph
    replays: every later capture that serves it zeroes it in its own graph, and the first call
    outside a capture zeroes it on its stream (here: a capture is simulated, the buffer is dirtied
    as a graph that never replayed would leave it)."""
    workspace.empty_cache()
    cpu = torch.device("cpu")
    state = {"capturing": True}
    monkeypatch.setattr(workspace, "capturing", lambda device: state["capturing"])
    first = workspace.get_buffer("c", cpu, torch.int32, 1, (), 3, zeroed=True)
    first.fill_(7)  # what the memory holds if the capturing graph has not replayed
    again = workspace.get_buffer("c", cpu, torch.int32, 1, (), 3, zeroed=True)  # a second capture
    assert again.data_ptr() == first.data_ptr() and not again.any()
    again.fill_(7)
    state["capturing"] = False
    eager = workspace.get_buffer("c", cpu, torch.int32, 1, (), 3, zeroed=True)
    assert not eager.any()
    eager.fill_(5)  # from now on the kernels' own invariant holds: no more zero-fills
    assert workspace.get_buffer("c", cpu, torch.int32, 1, (), 3, zeroed=True) is eager and eager.eq(5).all()
    workspace.empty_cache()
