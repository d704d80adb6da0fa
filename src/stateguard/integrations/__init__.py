"""Adapters that guard agents built with other frameworks, keeping their own loop.

`stateguard.integrations.smolagents`: a `PythonExecutor` for smolagents' `CodeAgent`
(the ``smolagents`` extra). Each adapter imports its framework only when imported.
"""
