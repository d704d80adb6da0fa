"""A fixed split of benchmark sessions into ``dev`` and ``validation``.

Rules, prompts and thresholds are tuned on ``dev`` only; ``validation`` is scored beside it
and never read while tuning. The split is by session (every step of a session falls on the
same side, so a rule cannot learn a session's data from its other turns) and does not
depend on which suites are run together, on their order or on a random state: a session
falls on the side given by the SHA-256 of its id, salted with `SALT`. Changing the salt
makes a new split; it is never changed to move a session.
"""

from __future__ import annotations

import hashlib
from typing import Literal

Split = Literal["dev", "validation"]
SplitChoice = Literal["all", "dev", "validation"]
SPLITS: tuple[Split, ...] = ("dev", "validation")
SALT = "stateguard-split-v1"


def split_of(session: str) -> Split:
    """The side `session` (a session id, e.g. ``dseval-bank-customer-churn``) falls on."""
    digest = hashlib.sha256(f"{SALT}:{session}".encode()).digest()
    return "dev" if digest[0] % 2 == 0 else "validation"


def in_split(session: str, choice: SplitChoice) -> bool:
    """Whether `session` belongs to `choice` (``all`` holds every session)."""
    return choice == "all" or split_of(session) == choice
