"""The JSON file of a small fitted model (a pitfall head, the score model): its dataclass's
fields plus the names of the features it was fitted on, so that a file fitted on other features
is refused with the command that refits it rather than read wrongly."""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any


def fitted_path(model: str, directory: Path) -> Path:
    """The file of what was fitted for this embedding model (a path or a hub-style name)."""
    slug = re.sub(r"[^a-z0-9]+", "-", Path(model).name.lower()).strip("-") or "model"
    return directory / f"{slug}.json"


def save_fitted(model: Any, features: tuple[str, ...], path: Path) -> None:
    """Write a dataclass instance with the feature names it was fitted on."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = asdict(model) | {"features": list(features)}
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")


def load_fitted(path: Path, features: tuple[str, ...], refit: str) -> dict[str, Any]:
    """The saved fields, lists turned to tuples (the dataclasses are frozen); ValueError naming
    `refit` when the file was fitted on other features."""
    data = json.loads(path.read_text("utf-8"))
    if tuple(data.pop("features")) != features:
        raise ValueError(f"{path}: fitted on other features; run `{refit}`")
    return {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
