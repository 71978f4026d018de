"""A scripted model (`--model script:PATH`) for tests that drive the real server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def script(tmp_path: Path, *responses: list[dict[str, Any]], name: str = "model") -> str:
    """Write `responses` to tmp_path/NAME.json; the `script:PATH` model spec that plays them."""
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"responses": list(responses)}), encoding="utf-8")
    return f"script:{path}"
