"""Where the hands are played: a pool of local processes, or Ray tasks.

Both run the same task function — ``qipai simulate``'s :func:`_play_task`
(a range of hand indices under every ruleset, its rows as MessagePack) by
default, ``qipai arena``'s :func:`qipai.sim.arena._arena_task` when given
— and hand each finished task to the caller's ``take``; both return True
when Ctrl-C stopped them.  A task function must be a module-level function
(the pool pickles it by name, Ray ships it).  Ray is the
optional extra ``qipai[ray]``; a cluster's workers need qipai installed.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import signal
import socket
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from qipai.bots.registry import BotFault
from qipai.core.extras import require
from qipai.sim import RayUnavailable
from qipai.sim.rows import _ROWS_ENCODER, RulesetSpec, _play_rows, _warm


def _play_task(task: tuple[tuple[RulesetSpec, ...], str, int, int, int, Any]) -> bytes:
    """A worker's task (pool or Ray): :func:`_play_rows` as MessagePack (its
    rows, or with ``--decisions`` its rows and decisions).

    The parent turns each task's rows into an Arrow record batch as it
    arrives (:func:`_batch`): the workers never import pyarrow (about 0.6 s
    of CPU a process), and the parent's import and conversions run while the
    workers play, instead of before them."""
    return _ROWS_ENCODER.encode(_play_rows(task))


def _worker_init(rulesets: Sequence[RulesetSpec] = ()) -> None:
    """A pool worker: Ctrl-C is the parent's to handle; SIGTERM (what
    ``Pool.terminate`` sends) ends it, whatever handler the parent had.  The
    rulesets are built once per worker, before its first task (free under
    ``fork``, which inherits the parent's; a ``spawn`` or ``forkserver``
    worker builds its own here)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _block_signals(False)  # blocked while the pool started (_run_pool)
    _warm(rulesets)


def _block_signals(block: bool) -> None:
    """Block (or unblock) SIGINT and SIGTERM in this thread, where the OS can."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK if block else signal.SIG_UNBLOCK,
                               {signal.SIGINT, signal.SIGTERM})


def _run_pool(tasks: Iterable[Any], take: Callable[[Any], None], workers: int,
              rulesets: Sequence[RulesetSpec],
              play: Callable[[Any], bytes] | None = None) -> bool:
    """The tasks on a process pool, each run by ``play`` (default
    :func:`_play_task`); True if Ctrl-C stopped it."""
    import gc
    import multiprocessing

    # Forked workers share the parent's heap (tables, memos) copy-on-write;
    # frozen, the workers' garbage collector does not touch (and so copy)
    # every page of it.  SIGINT and SIGTERM are blocked meanwhile, in the
    # parent and so in the workers it forks: a Ctrl-C then (the terminal
    # sends it to every process of the group) or a SIGTERM of
    # Pool.terminate reaches a worker only once its initializer has set
    # what they do there, instead of the parent's handler raising
    # KeyboardInterrupt in it (a traceback); the parent gets it when the
    # pool is whole, to terminate it.
    _block_signals(True)
    gc.freeze()
    try:
        pool = multiprocessing.get_context().Pool(workers, initializer=_worker_init,
                                                  initargs=(list(rulesets),))
    except BaseException:
        _block_signals(False)
        raise
    finally:
        gc.unfreeze()
    try:
        _block_signals(False)  # a Ctrl-C held back arrives here
        for part in pool.imap_unordered(play or _play_task, tasks):
            take(part)
        pool.close()
        pool.join()
    except KeyboardInterrupt:
        _terminate(pool)
        return True
    except Exception:  # a task's (a BotFault): no worker plays on
        _terminate(pool)
        raise
    return False


#: Seconds :func:`_terminate` gives ``Pool.terminate``: it takes milliseconds,
#: unless a worker was killed while it held a queue's lock.
TERMINATE_WAIT_S = 5.0


def _terminate(pool: Any) -> None:
    """Stop the pool's workers at once (Ctrl-C).  ``Pool.terminate`` kills
    them (SIGTERM), then joins its own threads — one of which may wait for
    ever on the result queue's lock when a worker was killed while sending a
    result (seen: the Ctrl-C test hung).  It runs in a thread of its own and
    is given :data:`TERMINATE_WAIT_S`: the workers are dead by then, and
    what is left is only the pool's threads (daemons)."""
    done = threading.Thread(target=lambda: (pool.terminate(), pool.join()), daemon=True,
                            name="qipai-pool-terminate")
    done.start()
    done.join(TERMINATE_WAIT_S)


# --------------------------------------------------------------------------
# Ray


#: Seconds the workers of a Ray instance get to run a first task before
#: :func:`start_ray` gives up with :class:`RayUnavailable` (a worker that
#: cannot start is otherwise retried by Ray forever: the run would hang).
RAY_WORKER_TIMEOUT_S = 120.0


