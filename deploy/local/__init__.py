"""The embedded local stack behind ``droidretriever up | down | status``.

    build_stack(settings) -> Stack(RedisService, SeaweedService, PostgresService,
                                   then PrefectService on it, then SubscriptionsService,
                                   RunnerService and ApiService once those are healthy)

New services (device farm, API server, workers) implement :class:`Service`
(usually by subclassing :class:`ProcessService`) and join the list.
``ensure_stack_secrets`` generates what they need to refuse strangers
(:mod:`deploy.local.credentials`); ``make_state_private`` keeps the state
folder its owner's.
"""

from __future__ import annotations

from deploy.local.api_service import (
    ApiService,
    RunnerService,
    ensure_api_token,
    read_api_token,
)
from deploy.local.builtin import (
    PrefectService,
    RedisService,
    SeaweedService,
    SubscriptionsService,
)
from deploy.local.credentials import ensure_stack_secrets, make_state_private
from deploy.local.postgres import PostgresService, describe_sqlite_left_behind
from deploy.local.processes import PidFile, ProcessRecord, is_port_free
from deploy.local.service import (
    AuthCheck,
    Health,
    PortClaim,
    ProcessCommand,
    ProcessService,
    Service,
    ServiceStatus,
)
from deploy.local.stack import Stack, build_stack

__all__ = [
    "ApiService",
    "AuthCheck",
    "Health",
    "PidFile",
    "PortClaim",
    "PostgresService",
    "PrefectService",
    "ProcessCommand",
    "ProcessRecord",
    "ProcessService",
    "RedisService",
    "RunnerService",
    "SeaweedService",
    "Service",
    "ServiceStatus",
    "Stack",
    "SubscriptionsService",
    "build_stack",
    "describe_sqlite_left_behind",
    "ensure_api_token",
    "ensure_stack_secrets",
    "is_port_free",
    "make_state_private",
    "read_api_token",
]
