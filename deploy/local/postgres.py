"""The stack's PostgreSQL: where its Prefect server keeps flow runs, deployments and schedules.

    <state_dir>/postgres/           0700, the server user's (below)
        data/                       the cluster, made by ``initdb`` on the first ``up``
    <state_dir>/logs/postgres.log   its log (what it writes to stderr)

Debian's PostgreSQL programs (``initdb``, ``postgres``) on ``127.0.0.1:prefect.database_port``
only (no unix socket), every connection with a password (``scram-sha-256``). The role
``prefect`` owns the database ``prefect``; its password is the generated secret
``postgres-password`` (:mod:`core.secrets`), given to ``initdb`` in a 0600 file
removed right after and to Prefect in its environment, never on a command line.

PostgreSQL refuses to run as root. Run as root, the stack runs it as Debian's ``postgres``
user (the package creates it), as the system's own service would. That user cannot reach a
folder in root's 0700 home, so the server starts in a mount namespace of its own in which
``<state_dir>/postgres`` is bind-mounted on that user's home: only the server sees the
mount, the state folder stays root's alone, and the server reads nothing of root's. Run as
any other user, the server runs as that user, on the folder itself.
"""

from __future__ import annotations

import asyncio
import os
import pwd
import shutil
import signal
import subprocess
from pathlib import Path
from typing import ClassVar

import asyncpg

from core.config import Settings
from core.private_files import write_private
from core.secrets import StackSecret
from deploy.errors import ServiceStartError
from deploy.local.probes import is_postgres_refused
from deploy.local.processes import open_log
from deploy.local.service import AuthCheck, Health, PortClaim, ProcessCommand, ProcessService

__all__ = [
    "DATABASE",
    "ROLE",
    "PostgresService",
    "describe_sqlite_left_behind",
    "find_postgres_program",
    "prefect_database_env",
    "uses_postgres",
]

ROLE = "prefect"  # the cluster's only role (its superuser): nothing but Prefect uses the cluster
DATABASE = "prefect"
_HOST = "127.0.0.1"
_SERVER_USER = "postgres"  # Debian's user for PostgreSQL servers, when the stack runs as root
_DEBIAN_PROGRAMS = Path("/usr/lib/postgresql")  # Debian keeps initdb and postgres off PATH
# Run by `unshare --mount` as root: the state folder's postgres/ on the server user's home,
# seen by this process only, then the server's own user (no supplementary groups). The cd:
# PostgreSQL goes back to its working folder at start, which that user must be able to reach.
_MOUNT_AND_DROP = (
    'mount --bind "$1" "$2" && cd "$2" && shift 2 && '
    f"exec setpriv --reuid={_SERVER_USER} --regid={_SERVER_USER} --clear-groups -- \"$@\""
)
_INSTALL_HINT = ("run scripts/setup.sh (it installs Debian's postgresql), or keep Prefect on "
                 "SQLite: DROIDRETRIEVER_PREFECT__DATABASE=sqlite")


def uses_postgres(settings: Settings) -> bool:
    """Whether the stack runs PostgreSQL for its Prefect server (one served on this host)."""
    return settings.prefect.database == "postgres" and settings.serves_here(
        settings.prefect.api_url.host)


def prefect_database_env(settings: Settings, data_dir: Path) -> dict[str, str]:
    """The Prefect server's database settings: the stack's PostgreSQL, or ``data_dir/prefect.db``.

    Prefect builds its connection URL from the parts, so no URL holding the password is
    written anywhere; the password travels in the server's environment only.
    """
    if settings.prefect.database == "sqlite":
        return {"PREFECT_API_DATABASE_CONNECTION_URL": f"sqlite+aiosqlite:///{data_dir / 'prefect.db'}"}
    password = settings.secrets.read(StackSecret.POSTGRES_PASSWORD)
    if password is None:
        raise _missing_password()
    return {
        "PREFECT_SERVER_DATABASE_DRIVER": "postgresql+asyncpg",
        "PREFECT_SERVER_DATABASE_HOST": _HOST,
        "PREFECT_SERVER_DATABASE_PORT": str(settings.prefect.database_port),
        "PREFECT_SERVER_DATABASE_USER": ROLE,
        "PREFECT_SERVER_DATABASE_NAME": DATABASE,
        "PREFECT_SERVER_DATABASE_PASSWORD": password,
    }