#: Ray's switch for its ``uv run`` hook (see :func:`import_ray`).
RAY_UV_HOOK = "RAY_ENABLE_UV_RUN_RUNTIME_ENV"


def import_ray(local: bool) -> Any:
    """Import Ray; for a ``local`` instance, with its ``uv run`` hook off.

    Ray (2.43 and later) sees a driver started by ``uv run`` and gives its
    workers a runtime environment that runs ``uv run …`` again in a copy of
    the project; on a local instance those workers start slowly or never
    (the copy's environment lacks the extras, e.g. Ray itself), and the run
    hangs.  A local instance's workers need nothing but this interpreter, so
    unless the user has set it, :data:`RAY_UV_HOOK` is set to ``0`` before
    Ray is imported (Ray reads it once, when imported).  For a cluster the
    variable is left alone: the hook is how a ``uv run`` driver ships the
    project to nodes that lack it.

    Raises:
        MissingExtra: Ray is not installed (extra ``qipai[ray]``).
    """
    if local:
        os.environ.setdefault(RAY_UV_HOOK, "0")
    return require("ray", "ray")


def _ray_ready(rulesets: Sequence[RulesetSpec]) -> int:
    """A Ray worker's first task: build the rulesets (as a pool worker's
    initializer does) and say which process it is."""
    _warm(rulesets)
    return os.getpid()


#: How long to wait for a TCP answer at a ``HOST:PORT`` Ray address before
#: ``ray.init`` (seconds): see :func:`probe_ray_address`.
RAY_PROBE_S = 5.0


_HOST_PORT = re.compile(r"^(?:ray://)?(\[[^\]]+\]|[^:/\[\]\s]+):(\d{1,5})$")


def probe_ray_address(address: str, timeout: float = RAY_PROBE_S, where: str = "") -> None:
    """For a ``HOST:PORT`` or ``ray://HOST:PORT`` address, check that
    something answers there (a TCP connection) before ``ray.init`` is asked:
    Ray itself retries a cluster that is not there for about 14 minutes.
    Other addresses (``auto``, ``local`` …) are left to Ray.  ``where``:
    how the message names the cluster (default ``at ADDRESS``).

    Raises:
        RayUnavailable: nothing answers at HOST:PORT within ``timeout``
            seconds (refused, unreachable, no such host), or PORT is not
            1..65535.  (Something that answers but is not Ray is left to
            Ray, which retries it for as long.)
    """
    m = _HOST_PORT.match(address.strip())
    if m is None:
        return
    host, port = m.group(1).strip("[]"), int(m.group(2))
    where = where or f"at {address}"
    if not 0 < port < 65536:
        raise RayUnavailable(f"Ray {where} did not start: {port} is not a port (1..65535)",
                             address)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return
    except OSError as exc:
        why = exc.strerror or (type(exc).__name__ if not str(exc) else str(exc))
        if isinstance(exc, (TimeoutError, socket.timeout)):
            why = f"no answer within {timeout:g} s"
        raise RayUnavailable(f"Ray {where} did not start: nothing answers at "
                             f"{m.group(1)}:{port} ({why}); is a cluster running there "
                             f"(ray start --head)?", address) from None


def ray_target(address: str) -> str:
    """The address ``ray.init`` connects to for ``address``: the
    ``RAY_ADDRESS`` environment variable when it is set and ``address`` is
    ``""`` (no address: a local instance otherwise) or ``"auto"`` — Ray's
    own rule —, else ``address``.  ``""``: a new local instance."""
    env = os.environ.get("RAY_ADDRESS", "").strip()
    return env if env and address.strip() in ("", "auto") else address


def start_ray(address: str, workers: int, rulesets: Sequence[RulesetSpec] = (),
              timeout: float | None = None) -> bool:
    """Connect to Ray and check that its workers start.

    ``address``: ``""`` for a new local instance with ``workers`` CPUs, else
    the address for ``ray.init`` (``auto``, ``ray://host:10001`` …); with
    ``RAY_ADDRESS`` set, ``""`` and ``auto`` are that address
    (:func:`ray_target`).  If Ray
    is already initialised in this process it is used as it is.  Then
    ``workers`` tasks build the ``rulesets`` on Ray's workers, waited for at
    most ``timeout`` seconds (default :data:`RAY_WORKER_TIMEOUT_S`).

    Returns: True if this call started Ray (the caller shuts it down).

    ``ray.init`` installs Ray's own SIGTERM handler (it exits at once); a
    handler the caller had installed (``qipai simulate``'s, which keeps the
    finished chunks) is put back once ``ray.init`` returns, and a SIGTERM
    that Ray's handler took during ``ray.init`` is handed to it (a local
    node half started then may leave processes until the interpreter
    exits: ``qipai simulate`` exits next).  A ``HOST:PORT`` address is
    probed first (:func:`probe_ray_address`).

    Raises:
        MissingExtra: Ray is not installed.
        RayUnavailable: ``ray.init`` failed (no cluster at the address; a
            local node timing out while it starts its agents on a loaded
            machine), or no task finished in time: the workers did not
            start (Ray is shut down again if this call started it).
    """
    given, address = address, ray_target(address)
    ray = import_ray(not address)
    where = (f"at {address}" + (" (RAY_ADDRESS)" if address != given else "")
             if address else "(a local instance)")
    started = not ray.is_initialized()
    if started:
        if address:
            probe_ray_address(address, where=where)
        _init_ray(ray, address, workers, where)
    limit = RAY_WORKER_TIMEOUT_S if timeout is None else timeout
    ready = ray.remote(num_cpus=1)(_ray_ready)
    refs = [ready.remote(list(rulesets)) for _ in range(workers)]
    try:
        done, _ = ray.wait(refs, num_returns=len(refs), timeout=limit)
        if not done:
            raise RayUnavailable(
                f"Ray {where} started but its workers ran no task within {limit:g} s "
                f"(they did not start; Ray's logs, e.g. /tmp/ray/session_latest/logs/"
                f"raylet.out, say why; a driver under `uv run` with {RAY_UV_HOOK}=1 "
                f"gives workers that start through uv)")
        ray.get(done)
    except BaseException as exc:
        if started:
            ray.shutdown()
        if isinstance(exc, ray.exceptions.RayError):
            raise RayUnavailable(f"Ray {where} could not run a task: "
                                 f"{' '.join(str(exc).split())[:300]}") from None
        raise
    return started



