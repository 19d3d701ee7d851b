"""Test doubles and test helpers the project ships, so benchmarks and tests share one copy.

Everything here is a test double or a helper for one, named as such (as httpx
ships its mock transport); no product module imports this package (an
import-linter contract says so):

- :class:`OpenAIStub` / :class:`ScriptedReply`  a scripted OpenAI-compatible HTTP server;
- :class:`RecordingOpenAIServer` / :class:`ServedModel` / :class:`Answer`  a vLLM-shaped server that
  checks and logs every request and answers per model as scripted (valid, bad, 4xx, 5xx, hang, cut off);
- :class:`HostileNavigator`                      an OpenAI-compatible navigator that always picks
                                                 the most dangerous element (the risk gate's foe);
- :func:`observe_with_adbutils`                 a phone observed with stock adbutils calls only;
- :func:`draw_capture` / :func:`menu_card`      synthetic captures with text at known boxes;
- :func:`free_port` / :func:`free_port_block` / :func:`wait_for_port`  loopback ports for test servers;
- :class:`RedisServer` / :func:`running_redis`    a real redis-server with a generated password.
- :class:`LocalStack` / :class:`Fault`             a local stack of one's own, and faults injected into it;
- ``FAST_FARM``                                  farm settings that notice a dead worker in seconds.
"""

from __future__ import annotations

from droidretriever.testing.adbutils_phone import observe_with_adbutils
from droidretriever.testing.drawing import Card, DrawnCapture, Line, draw_capture, menu_card
from droidretriever.testing.hostile_navigator import HostileChoice, HostileNavigator
from droidretriever.testing.openai_stub import OpenAIStub, ScriptedReply
from droidretriever.testing.ports import free_port, free_port_block, wait_for_port
from droidretriever.testing.recording_server import (
    Answer,
    RecordedRequest,
    RecordingOpenAIServer,
    ServedModel,
)
from droidretriever.testing.redis_server import RedisServer, running_redis
from droidretriever.testing.stack import FAST_FARM, Fault, LocalStack

__all__ = [
    "FAST_FARM",
    "Answer",
    "Card",
    "DrawnCapture",
    "Fault",
    "HostileChoice",
    "HostileNavigator",
    "Line",
    "LocalStack",
    "OpenAIStub",
    "RecordedRequest",
    "RecordingOpenAIServer",
    "RedisServer",
    "ScriptedReply",
    "ServedModel",
    "draw_capture",
    "free_port",
    "free_port_block",
    "menu_card",
    "observe_with_adbutils",
    "running_redis",
    "wait_for_port",
]
