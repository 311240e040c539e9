"""Shared output of the benchmark scripts: JSON on stdout, and in a file when asked."""
from __future__ import annotations

import json


def emit(result: dict, out: str | None) -> None:
    text = json.dumps(result, indent=2)
    print(text)
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")
