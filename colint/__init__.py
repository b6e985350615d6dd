"""colint: lint large-language-model architectures for how well they run on a target GPU."""

__version__ = "0.2.0"

# Where the project lives: [project.urls] and the SARIF rules' helpUri (docs/rules.md at this version's tag)
# point here. Change both together if the repository moves.
REPOSITORY_URL = "https://github.com/colint-llm/colint"
DISTRIBUTION = "colint-llm"  # the name on the package index; the import package and command are `colint`
