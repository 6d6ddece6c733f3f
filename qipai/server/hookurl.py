"""A webhook's URL: checked (:func:`check_url`) and shown (:func:`shown_url`)
— of ``qipai serve --webhook`` and of a key's webhook in the keys file
(:mod:`qipai.server.keys`, also read by ``qipai keys``, which needs no
more than qipai's core dependencies)."""

from __future__ import annotations

from urllib.parse import urlsplit


def check_url(url: str, what: str = "--webhook") -> str | None:
    """None if ``url`` is an absolute http(s) URL that httpx can send to,
    else why not (one line starting with ``what``, the option or the keys
    file's key it came from; the URL itself is not repeated: it may hold a
    password).  A port that is not 1–65535, or a character httpx refuses,
    is caught here, at start, not at every attempt of every event."""
    if not isinstance(url, str):
        return f"{what} must be a URL (a string), not {type(url).__name__}"
    try:
        parts = urlsplit(url)
        port = parts.port   # (parsed when asked: "Port out of range 0-65535")
    except ValueError as exc:
        return f"{what} is not a URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return (f"{what} must be an http:// or https:// URL, not "
                f"{(parts.scheme + ':') if parts.scheme else 'one without a scheme'}")
    if not parts.hostname:
        return f"{what} must name a host (http://HOST[:PORT]/PATH)"
    if port == 0:
        return f"{what}'s port must be 1 to 65535, not 0"
    try:
        import httpx
    except ModuleNotFoundError:   # (qipai keys without the serve extra: checked at serve)
        return None
    try:
        httpx.URL(url)
    except httpx.InvalidURL as exc:
        return f"{what} is not a URL ({exc})"
    return None


def shown_url(url: str) -> str:
    """``url`` as a log line or ``qipai keys list`` shows it: a password in
    it replaced by ``***`` (the rest is the operator's own address)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=f"{parts.username}:***@{host}").geturl()
