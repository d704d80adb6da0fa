"""Selection logic of Best-of-N, beam search and DVTS on a scripted environment."""

from __future__ import annotations

import pytest
from scripted_search import DictBranches, TablePolicy, answer, code

from stateguard.verify import SearchError, StepVerdict, StepVerifier, VerifyTask
from stateguard.verify.search import aggregate, beam_search, best_of_n, dvts

TASK = VerifyTask(question="What is the sum of data?")
VERIFIER = StepVerifier("deterministic")
GOOD = "total = sum(data)\nprint(total)"
WRONG = "total = sum(data[1:])\nprint(total)"  # silently wrong: prints 9
FATAL = "total = sum(data) + 'x'"  # TypeError
EXPLORE = "print(dta)"  # NameError, a grounding error


def v(score: float | None) -> StepVerdict:
    if score is None:
        return StepVerdict(invalid="unparseable_score", rationale="-", layer="llm")
    return StepVerdict(score=score, rationale="-", layer="deterministic")


@pytest.mark.parametrize(
    ("how", "expected"), [("min", 0.5), ("mean", 2.5 / 3), ("product", 0.5), ("last", 1.0)]
)
def test_aggregates_leave_invalid_verdicts_out(how: str, expected: float) -> None:
    verdicts = [v(1.0), v(None), v(0.5), v(1.0)]
    assert aggregate(verdicts, how) == pytest.approx(expected)  # type: ignore[arg-type]


def test_a_trajectory_without_a_valid_verdict_has_no_score() -> None:
    assert aggregate([v(None)]) is None
    assert aggregate([]) is None


def test_best_of_n_picks_the_rollout_whose_answer_the_execution_supports() -> None:
    policy = TablePolicy(
        {
            (): [[code(WRONG)], [code(GOOD)], [code(FATAL)]],
            (WRONG,): [[answer("The sum is 10")]],
            (GOOD,): [[answer("The sum is 10")]],
            (FATAL,): [[answer("The sum is 10")]],
        }
    )
    branches = DictBranches()
    result = best_of_n(TASK, policy, VERIFIER, branches, n=3)
    assert [t.score for t in result.candidates] == [0.0, 1.0, 0.0]
    assert result.best.steps[0].code == GOOD and result.best.answer == "The sum is 10"
    assert branches.open() == [result.branch]
    result.close()
    assert branches.open() == []


def test_best_of_n_ends_a_rollout_at_the_step_budget_with_a_zero() -> None:
    policy = TablePolicy({(): [[code("x = 1")]], ("x = 1",): [[code("x = 2")]]})
    result = best_of_n(TASK, policy, VERIFIER, DictBranches(), n=1, max_steps=2)
    assert [s.final for s in result.best.steps] == [False, True]
    assert result.best.score == 0.0


def test_beam_search_keeps_the_best_candidates_at_each_step() -> None:
    policy = TablePolicy(
        {
            (): [[code(FATAL), code(EXPLORE), code(GOOD)]],
            (EXPLORE,): [[code(GOOD), code(WRONG), code(FATAL)]],
            (GOOD,): [[answer("9"), answer("The sum is 10"), answer("10.5")]],
            (EXPLORE, GOOD): [[answer("10"), answer("11"), answer("12")]],
        }
    )
    branches = DictBranches()
    result = beam_search(TASK, policy, VERIFIER, branches, beam_width=2, candidates=3)
    # step 1 keeps GOOD (1) and EXPLORE (0.5), best first, and drops FATAL (0); step 2 keeps
    # the supported answer (1) and EXPLORE -> GOOD (0.5), which alone is expanded again
    assert policy.calls == [((), 3), ((GOOD,), 3), ((EXPLORE,), 3), ((EXPLORE, GOOD), 3)]
    assert [s.code or s.answer for s in result.best.steps] == [GOOD, "The sum is 10"]
    assert result.best.score == 1.0
    assert sorted(t.score for t in result.candidates) == [0.5, 1.0]
    assert branches.open() == [result.branch]
    result.close()


