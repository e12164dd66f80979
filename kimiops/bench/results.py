"""Where the benchmark scripts leave their results: one JSON file per run, named by the script and
the local time, in the directory given with ``--out``."""

from __future__ import annotations

import datetime
import json
import os


def write_result(res: dict, out_dir: str, prefix: str) -> str:
    """Write ``res`` to ``out_dir/<prefix>_<YYYYmmdd-HHMMSS>.json`` (the directory made if needed);
    returns the path."""
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{prefix}_{datetime.datetime.now():%Y%m%d-%H%M%S}.json")
    with open(path, "w") as fh:
        json.dump(res, fh, indent=1)
    return path
