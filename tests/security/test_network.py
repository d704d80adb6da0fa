"""Network probes: the kernel reaches neither the host's services nor DNS."""

from __future__ import annotations

import errno
import socket
from collections.abc import Iterator

import pytest
from security_probes import require_confined, run

from stateguard.kernel import KernelSession

pytestmark = pytest.mark.kernel


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A TCP server on the host's loopback that records whether anyone connected."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(0.5)
    yield server
    server.close()


def _accepted(server: socket.socket) -> bool:
    try:
        conn, _ = server.accept()
    except TimeoutError:
        return False
    conn.close()
    return True


def test_tcp_to_a_host_service_on_loopback_fails(
    session: KernelSession, listener: socket.socket
) -> None:
    require_confined(session)
    port = listener.getsockname()[1]
    res = run(
        session,
        "import socket\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
        "    outcome = 'connected'\n"
        "except OSError as exc:\n"
        "    outcome = type(exc).__name__\n"
        "outcome",
    )
    assert res.result == "'ConnectionRefusedError'"
    assert not _accepted(listener)


def test_only_loopback_exists_and_outside_addresses_are_unreachable(
    session: KernelSession,
) -> None:
    require_confined(session)
    res = run(
        session,
        "import socket\n"
        "names = [n for _, n in socket.if_nameindex()]\n"
        "try:\n"
        "    socket.create_connection(('10.0.0.1', 80), timeout=3)\n"
        "    outside = 'connected'\n"
        "except OSError as exc:\n"
        "    outside = exc.errno\n"
        "names, outside",
    )
    assert res.result == f"(['lo'], {errno.ENETUNREACH})"


def test_dns_resolution_fails(session: KernelSession) -> None:
    require_confined(session)
    res = run(
        session,
        "import socket\n"
        "try:\n"
        "    socket.getaddrinfo('example.com', 443)\n"
        "    outcome = 'resolved'\n"
        "except socket.gaierror:\n"
        "    outcome = 'gaierror'\n"
        "outcome, open('/etc/resolv.conf').read() if __import__('os').path.exists("
        "'/etc/resolv.conf') else None",
    )
    assert res.result == "('gaierror', None)"


def test_a_listening_socket_is_not_reachable_from_the_host(session: KernelSession) -> None:
    require_confined(session)
    res = run(
        session,
        "import socket\n"
        "srv = socket.socket()\n"
        "srv.bind(('127.0.0.1', 0))\n"
        "srv.listen()\n"
        "srv.getsockname()[1]",
    )
    port = int(res.result or "0")
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    run(session, "srv.close()")
