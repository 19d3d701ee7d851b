"""``python -m droidretriever.api``: serve the API and dashboard (the local stack's ``api`` service)."""

from __future__ import annotations

import logging

import uvicorn

from core.config import load_settings
from droidretriever.api.app import create_app


def main() -> None:
    """Serve on ``api.host:api.port`` with the settings of the environment."""
    settings = load_settings()
    logging.basicConfig(level="INFO", format="%(asctime)s %(name)s %(levelname)s %(message)s")
    # No access log: a login link's one-time code is in its URL, and URLs are all it would add.
    uvicorn.run(create_app(settings), host=settings.api.host, port=settings.api.port,
                log_level="warning", access_log=False, ws="websockets-sansio", proxy_headers=False,
                timeout_graceful_shutdown=5)


if __name__ == "__main__":
    main()
