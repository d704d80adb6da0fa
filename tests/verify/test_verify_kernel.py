"""The verifier and search branches on real kernels: probes, the join guard, isolation."""

from __future__ import annotations

import pytest

from stateguard.audit import Auditor
from stateguard.llm import ScriptedModel
from stateguard.verify import StepVerdict, StepVerifier, VerifyTask
from stateguard.verify.search import (
    KernelBranches,
    ModelPolicy,
    Proposal,
    best_of_n,
    search_turns,
)
from stateguard.verify.search.branches import KernelBranch

pytestmark = pytest.mark.kernel

TASK = VerifyTask(question="Which regions sold more than 10 units?")
SETUP = (
    "import pandas as pd\nsales = pd.DataFrame({'region': ['a', 'b', 'c'], 'units': [5, 12, 30]})"
)


@pytest.fixture
def branches() -> KernelBranches:
    return KernelBranches(setup=SETUP, setup_code=Auditor().setup_code, timeout=60)


def test_branch_writes_never_leak_into_another_branch(branches: KernelBranches) -> None:
    root = branches.root()
    root.run(Proposal(code="sales['units'] = sales['units'] * 2\nbig = sales[sales.units > 10]"))
    a, b = branches.child(root), branches.child(root)
    try:
        a.run(Proposal(code="sales.loc[0, 'units'] = -1\nonly_a = 1"))
        probe_b = b.environment().probe("(int(sales.loc[0, 'units']), 'only_a' in globals())")
        probe_root = root.environment().probe("int(sales.loc[0, 'units'])")
        probe_a = a.environment().probe("int(sales.loc[0, 'units'])")
        assert probe_b.value == [10, False]
        assert probe_root.value == 10 and probe_a.value == -1
        assert [s.code for s in b.steps] == [root.steps[0].code]
        assert branches.replayed_cells == 2
    finally:
        for br in (root, a, b):
            br.close()


def test_the_verifier_reads_live_state_and_its_probes_change_nothing(
    branches: KernelBranches,
) -> None:
    root = branches.root()
    try:
        root.run(Proposal(thought="the regions found", code="hits = sales[sales.units > 100]"))
        env = root.environment()
        det = StepVerifier("deterministic").verify(TASK, root.steps, env=env)
        assert det.score == 0.0 and "hits is empty" in det.rationale
        root.run(Proposal(code="hits = sales[sales.units > 10]\nlen(hits)"))
        model = ScriptedModel(
            [
                "```python\ndel sales\nhits = None\n```",
                "<score>1</score><summary>two regions</summary>",
            ]
        )
        llm = StepVerifier("hybrid", model=model).verify(TASK, root.steps, env=env)
        assert llm.score == 1.0 and llm.rounds == 2
        assert env.probe("(len(hits), len(sales))").value == [2, 3]
    finally:
        root.close()


def test_a_join_guard_finding_in_the_kernel_scores_zero(branches: KernelBranches) -> None:
    root = branches.root()
    try:
        root.run(
            Proposal(
                code="t = pd.DataFrame({'region': ['a', 'b'], 'target': [1, 2]})\n"
                "m = sales.merge(t, how='cross')"
            )
        )
        v = StepVerifier("deterministic").verify(TASK, root.steps, env=root.environment())
        assert v.score == 0.0 and v.evidence[0].check == "audit_cross_product"
    finally:
        root.close()


def test_best_of_n_with_a_scripted_policy_model_on_kernels(branches: KernelBranches) -> None:
    replies = iter(
        [
            "Filter.\n```python\nbig = sales[sales.units > 10]\nprint(list(big.region))\n```",
            "<answer>b, c</answer>",
            "Filter.\n```python\nbig = sales[sales.units > 100]\nprint(list(big.region))\n```",
            "<answer>none</answer>",
        ]
    )
    policy_model = ScriptedModel(lambda messages: next(replies), name="policy")
    result = best_of_n(
        TASK, ModelPolicy(policy_model), StepVerifier("deterministic"), branches, n=2
    )
    try:
        assert [t.score for t in result.candidates] == [1.0, 0.0]
        assert result.best.answer == "b, c"
    finally:
        result.close()


