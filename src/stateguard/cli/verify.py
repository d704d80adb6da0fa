"""`stateguard verify ...`: score recorded trajectories, and measure the verifier on replays."""

from __future__ import annotations

import functools
import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from stateguard.audit import Auditor
from stateguard.audit.joinfaults import FAULT_KINDS, plant
from stateguard.bench.faults import TurnFacts
from stateguard.bench.loaders.dseval import load_dseval_suite, stage_inputs
from stateguard.bench.mutations import ast_candidates
from stateguard.checks import Step
from stateguard.cli.run import _build_model
from stateguard.errors import TaskFormatError
from stateguard.kernel import KernelSession
from stateguard.lineage import TrackedSession
from stateguard.verify import VERIFIER_MODES, StepVerifier, VerifyError, VerifyTask
from stateguard.verify.chain import CHAIN, build_verifier, needs_model
from stateguard.verify.evaluation import metrics, recall_by_kind, selection
from stateguard.verify.labelling import (
    EvalSession,
    EvalTurn,
    LabelledStep,
    label_session,
    load_labelled,
)
from stateguard.verify.mutants import MUTANTS, double
from stateguard.verify.search import (
    STRATEGIES,
    KernelBranches,
    ModelPolicy,
    TurnSearch,
    search_turns,
)
from stateguard.verify.splits import SPLITS, SplitChoice, in_split, split_of
from stateguard.worker.events import AnswerRecorded, StepRecord, TurnStarted, read_trajectory
from stateguard.worker.grading import grade
from stateguard.worker.run import describe_data
from stateguard.worker.tasks import load_task

verify_app = typer.Typer(help="Step verification with ternary rewards.", no_args_is_help=True)

AST_KINDS = ("flipped-comparison", "dropped-constraint", "scope-change")


def _ast_mutator(kind: str, code: str, columns: Any = ()) -> list[str]:
    facts = TurnFacts(turn_id=1, code=code, ok=True, rerunnable=True)
    return [c.faulty_code for c in ast_candidates(kind, facts)]


def _join_mutator(kind: Any, code: str, columns: Any = ()) -> list[str]:
    planted = plant(code, kind)
    return [planted] if planted else []


def _mutators() -> dict[str, Any]:
    out: dict[str, Any] = {k: functools.partial(_ast_mutator, k) for k in AST_KINDS}
    out.update({f"join-{k}": functools.partial(_join_mutator, k) for k in FAULT_KINDS})
    out.update(MUTANTS)
    out["double"] = double(dict(out))
    return out


def _verifiers(
    names: list[str],
    err: Console,
    model_opts: dict[str, Any],
    config: Path | None,
    max_rounds: int = 3,
) -> dict[str, StepVerifier]:
    model = None
    if any(n in ("hybrid", "llm") for n in names):
        model = _build_model(err, model_opts, config)
    out = {}
    for name in names:
        if name not in VERIFIER_MODES:
            err.print(f"[red]error:[/red] --verifier {name!r}: expected one of {VERIFIER_MODES}")
            raise typer.Exit(2)
        out[name] = StepVerifier(name, model=model, max_rounds=max_rounds)  # type: ignore[arg-type]
    return out


def label_suite(
    path: Path | Sequence[Path],
    limit: int | None,
    verifiers: dict[str, StepVerifier],
    out: Path | None,
    err: Console,
    sessions: list[str] | None = None,
    turn_limit: int | None = None,
    split: SplitChoice = "all",
) -> list[LabelledStep]:
    """Label and verify the DSEval suite(s) at ``path`` (``out``: also write the steps;
    ``sessions``: only the sessions whose id contains one of these; ``split``: only the
    sessions of that side of the fixed dev/validation split)."""
    paths = [path] if isinstance(path, Path) else list(path)
    tasks = [t for p in paths for t in load_dseval_suite(p) if not t.skipped]
    if sessions:
        tasks = [t for t in tasks if any(s in t.task_id for s in sessions)]
        if not tasks:
            where = ", ".join(map(str, paths))
            err.print(f"[red]error:[/red] no session of {where} matches --session {sessions}")
            raise typer.Exit(2)
    tasks = [t for t in tasks if in_split(t.task_id, split)]
    tasks = tasks[:limit]
    steps: list[LabelledStep] = []
    sink = out.open("w", encoding="utf-8") if out else None
    try:
        for task in tasks:
            session = EvalSession(
                name=task.task_id,
                turns=tuple(
                    EvalTurn(
                        question=t.question,
                        code=t.reference_code or "",
                        setup=t.meta.get("setup_code", "") or "",
                    )
                    for t in task.turns[:turn_limit]
                ),
            )
            with tempfile.TemporaryDirectory(prefix="stateguard-verify-") as work:
                stage_inputs(task, work)

                def make(work: str = work) -> TrackedSession:
                    return TrackedSession(
                        KernelSession(workdir=Path(work), default_timeout=60),
                        setup_code=Auditor().setup_code,
                    )

                def record(item: LabelledStep) -> None:
                    if sink is not None:
                        sink.write(item.model_dump_json() + "\n")
                        sink.flush()

                got = label_session(session, make, verifiers, _mutators(), on_step=record)
            steps.extend(got)
            err.print(f"{task.task_id}: {len(got)} labelled steps")
    finally:
        if sink is not None:
            sink.close()
    return steps


