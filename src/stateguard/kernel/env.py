"""Keep secrets out of the kernel and out of what we write.

The kernel gets an allowlisted environment (`allowed_environment`): locale, time
zone, search paths and thread-count knobs, never API keys or tokens. Secret values
still known to this process (secret-named environment variables and values handed
to `register_secret`, e.g. the configured API key) are replaced by ``[redacted]`` in
every record we write (`scrub`), in case they reached the model or the kernel's
output some other way.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Mapping

ALLOWED_ENV = frozenset(
    {
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TERM",
        "PYTHONPATH",
        "PYTHONHASHSEED",
        "PYTHONIOENCODING",
        "PYTHONUTF8",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONWARNINGS",
        "MPLBACKEND",
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
        "NUMEXPR_MAX_THREADS",
        "MALLOC_ARENA_MAX",
        "SOURCE_DATE_EPOCH",
    }
)
"""Host environment variables the kernel inherits (plus every ``LC_*``)."""

_ALLOWED_PREFIXES = ("LC_",)
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION", re.I)
# Shorter values are too likely to occur by chance ("1", "true", a port number).
_MIN_SECRET_LEN = 8
REDACTED = "[redacted]"

_lock = threading.Lock()
_registered: set[str] = set()


def allowed_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allowlisted part of `environ` (default: this process's environment)."""
    source = os.environ if environ is None else environ
    return {
        name: value
        for name, value in source.items()
        if name in ALLOWED_ENV or name.startswith(_ALLOWED_PREFIXES)
    }


def register_secret(value: str | None) -> None:
    """Remember `value` as a secret that `scrub` removes (ignored if short or empty)."""
    if value and len(value) >= _MIN_SECRET_LEN:
        with _lock:
            _registered.add(value)


def known_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """Registered secrets and values of secret-named variables, longest first."""
    source = os.environ if environ is None else environ
    found = {
        value
        for name, value in source.items()
        if _SECRET_NAME.search(name) and len(value) >= _MIN_SECRET_LEN
    }
    with _lock:
        found |= _registered
    return sorted(found, key=len, reverse=True)


def scrub(text: str, secrets: list[str] | None = None) -> str:
    """`text` with every known secret (also in its JSON-escaped form) redacted."""
    for secret in known_secrets() if secrets is None else secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
        escaped = json.dumps(secret)[1:-1]
        if escaped != secret and escaped in text:
            text = text.replace(escaped, REDACTED)
    return text
