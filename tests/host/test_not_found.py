"""Unknown paths and methods answer a typed JSON error (a hostile client's
probes: static path traversal, unknown routes, a wrong method), asked of a
real ``qipai serve`` process over HTTP."""

import httpx

from hostkit import start_server


def test_unknown_paths_answer_typed_json(tmp_path):
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path)
    try:
        with s.http() as c:
            for path in ("/static/../app.py", "/static/%2e%2e/app.py", "/static/nope.js",
                         "/nope", "/tables/x/nope", "/static/%2e%2e/%2e%2e/pyproject.toml"):
                r = c.get(path)
                assert r.status_code == 404, path
                assert r.headers["content-type"].startswith("application/json"), path
                assert r.json()["error"] == "NotFound", path
            r = c.delete("/health")
            assert r.status_code == 405 and r.json()["error"] == "BadMethod"
            r = c.put("/tables")
            assert r.status_code == 405 and r.json()["error"] == "BadMethod"
            assert c.get("/static/page.js").status_code == 200
        # httpx resolves "/static/../app.py" itself: send the dots as they are
        with httpx.Client(base_url=s.url) as raw:
            req = raw.build_request("GET", "/")
            req.url = req.url.copy_with(raw_path=b"/static/../app.py")
            r = raw.send(req)
            assert r.status_code == 404 and r.json()["error"] == "NotFound"
    finally:
        s.stop()