def test_turns_are_searched_from_the_previous_winners_state(branches: KernelBranches) -> None:
    scripts = {
        "Which regions sold more than 10 units?": [
            "```python\nbig = sales[sales.units > 10]\nprint(len(big))\n```",
            "<answer>2 regions</answer>",
        ],
        "How many units do they sell?": [
            "```python\nprint(int(big.units.sum()))\n```",
            "<answer>42</answer>",
        ],
    }

    def reply(messages):  # the turn's own question (task data, not the prompt's layout)
        question = next(q for q in scripts if q in messages[1].content)
        done = sum(1 for m in messages if m.role == "assistant")
        return scripts[question][done]

    turns = [VerifyTask(question=q) for q in scripts]
    results = search_turns(
        turns,
        "best-of-n",
        ModelPolicy(ScriptedModel(reply)),
        StepVerifier("deterministic"),
        branches,
        n=2,
        max_steps=3,
    )
    assert [(r.answer, r.score, r.candidates) for r in results] == [
        ("2 regions", 1.0, 2),
        ("42", 1.0, 2),
    ]


def test_a_result_ignoring_a_value_of_the_data_is_found_by_a_real_probe(
    branches: KernelBranches,
) -> None:
    task = VerifyTask(question="How many units did region c sell, and region b?")
    root = branches.root()
    try:
        root.run(Proposal(code="int(sales[sales.region == 'c'].units.sum())"))
        step = root.steps[-1].model_copy(update={"result": True})
        v = StepVerifier("deterministic").verify(task, [step], env=root.environment())
        # 'b' and 'c' are too short to count as names; the frame's column 'region' is used
        assert v.score == 1.0
        root.run(Proposal(code="built = sales[['units']].copy()\nint(built.units.sum())"))
        step = root.steps[-1].model_copy(update={"result": True})
        v = StepVerifier("deterministic").verify(
            VerifyTask(question="Total units of the region column?"), [step], env=root.environment()
        )
        assert v.score == 0.5 and "the column 'region' of the data" in v.rationale
    finally:
        root.close()


def test_a_filter_on_a_value_its_column_lacks_scores_zero_and_a_held_value_does_not(
    branches: KernelBranches,
) -> None:
    root = branches.root()
    try:
        root.run(Proposal(code="print(sales[sales['region'] == 'Z']['units'].sum())"))
        v = StepVerifier("deterministic").verify(TASK, root.steps, env=root.environment())
        assert v.score == 0.0 and v.evidence[0].check == "absent_filter"
        assert "'a', 'b', 'c'" in v.rationale
        root.run(Proposal(code="print(sales[sales['region'] == 'b']['units'].sum())"))
        near = StepVerifier("deterministic").verify(TASK, root.steps, env=root.environment())
        assert near.score == 1.0, near.rationale
    finally:
        root.close()


def _result(root: KernelBranch, task: VerifyTask, code: str) -> StepVerdict:
    """Run ``code`` on ``root`` as the turn's result step and verify it alone."""
    root.run(Proposal(code=code))
    step = root.steps[-1].model_copy(update={"result": True})
    return StepVerifier("deterministic").verify(task, [step], env=root.environment())


def test_a_result_from_another_column_than_the_question_names_by_a_real_probe(
    branches: KernelBranches,
) -> None:
    task = VerifyTask(question="How many different regions are there?")
    root = branches.root()
    try:
        v = _result(root, task, "sales.units.nunique()")
        assert v.score == 0.5 and v.evidence[0].check == "question_column", v.rationale
        near = _result(root, task, "sales.region.nunique()")
        assert near.score == 1.0, near.rationale
    finally:
        root.close()


def test_a_column_written_all_missing_scores_zero_in_a_result_step(
    branches: KernelBranches,
) -> None:
    task = VerifyTask(question="What is the share of units per region?")
    root = branches.root()
    try:
        # a grouped result assigned as a column matches no row: all NaN
        v = _result(root, task, "sales['share'] = sales.groupby('units')['region'].count()")
        assert v.score == 0.0 and v.evidence[0].check == "blank_column", v.rationale
        assert "`sales['share']`" in v.rationale and "all 3 rows" in v.rationale
        doubt = StepVerifier("deterministic").verify(task, root.steps, env=root.environment())
        assert doubt.score == 0.5  # not a result step: it may be filled later
        # near miss: a column with values
        near = _result(root, task, "sales['share'] = sales.units / sales.units.sum()")
        assert near.score == 1.0, near.rationale
    finally:
        root.close()


