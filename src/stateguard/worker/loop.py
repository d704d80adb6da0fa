"""The ReAct data-analysis worker: one model and one `GuardedSession`.

`Worker.run_turn` is a generator of `TrajectoryEvent`s. Per turn:

1. `TurnStarted`; the system prompt (`ModelMessage`, first turn only); the
   supervisor's ``begin_turn`` hints (`HintDelivered`), injected verbatim as user
   content after the question (`ModelMessage` role user).
2. Each step: one model call (`ModelMessage` role assistant), parsed into a
   `StepRecord`. A code step is executed in the kernel; its observation (head and
   tail kept) is sent back, then ``after_step`` hints. A malformed reply gets a
   corrective message and runs nothing. An answer goes to ``review_answer``: accepted
   ends the turn, rejected injects the repair hints and the loop goes on.
3. ``end_turn``; supervisor events are drained into `ManagerLogged` after every
   supervisor call; finally `AnswerRecorded` (answer None when the turn ended
   without one; `AnswerRecorded.ended` says why).

A turn without an accepted answer ends at the first of: the step budget, the
token budget (``turn_tokens``, the worker model's completion tokens, checked before
each model call), the optional time budget (``turn_seconds``, off by default, checked
before each model call), ``no_progress_limit``
consecutive steps without progress (see `stateguard.worker.attempts`), ``repeat_limit``
consecutive steps that only re-sent a cell not run again (with greedy decoding the
model is then locked on it: its resampled candidates repeated it too), or an
interrupt (KeyboardInterrupt: the turn is closed, its `AnswerRecorded` yielded, then
the interrupt is raised again).

A cell that repeats one that failed in this turn is never run again, nor is one that
is no Python (a traceback copied from the last observation); a reply of no step's form
(empty, no block and no answer, a block of comments only) sent again word for word is
not taken either (the note on it changed nothing). Instead the
same prompt is sampled up to ``retry_samples`` more times at ``retry_temperature``
(the prompt is shared, so a local backend reuses its cache); each new candidate is
tried in a copy-on-write probe, and the first that runs (preferably showing
something) replaces the repeat. The probes leave the namespace untouched. When no
candidate differs, the model is told what it repeated, the failing line and what
its names held, and the step counts as no progress.

Every step counts against the budget, malformed ones included; extra samples do
not. Step indices are global across the task (the guarded session keeps the
counter); one worker (and one kernel) serves all turns of a task.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from pathlib import PurePosixPath

from stateguard.audit.filterchecks import probe_json
from stateguard.audit.nanchecks import describe as describe_nan_columns
from stateguard.audit.nanchecks import nan_columns
from stateguard.audit.printchecks import shown_series
from stateguard.checks import Finding
from stateguard.guard import GuardedSession
from stateguard.hints import compact_state_hint
from stateguard.kernel import ExecutionResult, namespace
from stateguard.lineage import CellRecord, LineageGraph
from stateguard.lineage.narrowing import narrowed_columns
from stateguard.llm import ChatModel
from stateguard.llm.limits import ReplyCut, cut_reply
from stateguard.llm.local import ANSWER_STEP_GRAMMAR, CODE_STEP_GRAMMAR, STEP_GRAMMAR
from stateguard.llm.messages import estimate_tokens
from stateguard.manager import Hint
from stateguard.manager.evidence import names_key, refusal_key, same_answer
from stateguard.manager.notes import RepairNotice
from stateguard.manager.revisions import value_literals
from stateguard.numbers import is_valueless, scan
from stateguard.question import (
    Definition,
    QuestionSpec,
    Revision,
    asked_terms,
    counted_by_total,
    defined_terms,
    described_columns,
    named_columns,
    names_file,
    names_number,
    sentences_about,
    stated_parameters,
    term_parameters,
    value_mentions,
    words,
)
from stateguard.types import VarKey
from stateguard.worker.answer_format import AnswerSpec, extract_answer
from stateguard.worker.attempts import AttemptLog, cell_key
from stateguard.worker.doubts import (
    FAILURES,
    SESSION_FAILURES,
    SHOWN_AGAIN,
    VALUE_DOUBTS,
    silent_errors,
)
from stateguard.worker.error_context import (
    assigned_names,
    bare_annotations,
    created_context,
    error_context,
    failing_line,
    strip_answer_lines,
)
from stateguard.worker.events import (
    AnswerRecorded,
    HintDelivered,
    ManagerLogged,
    ModelMessage,
    StepRecord,
    TrajectoryEvent,
    TurnEnd,
    TurnStarted,
)
from stateguard.worker.formatting import NO_OUTPUT, format_hint, format_observation
from stateguard.worker.grounding import SMALL, held_by, unclaimed, unseen_numbers
from stateguard.worker.history import Conversation, Exchange
from stateguard.worker.parsing import ParsedReply, close_open_block, parse_reply
from stateguard.worker.preload import SETUP_THOUGHT, Preload, variable_name
from stateguard.worker.prompts import (
    corrective_messages,
    observation_notes,
    render,
    system_template,
)
from stateguard.worker.scope import ScopeLog
from stateguard.worker.terms import is_column, names_term, reduced_columns

_FORM_PROBLEMS = frozenset(
    {"empty", "no_action", "unterminated_code", "empty_code", "commented_code", "guessed_form"}
)
"""Problems of a reply that is no step at all (nothing to run, no answer): one sent again
word for word is resampled (see the module docstring)."""
_FAILURE_NAMES = {**FAILURES, **SESSION_FAILURES}
"""Every doubt's name in the attempt log: the registered checks' and the loop's own."""

NO_DATA_TEXT = "There are no input files for this session."

READ_ONLY_DATA = "data"
"""The read-only data directory of a session (`stateguard.kernel`'s ``data/`` mount)."""


def data_place(data_dir: str = READ_ONLY_DATA) -> str:
    """Where the prompt says the input files are: the read-only ``data/`` of a session, or
    another directory of the working directory (a benchmark's ``inputs/`` copy)."""
    if data_dir == READ_ONLY_DATA:
        return (
            "The input files are in the directory `data/` (relative to the working directory;\n"
            "the same path is in the environment variable `STATEGUARD_DATA_DIR`). They are\n"
            "read-only: load them, never modify them. Write any file you create to the working\n"
            "directory instead."
        )
    return (
        f"The input files are in the directory `{data_dir}/` (relative to the working\n"
        f"directory). Load them from there, with the paths listed below."
    )


SILENT_CELL = "(no output)"
"""The observation of a cell that showed nothing, before what its names hold."""
FORMATTED_THOUGHT = (
    "(answer written in the requested format from the printed output; no model call)"
)
"""The thought of an answer step that `stateguard.worker.answer_format` wrote."""
CODE_STOP = "\n```\n\n"
"""Stop sequence: a closed code block followed by a blank line, i.e. more text after the
step's code. Generation stops there (the fence is closed again by the loop)."""


_LISTED_TABLE = re.compile(r"^- ([\w.-]+/.+?\.(?:csv|tsv)) \(", re.M | re.I)


def load_example(data_files: str) -> str:
    """The code of the prompt's example step: load the first listed CSV/TSV file into a
    variable named after it (a small model copies the example, so it names real data)."""
    match = _LISTED_TABLE.search(data_files)
    path = match.group(1) if match else "data/table.csv"
    name = variable_name(path)
    sep = ', sep="\\t"' if path.lower().endswith(".tsv") else ""
    lines = ["import pandas as pd", "", f'{name} = pd.read_csv("{path}"{sep})', f"{name}.head()"]
    return "\n".join(f"  {line}" if line else "" for line in lines)


def system_prompt(
    data_files: str,
    max_steps: int,
    example: str | None = None,
    data_dir: str = READ_ONLY_DATA,
    column_example: str = "",
) -> str:
    """The worker's system prompt with the data listing, example and step budget filled in
    (``example``: the example step's code; default: load the first listed table;
    ``data_dir``: the directory the listing's paths start with, `data_place`;
    ``column_example``: an example of a per-row column on the task's own frame and
    columns, `stateguard.worker.preload.Preload.column_example`; "" for none: a prompt
    names no column the task does not have)."""
    return render(
        system_template(),
        data_place=data_place(data_dir),
        data_files=data_files or NO_DATA_TEXT,
        max_steps=max_steps,
        load_example=example if example is not None else load_example(data_files),
        column_example=column_example,
    )


def _takes(model: ChatModel, name: str) -> bool:
    """Whether ``model.complete`` names the keyword ``name`` among its parameters."""
    try:
        params = inspect.signature(model.complete).parameters
    except (TypeError, ValueError):
        return False
    return name in params


CUT_PROBLEMS = {
    "tokens": "reply_over_tokens",
    "seconds": "reply_over_seconds",
    "line": "reply_over_line",
}
"""A reply cut by a bound (`ModelMessage.cut`) -> the malformed step it counts as. A reply
cut at an imitated marker is not malformed by itself: what came before the marker is
parsed as the reply."""
_CUT_SHOWN = 300
"""Characters of a cut reply kept in the conversation (the rest is not shown again)."""


def _takes_grammar(model: ChatModel) -> bool:
    """Whether ``model.complete`` takes ``grammar=`` (a backend saying ``supports_grammar``
    whose ``complete`` has the parameter, or forwards any keyword)."""
    if not getattr(model, "supports_grammar", False):
        return False
    try:
        params = inspect.signature(model.complete).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "grammar" or p.kind is p.VAR_KEYWORD for p in params)


_FIELD_LABEL = re.compile(r"\w\s*[:=]")

_GROUPING = frozenset({"groupby", "pivot_table", "resample", "crosstab"})
"""Calls that gather rows into groups, as a total per thing needs."""
_ORDER = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<="}

_REDUCTIONS: dict[str, frozenset[str]] = {
    "sum": frozenset({"sum", "total"}),
    "mean": frozenset({"mean", "average", "avg"}),
    "median": frozenset({"median", "50%"}),
    "share": frozenset(),
    "count": frozenset({"count", "size"}),
}
"""The statistics that reduce rows to one number, with the index labels that name each
(a row of ``describe()`` or ``agg([...])`` that is the statistic asked)."""


_HUNDRED = re.compile(r"(?<![\w.])100(?:\.0*)?(?![\w.])")
"""The number 100 in code (not 1000, 0.100 or a name)."""
_WRITER_LINE_CHARS = 300
"""The longest line `writer_lines` quotes."""


def writer_lines(graph: LineageGraph, versions: Sequence[str]) -> list[tuple[str, int, str]]:
    """(name, cell, line) for each of ``versions`` (``name@vN``) that a top-level
    assignment to that name wrote whole (a binding, or a store to a part), as written in
    the cell that created the version (the cell's last such assignment); versions written
    otherwise (a method call, a function, a change to one of their parts) or unknown are
    left out."""
    cells = {c.cell: c.source for c in graph.cells}
    out: list[tuple[str, int, str]] = []
    for key in dict.fromkeys(versions):
        try:
            version = graph.version(key)
        except KeyError:
            continue
        if version.kind not in ("bind", "store"):
            continue  # a value changed in part, or in place: no line wrote it whole
        source = cells.get(version.cell)
        try:
            tree = ast.parse(source or "")
        except SyntaxError:
            continue
        found = [
            node
            for node in tree.body
            if isinstance(node, ast.Assign | ast.AugAssign)
            and any(
                ast.unparse(t) == version.name
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
            )
        ]
        line = ast.get_source_segment(source or "", found[-1]) if found else None
        if line and len(line) <= _WRITER_LINE_CHARS and "\n" not in line:
            out.append((version.name, version.cell, line))
    return out


def _rate_form(value: float) -> str:
    return f"{round(value, 10):.10g}"


def revised_line(line: str, revision: Revision) -> str | None:
    """``line`` with each number that writes ``revision``'s old value written with its new
    one: a percent as its rate (``0.09`` -> ``0.04`` for 9 % -> 4 %) or its complements
    (``1.09``, ``0.91``), a plain value as itself. None when the line writes no such number
    or does not parse."""
    try:
        tree = ast.parse(line)
    except SyntaxError:
        return None
    if revision.percent:
        old, new = revision.old / 100, revision.new / 100
        pairs = [(old, new), (1 + old, 1 + new), (1 - old, 1 - new)]
    elif revision.old != 0:
        pairs = [(revision.old, revision.new)]
    else:
        return None
    changed = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            for was, now in pairs:
                if abs(float(node.value) - was) <= 1e-9 * max(1.0, abs(was)):
                    whole = isinstance(node.value, int) and float(now).is_integer()
                    node.value = int(now) if whole else float(_rate_form(now))
                    changed = True
                    break
    return ast.unparse(tree) if changed else None


