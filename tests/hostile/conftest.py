"""The alarm the hostile-input cases run under (``pytestmark = pytest.mark.usefixtures("no_hang")``)."""

from __future__ import annotations

import signal

import pytest


@pytest.fixture
def no_hang():
    """A hostile case that hangs fails after 30 s instead of blocking the suite (a safety net, not a timing)."""
    if not hasattr(signal, "setitimer"):
        yield
        return

    def expired(signum, frame):
        raise AssertionError("a hostile input was not answered within 30 s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, 30)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
