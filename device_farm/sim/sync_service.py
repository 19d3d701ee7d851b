"""The ``sync:`` service: STAT, LIST, RECV, SEND on the phone's small file store.

Requests are 4-byte ids + little-endian lengths; file data moves in DATA
chunks of at most 64 KiB, ending with DONE, as ``adb pull/push`` expect.
"""

from __future__ import annotations

import asyncio
import stat
import struct

from device_farm.sim.phone import DEVICE_DIRS, Phone

__all__ = ["serve_sync", "stat_path"]

_CHUNK = 64 * 1024
_DIR_MODE = stat.S_IFDIR | 0o771
_MAX_PATH = 4096


def stat_path(phone: Phone, path: str) -> tuple[int, int, int]:
    """(mode, size, mtime) of ``path``; zeros when missing (what adbd answers)."""
    clean = path.rstrip("/") or "/"
    if clean in DEVICE_DIRS:
        return _DIR_MODE, 4096, int(phone.clock.now().timestamp())
    found = phone.state.files.get(clean)
    if found is None:
        return 0, 0, 0
    return stat.S_IFREG | 0o660, len(found[0]), found[1]


def _list(phone: Phone, path: str) -> bytes:
    base = path.rstrip("/") or "/"
    prefix = base + "/" if base != "/" else "/"
    names = {p[len(prefix):].split("/")[0] for p in phone.state.files if p.startswith(prefix)}
    names |= {d[len(prefix):].split("/")[0] for d in DEVICE_DIRS if d.startswith(prefix) and d != base}
    out = b""
    for name in sorted(n for n in names if n):
        mode, size, mtime = stat_path(phone, prefix + name)
        raw = name.encode("utf-8")
        out += b"DENT" + struct.pack("<IIII", mode, size, mtime, len(raw)) + raw
    return out + b"DONE" + struct.pack("<IIII", 0, 0, 0, 0)


def _fail(message: str) -> bytes:
    raw = message.encode("utf-8")
    return b"FAIL" + struct.pack("<I", len(raw)) + raw


async def _receive_upload(reader: asyncio.StreamReader) -> bytes | None:
    data = bytearray()
    while True:
        head = await reader.readexactly(8)
        kind, length = head[:4], struct.unpack("<I", head[4:])[0]
        if kind == b"DATA":
            if length > _CHUNK:
                return None
            data += await reader.readexactly(length)
        elif kind == b"DONE":
            return bytes(data)
        else:
            return None


async def serve_sync(phone: Phone, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answer sync requests until the client sends QUIT or closes."""
    while True:
        try:
            head = await reader.readexactly(8)
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        kind, length = head[:4], struct.unpack("<I", head[4:])[0]
        if kind == b"QUIT" or length > _MAX_PATH:
            return
        path = (await reader.readexactly(length)).decode("utf-8", "replace")
        if kind == b"STAT":
            writer.write(b"STAT" + struct.pack("<III", *stat_path(phone, path)))
        elif kind == b"LIST":
            writer.write(_list(phone, path))
        elif kind == b"RECV":
            content = phone.read_file(path)
            if content is None:
                writer.write(_fail("No such file or directory"))
            else:
                for start in range(0, len(content), _CHUNK):
                    chunk = content[start:start + _CHUNK]
                    writer.write(b"DATA" + struct.pack("<I", len(chunk)) + chunk)
                writer.write(b"DONE" + struct.pack("<I", 0))
        elif kind == b"SEND":
            target = path.rsplit(",", 1)[0]
            content = await _receive_upload(reader)
            if content is None:
                writer.write(_fail("protocol error during SEND"))
            else:
                phone.write_file(target, content)
                writer.write(b"OKAY" + struct.pack("<I", 0))
        else:
            writer.write(_fail(f"unknown sync request {kind!r}"))
            await writer.drain()
            return
        await writer.drain()
