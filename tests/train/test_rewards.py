"""Rewards: table tests with known answers, and the calls RL trainers make."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import ValidationError

from stateguard.finding import Finding
from stateguard.manager.notes import EvidenceFacts
from stateguard.manager.policies.base import Observation
from stateguard.state import AnalyticalState, VariableRef
from stateguard.train.records import Activation, FaultInfo, ManagerTrajectory, TurnOutcome
from stateguard.train.rewards import (
    ActivationAttempt,
    RewardError,
    RewardEvidence,
    ValidityConfig,
    completion_actions,
    grpo_process_reward,
    grpo_validity_reward,
    process_breakdown,
    process_reward,
    validity_breakdown,
    validity_reward,
    verl_compute_score,
)
from stateguard.verify import StepVerdict

COMMIT = {"kind": "COMMIT_STATE"}
REPAIR_X = {
    "kind": "REPAIR",
    "analytical_evidence": ["step 3 read rate@v1, superseded by rate@v2"],
    "suspected_variables": ["rate"],
}
REPAIR_VAGUE = {"kind": "REPAIR", "analytical_evidence": ["something looks off"]}
STALE = Finding(
    check="stale_use",
    severity="alarm",
    message="step 3 read rate@v1; rate was since rewritten as rate@v2",
    basis=("lineage",),
    variables=("rate@v1",),
    facts=EvidenceFacts(template="stale_read", superseding=("rate@v2",)).as_facts(),
)
FAULT = FaultInfo(
    kind="stale-reuse",
    turn_id=2,
    ident="rate",
    description="reuse rate@v1",
    faulty_code="x = rate * 2",
    variable="rate",
)


def draft(**kw: Any) -> AnalyticalState:
    return AnalyticalState(
        id="S2", issue="margin", used_variables=(VariableRef(name="rate", version=2),), **kw
    )


def activation(
    label: dict[str, Any],
    *,
    event: str = "review",
    index: int = 0,
    turn: int = 2,
    has_draft: bool = True,
    updated: bool = True,
    final: bool = True,
    repairs: int = 0,
    evidence: tuple[Finding, ...] = (),
    label_kinds: tuple[str, ...] = (),
) -> Activation:
    reason = "fault-repair" if label["kind"] == "REPAIR" else "clean-commit"
    obs = Observation(
        event=event,
        turn=turn,
        question="What is the margin?",
        draft=draft() if has_draft else None,
        draft_updated=updated,
        relations_final=final,
        repair_attempts=repairs,
        pending_steps=({"step": 3, "created": ["margin@v1", "rate@v2"], "stale_reads": []},),
        committed_index=({"id": "S1", "issue": "load", "variables": ["df@v1"]},),
    )
    return Activation(
        index=index,
        event=event,
        turn=turn,
        observation=obs,
        evidence=evidence,
        label=label,
        label_kinds=label_kinds or (label["kind"],),
        label_reason=reason,
        faulted=label["kind"] == "REPAIR",
    )


def attempt(act: Activation, *actions: Any, tools: tuple[str, ...] = ()) -> ActivationAttempt:
    return ActivationAttempt(activation=act, actions=actions, tool_results=tools)


CLEAN = activation(COMMIT)
FAULTED = activation({**REPAIR_X}, evidence=(STALE,))
FIXED = RewardEvidence(fixed_turns=(2,))


# -- intervention quality: the known answers --------------------------------


@pytest.mark.parametrize(
    ("act", "actions", "expected"),
    [
        (CLEAN, [COMMIT], 1.0),  # right commit on a clean turn
        (CLEAN, [REPAIR_X], 1.0 - 0.5),  # false repair: beta_fp
        (FAULTED, [COMMIT], 1.0 - 0.25),  # missed fault: beta_fn
        (FAULTED, [REPAIR_X], 1.0),  # localized repair that fixed the turn
        # unbacked repair at a real fault: intervention 0.5 of three equal weights
        (FAULTED, [REPAIR_VAGUE], (1 + 1 + 0.5) / 3),
    ],
)
def test_intervention_table(act: Activation, actions: list[Any], expected: float) -> None:
    assert validity_reward([attempt(act, *actions)], FIXED) == pytest.approx(expected)


def test_a_false_repair_costs_more_than_a_missed_fault() -> None:
    false_repair = validity_reward([attempt(CLEAN, REPAIR_X)], FIXED)
    missed = validity_reward([attempt(FAULTED, COMMIT)], FIXED)
    assert false_repair < missed
    assert missed - false_repair == pytest.approx(0.5 - 0.25)
    cfg = ValidityConfig(beta_fp=2.0, beta_fn=1.0)
    assert validity_reward([attempt(CLEAN, REPAIR_X)], FIXED, cfg) == pytest.approx(-1.0)
    assert validity_reward([attempt(FAULTED, COMMIT)], FIXED, cfg) == pytest.approx(0.0)


def test_a_repair_that_did_not_fix_the_turn_is_not_rewarded_in_full() -> None:
    fixed = validity_breakdown([attempt(FAULTED, REPAIR_X)], FIXED)
    unfixed = validity_breakdown([attempt(FAULTED, REPAIR_X)], RewardEvidence(fixed_turns=()))
    assert (fixed.rewarded_repairs, unfixed.rewarded_repairs) == (1, 0)
    assert unfixed.intervention == pytest.approx(0.5)
    assert unfixed.missed_faults == 0


def test_localization_by_the_fault_variable_or_the_found_check() -> None:
    bare = activation({**REPAIR_X})  # no evidence in the view: the fault localizes
    traj = [attempt(bare, REPAIR_X)]
    assert validity_breakdown(traj, RewardEvidence(fixed_turns=(2,), fault=FAULT)).intervention == 1
    other = {**REPAIR_X, "suspected_variables": ["margin"]}
    score = validity_breakdown(
        [attempt(bare, other)], RewardEvidence(fixed_turns=(2,), fault=FAULT)
    )
    assert score.intervention == 0.5
    by_check = {**REPAIR_VAGUE, "checks": ["stale_use"]}
    assert validity_breakdown([attempt(FAULTED, by_check)], FIXED).rewarded_repairs == 1


AST_FAULT = FaultInfo(
    kind="flipped-comparison",
    turn_id=2,
    ident="flipped-comparison@2:1:44:>= -> <",
    description=">= -> <",
    faulty_code="m = df[df['units'] < 4]['price'].mean()\nprint(m)",
    reference_code="m = df[df['units'] >= 4]['price'].mean()\nprint(m)",
)


@pytest.mark.parametrize(
    ("text", "localized"),
    [
        ("step 3, line 1: `m = df[df['units'] < 4]['price'].mean()`: the comparison flips", True),
        ("the filter `df['units'] < 4` points the wrong way", True),  # only the fault has it
        ("step 3 compares the wrong way", True),  # the step whose code is the faulty line
        ("step 2 compares the wrong way", False),
        ("`print(m)` shows the wrong value", False),  # the reference code has it too
        ("`df['units']` is wrong", False),  # so has this fragment
    ],
)
def test_localization_by_the_planted_code(text: str, localized: bool) -> None:
    act = activation({"kind": "REPAIR", "analytical_evidence": [text]})
    steps = ({"step": 3, "code_head": ["m = df[df['units'] < 4]['price'].mean()", "print(m)"]},)
    act = act.model_copy(
        update={"observation": act.observation.model_copy(update={"pending_steps": steps})}
    )
    repair = {"kind": "REPAIR", "analytical_evidence": [text]}
    ev = RewardEvidence(fixed_turns=(2,), fault=AST_FAULT)
    assert validity_breakdown([attempt(act, repair)], ev).rewarded_repairs == int(localized)


@pytest.mark.parametrize(("fp", "fn"), [(0.25, 0.25), (0.1, 0.3), (-1.0, -2.0)])
def test_beta_fp_must_exceed_beta_fn(fp: float, fn: float) -> None:
    with pytest.raises(ValidationError):
        ValidityConfig(beta_fp=fp, beta_fn=fn)


def test_the_weights_cannot_all_be_zero() -> None:
    with pytest.raises(ValidationError, match="sum to 0"):
        ValidityConfig(w_protocol=0, w_grounding=0, w_intervention=0, w_outcome=0)


# -- protocol correctness ---------------------------------------------------


@pytest.mark.parametrize(
    ("act", "actions", "violation"),
    [
        (CLEAN, [], "no control action"),
        (CLEAN, [COMMIT, COMMIT], "2 control actions"),
        (CLEAN, [COMMIT, {"kind": "trace_lineage", "name": "x"}], "tool action follows"),
        (CLEAN, ["I think we should commit."], "0 JSON actions"),
        (CLEAN, [{"kind": "DELETE_EVERYTHING"}], "not a valid action"),
        (CLEAN, [{"kind": "REPAIR"}], "analytical_evidence"),  # a required field missing
        (activation(COMMIT, updated=False), [COMMIT], "never updated"),
        (activation(COMMIT, final=False), [COMMIT], "relations are not finalized"),
        (activation(COMMIT, has_draft=False), [COMMIT], "no open draft"),
        (activation(COMMIT, event="turn_start"), [COMMIT], "not allowed at this point"),
        (CLEAN, [{"kind": "OPEN_STATE", "issue": "x"}], "already open"),
        (activation(COMMIT, repairs=3), [REPAIR_X], "repair budget"),
        (CLEAN, [{"kind": "check_execution", "step_id": 1}] * 8 + [COMMIT], "over the budget"),
    ],
)
def test_protocol_violations(act: Activation, actions: list[Any], violation: str) -> None:
    score = validity_breakdown([attempt(act, *actions)], FIXED)
    assert score.protocol == 0.0
    assert any(violation in v for v in score.violations), score.violations


def test_tool_actions_then_one_control_action_is_valid() -> None:
    tools = [{"kind": "trace_lineage", "name": "rate"}, {"kind": "check_execution", "step_id": 3}]
    score = validity_breakdown([attempt(CLEAN, *tools, COMMIT)], FIXED)
    assert (score.protocol, score.violations, score.total) == (1.0, (), 1.0)


def test_protocol_is_the_share_of_valid_activations() -> None:
    acts = [attempt(activation(COMMIT, index=i), COMMIT) for i in range(3)]
    acts.append(attempt(activation(COMMIT, index=3), COMMIT, COMMIT))
    score = validity_breakdown(acts, FIXED)
    assert score.protocol == pytest.approx(0.75)
    assert score.violations == ("activation 3: 2 control actions in one activation",)
    assert score.total == pytest.approx((0.75 + 1 + 1) / 3)


# -- grounding --------------------------------------------------------------


def test_grounding_of_variables_relations_and_conclusions() -> None:
    update = {
        "kind": "UPDATE_STATE",
        "used_variables": ["margin", "rate@v2", "rate@v1", "ghost"],
        "conclusions": ["the margin is 0.4213", "revenue grew to 18,250.75"],
    }
    act = activation(update, updated=False, final=False)
    ev = RewardEvidence(outputs=("margin    0.421337\n",), fixed_turns=())
    score = validity_breakdown([attempt(act, update)], ev)
    # 6 claims: margin and rate@v2 are shown, rate@v1 and ghost are not; 0.4213 was
    # printed (rounded), 18,250.75 was not
    assert score.grounding == pytest.approx(3 / 6)
    assert len(score.ungrounded) == 3
    # what a tool showed in this activation counts as an output
    more = attempt(act, update, tools=("revenue: 18250.75",))
    assert validity_breakdown([more], ev).grounding == pytest.approx(4 / 6)
    # outputs unknown: conclusions are not checked
    assert validity_breakdown([attempt(act, update)], FIXED).grounding == pytest.approx(2 / 4)


def test_relations_must_target_committed_states() -> None:
    fin = {
        "kind": "FINALIZE_RELATIONS",
        "mode": "reselect",
        "relations": [
            {"type": "progress", "related_state_id": "S1"},
            {"type": "branch", "related_state_id": "S9"},
        ],
    }
    act = activation(fin, final=False)
    score = validity_breakdown([attempt(act, fin)], FIXED)
    assert score.grounding == pytest.approx(0.5)
    assert "S9" in score.ungrounded[0]


# -- outcome and trajectories -----------------------------------------------


def trajectory(*acts: Activation, turns: tuple[TurnOutcome, ...]) -> ManagerTrajectory:
    return ManagerTrajectory(
        id="dseval/t/counterfactual/stale-reuse/0",
        branch_id="b0",
        kind="counterfactual",
        suite="dseval",
        task_id="t",
        injector="stale-reuse",
        fault=FAULT,
        activations=acts,
        turns=turns,
    )


def test_a_trajectory_scores_its_labels_and_its_turn_outcomes() -> None:
    traj = trajectory(
        activation(COMMIT, turn=1, index=0),
        activation({**REPAIR_X}, index=1, evidence=(STALE,)),
        turns=(
            TurnOutcome(turn_id=1, correct=True),
            TurnOutcome(turn_id=2, correct=False, attempts=2, fixed_by_repair=True),
        ),
    )
    score = validity_breakdown(traj)
    assert (score.outcome, score.rewarded_repairs, score.false_repairs) == (0.5, 1, 0)
    assert score.total == pytest.approx((1 + 1 + 1 + 0.5) / 4)
    # no shadow actions recorded: every activation breaks the protocol, the fault is missed
    shadow = validity_breakdown(traj, source="shadow")
    assert shadow.protocol == 0.0
    assert shadow.missed_faults == 1
    assert validity_reward(traj, RewardEvidence(outcome=1.0)) == pytest.approx(1.0)


def test_empty_or_wrong_inputs_are_typed_errors() -> None:
    with pytest.raises(RewardError, match="no activations"):
        validity_reward([])
    with pytest.raises(RewardError, match=r"manager_trajectory\[0\]"):
        validity_reward([CLEAN])  # type: ignore[list-item]


# -- process reward ---------------------------------------------------------


def verdict(score: float | None) -> StepVerdict:
    if score is None:
        return StepVerdict(invalid="unparseable_score", rationale="?", layer="llm")
    return StepVerdict(score=score, rationale="r", layer="deterministic")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("scores", "outcome", "beta", "expected"),
    [
        ([1, 1, 1], True, 0.5, 1.0),
        ([1, 0.5, 1], True, 0.5, 0.5 + 0.5 * (2.5 / 3)),
        ([0, 0, 0], False, 0.5, 0.0),
        ([1, 1, 1], False, 0.5, 0.5 * (2 / 3)),  # final step forced to 0
        ([0, 0, 0], True, 0.5, 0.5 + 0.5 * (1 / 3)),  # final step forced to 1
        ([1, 0.5], True, 0.0, 1.0),  # beta 0: the outcome alone
        ([1, 0.5, 0.5], True, 1.0, 2.5 / 3),  # beta 1: the mean step reward alone
        ([1, 0.5, 1], 0.5, 0.5, 0.25 + 0.5 * (2 / 3)),  # a graded outcome
    ],
)
def test_process_reward_table(
    scores: list[float], outcome: float, beta: float, expected: float
) -> None:
    steps = list(range(len(scores)))
    assert process_reward(steps, [verdict(s) for s in scores], outcome, beta) == pytest.approx(
        expected
    )
    assert process_reward(steps, scores, outcome, beta) == pytest.approx(expected)


def test_the_final_step_agrees_with_the_outcome() -> None:
    for outcome in (True, False):
        got = process_breakdown(
            [0, 1, 2], [verdict(1), verdict(0.5), verdict(1 - outcome)], outcome
        )
        assert got.step_rewards[-1] == float(outcome)
        assert got.step_rewards[:2] == (1.0, 0.5)


@pytest.mark.parametrize(
    ("invalid", "expected_mean"),
    [("skip", (1 + 1) / 2), ("zero", (1 + 0 + 1) / 3), ("neutral", (1 + 0.5 + 1) / 3)],
)
def test_invalid_verdicts(invalid: str, expected_mean: float) -> None:
    got = process_breakdown(
        [0, 1, 2], [verdict(1), verdict(None), verdict(0)], True, invalid=invalid
    )  # type: ignore[arg-type]
    assert got.invalid_steps == 1
    assert got.mean_step == pytest.approx(expected_mean)
    assert got.total == pytest.approx(0.5 + 0.5 * expected_mean)


def test_an_invalid_final_verdict_still_takes_the_outcome() -> None:
    got = process_breakdown([0, 1], [verdict(0.5), verdict(None)], False)
    assert got.step_rewards == (0.5, 0.0)
    assert got.total == pytest.approx(0.5 * 0.25)


def test_without_verdicts_the_reward_is_the_outcome() -> None:
    assert process_reward([0, 1, 2], None, True) == 1.0
    assert process_reward([0, 1, 2], None, False) == 0.0
    assert process_reward([], [], True) == 1.0


@pytest.mark.parametrize(
    ("steps", "verdicts", "outcome", "beta", "field"),
    [
        ([0, 1], [1.0], True, 0.5, "step_verdicts: 1 verdicts for a trajectory of 2"),
        ([0], [0.7], True, 0.5, r"step_verdicts\[0\]"),
        ([0], ["1"], True, 0.5, r"step_verdicts\[0\]"),
        ([0], [1.0], 1.5, 0.5, "outcome"),
        ([0], [1.0], True, 1.5, "beta"),
    ],
)
def test_process_reward_bad_inputs(
    steps: list[int], verdicts: list[Any], outcome: Any, beta: float, field: str
) -> None:
    with pytest.raises(RewardError, match=field):
        process_reward(steps, verdicts, outcome, beta)


# -- the calls trainers make ------------------------------------------------


def rows() -> dict[str, list[Any]]:
    """Dataset columns as GRPOTrainer passes them: one value per completion."""
    acts = [CLEAN, CLEAN, FAULTED, FAULTED]
    return {
        "activation": [a.model_dump(mode="json") for a in acts],
        "evidence": [FIXED.model_dump(mode="json")] * 4,
    }


def conversational(action: dict[str, Any]) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": json.dumps(action)}]


def test_grpo_reward_called_as_grpo_trainer_calls_it() -> None:
    reward = grpo_validity_reward()
    prompts = [[{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]] * 4
    completions = [conversational(a) for a in (COMMIT, REPAIR_X, REPAIR_X, COMMIT)]
    got = reward(
        prompts=prompts,
        completions=completions,
        completion_ids=[[1, 2, 3]] * 4,
        **rows(),
        trainer_state=object(),
        log_extra=lambda *a, **k: None,
        log_metric=lambda *a, **k: None,
    )
    assert got == pytest.approx([1.0, 0.5, 1.0, 0.75])
    assert reward.__name__ == "validity_reward_func"  # GRPOTrainer names the reward by it
    text = reward(
        prompts=["p"] * 4,
        completions=["```json\n" + json.dumps(a) + "\n```" for a in (COMMIT,) * 4],
        completion_ids=[[1]] * 4,
        **rows(),
    )
    assert text == pytest.approx([1.0, 1.0, 0.75, 0.75])


@pytest.mark.train
def test_grpo_trainer_reward_path_with_trl() -> None:
    """The reward goes through TRL's own GRPOTrainer._calculate_rewards."""
    pytest.importorskip("torch", reason="needs the train extra: pip install -e '.[train]'")
    trl = pytest.importorskip("trl", reason="needs the train extra: pip install -e '.[train]'")
    import torch  # the optional training extra

    class Trainer:  # the attributes _calculate_rewards reads
        def __init__(self) -> None:
            self.accelerator = SimpleNamespace(device=torch.device("cpu"), is_main_process=True)
            self.reward_funcs = [grpo_validity_reward()]
            self.reward_processing_classes = [None]
            self.reward_func_names = ["validity_reward_func"]
            self.environments = None
            self.state = SimpleNamespace(global_step=0)
            self.args = SimpleNamespace(report_to=[])

        def _log_completion_extra(self, *a: Any, **k: Any) -> None: ...

        def _log_metric(self, *a: Any, **k: Any) -> None: ...

    cols = rows()
    inputs = [
        {"prompt": [{"role": "user", "content": "u"}], "activation": a, "evidence": e}
        for a, e in zip(cols["activation"], cols["evidence"], strict=True)
    ]
    completions = [conversational(a) for a in (COMMIT, REPAIR_X, REPAIR_X, COMMIT)]
    prompts = [i["prompt"] for i in inputs]
    got = trl.GRPOTrainer._calculate_rewards(Trainer(), inputs, prompts, completions, [[1]] * 4)
    assert got[:, 0].tolist() == pytest.approx([1.0, 0.5, 1.0, 0.75])


