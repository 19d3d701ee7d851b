"""What a replayed app shows: the recorded screenshot and the recorded views as a dump.

The dump is the recorded views through the project's DroidBot converter, with
this phone's text fields on top: what was typed into a field, and which field
has focus (drivers read the focused field to check their text landed). The
pixels stay as recorded.
"""

from __future__ import annotations

import io
import struct

from PIL import Image

from core.recordings import convert_droidbot_state
from device_farm.sim.replay.cursor import ReplayCursor, field_key
from device_farm.sim.replay.graph import ReplayApp, ReplayScreen, ViewKey

__all__ = ["replay_png", "replay_raw", "replay_xml"]

_RAW_FORMAT_RGBA_8888 = 1
_COLORSPACE_SRGB = 1


def replay_xml(app: ReplayApp, cursor: ReplayCursor) -> str:
    """``uiautomator dump`` of the cursor's screen, typed texts and focus applied."""
    screen = app.screens[cursor.screen]
    state = screen.state
    overlays: list[tuple[int, str | None, bool]] = []
    for view in state.visible_views():
        if not view.editable:
            continue
        key = ViewKey.of(view)
        typed = cursor.typed.get(field_key(cursor.screen, key))
        focused = cursor.focused is not None and key.same_kind(cursor.focused)
        if typed is not None or focused:
            overlays.append((view.temp_id, typed, focused))
    if not overlays and cursor.focused is None:
        return screen.xml
    edits = {temp_id: (typed, focused) for temp_id, typed, focused in overlays}
    views = []
    for view in state.views:
        typed, focused = edits.get(view.temp_id, (None, False))
        update: dict[str, object] = {}
        if cursor.focused is not None:  # this phone's focus replaces the recorded one
            update["focused"] = focused
        if typed is not None:
            update["text"] = typed
        views.append(view.model_copy(update=update) if update else view)
    return convert_droidbot_state(state.model_copy(update={"views": tuple(views)}))


def replay_png(screen: ReplayScreen) -> bytes:
    """The recorded screenshot as PNG (``screencap -p``)."""
    buffer = io.BytesIO()
    with Image.open(io.BytesIO(screen.screenshot)) as image:
        image.convert("RGB").save(buffer, "PNG", compress_level=1)
    return buffer.getvalue()


def replay_raw(screen: ReplayScreen) -> bytes:
    """``screencap`` without -p: a 16-byte header, then RGBA pixels."""
    with Image.open(io.BytesIO(screen.screenshot)) as image:
        rgba = image.convert("RGBA")
    header = struct.pack("<IIII", rgba.width, rgba.height, _RAW_FORMAT_RGBA_8888, _COLORSPACE_SRGB)
    return header + rgba.tobytes()
