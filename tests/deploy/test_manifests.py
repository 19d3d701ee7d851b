"""The production manifests against the settings the application reads.

``deploy/compose.yaml`` is interpolated from ``deploy/.env.example`` as ``docker compose
config`` does (no Docker daemon or compose plugin here), its YAML merge keys resolved, and
handed to ``compose-spec`` (the Rust ``compose_spec`` parser: a spec-compliant, strict
reading of the Compose file). The Kubernetes manifests are read file by file from
``kustomization.yaml`` and checked against the Kubernetes 1.32 schemas (``kubernetes-validate``);
``kubectl kustomize`` builds them too where kubectl is installed.

For every application service or container: each ``DROIDRETRIEVER_*`` variable it gets names a
setting of :class:`core.config.Settings`, the environment loads with
``load_settings()``, and it sets what production needs (an external Redis with a password, the
S3 store with keys, Prefect with its auth, the API token, a model for each of the four roles)
plus Prefect's client settings as ``deploy.local`` gives its processes. No secret is written
in a manifest, images are pinned by tag, and every long-running service has a health check.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from compose_spec import PyCompose
from pydantic import BaseModel

from core.config import ENV_PREFIX, Settings, load_settings

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
APP_IMAGE = "droidretriever:"
K8S_VERSION = "1.32.0"
# Names of variables that hold a secret (the S3 access key is an account name, not one).
SECRET_NAME = re.compile(r"PASSWORD|SECRET|TOKEN|API_KEY|AUTH")
PLACEHOLDER = "change-me"


# ---------------------------------------------------------------------------- the settings


def setting_env_names(model: type[BaseModel] = Settings, prefix: str = ENV_PREFIX) -> set[str]:
    """Every environment variable a leaf setting is read from (sections joined with ``__``)."""
    names: set[str] = set()
    for name, field in model.model_fields.items():
        annotation = field.annotation
        env = prefix + name.upper()
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            names |= setting_env_names(annotation, env + "__")
        else:
            names.add(env)
    return names


VALID_NAMES = setting_env_names() | {f"{ENV_PREFIX}CONFIG"}


def test_setting_names_come_from_the_model() -> None:
    assert "DROIDRETRIEVER_REDIS__URL" in VALID_NAMES
    assert "DROIDRETRIEVER_LLM__NAVIGATOR__BASE_URL" in VALID_NAMES
    assert "DROIDRETRIEVER_API_TOKEN" in VALID_NAMES
    assert "DROIDRETRIEVER_REDIS" not in VALID_NAMES  # a section is not a leaf setting
    assert "DROIDRETRIEVER_REDIS__URI" not in VALID_NAMES


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No ``DROIDRETRIEVER_*`` or ``PREFECT_*`` variable of the test run leaks into a check."""
    for name in list(os.environ):
        if name.startswith((ENV_PREFIX, "PREFECT_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(DEPLOY)  # no droidretriever.toml there
    return monkeypatch


def check_app_env(env: dict[str, str], where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """What one application process gets is read, complete and consistent with Prefect's client."""
    unknown = sorted(n for n in env if n.startswith(ENV_PREFIX) and n not in VALID_NAMES)
    assert not unknown, f"{where}: not settings of core/config.py: {unknown}"
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    try:
        settings = load_settings()
    finally:
        for name in env:
            monkeypatch.delenv(name)
    assert not settings.redis.managed and settings.redis.has_password, where
    assert not settings.s3.managed and settings.s3.has_credentials, where
    assert not settings.prefect.managed and settings.prefect.auth_string is not None, where
    assert settings.api_token is not None, where
    for role in ("decomposer", "navigator", "evaluator", "synthesizer"):
        endpoint = getattr(settings.llm, role)
        assert endpoint.configured, f"{where}: no model for the {role}"
        assert endpoint.api_key.get_secret_value() != "EMPTY", f"{where}: {role} sends no key"
    assert settings.llm.navigator.vision and settings.llm.evaluator.vision, where
    for name, value in settings.prefect.client_env().items():
        if name.startswith("PREFECT_"):
            assert env.get(name) == value, f"{where}: {name} should be {value!r} as deploy.local sets it"


# ---------------------------------------------------------------------------- compose


def read_env_file(path: Path) -> dict[str, str]:
    """``KEY=value`` lines (comments and blank lines skipped), as compose reads ``--env-file``."""
    pairs = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            pairs[key.strip()] = value.strip()
    return pairs


_VARIABLE = re.compile(r"\$\$|\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}")


def interpolate(text: str, variables: dict[str, str]) -> str:
    """Compose's interpolation: ``${X}``, ``${X:-default}``, ``${X:?error}``, ``$$`` for ``$``."""

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name, op, arg = match.group("name", "op", "arg")
        value = variables.get(name)
        if op in (":-", "-") and not (value if op == ":-" else value is not None):
            return arg
        if op in (":?", "?") and not (value if op == ":?" else value is not None):
            raise ValueError(f"required variable {name} is missing: {arg}")
        return value or ""

    return _VARIABLE.sub(replace, text)


def load_compose(text: str, variables: dict[str, str]) -> dict[str, Any]:
    """The file as ``docker compose config`` resolves it: interpolated, merge keys applied."""
    document = yaml.safe_load(interpolate(text, variables))
    return {key: value for key, value in document.items() if not key.startswith("x-")}


@pytest.fixture(scope="module")
def compose_text() -> str:
    return (DEPLOY / "compose.yaml").read_text()


@pytest.fixture(scope="module")
def compose(compose_text: str) -> dict[str, Any]:
    return load_compose(compose_text, read_env_file(DEPLOY / ".env.example"))


def app_services(compose: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The services that run application code (the project's image, not the bare adb server)."""
    for name, service in compose["services"].items():
        if service["image"].startswith(APP_IMAGE) and service["command"][0] != "adb":
            yield name, service


def test_compose_file_is_accepted_by_a_compose_spec_parser(compose: dict[str, Any]) -> None:
    parsed = PyCompose.from_yaml(yaml.safe_dump(compose))
    parsed.validate()
    assert {"redis", "minio", "minio-init", "postgres", "prefect", "api", "runner",
            "subscriptions", "farm-monitor", "vllm-vision", "vllm-text", "adb", "worker-usb-1",
            "emulator-1", "worker-emulator-1"} <= set(parsed.service_names())


def test_the_parser_refuses_what_compose_refuses(compose: dict[str, Any]) -> None:
    """The check can fail: an unknown key and an unpinned-by-syntax image are errors."""
    broken = {**compose, "services": {**compose["services"],
                                      "api": {**compose["services"]["api"], "restart_policy": "always"}}}
    with pytest.raises(ValueError, match="restart_policy"):
        PyCompose.from_yaml(yaml.safe_dump(broken))
    with pytest.raises(ValueError, match="REDIS_PASSWORD"):
        load_compose((DEPLOY / "compose.yaml").read_text(), {})


def test_every_app_service_gets_the_settings_production_needs(
    compose: dict[str, Any], clean_env: pytest.MonkeyPatch
) -> None:
    services = dict(app_services(compose))
    assert {"api", "runner", "subscriptions", "farm-monitor", "worker-usb-1",
            "worker-emulator-1"} <= set(services)
    for name, service in services.items():
        env = {key: str(value) for key, value in service["environment"].items()}
        check_app_env(env, f"compose service {name}", clean_env)


def test_compose_writes_no_secret(compose_text: str) -> None:
    """Each secret comes from deploy/.env: written as ``${VAR}``, never as a value."""
    raw = yaml.safe_load(compose_text)
    for name, service in raw["services"].items():
        env = service.get("environment") or {}
        for key, value in env.items():
            if key == "<<":
                continue
            if SECRET_NAME.search(key) or (key.endswith("REDIS__URL") or key.endswith("BROKER_URL")):
                assert "${" in str(value), f"{name}: {key} is written in the file"
    for key, value in raw["x-app-env"].items():
        if SECRET_NAME.search(key) or key.endswith("REDIS__URL"):
            assert "${" in str(value), f"x-app-env: {key} is written in the file"
    for key, value in read_env_file(DEPLOY / ".env.example").items():
        if SECRET_NAME.search(key):
            assert value in ("", PLACEHOLDER) or value.endswith(":" + PLACEHOLDER), key


def test_compose_images_are_pinned_and_services_checked(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        image = service["image"]
        tag = image.rpartition(":")[2] if ":" in image.rpartition("/")[2] else ""
        assert tag and tag != "latest", f"{name}: image {image} is not pinned by tag"
        if service.get("restart") == "no":  # a one-off init container
            continue
        assert service.get("restart") == "unless-stopped", f"{name}: no restart policy"
        assert service.get("healthcheck", {}).get("test"), f"{name}: no health check"


def test_compose_reserves_a_gpu_for_each_model_server(compose: dict[str, Any]) -> None:
    for name in ("vllm-vision", "vllm-text"):
        devices = compose["services"][name]["deploy"]["resources"]["reservations"]["devices"]
        assert devices[0]["capabilities"] == ["gpu"], name


# ---------------------------------------------------------------------------- kubernetes


def k8s_resources() -> list[dict[str, Any]]:
    """Every document of the files ``kustomization.yaml`` lists, plus the generated Secrets."""
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    documents = [doc for file in kustomization["resources"]
                 for doc in yaml.safe_load_all((K8S / file).read_text()) if doc]
    for generator in kustomization["secretGenerator"]:
        data: dict[str, str] = {}
        for env_file in generator["envs"]:
            data |= read_env_file(K8S / f"{env_file}.example")
        documents.append({"apiVersion": "v1", "kind": "Secret",
                          "metadata": {"name": generator["name"]}, "stringData": data})
    return documents


def pod_containers(resource: dict[str, Any]) -> list[dict[str, Any]]:
    spec = resource.get("spec", {})
    template = spec.get("jobTemplate", {}).get("spec", spec).get("template", {})
    return list(template.get("spec", {}).get("containers", []))


def container_env(container: dict[str, Any], resources: list[dict[str, Any]]) -> dict[str, str]:
    """What the container's process gets: envFrom (ConfigMap, Secret) then env, resolved."""
    by_name = {(r["kind"], r["metadata"]["name"]): r for r in resources}
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            env |= by_name[("ConfigMap", source["configMapRef"]["name"])]["data"]
        else:
            env |= by_name[("Secret", source["secretRef"]["name"])]["stringData"]
    for item in container.get("env", []):
        if "value" in item:
            env[item["name"]] = re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), "pod-0"),
                                       item["value"])
        elif "secretKeyRef" in item["valueFrom"]:
            ref = item["valueFrom"]["secretKeyRef"]
            env[item["name"]] = by_name[("Secret", ref["name"])]["stringData"][ref["key"]]
        elif "configMapKeyRef" in item["valueFrom"]:
            ref = item["valueFrom"]["configMapKeyRef"]
            env[item["name"]] = by_name[("ConfigMap", ref["name"])]["data"][ref["key"]]
        else:
            env[item["name"]] = "pod-0"  # a fieldRef: the pod's name
    return env


def test_manifests_match_the_kubernetes_schemas() -> None:
    resources = k8s_resources()
    kinds = {r["kind"] for r in resources}
    assert {"Namespace", "ConfigMap", "Secret", "StatefulSet", "Deployment", "Service", "Ingress",
            "Job", "PersistentVolumeClaim"} <= kinds
    for resource in resources:
        kubernetes_validate.validate(resource, K8S_VERSION, strict=True)
    typo = {**resources[0], "spec": {"finalizerz": []}}  # the check can fail
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(typo, K8S_VERSION, strict=True)


def test_every_app_container_gets_the_settings_production_needs(
    clean_env: pytest.MonkeyPatch,
) -> None:
    resources = k8s_resources()
    checked = []
    for resource in resources:
        for container in pod_containers(resource):
            if not container["image"].startswith(APP_IMAGE) or container["args"][0] == "adb":
                continue
            where = f"{resource['kind']} {resource['metadata']['name']}/{container['name']}"
            check_app_env(container_env(container, resources), where, clean_env)
            checked.append(resource["metadata"]["name"])
    assert {"api", "runner", "subscriptions", "farm-monitor", "device-pool-a", "emulator"} <= set(checked)


def test_manifests_write_no_secret() -> None:
    """Secrets come from the generated Secrets (env files git ignores), never inline values."""
    for resource in k8s_resources():
        if resource["kind"] == "Secret":
            for key, value in resource["stringData"].items():
                if SECRET_NAME.search(key) or "://" in value:
                    assert value == "" or PLACEHOLDER in value, f"{key} holds a value"
            continue
        if resource["kind"] == "ConfigMap":
            secret_keys = [k for k in resource["data"] if SECRET_NAME.search(k) or "REDIS" in k]
            assert not secret_keys, f"secrets in the ConfigMap: {secret_keys}"
        for container in pod_containers(resource):
            for item in container.get("env", []):
                if SECRET_NAME.search(item["name"]):
                    assert "value" not in item, f"{resource['metadata']['name']}: {item['name']}"
    ignored = subprocess.run(["git", "check-ignore", "deploy/k8s/app-secrets.env",
                              "deploy/k8s/store-secrets.env", "deploy/.env"],
                             cwd=ROOT, capture_output=True, text=True, check=False).stdout.split()
    assert len(ignored) == 3, "the files that hold the real secrets must be ignored by git"


def test_k8s_images_are_pinned_and_containers_probed() -> None:
    for resource in k8s_resources():
        for container in pod_containers(resource):
            where = f"{resource['metadata']['name']}/{container['name']}"
            tag = container["image"].rpartition(":")[2]
            assert ":" in container["image"] and tag != "latest", f"{where}: not pinned"
            if resource["kind"] == "Job":
                continue
            probes = {"livenessProbe", "readinessProbe", "startupProbe"} & set(container)
            assert probes, f"{where}: no probe"


def test_emulators_and_models_land_on_the_right_nodes() -> None:
    by_name = {r["metadata"]["name"]: r for r in k8s_resources() if r["kind"] != "Secret"}
    emulator = by_name["emulator"]["spec"]["template"]["spec"]
    assert emulator["nodeSelector"] == {"droidretriever.io/kvm": "true"}
    assert emulator["tolerations"]
    for name in ("vllm-vision", "vllm-text"):
        container = by_name[name]["spec"]["template"]["spec"]["containers"][0]
        assert container["resources"]["limits"]["nvidia.com/gpu"] == "1", name


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kustomize_builds_the_manifests(tmp_path: Path) -> None:
    build = tmp_path / "k8s"
    shutil.copytree(K8S, build)
    for example in build.glob("*.env.example"):
        shutil.copy(example, build / example.name.removesuffix(".example"))
    result = subprocess.run(["kubectl", "kustomize", str(build)], capture_output=True, text=True,
                            check=False, timeout=60)
    assert result.returncode == 0, result.stderr
    built = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    assert all(doc["metadata"].get("namespace") == "droidretriever" for doc in built
               if doc["kind"] != "Namespace")
    assert len(built) == len(k8s_resources())


# ---------------------------------------------------------------------------- the image


def test_the_image_installs_every_package_as_a_user() -> None:
    """The Dockerfile copies each package pyproject.toml installs, pins its base, and drops root."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = {p.rstrip("*") for p in project["tool"]["setuptools"]["packages"]["find"]["include"]}
    lines = [line.split() for line in (ROOT / "Dockerfile").read_text().splitlines()
             if line and not line.startswith("#")]
    copied = {words[1] for words in lines if words[0] == "COPY"}
    assert packages <= copied, f"not copied into the image: {sorted(packages - copied)}"
    base = next(words[1] for words in lines if words[0] == "FROM")
    assert ":" in base and not base.endswith(":latest"), base
    assert [words[1] for words in lines if words[0] == "USER"] == ["droidretriever"]
    assert any(w[:2] == ["RUN", "pip"] and "constraints.txt" in w for w in lines)
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    assert not packages & set(ignored) and {".venv", ".git", "deploy/.env"} <= set(ignored)