def describe_sqlite_left_behind(settings: Settings) -> str | None:
    """What to tell a person whose earlier stack kept Prefect on SQLite, the first time
    Prefect moves to PostgreSQL (before its cluster exists); None otherwise."""
    sqlite = settings.state_dir / "prefect" / "prefect.db"
    cluster = settings.state_dir / "postgres" / "data" / "PG_VERSION"
    if not uses_postgres(settings) or not sqlite.is_file() or cluster.exists():
        return None
    return (f"Prefect now keeps its runs in PostgreSQL ({cluster.parent.parent}). The flow runs "
            f"of earlier `up`s stay in {sqlite}, not shown in the Prefect UI and not copied: to "
            "see them, `droidretriever down`, set DROIDRETRIEVER_PREFECT__DATABASE=sqlite and "
            "`droidretriever up`; delete the file once it is not needed.")


def find_postgres_program(name: str) -> str:
    """``initdb`` or ``postgres``: on PATH, else in Debian's newest ``/usr/lib/postgresql/N/bin``."""
    found = shutil.which(name)
    if found is not None:
        return found
    versions = sorted((p for p in _DEBIAN_PROGRAMS.glob("*/bin") if p.parent.name.isdigit()),
                      key=lambda p: int(p.parent.name))
    for folder in reversed(versions):
        if (folder / name).is_file():
            return str(folder / name)
    raise ServiceStartError(f"cannot find PostgreSQL's {name!r} program", hint=_INSTALL_HINT)


def _missing_password() -> ServiceStartError:
    return ServiceStartError(
        "PostgreSQL has no password to start with",
        hint="start the stack with `droidretriever up` (it generates the secret postgres-password)",
    )


async def _ask(port: int, password: str, database: str, sql: str) -> object:
    connection = await asyncpg.connect(host=_HOST, port=port, user=ROLE, password=password,
                                       database=database, timeout=2.0)
    try:
        return await connection.fetchval(sql, timeout=5.0)
    finally:
        await connection.close()


