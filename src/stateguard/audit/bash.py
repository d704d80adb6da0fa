"""The `Bash` operator's guard: read-only inspection commands only, inside the lake.

A command is a pipeline of allowed programs (``ls``, ``head``, ``wc``, ``grep``…)
joined by ``|``. It is parsed with `shlex` and run without a shell, so
redirections, command substitution, ``;``, ``&&`` and globbing by a shell cannot
happen. Anything else — a program not on the list, an option that writes or
executes (``find -delete``, ``sort -o``), a path that leaves the lake — is refused
with `OperatorRefused` naming the offending word.
"""

from __future__ import annotations

import glob
import shlex
import subprocess
from pathlib import Path

from stateguard.audit.errors import OperatorRefused
from stateguard.audit.observations import BashObservation

ALLOWED = frozenset(
    {
        "ls",
        "head",
        "tail",
        "wc",
        "file",
        "grep",
        "egrep",
        "cat",
        "find",
        "du",
        "stat",
        "sort",
        "uniq",
        "cut",
        "tr",
        "nl",
        "column",
        "basename",
        "dirname",
        "realpath",
        "tree",
        "awk",
    }
)
"""Programs that only read (with `FORBIDDEN_OPTIONS` refused)."""

FORBIDDEN_OPTIONS = {
    "find": {
        "-delete",
        "-exec",
        "-execdir",
        "-ok",
        "-okdir",
        "-fprint",
        "-fprint0",
        "-fprintf",
        "-fls",
    },
    "sort": {"-o", "--output"},
    "awk": {"system", ">", "|", "getline"},
}
FORBIDDEN_CHARS = (";", "&", ">", "<", "`", "$(", "\n")
MAX_OUTPUT = 20_000
TIMEOUT = 10.0


def check_command(command: str, root: Path) -> list[list[str]]:
    """The pipeline's argument vectors; `OperatorRefused` if anything could write or escape."""
    for ch in FORBIDDEN_CHARS:
        if ch in command:
            raise OperatorRefused(f"bash: {ch!r} is not allowed (read-only inspection only)")
    stages = [s.strip() for s in command.split("|")]
    if not command.strip() or any(not s for s in stages):
        raise OperatorRefused("bash: empty command or pipeline stage")
    base = root.resolve()
    argvs = []
    for stage in stages:
        argv = shlex.split(stage)
        prog = argv[0]
        if prog not in ALLOWED:
            raise OperatorRefused(
                f"bash: {prog!r} is not a read-only inspection command; allowed: "
                f"{', '.join(sorted(ALLOWED))}"
            )
        for word in argv[1:]:
            bad = FORBIDDEN_OPTIONS.get(prog, set())
            if word in bad or (prog == "awk" and any(b in word for b in bad)):
                raise OperatorRefused(f"bash: {prog} {word!r} can write or execute")
            if not word.startswith("-"):
                target = (base / word).resolve()
                if not target.is_relative_to(base) and (
                    word.startswith(("/", "..", "~")) or "/../" in word
                ):
                    raise OperatorRefused(f"bash: {word!r} is outside the data lake")
        argvs.append(_expand(argv, base))
    return argvs


def _expand(argv: list[str], base: Path) -> list[str]:
    """Expand ``*``/``?`` patterns relative to the lake (a shell would have)."""
    out = [argv[0]]
    for word in argv[1:]:
        if any(ch in word for ch in "*?[") and not word.startswith("-"):
            matches = sorted(glob.glob(word, root_dir=base))
            out.extend(matches or [word])
        else:
            out.append(word)
    return out


def run_readonly(command: str, root: Path) -> BashObservation:
    """Run an allowed pipeline in `root` and capture its output and exit status."""
    argvs = check_command(command, root)
    procs: list[subprocess.Popen[bytes]] = []
    prev = None
    try:
        for argv in argvs:
            p = subprocess.Popen(
                argv,
                cwd=root,
                stdin=prev if prev is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
            if prev is not None:
                prev.close()
            prev = p.stdout
            procs.append(p)
        out, _ = procs[-1].communicate(timeout=TIMEOUT)
        for p in procs[:-1]:
            p.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()
        return BashObservation(exit_status=124, output=f"timed out after {TIMEOUT:.0f}s")
    text = out.decode("utf-8", errors="replace")
    return BashObservation(
        exit_status=procs[-1].returncode,
        output=text[:MAX_OUTPUT],
        truncated=len(text) > MAX_OUTPUT,
    )
