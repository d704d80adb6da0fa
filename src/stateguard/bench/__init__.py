"""Benchmarks: task models, suite loaders, deterministic judges, metrics and paired bootstrap.

Everything in this package is pure (no kernel): loaders turn benchmark files into
`BenchTask` values, judges turn (gold, prediction) pairs into `Judgement` values, and
`metrics` / `bootstrap` turn per-turn records into numbers.
"""

from stateguard.bench.tasks import BenchTask, BenchTurn, Suite

__all__ = ["BenchTask", "BenchTurn", "Suite"]
