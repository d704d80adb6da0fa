"""Build a supervisor by name: none | window | freeform | deterministic | llm | hybrid."""

from __future__ import annotations

from pathlib import Path

from stateguard.errors import PolicyError
from stateguard.lineage import TrackedSession
from stateguard.llm import ChatModel
from stateguard.manager.harness import HarnessConfig, StateHarness
from stateguard.manager.policies.ablation import WindowObserver
from stateguard.manager.policies.base import Policy
from stateguard.manager.policies.deterministic import DeterministicPolicy
from stateguard.manager.policies.hybrid import HybridPolicy
from stateguard.manager.policies.llm import LLMPolicy
from stateguard.manager.protocol import NullSupervisor, Supervisor
from stateguard.manager.workspace import KernelWorkspace, Workspace
from stateguard.state import StateStore

SUPERVISOR_KINDS = ("none", "window", "freeform", "deterministic", "llm", "hybrid")


def build_supervisor(
    kind: str,
    *,
    session: TrackedSession | None = None,
    run_dir: Path,
    model: ChatModel | None = None,
    config: HarnessConfig | None = None,
    workspace: Workspace | None = None,
    store: StateStore | None = None,
    policy: Policy | None = None,
) -> Supervisor:
    """A supervisor keeping ``states.sqlite`` in the existing folder `run_dir`
    (checkpoints: in the kernel's working directory, see `KernelWorkspace`).

    ``store`` replaces ``run_dir/states.sqlite`` (e.g. an in-memory store). ``policy``
    replaces the kind's own policy in its harness (e.g. a wrapper recording what a
    deterministic policy sees); the window observer and ``none`` take none. Events are
    drained by the caller (`stateguard.guard.GuardedSession` hands them to its sinks).
    """
    if kind not in SUPERVISOR_KINDS:
        raise PolicyError(f"unknown manager {kind!r}; choose one of {', '.join(SUPERVISOR_KINDS)}")
    if policy is not None and kind in ("none", "window"):
        raise PolicyError(f"manager {kind!r} takes no policy")
    if kind == "none":
        return NullSupervisor()
    if policy is None and kind in ("llm", "freeform", "window") and model is None:
        raise PolicyError(
            f"manager {kind!r} needs a chat model; configure one or use --manager deterministic"
        )
    if kind == "window":
        return WindowObserver(model)
    if workspace is None:
        if session is None:
            raise PolicyError(f"manager {kind!r} needs a tracked kernel session")
        workspace = KernelWorkspace(session)
    if policy is None:
        policy = _default_policy(kind, model)
    return StateHarness(
        policy,
        workspace,
        store if store is not None else StateStore(Path(run_dir) / "states.sqlite"),
        config=config,
    )


def _default_policy(kind: str, model: ChatModel | None) -> Policy:
    """The policy a harness of ``kind`` runs unless the caller gives one."""
    if kind == "deterministic":
        return DeterministicPolicy()
    if kind == "hybrid":
        return HybridPolicy(model)
    if kind == "llm":
        return LLMPolicy(model)  # type: ignore[arg-type]
    return LLMPolicy(model, prompt="freeform_policy.md")  # type: ignore[arg-type]