def runnable(code: str) -> bool:
    """Whether ``code``, less the answer lines the worker strips before running it
    (`strip_answer_lines`), parses as Python; a cell with an IPython magic or shell line
    (``%time``, ``!ls``) counts, since the kernel runs it."""
    code = strip_answer_lines(code)[0]
    if any(line.lstrip().startswith(("%", "!")) for line in code.splitlines()):
        return True
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def _revision_words(revision: Revision) -> str:
    """``from 8 % to 10 %`` / ``from 180 to 195``."""
    unit = " %" if revision.percent else ""
    return f"from {revision.old:g}{unit} to {revision.new:g}{unit}"


def _answer_key(answer: str) -> str:
    return " ".join(answer.lower().split())


def _opener(turn: int, question: str, context: str) -> str:
    parts = []
    if context.strip():
        parts.append(f"Context:\n{context.strip()}")
    parts.append(f"Question (turn {turn}):\n{question.strip()}")
    return "\n\n".join(parts)


def _mentions(text: str, value: str) -> bool:
    """Whether ``value`` occurs in ``text`` (case aside) as a word of its own, not inside
    a longer name or word: ``'Enterprise'`` and ``== "enterprise"`` do, ``enterprise_orders``
    does not."""
    return re.search(rf"(?<![\w]){re.escape(value)}(?![\w])", text, re.I) is not None


