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

from device_farm.sim.errors import AppSpecError
from device_farm.sim.spec import AppSpec

__all__ = ["APPS_DIR", "Catalog", "load_app", "load_catalog"]

APPS_DIR = Path(__file__).resolve().parent / "apps"


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


def _read_structured(path: Path) -> object:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise AppSpecError(
            f"cannot read {path}: {exc.strerror}",
            hint="check the file name; data files are named relative to the app file (data/x.yaml)",
        ) from exc
    try:
        return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        raise AppSpecError(
            f"cannot read {path}: {exc}", hint="fix the YAML/JSON syntax (see device_farm/sim/README.md)"
        ) from exc


def _resolve_data_files(raw: dict[str, object], base: Path, origin: Path) -> None:
    data = raw.get("data")
    if not isinstance(data, dict):
        return
    for name, value in list(data.items()):
        if isinstance(value, str):
            records = _read_structured(base / value)
            if not isinstance(records, list):
                raise AppSpecError(
                    f"{origin}: data.{name} file {value} does not hold a list of records",
                    hint="a data file is a YAML/JSON list of mappings",
                )
            data[name] = records


def load_app(path: Path) -> AppSpec:
    """Read and validate one app file, resolving data files next to it."""
    raw = _read_structured(path)
    if not isinstance(raw, dict):
        raise AppSpecError(f"{path} is not a mapping", hint="an app file starts with 'package:' and 'label:'")
    _resolve_data_files(raw, path.parent, path)
    try:
        return AppSpec.model_validate(raw)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "(top level)"
            lines.append(f"  {where}: {err['msg']}")
        raise AppSpecError(
            f"{path} is not a valid app spec:\n" + "\n".join(lines[:20]),
            hint="compare with the field list in device_farm/sim/README.md",
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
