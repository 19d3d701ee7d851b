"""Test doubles and test helpers the project ships, so benchmarks and tests share one copy.

Everything here is a test double or a helper for one, named as such (as httpx
ships its mock transport); no product module imports this package (an
import-linter contract says so):

- :class:`OpenAIStub` / :class:`ScriptedReply`  a scripted OpenAI-compatible HTTP server;
- :func:`observe_with_adbutils`                 a phone observed with stock adbutils calls only;
- :func:`draw_capture` / :func:`menu_card`      synthetic captures with text at known boxes;
- :func:`free_port` / :func:`free_port_block` / :func:`wait_for_port`  loopback ports for test servers;
- :class:`LocalStack` / :class:`Fault`             a local stack of one's own, and faults injected into it.
"""

from __future__ import annotations

from droidretriever.testing.adbutils_phone import observe_with_adbutils
from droidretriever.testing.drawing import Card, DrawnCapture, Line, draw_capture, menu_card
from droidretriever.testing.openai_stub import OpenAIStub, ScriptedReply
from droidretriever.testing.ports import free_port, free_port_block, wait_for_port
from droidretriever.testing.stack import Fault, LocalStack

__all__ = [
    "Card",
    "DrawnCapture",
    "Fault",
    "Line",
    "LocalStack",
    "OpenAIStub",
    "ScriptedReply",
    "draw_capture",
    "free_port",
    "free_port_block",
    "menu_card",
    "observe_with_adbutils",
    "wait_for_port",
]
