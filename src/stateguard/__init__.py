"""stateguard: keep multi-turn LLM data-analysis agents from reusing stale results."""

__version__ = "0.1.0"