def test_grpo_process_reward_from_columns_and_from_a_judge() -> None:
    reward = grpo_process_reward(beta=0.5)
    got = reward(
        prompts=["p", "p"],
        completions=["a", "b"],
        completion_ids=[[1], [2]],
        step_verdicts=[[1, 0.5, 1], [1, 1, None]],
        outcome=[True, False],
    )
    # the second trajectory's last step (no verdict) takes the outcome: [1, 1, 0]
    assert got == pytest.approx([0.5 + 0.5 * (2.5 / 3), 0.5 * (2 / 3)])

    def judge(prompt: Any, completion: Any) -> tuple[list[int], list[float], bool]:
        return [0, 1], [1.0, 1.0], completion == "right"

    judged = grpo_process_reward(judge=judge)(prompts=["p", "p"], completions=["right", "wrong"])
    assert judged == pytest.approx([1.0, 0.25])
    with pytest.raises(RewardError, match="outcome"):
        reward(prompts=["p"], completions=["a"])


def test_verl_compute_score() -> None:
    truth = FAULTED.model_dump_json()
    extra = {"evidence": FIXED.model_dump(mode="json")}
    assert verl_compute_score("stateguard/manager", json.dumps(REPAIR_X), truth, extra) == 1.0
    assert verl_compute_score("stateguard/manager", json.dumps(COMMIT), truth, extra) == 0.75
    cfg = {"beta_fp": 0.9, "beta_fn": 0.4}
    clean = CLEAN.model_dump_json()
    assert verl_compute_score(
        "stateguard/manager", json.dumps(REPAIR_X), clean, {**extra, "config": cfg}
    ) == pytest.approx(0.1)
    with pytest.raises(RewardError, match="activation"):
        verl_compute_score("x", "{}", {"index": 0}, None)


