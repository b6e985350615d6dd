"""What a user names → the config files colint reads.

Each argument, in this order (an existing path always wins over a Hub id):

1. an existing file: itself;
2. an existing directory:
   - a Hugging Face cache folder (``models--org--name`` or ``models--org--name/snapshots/<commit>``):
     its ``config.json`` (else ``params.json``), found with huggingface_hub's cache API;
   - a checkpoint folder (``config.json`` or ``params.json`` beside weights): that config alone;
   - any other directory is walked: files named as the pre-commit hook selects them
     (:data:`HOOK_FILES`), or by ``--include`` globs instead; ``--exclude`` globs drop files and
     folders; inside a git work tree ``.gitignore`` is honoured (``git ls-files``: tracked files and
     untracked ones git does not ignore); outside one, hidden folders and virtualenv/cache folders are
     skipped (as ripgrep does, .gitignore rules apply only in a git work tree);
3. ``hf://org/name[@rev]``, or ``org/name[@rev]`` that is not an existing path (whose first part is
   not an existing folder, and that does not end in .json/.yaml/.yml): a Hub id, whose config.json
   (or params.json) is downloaded into the Hugging Face cache, or read from it (colint.loading.hub);
4. anything else: itself, so that the loader reports it ("no such file").

A file reached through several arguments is read once. Settings ([tool.colint]) of a file in the
Hugging Face cache come from the current directory's project, not from the cache's parents.
"""

from __future__ import annotations

import os
import re

from colint.loading.witness import CONFIG_NAMES, INDEX_NAME
from colint.errors import UsageError

# The pre-commit hook's `files:` pattern (.pre-commit-hooks.yaml; tests/engine/test_sources.py keeps them equal):
# HF config.json, colint's *.colint.yaml, Megatron-LM/NeMo model YAML.
HOOK_FILES = r"(^|/)(config\.json|[^/]+\.colint\.ya?ml|(megatron|nemo)_[^/]*\.ya?ml)$"
# The hook's `exclude:` pattern, None while it has none.
HOOK_EXCLUDE: str | None = None

# Files that make a folder a checkpoint (its config.json describes the weights beside it).
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".gguf", ".h5", ".msgpack", ".nemo")
CHECKPOINT_MARKERS = (INDEX_NAME, "pytorch_model.bin.index.json", "generation_config.json")

# Skipped when walking outside a git work tree (inside one, .gitignore decides): every hidden folder and these.
SKIP_DIRS = frozenset(
    {"node_modules", "__pycache__", "venv", "site-packages", "__pypackages__", "build", "dist", "buck-out", "_build"}
)

_CONFIG_EXTENSIONS = (".json", ".yaml", ".yml")


class Source:
    """One config file to read (a plain class: a dataclass costs ~0.5 ms of every start-up to create)."""

    __slots__ = ("path", "origin", "kind", "settings_dir")

    def __init__(self, path: str, origin: str, kind: str, settings_dir: str | None = None) -> None:
        self.path = path  # the file to read
        self.origin = origin  # the argument it came from
        self.kind = kind  # "file" | "walked" | "checkpoint" | "cache" | "hub"
        self.settings_dir = settings_dir  # where [tool.colint] is looked up; None: beside the file

    def __repr__(self) -> str:
        return f"Source({self.path!r}, {self.origin!r}, {self.kind!r}, {self.settings_dir!r})"

    @property
    def read_only(self) -> bool:
        """A file of the Hugging Face cache: --fix must not rewrite it (it is a link to a shared blob)."""
        return self.kind in ("cache", "hub")


class Expansion:
    """The files the arguments name, in order, and what to warn about (a folder with no config)."""

    def __init__(self) -> None:
        self.sources: list[Source] = []
        self.warnings: list[str] = []

    @property
    def paths(self) -> list[str]:
        return [s.path for s in self.sources]

    def settings_dirs(self) -> dict[str, str]:
        return {s.path: s.settings_dir for s in self.sources if s.settings_dir}


def hub_id(arg: str) -> tuple[str, str | None] | None:
    """``(repo_id, revision)`` when ``arg`` names a Hub repository rather than a path, else None."""
    if not arg.startswith("hf://") and (os.path.lexists(arg) or arg.lower().endswith(_CONFIG_EXTENSIONS)):
        return None
    from colint.loading.hub import parse_hub_id

    if arg.startswith("hf://"):
        return parse_hub_id(arg[5:])
    parsed = parse_hub_id(arg)
    if parsed is None or os.path.isdir(parsed[0].split("/")[0]):  # ./org/... exists: a mistyped local path
        return None
    return parsed


def expand(args, *, include=(), exclude=()) -> Expansion:
    """The files ``args`` name (see the module docstring), in argument order, each once."""
    out = Expansion()
    seen: set[str] = set()

    def add(src: Source) -> None:
        key = os.path.abspath(src.path)
        if key not in seen:
            seen.add(key)
            out.sources.append(src)

    for arg in args:
        for src in _resolve(arg, include, exclude, out.warnings):
            add(src)
    return out


