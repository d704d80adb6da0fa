"""Chat-messages JSONL in the LLM policy's own protocol, from manager trajectories.

Rows are ``{"messages": [...]}`` (system, user and assistant turns; the last one is the
assistant's action), the format TRL, ms-swift and LLaMA-Factory read. Every message is
rendered by `stateguard.manager.policies.llm` — the system prompt, an observation, the
result of the last action, an action — so a model trained on the rows is asked the
same way at run time by ``--manager llm``.

* An **atomic** sample is one decision: the conversation the LLM policy has at that
  activation (a fresh one per activation; the follow-up activations of one review point
  continue it with the last action's result), ending with the forced action.
* A **lifecycle** sample is one state from ``OPEN_STATE`` to ``COMMIT_STATE`` (a faulted
  branch's spans the repair): the system prompt once, then per activation its
  observation (or the last result, within a conversation) and the forced action.

Samples are deduplicated (identical message lists), split by task (no task has samples
on both sides) with a seed, and mixed with a configurable share of lifecycles.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from stateguard.llm import ChatMessage
from stateguard.manager.policies.llm import (
    action_message,
    conversation_key,
    observation_message,
    result_message,
)
from stateguard.manager.prompts import load
from stateguard.train.records import Activation, ManagerTrajectory

SYSTEM_PROMPT = "llm_policy.md"


class SampleInfo(BaseModel):
    """What one exported row holds (written beside the rows, one line each)."""

    model_config = ConfigDict(frozen=True)

    row: int
    split: Literal["train", "validation"]
    form: Literal["atomic", "lifecycle"]
    suite: str
    task_id: str
    kind: str
    """Trajectory kind: clean | counterfactual | repair (lifecycle: of its last action)."""
    injector: str | None = None
    trajectory_ids: tuple[str, ...]
    activations: tuple[int, ...]
    """The activations whose labels are the row's assistant messages."""
    decision: str
    """The kind of the row's last action (the decision an atomic row teaches)."""
    actions: tuple[str, ...]
    """Kinds of the assistant messages, in order."""
    reasons: tuple[str, ...]
    """Why each assistant message is the correct action (`LabelReason`)."""
    relation_types: tuple[str, ...] = ()


class Sample(BaseModel):
    """One row and its info."""

    model_config = ConfigDict(frozen=True)

    messages: tuple[ChatMessage, ...]
    info: SampleInfo

    def row(self) -> dict[str, Any]:
        """The JSONL row: only ``messages``."""
        return {"messages": [{"role": m.role, "content": m.content} for m in self.messages]}


class ExportConfig(BaseModel):
    """How samples are mixed and split."""

    model_config = ConfigDict(frozen=True)

    lifecycle_share: float = Field(default=0.25, ge=0.0, le=1.0)
    """Share of lifecycle samples among the rows (0: atomic only, 1: lifecycles only)."""
    val_fraction: float = Field(default=0.2, ge=0.0, lt=1.0)
    """Share of tasks held out for validation."""
    split_seed: int = 0


def system_message() -> ChatMessage:
    """The LLM policy's system prompt."""
    return ChatMessage(role="system", content=load(SYSTEM_PROMPT))


def continues(prev: Activation | None, act: Activation) -> bool:
    """Whether the LLM policy continues its conversation from ``prev`` at ``act``."""
    obs = act.observation
    return (
        prev is not None
        and obs.last_action_result is not None
        and conversation_key(prev.observation) == conversation_key(obs)
        and prev.index == act.index - 1
    )


def _label(act: Activation) -> ChatMessage:
    return ChatMessage(role="assistant", content=action_message(act.label_action))


def conversation_of(history: Sequence[Activation], act: Activation) -> list[Activation]:
    """The activations of the LLM policy's conversation up to ``act`` (``history``: the
    branch's activations; the earlier ones' labels are its earlier replies)."""
    chain = [act]
    by_index = {a.index: a for a in history}
    while True:
        prev = by_index.get(chain[0].index - 1)
        if prev is None or not continues(prev, chain[0]):
            return chain
        chain.insert(0, prev)


