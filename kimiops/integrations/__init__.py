"""Adapters that route other libraries' KDA code paths to kimiops.

- :mod:`kimiops.integrations.transformers`: Hugging Face transformers' ``kimi_linear`` models
  (``enable(model=None)`` / ``disable(model=None)``).
- :mod:`kimiops.integrations.sglang`: SGLang's KDA kernel dispatcher (``enable()`` / ``disable()``,
  or the ``sglang.srt.plugins`` entry point with ``KIMIOPS_SGLANG=1``).
- :mod:`kimiops.integrations.vllm`: vLLM's KDA prefill (``enable()`` / ``disable()``, or the
  ``vllm.general_plugins`` entry point with ``KIMIOPS_VLLM=1``).

:mod:`kimiops.integrations.engine` holds what the engine adapters share.

Nothing here imports the adapted library at import time: importing :mod:`kimiops` or this package
never imports transformers, SGLang or vLLM. Each adapter imports its library inside ``enable()``.
"""

__all__ = ["engine", "sglang", "transformers", "vllm"]
