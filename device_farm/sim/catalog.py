"""Load the app specs (``apps/*.yaml``) into validated :class:`AppSpec` models.

A data collection may be written inline or as the name of a YAML/JSON file
(a list of records) next to the app file, so large content stays apart from
the screens. Errors name the file and the field, and say how to fix them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import ErrorDetails

from device_farm.sim.errors import AppSpecError
from device_farm.sim.spec import AppSpec
from device_farm.sim.yaml_traps import YamlTrap, find_yaml_traps

__all__ = ["APPS_DIR", "Catalog", "load_app", "load_catalog"]

APPS_DIR = Path(__file__).resolve().parent / "apps"
_TRAPS_HINT = "quote the value (see 'YAML traps for app authors' in device_farm/sim/README.md)"


class Catalog(BaseModel):
    """Every app the phones have installed, by package."""

    model_config = ConfigDict(frozen=True)

    apps: dict[str, AppSpec]

    def get(self, package: str) -> AppSpec | None:
        """The app with this package name, or None."""
        return self.apps.get(package)

    def find_label(self, label: str) -> AppSpec | None:
        """The app whose launcher label is ``label`` (case-insensitive)."""
        wanted = label.casefold()
        return next((a for a in self.apps.values() if a.label.casefold() == wanted), None)

    @property
    def launchable(self) -> list[AppSpec]:
        """Apps shown on the launcher, sorted by label."""
        return sorted((a for a in self.apps.values() if a.launcher), key=lambda a: a.label.casefold())


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise AppSpecError(
            f"cannot read {path}: {exc.strerror}",
            hint="check the file name; data files are named relative to the app file (data/x.yaml)",
        ) from exc


def _parse(text: str, path: Path) -> object:
    try:
        return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        raise AppSpecError(
            f"cannot read {path}: {exc}", hint="fix the YAML/JSON syntax (see device_farm/sim/README.md)"
        ) from exc


def _traps_of(text: str, path: Path, prefix: tuple[str, ...] = ()) -> list[tuple[Path, YamlTrap]]:
    return [] if path.suffix == ".json" else [(path, t) for t in find_yaml_traps(text, prefix)]


def _resolve_data_files(raw: dict[str, object], base: Path, origin: Path) -> list[tuple[Path, YamlTrap]]:
    """Replace data file names by their records; returns the YAML traps found in those files."""
    data = raw.get("data")
    traps: list[tuple[Path, YamlTrap]] = []
    if not isinstance(data, dict):
        return traps
    for name, value in list(data.items()):
        if isinstance(value, str):
            path = base / value
            text = _read_text(path)
            records = _parse(text, path)
            if not isinstance(records, list):
                raise AppSpecError(
                    f"{origin}: data.{name} file {value} does not hold a list of records",
                    hint="a data file is a YAML/JSON list of mappings",
                )
            traps += _traps_of(text, path, ("data", str(name)))
            data[name] = records
    return traps


def _check_traps(path: Path, traps: list[tuple[Path, YamlTrap]]) -> None:
    """Refuse values YAML 1.1 silently turned into dates, base-60 numbers or boolean keys."""
    wrong = [t.describe(str(where)) for where, t in traps if t.always_wrong]
    if wrong:
        raise AppSpecError(
            f"{path} has values YAML reads as something else than the text written:\n  " + "\n  ".join(wrong[:20]),
            hint=_TRAPS_HINT,
        )


def _error_line(err: ErrorDetails, traps: list[tuple[Path, YamlTrap]]) -> str:
    loc = tuple(str(p) for p in err["loc"])
    where = ".".join(loc) or "(top level)"
    # the trap at (or above) the failing field explains the error better than pydantic can
    found = next(((origin, t) for origin, t in traps if t.path and loc[: len(t.path)] == t.path), None)
    if found is None:
        return f"  {where}: {err['msg']}"
    return f"  {where}: {err['msg']}: {found[1].describe(str(found[0]))}"


def load_app(path: Path) -> AppSpec:
    """Read and validate one app file, resolving data files next to it."""
    text = _read_text(path)
    raw = _parse(text, path)
    if not isinstance(raw, dict):
        raise AppSpecError(f"{path} is not a mapping", hint="an app file starts with 'package:' and 'label:'")
    traps = _traps_of(text, path) + _resolve_data_files(raw, path.parent, path)
    _check_traps(path, traps)
    try:
        return AppSpec.model_validate(raw)
    except ValidationError as exc:
        lines = [_error_line(err, traps) for err in exc.errors()]
        quoted = any(": the unquoted" in line for line in lines)
        raise AppSpecError(
            f"{path} is not a valid app spec:\n" + "\n".join(lines[:20]),
            hint=_TRAPS_HINT if quoted else "compare with the field list in device_farm/sim/README.md",
        ) from exc


def load_catalog(dirs: Iterable[Path] = (APPS_DIR,)) -> Catalog:
    """Load every ``*.yaml`` app file of ``dirs``; a package defined twice is an error."""
    apps: dict[str, AppSpec] = {}
    origins: dict[str, Path] = {}
    for folder in dirs:
        for path in sorted(folder.glob("*.yaml")):
            app = load_app(path)
            if app.package in apps:
                raise AppSpecError(
                    f"package {app.package} is defined twice: {origins[app.package]} and {path}",
                    hint="give each app file its own package name",
                )
            apps[app.package] = app
            origins[app.package] = path
    return Catalog(apps=apps)
