"""Secret probes: API keys stay out of the kernel and out of what we write."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from security_probes import run
from typer.testing import CliRunner

from stateguard.cli.main import app
from stateguard.kernel import KernelSession
from stateguard.kernel.env import REDACTED, allowed_environment, register_secret, scrub

pytestmark = pytest.mark.kernel

FAKE_KEY = "sk-test-0123456789abcdef-not-a-real-key"


def test_api_keys_in_the_host_environment_do_not_reach_the_kernel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("STATEGUARD_API_KEY", FAKE_KEY + "-2")
    monkeypatch.setenv("SOME_SERVICE_TOKEN", FAKE_KEY + "-3")
    with KernelSession() as session:
        res = run(
            session,
            "import os\n"
            "names = sorted(os.environ)\n"
            f"leaked = [n for n, v in os.environ.items() if {FAKE_KEY!r} in v]\n"
            "names, leaked",
        )
    names, leaked = eval(res.result or "None")
    assert leaked == []
    assert not {"OPENAI_API_KEY", "STATEGUARD_API_KEY", "SOME_SERVICE_TOKEN"} & set(names)


def test_allowlist_keeps_locale_and_paths_only() -> None:
    env = allowed_environment(
        {"PATH": "/bin", "LC_ALL": "C", "OPENAI_API_KEY": "x", "AWS_SECRET_ACCESS_KEY": "y"}
    )
    assert env == {"PATH": "/bin", "LC_ALL": "C"}


_HOST_SCRIPT = """
import sys
from stateguard.kernel import KernelSession
with KernelSession() as s:
    res = s.execute(
        "import os\\n"
        "hits = []\\n"
        "for pid in os.listdir('/proc'):\\n"
        "    if not pid.isdigit():\\n"
        "        continue\\n"
        "    for name in ('cmdline', 'environ'):\\n"
        "        try:\\n"
        "            blob = open(f'/proc/{pid}/{name}', 'rb').read()\\n"
        "        except OSError:\\n"
        "            continue\\n"
        "        if KEY.encode() in blob:\\n"
        "            hits.append((pid, name))\\n"
        "hits, os.getppid() == int(PPID)".replace("KEY", repr(sys.argv[2])).replace(
            "PPID", repr(str(__import__("os").getpid())))
    )
    print(s.confinement.confined, res.result, res.error)
"""


def test_a_key_in_the_hosts_argv_is_not_readable_through_proc(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _HOST_SCRIPT, "--api-key", FAKE_KEY],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    confined, rest = proc.stdout.strip().split(" ", 1)
    if confined != "True":
        # Unconfined, the host's /proc entry is the kernel's parent: reported as such.
        assert "True" in rest
        pytest.skip("kernel is unconfined; /proc/<ppid>/cmdline is the host's")
    assert rest.startswith("([], False)"), rest


def test_the_cli_refuses_an_api_key_on_the_command_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", str(tmp_path), "--api-key", FAKE_KEY])
    assert result.exit_code == 2
    assert "STATEGUARD_API_KEY" in result.output
    assert FAKE_KEY not in result.output


def test_scrub_redacts_registered_and_environment_secrets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MY_SERVICE_PASSWORD", "hunter2-but-longer")
    register_secret('quoted"key\\value-123')
    text = json.dumps({"out": 'pw hunter2-but-longer and quoted"key\\value-123'})
    cleaned = scrub(text)
    assert "hunter2" not in cleaned and "quoted" not in cleaned
    assert json.loads(cleaned) == {"out": f"pw {REDACTED} and {REDACTED}"}
    assert scrub("short 1234") == "short 1234"
