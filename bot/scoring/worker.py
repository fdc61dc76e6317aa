"""The grading process: a ScoringService of its own, in a child process, behind a
ProcessPoolExecutor of one worker (GRADER_WORKER=process, the bot's default).

Why a process and not a thread: a forward pass makes about a thousand calls into torch, and each
must take the GIL back from the event loop. With the loop busy (50 people answering at once)
that convoy made a batch ten times slower. The child has its own interpreter and GIL.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

_service: Any = None


def start(factory: Callable[..., Any], config: dict[str, Any], parent: int, log_level: int) -> None:
    """Runs once in the child: builds the service there with `factory(**config)` (the parent
    passes its class, so this module needs no import of it). The parent owns Ctrl+C and
    shutdown, and an orphan (its parent was killed) exits instead of holding the model's
    memory."""
    global _service
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    threading.Thread(target=_exit_when_orphaned, args=(parent,), daemon=True).start()
    _service = factory(**config, worker="thread")


def call(method: str, *args: Any) -> Any:
    """One of the service's own (synchronous) methods, run here."""
    assert _service is not None, "worker.start did not run"
    return getattr(_service, method)(*args)


def _exit_when_orphaned(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)
