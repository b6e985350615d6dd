"""colint: lint large-language-model architectures for how well they run on a target GPU.

The Python API (``colint.check``, ``colint.inspect``, ``colint.suggest``, ``colint.report_data``,
``colint.chart``) lives in :mod:`colint.api` and is imported on first use, so that ``import colint``
(and the CLI's start-up) stays cheap.
"""

# the release facts live low, in colint.util.version, so that no module of colint imports this facade
from colint.util.version import DISTRIBUTION as DISTRIBUTION
from colint.util.version import REPOSITORY_URL as REPOSITORY_URL
from colint.util.version import __version__ as __version__

_API = ("check", "inspect", "suggest", "report_data", "chart")
__all__ = ["__version__", *_API]


def __getattr__(name: str):
    if name in _API:
        from colint import api

        return getattr(api, name)
    raise AttributeError(f"module 'colint' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_API))