def prompt_messages(history: Sequence[Activation], act: Activation) -> list[ChatMessage]:
    """The messages the LLM policy has when asked at ``act``."""
    chain = conversation_of(history, act)
    msgs = [
        system_message(),
        ChatMessage(role="user", content=observation_message(chain[0].observation)),
    ]
    for before, a in itertools.pairwise(chain):
        msgs.append(_label(before))
        msgs.append(
            ChatMessage(role="user", content=result_message(a.observation.last_action_result or ""))
        )
    return msgs


def _relation_types(acts: Sequence[Activation]) -> tuple[str, ...]:
    out: list[str] = []
    for a in acts:
        if a.label_kind in ("FINALIZE_RELATIONS", "OPEN_STATE"):
            out += [str(r["type"]) for r in a.label.get("relations", [])]
    return tuple(out)


def atomic_samples(traj: ManagerTrajectory, history: Sequence[Activation]) -> list[Sample]:
    """One sample per activation of ``traj`` (``history``: every activation of its branch)."""
    out = []
    for act in traj.activations:
        msgs = [*prompt_messages(history, act), _label(act)]
        chain = conversation_of(history, act)
        out.append(
            Sample(
                messages=tuple(msgs),
                info=SampleInfo(
                    row=-1,
                    split="train",
                    form="atomic",
                    suite=traj.suite,
                    task_id=traj.task_id,
                    kind=traj.kind,
                    injector=traj.injector,
                    trajectory_ids=(traj.id,),
                    activations=tuple(a.index for a in chain),
                    decision=act.label_kind,
                    actions=tuple(a.label_kind for a in chain),
                    reasons=tuple(a.label_reason for a in chain),
                    relation_types=_relation_types(chain),
                ),
            )
        )
    return out


def lifecycle_samples(trajs: Sequence[ManagerTrajectory]) -> list[Sample]:
    """One sample per committed state of one branch's trajectories."""
    acts: dict[int, Activation] = {}
    owner: dict[int, ManagerTrajectory] = {}
    for t in trajs:
        for a in t.activations:
            acts[a.index] = a
            owner[a.index] = t
    states: dict[str, list[Activation]] = {}
    for i in sorted(acts):
        a = acts[i]
        if a.state_id is not None:
            states.setdefault(a.state_id, []).append(a)
    out = []
    for life in states.values():
        if life[0].label_kind != "OPEN_STATE" or life[-1].label_kind != "COMMIT_STATE":
            continue
        msgs = [system_message()]
        prev: Activation | None = None
        for a in life:
            if continues(prev, a):
                msgs.append(
                    ChatMessage(
                        role="user", content=result_message(a.observation.last_action_result or "")
                    )
                )
            else:
                msgs.append(ChatMessage(role="user", content=observation_message(a.observation)))
            msgs.append(_label(a))
            prev = a
        last = owner[life[-1].index]
        ids = tuple(dict.fromkeys(owner[a.index].id for a in life))
        out.append(
            Sample(
                messages=tuple(msgs),
                info=SampleInfo(
                    row=-1,
                    split="train",
                    form="lifecycle",
                    suite=last.suite,
                    task_id=last.task_id,
                    kind=last.kind,
                    injector=last.injector,
                    trajectory_ids=ids,
                    activations=tuple(a.index for a in life),
                    decision=life[-1].label_kind,
                    actions=tuple(a.label_kind for a in life),
                    reasons=tuple(a.label_reason for a in life),
                    relation_types=_relation_types(life),
                ),
            )
        )
    return out


def split_tasks(task_ids: Sequence[str], val_fraction: float, seed: int) -> set[str]:
    """The held-out task ids: a seeded draw of ``val_fraction`` of the tasks."""
    ids = sorted(set(task_ids))
    if len(ids) < 2 or val_fraction <= 0:
        return set()
    n = min(len(ids) - 1, max(1, round(val_fraction * len(ids))))
    rng = random.Random(f"split:{seed}")
    rng.shuffle(ids)
    return set(ids[:n])


