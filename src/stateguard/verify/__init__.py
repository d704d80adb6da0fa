"""Step verification with ternary rewards, and test-time search with it.

`StepVerifier` scores one step (`stateguard.checks.Step`) of a data-analysis trajectory
in {0, 0.5, 1} (or *invalid*, with the reason) from the task, the steps so far and live
access to the environment after the step through fork probes of the kernel. The
deterministic layer (`rules`) decides where execution, lineage and the audit are
decisive; the LLM layer (`llm_layer`) judges the rest. `stateguard.verify.search` runs Best-of-N,
beam search and DVTS over candidate steps with these scores; a `ChainedVerifier`
(``deterministic>hybrid``) ranks by one verifier and breaks its ties with another.
"""

from stateguard.verify.chain import CHAIN, ChainedVerifier, build_verifier
from stateguard.verify.environment import Environment, ProbeEnvironment
from stateguard.verify.errors import SearchError, VerifyError
from stateguard.verify.llm_layer import LLMLayer
from stateguard.verify.models import SCORES, InvalidReason, Score, StepVerdict, VerifyTask
from stateguard.verify.parsing import VerifierReply, parse_verifier_reply
from stateguard.verify.verifier import VERIFIER_MODES, StepVerifier, Verifier, VerifierMode

__all__ = [
    "CHAIN",
    "SCORES",
    "VERIFIER_MODES",
    "ChainedVerifier",
    "Environment",
    "InvalidReason",
    "LLMLayer",
    "ProbeEnvironment",
    "Score",
    "SearchError",
    "StepVerdict",
    "StepVerifier",
    "Verifier",
    "VerifierMode",
    "VerifierReply",
    "VerifyError",
    "VerifyTask",
    "build_verifier",
    "parse_verifier_reply",
]
