"""colint: lint large-language-model architectures for how well they run on a target GPU."""

__version__ = "0.1.0"
