"""Hugging Face Hub ids and cache folders → the path of a config file in the local HF cache.

Only the files in :data:`HUB_FILES` are ever requested, one at a time with ``hf_hub_download``: never
weights, tokenizers or code. huggingface_hub itself honours ``HF_HUB_OFFLINE``, ``HF_TOKEN``,
``HF_HOME`` / ``HF_HUB_CACHE`` and the cache (a cached file is used without a request when offline
or when its revision is a commit hash). One short probe of the endpoint (:data:`PROBE_TIMEOUT_S`) comes first: a Hub
that cannot be reached means the cache alone, so a Hub id without network fails within about 2 s. Every failure is a :class:`HubError` naming the id and the
reason. huggingface_hub is imported only here, only when a Hub id or a cache folder is named (it is
a dependency of transformers, so nothing new is installed).
"""

from __future__ import annotations

import functools
import os
import re

from colint.errors import LoadError

# What a model repository's architecture is read from, in order: a Hugging Face config.json, else
# Mistral/Meta's native params.json. generation_config.json holds sampling defaults (nothing the
# rules read), so it is not fetched.
HUB_FILES = ("config.json", "params.json")

# huggingface_hub's rules for a repo id: "name" or "namespace/name", letters, digits, "-", "_", ".";
# no "--" or ".." (hf's own cache folder names use "--" for "/"), at most 96 characters.
_REPO_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9_])?"
REPO_ID = re.compile(rf"(?P<repo>{_REPO_PART}/{_REPO_PART})(?:@(?P<revision>[^\s@]+))?")


class HubError(LoadError):
    """A Hub id or a cache folder could not give a config file (named in the message)."""


def parse_hub_id(text: str) -> tuple[str, str | None] | None:
    """``(repo_id, revision)`` when ``text`` has the shape ``org/name[@revision]``, else None."""
    m = REPO_ID.fullmatch(text)
    if m is None or "--" in m["repo"] or ".." in m["repo"] or len(m["repo"]) > 96:
        return None
    return m["repo"], m["revision"]


def _offline() -> bool:
    from huggingface_hub import constants

    is_offline = getattr(constants, "is_offline_mode", None)
    return bool(is_offline() if is_offline is not None else constants.HF_HUB_OFFLINE)


# How long the one probe of the Hub endpoint may take before colint reads the cache only: a Hub id without network
# fails within about 2 s (issue 30) instead of huggingface_hub's five retries (24 s measured here).
PROBE_TIMEOUT_S = 1.5


def _probe_target(endpoint: str) -> tuple[str, int] | None:
    """(host, port) that a request to ``endpoint`` connects to first: the proxy the environment names for it, else
    the endpoint's own host and port; None when the endpoint is no URL colint can tell."""
    from urllib.parse import urlsplit
    from urllib.request import getproxies, proxy_bypass

    url = urlsplit(endpoint)
    if not url.hostname or url.scheme not in ("http", "https"):
        return None
    proxy = getproxies().get(url.scheme)
    if proxy and not proxy_bypass(url.hostname):
        p = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        if p.hostname:
            return p.hostname, p.port or (443 if p.scheme == "https" else 80)
    try:
        port = url.port or (443 if url.scheme == "https" else 80)
    except ValueError:  # a port out of range: let huggingface_hub say what is wrong with it
        return None
    return url.hostname, port


@functools.lru_cache(maxsize=8)
def _reachable_at(host: str, port: int, timeout_s: float) -> bool:
    """Whether a TCP connection to ``host:port`` opens within ``timeout_s`` (name resolution included: the probe
    runs in a daemon thread that is abandoned at the deadline). Once per process and endpoint."""
    import socket
    import threading

    opened: list[bool] = []

    def probe() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout_s):
                opened.append(True)
        except OSError:
            opened.append(False)

    t = threading.Thread(target=probe, name="colint-hub-probe", daemon=True)
    t.start()
    t.join(timeout_s)
    return bool(opened and opened[0])


def _reachable() -> bool:
    """Whether the Hub endpoint (``HF_ENDPOINT`` or huggingface.co, through the environment's proxy) answers a
    connection within :data:`PROBE_TIMEOUT_S`; an endpoint colint cannot parse counts as reachable."""
    from huggingface_hub import constants

    target = _probe_target(str(constants.ENDPOINT))
    return True if target is None else _reachable_at(*target, PROBE_TIMEOUT_S)


def _cache_dir() -> str:
    from huggingface_hub import constants

    return str(constants.HF_HUB_CACHE)


