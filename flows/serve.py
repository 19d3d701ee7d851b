"""``python -m flows.serve``: serve every subscription's deployment, following changes.

Prefect's ``serve()`` serves the deployments it was started with, so this
process supervises a child that serves them and restarts it whenever the set
of subscriptions (or their schedules) changes; checked every ``--interval``
seconds. Scheduled runs execute in the child, with this process's settings.
"""

from __future__ import annotations

import argparse
import logging
import subprocess
import sys
import time

from droidretriever.config import load_settings
from flows.subscriptions import SubscriptionStore, to_deployment
from storage import open_object_store

__all__ = ["main", "serve_current", "subscription_signature"]

log = logging.getLogger(__name__)


def subscription_signature(store: SubscriptionStore) -> tuple[tuple[str, str, bool], ...]:
    """What the served set depends on: each subscription's id, cron and paused flag."""
    return tuple((s.id, s.cron, s.paused) for s in store.list())


def serve_current() -> None:
    """Serve the subscriptions that exist now (blocks; the supervisor restarts it on change)."""
    from prefect import serve

    store = SubscriptionStore(open_object_store(load_settings()))
    deployments = [to_deployment(s) for s in store.list()]
    if not deployments:
        log.warning("no subscriptions yet; waiting for `droidretriever subscribe`")
        while True:
            time.sleep(3600)
    serve(*deployments, print_starting_message=True)


def main(argv: list[str] | None = None) -> None:
    """Supervise a serving child; restart it when subscriptions change."""
    parser = argparse.ArgumentParser(description="Serve DroidRetriever subscriptions.")
    parser.add_argument("--interval", type=float, default=30.0)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    logging.basicConfig(level="INFO", format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.child:
        serve_current()
        return
    store = SubscriptionStore(open_object_store(load_settings()))
    while True:
        signature = subscription_signature(store)
        child = subprocess.Popen([sys.executable, "-m", "flows.serve", "--child"])
        log.info("serving %d subscription(s) (pid %d)", len(signature), child.pid)
        try:
            while child.poll() is None and subscription_signature(store) == signature:
                time.sleep(args.interval)
        finally:
            if child.poll() is None:
                child.terminate()
                child.wait(timeout=30)


if __name__ == "__main__":
    main()
