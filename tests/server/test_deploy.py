"""The production kit's files (docs/howto/run-in-production.md) are well
formed: the Dockerfile parses and its ENTRYPOINT/CMD, compose.yaml's
command and the systemd unit's ExecStart are real ``qipai serve`` option
sets (parsed by the click command itself); compose.yaml is YAML with its
three services; the unit passes ``systemd-analyze verify`` and the
Caddyfile ``caddy validate`` where those tools are installed."""

from __future__ import annotations

import configparser
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
import yaml
from dockerfile_parse import DockerfileParser

from qipai.cli.serve import serve

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def serve_options(args: list[str]) -> dict:
    """``args`` parsed as ``qipai serve`` options (their callbacks and types
    run); raises ``click.UsageError``/``BadParameter`` if they are not."""
    ctx = serve.make_context("serve", list(args))
    return ctx.params


def instructions(path: Path) -> list[tuple[str, str]]:
    d = DockerfileParser(str(path))
    return [(i["instruction"], i["value"]) for i in d.structure if i["instruction"] != "COMMENT"]


def test_the_dockerfile_runs_qipai_serve_on_all_addresses_with_keys():
    d = DockerfileParser(str(ROOT / "Dockerfile"))
    assert d.is_multistage and d.baseimage == "python:3.11-slim"
    steps = instructions(ROOT / "Dockerfile")
    last = max(i for i, (ins, _) in enumerate(steps) if ins == "FROM")
    final = dict(steps[last:])   # the runtime stage (one of each instruction asserted)
    assert final["USER"] == "qipai"
    assert json.loads(final["VOLUME"]) == ["/data"]
    assert "CMD" in final["HEALTHCHECK"]
    entry, cmd = json.loads(final["ENTRYPOINT"]), json.loads(final["CMD"])
    assert entry == ["qipai", "serve"]
    opts = serve_options(cmd)
    assert opts["host"] == "0.0.0.0" and opts["keys_file"] == "/keys/keys.json"
    assert opts["db"].startswith("sqlite:////data/") and opts["log_format"] == "json"
    assert "QIPAI_HEALTH_URL" in final["HEALTHCHECK"]
    assert f"QIPAI_HEALTH_URL=http://127.0.0.1:{opts['port']}/health" in final["ENV"]
    # installed from the lock, with the serve extra, none of the dev groups
    syncs = [v for ins, v in steps if ins == "RUN" and "uv sync" in v]
    assert syncs and all("--locked" in v and "--extra serve" in v and "--no-default-groups" in v
                         for v in syncs)
    assert ("COPY", "--from=build /app/venv /app/venv") in steps


def test_the_dockerignore_lets_in_what_the_image_needs_only():
    lines = [x for x in (ROOT / ".dockerignore").read_text().splitlines()
             if x and not x.startswith("#")]
    assert lines[0] == "*"
    copied = {src for ins, v in instructions(ROOT / "Dockerfile") if ins == "COPY"
              and not v.startswith("--from") for src in v.split()[:-1]}
    assert {f"!{x}" for x in copied} <= {x.rstrip("/") for x in lines}, (copied, lines)


def test_compose_builds_the_dockerfile_behind_caddy_with_postgresql():
    doc = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = doc["services"]
    assert set(services) == {"qipai", "postgres", "caddy"}
    q = services["qipai"]
    build = q["build"]
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == ROOT / "Dockerfile"
    opts = serve_options(q["command"])
    assert opts["db"].startswith("postgresql://") and opts["db"].endswith("@postgres/qipai")
    assert opts["keys_file"].startswith("/keys/") and opts["host"] == "0.0.0.0"
    # X-Forwarded-For believed from Caddy's fixed address only
    caddy_ip = services["caddy"]["networks"]["backend"]["ipv4_address"]
    assert opts["forwarded_allow_ips"] == caddy_ip
    assert "ports" not in q and "ports" not in services["postgres"]   # only Caddy published
    assert "./Caddyfile:/etc/caddy/Caddyfile:ro" in services["caddy"]["volumes"]
    assert (DEPLOY / "Caddyfile").is_file()
    assert services["postgres"]["image"].startswith("postgres:")