def fetch(repo_id: str, revision: str | None = None) -> str:
    """Path (in the HF cache) of the first of :data:`HUB_FILES` that ``repo_id`` has at ``revision``.

    Raises :class:`HubError` naming ``repo_id`` and why: not found, gated, revision unknown, offline
    and not cached, no config file in the repository, or the request failed."""
    try:
        from huggingface_hub import hf_hub_download
        from huggingface_hub import errors as hf_errors
        from huggingface_hub.utils import disable_progress_bars
    except ImportError as exc:  # pragma: no cover - transformers depends on huggingface_hub
        raise HubError(
            f"reading a Hub id needs huggingface_hub ({exc}): pip install huggingface_hub",
            path=_label(repo_id, revision),
        ) from None
    disable_progress_bars()  # a 2 kB config needs no progress bar on stderr
    label = _label(repo_id, revision)
    at = f" at revision {revision!r}" if revision else ""
    not_cached: list[str] = []
    # one short probe first: an unreachable Hub means the cache alone (huggingface_hub's own retries take 24 s)
    cache_only = not _offline() and not _reachable()
    for filename in HUB_FILES:
        try:
            # once the Hub could not be reached, the other files are looked up in the cache only (no second
            # round of huggingface_hub's connection retries)
            return hf_hub_download(
                repo_id, filename, revision=revision, local_files_only=cache_only or bool(not_cached)
            )
        except hf_errors.GatedRepoError:
            raise HubError(
                f"gated repository: request access on https://huggingface.co/{repo_id} and set HF_TOKEN "
                "(or run `hf auth login`) with a token of that account",
                path=label,
            ) from None
        except hf_errors.RepositoryNotFoundError:
            raise HubError(
                "repository not found on the Hugging Face Hub (a private one needs HF_TOKEN); "
                "a local path of that name does not exist either",
                path=label,
            ) from None
        except hf_errors.RevisionNotFoundError:
            raise HubError(f"revision {revision!r} not found in the repository", path=label) from None
        except hf_errors.LocalEntryNotFoundError:  # offline, or no connection, and not in the cache
            not_cached.append(filename)
        except hf_errors.EntryNotFoundError:  # the repository has no such file: try the next one
            continue
        except hf_errors.HFValidationError as exc:
            raise HubError(f"not a valid Hub repository id: {_first_line(exc)}", path=label) from None
        except hf_errors.HfHubHTTPError as exc:
            raise HubError(f"Hugging Face Hub request failed: {_first_line(exc)}", path=label) from None
        except OSError as exc:
            raise HubError(f"cannot fetch {filename}: {_first_line(exc)}", path=label) from None
    if not_cached:
        names = " or ".join(not_cached)
        if _offline():
            raise HubError(
                f"HF_HUB_OFFLINE is set and {names}{at} is not in the Hugging Face cache "
                f"({_cache_dir()}); run once online, or unset HF_HUB_OFFLINE",
                path=label,
            )
        raise HubError(
            f"cannot reach the Hugging Face Hub and {names}{at} is not in the cache ({_cache_dir()})", path=label
        )
    raise HubError(f"the repository has no {' or '.join(HUB_FILES)}{at}: not a model colint can read", path=label)


def _label(repo_id: str, revision: str | None) -> str:
    return repo_id + (f"@{revision}" if revision else "")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# ------------------------------------------------------------------ cache folders


def cache_folder(path: str) -> tuple[str, str, str | None] | None:
    """``(cache_root, repo_id, revision)`` when ``path`` is a model folder of a Hugging Face cache
    (``<root>/models--org--name``) or one of its snapshots (``.../snapshots/<commit>``), else None."""
    parts = os.path.normpath(os.path.abspath(path)).split(os.sep)
    if len(parts) >= 3 and parts[-2] == "snapshots" and parts[-3].startswith("models--"):
        root, folder, revision = os.sep.join(parts[:-3]) or os.sep, parts[-3], parts[-1]
    elif parts[-1].startswith("models--") and os.path.isdir(os.path.join(path, "snapshots")):
        root, folder, revision = os.sep.join(parts[:-1]) or os.sep, parts[-1], None
    else:
        return None
    repo_id = "/".join(folder.split("--")[1:])
    return (root, repo_id, revision) if repo_id else None


def cached_config(path: str) -> str:
    """The config file of a cache folder (see :func:`cache_folder`), through huggingface_hub's cache API
    (``try_to_load_from_cache``: the snapshot's file, a link to the blob; its positions are the blob's
    text). A repository folder means its ``main`` revision."""
    found = cache_folder(path)
    assert found is not None, path
    root, repo_id, revision = found
    from huggingface_hub import try_to_load_from_cache

    for filename in HUB_FILES:
        hit = try_to_load_from_cache(repo_id, filename, cache_dir=root, revision=revision)
        if isinstance(hit, str) and os.path.isfile(hit):
            return hit
    what = f"snapshot {revision}" if revision else "the cached main revision"
    raise HubError(f"Hugging Face cache folder of {repo_id}: {what} holds no {' or '.join(HUB_FILES)}", path=path)
