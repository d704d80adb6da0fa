"""`GuardedExecutor`: smolagents' `CodeAgent` runs its code in a guarded, contained kernel.

smolagents makes the code executor of a `CodeAgent` pluggable (``CodeAgent(...,
executor=...)``): an executor implements `PythonExecutor` — ``send_tools``,
``send_variables`` and ``__call__(code) -> CodeOutput``. `GuardedExecutor` implements it
over a `GuardedSession`, so the agent and its loop stay as they are::

    with GuardedExecutor() as executor:
        agent = CodeAgent(tools=[...], model=model, executor=executor)
        executor.run(agent, "What is the cost at the revised rate?")

What changes for the agent:

- Its code runs in the session's kernel (by default an ipykernel in a bubblewrap
  sandbox where ``bwrap`` is installed, unconfined and saying so where it is not), with
  lineage and the audit beside it.
- Each observation ends with stateguard's notes: the stale values the code read (``stale
  value read: ...``), the audit's findings (``audit alarm: ...``), a rebuilt kernel, and the
  manager's notes (rendered by `stateguard.hints`).
- ``final_answer(x)`` stops the code, as in smolagents, and the answer goes through
  `GuardedSession.propose_answer`. An accepted answer ends the run; a refused one comes
  back as the observation, with the manager's repair notes, and the agent goes on.
- Tools are defined inside the kernel from their source, as smolagents' remote executors
  (E2B, Docker, Modal) do: a tool runs where the agent's code runs, so it has what the
  kernel has (no network unless the session's kernel was given it). Managed agents are
  host objects and are refused with a `GuardedExecutorError`.
- Variables (``agent.run(..., additional_args=...)``) are sent with smolagents'
  `SafeSerializer` without pickle; a value it cannot encode is refused, naming it (put
  data files in the kernel's data directory instead).

A call to ``agent.run`` is one turn of the session. `GuardedExecutor.run` (or
`begin_turn` before ``agent.run``) gives the manager the turn's question.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import TracebackType
from typing import Any

try:
    from smolagents.local_python_executor import CodeOutput, InterpreterError, PythonExecutor
    from smolagents.serialization import SafeSerializer, SerializationError
    from smolagents.tools import Tool, get_tools_definition_code
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "stateguard.integrations.smolagents needs the smolagents extra: "
        "pip install 'stateguard[smolagents]'"
    ) from exc

from stateguard.errors import StateguardError
from stateguard.guard import CellOutcome, GuardedSession, Review
from stateguard.kernel.results import PRIVATE_MIME_PREFIX
from stateguard.manager import Hint

__all__ = [
    "FINAL_ANSWER_EXCEPTION",
    "FINAL_ANSWER_MIME",
    "GuardedExecutor",
    "GuardedExecutorError",
]

FINAL_ANSWER_EXCEPTION = "FinalAnswerException"
"""The exception ``final_answer`` raises in the kernel (smolagents' own name for it)."""

FINAL_ANSWER_MIME = PRIVATE_MIME_PREFIX + "final-answer+json"
"""The private display data carrying a final answer out of the kernel."""

# In the kernel: ``final_answer`` raises `FinalAnswerException` to end the code, as in
# smolagents. IPython hands the exception to a custom handler, which publishes the answer
# as private display data instead of a traceback, and a post_run_cell hook (registered
# after lineage's, which still sees where the code stopped) clears the error: the cell
# that gave an answer is a cell that succeeded, for the kernel's reply and the manager.
_FINAL_ANSWER_CODE = f'''
def _stateguard_final_answer_setup():
    import json as _json

    from IPython import get_ipython
    from IPython.display import publish_display_data

    shell = get_ipython()

    class {FINAL_ANSWER_EXCEPTION}(BaseException):
        """Raised by final_answer: ends the code and carries the answer out as JSON."""

    def _plain(value):
        item = getattr(value, "item", None)
        if callable(item):
            try:
                return item()
            except Exception:
                pass
        return str(value)

    def final_answer(answer):
        """Provides a final answer to the given problem."""
        try:
            payload = _json.dumps({{"answer": answer}}, default=_plain)
        except (TypeError, ValueError):
            payload = _json.dumps({{"answer": str(answer)}})
        raise {FINAL_ANSWER_EXCEPTION}(payload)

    def _handler(shell, etype, value, tb, tb_offset=None):
        payload = value.args[0] if value.args else ""
        publish_display_data({{{FINAL_ANSWER_MIME!r}: str(payload)}})

    def _succeeded(result):
        if isinstance(getattr(result, "error_in_exec", None), {FINAL_ANSWER_EXCEPTION}):
            result.error_in_exec = None

    old = getattr(shell, "_stateguard_final_answer_hook", None)
    if old is not None and old in shell.events.callbacks["post_run_cell"]:
        shell.events.unregister("post_run_cell", old)
    shell.events.register("post_run_cell", _succeeded)
    shell._stateguard_final_answer_hook = _succeeded
    shell.set_custom_exc(({FINAL_ANSWER_EXCEPTION},), _handler)
    return {FINAL_ANSWER_EXCEPTION}, final_answer


{FINAL_ANSWER_EXCEPTION}, final_answer = _stateguard_final_answer_setup()
del _stateguard_final_answer_setup
'''


class GuardedExecutorError(StateguardError):
    """A tool, variable or option the guarded smolagents executor cannot take."""


class GuardedExecutor(PythonExecutor):
    """A smolagents `PythonExecutor` over a `GuardedSession`; see the module docstring."""

    def __init__(
        self,
        guard: GuardedSession | None = None,
        *,
        max_print_outputs_length: int = 50_000,
        **session_options: Any,
    ) -> None:
        """Guard ``guard``, or a `GuardedSession(**session_options)` this executor owns.

        ``session_options`` are `GuardedSession`'s (``manager=``, ``run_dir=``,
        ``cell_timeout=``, an executor backend as ``executor=``...); an owned session is
        closed by `cleanup` (smolagents' ``agent.cleanup()``) or on leaving a ``with``.
        ``max_print_outputs_length`` caps the printed output an observation carries.
        """
        if guard is not None and session_options:
            raise GuardedExecutorError(
                "give a GuardedSession or GuardedSession options, not both: "
                f"got {sorted(session_options)} with a session"
            )
        if max_print_outputs_length < 1:
            raise GuardedExecutorError(
                f"max_print_outputs_length must be at least 1, got {max_print_outputs_length}"
            )
        self.guard = guard if guard is not None else GuardedSession(**session_options)
        self._owns = guard is None
        self.max_print_outputs_length = max_print_outputs_length
        self._base_setup = self.guard.tracked.setup_code
        self._tools_code = ""
        self._sent: dict[str, str] = {}
        """Each variable sent to the kernel, as last serialized (unchanged ones are not resent)."""
        self._turn_used = False
        self._pending: list[Hint] = []
        """Notes from `begin_turn`, for the turn's first observation."""
        self.last_outcome: CellOutcome | None = None
        """The last cell the agent ran."""
        self.last_review: Review | None = None
        """The manager's verdict on the last ``final_answer``."""

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> GuardedExecutor:
        self.guard.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.cleanup()

    def cleanup(self) -> None:
        """Close the session if this executor made it (smolagents calls this on cleanup)."""
        if self._owns:
            self.guard.close()

    # ---------------------------------------------------------------------- turns
    def begin_turn(self, question: str, context: str = "") -> list[Hint]:
        """Give the manager the next ``agent.run``'s question; its notes open the first
        observation of the turn (and are returned)."""
        notes = self.guard.begin_turn(question, context=context)
        self._turn_used = False
        self._pending = list(notes)
        return notes

    def run(self, agent: Any, task: str, **run_options: Any) -> Any:
        """``agent.run(task, **run_options)`` as one turn whose question is ``task``."""
        self.begin_turn(task)
        return agent.run(task, **run_options)

    # ------------------------------------------------------------ PythonExecutor
    def send_tools(self, tools: dict[str, Tool]) -> None:
        """Define the agent's tools in the kernel (again after any restart).

        smolagents calls this at the start of every ``agent.run``: a turn in which code
        already ran ends here, so each run is a turn of its own."""
        self._end_used_turn()
        hosted = {name: t for name, t in tools.items() if name != "final_answer"}
        wrong = sorted(name for name, t in hosted.items() if not isinstance(t, Tool))
        if wrong:
            raise GuardedExecutorError(
                f"only smolagents Tools run in the guarded kernel; not a Tool: {', '.join(wrong)} "
                "(managed agents are host objects: run them with an executor of their own)"
            )
        try:
            code = get_tools_definition_code(hosted) if hosted else ""
        except Exception as exc:
            raise GuardedExecutorError(
                f"a tool's source cannot be sent to the kernel ({exc}); tools must be "
                "self-contained, as for smolagents' remote executors"
            ) from exc
        self._tools_code = "\n\n".join(c for c in (code, _FINAL_ANSWER_CODE) if c)
        tracked = self.guard.tracked
        tracked.setup_code = "\n\n".join(c for c in (self._base_setup, self._tools_code) if c)
        self.guard.start()  # idempotent; a fresh kernel runs the setup above itself
        res = self.guard.executor.execute(self._tools_code, silent=True, store_history=False)
        if not res.ok:
            detail = f"{res.error.ename}: {res.error.evalue}" if res.error else res.status
            raise GuardedExecutorError(f"defining the tools in the kernel failed: {detail}")

    def send_variables(self, variables: dict[str, Any]) -> None:
        """Assign the agent's variables in the kernel; lineage records them, unchanged
        ones are not sent again (a resent value would be a new version).

        smolagents calls this first at the start of every ``agent.run``, so it also ends a
        turn in which code already ran."""
        self._end_used_turn()
        changed: dict[str, str] = {}
        for name, value in variables.items():
            if not isinstance(name, str) or not name.isidentifier():
                raise GuardedExecutorError(f"variable name {name!r} is not a Python identifier")
            try:
                encoded = SafeSerializer.dumps(value, allow_pickle=False)
            except SerializationError as exc:
                raise GuardedExecutorError(
                    f"variable {name!r} ({type(value).__name__}) cannot be sent to the kernel "
                    f"without pickle ({exc}); put data files in the kernel's data directory"
                ) from exc
            if self._sent.get(name) != encoded:
                changed[name] = encoded
        if not changed:
            return
        reader = SafeSerializer.get_deserializer_code(allow_pickle=False)
        names = list(changed)
        values = "[" + ", ".join(f"_d({changed[n]!r})" for n in names) + "]"
        code = (
            f"{', '.join(names)}, = (lambda _ns: (exec({reader!r}, _ns), "
            f"(lambda _d: {values})(_ns['_deserialize']))[1])({{}})"
        )
        outcome = self.guard.run_setup(code)
        if not outcome.ok:
            error = outcome.execution.error
            detail = f"{error.ename}: {error.evalue}" if error else outcome.execution.status
            raise GuardedExecutorError(f"sending variables {names} to the kernel failed: {detail}")
        self._sent.update(changed)

    def __call__(self, code_action: str) -> CodeOutput:
        """Run the agent's code as one guarded step; a ``final_answer`` is proposed."""
        outcome = self.guard.run_cell(code_action)
        self.last_outcome = outcome
        self._turn_used = True
        notes = [*self._pending, *outcome.notes]
        self._pending = []
        execution = outcome.execution
        logs = self._clip(execution.stdout)
        found = _notes_text(outcome, notes)
        answers = [p["data"] for p in execution.private if p.get("mime") == FINAL_ANSWER_MIME]
        if answers and execution.ok:
            answer = _decode_answer(answers[0])
            review = self.guard.propose_answer(str(answer))
            self.last_review = review
            if review.accepted:
                return CodeOutput(output=answer, logs=_join(logs, found), is_final_answer=True)
            refusal = _join(
                f"stateguard: the answer {answer!r} was not accepted.",
                "\n".join(h.text for h in review.notes),
            )
            return CodeOutput(output=None, logs=_join(logs, found, refusal), is_final_answer=False)
        error = execution.error
        if error is not None:
            head = f"Code execution failed: {error.ename}: {error.evalue}"
            printed = f"Printed before the error:\n{logs}" if logs else ""
            raise InterpreterError(_join(printed, head, found))
        return CodeOutput(output=execution.result, logs=_join(logs, found), is_final_answer=False)

    def _end_used_turn(self) -> None:
        if self._turn_used:
            self.guard.end_turn()
            self._turn_used = False

    def _clip(self, text: str) -> str:
        cap = self.max_print_outputs_length
        if len(text) <= cap:
            return text
        return text[:cap] + f"\n[... {len(text) - cap} more characters of output cut]"


def _decode_answer(data: Any) -> Any:
    """The answer ``final_answer`` encoded (JSON, never pickle); model code raising the
    exception itself with any other text gives that text."""
    text = str(data)
    try:
        payload = json.loads(text)
    except ValueError:
        return text
    if isinstance(payload, Mapping) and set(payload) == {"answer"}:
        return payload["answer"]
    return text


def _notes_text(outcome: CellOutcome, notes: list[Hint]) -> str:
    """stateguard's notes on one cell, as lines the agent reads ("" when there are none)."""
    lines: list[str] = []
    seen: set[str] = set()
    for reason in outcome.stale_reads:
        if reason.version not in seen:
            seen.add(reason.version)
            lines.append(f"stateguard: stale value read: {reason.describe()}")
    if outcome.audit is not None and (audit := outcome.audit.describe()):
        lines.append(audit)
    if outcome.rebuild is not None:
        lines.append(f"stateguard: {outcome.rebuild.describe()}")
    lines.extend(h.text for h in notes)
    return "\n".join(lines)


def _join(*parts: str) -> str:
    return "\n".join(p.rstrip("\n") for p in parts if p)