def _init_ray(ray: Any, address: str, workers: int, where: str) -> None:
    """``ray.init`` for :func:`start_ray`, the caller's SIGTERM handler kept
    (see there).

    Raises:
        RayUnavailable: ``ray.init`` failed, or a SIGTERM came during it.
    """
    kwargs: dict[str, Any] = {"logging_level": "ERROR", "log_to_driver": False}
    main = threading.current_thread() is threading.main_thread()
    mine = signal.getsignal(signal.SIGTERM) if main else None
    ours = callable(mine)  # a handler of the caller's, not SIG_DFL / SIG_IGN
    try:
        if address:
            ray.init(address=address, **kwargs)
        else:
            ray.init(num_cpus=workers, include_dashboard=False, **kwargs)
    except SystemExit:  # Ray's SIGTERM handler, during ray.init
        if not ours:
            raise
        with contextlib.suppress(Exception):
            ray.shutdown()
        signal.signal(signal.SIGTERM, mine)
        mine(signal.SIGTERM, None)  # the caller's handler decides (it raises, as a rule)
        raise RayUnavailable(f"Ray {where} did not start: SIGTERM", address or None) \
            from None
    except Exception as exc:  # Ray raises bare Exception / ConnectionError here
        raise RayUnavailable(f"Ray {where} did not start: "
                             f"{' '.join(str(exc).split())}", address or None) from None
    finally:
        if ours:
            signal.signal(signal.SIGTERM, mine)


#: Ray tasks submitted and not yet collected, at most (the next are
#: submitted as these finish).
RAY_IN_FLIGHT = 1024


def _run_ray(tasks: Iterable[Any], take: Callable[[Any], None], address: str,
             workers: int, rulesets: Sequence[RulesetSpec],
             play: Callable[[Any], bytes] | None = None) -> bool:
    """The tasks as Ray tasks run by ``play`` (default :func:`_play_task`),
    at most :data:`RAY_IN_FLIGHT` submitted at a time; True if Ctrl-C
    stopped it."""
    started = start_ray(address, workers, rulesets)
    ray = import_ray(not ray_target(address))
    remote = ray.remote(num_cpus=1)(play or _play_task)
    todo = iter(tasks)
    pending: list[Any] = []
    try:
        pending += [remote.remote(t) for t in itertools.islice(todo, RAY_IN_FLIGHT)]
        while pending:
            # the next finished task, and any others finished meanwhile
            done, pending = ray.wait(pending, num_returns=1)
            if pending:
                more, pending = ray.wait(pending, num_returns=len(pending), timeout=0)
                done += more
            pending += [remote.remote(t) for t in itertools.islice(todo, len(done))]
            for part in ray.get(done):
                take(part)
    except KeyboardInterrupt:
        # not force=True: killing a worker whose task is just finishing can
        # abort the driver (Ray's "Tried to complete task that was not
        # pending"); a local instance is shut down next anyway
        for ref in pending:
            with contextlib.suppress(Exception):
                ray.cancel(ref)
        return True
    except ray.exceptions.RayTaskError as exc:
        if isinstance(exc.cause, BotFault):   # a bot's fault, not Ray's
            raise exc.cause from None
        raise RayUnavailable(f"Ray could not run the tasks: "
                             f"{' '.join(str(exc).split())[:300]}") from None
    except ray.exceptions.RayError as exc:  # e.g. a worker that died
        raise RayUnavailable(f"Ray could not run the tasks: "
                             f"{' '.join(str(exc).split())[:300]}") from None
    finally:
        if started:
            ray.shutdown()
    return False
