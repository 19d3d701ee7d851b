"""The phone's ``/system/bin/sh``: command lists, pipes, ``$?``, and the file commands.

``run_shell`` parses a command line (``a; b && c || d``, ``x | grep y``),
runs each command from :data:`device_farm.sim.commands.COMMANDS` (or the
small built-ins here), and returns stdout, stderr, the exit code and how long
the phone "took" (latency profile), which the server waits before replying.
Unknown commands answer ``/system/bin/sh: X: not found`` with code 127.
"""

from __future__ import annotations

import re
import stat
from dataclasses import dataclass, field
from datetime import UTC, datetime

from device_farm.sim.commands import COMMANDS, Command, CommandResult
from device_farm.sim.commands import error_result as _err
from device_farm.sim.commands import ok_result as _ok
from device_farm.sim.errors import ShellCommandError
from device_farm.sim.farm import VirtualDevice
from device_farm.sim.phone import DEVICE_DIRS
from device_farm.sim.sync_service import stat_path

__all__ = ["ShellResult", "run_shell"]


@dataclass
class ShellResult:
    stdout: bytes = b""
    stderr: bytes = b""
    code: int = 0
    delay_s: float = 0.0
    outputs: list[tuple[int, bytes]] = field(default_factory=list)  # (1=stdout|2=stderr, data) in order

    @property
    def merged(self) -> bytes:
        """stdout and stderr interleaved, as shell v1 (a pty-less pipe) delivers them."""
        return b"".join(data for _, data in self.outputs)


def _echo(dev: VirtualDevice, args: list[str], stdin: bytes) -> CommandResult:
    newline = "\n"
    if args and args[0] == "-n":
        args, newline = args[1:], ""
    return _ok(" ".join(args) + newline)


def _cat(dev: VirtualDevice, args: list[str], stdin: bytes) -> CommandResult:
    if not args:
        return CommandResult(stdout=stdin)
    out, err, code = b"", b"", 0
    for path in args:
        content = dev.phone.read_file(path)
        if content is None:
            kind = "Is a directory" if path.rstrip("/") in DEVICE_DIRS or path == "/" else "No such file or directory"
            err += f"cat: {path}: {kind}\n".encode()
            code = 1
        else:
            out += content
    return CommandResult(stdout=out, stderr=err, code=code)


def _rm(dev: VirtualDevice, args: list[str], stdin: bytes) -> CommandResult:
    force = any(a.startswith("-") and "f" in a for a in args)
    for path in (a for a in args if not a.startswith("-")):
        if dev.phone.state.files.pop(path, None) is None and not force:
            return _err(f"rm: {path}: No such file or directory\n")
    return _ok()


def _long_line(dev: VirtualDevice, path: str, name: str) -> str:
    """One ``ls -l`` line as toybox writes it."""
    mode, size, mtime = stat_path(dev.phone, path)
    owner = "root root" if stat.S_ISDIR(mode) else "u0_a0 sdcard_rw"
    when = datetime.fromtimestamp(mtime, UTC).strftime("%Y-%m-%d %H:%M")
    return f"{stat.filemode(mode)} 1 {owner} {size:>8} {when} {name}"


def _ls(dev: VirtualDevice, args: list[str], stdin: bytes) -> CommandResult:
    paths = [a for a in args if not a.startswith("-")] or ["/sdcard"]
    long = any(a.startswith("-") and "l" in a for a in args)
    out = []
    for path in paths:
        base = path.rstrip("/") or "/"
        if base in dev.phone.state.files:
            out.append(_long_line(dev, base, base) if long else base)
            continue
        if base not in DEVICE_DIRS:
            return _err(f"ls: {path}: No such file or directory\n")
        prefix = base + "/" if base != "/" else "/"
        names = {p[len(prefix):].split("/")[0] for p in dev.phone.state.files if p.startswith(prefix)}
        names |= {d[len(prefix):].split("/")[0] for d in DEVICE_DIRS if d.startswith(prefix) and d != base}
        listed = sorted(n for n in names if n)
        if long:
            out.append(f"total {len(listed)}")
            listed = [_long_line(dev, prefix + n, n) for n in listed]
        out.extend(listed)
    return _ok("".join(f"{n}\n" for n in out))


def _grep(dev: VirtualDevice, args: list[str], stdin: bytes) -> CommandResult:
    flags = [a for a in args if a.startswith("-")]
    rest = [a for a in args if not a.startswith("-")]
    if not rest:
        return _err("usage: grep [-EFivc] PATTERN [FILE...]\n", 2)
    pattern = rest[0]
    data = stdin if len(rest) == 1 else b"".join(dev.phone.read_file(p) or b"" for p in rest[1:])
    ignore = any("i" in f for f in flags)
    invert = any("v" in f for f in flags)
    fixed = any("F" in f for f in flags)
    try:
        regex = re.compile(re.escape(pattern) if fixed else pattern, re.IGNORECASE if ignore else 0)
    except re.error:
        regex = re.compile(re.escape(pattern), re.IGNORECASE if ignore else 0)
    lines = [ln for ln in data.decode("utf-8", "replace").splitlines() if bool(regex.search(ln)) != invert]
    if any("c" in f for f in flags):
        return CommandResult(stdout=f"{len(lines)}\n".encode(), code=0 if lines else 1)
    return CommandResult(stdout="".join(f"{ln}\n" for ln in lines).encode(), code=0 if lines else 1)