def test_an_empty_column_carried_into_a_filtered_copy_is_not_the_copys_doing(
    branches: KernelBranches,
) -> None:
    task = VerifyTask(question="How many units were sold in rows with more than 1 unit?")
    root = branches.root()
    try:
        # an empty column the data already has (an all-blank column of a file)
        root.run(Proposal(code="import numpy as np\nsales['note'] = np.nan"))
        carried = _result(root, task, "big = sales[sales.units > 1]\nbig['units'].sum()")
        assert carried.score == 1.0, carried.rationale
        # near miss: the copy's own empty column is still the copy's doing
        own = (
            "big = sales[sales.units > 1].copy()\nbig['by'] = big.groupby('region')['units'].sum()"
        )
        v = _result(root, task, own + "\nbig['units'].sum()")
        assert v.score == 0.0 and v.evidence[0].check == "blank_column", v.rationale
        assert "`big['by']`" in v.rationale and "note" not in v.rationale
    finally:
        root.close()


def test_a_map_that_leaves_rows_missing_scores_zero_in_a_result_step(
    branches: KernelBranches,
) -> None:
    task = VerifyTask(question="What share of units were sold in the north?")
    root = branches.root()
    try:
        # 'c' has no entry in the dict: its row gets NaN and the mean silently skips it
        lossy = "sales['north'] = sales['region'].map({'a': 1, 'b': 0})\nsales.north.mean()"
        v = _result(root, task, lossy)
        assert v.score == 0.0 and v.evidence[0].check == "lost_mapping", v.rationale
        assert "left 1 of 3 rows" in v.rationale and "`sales['region']`" in v.rationale
        # a function with no return for some values does the same; outside a result step: 0.5
        partial = "def f(x):\n    if x == 'a':\n        return 1\n"
        root.run(Proposal(code=partial + "sales['g'] = sales.region.apply(f)"))
        doubt = StepVerifier("deterministic").verify(task, root.steps, env=root.environment())
        assert doubt.score == 0.5 and "left 2 of 3 rows" in doubt.rationale, doubt.rationale
        # near miss: every value mapped
        whole = "sales['north'] = sales['region'].map({'a': 1, 'b': 0, 'c': 0})\nsales.north.mean()"
        assert _result(root, task, whole).score == 1.0
    finally:
        root.close()


def test_a_rename_of_a_column_the_table_lacks_scores_zero_in_a_result_step(
    branches: KernelBranches,
) -> None:
    task = VerifyTask(question="Total units per region, as a table with 'Units'.")
    root = branches.root()
    try:
        # the table holds 'region' only: the rename of 'units' does nothing
        wrong = "sales.groupby('units')[['region']].count().rename(columns={'units': 'Units'})"
        v = _result(root, task, wrong)
        assert v.score == 0.0 and v.evidence[0].check == "unmatched_rename", v.rationale
        assert "renamed nothing for 'units'" in v.rationale and "'region'" in v.rationale
        # outside a result step: 0.5
        root.run(Proposal(code="t = sales[['region']].rename(columns={'units': 'Units'})"))
        doubt = StepVerifier("deterministic").verify(task, root.steps, env=root.environment())
        assert doubt.score == 0.5 and doubt.evidence[0].check == "unmatched_rename"
        # near misses: every key held; the renamed name rebound by the cell itself
        right = "sales.groupby('region')[['units']].sum().rename(columns={'units': 'Units'})"
        assert _result(root, task, right).score == 1.0
        rebound = "s2 = sales.copy()\ns2 = s2.rename(columns={'units': 'Units'})\ns2"
        assert _result(root, task, rebound).score == 1.0
    finally:
        root.close()


