"""Hardware profiles: one YAML file per GPU, validated by :class:`Profile` (DESIGN.md §3).

``load_profile("b200")`` loads a shipped profile by its stable name; ``load_profile("my.yaml")``
loads a user's file and validates it with the full schema. Shipped profiles (and
``_architectures.yaml``) are built without validation at run time (colint.records.from_trusted_data,
no pydantic schema build on the ``colint check`` path); tests/test_profiles.py validates every shipped
file with the full schema and checks that the trusted build equals the validated one. ``list_profiles()`` names the shipped ones.
``time_model(profile)`` returns the GEMM time-model constants of the profile's architecture
(``_architectures.yaml``), or the profile's own ``time_model:`` block when it has one.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from colint.errors import ProfileError, UsageError
from colint.hardware_profiles.schema import HW_FORMATS, Profile, Tile, Tiles, TimeModel
from colint.records import from_trusted_data

__all__ = ["Profile", "Tile", "Tiles", "TimeModel", "HW_FORMATS", "load_profile", "list_profiles",
           "time_model", "PROFILE_DIR"]

PROFILE_DIR = Path(__file__).resolve().parent


def list_profiles() -> list[str]:
    """Names of the shipped profiles (file stems), sorted."""
    return sorted(p.stem for p in PROFILE_DIR.glob("*.yaml") if not p.name.startswith("_"))


def _read_yaml(path: Path) -> dict:
    """A profile's mapping. libyaml (PyYAML's C loader, installed with pre-commit) when present:
    about 100x faster than a pure-Python parse, which matters for `colint gemm` start-up."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ProfileError(f"cannot read profile: {exc.strerror or exc}", path=str(path)) from None
    try:
        import yaml

        loader = yaml.CSafeLoader
    except (ImportError, AttributeError):
        loader = None
    if loader is not None:
        try:
            data = yaml.load(text, Loader=loader)  # noqa: S506 - CSafeLoader is the safe loader
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise ProfileError(f"invalid YAML: {getattr(exc, 'problem', None) or exc}", path=str(path),
                               line=mark.line + 1 if mark else None,
                               column=mark.column + 1 if mark else None) from None
    else:
        from ruamel.yaml import YAML
        from ruamel.yaml.error import YAMLError

        try:
            data = YAML(typ="safe", pure=True).load(text)
        except YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise ProfileError(f"invalid YAML: {getattr(exc, 'problem', None) or exc}", path=str(path),
                               line=mark.line + 1 if mark else None,
                               column=mark.column + 1 if mark else None) from None
    if not isinstance(data, dict):
        raise ProfileError("a profile must be a YAML mapping", path=str(path))
    return data


def _validate(data: dict, path: Path) -> Profile:
    from pydantic import ValidationError

    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        raise ProfileError(msg, path=str(path), key=loc or None) from None


@lru_cache(maxsize=64)
def _load_path(path: str, shipped: bool = False) -> Profile:
    p = Path(path)
    if shipped:  # validated by the test suite (test_profiles.py), trusted here
        return from_trusted_data(Profile, _read_yaml(p))
    return _validate(_read_yaml(p), p)


def load_profile(name_or_path: str) -> Profile:
    """A shipped profile by name (``h100-sxm``) or a user's YAML file by path."""
    if name_or_path.endswith((".yaml", ".yml")) or os.sep in name_or_path or "/" in name_or_path:
        if not Path(name_or_path).is_file():
            raise UsageError(f"GPU profile file not found: {name_or_path}")
        return _load_path(str(Path(name_or_path).resolve()))
    key = name_or_path.strip().lower()
    path = PROFILE_DIR / f"{key}.yaml"
    if key.startswith("_") or not path.is_file():
        raise UsageError(f"unknown GPU '{name_or_path}'; known: {', '.join(list_profiles())} "
                         "(or a path to a profile .yaml)")
    return _load_path(str(path), shipped=True)


@lru_cache(maxsize=2)
def _architectures(validate: bool = False) -> dict[str, TimeModel]:
    """Per-architecture constants merged over the ``common`` block. A shipped file: built without
    validation unless ``validate`` (the test suite validates it)."""
    from pydantic import ValidationError

    path = PROFILE_DIR / "_architectures.yaml"
    data = _read_yaml(path)
    common = dict(data.pop("common", {}) or {})
    out = {}
    for arch, block in data.items():
        merged = {**common, **(block or {})}
        merged["sources"] = {**(common.get("sources") or {}), **((block or {}).get("sources") or {})}
        if not validate:
            out[arch] = from_trusted_data(TimeModel, merged)
            continue
        try:
            out[arch] = TimeModel.model_validate(merged)
        except ValidationError as exc:
            raise ProfileError(f"{arch}: {exc.errors()[0]['msg']}", path=str(path)) from None
    return out


def time_model(profile: Profile) -> TimeModel:
    """The time-model constants for this profile's architecture (never per GPU)."""
    if profile.time_model is not None:
        return profile.time_model
    archs = _architectures()
    if profile.architecture not in archs:
        raise ProfileError(f"no time-model constants for architecture '{profile.architecture}'; "
                           "add a time_model: block to the profile")
    return archs[profile.architecture]
