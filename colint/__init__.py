"""colint: lint large-language-model architectures for how well they run on a target GPU.

The Python API (``colint.check``, ``colint.inspect``, ``colint.suggest``, ``colint.report_data``,
``colint.chart``) lives in :mod:`colint.api` and is imported on first use, so that ``import colint``
(and the CLI's start-up) stays cheap.
"""

__version__ = "0.2.0"

# Where the project lives: [project.urls] and the SARIF rules' helpUri (docs/rules.md at this version's tag)
# point here. Change both together if the repository moves.
REPOSITORY_URL = "https://github.com/colint-llm/colint"
DISTRIBUTION = "colint-llm"  # the name on the package index; the import package and command are `colint`

_API = ("check", "inspect", "suggest", "report_data", "chart")
__all__ = ["__version__", *_API]


def __getattr__(name: str):
    if name in _API:
        from colint import api

        return getattr(api, name)
    raise AttributeError(f"module 'colint' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_API))
