"""Unknown paths and methods answer a typed JSON error (a hostile client's
probes: static path traversal, unknown routes, a wrong method)."""

from starlette.testclient import TestClient

from qipai.host.app import Server, create_app


def test_unknown_paths_answer_typed_json(tmp_path):
    server = Server(f"sqlite:///{tmp_path / 'q.db'}", quiet=True)
    with TestClient(create_app(server)) as c:
        for path in ("/static/../app.py", "/static/%2e%2e/app.py", "/static/nope.js", "/nope"):
            r = c.get(path)
            assert r.status_code == 404, path
            assert r.headers["content-type"].startswith("application/json"), path
            assert r.json()["error"] == "NotFound", path
        r = c.delete("/health")
        assert r.status_code == 405 and r.json()["error"] == "BadMethod"
        assert c.get("/static/page.js").status_code == 200