class Worker:
    """Answers the turns of one task with a chat model and a guarded kernel session."""

    def __init__(
        self,
        model: ChatModel,
        guard: GuardedSession,
        *,
        max_steps_per_turn: int = 12,
        turn_seconds: float | None = None,
        no_progress_limit: int = 4,
        repeat_limit: int = 2,
        retry_samples: int = 2,
        observation_chars: int = 4000,
        cell_timeout: float = 120,
        context_chars: int = 16_000,
        max_tokens: int | None = 512,
        call_seconds: float | None = 900.0,
        turn_tokens: int | None = 4000,
        reply_cut: ReplyCut | None = None,
        compact_hints: bool = True,
        temperature: float = 0.0,
        retry_temperature: float = 0.7,
        error_context: bool = True,
        check_answer_numbers: bool = True,
        constrain_replies: bool = True,
        data_files: str = "",
        data_dir: str = READ_ONLY_DATA,
        system: str | None = None,
        setup: Preload | None = None,
    ) -> None:
        """``context_chars`` bounds the prompt sent per call (see `Conversation`).

        ``data_files`` describes the input files for the system prompt, ``data_dir`` the
        directory their paths start with (``data``: the session's read-only data);
        ``system`` replaces the whole system prompt. ``setup`` (`stateguard.worker.preload`) is run
        as the session's first cell, before the first model call. ``turn_tokens``
        (completion tokens of the worker's model in one turn, candidates included; None:
        no limit), ``turn_seconds`` (wall clock; None: no limit, the default: a turn then
        ends the same way on a fast or a slow machine), ``no_progress_limit`` and
        ``repeat_limit`` (consecutive steps whose reply, and every resampled candidate,
        re-sent a cell that is not run again) end a turn without an answer;
        ``retry_samples`` extra candidates are drawn when a reply repeats a failed cell
        (0: none).
        ``constrain_replies`` passes `STEP_GRAMMAR` to a model that takes a grammar
        (``supports_grammar``, the embedded backend): each reply is then one thought and
        one python block, or one answer.

        Every call is bounded: ``max_tokens`` (the token cap), ``call_seconds`` (the wall
        clock cap, None: none) and ``reply_cut`` (longest line, imitated system markers;
        `stateguard.llm.limits`). A backend that takes ``seconds=`` and ``cut=`` (the
        embedded one) stops generating at them; any other reply is checked after it
        returns. A reply over the token, time or line cap counts as a malformed step
        (`CUT_PROBLEMS`); one that imitates a marker is cut there.

        ``compact_hints`` reduces the state hint at a turn's start to the states relevant
        to its question (`stateguard.hints.compact`); each hint's tokens are recorded.
        """
        if max_steps_per_turn < 1:
            raise ValueError(f"max_steps_per_turn must be >= 1, got {max_steps_per_turn}")
        if turn_seconds is not None and turn_seconds <= 0:
            raise ValueError(f"turn_seconds must be positive, got {turn_seconds}")
        if turn_tokens is not None and turn_tokens < 1:
            raise ValueError(f"turn_tokens must be >= 1, got {turn_tokens}")
        if call_seconds is not None and call_seconds <= 0:
            raise ValueError(f"call_seconds must be positive, got {call_seconds}")
        if no_progress_limit < 1 or repeat_limit < 1 or retry_samples < 0:
            raise ValueError(
                "no_progress_limit and repeat_limit must be >= 1 and retry_samples >= 0"
            )
        self.model = model
        self.guard = guard
        self.max_steps_per_turn = max_steps_per_turn
        self.turn_seconds = turn_seconds
        self.no_progress_limit = no_progress_limit
        self.repeat_limit = repeat_limit
        self.retry_samples = retry_samples
        self.observation_chars = observation_chars
        self.cell_timeout = cell_timeout
        self.max_tokens = max_tokens
        self.call_seconds = call_seconds
        self.turn_tokens = turn_tokens
        self.reply_cut = reply_cut or ReplyCut()
        self._bounds = {name: _takes(model, name) for name in ("seconds", "cut")}
        """Which call bounds the backend applies itself while generating."""
        self._turn_tokens_used = 0
        """Completion tokens of the worker's model in the current turn."""
        self.compact_hints = compact_hints
        self.temperature = temperature
        self.retry_temperature = retry_temperature
        self.error_context = error_context
        self.check_answer_numbers = check_answer_numbers
        self.grammar = STEP_GRAMMAR if constrain_replies and _takes_grammar(model) else None
        self._shown: list[str] = []
        """What the model was shown in this session: questions, contexts, observations."""
        self._outputs: list[str] = []
        """What the successful cells of the current turn printed or showed, oldest first."""
        self._doubted_outputs: list[tuple[int, str, str]] = []
        """This turn's outputs of cells that ran with a doubt on the value they showed:
        (step, output, the note)."""
        self._doubted_asked = False
        """Whether this turn's answer was already held back as a doubted cell's output."""
        self._turn_showed = False
        """A cell of the model ran in this turn, without a silent error, and showed something."""
        self._formatted: set[str] = set()
        """Answers of the current turn written by the formatting step (each tried once)."""
        self._spec: AnswerSpec | None = None
        self._answered: list[tuple[int, str, AnswerSpec | None, frozenset[str]]] = []
        """Earlier turns' accepted answers: (turn, normalised text, what the question asked,
        the turn's cells that ran, up to comments and layout)."""
        self._scopes = ScopeLog()
        """Variables made by selecting rows on values (`stateguard.worker.scope`)."""
        self._code_run: list[str] = []
        """The code of every cell of the session that ran without error (setup included),
        and the lines above the one a failed cell stopped at."""
        self._raised: set[str] = set()
        """The names of the exceptions the session's cells raised (``KeyError``)."""
        self._question = ""
        self._context = ""
        self._contexts: list[str] = []
        """Every turn's context so far, the current one included."""
        self._question_spec = QuestionSpec.parse("", "")
        """What the current turn's question and context state (`stateguard.question`)."""
        self._revisions: list[Revision] = []
        """Every revision the session's turns stated so far, in order."""
        self._data_columns: dict[str, tuple[str, ...]] = {}
        """Every column of each loaded frame, as the setup loaded it."""
        self._data_files: dict[str, str] = {}
        """Preloaded frame -> the ``data/...`` file it was read from."""
        self._table_columns: dict[str, tuple[str, ...]] = {}
        """Preloaded frame -> its columns after the latest cell that wrote it."""
        self._turn_cells: list[CellRecord] = []
        """The lineage records of the current turn's cells that ran without error."""
        self._first_cell = 0
        """The lineage index of the current turn's first cell."""
        self._named_cache: tuple[tuple[str, int], list[list[str]]] | None = None
        """(question, step) -> `_named_values` of that step: the namespace a reply's checks
        probe does not change between them."""
        self._cell_runs: dict[str, tuple[int, int, str, str]] = {}
        """Cell key (`cell_key`) -> (turn, step, what it showed, the turn's question) of
        its latest run without error."""
        self._unread_asked = False
        self._unformed_asked = False
        """Whether this turn's answer was already held back for lacking the asked form."""
        self._unused_asked = False
        """Whether this turn's answer was already held back for a value it never used."""
        self._unknown_asked = False
        """Whether this turn's answer was already held back for a name the data lacks."""
        self._revision_asked = False
        """Whether this turn's answer was already held back for a revision it did not use."""
        self._parameter_asked = False
        """Whether this turn's answer was already held back for a stated parameter unused."""
        self._term_parameter_asked = False
        """Whether this turn's answer was already held back for a defined quantity's
        parameters unused."""
        self._share_asked = False
        """Whether this turn's answer was already held back as a share outside 0–100 %."""
        self._recomputed_asked = False
        """Whether this turn's answer was already held back as an earlier turn's, re-run."""
        self._element_asked = False
        """Whether this turn's answer was already held back as one row of a Series."""
        self._many_asked = False
        """Whether this turn's answer was already held back for several numbers."""
        self._repeated_asked = False
        """Whether this turn's answer was already held back for one value in every field."""
        self._total_asked = False
        """Whether this turn's answer was already held back for comparing rows, not totals."""
        self._parted_asked = False
        """Whether this turn's answer was already held back for values applied apart."""
        self._term_asked = False
        """Whether this turn's answer was already held back for a defined quantity unbuilt."""
        self._percent_asked = False
        """Whether this turn's answer was already held back as a fraction for a percent."""
        self._refused_for: tuple[str, ...] = ()
        """The versions (``name@vN``) the manager named when it last refused this turn's
        answer."""
        self._held: str | None = None
        """The latest answer of this turn turned away on a doubt alone (`DOUBTS`, or a
        manager's refusal with no alarm): the turn's answer, unconfirmed, when none is
        accepted."""
        self._last_shown: list[str] = []
        """What the current turn's latest cell that ran showed (printed, result, displays)."""
        self.setup = setup
        example = setup.example if setup is not None else None
        prompt = (
            system
            if system is not None
            else system_prompt(
                data_files,
                max_steps_per_turn,
                example=example,
                data_dir=data_dir,
                column_example=setup.column_example if setup is not None else "",
            )
        )
        self.conversation = Conversation(prompt, budget_chars=context_chars)
        self._system_sent = False
        self._corrective = corrective_messages()
        self.clock: Callable[[], float] = time.monotonic
        """The turn clock (time budget, wall times); a resumed run replays turns on its own."""

    @property
    def steps_taken(self) -> int:
        """Global step counter: the index the next step gets."""
        return self.guard.step

    # ------------------------------------------------------------------ helpers
    def _note(self, key: str) -> str:
        return render(self._corrective[key], max_steps=self.max_steps_per_turn)

    def _user(self, turn: int, step: int, text: str) -> ModelMessage:
        """Add user content to the conversation and describe it as an event."""
        self.conversation.add_user(text)
        return ModelMessage(turn=turn, step=step, role="user", content=text)

    def _drain(self, turn: int) -> Iterator[ManagerLogged]:
        for event in self.guard.drain_events():
            yield ManagerLogged(turn=turn, event=event)

    def _tokens(self, text: str) -> int:
        """Tokens of ``text`` for the worker's model (an estimate without a tokenizer)."""
        count = getattr(self.model, "count_tokens", None)
        if callable(count):
            try:
                return int(count(text))
            except Exception:  # a backend that cannot count now: estimate
                pass
        return estimate_tokens(text)

    def _deliver(
        self, turn: int, step: int | None, hints: list[Hint], question: str | None = None
    ) -> Iterator[TrajectoryEvent]:
        """Send ``hints``; with ``question`` (a turn's start) state hints are compacted.
        A repair may have deleted or restored loaded tables: their columns are read again."""
        if any(h.kind == "repair" for h in hints):
            self._read_table_columns(sorted(self._table_columns), gone_to_file=True)
        for given in hints:
            hint: Hint | None = given
            if question is not None and self.compact_hints:
                templates = self.guard.hints.templates  # the wording the manager's hints use
                hint = compact_state_hint(given, question, templates=templates)
            if hint is None:
                continue
            tokens = self._tokens(format_hint(hint))
            yield HintDelivered(turn=turn, step=step, hint=hint, tokens=tokens)
            yield self._user(turn, self.steps_taken if step is None else step, format_hint(hint))

    def _call(
        self,
        turn: int,
        step: int,
        temperature: float,
        *,
        candidate: bool = False,
        code_ran: bool = True,
        answer_only: bool = False,
    ) -> tuple[ModelMessage, str]:
        """One model call on the current conversation: its event and the reply text.

        Before any cell ran in the turn, the grammar allows code only (an answer then
        would be refused as ``answer_without_code``); with ``answer_only`` (a stalled turn's
        last reply), an answer only. The event's ``cut`` says which bound ended the reply,
        if one did (see `CUT_PROBLEMS`)."""
        extra: dict[str, object] = {}
        if self.grammar is not None:
            if not code_ran:
                extra["grammar"] = CODE_STEP_GRAMMAR
            elif answer_only:
                extra["grammar"] = ANSWER_STEP_GRAMMAR
            else:
                extra["grammar"] = self.grammar
        if self._bounds["seconds"] and self.call_seconds is not None:
            extra["seconds"] = self.call_seconds
        if self._bounds["cut"]:
            extra["cut"] = self.reply_cut
        response = self.model.complete(
            self.conversation.messages(),
            max_tokens=self.max_tokens,
            temperature=temperature,
            stop=[CODE_STOP],
            **extra,
        )
        self._turn_tokens_used += response.usage.completion_tokens
        reply, cut = cut_reply(response.content, self.reply_cut)
        finish = response.finish_reason
        if finish in ("line", "marker"):  # the backend stopped at the bound itself
            cut = cut or finish
        if finish == "length":
            cut = "tokens"
        elif finish == "time" or (
            self.call_seconds is not None and response.wall_time > self.call_seconds
        ):
            cut = "seconds"
        if cut is None:
            reply = close_open_block(reply)  # generation stopped at CODE_STOP
        event = ModelMessage(
            turn=turn,
            step=step,
            role="assistant",
            content=reply,
            prompt_tokens=response.usage.prompt_tokens,
            cached_prompt_tokens=response.usage.cached_prompt_tokens,
            completion_tokens=response.usage.completion_tokens,
            seconds=round(response.wall_time, 3),
            candidate=candidate,
            finish_reason=finish,
            cut=cut,
        )
        return event, reply

    def _over_tokens(self) -> bool:
        """Whether the turn's token budget is spent."""
        return self.turn_tokens is not None and self._turn_tokens_used >= self.turn_tokens

    def _probe_ok(self, code: str) -> tuple[bool, bool]:
        """(runs without error, shows something) for ``code`` on a fork of the namespace."""
        try:
            probe = self.guard.executor.run_probe(code, timeout=self.cell_timeout)
        except Exception:  # no fork on this backend, or the probe itself failed
            return False, False
        # a Series printed after a label the question asks about is not a result
        misprinted = self._spec is not None and self._spec.misprinted(probe.stdout)
        shows = bool(probe.stdout.strip() or probe.result) and not misprinted
        return probe.ok, shows

    def _parse(self, reply: str, code_ran: bool) -> ParsedReply:
        """`parse_reply`, and a reply with nothing to run (no block, or comments only) and no
        ``<answer>`` whose thought writes every field of the question's form by its label
        (``orders: 1200, late: 96``, then ``# nothing left to compute``), each number one an
        output of the session showed, answers with them: a small model that means to answer
        writes them so, and told its block held only comments it sends the same reply
        again. The answer is then reviewed like any other (no cell ran this turn:
        ``answer_without_code``). A number nothing showed is a guess: told that it gave an
        answer to verify, a small model re-ran a check of the other field and copied the
        guess again; the reply is ``guessed_form``, told which fields to compute (not their
        guessed values: it copies what it reads). Beside code the form so written is not
        taken: a small model writes its expected answer above the code that checks it."""
        parsed = parse_reply(reply, code_ran=code_ran)
        if parsed.problem not in ("no_action", "commented_code"):
            return parsed
        if self._spec is None or self._spec.template is None:
            return parsed
        stated = extract_answer(self._spec, [parsed.thought], positional=False)
        if stated is None:
            return parsed
        if unseen_numbers(stated, self._shown):
            return ParsedReply(thought=parsed.thought, problem="guessed_form", stated=stated)
        problem = None if code_ran else "answer_without_code"
        return ParsedReply(thought=parsed.thought, answer=stated, problem=problem, stated=stated)

    def _guessed_note(self, stated: str) -> str:
        """The ``guessed_form`` note: the fields of ``stated`` whose value nothing showed."""
        assert self._spec is not None
        template = self._spec.template
        labels = [
            f"`{f.label}`"
            for f in self._spec.fields
            if (
                value := extract_answer(
                    AnswerSpec(template=template, fields=(f,)), [stated], positional=False
                )
            )
            is None
            or unseen_numbers(value, self._shown)
        ]
        return render(self._corrective["guessed_form"], labels=" and ".join(labels) or "it")

    def _resample(
        self, turn: int, step: int, attempts: AttemptLog, code_ran: bool, deadline: float | None
    ) -> Generator[TrajectoryEvent, None, tuple[str, ParsedReply] | None]:
        """Candidates for a reply that repeated a failed cell or is no Python (see the module
        docstring).

        Yields each candidate's `ModelMessage`; returns the chosen (reply, parsed), or
        None when every candidate repeats a failure or is malformed.
        """
        fallback: tuple[str, ParsedReply] | None = None
        for _ in range(self.retry_samples):
            if deadline is not None and self.clock() >= deadline:
                break
            if self._over_tokens():
                break
            temperature = max(self.temperature, self.retry_temperature)
            event, reply = self._call(turn, step, temperature, candidate=True, code_ran=code_ran)
            yield event
            if event.cut in CUT_PROBLEMS:
                continue
            parsed = self._parse(reply, code_ran)
            if parsed.problem is not None:
                continue
            if parsed.code is None:
                return reply, parsed  # an answer: the review decides
            if attempts.repeat_of(parsed.code) is not None or not runnable(parsed.code):
                continue
            ok, shows = self._probe_ok(parsed.code)
            if ok and shows:
                return reply, parsed
            if fallback is None or ok:
                fallback = (reply, parsed)
        return fallback

    def _code_step(
        self, turn: int, step: int, parsed: ParsedReply, exchange: Exchange, attempts: AttemptLog
    ) -> Generator[TrajectoryEvent, None, bool]:
        """Execute the cell, show the observation, then the supervisor's hints.

        Returns whether the cell ran with a silent error (a Series printed after a label,
        `stateguard.audit.printchecks`; a filter matching no row,
        `stateguard.audit.filterchecks`; a column written all NaN, `stateguard.audit.nanchecks`;
        a map or apply that left values missing, `stateguard.audit.mapchecks`):
        it then counts as a failed attempt, and its output is not used for answers."""
        assert parsed.code is not None
        code, answer_lines = strip_answer_lines(parsed.code)
        outcome = self.guard.run_cell(code, thought=parsed.thought, timeout=self.cell_timeout)
        execution = outcome.execution
        exchange.outcome = execution.status
        if execution.error is not None:
            exchange.outcome += f": {execution.error.ename}"
        observation = format_observation(execution, self.observation_chars, code)
        context = ""
        made_note = ""  # what a silent cell made, as shown to the model
        if execution.status == "error" and self.error_context:
            context = error_context(self.guard.executor, code, execution)
            blank = self._blank_before_failure(outcome.cell)
            if blank:
                context = f"{context}\n{blank}" if context else blank
            defined = self._defined_key(execution)
            if defined:
                context = f"{context}\n{defined}" if context else defined
            if context:
                observation = f"{observation}\n\n{context}"
        elif execution.ok and observation == NO_OUTPUT and outcome.cell is not None:
            # a silent cell: show what it made, so the model need not guess (or print it)
            # lineage's versions; the names the code binds when lineage has none
            made = outcome.cell.created + outcome.cell.unchanged
            names = list(made) or assigned_names(code)
            made_note = created_context(self.guard.executor, names)
            if made_note:
                observation = f"{SILENT_CELL}\n{made_note}"
            annotations = bare_annotations(code)
            if annotations:
                observation += "\n" + render(
                    self._corrective["bare_annotation"], lines="; ".join(annotations[:3])
                )
        # silent errors execution shows: what follows from any of them is not a result
        created = outcome.cell.created if outcome.cell is not None and execution.ok else ()
        found = silent_errors(
            code,
            execution,
            created,
            probe=self.guard.executor.run_probe,
            spec=self._spec,
            scopes=self._scopes,
            turn=turn,
            question=self.conversation.current.opener,
            tables=self._data_files,
            columns_before=self._table_columns,
            statistic=self._question_spec.statistic,
            seen=[*self._shown, self.conversation.current.opener],
            reads=[r.version for r in outcome.cell.reads] if outcome.cell is not None else (),
            contexts=self._contexts,
        )
        # what the cell printed or showed (not tracebacks or notes, which quote the code)
        shown = [execution.stdout, execution.result or ""]
        shown += [str(d.data.get("text/plain", "")) for d in execution.displays]
        replayed = self._replayed(turn, step, code, execution, shown)
        if replayed is not None:
            found.append(replayed)
        if execution.ok and outcome.cell is not None:
            found += self._narrowed(outcome.cell)
            self._note_table_columns(outcome.cell.created)
        doubts = [_FAILURE_NAMES[d.check] for d in found]
        for d in found:
            observation = f"{observation}\n\n{d.message}"
        if outcome.cell is not None:
            self._scopes.record(turn, code, {VarKey.name_of(v) for v in outcome.cell.created})
        audit = outcome.audit.describe() if outcome.audit is not None else ""
        if audit:  # what the join guard saw: "audit alarm: inner merge ... dropped 12 of 200 ..."
            observation = f"{observation}\n{audit}"
        if answer_lines:
            observation += "\n\n" + render(
                self._corrective["answer_lines"], lines="; ".join(answer_lines[:4])
            )
        error = execution.error
        attempts.record_cell(
            step,
            parsed.code,
            ok=execution.ok and not doubts,
            observation=observation,
            changed_state=bool(outcome.cell is not None and outcome.cell.created),
            failure=(
                f"{error.ename}: {error.evalue}"[:300] if error is not None else "; ".join(doubts)
            ),
            context=context,
        )
        yield StepRecord(
            turn=turn,
            step=step,
            thought=parsed.thought,
            code=code,
            observation=observation,
            execution=execution,
            cell=outcome.cell,
        )
        # what a probe showed of the cell read the other way was computed by the session:
        # shown too (not this cell's output, so neither doubted nor formatted into an answer)
        again = [str(d.facts[SHOWN_AGAIN]) for d in found if SHOWN_AGAIN in d.facts]
        # numbers a cell only wrote (``print(1400)``) were never shown by the data
        written = any(d.check == "written_numbers" for d in found)
        if not written:
            # the values a silent cell's note showed were shown too: an answer may rest
            # on them (they are not outputs, so no answer is formatted from them)
            self._shown += [*shown, made_note] if made_note else shown
            self._shown += again
        if execution.error is not None and execution.error.ename.isidentifier():
            self._raised.add(execution.error.ename)
        if not execution.ok and (where := failing_line(code, execution)) is not None:
            # the lines above the one that failed ran: a value they select was used
            self._code_run.append("\n".join(code.splitlines()[: where[0] - 1]))
        if execution.ok:
            if not written:
                self._last_shown = shown
            self._code_run.append(code)
            if outcome.cell is not None:
                self._turn_cells.append(outcome.cell)
        valued = [d for d in found if d.check in VALUE_DOUBTS]
        if execution.ok and valued:
            text = "\n".join(t for t in dict.fromkeys(shown) if t.strip())
            self._doubted_outputs.append((step, text, valued[0].message))
        if execution.ok and not doubts:
            self._outputs.append("\n".join(t for t in dict.fromkeys(shown) if t.strip()))
            self._turn_showed = self._turn_showed or bool(self._outputs[-1])
        feedback = [observation]
        if outcome.restarted:  # say whether (and how) the session's state was rebuilt
            rebuilt = outcome.rebuild
            feedback.append(rebuilt.describe() if rebuilt else self._note("kernel_restarted"))
        if parsed.answer is not None:
            feedback.append(self._note("answer_deferred"))
        yield self._user(turn, step, "\n\n".join(feedback))
        yield from self._drain(turn)
        yield from self._deliver(turn, step, list(outcome.notes))
        return bool(doubts)

    def _replayed(
        self, turn: int, step: int, code: str, execution: ExecutionResult, shown: list[str]
    ) -> Finding | None:
        """A doubt when this cell, which ran, is the code of a cell of an earlier turn (up
        to comments and layout) and showed exactly what that one showed: it answers that
        turn's question again, not this one (a small model replays earlier cells when it
        is lost). A cell run again after a change it reads (a revised rate) shows
        something else, and is left alone. ``shown``: what the cell printed or showed.
        Records the run."""
        if not execution.ok:
            return None
        text = "\n".join(shown).strip()
        key = cell_key(code)
        earlier = self._cell_runs.get(key)
        self._cell_runs[key] = (turn, step, text, self._question)
        if earlier is None or earlier[0] >= turn or not text or earlier[2] != text:
            return None
        then, at, _, question = earlier
        note = render(
            observation_notes()["replayed_cell"],
            step=at,
            turn=then,
            earlier=_clip(question.strip(), 120),
            question=self._question.strip(),
        )
        return Finding(
            check="replayed_cell", severity="doubt", message=note, basis=("code", "execution")
        )

    def _narrowed(self, cell: CellRecord) -> list[Finding]:
        """A doubt for each column this cell wrote again from a strict subset of the
        columns an earlier turn's cell defined it from (`stateguard.lineage.narrowing`):
        a definition that silently lost a term."""
        found = narrowed_columns(self.guard.graph, cell.created, before_cell=self._first_cell)
        notes = observation_notes()
        return [
            Finding(
                check="narrowed_column",
                severity="doubt",
                message=render(
                    notes["narrowed_column"],
                    column=f"`{n.column}`",
                    cell=n.earlier_cell,
                    dropped=", ".join(f"`{d}`" for d in n.dropped[:4]),
                ),
                basis=("code", "lineage"),
                variables=(n.version, n.earlier),
            )
            for n in found[:2]
        ]

    def _defined_key(self, execution: ExecutionResult) -> str:
        """For a ``KeyError`` on a name that a context of the task defines as a quantity
        (``'base_charge'``, "The base charge of a shipment is weight_kg × rate_per_kg"):
        the sentences that define it, and that it must be made first; "" otherwise."""
        error = execution.error
        if error is None or error.ename != "KeyError" or not self._contexts:
            return ""
        try:
            key = ast.literal_eval(error.evalue.strip())
        except (ValueError, SyntaxError):
            return ""
        if not isinstance(key, str) or not key.strip():
            return ""
        asked = asked_terms(key.replace("_", " "), defined_terms("\n\n".join(self._contexts)))
        if not asked:
            return ""
        term = asked[0]
        # the defining sentence, then the latest later context that speaks of it (a revision)
        contexts = self._contexts
        after = next((i + 1 for i, c in enumerate(contexts) if term.clause in c), len(contexts))
        later = [s for c in contexts[after:] for s in sentences_about(term, c)]
        quoted = " ".join(f"«{s}»" for s in [term.clause, *later[-1:]])
        return render(observation_notes()["defined_column"], key=repr(key), sentences=quoted)

    def _blank_before_failure(self, cell: CellRecord | None) -> str:
        """For a cell that failed: the note on columns its statements wrote before the
        failing one that hold only missing values (a grouped result assigned as a
        column), which is often why it failed (`stateguard.audit.nanchecks`); "" else."""
        if cell is None or not cell.created:
            return ""
        reads = [r.version for r in cell.reads]
        found = nan_columns(self.guard.executor.run_probe, cell.created, reads=reads)
        return describe_nan_columns(found) if found else ""

    def _note_table_columns(self, created: Sequence[str]) -> None:
        """Read again the columns of the loaded tables a cell wrote (one fork probe)."""
        written = {VarKey.name_of(v).split("[")[0].split(".")[0] for v in created}
        self._read_table_columns(sorted(written & self._data_files.keys()))

    def _read_table_columns(self, names: Sequence[str], *, gone_to_file: bool = False) -> None:
        """Record the columns ``names`` (loaded tables) hold now (one fork probe). With
        ``gone_to_file``, a table the session no longer holds as a frame (a repair deleted
        it) is recorded with its file's columns: reading it again loses nothing."""
        if not names:
            return
        found = probe_json(self.guard.executor.run_probe, namespace.call("columns", names), 10)
        if not isinstance(found, dict):
            return
        for n in names:
            if isinstance(found.get(n), list):
                self._table_columns[n] = tuple(str(c) for c in found[n])
            elif gone_to_file and n in self._data_columns:
                self._table_columns[n] = tuple(self._data_columns[n])

    def _turn_cell_keys(self) -> frozenset[str]:
        """The cells of this turn that ran, up to comments and layout."""
        return frozenset(cell_key(cell.source) for cell in self._turn_cells)

    def _recomputed_from(self, answer: str) -> int | None:
        """The earlier turn that gave this answer, word for word, when every cell this
        turn ran (at least one) is a cell of that turn: the same code gave the same value
        to another question (a small model re-runs its last computation); else None."""
        mine = self._turn_cell_keys()
        if not mine:
            return None
        key = _answer_key(answer)
        for turn, earlier, _spec, cells in reversed(self._answered):
            if earlier == key and mine <= cells:
                return turn
        return None

    def _copied_from(self, answer: str) -> int | None:
        """The earlier turn whose accepted answer this is, word for word, when that turn's
        question asked for something else (another format or kind of value); else None.
        A small model copies its last answer into the next question. Only an answer of two
        values or more counts (``region: North, contribution: 35685.77``): one short value
        (``0``, ``yes``) may well answer two questions."""
        if len(_FIELD_LABEL.findall(answer)) < 2 and len(scan(answer)) < 2:
            return None
        key = _answer_key(answer)
        for turn, earlier, spec, _cells in reversed(self._answered):
            if earlier == key and spec != self._spec:
                return turn
        return None

    def _unused_values(self, answer: str) -> list[list[str]]:
        """``[frame, column, value]`` for each value of the data that the question names
        verbatim and that no code run in the session contains as a word of its own (a
        filter the analysis left out: "the Online channel's margin" answered for all
        channels; ``enterprise_orders``, a name, is no use of ``'Enterprise'``), unless the
        answer names it and a cell of this turn read its column (a value picked from a
        grouping the question names). A label of the question's form is not the answer
        naming a value (``refunded: 1913`` counted the returned rows). An answer that only
        repeats the name ("Homeware, 13.43%" from a filter on some ``sender_id``) is no use
        of it. One fork probe; empty when it fails. The match is on the data's own values,
        so a word of the question that is no value of the data never counts."""
        code = "\n".join(self._code_run)
        reads: tuple[set[str], set[str]] | None = None
        out: list[list[str]] = []
        if self._spec is not None:  # a label of the form is no value the answer names
            answer = self._spec.unlabelled(answer)
        for item in self._named_values():
            if _mentions(code, item[2]) or item in out:
                continue
            if _mentions(answer, item[2]):
                reads = reads or self._turn_reads()
                ancestry, direct = reads
                frame, column = item[0], item[1]
                if frame in direct or f"{frame}[{column!r}]" in ancestry | direct:
                    continue
            out.append(item)
        return out

    def _named_values(self) -> list[list[str]]:
        """``[frame, column, value]`` for each value of the data the question names
        verbatim (one fork probe per step, shared by the checks of one reply; empty when
        it fails)."""
        if not self._question.strip():
            return []
        key = (self._question, self.steps_taken)
        if self._named_cache is not None and self._named_cache[0] == key:
            return self._named_cache[1]
        named = self._probe_named_values()
        self._named_cache = (key, named)
        return named

    def _probe_named_values(self) -> list[list[str]]:
        """The fork probe behind `_named_values`: well-formed items only."""
        cell = namespace.call("named_values", self._question)
        try:
            result = self.guard.executor.run_probe(cell, timeout=self.cell_timeout)
            named = json.loads(result.stdout.strip().splitlines()[-1]) if result.ok else []
        except Exception:  # a probe is a courtesy: it never fails the step
            return []
        return [
            item
            for item in (named if isinstance(named, list) else [])
            if isinstance(item, list) and len(item) == 3 and all(isinstance(x, str) for x in item)
        ]

    def _parted_values(self, answer: str) -> tuple[list[list[str]], list[list[str]]]:
        """(used, left out): when the question names values of two columns or more and
        the code behind the answer (the turn's latest cell, with the cells of this turn
        that made what it read, through lineage) uses some of them and not the others,
        though earlier cells did: the filters were applied one at a time ("Wholesale
        shipments from the Glasgow depot" answered from the Glasgow rows only). A value
        the answer names, from a column the turn read, is a pick, not a filter left out;
        so is a value of a column a used value is of, in whichever frame: no row holds two
        values of one column ("completed and cancelled" are two groups, not a filter).
        ([], []) otherwise."""
        if not self._turn_cells:
            return [], []
        named = self._named_values()
        if len({c for _, c, _ in named}) < 2:
            return [], []
        last = self._turn_cells[-1]
        graph = self.guard.graph
        behind: set[str] = set()
        for r in last.reads:
            behind |= {r.version, *graph.ancestors(r.version)}
        sources = [last.source] + [
            c.source for c in self._turn_cells[:-1] if set(c.created) & behind
        ]
        code = "\n".join(sources)
        used = [v for v in named if _mentions(code, v[2])]
        ancestry, direct = self._turn_reads()
        if self._spec is not None:  # a label of the form is no value the answer names
            answer = self._spec.unlabelled(answer)
        used_columns = {c for _, c, _ in used}
        left = [
            v
            for v in named
            if not _mentions(code, v[2])
            and v[1] not in used_columns
            and not (
                _mentions(answer, v[2])
                and (v[0] in direct or f"{v[0]}[{v[1]!r}]" in ancestry | direct)
            )
        ]
        return (used, left) if used and left else ([], [])

    def _unread_columns(self) -> list[tuple[str, str]]:
        """The columns of the data as loaded that this turn's context or question names
        (every word of the name, `stateguard.question.named_columns`) and that no cell of
        this turn that ran read, directly or through what it read (lineage ancestry): a
        term of a stated formula left out ("gross profit is the billed amount −
        carrier_cost" computed without ``carrier_cost``). A column of that name read from
        any frame counts (a model may load the file again under another name); a read of a
        whole frame counts as a read of each of its columns, and so does the column's name
        in this turn's code (a frame lineage does not name: ``pd.read_csv(…).b``). A column
        named only where the context describes a table's layout is not counted
        (`stateguard.question.described_columns`)."""
        if not self._data_columns or not self._turn_cells:
            return []
        read, whole = self._turn_reads()
        text = f"{self._context}\n{self._question}"
        sources = "\n".join(cell.source for cell in self._turn_cells)
        # a frame read whole may have been read for any of its columns: so for a column
        # of that name in another frame too (`sender_id` of the shipments read, not of
        # the register)
        covered = {c for f in whole for c in self._data_columns.get(f, ())}
        # a context that describes a table's layout names its columns, not a formula's
        # terms: those count only when the question names them too
        every = {c for columns in self._data_columns.values() for c in columns}
        covered |= described_columns(self._context, self._data_columns) - named_columns(
            self._question, every
        )
        out = []
        for frame, columns in self._data_columns.items():
            if frame in whole:
                continue  # the frame itself was read: every column may have been
            for column in sorted(named_columns(text, columns) - covered):
                part = f"[{column!r}]"  # of this frame, or of one read again from the file
                if not any(name.endswith(part) for name in read) and not names_key(sources, part):
                    out.append((frame, column))
        return out

    def _grouping_example(self, unread: Sequence[tuple[str, str]]) -> str:
        """For an unread column that the answer's form asks a name of (``depot:
        <name>``) while the turn's latest cell reduced another column without it: the
        grouping that compares the form's things, built from those names; "" else."""
        if self._spec is None or not self._turn_cells:
            return ""
        labels = {f.label for f in self._spec.fields if f.kind == "text" and f.label}
        reduced = reduced_columns(self._turn_cells[-1].source)
        reducer = "mean" if self._question_spec.statistic == "mean" else "sum"
        for frame, column in unread:
            values = [v for v in reduced if v != column]
            if column in labels and values:
                note = self._corrective["grouping_example"]
                return render(note, frame=frame, key=column, value=values[0], reducer=reducer)
        return ""

    def _unapplied_revisions(self) -> list[Revision]:
        """The revisions this turn's context or question states ("from 8 % to 10 %") whose
        new value no cell of this turn that ran holds as a number (10, or 0.1, 0.9 or 1.1
        for a percent): an answer under the revised value computed with the old one."""
        if not self._turn_cells:
            return []
        spec = self._question_spec
        if not spec.revisions:
            return []
        return [
            revision
            for revision in spec.revisions
            if (revision.percent or revision.new != 0)  # a literal 0 says nothing
            and not any(
                value_literals(
                    cell.source,
                    revision.new,
                    percent=revision.percent,
                    complements=True,
                    as_written=True,
                )
                for cell in self._turn_cells
            )
        ]

    def _unused_parameters(self) -> list[str]:
        """The parameters this turn's context states (`stated_parameters`: "a commission of
        12 %", "a flat fee of 3.00") that no cell of this turn that ran holds as a number
        (12, 0.12, 0.88 or 1.12 for a percent): a term of the stated model left out, the
        earnings taken as the whole price."""
        if not self._turn_cells:
            return []
        return [
            p.text
            for p in stated_parameters(self._context)
            if not any(
                value_literals(
                    cell.source, p.value, percent=p.percent, complements=True, as_written=True
                )
                for cell in self._turn_cells
            )
        ]

    def _term_sources(self) -> list[str]:
        """The code of the turn's cells that ran and of every cell that wrote what they
        read, directly or through what that was computed from (lineage ancestry)."""
        graph = self.guard.graph
        wanted: set[int] = set()
        for cell in self._turn_cells:
            for r in cell.reads:
                try:
                    keys = {r.version, *graph.ancestors(r.version)}
                    wanted.update(graph.version(k).cell for k in keys)
                except KeyError:
                    continue
        earlier = [c.source for c in graph.cells if c.cell in wanted]
        return [*earlier, *(c.source for c in self._turn_cells)]

    def _task_definitions(self) -> list[Definition]:
        """The quantities the task's contexts define, those named as a column of the data
        aside (a column is the data's)."""
        columns = [c for cs in self._data_columns.values() for c in cs]
        text = "\n\n".join(self._contexts)
        return [d for d in defined_terms(text) if not is_column(d, columns)]

    def _unused_term_parameters(self) -> tuple[Definition, list[str]] | None:
        """For a quantity the task's contexts define that the question asks for: the
        parameters it rests on (`term_parameters`: "the receipts are its commissions and
        its disposal charges together" rests on the commission's 6 % and the charge's
        1.20), each at its value after the revisions stated so far, that no code of the
        turn nor any code it read results from holds as a number. ``(definition, values)``
        for the first such quantity, else None."""
        if not self._turn_cells or not self._contexts:
            return None
        definitions = self._task_definitions()
        asked = asked_terms(self._question, definitions)
        if not asked:
            return None
        sources: list[str] | None = None
        for d in asked:
            missing = []
            for owner, p in term_parameters(d, definitions):
                value, text, why = p.value, p.text, f"the {owner.term}"
                for r in self._revisions:
                    if r.percent == p.percent and r.old == value:
                        value = r.new
                        text = f"{r.new:g} %" if r.percent else f"{r.new:g}"
                        why += f", revised {_revision_words(r)}"
                text += f" ({why})"
                if not (p.percent or value != 0):
                    continue
                if sources is None:
                    sources = self._term_sources()
                if not any(
                    value_literals(
                        source, value, percent=p.percent, complements=True, as_written=True
                    )
                    for source in sources
                ):
                    missing.append(text)
            if missing:
                return d, missing
        return None

    def _doubted_answer_doubt(self, answer: str) -> tuple[str, str] | None:
        """``(problem, note)`` once a turn: the answer's numbers are the output of a cell
        of this turn that ran with a doubt on the value it showed (`VALUE_DOUBTS`: a
        product of totals, a flat amount scaled…), and no output without a doubt holds
        them: the model answered past the note. The note is told again."""
        if self._doubted_asked or not answer or held_by(answer, self._outputs):
            return None
        for step, text, note in self._doubted_outputs[::-1]:
            if held_by(answer, [text]):
                self._doubted_asked = True
                said = render(self._corrective["doubted_answer"], step=step, note=note.strip())
                return "doubted_answer", said
        return None

    def _term_parameter_doubt(self) -> tuple[str, str] | None:
        """``(problem, note)`` once a turn: a quantity the question asks for, defined by
        the task, whose parameters no code of the turn or that it read from uses
        (`_unused_term_parameters`)."""
        if self._term_parameter_asked or (found := self._unused_term_parameters()) is None:
            return None
        self._term_parameter_asked = True
        definition, values = found
        term = definition.term
        text = "\n\n".join(self._contexts)
        said = " ".join(f"\u201c{s}\u201d" for s in sentences_about(definition, text)[:2])
        frame = max(
            self._data_columns,
            key=lambda f: len(named_columns(text, self._data_columns[f])),
            default="df",
        )  # the table the contexts speak of most: the rows, not a register
        note = render(
            self._corrective["unused_term_parameter"],
            term=term,
            said=said,
            values=", ".join(values[:3]),
            frame=frame,
            name="_".join(term.split()),
        )
        return "unused_term_parameter", note

    def _turn_reads(self) -> tuple[set[str], set[str]]:
        """The names the turn's cells that ran read: with what those were computed from
        (lineage ancestry), and directly."""
        graph = self.guard.graph
        read: set[str] = set()
        direct: set[str] = set()
        for cell in self._turn_cells:
            for r in cell.reads:
                read.add(r.name)
                direct.add(r.name)
                try:
                    read.update(VarKey.name_of(k) for k in graph.ancestors(r.version))
                except KeyError:
                    continue
        return read, direct

    def _unread_files(self) -> list[tuple[str, str]]:
        """``(file, frame)`` for each preloaded data file this turn's context or question
        names (``data/enrolments.csv``, or its file name as a word) whose frame no cell of
        this turn that ran read, directly or through what it read (lineage ancestry), and
        whose file name no cell of the turn names: the answer was computed from another
        table than the one the turn speaks of."""
        if not self._data_files or not self._turn_cells:
            return []
        read = {name.split("[", 1)[0] for name in self._turn_reads()[0]}
        text = f"{self._context}\n{self._question}"
        sources = "\n".join(cell.source for cell in self._turn_cells)
        out = []
        for frame, path in self._data_files.items():
            file = PurePosixPath(path).name
            if names_file(text, file) and frame not in read and file not in sources:
                out.append((path, frame))
        return out

    def _crowded(self, answer: str) -> bool:
        """The question asks for one number (no form of several fields) and ``answer``
        gives two or more labelled values, a number among them: ``orders: 1200,
        net_revenue: 209637.41, margin: 109691.06`` for "What is the total margin?", or
        ``city: Bristol, net: 148004.72`` for "What share …?" (an earlier question's form
        filled in)."""
        spec = self._spec
        return (
            spec is not None
            and spec.one_number is not None
            and len(_FIELD_LABEL.findall(answer)) >= 2
            and len(scan(answer)) >= 1
        )

    def _many_numbers(self, answer: str) -> list[str]:
        """The numbers of ``answer`` the turn's question and context do not write, when the
        question asks for one number in a form it writes out (no form of several fields; a
        number to N decimals: "Give the percentage rounded to 2 decimals") and ``answer``
        gives no labelled values (`_crowded` takes those): ``homeware_shipments: 363 rows,
        13 columns`` for a share. [] when the question asks for anything else, a count
        read off "How many" included, which may be one part of two ("How many orders are
        there, and what is the total revenue?")."""
        spec = self._spec
        if (
            spec is None
            or (field := spec.one_number) is None
            or field.kind != "number"
            or field.decimals is None
        ):
            return []
        text = f"{self._context}\n{self._question}"
        return [
            n.literal
            for n in scan(answer)
            if not names_number(text, n.literal)
            and not (n.value.is_integer() and abs(n.value) < SMALL)  # ordinals, "6 of 7"
        ]

    def _names_label(self, label: str) -> bool:
        """Whether the turn's question or context names a row ``label``: a number label
        (``0`` of a RangeIndex) only as a whole number, not inside ``0.90``."""
        return bool(value_mentions(f"{self._context}\n{self._question}", label))

    def _fraction_for_percent(self, answer: str) -> dict[str, str] | None:
        """When the question asks for one number as a percentage (`QuestionSpec.percent`)
        and ``answer`` is one number between -1 and 1, not written as a percent, that the
        turn's latest cell showed (to the answer's places) with no ``100`` in its code:
        the fraction, where its percentage was asked. The parts of the note (the answer,
        the shown value, its percentage to the places asked), else None."""
        if (
            self._spec is None
            or self._spec.one_number is None
            or not self._question_spec.percent
            or not self._turn_cells
        ):
            return None
        numbers = scan(answer)
        if len(numbers) != 1 or numbers[0].percent or not 0 < abs(numbers[0].value) < 1:
            return None
        if _HUNDRED.search(self._turn_cells[-1].source):
            return None  # scaled, or compared with 100: the cell may hold a percentage
        number = numbers[0]
        half = 0.5 * 10**-number.decimals + 1e-12
        for text in self._last_shown:
            for shown in scan(text):
                if abs(shown.value) < 1 and abs(shown.value - number.value) <= half:
                    places = self._spec.one_number.decimals
                    places = number.decimals if places is None else places
                    return {
                        "answer": number.literal,
                        "shown": shown.literal,
                        "percent": f"{shown.value * 100:.{places}f}",
                    }
        return None

    def _element_of(self, answer: str) -> tuple[str, int] | None:
        """(row label, length) when ``answer`` is one row's value of a Series the turn's
        latest cell showed on its own, of two rows or more, while the question asks for one
        number over rows (a sum, mean, median, share or count, `QuestionSpec.statistic`):
        ``476413.0``, the first row of ``df[m]['days'] * df['rate'].sum()``, for "the total
        billed amount". A row the question names (``Lakes`` in "the net of the Lakes
        area"), or one that is the statistic itself (``describe()``'s ``mean``), is what it
        asks for; so is a Series the question's extreme or order reads (not a reduction),
        and one that shows the same value in every row (a total broadcast to a column).
        Else None."""
        spec = self._spec
        if spec is None or spec.one_number is None:
            return None
        numbers = scan(answer)
        if len(numbers) != 1:
            return None
        statistic = self._question_spec.statistic
        if statistic not in _REDUCTIONS:
            return None
        number = numbers[0]
        half = 0.5 * 10**-number.decimals + 1e-9
        for text in self._last_shown:
            series = shown_series(text)
            if series is None or series.length < 2 or len({v for _, v in series.rows}) < 2:
                continue  # not a Series, or one number in every row (a scalar broadcast)
            for label, value in series.rows:
                shown = scan(value)
                if (
                    len(shown) == 1
                    and abs(shown[0].value - number.value) <= half
                    and label.lower() not in _REDUCTIONS[statistic]
                    and not self._names_label(label)
                ):
                    return label, series.length
        return None

    def _rows_for_totals(self) -> dict[str, str] | None:
        """The per-row comparison this turn's code made where the question counts things
        by a total of each (`stateguard.question.counted_by_total`): "How many buyers have
        tickets whose total net is above 320?" answered with ``tickets[tickets['net'] >
        320]``, which keeps tickets, not buyers. Code evidence: a cell of this turn that ran
        compares a column of a loaded table with the threshold's number, and none of them
        groups rows (``groupby``, ``pivot_table``, ``resample``, ``crosstab``); the table
        has one column named for the thing (``buyer_id``), to group by. The parts of the
        note (table, thing column, compared column, operator, threshold), else None."""
        asked = counted_by_total(self._question)
        if asked is None or not self._turn_cells:
            return None
        trees = []
        for cell in self._turn_cells:
            try:
                trees.append(ast.parse(cell.source))
            except SyntaxError:
                return None
        nodes = [node for tree in trees for node in ast.walk(tree)]
        if any(isinstance(n, ast.Attribute) and n.attr in _GROUPING for n in nodes):
            return None
        for node in nodes:
            if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
                continue
            op, right = node.ops[0], node.comparators[0]
            if type(op) not in _ORDER or not (
                isinstance(right, ast.Constant)
                and type(right.value) in (int, float)
                and float(right.value) == asked.threshold.value
            ):
                continue
            left = node.left
            if not (
                isinstance(left, ast.Subscript)
                and isinstance(left.value, ast.Name)
                and isinstance(left.slice, ast.Constant)
                and isinstance(left.slice.value, str)
            ):
                continue
            frame, column = left.value.id, left.slice.value
            things = [c for c in self._data_columns.get(frame, ()) if words(c)[:1] == [asked.thing]]
            if len(things) != 1 or things[0] == column:
                continue
            return {
                "thing": things[0].split("_")[0],
                "compared": ast.unparse(node),
                "frame": frame,
                "entity": things[0],
                "column": column,
                "op": _ORDER[type(op)],
                "value": f"{asked.threshold.value:g}",
            }
        return None

    def _unbuilt_term(self) -> dict[str, str] | None:
        """A quantity the task's contexts define that the question asks for, where the
        turn's latest cell reduces a column named for something else and nothing the
        turn read (lineage ancestry included) is named for it: "the total payout" after
        "the payout of an order is its basket_value minus the commission", answered by
        ``orders.groupby('cuisine')['basket_value'].sum()`` (`stateguard.worker.terms`).
        A term that is a column of the data is the data's, and a cell that computes the
        quantity inline reduces no selected column: neither is doubted. The parts of the
        note (term, column, what the task says of it, a frame and a column name), else
        None."""
        if not self._turn_cells or not self._contexts:
            return None
        text = "\n\n".join(self._contexts)
        columns = [c for cs in self._data_columns.values() for c in cs]
        asked = asked_terms(self._question, self._task_definitions())
        reduced = reduced_columns(self._turn_cells[-1].source, columns) if asked else []
        if not reduced:
            return None
        read, _ = self._turn_reads()
        for d in asked:
            if any(names_term(c, d) for c in reduced) or any(names_term(n, d) for n in read):
                continue
            frame = next(
                (f for f, cs in self._data_columns.items() if reduced[0] in cs),
                next(iter(self._data_columns), "df"),
            )
            said = " ".join(f"\u201c{s}\u201d" for s in sentences_about(d, text)[:3])
            return {
                "term": d.term,
                "column": reduced[0],
                "said": said,
                "frame": frame,
                "name": "_".join(d.term.split()),
            }
        return None

    def _unknown_names(self, answer: str) -> list[str]:
        """The names the answer gives for the form's text fields (``region: North Partner``)
        that no text column of the data holds, case aside: a label made up rather than
        read from the data. One fork probe; empty when it fails or there is no data frame."""
        names = [] if self._spec is None else self._spec.text_values(answer)
        if not names:
            return []
        cell = namespace.call("values_held", names)
        try:
            result = self.guard.executor.run_probe(cell, timeout=self.cell_timeout)
            read = json.loads(result.stdout.strip().splitlines()[-1]) if result.ok else {}
        except Exception:  # a probe is a courtesy: it never fails the step
            return []
        held = read.get("held") if isinstance(read, dict) else None
        if not isinstance(held, dict) or not read.get("columns"):
            return []  # no text column to read names from: nothing to say
        return [n for n in names if n in held and held[n] is None]

    def _setup_step(self, turn: int, setup: Preload) -> Iterator[TrajectoryEvent]:
        """Run the setup cell; its observation goes after the question (no model reply)."""
        step = self.steps_taken
        outcome = self.guard.run_cell(setup.code, thought=SETUP_THOUGHT, timeout=self.cell_timeout)
        execution = outcome.execution
        observation = format_observation(execution, self.observation_chars)
        yield StepRecord(
            turn=turn,
            step=step,
            thought=SETUP_THOUGHT,
            code=setup.code,
            observation=observation,
            execution=execution,
            cell=outcome.cell,
            setup=True,
        )
        self._shown.append(execution.stdout)
        if execution.ok:
            self._code_run.append(setup.code)
        if execution.ok:  # what it printed (``orders: 1200 rows x 10 columns``) is a result too
            self._outputs.append(execution.stdout)
        loaded = ", ".join(f"`{n}`" for n in setup.frames)
        note = (
            f"The session has loaded the data files: {loaded}.\n{observation}"
            if execution.ok
            else f"Loading the data files failed; load them yourself.\n{observation}"
        )
        yield self._user(turn, step, note)
        yield from self._drain(turn)
        yield from self._deliver(turn, step, list(outcome.notes))

    def _answer_step(
        self, turn: int, step: int, parsed: ParsedReply, exchange: Exchange
    ) -> Generator[TrajectoryEvent, None, bool]:
        """Submit the answer for review; returns whether it was accepted."""
        assert parsed.answer is not None
        exchange.outcome = "answer"
        yield StepRecord(turn=turn, step=step, thought=parsed.thought, answer=parsed.answer)
        review = self.guard.propose_answer(parsed.answer, thought=parsed.thought)
        yield from self._drain(turn)
        if review.accepted:
            return True
        exchange.outcome = "answer rejected"
        if not _evidence_against(review.notes):
            self._held = parsed.answer
        yield from self._deliver(turn, step, list(review.notes))
        self._refused_for = tuple(v for h in review.notes for v in h.variables)
        yield self._user(turn, step, self._note("answer_rejected") + self._writer_note())
        return False

    def _writer_note(self) -> str:
        """The lines of the session's cells that wrote the versions the manager named when
        it refused the answer (`_refused_for`), as a second paragraph: a small model told
        that ``t['profit']@v1`` is stale re-runs the cell that read it, unless shown the
        line to write again. "" when none is found (a version written by a call, not an
        assignment)."""
        lines = writer_lines(self.guard.graph, self._refused_for)
        if not lines:
            return ""
        for name, cell, line in lines:
            for revision in self._revisions[::-1]:
                rewrite = revised_line(line, revision)
                if rewrite is not None:
                    return "\n\n" + render(
                        self._corrective["writer_line_revised"],
                        cell=cell,
                        name=name,
                        line=line,
                        revision=_revision_words(revision),
                        rewrite=rewrite,
                    )
        written = "; ".join(
            f"cell {cell} wrote `{name}` with `{line}`" for name, cell, line in lines
        )
        return "\n\n" + render(self._corrective["writer_lines"], lines=written)

    def _valueless(self, answer: str | None) -> bool:
        """An answer of ``None``/``nan``/``N/A`` to a question that asks for a number: what a
        printed Python value says when nothing was computed ("none" may answer "which …?")."""
        return (
            answer is not None
            and self._spec is not None
            and any(f.kind in ("number", "count") for f in self._spec.fields)
            and is_valueless(answer)
        )

    def _quotes_error(self, answer: str | None) -> bool:
        """Whether ``answer`` quotes an exception a cell of this session raised, as its
        traceback writes it (``KeyError: 'market_town'``): a failed cell computed
        nothing, so its error is no value."""
        return answer is not None and any(
            re.search(rf"\b{re.escape(name)}\s*:", answer) for name in self._raised
        )

    def _holds(self, stated: str | None) -> bool:
        """Whether ``stated`` (an answer line) is an answer this turn's outputs hold: every
        number printed in this turn, every field of the requested form present."""
        if stated is None or not held_by(stated, self._outputs):
            return False
        return self._spec is None or not self._spec.missing_labels(stated)

    def _format_answer(
        self, *, labelled_only: bool = False, given: str | None = None
    ) -> str | None:
        """The answer in the requested format from this turn's printed results (with
        ``given``, the model's bare answer, for the one field they leave open), if they hold
        it and it was not tried yet (`stateguard.worker.answer_format`)."""
        if self._spec is None or not self._outputs:
            return None
        outputs = self._outputs[::-1]
        if labelled_only:
            if self._spec.template is None:
                return None
            outputs = outputs[:1]
        found = extract_answer(self._spec, outputs, positional=not labelled_only, given=given)
        if found is None or found in self._formatted:
            return None
        if unseen_numbers(found, self._shown):
            return None
        self._formatted.add(found)
        return found

    def _formatted_step(self, turn: int, answer: str) -> Generator[TrajectoryEvent, None, bool]:
        """Submit an answer the formatting step wrote; returns whether it was accepted."""
        step = self.steps_taken
        exchange = self.conversation.add_reply(step, f"<answer>{answer}</answer>")
        parsed = ParsedReply(thought=FORMATTED_THOUGHT, answer=answer)
        return (yield from self._answer_step(turn, step, parsed, exchange))

    def _unread_file_doubt(self) -> tuple[str, str] | None:
        """``(problem, note)`` once a turn: a data file the turn's text names whose table no
        cell of the turn read (`_unread_files`); it also stands for the column doubt."""
        if self._unread_file_asked or not (files := self._unread_files()):
            return None
        self._unread_file_asked = self._unread_asked = True  # one doubt of the two
        named = ", ".join(f"{path} (loaded as `{frame}`)" for path, frame in files[:3])
        return "unread_file", render(self._corrective["unread_file"], files=named)

    def _unread_column_doubt(self) -> tuple[str, str] | None:
        """``(problem, note)`` once a turn: a column of the data the turn's text names that
        nothing the turn computed read (`_unread_columns`), with a grouping when one fits."""
        if self._unread_asked or not (unread := self._unread_columns()):
            return None
        self._unread_asked = True
        named = ", ".join(f"`{frame}[{column!r}]`" for frame, column in unread[:3])
        note = render(self._corrective["unread_column"], columns=named)
        grouping = self._grouping_example(unread)
        return "unread_column", f"{note}\n{grouping}" if grouping else note

    def _revision_doubt(self) -> tuple[str, str] | None:
        """``(problem, note)`` once a turn: a stated revision whose new value no code of the
        turn uses (`_unapplied_revisions`)."""
        if self._revision_asked or not (revisions := self._unapplied_revisions()):
            return None
        self._revision_asked = True
        said = "; ".join(_revision_words(r) for r in revisions[:2])
        return "unapplied_revision", render(self._corrective["unapplied_revision"], revisions=said)

    def _parameter_doubt(self) -> tuple[str, str] | None:
        """``(problem, note)`` once a turn: a parameter the context states that no code of
        the turn uses (`_unused_parameters`)."""
        if self._parameter_asked or not (unused := self._unused_parameters()):
            return None
        self._parameter_asked = True
        values = ", ".join(unused[:3])
        return "unused_parameter", render(self._corrective["unused_parameter"], values=values)

    def _unused_value_doubt(self, answer: str) -> tuple[str, str] | None:
        """``(problem, note)`` once a turn: a value of the data the question names that no
        code of the session uses (`_unused_values`)."""
        if self._unused_asked or not (unused := self._unused_values(answer)):
            return None
        self._unused_asked = True
        values = "; ".join(f"{v!r} (a value of `{f}[{c!r}]`)" for f, c, v in unused[:3])
        return "unused_value", render(self._corrective["unused_value"], values=values)

    def _share_doubt(self, answer: str) -> tuple[str, str] | None:
        """``(problem, note)`` once a turn: the question asks for one share of a whole
        (`QuestionSpec.statistic`), and ``answer``'s one number lies outside 0–100, as a
        percentage or a fraction alike: no part of a whole is more than the whole, or less
        than nothing. The statistic is a reading of the question, so the same answer again
        goes on."""
        if (
            self._share_asked
            or self._spec is None
            or self._spec.one_number is None
            or self._question_spec.statistic != "share"
        ):
            return None
        numbers = scan(answer)
        if len(numbers) != 1:
            return None
        if 0 <= numbers[0].value <= 100:  # a fraction or a percentage, either way
            return None
        self._share_asked = True
        return "impossible_share", render(
            self._corrective["impossible_share"], answer=numbers[0].literal
        )

    def _code_doubt(self, answer: str) -> tuple[str, str] | None:
        """The first of the doubts about the turn's code, not the answer's form, not yet
        asked: a file, a column, a revision, a parameter or a named value the code left out,
        or a share outside 0–100 %. The printed value that replaces an answer in the wrong
        form goes through them too."""
        return (
            self._unread_file_doubt()
            or self._unread_column_doubt()
            or self._doubted_answer_doubt(answer)
            or self._revision_doubt()
            or self._parameter_doubt()
            or self._term_parameter_doubt()
            or self._unused_value_doubt(answer)
            or self._share_doubt(answer)
        )

    def _printed_answer(
        self, turn: int, exchange: Exchange, attempts: AttemptLog, formatted: str
    ) -> Generator[TrajectoryEvent, None, bool]:
        """Submit, in place of the model's answer, the one this turn's printed values hold;
        returns whether it was accepted."""
        exchange.outcome = "answer replaced by the printed values"
        attempts.progress()
        return (yield from self._formatted_step(turn, formatted))

    def _printed_or_refused(
        self,
        turn: int,
        step: int,
        parsed: ParsedReply,
        exchange: Exchange,
        attempts: AttemptLog,
        formatted: str | None,
        problem: str,
        note: str,
    ) -> Generator[TrajectoryEvent, None, bool]:
        """For an answer a check holds back: the one this turn's printed values hold, when
        there is one and no doubt about the turn's code is left to ask (`_code_doubt`),
        submitted in its place (returns whether it was accepted); else the answer is refused
        as ``problem`` (or the doubt) and the model is told ``note`` (returns False)."""
        if formatted is not None:
            doubt = self._code_doubt(formatted)
            if doubt is None:
                return (yield from self._printed_answer(turn, exchange, attempts, formatted))
            problem, note = doubt  # the printed value would skip what the code left out
        exchange.outcome = f"invalid: {problem}"
        attempts.no_progress()
        yield from self._invalid_step(turn, step, parsed, problem, note, offered=formatted)
        return False

    def _printed_unless_doubted(
        self,
        turn: int,
        step: int,
        parsed: ParsedReply,
        exchange: Exchange,
        attempts: AttemptLog,
        formatted: str,
    ) -> Generator[TrajectoryEvent, None, bool]:
        """The printed value submitted in place of the model's answer (`_printed_answer`),
        unless a doubt about the turn's code is left to ask (`_code_doubt`): then that is
        told instead, and nothing is submitted (returns False)."""
        doubt = self._code_doubt(formatted)
        if doubt is None:
            return (yield from self._printed_answer(turn, exchange, attempts, formatted))
        exchange.outcome = f"invalid: {doubt[0]}"
        yield from self._invalid_step(turn, step, parsed, *doubt, offered=formatted)
        return False

    def _invalid_step(
        self,
        turn: int,
        step: int,
        parsed: ParsedReply,
        problem: str,
        note: str,
        *,
        offered: str | None = None,
    ) -> Iterator[TrajectoryEvent]:
        """Record a step that did not go on as the model meant, and tell it ``note``. An
        answer turned away on a doubt alone (``problem`` in `DOUBTS`: ``offered``, the
        printed value put in the model's answer's place, else the model's answer) is held
        as the turn's unconfirmed answer, should no answer be accepted later."""
        held = offered or (parsed.answer if parsed.code is None else None)
        if problem in DOUBTS and held:
            self._held = held
        self.guard.take_step()
        yield StepRecord(
            turn=turn,
            step=step,
            thought=parsed.thought,
            code=parsed.code,
            answer=parsed.answer if parsed.code is None else None,
            observation=note,
            problem=problem,
        )
        yield self._user(turn, step, note)

    def _repeat_note(self, attempts: AttemptLog, code: str) -> str:
        failure = attempts.repeat_of(code)
        assert failure is not None
        if not failure.error:
            return render(self._corrective["repeated_cell"], step=failure.step) + (
                self._writer_note()
            )
        return render(
            self._corrective["repeated_failure"],
            step=failure.step,
            error=failure.error,
            context=failure.context,
        ).replace("\n\n\n", "\n\n")

    # ------------------------------------------------------------------ the loop
    def run_turn(
        self, turn_index: int, question: str, context: str = ""
    ) -> Iterator[TrajectoryEvent]:
        """Answer one question; yields every event as it happens (see module docstring)."""
        started = self.clock()
        calls_before = self.guard.llm_calls
        yield TurnStarted(turn=turn_index, question=question, context=context)
        if not self._system_sent:
            self._system_sent = True
            yield ModelMessage(
                turn=turn_index,
                step=self.steps_taken,
                role="system",
                content=self.conversation.system,
            )
        self.conversation.start_turn(
            turn_index, question, _opener(turn_index, question, context), context
        )
        self._outputs, self._formatted = [], set()
        self._doubted_outputs, self._doubted_asked = [], False
        self._turn_showed = False
        self._question, self._unused_asked, self._unknown_asked = question, False, False
        self._context, self._turn_cells, self._unread_asked = context, [], False
        self._unformed_asked = self._unread_file_asked = False
        self._revision_asked = self._recomputed_asked = self._element_asked = False
        self._parameter_asked = self._share_asked = self._term_parameter_asked = False
        self._many_asked = self._repeated_asked = False
        self._total_asked = self._term_asked = self._parted_asked = False
        self._refused_for = ()
        self._percent_asked = False
        self._held = None
        if context.strip():
            self._contexts.append(context)
        self._last_shown = []
        self._first_cell = len(self.guard.graph.cells)
        self._spec = AnswerSpec.from_question(question)
        self._question_spec = QuestionSpec.parse(question, context)
        self._revisions += [r for r in self._question_spec.revisions if r not in self._revisions]
        self._shown.append(self.conversation.current.opener)
        yield ModelMessage(
            turn=turn_index,
            step=self.steps_taken,
            role="user",
            content=self.conversation.current.opener,
        )
        hints = self.guard.begin_turn(question, turn=turn_index, context=context)
        yield from self._drain(turn_index)
        yield from self._deliver(turn_index, None, hints, f"{context}\n{question}")
        if self.setup is not None:
            setup, self.setup = self.setup, None
            self._data_columns = dict(setup.columns)
            self._data_files = dict(setup.frames)
            self._table_columns = dict(setup.columns)
            yield from self._setup_step(turn_index, setup)

        answer: str | None = None
        ended: TurnEnd = "steps"
        steps = 0
        interrupted: KeyboardInterrupt | None = None
        try:
            answer, ended, steps = yield from self._steps(turn_index, started)
        except KeyboardInterrupt as exc:
            interrupted, ended = exc, "interrupt"
            steps = sum(1 for e in self.conversation.current.exchanges)
        self.conversation.finish_turn(answer, ended)
        if answer is not None:
            self._answered.append(
                (turn_index, _answer_key(answer), self._spec, self._turn_cell_keys())
            )
        self.guard.end_turn(answer)
        yield from self._drain(turn_index)
        unconfirmed = answer is None and self._held is not None and interrupted is None
        yield AnswerRecorded(
            turn=turn_index,
            answer=self._held if unconfirmed else answer,
            unconfirmed=unconfirmed,
            steps=steps,
            ended=ended,
            wall_time=max(0.0, self.clock() - started),
            manager_llm_calls=self.guard.llm_calls - calls_before,
        )
        if interrupted is not None:
            raise interrupted

    def _steps(
        self, turn: int, started: float
    ) -> Generator[TrajectoryEvent, None, tuple[str | None, TurnEnd, int]]:
        """The steps of one turn; returns (answer, why the turn ended, steps taken)."""
        deadline = None if self.turn_seconds is None else started + self.turn_seconds
        attempts = AttemptLog()
        code_ran = False
        doubtful_cell = False
        """The last cell ran with a silent error (see `_code_step`): the next reply must be
        code, and is checked in a probe (and resampled) before it runs."""
        refused = False
        """The last answer was refused or rejected: the next reply must be code (a small
        model otherwise sends the same answer again), except at the last step."""
        steps = 0
        repeats = 0
        """Consecutive steps that only re-sent a cell not run again."""
        malformed: set[str] = set()
        """This turn's replies of no form (`_FORM_PROBLEMS`; one sent again is resampled)."""
        temperature = self.temperature
        self._turn_tokens_used = 0
        final = False
        """A stalled turn's one last reply (an answer only) was asked for."""
        while steps < self.max_steps_per_turn:
            if deadline is not None and self.clock() >= deadline:
                return None, "time", steps
            if self._over_tokens():
                return None, "tokens", steps
            stalled = attempts.stalled >= self.no_progress_limit or repeats >= self.repeat_limit
            if final or (stalled and not self._turn_showed):
                return None, "no_progress", steps
            last = steps == self.max_steps_per_turn - 1
            if stalled:
                # the turn ends here; its outputs may already hold the answer (a small model
                # often goes on past it): one last reply, which must be the answer
                final = True
            if final or (steps > 0 and last):
                yield self._user(turn, self.steps_taken, self._note("last_step"))
            step = self.steps_taken
            answerable = code_ran and (last or final or not (doubtful_cell or refused))
            event, reply = self._call(
                turn, step, temperature, code_ran=answerable, answer_only=final
            )
            temperature = self.temperature
            yield event
            steps += 1
            repeats_before, repeats = repeats, 0  # counted on below if this step repeats too
            if event.cut in CUT_PROBLEMS:
                problem = CUT_PROBLEMS[event.cut]
                shown = reply[:_CUT_SHOWN] + (" …" if len(reply) > _CUT_SHOWN else "")
                exchange = self.conversation.add_reply(step, shown)
                exchange.outcome = f"invalid: {problem}"
                attempts.no_progress()
                parsed = ParsedReply(thought=shown, problem=problem)  # type: ignore[arg-type]
                yield from self._invalid_step(turn, step, parsed, problem, self._note(problem))
                continue
            parsed = self._parse(reply, code_ran)
            if parsed.code is not None and parsed.answer is None and self._holds(parsed.stated):
                # an answer line ("answer: …") this turn's outputs hold, then code (a small
                # model goes on to ask itself a new question): the answer is the stated
                # one, already computed; the code after it is not run
                parsed = ParsedReply(thought=parsed.thought, answer=parsed.stated)
            if parsed.problem is None and self._valueless(parsed.answer):
                parsed = parsed.model_copy(update={"problem": "valueless_answer"})
            elif parsed.problem is None and self._quotes_error(parsed.answer):
                parsed = parsed.model_copy(update={"problem": "error_answer"})
            repeated = parsed.code is not None and attempts.repeat_of(parsed.code) is not None
            unparsable = parsed.code is not None and not repeated and not runnable(parsed.code)
            # a reply of no form sent again word for word: the note on it changed nothing
            resent = parsed.problem in _FORM_PROBLEMS and reply in malformed
            doubtful = (
                doubtful_cell
                and not repeated
                and (parsed.code is None or self._probe_ok(parsed.code) != (True, True))
            )
            if (repeated or doubtful or unparsable or resent) and self.retry_samples:
                chosen = yield from self._resample(turn, step, attempts, answerable, deadline)
                if chosen is not None:
                    (reply, parsed), repeated = chosen, False
            doubtful_cell = False
            if parsed.problem in _FORM_PROBLEMS:
                malformed.add(reply)
            # what the model reads again of its reply: without thought lines stating numbers
            # nothing showed (its guesses, which it would copy into every later step), or
            # copying the message it answers
            kept = reply
            if parsed.code is not None:
                kept = unclaimed(
                    reply,
                    [*self._shown, self.conversation.current.opener],
                    self.conversation.last_user_text(),
                )
            exchange = self.conversation.add_reply(step, kept, parsed.code)

            if (
                parsed.problem == "valueless_answer"
                and (formatted := self._format_answer()) is not None
            ):
                # "None" while the printed values hold the answer: the answer is those values
                if (
                    yield from self._printed_unless_doubted(
                        turn, step, parsed, exchange, attempts, formatted
                    )
                ):
                    return formatted, "answer", steps
                refused = True
            elif parsed.problem is not None:
                exchange.outcome = f"invalid: {parsed.problem}"
                attempts.no_progress()
                note = self._note(parsed.problem)
                if parsed.problem == "guessed_form":
                    note = self._guessed_note(parsed.stated or "")
                yield from self._invalid_step(turn, step, parsed, parsed.problem, note)
            elif (
                repeated
                and not attempts.repeat_of(parsed.code or "").error  # type: ignore[union-attr]
                and (formatted := self._format_answer()) is not None
            ):
                # the model re-sends a cell that ran: it holds that cell's output to be the
                # answer; the answer is what the printed values hold (each tried once)
                if (yield from self._printed_answer(turn, exchange, attempts, formatted)):
                    return formatted, "answer", steps
                refused = True
            elif repeated:
                assert parsed.code is not None
                failed = bool(attempts.repeat_of(parsed.code).error)  # type: ignore[union-attr]
                exchange.outcome = "not run: repeats " + ("a failed cell" if failed else "a cell")
                attempts.no_progress()
                note = self._repeat_note(attempts, parsed.code)
                repeats = repeats_before + 1
                problem = "repeated_failure" if failed else "repeated_cell"
                yield from self._invalid_step(turn, step, parsed, problem, note)
                temperature = max(self.temperature, self.retry_temperature)
            elif parsed.code is not None:
                code_ran, refused = True, False
                doubtful_cell = yield from self._code_step(turn, step, parsed, exchange, attempts)
                if doubtful_cell:
                    continue
                # the model meant to answer (an answer beside the code, the format written
                # as code), or the newest output holds every field of the format by label
                meant = parsed.answer is not None or bool(
                    bare_annotations(parsed.code) or strip_answer_lines(parsed.code)[1]
                )
                formatted = self._format_answer(labelled_only=not meant)
                if formatted is not None:
                    attempts.progress()
                    steps += 1  # an answer step, without a model call
                    if (yield from self._formatted_step(turn, formatted)):
                        return formatted, "answer", steps
                    refused = True
            elif (earlier := self._copied_from(parsed.answer or "")) is not None:
                exchange.outcome = "invalid: copied_answer"
                attempts.no_progress()
                note = render(self._corrective["copied_answer"], turn=earlier)
                yield from self._invalid_step(turn, step, parsed, "copied_answer", note)
                refused = True
            elif self._crowded(parsed.answer or "") and (
                (formatted := self._format_answer()) is not None
            ):
                # several numbers for the one value asked (earlier turns' values copied
                # beside it): the answer is the value this turn printed
                if (
                    yield from self._printed_unless_doubted(
                        turn, step, parsed, exchange, attempts, formatted
                    )
                ):
                    return formatted, "answer", steps
                refused = True
            elif self.check_answer_numbers and (
                unseen := unseen_numbers(parsed.answer or "", self._shown)
            ):
                formatted = self._format_answer()
                note = render(self._corrective["ungrounded_answer"], numbers=", ".join(unseen))
                if (
                    yield from self._printed_or_refused(
                        turn, step, parsed, exchange, attempts, formatted, "ungrounded_answer", note
                    )
                ):
                    return formatted, "answer", steps
                refused = True
            elif missing := (
                self._spec.missing_labels(parsed.answer or "") if self._spec is not None else []
            ):
                # the answer leaves out a field of the requested form: fill it from the
                # printed values when they hold every field (the answer's own value for
                # the one they leave open), else ask for the form
                formatted = self._format_answer(given=parsed.answer)
                note = render(
                    self._corrective["missing_fields"],
                    form=self._spec.template if self._spec is not None else "",
                    labels=" or ".join(f"`{label}`" for label in missing),
                )
                if (
                    yield from self._printed_or_refused(
                        turn, step, parsed, exchange, attempts, formatted, "missing_fields", note
                    )
                ):
                    return formatted, "answer", steps
                refused = True
            elif (
                not self._unformed_asked
                and self._spec is not None
                and (unformed := self._spec.unformed(parsed.answer or "")) is not None
            ):
                # the one value asked, in a form the question writes out (a month as
                # YYYY-MM, a number to N decimals), is not in the answer: the printed value
                # in that form when there is one, else the form is asked for, once
                self._unformed_asked = True
                formatted = self._format_answer()
                key = f"unformed_{'month' if unformed.kind == 'month' else 'number'}"
                note = render(self._corrective[key], decimals=unformed.decimals)
                if (
                    yield from self._printed_or_refused(
                        turn, step, parsed, exchange, attempts, formatted, "unformed_answer", note
                    )
                ):
                    return formatted, "answer", steps
                refused = True
            elif (
                not self._repeated_asked
                and self._spec is not None
                and (repeated := self._spec.repeated_value(parsed.answer or "")) is not None
            ):
                # a doubt, asked once: every part of a breakdown has one same value
                self._repeated_asked = True
                exchange.outcome = "invalid: repeated_value"
                labels = [f.label for f in self._spec.fields if f.kind in ("number", "count")]
                note = render(
                    self._corrective["repeated_value"],
                    value=repeated,
                    labels=", ".join(f"`{label}`" for label in labels),
                )
                yield from self._invalid_step(turn, step, parsed, "repeated_value", note)
                refused = True
            elif (doubt := self._share_doubt(parsed.answer or "")) is not None:
                # a doubt, asked once: a share of a whole outside 0–100 %
                exchange.outcome = f"invalid: {doubt[0]}"
                yield from self._invalid_step(turn, step, parsed, *doubt)
                refused = True
            elif not self._percent_asked and (
                percent := self._fraction_for_percent(parsed.answer or "")
            ):
                # a doubt, asked once: the question asks for a percentage, and the answer
                # is the fraction the turn's latest cell showed, never scaled by 100
                self._percent_asked = True
                exchange.outcome = "invalid: fraction_answer"
                note = render(self._corrective["fraction_answer"], **percent)
                yield from self._invalid_step(turn, step, parsed, "fraction_answer", note)
                refused = True
            elif not self._element_asked and (element := self._element_of(parsed.answer or "")):
                # a doubt, asked once: the answer is one row of a Series shown where the
                # question asks for one number over the rows
                self._element_asked = True
                exchange.outcome = "invalid: element_answer"
                note = render(
                    self._corrective["element_answer"],
                    answer=parsed.answer or "",
                    label=element[0],
                    length=element[1],
                )
                yield from self._invalid_step(turn, step, parsed, "element_answer", note)
                refused = True
            elif not self._many_asked and len(many := self._many_numbers(parsed.answer or "")) > 1:
                # a doubt, asked once: one number asked, several given (the shape of a
                # table, ``363 rows, 13 columns``, for a share)
                self._many_asked = True
                exchange.outcome = "invalid: many_numbers"
                note = render(self._corrective["many_numbers"], numbers=", ".join(many[:4]))
                yield from self._invalid_step(turn, step, parsed, "many_numbers", note)
                refused = True
            elif not self._total_asked and (rows := self._rows_for_totals()) is not None:
                # a doubt, asked once: the question counts things by a total of each, and
                # the turn's code compared single rows with the threshold, grouping nothing
                self._total_asked = True
                exchange.outcome = "invalid: rows_for_totals"
                note = render(self._corrective["rows_for_totals"], **rows)
                yield from self._invalid_step(turn, step, parsed, "rows_for_totals", note)
                refused = True
            elif not self._unknown_asked and (unknown := self._unknown_names(parsed.answer or "")):
                # a doubt, asked once: a name no column holds may still be right (a derived
                # label), so the second answer goes to review
                self._unknown_asked = True
                exchange.outcome = "invalid: unknown_name"
                names = ", ".join(repr(n) for n in unknown[:3])
                note = render(self._corrective["unknown_name"], names=names)
                yield from self._invalid_step(turn, step, parsed, "unknown_name", note)
                refused = True
            elif (doubt := self._unread_file_doubt() or self._unread_column_doubt()) is not None:
                # a doubt, asked once: the turn's text names a data file whose table no cell
                # of this turn read, or a column of the data nothing it computed read
                exchange.outcome = f"invalid: {doubt[0]}"
                yield from self._invalid_step(turn, step, parsed, *doubt)
                refused = True
            elif not self._term_asked and (term := self._unbuilt_term()) is not None:
                # a doubt, asked once: the question asks for a quantity the task defines,
                # and the latest cell reduces a column named for something else
                self._term_asked = True
                exchange.outcome = "invalid: unbuilt_term"
                note = render(self._corrective["unbuilt_term"], **term)
                yield from self._invalid_step(turn, step, parsed, "unbuilt_term", note)
                refused = True
            elif (
                doubt := self._doubted_answer_doubt(parsed.answer or "")
                or self._revision_doubt()
                or self._parameter_doubt()
                or self._term_parameter_doubt()
            ) is not None:
                # a doubt, asked once each: the answer is a value a cell showed under a
                # doubt on it; the turn states a revised value, or a parameter of a model,
                # that no code of the turn uses; or the question asks for a defined
                # quantity whose parameters no code of the turn or that it read uses
                exchange.outcome = f"invalid: {doubt[0]}"
                yield from self._invalid_step(turn, step, parsed, *doubt)
                refused = True
            elif not self._recomputed_asked and (
                again := self._recomputed_from(parsed.answer or "")
            ):
                # a doubt, asked once: this turn only re-ran an earlier turn's code and got
                # its answer again
                self._recomputed_asked = True
                exchange.outcome = "invalid: recomputed_answer"
                note = render(self._corrective["recomputed_answer"], turn=again)
                yield from self._invalid_step(turn, step, parsed, "recomputed_answer", note)
                refused = True
            elif (doubt := self._unused_value_doubt(parsed.answer or "")) is not None:
                # a doubt, asked once: the second answer goes to review whatever it uses
                exchange.outcome = f"invalid: {doubt[0]}"
                yield from self._invalid_step(turn, step, parsed, *doubt)
                refused = True
            elif not self._parted_asked and (parted := self._parted_values(parsed.answer or ""))[1]:
                # a doubt, asked once: the answer's code applies some of the values the
                # question names and not the others, which earlier cells applied alone
                self._parted_asked = True
                exchange.outcome = "invalid: parted_values"
                note = render(self._corrective["parted_values"], **_parted_note(*parted))
                yield from self._invalid_step(turn, step, parsed, "parted_values", note)
                refused = True
            else:
                attempts.progress()
                if (yield from self._answer_step(turn, step, parsed, exchange)):
                    return parsed.answer, "answer", steps
                refused = True
                # refused on review: another answer the printed values hold goes to review
                # once (a number typed beside the printed one, say); the same numbers in
                # another form (`421` for `buyers: 421`) are not sent again, since the review
                # refused them, and the model goes on from the manager's note
                formatted = self._format_answer()
                if (
                    formatted is not None
                    and formatted != parsed.answer
                    and not same_answer(formatted, refusal_key(parsed.answer or ""))
                    and (yield from self._printed_answer(turn, exchange, attempts, formatted))
                ):
                    return formatted, "answer", steps
        return None, "steps", steps


