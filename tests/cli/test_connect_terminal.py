"""``qipai connect`` as a player uses it, against a real ``qipai serve``:
the actions numbered from 1 (as ``qipai play --human`` numbers them), the
seconds left before the server's deadline, a typed card taken for its
discard, a one-line hint for input naming no action (nothing sent),
pass-only windows answered by themselves unless ``--no-auto-pass``, the
seat's own moves said as "you", and ``q``, the end of input and Ctrl-C
leaving cleanly (the socket closed)."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable

import pytest

from hostkit import PATIENCE, start_server
from qipai.cli import connect as client

PROMPT = re.compile(r"your choice \(1–(\d+), a card or a word; q to leave\) · (\d+) s left>")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("connect")
    s = start_server(f"sqlite:///{tmp / 'q.db'}", tmp, "--seed", "3")
    yield s
    s.stop()


def seat_url(served, seat: int = 0) -> str:
    """A new table, bots on every other seat: ``seat``'s address."""
    t = served.create(bots=[s for s in range(4) if s != seat])
    return served.ws(f"/tables/{t['id']}/ws?token={t['seats'][str(seat)]}")


class Typist:
    """The client's stdin: each line it is asked for is ``answer(offers,
    shown)``, ``offers`` the actions of the latest listing (``[(number,
    text)]``), ``shown`` all the client printed; None is the end of input."""

    def __init__(self, out: io.StringIO, answer: Callable[..., str | None]):
        self.out, self.answer = out, answer
        self.seen = 0
        self.offers: list[tuple[str, str]] = []
        self.prompts: list[str] = []

    def readline(self) -> str:
        shown = self.out.getvalue()
        new, self.seen = shown[self.seen:], len(shown)
        listed = re.findall(r"^  (\d+)  (.*)$", new, re.M)
        if listed:
            self.offers = listed
        self.prompts.append(shown.rsplit("\n", 1)[-1])
        line = self.answer(self.offers, shown)
        return "" if line is None else line + "\n"


def play(url: str, answer, **options) -> tuple[int, str, Typist]:
    """``qipai connect``'s client (``run``) at ``url``, typing ``answer``'s lines."""
    out = io.StringIO()
    typist = Typist(out, answer)
    code = client.run(url, out=out, inp=typist, **options)
    return code, out.getvalue(), typist


def connections(served) -> int:
    with served.http() as h:
        return h.get("/health").json()["connections"]


def poll(what, until):
    end = time.monotonic() + PATIENCE   # a bound on a hang, not a timing
    while not until(value := what()) and time.monotonic() < end:
        time.sleep(0.05)
    return value


def test_numbers_from_one_a_deadline_a_typed_card_and_hints(served):
    typed: list[str] = []
    discarded: list[str] = []

    def answer(offers, shown):
        if len(typed) == 2:   # the first discard offered, by its Chinese name
            text = next(t for _, t in offers if t.startswith("discard "))
            token, chinese = re.fullmatch(r"discard (\S+)\((\S+)\)", text).groups()
            discarded.append(f"{token}({chinese})")
            typed.append(chinese)
        else:  # no action, then three cards: a hint each, asked again; then leave
            typed.append(["xyz", "123m"][len(typed)] if len(typed) < 2 else "q")
        return typed[-1]

    code, out, typist = play(seat_url(served), answer)
    assert code == 0, out
    assert typed[-1] == "q" and discarded, (typed, out)
    # numbered from 1, with the time left before the server's deadline (30 s a turn)
    assert typist.offers[0][0] == "1"
    for prompt in typist.prompts:
        found = PROMPT.fullmatch(prompt.strip())
        assert found, prompt
        assert 0 <= int(found.group(2)) <= 30
    # (each after its prompt on one line: the typed line is not echoed here)
    assert "   'xyz' is not an action: type 1 to " in out, out
    assert "   '123m' is 3 cards: discard one at a time\n" in out, out
    # the typed card was discarded, said as "you"; the server refused nothing
    assert f"   you discard {discarded[0]}\n" in out, out
    assert "!!" not in out, out
    assert out.endswith("== you quit: you left the table.\n"), out
    assert poll(lambda: connections(served), lambda n: n == 0) == 0   # the socket is closed


def test_pass_only_windows_are_answered_by_themselves_unless_asked(served):
    # --no-auto-pass: asked, one action (pass), answered by Enter alone or 过
    asked: list[list[tuple[str, str]]] = []

    def answer(offers, shown):
        if [t for _, t in offers] == ["pass"] and shown.endswith("s left> "):
            asked.append(offers)
            return "" if len(asked) == 1 else "过"
        return "q" if len(asked) >= 2 else "1"

    code, out, _ = play(seat_url(served), answer, auto_pass=False)
    assert code == 0 and len(asked) >= 2, out
    assert "only move" not in out and "!!" not in out, out
    # by default: never asked, one line each
    code, out, _ = play(seat_url(served),
                        lambda offers, shown: "q" if "only move: pass" in shown else "1")
    assert code == 0, out
    assert "   only move: pass" in out.splitlines(), out
    assert not re.search(r"^  1  pass$", out, re.M), out


def qipai_connect(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "qipai", "connect", *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def until_prompt(p: subprocess.Popen) -> str:
    """What ``p`` printed up to its first prompt (a prompt ends no line)."""
    shown = b""
    while not re.search(rb"s left> $", shown):
        chunk = os.read(p.stdout.fileno(), 4096)
        assert chunk, shown.decode()   # it ended before asking
        shown += chunk
    return shown.decode()


@pytest.mark.parametrize("typed, why", [(b"q\n", "you quit"), (b"", "the input ended")])
def test_q_and_the_end_of_input_leave_the_table(served, typed, why):
    p = qipai_connect(seat_url(served))
    try:
        shown = until_prompt(p)
        assert "\n  1  " in shown and "\n  0  " not in shown, shown   # numbered from 1
        assert PROMPT.search(shown), shown
        out, err = p.communicate(typed, timeout=PATIENCE)   # then the end of input
    finally:
        p.kill()
    assert p.returncode == 0, err
    assert out.decode() == f"== {why}: you left the table.\n" and err == b"", (out, err)
    assert poll(lambda: connections(served), lambda n: n == 0) == 0


def test_ctrl_c_leaves_the_table_in_one_line(served):
    p = qipai_connect(seat_url(served))
    try:
        until_prompt(p)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=PATIENCE)
    finally:
        p.kill()
    assert p.returncode == 130, err
    assert out.decode() == "\n== interrupted (Ctrl-C): you left the table.\n", (out, err)
    assert err == b""
    assert poll(lambda: connections(served), lambda n: n == 0) == 0


def test_the_seconds_left_stay_within_the_allowance():
    """Counted from the server's ``deadline`` (Unix time); a client clock set
    otherwise than the server's shows the whole allowance, or 0, never
    nonsense."""
    now = time.time()
    left = client._seconds_left
    assert left({"deadline": now + 12.5, "timeout": 30}) in (11, 12)
    assert left({"deadline": now + 3600, "timeout": 30}) == 30
    assert left({"deadline": now - 5, "timeout": 30}) == 0
