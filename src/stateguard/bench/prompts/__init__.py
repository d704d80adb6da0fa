"""Prompt files of the benchmark package (package data, read with importlib.resources)."""
