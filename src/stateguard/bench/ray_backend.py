"""Run benchmark tasks as Ray tasks (optional extra ``stateguard[ray]``).

Each task is one Ray task (``num_cpus=1``) calling the runner's job function, which
starts its own kernel on the node it lands on. The events of a task come back when
the task finishes (not turn by turn, unlike the local process pool); the driver
writes them into the run directory, so resuming works the same. Caches (gold, plans)
and kernel working folders live under the run directory: on a multi-node cluster it
must be a path every node can reach (shared filesystem).

Connection: ``address`` if given, else an already initialized Ray, else
``ray.init()`` (which joins the cluster named by ``RAY_ADDRESS`` when set, or
starts a local one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stateguard.bench.events import Emit
from stateguard.bench.records import RunConfig
from stateguard.bench.tasks import BenchTask
from stateguard.errors import StateguardError

RAY_REQUIREMENT = "ray>=2.9"

Job = Callable[[BenchTask, RunConfig, str, set[int], Emit], None]


def _collect(
    job: Job, task: BenchTask, config: RunConfig, run_dir: str, skip: set[int]
) -> list[Any]:
    """Run one task and return its events (executed on a Ray worker)."""
    events: list[Any] = []
    job(task, config, run_dir, skip, events.append)
    return events


def run_with_ray(
    pending: list[tuple[BenchTask, set[int]]],
    config: RunConfig,
    run_dir: str,
    handle: Callable[[Any], None],
    *,
    job: Job,
    address: str | None = None,
) -> None:
    """Submit every pending task to Ray and hand their events to ``handle`` as tasks finish."""
    try:
        import ray
    except ImportError as exc:
        raise StateguardError(
            f"--backend ray needs Ray: pip install 'stateguard[ray]' ({RAY_REQUIREMENT})"
        ) from exc
    if address is not None:
        ray.init(address=address, ignore_reinit_error=True)
    elif not ray.is_initialized():
        ray.init()
    remote = ray.remote(num_cpus=1)(_collect)
    refs = [remote.remote(job, task, config, run_dir, skip) for task, skip in pending]
    while refs:
        done, refs = ray.wait(refs, num_returns=1)
        for events in ray.get(done):
            for event in events:
                handle(event)
