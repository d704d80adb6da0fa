"""`GuardedSession`: the one place that assembles executor, lineage, store and manager.

Guarding an agent takes a turn-shaped loop::

    with GuardedSession(manager="deterministic") as guard:
        notes = guard.begin_turn(question)
        outcome = guard.run_cell(code)          # execution, lineage, notes
        review = guard.propose_answer(answer)   # accepted or not, plus notes
        guard.end_turn()

The session owns the global step counter, restarts a dead backend, drains manager
events into the injected sinks, and closes everything it started. Any backend that
implements `stateguard.kernel.Executor` can be guarded; without one an ipykernel
`KernelSession` is started.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Literal

from stateguard.audit.auditor import Auditor, AuditSettings, CellAudit
from stateguard.checks import Step
from stateguard.errors import StateguardError
from stateguard.guard.outcomes import CellOutcome, Lineage, Rebuild, Review, StaleValue
from stateguard.guard.sinks import EventSink
from stateguard.hints import HintRenderer
from stateguard.kernel import ExecutionResult, Executor, KernelSession
from stateguard.lineage import LineageGraph, TrackedSession
from stateguard.llm import ChatModel
from stateguard.manager import (
    HarnessConfig,
    Hint,
    ManagerEvent,
    NullSupervisor,
    StateHarness,
    Supervisor,
    build_supervisor,
)
from stateguard.manager.policies.base import Policy
from stateguard.state import AnalyticalState, StateStore
from stateguard.types import VarKey

StoreKind = Literal["memory", "file"]


class GuardError(StateguardError):
    """A guarded session was used out of order (e.g. after `close`)."""


class GuardedSession:
    """An executor with lineage and a manager beside it; see the module docstring."""

    def __init__(
        self,
        executor: Executor | TrackedSession | None = None,
        *,
        manager: str | Supervisor = "deterministic",
        model: ChatModel | None = None,
        run_dir: Path | str | None = None,
        store: StoreKind | None = None,
        sinks: Sequence[EventSink] = (),
        cell_timeout: float | None = None,
        track: bool = True,
        setup_code: str = "",
        config: HarnessConfig | None = None,
        hints: HintRenderer | None = None,
        audit: AuditSettings | bool = True,
        rebuild: bool = True,
        policy: Policy | None = None,
    ) -> None:
        """Prepare; nothing starts before `start` (or the first call that needs it).

        ``manager`` is a kind (``none``, ``deterministic``, ``hybrid``, ``llm``,
        ``window``, ``freeform``; ``model`` serves the kinds that call an LLM) or a
        ready `Supervisor`. ``store`` is ``"file"`` (``run_dir/states.sqlite``, the
        default when ``run_dir`` is given) or ``"memory"``. ``sinks`` receive every
        manager event as it is drained. ``hints`` words the manager's notes (default:
        `HintRenderer` with our templates). A `TrackedSession` may be passed instead of
        an executor to reuse its lineage graph. ``audit`` installs `stateguard.audit` in
        the kernel (default: the join guard, flagging); each `CellOutcome.audit` holds
        what it saw, and the manager reads the same findings from the execution.
        ``False`` runs without it. ``policy`` replaces the policy of a harness-backed
        ``manager`` kind (e.g. a wrapper recording what the deterministic policy sees).
        """
        if store == "file" and run_dir is None:
            raise GuardError("store='file' needs a run_dir")
        if policy is not None and (not isinstance(manager, str) or manager in ("none", "window")):
            raise GuardError(f"manager {manager!r} takes no policy; give a kind with a harness")
        self.run_dir = None if run_dir is None else Path(run_dir).resolve()
        settings = AuditSettings() if audit is True else audit or None
        self.auditor: Auditor | None = Auditor(settings) if settings is not None else None
        audit_code = self.auditor.setup_code if self.auditor is not None else ""
        self._audit_pending = ""
        if isinstance(executor, TrackedSession):
            self.tracked = executor
            if audit_code and audit_code not in executor.setup_code:
                executor.setup_code = "\n".join(c for c in (audit_code, executor.setup_code) if c)
                self._audit_pending = audit_code  # runs in `start` if the kernel already runs
        else:
            backend: Executor = executor if executor is not None else KernelSession()
            setup = "\n".join(c for c in (audit_code, setup_code) if c)
            self.tracked = TrackedSession(backend, track=track, setup_code=setup)
        self._manager = manager
        self._model = model
        self._policy = policy
        self._store_kind: StoreKind = store or ("file" if run_dir is not None else "memory")
        self._config = config
        self.sinks = list(sinks)
        self.cell_timeout = cell_timeout
        self.hints = hints or HintRenderer()
        self.supervisor: Supervisor | None = manager if not isinstance(manager, str) else None
        self.store: StateStore | None = None
        self._scratch: Path | None = None
        self._started_backend = False
        self._closed = False
        self._events: list[ManagerEvent] = []
        self._next_step = 0
        self._turn = 0
        self._in_turn = False
        self._question: str | None = None
        """The open turn's question (the audit weighs rows a join drops by it)."""
        self._answer: str | None = None
        self.rebuild = rebuild
        """After a restart, run again the cells that had succeeded (see `_restart`)."""
        self._succeeded: list[tuple[int | None, str]] = []

    # ----------------------------------------------------------------- lifecycle
    @property
    def executor(self) -> Executor:
        """The backend running the code."""
        return self.tracked.kernel

    @property
    def graph(self) -> LineageGraph:
        """The lineage graph of every cell run so far."""
        return self.tracked.graph

    @property
    def started(self) -> bool:
        """`start` has run (and `close` has not)."""
        return self.supervisor is not None and not self._closed

    def start(self) -> None:
        """Start the backend (unless it already runs) and build the manager."""
        if self._closed:
            raise GuardError("this guarded session is closed")
        if self.run_dir is not None:
            self.run_dir.mkdir(parents=True, exist_ok=True)
        if not self.executor.is_alive():
            self._start_backend()
        self._install_pending_audit()
        if self.supervisor is None:
            self.supervisor = self._build_supervisor()

    def _install_pending_audit(self) -> None:
        """Install the audit in a kernel that already ran when this session got it."""
        code, self._audit_pending = self._audit_pending, ""
        if not code:
            return
        res = self.executor.execute(code, silent=True, store_history=False)
        if not res.ok:
            detail = res.error.evalue if res.error else res.status
            raise GuardError(f"installing the audit in the running kernel failed: {detail}")

    def _start_backend(self) -> None:
        self.tracked.start()
        self._started_backend = True

    def _build_supervisor(self) -> Supervisor:
        kind = self._manager
        if not isinstance(kind, str):
            return kind
        if kind == "none":
            return NullSupervisor()
        if kind == "window":  # an observer: no states, no store
            return build_supervisor(kind, session=self.tracked, run_dir=Path(), model=self._model)
        if self._store_kind == "file":
            assert self.run_dir is not None
            root = self.run_dir
            self.store = StateStore(root / "states.sqlite")
        else:
            self._scratch = Path(tempfile.mkdtemp(prefix="stateguard-guard-"))
            root = self.run_dir or self._scratch
            self.store = StateStore(":memory:")
        try:
            return build_supervisor(
                kind,
                session=self.tracked,
                run_dir=root,
                model=self._model,
                config=self._config,
                store=self.store,
                policy=self._policy,
            )
        except BaseException:
            self.store.close()
            self.store = None
            raise

    def close(self) -> None:
        """End an open turn, close the manager and store, stop a backend this session started."""
        if self._closed:
            return
        try:
            if self._in_turn and self.supervisor is not None:
                self.end_turn()
        finally:
            self._closed = True
            close = getattr(self.supervisor, "close", None)
            if callable(close):
                close()
            if self.store is not None:
                self.store.close()
            if self._started_backend:
                self.tracked.stop()
            if self._scratch is not None:
                shutil.rmtree(self._scratch, ignore_errors=True)
                self._scratch = None

    def __enter__(self) -> GuardedSession:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _sup(self) -> Supervisor:
        if self._closed:
            raise GuardError("this guarded session is closed")
        if self.supervisor is None:
            self.start()
        elif self._audit_pending and self.executor.is_alive():
            self._install_pending_audit()  # a ready supervisor was given: no `start` call
        assert self.supervisor is not None
        return self.supervisor

    # --------------------------------------------------------------------- turns
    @property
    def step(self) -> int:
        """The global index the next step gets (steps count across turns)."""
        return self._next_step

    @property
    def turn(self) -> int:
        """The current (or last) turn number; 0 before the first turn."""
        return self._turn

    @property
    def llm_calls(self) -> int:
        """Model calls the manager has made so far."""
        return self.supervisor.llm_calls if self.supervisor is not None else 0

    def take_step(self) -> int:
        """Count a step that runs nothing (e.g. a malformed model reply); its index."""
        step = self._next_step
        self._next_step += 1
        return step

    def begin_turn(self, question: str, turn: int | None = None, context: str = "") -> list[Hint]:
        """Start a user turn (numbered from 1 unless ``turn`` is given); the manager's notes.

        ``context`` is what the user said before the question (a revised assumption, a
        definition); a manager that does not take it gets the question alone."""
        sup = self._sup()
        if self._in_turn:
            self.end_turn()
        self._turn = self._turn + 1 if turn is None else turn
        self._in_turn = True
        self._question = question or None
        self._answer = None
        notes = (
            sup.begin_turn(self._turn, question, context=context)
            if context
            else sup.begin_turn(self._turn, question)
        )
        self._drain()
        return self._words(notes)

    def run_cell(
        self, code: str, *, thought: str = "", timeout: float | None = None
    ) -> CellOutcome:
        """Execute one cell, record its lineage, and let the manager review the step.

        A dead backend is restarted after the cell (``restarted`` says so). Without
        an open turn, one is opened with an empty question.
        """
        sup = self._sup()
        if not self._in_turn:
            self.begin_turn("")
        result = self.tracked.execute(code, timeout=timeout or self.cell_timeout)
        restarted = result.execution.status == "dead"
        step = self.take_step()
        rebuild = self._restart(timeout) if restarted else None
        if result.execution.ok:
            self._succeeded.append((step, code))
        view = Step(
            turn=self._turn,
            step=step,
            thought=thought,
            code=code,
            execution=result.execution,
            cell=result.cell,
        )
        notes = sup.after_step(view)
        return CellOutcome(
            step=step,
            execution=result.execution,
            cell=result.cell,
            notes=tuple(self._words(notes)),
            events=tuple(self._drain()),
            restarted=restarted,
            rebuild=rebuild,
            audit=self._observe(result.execution),
        )

    def run_setup(self, code: str, *, timeout: float | None = None) -> CellOutcome:
        """Run a cell the agent did not write (e.g. a benchmark's context cells).

        Lineage records it; the manager does not see it as a step of the agent.
        """
        self._sup()
        result = self.tracked.execute(code, timeout=timeout or self.cell_timeout)
        restarted = result.execution.status == "dead"
        rebuild = self._restart(timeout) if restarted else None
        if result.execution.ok:
            self._succeeded.append((None, code))
        return CellOutcome(
            step=self._next_step,
            execution=result.execution,
            cell=result.cell,
            restarted=restarted,
            rebuild=rebuild,
            audit=self._observe(result.execution),
        )

    def _restart(self, timeout: float | None) -> Rebuild | None:
        """Restart the dead backend; with ``rebuild``, run again every cell that had succeeded.

        The cells run through lineage (new versions), not past the manager. Rebuilding
        stops at the first cell that does not succeed again; the cells before it count.
        """
        self.tracked.restart()
        if not self.rebuild:
            self._succeeded = []
            return None
        started = time.perf_counter()
        replayed: list[int | None] = []
        for i, (step, code) in enumerate(self._succeeded):
            replayed.append(step)
            res = self.tracked.execute(code, timeout=timeout or self.cell_timeout).execution
            if not res.ok:
                if res.status == "dead":
                    self.tracked.restart()
                error = f"{res.error.ename}: {res.error.evalue}" if res.error else res.status
                self._succeeded = self._succeeded[:i] if res.status != "dead" else []
                return Rebuild(
                    replayed=tuple(replayed),
                    seconds=time.perf_counter() - started,
                    failed=i,
                    error=error[:200],
                )
        return Rebuild(replayed=tuple(replayed), seconds=time.perf_counter() - started)

    def _observe(self, execution: ExecutionResult) -> CellAudit | None:
        if self.auditor is None:
            return None
        return self.auditor.observe(execution, self._question)

    def propose_answer(self, text: str, *, thought: str = "") -> Review:
        """Submit the turn's answer; a rejection carries repair notes and the turn goes on."""
        sup = self._sup()
        if not self._in_turn:
            self.begin_turn("")
        step = self.take_step()
        review = sup.review_answer(Step(turn=self._turn, step=step, thought=thought, answer=text))
        if review.accepted:
            self._answer = text
        return Review(
            step=step,
            accepted=review.accepted,
            notes=tuple(self._words(review.hints)),
            events=tuple(self._drain()),
        )

    def end_turn(self, answer: str | None = None) -> None:
        """Close the turn; ``answer`` defaults to the last accepted proposal (or None)."""
        sup = self._sup()
        if not self._in_turn:
            return
        self._in_turn = False
        sup.end_turn(self._turn, answer if answer is not None else self._answer)
        self._drain()

    def _words(self, hints: Sequence[Hint]) -> list[Hint]:
        return [self.hints.render(h) for h in hints]

    # -------------------------------------------------------------------- events
    def _drain(self) -> list[ManagerEvent]:
        assert self.supervisor is not None
        events = self.supervisor.drain_events()
        for event in events:
            for sink in self.sinks:
                sink(event)
        self._events.extend(events)
        return events

    def drain_events(self) -> list[ManagerEvent]:
        """Manager events since the last call, oldest first (sinks got them already)."""
        out, self._events = self._events, []
        return out

    # ------------------------------------------------------------------- queries
    def stale_values(self) -> list[StaleValue]:
        """Every live value that is stale, with the reason."""
        out = []
        for key, reason in sorted(self.graph.stale_live_versions().items()):
            name = VarKey.name_of(key)
            out.append(
                StaleValue(name=name, version=key, reason=reason, explanation=reason.describe())
            )
        return out

    def why_stale(self, name: str) -> StaleValue | None:
        """Why the live value of ``name`` (or the version ``name@vN``) is stale; None if not."""
        key = self._key(name)
        reason = self.graph.why_stale(key)
        if reason is None:
            return None
        return StaleValue(
            name=VarKey.name_of(key), version=key, reason=reason, explanation=reason.describe()
        )

    def lineage_of(self, name: str) -> Lineage:
        """The version of ``name`` (latest unless ``name@vN``), its parents and ancestors."""
        key = self._key(name)
        version = self.graph.version(key)
        return Lineage(
            name=version.name,
            version=key,
            cell=version.cell,
            parents=tuple(self.graph.derived_from(key)),
            ancestors=tuple(sorted(self.graph.ancestors(key))),
            stale=self.graph.is_stale(key),
        )

    def _key(self, name: str) -> str:
        if VarKey.is_key(name):
            try:
                self.graph.version(name)
            except KeyError as exc:
                raise GuardError(f"no version {name} in this session") from exc
            return name
        latest = self.graph.latest(name)
        if latest is None:
            raise GuardError(f"no live variable {name!r} in this session")
        return latest.key

    def states(self) -> list[AnalyticalState]:
        """Committed analytical states, oldest first (empty without a state-keeping manager)."""
        store = self._state_store()
        return store.committed() if store is not None else []

    def load_state(self, state_id: str) -> AnalyticalState:
        """One analytical state by id."""
        store = self._state_store()
        if store is None:
            raise GuardError("this session's manager keeps no analytical states")
        return store.get(state_id)

    def _state_store(self) -> StateStore | None:
        if self.store is not None:
            return self.store
        if isinstance(self.supervisor, StateHarness):
            return self.supervisor.store
        return None
