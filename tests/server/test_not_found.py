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


def test_a_table_id_that_cannot_be_one_is_unknown_without_asking_the_database(db_url,
                                                                              tmp_path):
    """A table id with a NUL, a control character, a quote or 200 characters
    is answered 404 ``UnknownTable`` on both databases, the id echoed
    escaped (``shown``): the NUL never reaches PostgreSQL's query, which
    would refuse it (503 ``Unavailable``, the id echoed raw)."""
    s = start_server(db_url, tmp_path)
    try:
        with s.http() as c:
            for tid, echoed in (("%00abc", r"'\x00abc'"), ("a%1b%5b2J", r"'a\x1b[2J'"),
                                ("x%22y", "'x\"y'"), ("z" * 200, "characters)")):
                for path in (f"/tables/{tid}", f"/tables/{tid}/records",
                             f"/tables/{tid}/records/0/replay"):
                    r = c.get(path)
                    assert r.status_code == 404, (path, r.text)
                    body = r.json()
                    assert body["error"] == "UnknownTable", (path, body)
                    assert echoed in body["message"], (path, body)
                    assert "\x00" not in body["message"] and "\x1b" not in body["message"]
            r = c.post("/tables/%00abc/close", headers={"Authorization": "Bearer x"})
            assert r.status_code == 404 and r.json()["error"] == "UnknownTable", r.text
            assert r"'\x00abc'" in r.json()["message"]
    finally:
        s.stop()
    assert "Traceback" not in s.log_path.read_text()
