"""A Hub id without network fails within about 2 s (issue 30): one short probe of the endpoint, then the cache.

The endpoint is a closed port on this machine (HF_ENDPOINT), so no test depends on the network being absent."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from colint.loading import hub

from tests.engine.test_sources import LLAMA, make_cache


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed when the block ends: connecting to it is refused


def _env(tmp_path: Path, endpoint: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env.update(HF_HOME=str(tmp_path / "hf"), HF_ENDPOINT=endpoint)
    return env


def test_an_unreachable_hub_fails_fast_with_the_clear_message(tmp_path):
    port = _closed_port()
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "colint", "check", "org/model", "--isolated"],
        capture_output=True,
        text=True,
        env=_env(tmp_path, f"http://127.0.0.1:{port}"),
        cwd=tmp_path,
        timeout=60,
    )
    elapsed_s = time.monotonic() - start
    assert proc.returncode == 2
    assert proc.stderr == (
        "org/model: error: cannot reach the Hugging Face Hub and config.json or params.json is not in the cache "
        f"({tmp_path / 'hf' / 'hub'})\n"
    )
    assert elapsed_s < 5  # huggingface_hub's five retries alone took 24 s before the probe


def test_an_unreachable_hub_still_reads_the_cache(tmp_path):
    cache = tmp_path / "hf" / "hub"
    cache.mkdir(parents=True)
    snap = make_cache(cache, "meta-llama/Llama-2-7b-hf", {"config.json": LLAMA.read_text()})
    proc = subprocess.run(
        [sys.executable, "-m", "colint", "inspect", "meta-llama/Llama-2-7b-hf", "--format", "json"],
        capture_output=True,
        text=True,
        env=_env(tmp_path, f"http://127.0.0.1:{_closed_port()}"),
        cwd=tmp_path,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert f'"path": "{snap / "config.json"}"' in proc.stdout
    assert '"total": 6738415616' in proc.stdout


def test_the_probe_goes_through_the_proxy_the_environment_names(monkeypatch):
    monkeypatch.setenv("https_proxy", "http://proxy.example:3128")
    monkeypatch.setenv("no_proxy", "")
    assert hub._probe_target("https://huggingface.co") == ("proxy.example", 3128)
    monkeypatch.delenv("https_proxy")
    monkeypatch.delenv("HTTPS_PROXY", raising=False)
    assert hub._probe_target("https://huggingface.co") == ("huggingface.co", 443)
    assert hub._probe_target("http://127.0.0.1:8080/") == ("127.0.0.1", 8080)
    assert hub._probe_target("not a url") is None


def test_a_listening_endpoint_is_reachable_and_a_closed_one_is_not():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        assert hub._reachable_at("127.0.0.1", server.getsockname()[1], 1.5) is True
    assert hub._reachable_at("127.0.0.1", _closed_port(), 1.5) is False