def test_completion_forms() -> None:
    two = json.dumps({"kind": "trace_lineage", "name": "x"}) + "\n" + json.dumps(COMMIT)
    assert [a["kind"] for a in completion_actions(two)] == ["trace_lineage", "COMMIT_STATE"]  # type: ignore[index]
    assert completion_actions("no json here") == ["no json here"]
    msgs = [{"role": "assistant", "content": "{}"}, {"role": "tool", "content": "result"}]
    assert completion_actions(msgs) == ["{}"]
    with pytest.raises(RewardError, match=r"completion\[0\]"):
        completion_actions([{"role": "assistant"}])


@pytest.mark.kernel
def test_synthesized_labels_earn_the_full_reward(
    mini_trajectories: list[ManagerTrajectory],
) -> None:
    """On real replays the forced labels are legal, grounded and localized; a policy
    that commits where the label repairs is charged a miss for each."""
    kinds = {t.kind for t in mini_trajectories}
    assert {"clean", "counterfactual", "repair"} <= kinds
    for traj in mini_trajectories:
        score = validity_breakdown(traj)
        assert (score.violations, score.ungrounded) == ((), ()), traj.id
        assert score.total == pytest.approx(1.0), (traj.id, score)
        committing = [
            ActivationAttempt(
                activation=a,
                actions=({"kind": "ABSTAIN"},) if a.label_kind == "REPAIR" else (a.label,),
            )
            for a in traj.activations
        ]
        repairs = sum(a.label_kind == "REPAIR" for a in traj.activations)
        missed = validity_breakdown(committing, RewardEvidence(outcome=1.0))
        assert missed.missed_faults == repairs
        assert missed.total == pytest.approx(1.0 - 0.25 * repairs)
