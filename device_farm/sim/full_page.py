"""A phone's page in one piece: the ground truth a stitched scrolling capture is compared with.

It sits apart from :mod:`device_farm.sim.render` because it needs the phone
(its state, clock and catalog) while the phone draws with the renderer.
"""

from __future__ import annotations

import copy
import dataclasses

from PIL import Image

from device_farm.sim.frame import FrameInputs, compose_frame
from device_farm.sim.phone import Phone
from device_farm.sim.render import render_frame

__all__ = ["render_full_page"]


def render_full_page(phone: Phone) -> Image.Image:
    """The phone's current screen with its scroll body expanded to the whole content, in one piece.

    The ground truth for scrolling captures: the same screen on a display made
    taller by exactly what the scroll body hides, so the body shows from its top
    to its end without scrolling, with the top bar, bottom bar, status and
    navigation bars drawn once. The phone's state (its scroll offset included)
    is left as it was.
    """
    now = phone.clock.now()
    inputs = FrameInputs(
        apps=phone.catalog.apps, launcher_apps=phone.catalog.launchable, display=phone.display,
        serial=phone.serial, model=phone.identity.model, clock_text=now.strftime("%H:%M"),
        today=now.date().isoformat(), notifications=phone.notifications(), resolve_source=phone.records_for,
    )
    # Composing writes the clamped offset back into the state: compose on a copy.
    frame = compose_frame(copy.deepcopy(phone.state), inputs, phone.toast_text())
    if frame.scroll is not None:
        viewport = frame.scroll.viewport
        hidden = frame.scroll.content_height - (viewport[3] - viewport[1])
        if hidden > 0:
            tall = dataclasses.replace(phone.display, height=phone.display.height + hidden)
            inputs = dataclasses.replace(inputs, display=tall)
            frame = compose_frame(copy.deepcopy(phone.state), inputs, phone.toast_text())
    return render_frame(frame, inputs.display)
