"""The `stateguard` command line (typer + rich). Each command parses, builds, calls, renders."""
