"""The Gluon state stage (``chunk_state_gluon.py``, opt-in with ``STATE_CONFIG_WIDE["gluon"]``).

CPU: it builds for sm_90 (offline, Triton's bundled ptxas) for every feature combination the
launcher can ask for, and the launcher takes it exactly where it applies. GPU: it gives what the
Triton wide kernel gives (the same products, summed in another order) for dense and varlen batches,
pools with -1 and untouched slots, V-first states, pipelined parts and fp16 v.
"""
from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys

import pytest
import torch

from kimiops.kda.kernels import chunk as chunk_mod
from kimiops.kda.kernels import chunk_state_gluon as csg
from kimiops.kda.kernels.chunk import NUMERICS_CONFIG, gluon_applies
from kimiops.kda.kernels.chunk_state import STATE_CONFIG_WIDE
from kimiops.testing import rel_err

from test_chunk_kernel import POISON, _parts, bits, make_inputs, plan_for, run

GLUON = dict(STATE_CONFIG_WIDE, gluon=True)
pytestmark = pytest.mark.skipif(not csg.available(), reason="this triton has no Gluon Hopper layer")


_TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "tools", "state_gluon_compile.py")


def test_builds_for_sm90_with_two_waits_per_chunk():
    """Feature sets the launcher can ask for compile for sm_90 at head dims 128 and 64 (offline,
    Triton's ptxas; in a process without the interpreter); the chunk loop keeps its point, two wgmma
    waits, and ptxas spills at most a few words."""
    sets = ["none", "all", "IS_VARLEN,ORDERED,HAS_H0,HAS_H0_IDX,HAS_HT,HAS_HT_IDX",
            "STATE_V_FIRST,HAS_H0,HAS_HT,PARTED,PDL", "V_TILES_ADJACENT,HAS_HT"]
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    shapes = ["128x128", "64x64", "128x64"]
    r = subprocess.run([sys.executable, _TOOL, "--shapes", ",".join(shapes), *sets], capture_output=True, text=True,
                       env=env, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    builds = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(builds) == len(sets) * len(shapes)
    for b in builds:
        assert b["waits"] == 2 and b["wgmma"] >= 6, b
        assert b["spill_bytes"] <= 32 and b["shared"] <= 113 * 1024, b  # two programs per SM (227 KB)


def test_launcher_takes_it_only_where_it_applies(monkeypatch):
    """Off by default; asked for, only on an sm90 device (here faked), with the wide config's numerics,
    K and V within 64..128, 16-byte-aligned bf16 / fp16 v, scratch buffers of equal capacity and no
    state snapshots."""
    inp = make_inputs(1, 64, 2, 2, 128, 128, "softplus", torch.bfloat16, "cpu", seed=5)
    assert not STATE_CONFIG_WIDE["gluon"]
    assert not gluon_applies(plan_for(inp, state_config={"gluon": True}))  # a CPU device
    monkeypatch.setattr(chunk_mod, "device_family", lambda device: "sm90")
    assert not gluon_applies(plan_for(inp))
    asked = plan_for(inp, state_config={"gluon": True})
    assert gluon_applies(asked)
    assert NUMERICS_CONFIG["inv_prec"] == "tf32"
    misaligned = torch.empty(inp["v"].numel() + 1, dtype=inp["v"].dtype)[1:].view(inp["v"].shape)
    qg = asked["qg"]
    roomier_qg = torch.empty(qg.shape[0], qg.shape[1] + 1, *qg.shape[2:], dtype=qg.dtype)[:, :qg.shape[1]]
    for change in ({"K": 256}, {"V": 96}, {"track": torch.empty(1)}, {"v": inp["v"].float()}, {"v": misaligned},
                   {"qg": roomier_qg}, {"sc": dict(asked["sc"], BV=16)}, {"sc": dict(asked["sc"], split_ws=True)},
                   {"sc": dict(asked["sc"], pow2_scale=False)}):
        assert not gluon_applies(dict(asked, **change)), change


def test_descriptors_address_the_scratch_tiles():
    """The TMA views: row ``hv * rows + slot * C`` of each scratch view is the first row of chunk slot
    ``slot`` of head ``hv`` (rows per head from the buffer's capacity, not the call's slot count);
    v as ``[tokens, HV * V]``."""
    cu = torch.tensor([0, 5, 70, 70, 103], dtype=torch.int32)
    inp = make_inputs(1, 103, 2, 4, 128, 128, "softplus", torch.bfloat16, "cpu", seed=5)
    p = chunk_mod._plan(inp["q"], inp["k"], inp["v"], inp["g"], inp["beta"], scale=0.1, cu_seqlens=cu, h0=None,
                        h0_indices=None, ht=None, ht_indices=None, state_v_first=False, use_qk_l2norm=True,
                        use_beta_sigmoid=True, gate="softplus", A_log=inp["A_log"], dt_bias=inp["dt_bias"],
                        lower_bound=None, out=None, intra_config=None, state_config=None)
    C, HV, V = p["C"], p["HV"], p["V"]
    d = csg.descriptors(p["w"], p["qg"], p["kg"], p["tb"], p["aqk"], p["v"], C, HV, V)
    for name, rows in (("w", d["rows_ck"]), ("qg", d["rows_ck"]), ("kg", d["rows_ck"]), ("tb", d["rows_cc"]),
                       ("aqk", d["rows_cc"])):
        t, desc = p[name], d[name]
        width = t.shape[-1]
        assert desc.block_shape == [C, width] and list(desc.strides) == [width, 1]
        assert list(desc.shape) == [HV * rows, width] and desc.base.data_ptr() == t.data_ptr()
        for hv, slot in ((0, 0), (3, p["NC"] - 1), (2, 1)):
            assert (hv * rows + slot * C) * width == hv * t.stride(0) + slot * t.stride(1)
    assert list(d["v"].shape) == [103, HV * V] and d["v"].block_shape == [C, csg.BV]


# --------------------------------------------------------------------------- GPU


def _call(inp, sc, **kw):
    ht = kw.pop("ht")
    out = torch.empty_like(inp["v"])
    run(inp, gate="softplus", scale=0.1, out=out, ht=ht, state_config=sc, **kw)
    torch.cuda.synchronize()
    return out, ht


@pytest.mark.gpu
@pytest.mark.parametrize("B,T,vdt,vfirst", [(1, 4096, torch.bfloat16, False), (3, 100, torch.bfloat16, True),
                                            (2, 777, torch.float16, False)])
def test_gpu_dense_matches_triton(B, T, vdt, vfirst):
    """Dense batches (a partial last chunk, V-first states, fp16 v): o and the final states within
    1e-5 of the Triton wide kernel's."""
    inp = make_inputs(B, T, 2, 4, 128, 128, "softplus", vdt, "cuda", seed=7, mild=False)
    assert gluon_applies(plan_for(inp, state_config=GLUON))
    shape = (B, 4, 128, 128)
    ref = _call(inp, STATE_CONFIG_WIDE, ht=torch.full(shape, POISON, device="cuda"), state_v_first=vfirst)
    got = _call(inp, GLUON, ht=torch.full(shape, POISON, device="cuda"), state_v_first=vfirst)
    assert rel_err(got[0], ref[0]) < 1e-5 and rel_err(got[1], ref[1]) < 1e-5


@pytest.mark.gpu
@pytest.mark.parametrize("n_parts", [1, 3])
def test_gpu_varlen_pool_parts_match_triton(n_parts):
    """Varlen with lengths 0, 1, 31, 32, 33, 1000, a pool read and written through indices with -1
    (padding) and slots no sequence names (stay poisoned, bit for bit), in one part or three."""
    lens = [1000, 0, 31, 1, 32, 33]
    cu = torch.tensor([0] + list(itertools.accumulate(lens)), dtype=torch.int32, device="cuda")
    inp = make_inputs(1, int(cu[-1]), 2, 4, 128, 128, "softplus", torch.bfloat16, "cuda", seed=3, mild=False)
    idx = torch.tensor([3, 0, 7, -1, 5, 1], dtype=torch.int32, device="cuda")
    init = torch.randn(9, 4, 128, 128, device="cuda")
    for s in (2, 4, 6, 8):
        init[s] = POISON
    results = []
    for sc in (STATE_CONFIG_WIDE, GLUON):
        pool = init.clone()
        out, _ = _call(inp, sc, ht=pool, cu_seqlens=cu, h0=pool, h0_indices=idx, ht_indices=idx,
                       pipeline_config=_parts(n_parts))
        results.append((out, pool))
    (o_ref, p_ref), (o, p) = results
    assert rel_err(o, o_ref) < 1e-5
    named = [0, 1, 3, 5, 7]
    assert rel_err(p[named], p_ref[named]) < 1e-5
    assert torch.equal(bits(p[[2, 4, 6, 8]]), bits(init[[2, 4, 6, 8]]))
