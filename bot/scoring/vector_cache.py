"""The bank's vectors on disk, keyed by (model, device, bank content hash).

Encoding the bank takes seconds on a CPU; a restart with the same model and the same bank
reads them back instead. A changed bank or model gets a new file; old files are left alone.
Replicas that share the directory (a volume) share the file: whoever computes it holds a
`ComputeLease`, and the others wait for the file instead of computing it too.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path

import numpy as np
from filelock import FileLock, Timeout

log = logging.getLogger(__name__)


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def cache_file(directory: Path, model: str, device: str, content_hash: str) -> Path:
    """The file of one bank version's vectors; its name starts with the model's key (model and
    arithmetic), so files of the same model for other bank versions can be found."""
    return directory / f"bank-vectors-{_key(f'{model}|{device}')}-{_key(content_hash)}.npz"


def earlier_vectors(path: Path, wanted: set[str]) -> dict[str, np.ndarray]:
    """The vectors of `wanted` texts stored for another bank version by the same model and
    arithmetic (the newest such file): after a bank edit most texts are unchanged, so a new
    bank version computes only what is new instead of starting cold."""
    model_key = path.name.split("-")[2]
    others = [p for p in path.parent.glob(f"bank-vectors-{model_key}-*.npz") if p != path]
    for other in sorted(others, key=_mtime, reverse=True):
        stored = load_vectors(other)
        if stored:
            return {text: vector for text, vector in stored.items() if text in wanted}
    return {}


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # removed meanwhile
        return 0.0


def load_vectors(path: Path) -> dict[str, np.ndarray]:
    if not path.exists():
        return {}
    try:
        with np.load(path, allow_pickle=False) as data:
            texts, vectors = data["texts"], data["vectors"]
            return {str(t): v for t, v in zip(texts, vectors, strict=True)}
    except (OSError, ValueError, KeyError) as exc:  # a damaged file is only a lost speed-up
        log.warning("ignoring unreadable vector cache %s: %s", path, exc)
        return {}


def save_vectors(path: Path, vectors: dict[str, np.ndarray]) -> None:
    """Atomic write: a process killed mid-write leaves no half file behind."""
    if not vectors:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        texts = list(vectors)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            np.savez(handle, texts=np.array(texts), vectors=np.stack([vectors[t] for t in texts]))
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("could not write vector cache %s: %s", path, exc)


class ComputeLease:
    """The right to compute one bank file: an OS lock on a file beside it (filelock: flock on
    POSIX), so the operating system releases it the moment its holder dies (a kill -9
    included) and another process takes over; never a stale lock to clean up."""

    def __init__(self, path: Path):
        # Not thread-local: the host may be called from more than one thread over its life.
        self._lock = FileLock(str(path) + ".lock", thread_local=False)
        self._unlockable = False  # no lock could be made: this process computes unshared

    def holds(self) -> bool:
        return self._lock.is_locked or self._unlockable

    def take(self) -> bool:
        """True when this process holds it now (already held by it counts); never waits."""
        if self.holds():
            return True
        try:
            Path(self._lock.lock_file).parent.mkdir(parents=True, exist_ok=True)
            self._lock.acquire(timeout=0)
        except Timeout:
            return False
        except OSError as exc:  # no lock can be made there: compute here rather than wait
            log.warning("cannot lock %s (%s): computing the bank here", self._lock.lock_file, exc)
            self._unlockable = True
            return True
        return True

    def release(self) -> None:
        if self._lock.is_locked:
            self._lock.release(force=True)
