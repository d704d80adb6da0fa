"""Manager policies: deterministic, LLM, hybrid, and ablations for benchmarks."""
