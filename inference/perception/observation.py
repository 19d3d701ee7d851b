"""What a device driver's ``observe()`` hands to perception.

The device farm produces this model and imports it from here, so it stays
small: identity (serial, step, package, activity), the screen size, the raw
screenshot and the raw ``uiautomator dump`` XML.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Observation"]


class Observation(BaseModel):
    """One raw observation of a device screen, before perception."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    serial: str = Field(min_length=1)
    step: int = Field(ge=0)  # position in the run, for error messages
    package: str = ""
    activity: str = ""
    width: int = Field(gt=0)
    height: int = Field(gt=0)
    # PNG from ``screencap -p``; any Pillow-readable bytes (JPEG recordings) work too.
    screenshot_png: bytes = b""
    hierarchy_xml: str = ""  # exactly as ``uiautomator dump`` printed it

    @property
    def where(self) -> str:
        """``device emulator-5554, step 3``: the prefix of every perception error."""
        return f"device {self.serial}, step {self.step}"
