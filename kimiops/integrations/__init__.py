"""Adapters that route other libraries' KDA code paths to kimiops.

- :mod:`kimiops.integrations.transformers`: Hugging Face transformers' ``kimi_linear`` models
  (``enable(model=None)`` / ``disable(model=None)``).

Nothing here imports the adapted library at import time: importing :mod:`kimiops` or this package
never imports transformers. Each adapter imports its library inside ``enable()``.
"""

__all__ = ["transformers"]