def test_beam_search_checks_its_shape() -> None:
    with pytest.raises(SearchError, match="beam_width <= candidates"):
        beam_search(TASK, TablePolicy({}), VERIFIER, DictBranches(), beam_width=3, candidates=2)


def test_dvts_searches_subtrees_independently_and_greedily() -> None:
    policy = TablePolicy(
        {
            # subtree 1 starts with an exploration error at best; subtree 2 gets a clean start
            (): [[code(FATAL), code(EXPLORE)], [code(FATAL), code(GOOD)]],
            (EXPLORE,): [[code(GOOD), code(FATAL)]],
            (EXPLORE, GOOD): [[answer("10"), answer("9")]],
            (GOOD,): [[answer("11"), answer("The sum is 10")]],
        }
    )
    branches = DictBranches()
    result = dvts(TASK, policy, VERIFIER, branches, n=4, candidates=2)
    assert len(result.candidates) == 2
    first, second = result.candidates
    # greedy per step: the better of two verified candidates, each time
    assert [s.code or s.answer for s in first.steps] == [EXPLORE, GOOD, "10"]
    assert [x.score for x in first.verdicts] == [0.5, 1.0, 1.0] and first.score == 0.5
    assert [s.code or s.answer for s in second.steps] == [GOOD, "The sum is 10"]
    assert result.best == second
    assert branches.open() == [result.branch]
    result.close()


def test_branches_do_not_share_state_in_the_scripted_environment() -> None:
    branches = DictBranches()
    root = branches.root()
    a, b = branches.child(root), branches.child(root)
    a.run(code("data.append(99)"))
    assert b.ns["data"] == [1, 2, 3, 4] and root.ns["data"] == [1, 2, 3, 4]


ALSO_GOOD = "total = 0\nfor x in data:\n    total += x\nprint(total)"


def test_a_chained_verifier_breaks_the_first_verifiers_ties_with_the_second() -> None:
    from stateguard.llm import ScriptedModel
    from stateguard.verify import ChainedVerifier

    # the rules score both rollouts 1; the second verifier doubts the first rollout's code
    policy = TablePolicy(
        {
            (): [[code(WRONG)], [code(ALSO_GOOD)]],
            (WRONG,): [[answer("The sum is 9")]],
            (ALSO_GOOD,): [[answer("The sum is 10")]],
        }
    )
    judge = ScriptedModel(
        [
            "<score>0.5</score><summary>drops the first value</summary>",
            "<score>1</score><summary>as printed</summary>",
            "<score>1</score><summary>sums every value</summary>",
            "<score>1</score><summary>as printed</summary>",
        ]
    )
    chained = ChainedVerifier(VERIFIER, StepVerifier("hybrid", model=judge))
    result = best_of_n(TASK, policy, chained, DictBranches(), n=2)
    assert [t.score for t in result.candidates] == [1.0, 1.0]
    assert [t.tiebreak for t in result.candidates] == [0.5, 1.0]
    assert result.best.steps[0].code == ALSO_GOOD and judge.remaining == 0
    assert result.best.verdicts[0].layer == "deterministic"  # the first verifier's verdict
    # the rules alone keep the earliest of the tie
    again = TablePolicy(
        {
            (): [[code(WRONG)], [code(ALSO_GOOD)]],
            (WRONG,): [[answer("The sum is 9")]],
            (ALSO_GOOD,): [[answer("The sum is 10")]],
        }
    )
    alone = best_of_n(TASK, again, VERIFIER, DictBranches(), n=2)
    assert alone.best.steps[0].code == WRONG and alone.best.tiebreak is None
    result.close()
    alone.close()


