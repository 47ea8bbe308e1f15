"""A bound on an environment container's own filesystem: its writable layer, outside the work dir's capped mount.

What the model writes outside the work dir (and /tmp, a tmpfs) lands in the container's writable layer, on the
engine's disk. The engine caps it itself where its storage driver can (`storage_opt size`: overlay2 on xfs with
pquota, btrfs, zfs, devicemapper): `create_capped` asks for that first and remembers an engine that refuses.
Elsewhere (overlay2 on ext4, the common case) `LayerWatch` asks the engine for the layer's size (`SizeRw`, which
the engine measures: nothing the model runs can answer for it) every `WATCH_INTERVAL_S` and kills the container
once it is over the cap. That is a watch, not a hard cap: the layer can pass the cap by what the model writes
within one interval before the kill. Either way `layer_full` says so after the agent's phase, and the trial is a
scored fail before grading (the model filled its own disk), its detail naming the cap.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from docker import DockerClient
    from docker.models.containers import Container

    from agentic_eval.confine.docker_engine import Engine

WATCH_INTERVAL_S = 0.5
"""How often the engine is asked for the layer's size where it cannot cap it (one ask: ~20-50 ms of its time)."""
FULL_MARGIN = 16 << 20
"""A layer the engine caps counts as full with less than this left (as the work dir does)."""

_refused: set[str] = set()
"""Engines (by name) whose storage driver refused `storage_opt size`."""
_lock = threading.Lock()


def _refuses_storage_opt(exc: Exception) -> bool:
    text = str(exc).lower()
    return any(word in text for word in ("storage-opt", "storage_opt", "storage opt", "quota"))


def create_capped(engine: Engine, cap_mb: int, create: Callable[..., Container], *args: object, **kwargs: object
                  ) -> tuple[Container, bool]:
    """`create(*args, **kwargs)` (a `containers.create`) with the engine's own cap of `cap_mb` MiB on the writable
    layer where its storage driver takes one: (the container, whether the engine caps it)."""
    if engine.name not in _refused:
        try:
            return create(*args, storage_opt={"size": f"{cap_mb}m"}, **kwargs), True
        except Exception as exc:  # only the driver's refusal is handled here
            if not _refuses_storage_opt(exc):
                raise
            with _lock:
                _refused.add(engine.name)
    return create(*args, **kwargs), False


def layer_size(client: DockerClient, container_id: str) -> tuple[int, bool] | None:
    """The container's writable layer in bytes, as the engine measures it, and whether it still runs; None when
    the engine no longer has it."""
    rows = client.api.containers(all=True, size=True, filters={"id": container_id})
    if not rows:
        return None
    return int(rows[0].get("SizeRw") or 0), rows[0].get("State") == "running"


def cap_text(cap_mb: int) -> str:
    return f"{cap_mb}m"


class LayerWatch:
    """Kills `container` once its writable layer is over `cap_mb` MiB (see the module's docstring); `over` then
    says so. Watches until `stop()` or the container stops running."""

    def __init__(self, client: DockerClient, container: Container, cap_mb: int,
                 interval_s: float = WATCH_INTERVAL_S) -> None:
        self.client, self.container, self.cap_mb, self.interval_s = client, container, cap_mb, interval_s
        self.over = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name=f"layer-watch-{str(container.id)[:12]}",
                                        daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                measured = layer_size(self.client, self.container.id)
            except Exception:  # noqa: BLE001 - the engine busy or gone: asked again next time
                continue
            if measured is None:
                return
            size, running = measured
            if size > self.cap_mb << 20:
                self.over = (f"the container's own filesystem (outside the work dir) passed its size cap "
                             f"({cap_text(self.cap_mb)}; {size >> 20} MiB written): its container was killed")
                try:
                    self.container.kill()
                except Exception:  # noqa: BLE001 - stopped already
                    pass
                return
            if not running:
                return

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)


def layer_full(client: DockerClient, container: Container, cap_mb: int, watch: LayerWatch | None) -> str:
    """Why the container's own filesystem counts as full after the agent's phase (its watch killed it, or the
    engine's cap has under FULL_MARGIN left), or an empty string."""
    if watch is not None:
        watch.stop()
        return watch.over
    try:
        measured = layer_size(client, container.id)
    except Exception:  # noqa: BLE001 - the engine cannot say: not judged full
        return ""
    if measured is None or measured[0] < (cap_mb << 20) - FULL_MARGIN:
        return ""
    return f"the container's own filesystem (outside the work dir) filled its size cap ({cap_text(cap_mb)})"
