"""Which tests a run selects: CUDA machines run the ``gpu``-marked tests and those taking the
``device`` fixture; CPU-only machines (Triton's interpreter) run all but the ``gpu``-marked ones."""

import conftest  # tests/conftest.py, the module pytest loaded (tests/ is on sys.path, no package)


class _Item:
    def __init__(self, name, gpu=False, fixtures=()):
        self.name, self.keywords, self.fixturenames, self.skips = name, {"gpu": 1} if gpu else {}, fixtures, []

    def add_marker(self, mark):
        self.skips.append(mark.kwargs["reason"])


def _selected(has_cuda, monkeypatch):
    items = [_Item("cpu"), _Item("gpu", gpu=True), _Item("device", fixtures=("device", "monkeypatch")),
             _Item("gpu_device", gpu=True, fixtures=("device",))]
    monkeypatch.setattr(conftest, "HAS_CUDA", has_cuda)
    conftest.pytest_collection_modifyitems(None, items)
    return {it.name: it.skips for it in items}


def test_cuda_machine_skips_cpu_only_tests(monkeypatch):
    sel = _selected(True, monkeypatch)
    assert sel["gpu"] == [] and sel["device"] == [] and sel["gpu_device"] == []
    assert len(sel["cpu"]) == 1 and "CUDA_VISIBLE_DEVICES=" in sel["cpu"][0]


def test_cpu_machine_skips_gpu_tests(monkeypatch):
    sel = _selected(False, monkeypatch)
    assert sel["cpu"] == [] and sel["device"] == []
    assert sel["gpu"] == ["needs a CUDA GPU"] and sel["gpu_device"] == ["needs a CUDA GPU"]