def unit(path: Path) -> configparser.ConfigParser:
    # systemd allows a key more than once (the last wins here; the test only reads ExecStart)
    cp = configparser.ConfigParser(strict=False, interpolation=None)
    cp.optionxform = str   # keys are case-sensitive
    cp.read_string(path.read_text())
    return cp


def test_the_systemd_unit_runs_qipai_serve_hardened_and_reloads_with_sighup():
    u = unit(DEPLOY / "qipai.service")
    s = u["Service"]
    args = shlex.split(s["ExecStart"].replace("\\\n", " "))
    assert args[0].endswith("/bin/qipai") and args[1] == "serve"
    opts = serve_options(args[2:])
    assert opts["keys_file"] and opts["forwarded_allow_ips"]
    assert opts["db"].startswith("sqlite:////var/lib/qipai/")
    assert s["StateDirectory"] == "qipai" and s["ProtectSystem"] == "strict"
    assert s["Restart"] == "on-failure" and "-HUP $MAINPID" in s["ExecReload"]
    assert s["NoNewPrivileges"] == "yes" and u["Install"]["WantedBy"] == "multi-user.target"


def test_the_systemd_unit_passes_systemd_analyze_verify(tmp_path):
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    # the unit's ExecStart pointed at this environment's qipai (verify checks it exists)
    qipai = Path(sys.executable).parent / "qipai"
    text = (DEPLOY / "qipai.service").read_text().replace("/opt/qipai/bin/qipai", str(qipai))
    path = tmp_path / "qipai.service"
    path.write_text(text)
    p = subprocess.run(["systemd-analyze", "verify", str(path)], capture_output=True,
                       text=True, timeout=60, check=False)
    ours = [x for x in p.stderr.splitlines() if "qipai.service" in x]
    assert p.returncode == 0 and not ours, p.stderr   # (an unknown key is a warning only)


def test_the_caddyfile_passes_caddy_validate():
    if shutil.which("caddy") is None:
        pytest.skip("caddy is not installed")
    p = subprocess.run(["caddy", "validate", "--adapter", "caddyfile", "--config",
                        str(DEPLOY / "Caddyfile")], capture_output=True, text=True, timeout=60,
                       check=False, env={**os.environ, "QIPAI_DOMAIN": "qipai.example.org"})
    assert p.returncode == 0, p.stdout + p.stderr
    p = subprocess.run(["caddy", "adapt", "--adapter", "caddyfile", "--config",
                        str(DEPLOY / "Caddyfile")], capture_output=True, text=True, timeout=60,
                       check=False, env={**os.environ, "QIPAI_DOMAIN": "qipai.example.org"})
    routes = json.dumps(json.loads(p.stdout))
    assert "qipai.example.org" in routes and '"dial": "qipai:8000"' in routes


def test_an_option_set_that_is_not_qipai_serve_s_fails_the_check():
    with pytest.raises(click.UsageError):
        serve_options(["--host", "0.0.0.0", "--no-such-option"])
    with pytest.raises(click.BadParameter):
        serve_options(["--forwarded-allow-ips", "caddy"])


def test_the_cluster_caddyfile_hashes_over_the_nodes_and_names_each():
    if shutil.which("caddy") is None:
        pytest.skip("caddy is not installed")
    path = str(DEPLOY / "cluster" / "Caddyfile")
    env = {**os.environ, "QIPAI_DOMAIN": "qipai.example.org"}
    p = subprocess.run(["caddy", "validate", "--adapter", "caddyfile", "--config", path],
                       capture_output=True, text=True, timeout=60, check=False, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    p = subprocess.run(["caddy", "adapt", "--adapter", "caddyfile", "--config", path],
                       capture_output=True, text=True, timeout=60, check=False, env=env)
    routes = json.dumps(json.loads(p.stdout))
    assert '"policy": "uri_hash"' in routes
    for n in (1, 2, 3):   # each node's own site: its --advertise address
        assert f"n{n}.qipai.example.org" in routes and f'"dial": "qipai-{n}:8000"' in routes
