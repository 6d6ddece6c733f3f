"""The image the ``Dockerfile`` builds, run with podman (as root): built,
a key made in it, started on a throwaway PostgreSQL database with that
key, a hand played by its bots to the end; the server runs as uid 10001,
its HEALTHCHECK passes, SIGHUP re-reads the keys.

The base image is ``python:3.11-slim`` when it can be pulled; on a machine
that reaches package registries only (docker.io refused), a Debian bookworm
image with its Python 3.11 made with ``debootstrap`` instead, once
(``QIPAI_PYTHON_IMAGE`` names another).  Podman runs with the settings a
container in a VM without cgroup v2 or ``CAP_SYS_RESOURCE`` needs: storage
``vfs``, ``cgroupfs``, events to a file, ``runc`` where installed (crun
refuses hybrid cgroups), explicit ulimits (raising the defaults is
refused), the host's network.  The build is given the host's CA
certificates (a TLS-intercepting proxy's) for pip and uv, mounted during
its RUN steps only: they are not in the image.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import httpx
import pytest
from hostkit import PATIENCE, free_port
from websockets.sync.client import connect

from conftest import in_ci

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
IMAGE = "localhost/qipai:test"
SLIM = "docker.io/library/python:3.11-slim"
DEBIAN = "localhost/qipai-python:3.11-bookworm"
#: the runtime flags every ``podman run`` gets
RUN = ["--network", "host", "--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096"]


def podman(*args: str, timeout: float = PATIENCE, check: bool = True,
           **kw) -> subprocess.CompletedProcess:
    cmd = ["podman", "--storage-driver", "vfs", "--cgroup-manager", "cgroupfs",
           "--events-backend", "file"]
    if shutil.which("runc"):
        cmd += ["--runtime", "runc"]
    p = subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=timeout, **kw)
    if check and p.returncode != 0:
        raise AssertionError(f"podman {' '.join(args)} exited {p.returncode}:\n"
                             f"{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return p


def logs(name: str) -> str:
    """The container's output (the server logs on standard error)."""
    p = podman("logs", name, check=False)
    return p.stdout + p.stderr


def base_image() -> str:
    """The image to build on (see the module's docstring)."""
    if os.environ.get("QIPAI_PYTHON_IMAGE"):
        return os.environ["QIPAI_PYTHON_IMAGE"]
    for image in (SLIM, DEBIAN):
        if podman("image", "exists", image, check=False).returncode == 0:
            return image
    if podman("pull", "-q", SLIM, check=False, timeout=600).returncode == 0:
        return SLIM
    if shutil.which("debootstrap") is None:
        pytest.skip(f"{SLIM} cannot be pulled and debootstrap is not installed")
    with tempfile.TemporaryDirectory() as root:
        subprocess.run(["debootstrap", "--variant=minbase",
                        "--include=python3,python3-venv,ca-certificates", "bookworm", root,
                        "http://deb.debian.org/debian"], check=True, capture_output=True,
                       timeout=1800)
        os.chmod(root, 0o755)   # the image's / (mkdtemp made it 0700: only root could enter)
        tar = subprocess.Popen(["tar", "-C", root, "-c", "."], stdout=subprocess.PIPE)
        podman("import", "-", DEBIAN, stdin=tar.stdout, timeout=1200)
        tar.wait()
    return DEBIAN


@pytest.fixture(scope="module")
def image(tmp_path_factory) -> str:
    if shutil.which("podman") is None:
        if in_ci():
            pytest.fail("QIPAI_CI is set and podman is not installed", pytrace=False)
        pytest.skip("podman is not installed")
    if os.geteuid() != 0:
        pytest.skip("the container test runs podman as root")
    base = base_image()
    cfg = tmp_path_factory.mktemp("buildcfg")
    (cfg / "pip.conf").write_text("[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n")
    (cfg / "uv.toml").write_text("native-tls = true\n")
    mounts = ["-v", "/etc/ssl/certs:/etc/ssl/certs:ro",
              "-v", f"{cfg / 'pip.conf'}:/etc/pip.conf:ro",
              "-v", f"{cfg / 'uv.toml'}:/etc/uv/uv.toml:ro"]
    podman("build", "--format", "docker", "--build-arg", f"PYTHON_IMAGE={base}", *RUN,
           *mounts, "-t", IMAGE, str(ROOT), timeout=1800)
    return IMAGE


def test_the_image_plays_a_hand_on_postgresql_with_a_key(image, pg_cluster, tmp_path):
    keys = tmp_path / "keys"
    keys.mkdir()
    os.chown(keys, 10001, 10001)
    key = podman("run", "--rm", *RUN, "-v", f"{keys}:/keys", "--entrypoint", "qipai", image,
                 "keys", "new", "ops", "--file", "/keys/keys.json").stdout.strip()
    assert key.startswith("qk_")
    db = pg_cluster.create_database()   # postgresql://postgres@/NAME?host=SOCKETDIR
    sockets = parse_qs(urlparse(db).query)["host"][0]
    port = free_port()
    name = f"qipai-test-{port}"
    podman("run", "-d", "--name", name, *RUN, "-v", f"{keys}:/keys:ro",
           "-e", f"QIPAI_HEALTH_URL=http://127.0.0.1:{port}/health",
           "-v", f"{sockets}:{sockets}", image,
           "--host", "127.0.0.1", "--port", str(port), "--db", db,
           "--keys", "/keys/keys.json", "--log-format", "json")
    url = f"http://127.0.0.1:{port}"
    try:
        end = time.monotonic() + PATIENCE
        while True:   # until it answers (an upper bound on a hang, not a timing)
            state = podman("inspect", "-f", "{{.State.Running}}", name).stdout.strip()
            assert state == "true", logs(name)
            try:
                if httpx.get(url + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < end, "the server in the container did not answer"
            time.sleep(0.2)
        auth = {"Authorization": f"Bearer {key}"}
        assert httpx.post(url + "/tables", json={"bots": [0]}).status_code == 401   # no key
        r = httpx.post(url + "/tables", json={"variant": "guilin-mahjong",
                                              "bots": [0, 1, 2, 3]}, headers=auth)
        assert r.status_code == 201, r.text
        t = r.json()
        with connect(f"ws://127.0.0.1:{port}{t['spectator']}", open_timeout=PATIENCE) as ws:
            while True:   # the bots play while someone watches
                frame = json.loads(ws.recv(timeout=PATIENCE))
                msgs = frame["messages"] if frame["type"] == "batch" else [frame]
                ended = [m for m in msgs if m["type"] == "hand_ended"]
                if ended:
                    break
        assert ended[0]["hand"] == 0 and len(ended[0]["result"]["net"]) == 4
        assert podman("exec", name, "id", "-u").stdout.strip() == "10001"
        podman("healthcheck", "run", name)   # the Dockerfile's HEALTHCHECK
        podman("kill", "-s", "HUP", name)
        end = time.monotonic() + PATIENCE
        while "keys reloaded from /keys/keys.json: 1 key" not in logs(name):
            assert time.monotonic() < end, "no reload line after SIGHUP"
            time.sleep(0.2)
    finally:
        podman("stop", "-t", "20", name, check=False, timeout=120)
        log = logs(name)
        podman("rm", "-f", name, check=False)
    lines = [json.loads(x) for x in log.splitlines() if x.startswith("{")]
    events = [x["event"] for x in lines]
    assert {"listening", "table_created", "hand_ended"} <= set(events), events
    created = next(x for x in lines if x["event"] == "table_created")
    assert created["key"] == "ops" and key not in log
