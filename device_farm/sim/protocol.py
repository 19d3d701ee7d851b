"""ADB smart-socket framing: 4-hex-digit length prefixes, OKAY / FAIL replies.

Requests from a client are ``%04x`` + payload; a server answers ``OKAY`` (maybe
followed by a length-prefixed block) or ``FAIL`` + a length-prefixed message.
"""

from __future__ import annotations

import asyncio

__all__ = ["MAX_REQUEST", "read_request", "write_block", "write_fail", "write_okay"]

MAX_REQUEST = 64 * 1024  # adb's own limit for a service request


async def read_request(reader: asyncio.StreamReader) -> str | None:
    """The next request, or None when the client closed the connection or sent junk."""
    try:
        head = await reader.readexactly(4)
        length = int(head.decode("ascii"), 16)
        if length > MAX_REQUEST:
            return None
        payload = await reader.readexactly(length)
    except (asyncio.IncompleteReadError, ConnectionError, UnicodeDecodeError, ValueError):
        return None
    return payload.decode("utf-8", errors="replace")


def _frame(data: bytes, digits: int = 4) -> bytes:
    return f"{len(data):0{digits}x}".encode("ascii") + data


def write_okay(writer: asyncio.StreamWriter, block: str | bytes | None = None, *, digits: int = 4) -> None:
    """``OKAY``, plus a length-prefixed block when given.

    ADB's own replies carry 4 hex digits of length (at most 65,535 bytes); the simulator's control
    service, which only our client speaks, uses 8 (``CONTROL_LENGTH_DIGITS``): a large farm's status
    is longer than 4 digits can say.
    """
    if block is None:
        writer.write(b"OKAY")
        return
    data = block.encode("utf-8") if isinstance(block, str) else block
    writer.write(b"OKAY" + _frame(data, digits))


def write_fail(writer: asyncio.StreamWriter, message: str, *, digits: int = 4) -> None:
    """``FAIL`` with a length-prefixed reason (what adbutils raises as AdbError)."""
    writer.write(b"FAIL" + _frame(message.encode("utf-8"), digits))


def write_block(writer: asyncio.StreamWriter, block: str) -> None:
    """A bare length-prefixed block (track-devices updates)."""
    writer.write(_frame(block.encode("utf-8")))
