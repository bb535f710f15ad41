"""HTTP plumbing shared by the connectors: one request at a time per host."""

from __future__ import annotations

import threading


class HostGate:
    """Serialises requests to one host and holds back every caller while a limit lasts."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.blocked_until = 0.0


_gates: dict[str, HostGate] = {}
_gates_lock = threading.Lock()


def gate_for(host: str) -> HostGate:
    with _gates_lock:
        return _gates.setdefault(host, HostGate())