def _head(dev: VirtualDevice, args: list[str], stdin: bytes) -> CommandResult:
    count = 10
    for i, a in enumerate(args):
        if a == "-n" and i + 1 < len(args) and args[i + 1].isdigit():
            count = int(args[i + 1])
        elif a.startswith("-") and a[1:].isdigit():
            count = int(a[1:])
    return CommandResult(stdout=b"".join(stdin.splitlines(keepends=True)[:count]))


def _sleep(dev: VirtualDevice, args: list[str], stdin: bytes) -> CommandResult:
    try:
        seconds = float(args[0]) if args else 0.0
    except ValueError:
        return _err(f"sleep: invalid number '{args[0]}'\n")
    return CommandResult(delay_s=min(max(seconds, 0.0), 30.0))


def _touch(dev: VirtualDevice, args: list[str], stdin: bytes) -> CommandResult:
    for path in (a for a in args if not a.startswith("-")):
        if dev.phone.read_file(path) is None:
            dev.phone.write_file(path, b"")
    return _ok()


def _exec(dev: VirtualDevice, args: list[str], stdin: bytes) -> CommandResult:
    # `exec logcat` (what `adb logcat` sends): the command replaces the shell, which ends anyway
    return _run_one(dev, args, stdin) if args else _ok()


_BUILTINS: dict[str, Command] = {
    "echo": _echo, "cat": _cat, "rm": _rm, "ls": _ls, "grep": _grep, "head": _head, "sleep": _sleep,
    "touch": _touch, "exec": _exec,
    "export": lambda dev, args, stdin: _ok(),  # no environment: `export ANDROID_LOG_TAGS=...` is a no-op
    "true": lambda dev, args, stdin: _ok(),
    "false": lambda dev, args, stdin: CommandResult(code=1),
    "mkdir": lambda dev, args, stdin: _ok(),
    "id": lambda dev, args, stdin: _ok("uid=2000(shell) gid=2000(shell) groups=2000(shell) context=u:r:shell:s0\n"),
    "whoami": lambda dev, args, stdin: _ok("shell\n"),
}


_OPERATORS = ("&&", "||", ";", "|", "&")


class _Op(str):
    """An unquoted operator token (a quoted ``'&&'`` stays a plain word)."""


def _tokenize(cmdline: str) -> list[str]:
    """POSIX-ish words and operators; raises ValueError on an unclosed quote."""
    tokens: list[str] = []
    word, in_word, i = "", False, 0
    while i < len(cmdline):
        ch = cmdline[i]
        if ch in "'\"":
            end = cmdline.find(ch, i + 1)
            if end < 0:
                raise ValueError("No closing quotation")
            word, in_word, i = word + cmdline[i + 1:end], True, end + 1
            continue
        if ch == "\\" and i + 1 < len(cmdline):
            word, in_word, i = word + cmdline[i + 1], True, i + 2
            continue
        op = next((o for o in _OPERATORS if cmdline.startswith(o, i)), None)
        if ch.isspace() or op is not None:
            if in_word:
                tokens.append(word)
            word, in_word = "", False
            if op is not None:
                tokens.append(_Op(op))
                i += len(op)
            else:
                i += 1
            continue
        word, in_word, i = word + ch, True, i + 1
    if in_word:
        tokens.append(word)
    return tokens


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _run_one(dev: VirtualDevice, argv: list[str], stdin: bytes) -> CommandResult:
    while argv and _ASSIGNMENT.match(argv[0]):  # `VAR=value command`: the phone keeps no environment
        argv = argv[1:]
    if not argv:
        return _ok()
    name = argv[0]
    command = _BUILTINS.get(name) or COMMANDS.get(name)
    if command is None:
        return _err(f"/system/bin/sh: {name}: not found\n", 127)
    try:
        return command(dev, argv[1:], stdin)
    except ShellCommandError as exc:
        return _err(f"{exc}\n", 1)


def run_shell(dev: VirtualDevice, cmdline: str) -> ShellResult:
    """Run a shell command line on ``dev`` (never raises for bad input: the shell answers)."""
    result = ShellResult()
    try:
        tokens = _tokenize(cmdline)
    except ValueError as exc:  # unbalanced quotes
        message = f"/system/bin/sh: syntax error: {exc}\n".encode()
        result.outputs.append((2, message))
        result.stderr, result.code = message, 2
        return result
    last_code, skip, connector = 0, False, ";"
    pipeline: list[list[str]] = [[]]
    for token in [*tokens, _Op(";")]:
        if not isinstance(token, _Op):
            pipeline[-1].append(token.replace("$?", str(last_code)))
            continue
        if token == "|":
            pipeline.append([])
            continue
        skip = (connector == "&&" and last_code != 0) or (connector == "||" and last_code == 0)
        if not skip and any(pipeline):
            stdin = b""
            for argv in pipeline:
                if not argv:
                    continue
                step = _run_one(dev, argv, stdin)
                stdin = step.stdout
                result.delay_s += step.delay_s
                if step.stderr:
                    result.outputs.append((2, step.stderr))
                    result.stderr += step.stderr
                last_code = step.code
            if stdin:
                result.outputs.append((1, stdin))
                result.stdout += stdin
        pipeline, connector = [[]], token
    result.code = last_code
    return result