def resolve_one(arg: str) -> Source:
    """The single config file ``arg`` names (a file, checkpoint or cache folder, or Hub id); a folder
    holding several configs is a UsageError."""
    found = expand([arg])
    if len(found.sources) != 1:
        n = len(found.sources)
        raise UsageError(
            f"{'no config file' if n == 0 else f'{n} config files'} found in this folder; name one "
            "file (this command reads one config)",
            path=arg,
        )
    return found.sources[0]


def _resolve(arg: str, include, exclude, warnings: list[str]) -> list[Source]:
    if os.path.isdir(arg):
        from colint.loading.hub import cache_folder, cached_config

        if cache_folder(arg) is not None:
            return [Source(cached_config(arg), arg, "cache", os.getcwd())]
        config = checkpoint_config(arg)
        if config is not None:
            return [Source(config, arg, "checkpoint")]
        files = walk(arg, include=include, exclude=exclude, warnings=warnings)
        if not files:
            warnings.append(
                f"{arg}: no config files found (looked for "
                f"{'the --include globs' if include else 'config.json, *.colint.yaml, megatron_*.yaml, nemo_*.yaml'}"
                f"{'' if include else '; --include GLOB selects others'})"
            )
        return [Source(f, arg, "walked") for f in files]
    parsed = hub_id(arg)
    if parsed is not None:
        from colint.loading.hub import fetch

        return [Source(fetch(*parsed), arg, "hub", os.getcwd())]
    return [Source(arg, arg, "file")]


def checkpoint_config(directory: str) -> str | None:
    """``directory``'s config.json (else params.json) when weights lie beside it, else None."""
    try:
        names = os.listdir(directory)
    except OSError:
        return None
    if not any(n.endswith(WEIGHT_SUFFIXES) or n in CHECKPOINT_MARKERS or n.startswith("consolidated.") for n in names):
        return None
    for name in CONFIG_NAMES:
        if name in names and os.path.isfile(os.path.join(directory, name)):
            return os.path.join(directory, name)
    return None


def walk(directory: str, *, include=(), exclude=(), warnings: list[str] | None = None) -> list[str]:
    """Config files under ``directory``, sorted (see the module docstring for the selection)."""
    rels = _git_files(directory)
    if rels is None:
        rels = _walk_files(directory)
    else:  # a nested repository (a cloned model repo, a submodule) is listed as a folder: walk it under its own git
        for rel in [r for r in rels if os.path.isdir(os.path.join(directory, r))]:
            rels.remove(rel)
            sub = os.path.join(directory, rel.rstrip("/"))
            rels += [os.path.relpath(f, directory).replace(os.sep, "/") for f in _nested(sub)]
    selected = re.compile(HOOK_FILES)
    skipped = re.compile(HOOK_EXCLUDE) if HOOK_EXCLUDE else None
    out = []
    for rel in sorted(rels):
        if include:
            if not any(_glob_match(g, rel, directory) for g in include):
                continue
        elif not selected.search(rel) or (skipped is not None and skipped.search(rel)):
            continue
        if exclude and _excluded(rel, directory, exclude):
            continue
        path = os.path.join(directory, rel)
        if os.path.isfile(path):  # git lists tracked files deleted from the work tree
            out.append(os.path.normpath(path))
    return out


def _nested(sub: str) -> list[str]:
    """Every candidate under a nested repository (selection happens in the caller, relative to the top)."""
    rels = _git_files(sub)
    if rels is None:
        rels = _walk_files(sub)
    out = []
    for rel in rels:
        path = os.path.join(sub, rel.rstrip("/"))
        out += _nested(path) if os.path.isdir(path) else [path]
    return out


def _glob_match(glob: str, rel: str, base: str) -> bool:
    from colint.util.globs import glob_matches  # the same glob dialect as per-file-ignores

    return glob_matches(glob, os.path.join(base, rel), base)


def _excluded(rel: str, base: str, globs) -> bool:
    """A glob matches the file or any folder above it (``--exclude tests`` drops tests/**)."""
    parts = rel.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return any(_glob_match(g.rstrip("/"), p, base) for g in globs for p in prefixes)


def _git_files(directory: str) -> list[str] | None:
    """Files under ``directory`` that git tracks or would not ignore (relative, "/"-separated), or None
    outside a git work tree (or without git)."""
    import subprocess

    try:
        proc = subprocess.run(
            ["git", "-C", directory, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    if (
        not proc.stdout
        and subprocess.run(
            ["git", "-C", directory, "check-ignore", "-q", "."], capture_output=True, timeout=60
        ).returncode
        == 0
    ):
        return None  # the folder named is itself ignored: the user asked for it, so walk it
    return sorted({p for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p})


def _walk_files(directory: str) -> list[str]:
    out = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        rel_root = os.path.relpath(root, directory)
        for f in files:
            out.append(f if rel_root == "." else os.path.join(rel_root, f).replace(os.sep, "/"))
    return out