def _split_option(value: str, err: Console) -> SplitChoice:
    if value not in ("all", *SPLITS):
        err.print(f"[red]error:[/red] --split {value!r}: expected all, dev or validation")
        raise typer.Exit(2)
    return value  # type: ignore[return-value]


def _by_split(
    steps: Sequence[LabelledStep], names: Sequence[str]
) -> dict[str, dict[str, dict[str, Any]]]:
    """Per side of the split, per verifier: the metrics (sides without steps left out)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for side in SPLITS:
        part = [s for s in steps if split_of(s.session) == side]
        if part:
            out[side] = {n: metrics(part, n).model_dump() for n in names}
    return out


@verify_app.command("eval")
def eval_command(
    path: list[Path] = typer.Option(
        ..., "--path", help="A DSEval suite folder, e.g. exercise (repeatable)."
    ),
    split: str = typer.Option(
        "all",
        "--split",
        help="all|dev|validation: the sessions of one side of the fixed split (tune on dev "
        "only; with all, the metrics of both sides are printed beside each other).",
    ),
    suite: str = typer.Option("dseval", "--suite", help="Only dseval is supported."),
    verifier: list[str] = typer.Option(
        ["execution", "deterministic"],
        "--verifier",
        help="execution|deterministic|hybrid|llm (repeatable).",
    ),
    limit: int | None = typer.Option(None, "--limit", help="At most this many sessions."),
    session: list[str] = typer.Option(
        [], "--session", help="Only sessions whose id contains this (repeatable)."
    ),
    turn_limit: int | None = typer.Option(
        None, "--turn-limit", min=1, help="Only the first N turns of each session."
    ),
    max_rounds: int = typer.Option(
        3, "--max-rounds", min=1, help="LLM-layer rounds per step (hybrid, llm)."
    ),
    out: Path | None = typer.Option(None, "--out", help="Write the labelled steps (JSONL)."),
    as_json: bool = typer.Option(False, "--json", help="Print the metrics as JSON."),
    base_url: str | None = typer.Option(None, "--base-url"),
    model: str | None = typer.Option(None, "--model"),
    model_path: Path | None = typer.Option(None, "--model-path"),
    config: Path | None = typer.Option(None, "--config"),
) -> None:
    """Build the labelled step set from replays, verify it, print the confusion matrix."""
    err = Console(stderr=True)
    if suite != "dseval":
        err.print(f"[red]error:[/red] --suite {suite!r}: only dseval is supported")
        raise typer.Exit(2)
    verifiers = _verifiers(
        verifier,
        err,
        {"base_url": base_url, "model": model, "model_path": model_path},
        config,
        max_rounds,
    )
    chosen = _split_option(split, err)
    steps = label_suite(path, limit, verifiers, out, err, session, turn_limit, chosen)
    report = {
        "split": chosen,
        "steps": len(steps),
        "labels": {k: sum(1 for s in steps if f"{s.label:g}" == k) for k in ("0", "0.5", "1")},
        "verifiers": {n: metrics(steps, n).model_dump() for n in verifiers},
        "splits": _by_split(steps, list(verifiers)),
        "silent_error_recall_by_kind": recall_by_kind(steps, list(verifiers)),
        "selection": [r.model_dump() for r in selection(steps, list(verifiers))],
    }
    if as_json:
        typer.echo(
            json.dumps(
                {
                    **report,
                    **{
                        f"{n}.{k}": report["verifiers"][n][k]
                        for n in verifiers
                        for k in (
                            "silent_error_recall",
                            "silent_error_flagged",
                            "false_zero_rate",
                            "accuracy",
                        )
                    },
                },
                indent=2,
            )
        )
        return
    con = Console(highlight=False)
    con.print(f"{len(steps)} steps, labels {report['labels']}")
    for n, m in report["verifiers"].items():
        con.print(
            f"[bold]{n}[/bold]: silent_error_recall={m['silent_error_recall']} "
            f"(0 or 0.5: {m['silent_error_flagged']}) "
            f"false_zero_rate={m['false_zero_rate']} accuracy={m['accuracy']}"
        )
        for lab, row in m["confusion"].items():
            con.print(f"  label {lab:>3}: {row}")
        for side, per in report["splits"].items():
            sm = per[n]
            con.print(
                f"  {side:<10} {sm['steps']:>5} steps: silent_error_recall="
                f"{sm['silent_error_recall']} (0 or 0.5: {sm['silent_error_flagged']}) "
                f"false_zero_rate={sm['false_zero_rate']}"
            )
    for r in report["selection"]:
        con.print(f"best-of-{r['n']} over {r['turns']} turns: {r['picked_correct']}")


@verify_app.command("bon-eval")
def bon_eval_command(
    path: list[Path] = typer.Option([], "--path", help="A DSEval suite folder (repeatable)."),
    split: str = typer.Option(
        "all", "--split", help="all|dev|validation: one side of the fixed session split."
    ),
    suite: str = typer.Option("dseval", "--suite", help="Only dseval is supported."),
    n: list[int] = typer.Option([4, 8, 16], "--n", help="Candidates per turn (repeatable)."),
    verifier: list[str] = typer.Option(
        [],
        "--verifier",
        help="execution|deterministic|hybrid|llm (repeatable); A>B ranks by A, B breaking ties.",
    ),
    labelled: Path | None = typer.Option(
        None, "--labelled", help="Labelled steps written by `verify eval --out` (no replay)."
    ),
    limit: int | None = typer.Option(None, "--limit", help="At most this many sessions."),
    draws: int = typer.Option(20, "--draws", min=1, help="Variant pools drawn per turn."),
    seed: int = typer.Option(0, "--seed"),
    same_turns: bool = typer.Option(
        False, "--same-turns", help="Every N on the turns that have enough for the largest."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the rates as JSON."),
    base_url: str | None = typer.Option(None, "--base-url"),
    model: str | None = typer.Option(None, "--model"),
    model_path: Path | None = typer.Option(None, "--model-path"),
    config: Path | None = typer.Option(None, "--config"),
) -> None:
    """Best-of-N on replays: per turn the reference step and N-1 silently wrong variants;
    how often each verifier, majority vote and random pick the reference."""
    err = Console(stderr=True)
    if suite != "dseval":
        err.print(f"[red]error:[/red] --suite {suite!r}: only dseval is supported")
        raise typer.Exit(2)
    chosen = _split_option(split, err)
    if bool(path) == (labelled is not None):
        err.print("[red]error:[/red] give --path (label the suite) or --labelled FILE")
        raise typer.Exit(2)
    if labelled is not None:
        try:
            steps = load_labelled(labelled)
        except (OSError, ValueError) as exc:
            err.print(f"[red]error:[/red] {labelled}: not a labelled-step file ({exc})")
            raise typer.Exit(2) from exc
        have = list(steps[0].verdicts) if steps else []
        names = list(verifier) or have
        missing = sorted({p for v in verifier for p in v.split(CHAIN) if p not in have})
        if missing:
            err.print(f"[red]error:[/red] {labelled} has no verdicts of {missing} (has {have})")
            raise typer.Exit(2)
        steps = [s for s in steps if in_split(s.session, chosen)]
    else:
        names = verifier or ["execution", "deterministic"]
        opts = {"base_url": base_url, "model": model, "model_path": model_path}
        parts = list(dict.fromkeys(p for v in names for p in v.split(CHAIN)))
        verifiers = _verifiers(parts, err, opts, config)
        steps = label_suite(path, limit, verifiers, None, err, split=chosen)
    rows = selection(steps, names, sizes=n, seed=seed, draws=draws, same_turns=same_turns)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "split": chosen,
                    "verifiers": names,
                    "draws": draws,
                    "selection": [r.model_dump() for r in rows],
                },
                indent=2,
            )
        )
        return
    con = Console(highlight=False)
    for r in rows:
        rates = ", ".join(
            f"{k}={v:.3f}" if v is not None else f"{k}=n/a" for k, v in r.picked_correct.items()
        )
        below = ", ".join(
            f"{k}={v:.3f}" if v is not None else f"{k}=n/a" for k, v in r.outranked.items()
        )
        con.print(
            f"best-of-{r.n} over {r.turns} turns: {rates}; reference outranked: {below}",
            soft_wrap=True,
        )


def trajectory_steps(path: Path) -> list[tuple[VerifyTask, list[Step]]]:
    """Turns of a recorded ``trajectory.jsonl`` as (task, steps); a turn's last step is final."""
    turns: list[tuple[VerifyTask, list[Step]]] = []
    for event in read_trajectory(path):
        if isinstance(event, TurnStarted):
            turns.append((VerifyTask(question=event.question, context=event.context), []))
        elif isinstance(event, StepRecord) and turns and event.problem is None:
            turns[-1][1].append(event.as_step())
        elif isinstance(event, AnswerRecorded) and turns and turns[-1][1]:
            last = turns[-1][1][-1]
            turns[-1][1][-1] = last.model_copy(update={"final": True})
    return turns


