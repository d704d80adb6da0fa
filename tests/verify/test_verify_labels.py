"""Rows built in a loop whose value ignores or complements its label: found, near misses not."""

from __future__ import annotations

import pytest
from steps import ok

from stateguard.verify import StepVerifier, VerifyTask
from stateguard.verify.labels import complemented_labels, unused_labels

TABLE = (
    "pd.DataFrame([{{'Gender': g, 'Job Title': j, 'Median Salary': {value}}}"
    " for g in popular for j in popular[g]]).set_index(['Gender', 'Job Title'])"
)
REFERENCE = TABLE.format(value="s[(s['Gender'] == g) & (s['Job Title'] == j)]['Salary'].median()")


@pytest.mark.parametrize(
    ("code", "labels"),
    [
        (TABLE.format(value="s['Salary'].median()"), ["`g`", "`j`"]),
        (TABLE.format(value="s[s['Gender'] == g]['Salary'].median()"), ["`j`"]),
        ("{c: df['x'].mean() for c in cols}", ["`c`"]),
        ("[(y, len(df)) for y in years if y > 2000]", ["`y`"]),
        ("[(y, df.v.sum()) for y in years]", ["`y`"]),
    ],
)
def test_a_label_no_statistic_of_its_row_reads_is_found(code: str, labels: list[str]) -> None:
    found = unused_labels(code)
    assert len(found) == len(labels)
    for msg, label in zip(found, labels, strict=True):
        assert f"labelled by {label}" in msg and "the same for every" in msg


@pytest.mark.parametrize(
    "code",
    [
        REFERENCE,
        "{c: df[c].mean() for c in cols}",
        "{k: len(v) for k, v in groups.items()}",  # bound together
        "[(i, row['x'] * 2, len(row)) for i, row in df.iterrows()]",
        # read through a later loop over something the label picks
        "[(y, part.v.sum()) for y in years for part in [df[df.year == y]]]",
        "{k: set() for k in keys}",  # an empty value set up per label: no statistic
        "{c: pd.Series(dtype=float) for c in cols}",
        "{v: rng.integers(0, len(df)) for v in nodes}",  # a draw per label
        "[df[c].mean() for c in cols]",  # no label
        "[(c, 'x') for c in cols]",  # no statistic
        "[(c, df.x.mean(",  # does not parse
    ],
)
def test_rows_whose_statistic_reads_their_label_are_not_found(code: str) -> None:
    assert unused_labels(code) == []
    assert complemented_labels(code) == []


def test_a_row_computed_from_every_row_but_its_label_is_found() -> None:
    (msg,) = complemented_labels(TABLE.format(value="s[s['Gender'] != g]['Salary'].median()"))
    assert "labelled `g`" in msg and "s['Gender'] != g" in msg
    # the label compared with another column, still never kept in
    assert complemented_labels(
        TABLE.format(value="s[(s['Job Title'] != g) & (s['Job Title'] == j)]['Salary'].median()")
    )
    assert complemented_labels("[(g, df[df.g != g].v.mean()) for g in gs]")


@pytest.mark.parametrize(
    "code",
    [
        # each group against the others, beside the group itself
        "[(g, df[df.g != g].v.mean(), df[df.g == g].v.mean()) for g in gs]",
        "[(g, df[df.g.isin([g])].v.mean(), df[df.h != g].v.sum()) for g in gs]",
        # the label against another loop variable, not a column
        "{u: len([w for w in nbrs[u] if w != u]) for u in nodes}",
    ],
)
def test_a_complement_beside_the_label_or_of_loop_variables_is_not_found(code: str) -> None:
    assert complemented_labels(code) == []


def test_the_verifier_doubts_such_a_row_and_keeps_the_reference() -> None:
    task = VerifyTask(question="What is the median salary per gender and job title?")
    verifier = StepVerifier("deterministic")

    def verdict(code: str):
        step = ok(code, result="Median Salary …").model_copy(update={"result": True})
        return verifier.verify(task, [step])

    assert verdict(REFERENCE).score == 1.0
    unused = verdict(TABLE.format(value="s[s['Gender'] == g]['Salary'].median()"))
    assert unused.score == 0.5 and unused.evidence[0].check == "unused_label", unused.rationale
    flipped = verdict(
        TABLE.format(value="s[(s['Gender'] != g) & (s['Job Title'] == j)]['Salary'].median()")
    )
    assert flipped.score == 0.5, flipped.rationale
    assert flipped.evidence[0].check == "complemented_label"