def test_the_tiebreak_never_outranks_a_better_first_score() -> None:
    from stateguard.verify.search.aggregate import path_rank

    def tv(score: float, tie: float | None) -> StepVerdict:
        return StepVerdict(score=score, tiebreak=tie, rationale="-", layer="deterministic")

    assert path_rank([tv(1.0, 0.0)]) > path_rank([tv(0.5, 1.0)])
    assert path_rank([tv(1.0, 1.0)]) > path_rank([tv(1.0, 0.5)])
    assert path_rank([tv(1.0, None)]) < path_rank([tv(1.0, 0.0)])  # no tiebreak: below all


def test_paths_that_tie_are_ordered_by_the_findings_against_them() -> None:
    from stateguard.checks import Finding
    from stateguard.verify.search.aggregate import path_rank

    doubt = Finding(check="c", severity="doubt", message="m", basis=("question",))
    one = StepVerdict(score=0.5, rationale="-", layer="deterministic", evidence=(doubt,))
    two = one.model_copy(update={"evidence": (doubt, doubt)})
    assert path_rank([one]) > path_rank([two])
    # a better score is never outranked by fewer findings
    clean = StepVerdict(score=0.0, rationale="-", layer="deterministic")
    assert path_rank([two]) > path_rank([clean])


@pytest.mark.parametrize("name", ["oracle", "deterministic>", "a>b>c", "llm>hybrid>llm"])
def test_a_selector_name_is_one_or_two_known_verifiers(name: str) -> None:
    from stateguard.verify import VerifyError
    from stateguard.verify.chain import chain_parts

    with pytest.raises(VerifyError, match="unknown verifier"):
        chain_parts(name)


def test_build_verifier_gives_the_model_to_the_llm_parts_only() -> None:
    from stateguard.llm import ScriptedModel
    from stateguard.verify import ChainedVerifier, build_verifier
    from stateguard.verify.chain import needs_model

    model = ScriptedModel([])
    built = build_verifier("deterministic>hybrid", model)
    assert isinstance(built, ChainedVerifier) and built.mode == "deterministic>hybrid"
    assert built.first.llm is None and built.then.llm is not None
    assert isinstance(build_verifier("deterministic"), StepVerifier)
    assert needs_model("deterministic>llm") and not needs_model("deterministic")


def test_of_rollouts_with_an_equally_bad_worst_step_the_better_mean_wins() -> None:
    policy = TablePolicy(
        {
            (): [[code(FATAL)], [code(GOOD)]],
            (FATAL,): [[answer("The sum is 10")]],
            (GOOD,): [[answer("The sum is 99")]],  # no execution printed 99: 0
        }
    )
    result = best_of_n(TASK, policy, VERIFIER, DictBranches(), n=2)
    assert [[x.score for x in t.verdicts] for t in result.candidates] == [[0.0, 0.0], [1.0, 0.0]]
    assert [t.score for t in result.candidates] == [0.0, 0.0]
    assert result.best.steps[0].code == GOOD  # min ties; its mean step score is higher
    result.close()


def test_a_chained_verifier_runs_shared_rules_once() -> None:
    from stateguard.llm import ScriptedModel
    from stateguard.verify import ChainedVerifier, VerifyError

    runs: list[int] = []

    def counting(inp):  # a rule that finds nothing and counts its runs
        runs.append(inp.index)
        return []

    judge = ScriptedModel(["<score>0.5</score><summary>hm</summary>"])
    chained = ChainedVerifier(
        StepVerifier("deterministic", rules=(counting,)),
        StepVerifier("hybrid", model=judge, rules=(counting,)),
    )
    branch = DictBranches().root()
    branch.run(code(GOOD))
    verdict = chained.verify(TASK, branch.steps, env=branch.environment())
    assert runs == [0] and judge.remaining == 0
    assert (verdict.score, verdict.tiebreak) == (1.0, 0.5)
    with pytest.raises(VerifyError, match="out of range"):
        chained.verify(TASK, branch.steps, index=3)
