import pytest
import torch

from kimiops.arch import GPU_FAMILIES, Backend, arch_family, device_family, resolve_backend


@pytest.mark.parametrize(
    "cap, family",
    [((8, 0), "sm8x"), ((8, 9), "sm8x"), ((9, 0), "sm90"), ((10, 0), "sm10x"), ((10, 3), "sm10x"),
     ((10, 7), "sm10x"), ((12, 0), "sm12x"), ((12, 1), "sm12x"), (None, "cpu"), ((7, 5), "sm7x")],
)
def test_arch_family(cap, family):
    assert arch_family(cap) == family


def test_minor_revisions_behave_alike():
    # SM107 must behave as SM100 does: same family, same backend choice
    backends = {"k": Backend("k", frozenset({"sm10x"})), "t": Backend("t", None)}
    picks = {resolve_backend("op", None, arch_family((10, m)), backends, ("k", "t")) for m in range(10)}
    assert picks == {"k"}


def test_arch_family_bad_input():
    with pytest.raises(TypeError, match="capability"):
        arch_family("sm90")


def test_device_family_cpu():
    assert device_family("cpu") == "cpu"
    if not torch.cuda.is_available():
        assert device_family() == "cpu"


def test_rocm_gpus_are_their_own_family(monkeypatch):
    # a ROCm torch reports an MI300 as a CUDA device of capability (9, 4): not Hopper
    import kimiops.arch as arch

    monkeypatch.setattr(torch.version, "hip", "6.4.0", raising=False)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda index=None: (9, 4))
    arch._cached_family_of_cuda_index.cache_clear()
    try:
        assert arch._family_of_cuda_index(0) == arch.ROCM_FAMILY
        assert arch.ROCM_FAMILY not in GPU_FAMILIES
    finally:
        arch._cached_family_of_cuda_index.cache_clear()


def test_torch_compile_traces_device_family_without_the_cache_warning(monkeypatch):
    # The ops' wrappers call device_family inside code torch.compile traces; Dynamo warns when it
    # traces through an lru_cache (seen on the H200: logs_h200_20261205c/fuzz_pytest.log).
    import warnings

    import kimiops.arch as arch

    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda index=None: (9, 0))
    arch._cached_family_of_cuda_index.cache_clear()
    torch._dynamo.reset()
    try:
        fn = torch.compile(lambda x: x + len(device_family(torch.device("cuda", 0))), fullgraph=True,
                           backend="eager")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = fn(torch.zeros(2))
        assert out.tolist() == [4.0, 4.0]  # len("sm90")
        assert not [w for w in caught if "lru_cache" in str(w.message)], [str(w.message) for w in caught]
    finally:
        arch._cached_family_of_cuda_index.cache_clear()
        torch._dynamo.reset()


BACKENDS = {"fast": Backend("fast", frozenset({"sm90"})), "portable": Backend("portable", None)}


def test_resolve_auto_falls_back():
    assert resolve_backend("op", None, "sm90", BACKENDS, ("fast", "portable")) == "fast"
    assert resolve_backend("op", "auto", "sm8x", BACKENDS, ("fast", "portable")) == "portable"


def test_forced_backend_on_unsupported_family_names_family_and_alternatives():
    with pytest.raises(RuntimeError, match=r"'sm10x'.*\['portable'\]"):
        resolve_backend("op", "fast", "sm10x", BACKENDS, ("fast", "portable"))


def test_env_var_forces_backend(monkeypatch):
    monkeypatch.setenv("KIMIOPS_BACKEND", "fast")
    with pytest.raises(RuntimeError, match="sm12x"):
        resolve_backend("op", None, "sm12x", BACKENDS, ("fast", "portable"))
    # the argument wins over the environment
    assert resolve_backend("op", "portable", "sm12x", BACKENDS, ("fast", "portable")) == "portable"


def test_unknown_backend_name():
    with pytest.raises(ValueError, match="^backend: .*'cutlass'"):
        resolve_backend("op", "cutlass", "sm90", BACKENDS, ("fast", "portable"))


def test_unknown_backend_name_from_the_environment_names_the_variable(monkeypatch):
    monkeypatch.setenv("KIMIOPS_BACKEND", "fsat")
    with pytest.raises(ValueError, match="environment variable KIMIOPS_BACKEND.*'fsat'"):
        resolve_backend("op", None, "sm90", BACKENDS, ("fast", "portable"))


def test_gpu_families_are_the_documented_ones():
    assert GPU_FAMILIES == {"sm8x", "sm90", "sm10x", "sm12x"}