def test_zero_one_columns_are_read_by_a_real_probe(branches: KernelBranches) -> None:
    from stateguard.verify.arithmetic import alphabetical_extremes, flag_medians

    root = branches.root()
    try:
        root.run(
            Proposal(
                code="sales['big'] = (sales.units > 10).astype(int)\n"
                "sales['flag'] = sales.units > 10\nsales['three'] = [0, 1, 2]"
            )
        )
        probe = root.environment().probe
        code = (
            "sales.big.median(), sales['flag'].median(), sales.three.median(), sales.units.median()"
        )
        found = flag_medians(probe, code)
        assert len(found) == 2 and "'big'" in found[0] and "'flag'" in found[1], found
        root.run(Proposal(code="sales['day'] = ['2024-01-02', '2024-01-03', '2024-01-01']"))
        probe = root.environment().probe
        code = "sales.region.idxmax(), sales['day'].idxmax(), sales.units.idxmax()"
        (picked,) = alphabetical_extremes(probe, code)
        assert "`sales['region']`" in picked  # dates written as text order as dates do
    finally:
        root.close()


def test_a_result_repeating_the_thing_asked_per_is_a_doubt_by_a_real_probe(
    branches: KernelBranches,
) -> None:
    task = VerifyTask(question="How many units did each region sell?")
    root = branches.root()
    try:
        root.run(Proposal(code="sales = pd.concat([sales, sales.head(1)], ignore_index=True)"))
        v = _result(root, task, "sales[['region', 'units']]")
        assert v.score == 0.5 and "repeats `region` in 1 of its 4 rows" in v.rationale, v.rationale
        by_index = _result(root, task, "sales.set_index('region').units")
        assert by_index.score == 0.5, by_index.rationale
        near = _result(root, task, "sales.groupby('region').units.sum()")
        assert near.score == 1.0, near.rationale
        # a table per region *and* another label, by its index or by its columns: by design
        root.run(Proposal(code="sales['kind'] = ['x', 'y', 'z', 'w']"))
        two_levels = _result(root, task, "sales.groupby(['region', 'kind']).units.sum()")
        assert two_levels.score == 1.0, two_levels.rationale
        labelled = _result(root, task, "sales[['region', 'kind', 'units']]")
        assert labelled.score == 1.0, labelled.rationale
    finally:
        root.close()


def test_a_sum_of_a_text_column_and_of_an_id_score_zero_by_a_real_probe(
    branches: KernelBranches,
) -> None:
    task = VerifyTask(question="How many units were sold in total?")
    root = branches.root()
    try:
        root.run(Proposal(code="sales['store_id'] = [7, 8, 9]"))
        text = _result(root, task, "sales.region.sum()")  # 'abc': strings concatenated
        assert text.score == 0.0 and text.evidence[0].check == "meaningless_arithmetic"
        assert "holds text" in text.rationale, text.rationale
        ident = _result(root, task, "(sales.units * sales.store_id).sum()")
        assert ident.score == 0.0 and "an identifier" in ident.rationale, ident.rationale
        near = _result(root, task, "sales.units.sum()")
        assert near.score == 1.0, near.rationale
    finally:
        root.close()


def test_values_of_a_text_column_are_read_by_a_real_probe(branches: KernelBranches) -> None:
    # pandas' own string dtype (the default from pandas 3) holds text as well as object
    task = VerifyTask(question="Present the acc of England, Italy and Russia")
    root = branches.root()
    try:
        root.run(
            Proposal(
                code="teams = pd.DataFrame({'Team': ['England', 'Italy', 'Russia', 'Spain'], "
                "'acc': [1, 2, 3, 4]})"
            )
        )
        part = _result(root, task, "teams[teams.Team.isin(['England', 'Italy'])][['Team', 'acc']]")
        assert part.score == 0.5 and "the code uses 'England', 'Italy' only" in part.rationale
        none = _result(root, task, "teams[['Team', 'acc']]")
        assert none.score == 0.5 and "the value 'England' of the data" in none.rationale
        every = _result(root, task, "teams[teams.Team != 'Spain'][['Team', 'acc']]")
        assert every.score == 0.5  # Spain excluded, the three named values never written
        right = _result(
            root, task, "teams[teams.Team.isin(['England', 'Italy', 'Russia'])][['Team', 'acc']]"
        )
        assert right.score == 1.0, right.rationale
    finally:
        root.close()


