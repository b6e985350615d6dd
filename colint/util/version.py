"""The release: its version, where the project lives and its name on the package index. The package root
re-exports them (``colint.__version__``); modules of colint import them from here, never from the root,
which also re-exports the Python API (the one arrow up)."""

__version__ = "0.2.0"

# Where the project lives: [project.urls] and the SARIF rules' helpUri (docs/rules.md at this version's tag)
# point here. Change both together if the repository moves.
REPOSITORY_URL = "https://github.com/colint-llm/colint"
DISTRIBUTION = "colint-llm"  # the name on the package index; the import package and command are `colint`