class PostgresService(ProcessService):
    """Debian's ``postgres`` on loopback, with its cluster under ``<state_dir>/postgres``."""

    name: ClassVar[str] = "postgres"
    # Runs talk to Prefect's API, never to its database: a healthy Prefect (ours on this database,
    # or one the person runs) is what `ask` checks.
    needed_by_runs: ClassVar[bool] = False
    grace_s: ClassVar[float] = 30.0
    # "Fast" shutdown: ends the clients' sessions and checkpoints. SIGTERM ("smart") would
    # wait for every client to leave, however long.
    stop_signal: ClassVar[signal.Signals] = signal.SIGINT
    inherit_env: ClassVar[bool] = False  # the server's user must not read the CLI's environment

    @property
    def port(self) -> int:
        return self.settings.prefect.database_port

    @property
    def url(self) -> str:
        return f"postgresql://{_HOST}:{self.port}/{DATABASE}"  # role prefect; never the password

    @property
    def host(self) -> str:
        return _HOST

    def ports(self) -> tuple[PortClaim, ...]:
        return (PortClaim(port=self.port, purpose="PostgreSQL, Prefect's database",
                          setting="DROIDRETRIEVER_PREFECT__DATABASE_PORT"),)

    @property
    def cluster_dir(self) -> Path:
        return self.data_dir / "data"

    def _password(self) -> str:
        password = self.settings.secrets.read(StackSecret.POSTGRES_PASSWORD)
        if password is None:
            raise _missing_password()
        return password

    def _launch(self) -> tuple[tuple[str, ...], Path]:
        """The programs' prefix (as root: a mount namespace, then the ``postgres`` user) and
        where the server sees ``data_dir``."""
        if os.geteuid() != 0:
            return (), self.data_dir
        home = Path(self._server_user().pw_dir)
        unshare = shutil.which("unshare")
        if unshare is None:
            raise ServiceStartError("cannot find the 'unshare' program (util-linux)",
                                    hint="apt-get install util-linux mount")
        return (unshare, "--mount", "--propagation", "private", "--", "sh", "-c",
                _MOUNT_AND_DROP, "sh", str(self.data_dir), str(home)), home

    @staticmethod
    def _server_user() -> pwd.struct_passwd:
        try:
            return pwd.getpwnam(_SERVER_USER)
        except KeyError:
            raise ServiceStartError(
                f"PostgreSQL refuses to run as root and there is no {_SERVER_USER!r} user to "
                "run it as", hint=_INSTALL_HINT) from None

    def prepare(self) -> None:
        """The folder (the server user's), and the cluster the first time."""
        super().prepare()
        if os.geteuid() == 0:
            user = self._server_user()
            os.chown(self.data_dir, user.pw_uid, user.pw_gid)
        if not (self.cluster_dir / "PG_VERSION").is_file():
            self._init_cluster()

    def _init_cluster(self) -> None:
        """``initdb``: the role ``prefect`` with the generated password, password logins only."""
        prefix, seen_as = self._launch()
        password_file = self.data_dir / "initdb-password"
        write_private(password_file, self._password() + "\n")
        try:
            if os.geteuid() == 0:
                user = self._server_user()
                os.chown(password_file, user.pw_uid, user.pw_gid)
            argv = (*prefix, find_postgres_program("initdb"), "-D", str(seen_as / "data"),
                    "-U", ROLE, "--auth=scram-sha-256", f"--pwfile={seen_as / 'initdb-password'}",
                    "-E", "UTF8", "--locale=C.UTF-8", "--no-instructions")
            with open_log(self.log_path, "initdb: a new cluster") as log:
                done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=log,
                                      stderr=subprocess.STDOUT, cwd=self.data_dir, umask=0o077,
                                      env=self._environment(), timeout=300, check=False)
        finally:
            password_file.unlink(missing_ok=True)
        if done.returncode != 0:
            raise ServiceStartError(f"postgres: initdb failed (exit code {done.returncode}): "
                                    f"{self._exit_reason()}", hint=f"see its log: {self.log_path}")

    @staticmethod
    def _environment() -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "TZ": "UTC"}

    def command(self) -> ProcessCommand:
        prefix, seen_as = self._launch()
        settings = (f"listen_addresses={_HOST}", f"port={self.port}", "unix_socket_directories=",
                    "password_encryption=scram-sha-256")
        return ProcessCommand(
            argv=(*prefix, find_postgres_program("postgres"), "-D", str(seen_as / "data"),
                  *(arg for setting in settings for arg in ("-c", setting))),
            env=self._environment(),
        )

    def check_health(self) -> Health:
        try:
            asyncio.run(_ask(self.port, self._password(), "postgres", "SELECT 1"))
        except ServiceStartError as exc:
            return Health(healthy=False, detail=str(exc))
        except asyncpg.InvalidAuthorizationSpecificationError:
            return Health(healthy=False, detail="our password refused: the secret "
                          "postgres-password is not the one the cluster was made with")
        except (OSError, TimeoutError, asyncpg.PostgresError) as exc:
            return Health(healthy=False, detail=f"no connection: {type(exc).__name__}")
        return Health(healthy=True, detail=f"database {DATABASE!r} for Prefect")

    def after_healthy(self) -> None:
        """Create Prefect's database the first time (Prefect creates its tables in it)."""
        asyncio.run(self._create_database())

    async def _create_database(self) -> None:
        connection = await asyncpg.connect(host=_HOST, port=self.port, user=ROLE,
                                           password=self._password(), database="postgres",
                                           timeout=5.0)
        try:
            if not await connection.fetchval("SELECT 1 FROM pg_database WHERE datname = $1",
                                             DATABASE):
                await connection.execute(f'CREATE DATABASE "{DATABASE}"')
        finally:
            await connection.close()

    def check_auth(self) -> AuthCheck:
        refused = is_postgres_refused(_HOST, self.port, ROLE)
        if refused is None:
            return AuthCheck(required=None, detail="no answer")
        return AuthCheck(required=refused, detail="password" if refused else
                         "OPEN: a login without the password is let in")