def test_a_comparison_the_column_type_fixes_scores_zero_by_a_real_probe(
    branches: KernelBranches,
) -> None:
    task = VerifyTask(question="Which regions sold more than 10 units?")
    root = branches.root()
    try:
        v = _result(root, task, "sales[(sales.units > 10) & (sales.region != 1)]")
        assert v.score == 0.0 and v.evidence[0].check == "type_fixed_comparison", v.rationale
        near = _result(root, task, "sales[(sales.units > 10) & (sales.region != 'a')]")
        assert near.score == 1.0, near.rationale
    finally:
        root.close()


def test_a_mark_counting_the_other_group_is_a_doubt_by_a_real_probe(
    branches: KernelBranches,
) -> None:
    task = VerifyTask(question="Discover the Male percentage per region")
    root = branches.root()
    try:
        root.run(Proposal(code="sales['gender'] = ['M', 'F', 'M']"))
        flipped = (
            "def g(x):\n    if x != 'M':\n        return 1\n    if x != 'F':\n        return 0\n"
        )
        per = "\nsales.groupby('region').m.mean()"
        v = _result(root, task, flipped + "sales['m'] = sales.gender.apply(g)" + per)
        assert v.score == 0.5 and v.evidence[0].check == "inverted_mark", v.rationale
        assert "marks 'M' with 0 and 'F' with 1" in v.rationale, v.rationale
        by_compare = _result(root, task, "sales['m'] = (sales.gender == 'F').astype(int)" + per)
        assert by_compare.score == 0.5, by_compare.rationale
        # near misses: the mark of the asked group; a question that counts no group
        right = _result(root, task, "sales['m'] = (sales.gender == 'M').astype(int)" + per)
        assert right.score == 1.0, right.rationale
        other = VerifyTask(question="What is the mean of the mark per region?")
        unjudged = _result(root, other, "sales['m'] = (sales.gender == 'F').astype(int)" + per)
        assert unjudged.score == 1.0, unjudged.rationale
    finally:
        root.close()


def test_a_count_of_things_put_on_a_price_is_a_doubt_by_a_real_probe(
    branches: KernelBranches,
) -> None:
    task = VerifyTask(question="How many times did someone order more than one Canned Soda?")
    root = branches.root()
    try:
        root.run(
            Proposal(
                code="chipo = pd.DataFrame({'item_name': ['Canned Soda', 'Canned Soda', 'Bowl'],"
                " 'quantity': [1, 2, 3], 'item_price': [1.09, 2.18, 8.75]})"
            )
        )
        wrong = "len(chipo[(chipo.item_name == 'Canned Soda') & (chipo.item_price > 1)])"
        v = _result(root, task, wrong)
        assert v.score == 0.5 and v.evidence[0].check == "counted_fraction", v.rationale
        assert "'item_price' is not a count" in v.rationale, v.rationale
        right = "len(chipo[(chipo.item_name == 'Canned Soda') & (chipo.quantity > 1)])"
        assert _result(root, task, right).score == 1.0
        # near miss: the number counts nothing the code names
        plain = VerifyTask(question="How many rows cost more than 1?")
        assert _result(root, plain, "len(chipo[chipo.item_price > 1])").score == 1.0
    finally:
        root.close()


def test_a_comparison_against_the_question_is_an_alarm_only_where_the_data_corroborates_it(
    branches: KernelBranches,
) -> None:
    root = branches.root()
    try:
        # "more than 10" kept as `<= 10`: on the data the two readings keep 1 and 2 rows
        v = _result(root, TASK, "sales[sales['units'] <= 10].region.tolist()")
        (f,) = [e for e in v.evidence if e.check == "question_contradiction"]
        assert v.score == 0.0 and f.severity == "alarm" and f.from_question
        assert "keeps 1" in f.corroboration and "differ on 3" in f.corroboration
        # the same comparison on a name the probe cannot evaluate (a lambda's argument)
        # rests on the English alone: a doubt
        v = _result(root, TASK, "sales[sales['units'].map(lambda u: u <= 10)].region.tolist()")
        (f,) = [e for e in v.evidence if e.check == "question_contradiction"]
        assert v.score == 0.5 and f.severity == "doubt" and not f.corroboration
        # a name holding one value (a loop's last value): its two readings always differ
        # on that one value, whatever the rows hold, so they corroborate nothing
        root.run(Proposal(code="u = 5"))
        v = _result(root, TASK, "[r for r in sales.region if u <= 10]")
        (f,) = [e for e in v.evidence if e.check == "question_contradiction"]
        assert v.score == 0.5 and f.severity == "doubt" and not f.corroboration, v.rationale
    finally:
        root.close()