def _digest(s: Sample) -> str:
    return hashlib.sha256(json.dumps(s.row(), sort_keys=True).encode()).hexdigest()


def _mix(
    atomic: list[Sample], life: list[Sample], share: float, rng: random.Random
) -> list[Sample]:
    if share <= 0 or not life:
        return atomic if share < 1 else []
    if share >= 1 or not atomic:
        return life
    want_life = round(len(atomic) * share / (1 - share))
    if want_life <= len(life):
        return atomic + rng.sample(life, want_life)
    want_atomic = round(len(life) * (1 - share) / share)
    return rng.sample(atomic, min(len(atomic), want_atomic)) + life


class ExportResult(BaseModel):
    """Rows per split and what was available before mixing."""

    train: list[Sample]
    validation: list[Sample]
    available: dict[str, int]
    duplicates: int
    val_tasks: list[str]


def build_samples(trajs: Sequence[ManagerTrajectory], config: ExportConfig) -> ExportResult:
    """Deduplicated, split and mixed samples of every trajectory."""
    branches: dict[str, list[ManagerTrajectory]] = {}
    for t in trajs:
        branches.setdefault(t.branch_id, []).append(t)
    atomic: list[Sample] = []
    life: list[Sample] = []
    for group in branches.values():
        history = sorted(
            {a.index: a for t in group for a in t.activations}.values(), key=lambda a: a.index
        )
        for t in group:
            atomic += atomic_samples(t, history)
        life += lifecycle_samples(group)
    seen: set[str] = set()
    dups = 0
    unique: dict[str, list[Sample]] = {"atomic": [], "lifecycle": []}
    for s in [*atomic, *life]:
        d = _digest(s)
        if d in seen:
            dups += 1
            continue
        seen.add(d)
        unique[s.info.form].append(s)
    val = split_tasks([t.task_id for t in trajs], config.val_fraction, config.split_seed)
    rng = random.Random(f"mix:{config.split_seed}")
    out: dict[str, list[Sample]] = {}
    for split in ("train", "validation"):
        side = {
            f: [s for s in unique[f] if (s.info.task_id in val) == (split == "validation")]
            for f in unique
        }
        mixed = _mix(side["atomic"], side["lifecycle"], config.lifecycle_share, rng)
        rng.shuffle(mixed)
        out[split] = [
            s.model_copy(update={"info": s.info.model_copy(update={"row": i, "split": split})})
            for i, s in enumerate(mixed)
        ]
    return ExportResult(
        train=out["train"],
        validation=out["validation"],
        available={f: len(v) for f, v in unique.items()},
        duplicates=dups,
        val_tasks=sorted(val),
    )


def write_split(out: Path, name: str, samples: Sequence[Sample]) -> None:
    """``{name}.jsonl`` (the rows) and ``{name}.index.jsonl`` (their `SampleInfo`)."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / f"{name}.jsonl", "w", encoding="utf-8") as fh:
        for s in samples:
            fh.write(json.dumps(s.row(), ensure_ascii=False) + "\n")
    with open(out / f"{name}.index.jsonl", "w", encoding="utf-8") as fh:
        for s in samples:
            fh.write(s.info.model_dump_json() + "\n")


def counts(samples: Sequence[Sample]) -> dict[str, dict[str, int]]:
    """Counts of rows by form, kind, injector and suite, and of actions and relation types."""
    c: dict[str, Counter[str]] = {
        k: Counter()
        for k in (
            "rows_by_form",
            "rows_by_kind",
            "rows_by_injector",
            "rows_by_suite",
            "decisions",
            "actions",
            "label_reasons",
            "relation_types",
        )
    }
    for s in samples:
        i = s.info
        c["rows_by_form"][i.form] += 1
        c["rows_by_kind"][i.kind] += 1
        c["rows_by_injector"][i.injector or "none (clean)"] += 1
        c["rows_by_suite"][i.suite] += 1
        c["decisions"][i.decision] += 1
        c["actions"].update(i.actions)
        c["label_reasons"].update(i.reasons)
        c["relation_types"].update(i.relation_types)
    return {k: dict(sorted(v.items())) for k, v in c.items()}