DOUBTS = frozenset(
    {
        "unread_file",
        "unread_column",
        "unapplied_revision",
        "unused_parameter",
        "unused_term_parameter",
        "doubted_answer",
        "unused_value",
        "impossible_share",
        "fraction_answer",
        "element_answer",
        "many_numbers",
        "rows_for_totals",
        "unknown_name",
        "unbuilt_term",
        "recomputed_answer",
        "parted_values",
        "repeated_value",
        "unformed_answer",
    }
)
"""The worker's checks that turn an answer away on a doubt, asked once a turn (a reading of
the question, or something the code left out that the answer may not need), not on
evidence against it. An answer one of them turned away is held (`Worker._invalid_step`):
a turn that ends with no answer accepted reports it, marked unconfirmed."""


def _evidence_against(notes: Sequence[Hint]) -> bool:
    """Whether a refusal's repair notes rest on evidence against the answer: an alarm (a
    stale read, an exception, a cross product…), which code, data, execution or lineage
    raised. A refusal on doubts (a judge's reading, a question-based check) does not."""
    return any(
        isinstance(h.notice, RepairNotice) and any(f.severity == "alarm" for f in h.notice.evidence)
        for h in notes
    )


def _clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, with an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _parted_note(used: list[list[str]], left: list[list[str]]) -> dict[str, str]:
    """The fields of the ``parted_values`` note: the values used and left out, and a
    selection of the rows that hold both, built from their frame and columns."""

    def said(items: list[list[str]]) -> str:
        return ", ".join(f"{v!r} (`{f}[{c!r}]`)" for f, c, v in items[:3])

    (f1, c1, v1), (f2, c2, v2) = used[0], left[0]
    frame = f1 if f1 == f2 else f2
    both = f"{frame}[({frame}[{c1!r}] == {v1!r}) & ({frame}[{c2!r}] == {v2!r})]"
    return {"used": said(used), "left": said(left), "both": both}