@verify_app.command("score")
def score_command(
    trajectory: Path = typer.Argument(..., help="A run's trajectory.jsonl."),
    out: Path | None = typer.Option(None, "--out", help="Default: verdicts.jsonl beside it."),
    verifier: str = typer.Option("deterministic", "--verifier"),
    base_url: str | None = typer.Option(None, "--base-url"),
    model: str | None = typer.Option(None, "--model"),
    model_path: Path | None = typer.Option(None, "--model-path"),
    config: Path | None = typer.Option(None, "--config"),
) -> None:
    """Score every step of a recorded trajectory (no live kernel) and write the verdicts."""
    err = Console(stderr=True)
    v = _verifiers(
        [verifier], err, {"base_url": base_url, "model": model, "model_path": model_path}, config
    )[verifier]
    target = out or trajectory.with_name("verdicts.jsonl")
    n = 0
    with target.open("w", encoding="utf-8") as fh:
        for turn, (task, steps) in enumerate(trajectory_steps(trajectory), 1):
            for i, verdict in enumerate(v.verify_all(task, steps)):
                fh.write(json.dumps({"turn": turn, "step": i, **verdict.model_dump()}) + "\n")
                n += 1
    Console(highlight=False).print(f"{n} verdicts -> {target}")


@verify_app.command("search")
def search_command(
    task_path: Path = typer.Argument(..., help="A task file or folder (see `stateguard run`)."),
    search: str = typer.Option("best-of-n", "--search", help="best-of-n|beam|dvts"),
    n: int = typer.Option(4, "--n", min=1, help="Rollouts (best-of-n) or candidates per step."),
    verifier: str = typer.Option(
        "deterministic",
        "--verifier",
        help="deterministic|hybrid|llm, or deterministic>hybrid (the rules rank, the hybrid "
        "breaks their ties); hybrid/llm use the same model.",
    ),
    max_steps: int = typer.Option(8, "--max-steps", min=1),
    turn_limit: int | None = typer.Option(None, "--turn-limit"),
    as_json: bool = typer.Option(False, "--json"),
    base_url: str | None = typer.Option(None, "--base-url"),
    model: str | None = typer.Option(None, "--model"),
    model_path: Path | None = typer.Option(None, "--model-path"),
    config: Path | None = typer.Option(None, "--config"),
) -> None:
    """Answer a task's turns by test-time search over verified steps; grade against gold."""
    err = Console(stderr=True)
    if search not in STRATEGIES:
        err.print(f"[red]error:[/red] --search {search!r}: expected one of {STRATEGIES}")
        raise typer.Exit(2)
    try:
        judged = needs_model(verifier)
    except VerifyError as exc:
        err.print(f"[red]error:[/red] --verifier: {exc}")
        raise typer.Exit(2) from exc
    try:
        task = load_task(task_path)
    except TaskFormatError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc
    opts = {"base_url": base_url, "model": model, "model_path": model_path}
    policy_model = _build_model(err, opts, config)
    ranker = build_verifier(verifier, policy_model if judged else None)
    data_dir = task.data[0] if len(task.data) == 1 and task.data[0].is_dir() else None
    if task.data and data_dir is None:
        err.print("[red]error:[/red] verify search needs the task's data as one directory")
        raise typer.Exit(2)
    turns = task.turns[:turn_limit]
    branches = KernelBranches(
        lambda: KernelSession(data_dir=data_dir, default_timeout=120),
        setup_code=Auditor().setup_code,
    )
    policy = ModelPolicy(policy_model, data_files=describe_data(data_dir), max_steps=max_steps)
    con = Console(highlight=False)

    def show(t: TurnSearch) -> None:
        if not as_json:
            con.print(
                f"turn {t.turn}: answer={t.answer!r} score={t.score} "
                f"({t.candidates} candidates, {t.verifier_calls} verified steps, "
                f"{t.wall_time:.1f} s)"
            )

    results = search_turns(
        [VerifyTask(question=t.question, context=t.context) for t in turns],
        search,  # type: ignore[arg-type]
        policy,
        ranker,
        branches,
        n=n,
        max_steps=max_steps,
        on_turn=show,
    )
    rows = []
    for t, turn in zip(results, turns, strict=True):
        g = grade(t.answer, turn.answer, turn.tolerance)
        rows.append({**t.model_dump(), "correct": g.correct})
    if as_json:
        typer.echo(
            json.dumps({"search": search, "n": n, "verifier": verifier, "turns": rows}, indent=2)
        )
    else:
        correct = sum(1 for r in rows if r["correct"])
        con.print(f"{correct}/{len(rows)} turns correct")