def test_a_threshold_on_another_column_is_corroborated_by_the_rows_each_keeps(
    branches: KernelBranches,
) -> None:
    task = VerifyTask(question="Which regions have units of more than 10?")
    root = branches.root()
    try:
        root.run(Proposal(code="sales['price'] = [20, 1, 2]"))
        v = _result(root, task, "sales[sales['price'] > 10].region.tolist()")
        found = [e for e in v.evidence if e.check == "threshold_column"]
        assert found and found[0].severity == "alarm", v.rationale
        assert "sales['units'] > 10" in found[0].corroboration
    finally:
        root.close()


def test_a_statistic_or_column_against_the_question_is_corroborated_by_the_result(
    branches: KernelBranches,
) -> None:
    root = branches.root()
    try:
        mean = VerifyTask(question="What is the mean number of units?")
        v = _result(root, mean, "sales['units'].median()")
        (f,) = [e for e in v.evidence if e.check == "question_contradiction"]
        assert v.score == 0.0 and "sales['units'].mean()" in f.corroboration, v.rationale
        # a median that equals the mean on this data: the reading changes nothing
        root.run(Proposal(code="even = pd.DataFrame({'units': [1, 2, 3]})"))
        v = _result(root, mean, "even['units'].median()")
        (f,) = [e for e in v.evidence if e.check == "question_contradiction"]
        assert v.score == 0.5 and f.severity == "doubt" and not f.corroboration
        # the units column of `sales` has as many distinct values as its regions: a doubt
        # (`test_a_result_from_another_column…`); here they differ, and the reading matters
        root.run(Proposal(code="shop = pd.DataFrame({'region': list('abc'), 'units': [5, 5, 9]})"))
        regions = VerifyTask(question="How many different regions are there?")
        v = _result(root, regions, "shop['units'].nunique()")
        (f,) = [e for e in v.evidence if e.check == "question_column"]
        assert v.score == 0.0 and "shop['region'].nunique()" in f.corroboration, v.rationale
    finally:
        root.close()


def test_one_unnamed_column_read_in_place_of_a_named_one_is_corroborated(
    branches: KernelBranches,
) -> None:
    root = branches.root()
    try:
        root.run(
            Proposal(
                code=(
                    "bank = pd.DataFrame({'region': list('aabbc'), 'balance': [1., 9., 4., 4., 2.],"
                    " 'complaints': [0, 1, 1, 0, 1], 'age': [30, 41, 52, 28, 60]})"
                )
            )
        )
        task = VerifyTask(question="Which region has the highest average balance?")
        v = _result(root, task, "bank.groupby('region')['complaints'].mean()")
        (f,) = [e for e in v.evidence if e.check == "question_column"]
        assert v.score == 0.0 and f.severity == "alarm", v.rationale
        assert "bank.groupby('region')['balance'].mean()" in f.corroboration
        # near misses: the named column; two unnamed columns read beside a named one
        assert _result(root, task, "bank.groupby('region')['balance'].mean()").score == 1.0
        two = _result(root, task, "bank.groupby('region')[['complaints', 'age']].mean()")
        (f,) = [e for e in two.evidence if e.check == "question_column"]
        assert two.score == 0.5 and f.severity == "doubt", two.rationale
        # a column named only inside a longer one is not missed
        root.run(Proposal(code="bank['balance_per_age'] = bank['balance'] / bank['age']"))
        ratio = VerifyTask(question="Which region has the highest balance-per-age ratio?")
        right = _result(root, ratio, "bank.groupby('region')['balance_per_age'].mean().idxmax()")
        assert right.score == 1.0, right.rationale
    finally:
        root.close()
