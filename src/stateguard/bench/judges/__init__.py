"""Deterministic judges (LongDS fields, DSEval validators, InfiAgent sub-answers) and an
optional LLM judge for free text. Every judge returns a `Judgement`."""

from stateguard.bench.judges.base import Judgement
from stateguard.bench.judges.dseval import (
    DsevalObservation,
    judge_dseval,
    normalize_validator,
)
from stateguard.bench.judges.infiagent import (
    judge_infiagent,
    parse_infiagent_answer,
    sub_answer_equal,
)
from stateguard.bench.judges.llm import LLMJudge, parse_verdict
from stateguard.bench.judges.longds import (
    judge_longds,
    judge_longds_turn,
    normalize_text,
    parse_number,
    tolerance_is_relative,
)
from stateguard.bench.judges.matching import MatchResult, compare_objects

__all__ = [
    "DsevalObservation",
    "Judgement",
    "LLMJudge",
    "MatchResult",
    "compare_objects",
    "judge_dseval",
    "judge_infiagent",
    "judge_longds",
    "judge_longds_turn",
    "normalize_text",
    "normalize_validator",
    "parse_infiagent_answer",
    "parse_number",
    "parse_verdict",
    "sub_answer_equal",
    "tolerance_is_relative",
]
