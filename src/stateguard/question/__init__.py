"""The only place that reads a question's English.

`QuestionSpec.parse(text, context)` reads what the question states (rounding, thresholds
and which rows they keep, the statistic, named values and years, join intent, stated
revisions). The modules beside it read one concept each, for the rules that need more
than the spec:

- `stems`: the stemmed words of a question or a column name;
- `columns`: the columns of the data a question names, and the column a threshold is
  about;
- `things`: the one thing a value is asked per, the groups a share or count is of, the
  things a threshold counts, the things counted by a total of theirs;
- `values`: where a question writes a given value, and whether it excludes it there;
- `aggregates`: the wordings of a statistic, an extreme, an order or a square;
- `conditions`: where a question asks for the rows that meet a condition;
- `joins`: which rows a join should keep, read broadly;
- `fields`: the fields of an answer a question names;
- `answer_form`: the form a question asks its answer in (a template of labelled fields,
  or one number, count or month);
- `paths`: the file paths a question writes in its prose;
- `content`: the content words of a question, for what else speaks of the same;
- `revisions`: the revision statements of a turn's text, with what they say as written
  (a reading of its own, not `QuestionSpec.revisions`');
- `sentences`: the sentences of a text, and the first sentence of a question;
- `definitions`: the quantities a task's text defines ("the payout of an order is …"),
  which of them a question asks for, and the sentences that speak of each.

The rest of the package asks these instead of matching the wording itself. A field the
English does not state unambiguously is "not stated".
"""

from stateguard.question.aggregates import AggregateWords, aggregate_words
from stateguard.question.amounts import FlatAmount, flat_amounts
from stateguard.question.answer_form import AnswerForm, AnswerKind, FormField, answer_form
from stateguard.question.columns import (
    GENERIC,
    Subject,
    described_columns,
    is_generic,
    named_columns,
    noun_named_columns,
    quoted_columns,
    speaks_of_columns,
    speaks_of_ids,
    threshold_subjects,
)
from stateguard.question.conditions import row_condition
from stateguard.question.content import content_words
from stateguard.question.definitions import (
    Definition,
    asked_terms,
    defined_terms,
    sentences_about,
    term_parameters,
)
from stateguard.question.fields import field_tokens, named_fields
from stateguard.question.joins import RowsAsked, rows_asked
from stateguard.question.parameters import Parameter, stated_parameters
from stateguard.question.paths import backticked, bare_paths, names_file
from stateguard.question.revisions import RevisionStatement, revision_statements
from stateguard.question.sentences import first_sentence, sentences
from stateguard.question.spec import (
    THRESHOLD,
    QuestionSpec,
    Revision,
    Threshold,
    decimals,
    kept_years,
    number,
    quoted_values,
    threshold_spans,
)
from stateguard.question.stems import stem, word_spans, words
from stateguard.question.things import (
    TotalThreshold,
    asked_entity,
    asked_groups,
    counted_by_total,
    counted_things,
)
from stateguard.question.values import Mention, names_number, value_mentions

__all__ = [
    "GENERIC",
    "THRESHOLD",
    "AggregateWords",
    "AnswerForm",
    "AnswerKind",
    "Definition",
    "FlatAmount",
    "FormField",
    "Mention",
    "Parameter",
    "QuestionSpec",
    "Revision",
    "RevisionStatement",
    "RowsAsked",
    "Subject",
    "Threshold",
    "TotalThreshold",
    "aggregate_words",
    "answer_form",
    "asked_entity",
    "asked_groups",
    "asked_terms",
    "backticked",
    "bare_paths",
    "content_words",
    "counted_by_total",
    "counted_things",
    "decimals",
    "defined_terms",
    "described_columns",
    "field_tokens",
    "first_sentence",
    "flat_amounts",
    "is_generic",
    "kept_years",
    "named_columns",
    "named_fields",
    "names_file",
    "names_number",
    "noun_named_columns",
    "number",
    "quoted_columns",
    "quoted_values",
    "revision_statements",
    "row_condition",
    "rows_asked",
    "sentences",
    "sentences_about",
    "speaks_of_columns",
    "speaks_of_ids",
    "stated_parameters",
    "stem",
    "term_parameters",
    "threshold_spans",
    "threshold_subjects",
    "value_mentions",
    "word_spans",
    "words",
]
