"""The simulator's three example apps (Settings, McDonald's, Meituan), as one catalog.

They are the worked examples of device_farm/sim/README.md. Engine, farm and
perception tests use only these, so they do not depend on the rest of the catalog
(which its own tests check).
"""

from __future__ import annotations

from device_farm.sim import APPS_DIR, Catalog, load_app

__all__ = ["EXAMPLE_APPS", "example_catalog"]

EXAMPLE_APPS = ("settings", "mcdonalds", "meituan")


def example_catalog() -> Catalog:
    """A catalog of the three example apps, loaded from their YAML files."""
    apps = [load_app(APPS_DIR / f"{name}.yaml") for name in EXAMPLE_APPS]
    return Catalog(apps={app.package: app for app in apps})
