"""Calling a ruleset's hooks: the resolved hook callers and the blame of plugins.

The engine calls some hooks a few hundred times a hand, so each hook of a
ruleset is resolved once (:func:`resolved_hooks`): bound to a plain function
that calls the implementations pluggy lists, in pluggy's order, without
pluggy's per-call bookkeeping (:class:`ResolvedHooks`).  pluggy's own caller
is kept wherever pluggy would do more than call them (wrappers, historic
hooks, call monitoring).  Everything here reads pluggy's public API only.

When a hook raises or answers something the engine refuses, the error names
the plugin: :func:`raiser` (whose code raised), :func:`culprit` (whose
answer is refused), :func:`hook_plugins` (who implements a hook).
:func:`implemented_only_by` answers a family flow's question whether it
alone answers a hook.
"""

from __future__ import annotations

import threading
from typing import Any

import pluggy
from pluggy import HookCallError


class PluginManager(pluggy.PluginManager):
    """pluggy's ``PluginManager``, counting call monitoring.

    The resolved hook callers (:class:`ResolvedHooks`) call a hook's
    implementations themselves (in pluggy's order, through pluggy's public
    ``get_hookimpls``) unless pluggy would do more than call them:
    wrappers, historic hooks, or call monitoring (``add_hookcall_monitoring``,
    which ``enable_tracing`` uses too).  Pluggy has no public way to ask
    whether monitoring is on, so this subclass counts it through the public
    method: ``qipai_monitors`` is the number of monitors in force,
    ``qipai_monitor_changes`` grows at every change (a key of the
    ruleset's resolved hooks).
    """

    def __init__(self, project_name: str) -> None:
        super().__init__(project_name)
        self.qipai_monitors = 0
        self.qipai_monitor_changes = 0

    def add_hookcall_monitoring(self, before: Any, after: Any) -> Any:
        undo = super().add_hookcall_monitoring(before, after)
        self.qipai_monitors += 1
        self.qipai_monitor_changes += 1
        done = False

        def undo_add() -> None:
            nonlocal done
            undo()
            if not done:
                done = True
                self.qipai_monitors -= 1
                self.qipai_monitor_changes += 1

        return undo_add


class ResolvedHooks:
    """A ruleset's hook relay with each hook resolved once (see
    :func:`resolved_hooks`: one per ruleset, shared by its tables).

    ``hooks.qipai_x(**kwargs)`` returns what ``ruleset.hook.qipai_x(**kwargs)``
    returns.  On first use each hook is bound to a plain function that calls
    the implementations pluggy lists (its public ``get_hookimpls``) in
    pluggy's order (last registered / tryfirst first; for a ``firstresult``
    hook, the first non-None result, else the list of non-None results),
    skipping pluggy's per-call bookkeeping; a ``firstresult`` hook with one
    implementation taking every argument is bound to that implementation
    itself.  Call a hook with exactly the arguments of its spec, by keyword
    (as pluggy requires): a missing one raises ``HookCallError`` or
    ``TypeError``.  Hooks with wrappers, historic hooks, spec defaults, call
    monitoring, or a plugin manager that is not
    :class:`PluginManager` (which counts monitoring)
    keep pluggy's own caller.  Each hook is bound the first time any table
    of the ruleset calls it, and a bound hook keeps the implementations it
    was bound with; tables made after a plugin is registered (or
    unregistered) get a fresh set.  (Register plugins before making tables,
    as rulesets do when loaded.)  Binding is done under a lock and each
    caller is published whole, so tables in several threads may share it.
    """

    def __init__(self, relay: Any, pm: Any = None) -> None:
        self._relay = relay
        self._pm = pm
        self._only: dict[str, Any] = {}

    def only(self, name: str) -> Any:
        """The one implementation of hook ``name`` when it has exactly one,
        taking every argument of the spec, and pluggy would call it plainly
        (no wrapper, no monitoring); else None.  Called by keyword, it
        returns that implementation's own result (not a list)."""
        try:
            return self._only[name]
        except KeyError:
            with _RESOLVE_LOCK:
                if name not in self._only:
                    self._only[name] = _only_impl(getattr(self._relay, name), self._pm)
                return self._only[name]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # copy/pickle probes, and _relay before __init__
            raise AttributeError(name)
        with _RESOLVE_LOCK:
            fast = self.__dict__.get(name)
            if fast is None:
                fast = _direct_caller(getattr(self._relay, name), self._pm)
                setattr(self, name, fast)  # published whole
        return fast


#: Serialises building resolved hooks (first use only: afterwards a hook is
#: an instance attribute and no lock is taken).
_RESOLVE_LOCK = threading.RLock()


def _monitoring(pm: Any) -> tuple[int, int] | None:
    """``(monitors in force, changes)`` of a counting plugin manager, or None
    (a plugin manager that does not count: pluggy's callers are kept)."""
    monitors = getattr(pm, "qipai_monitors", None)
    if monitors is None:
        return None
    return monitors, pm.qipai_monitor_changes


def resolved_hooks(ruleset: Any) -> Any:
    """The :class:`ResolvedHooks` of ``ruleset``'s relay, shared by its
    tables while the ruleset's plugins (and pluggy's call monitoring) stay
    as they were; a table made after a change gets a fresh one.  Safe to
    call from several threads (the pair is built whole, then published).

    The pair is kept in the ruleset's ``hook_callers``
    (:class:`~qipai.core.ruleset.Ruleset`); a ruleset without a plugin
    manager (``pm``) gets a fresh one each time."""
    pm = getattr(ruleset, "pm", None)
    if pm is None:
        return ResolvedHooks(ruleset.hook)
    key = (tuple(pm.list_name_plugin()), _monitoring(pm))
    known = ruleset.hook_callers
    if known is not None and known[0] == key:
        return known[1]
    with _RESOLVE_LOCK:
        known = ruleset.hook_callers
        if known is not None and known[0] == key:
            return known[1]
        hooks = ResolvedHooks(ruleset.hook, pm)
        ruleset.hook_callers = (key, hooks)
    return hooks


def _only_impl(caller: Any, pm: Any) -> Any:
    """The single plain implementation of ``caller`` taking every argument, or None."""
    fast = _direct_caller(caller, pm)
    if fast is caller:  # pluggy's own caller: wrappers, monitoring …
        return None
    impls = caller.get_hookimpls()
    if len(impls) == 1 and set(impls[0].argnames) == set(caller.spec.argnames):
        return impls[0].function
    return None


def _direct_caller(caller: Any, pm: Any) -> Any:
    """A plain function calling ``caller``'s implementations, or ``caller``.

    Reads only pluggy's public API: ``HookCaller.spec``/``is_historic``/
    ``get_hookimpls`` and ``HookImpl.function``/``argnames``/``kwargnames``/
    ``hookwrapper``/``wrapper``.  Anything unexpected keeps pluggy's caller.
    """
    monitoring = _monitoring(pm)
    if monitoring is None or monitoring[0]:
        return caller
    try:
        spec = caller.spec
        impls = caller.get_hookimpls()
        plain = (spec is not None and not caller.is_historic() and not spec.kwargnames
                 and not any(i.hookwrapper or i.wrapper or i.kwargnames for i in impls))
    except AttributeError:
        return caller
    if not plain:
        return caller

    firstresult = bool(spec.opts.get("firstresult", False))
    if firstresult and len(impls) == 1 and set(impls[0].argnames) == set(spec.argnames):
        # One implementation taking every argument: called as it is (a
        # missing or unknown argument is Python's TypeError at the call).
        return impls[0].function
    return _compiled_caller(spec.name, tuple(spec.argnames),
                            [(i.function, tuple(i.argnames)) for i in reversed(impls)],
                            firstresult)


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()


def _missing(hook: str, **given: Any) -> None:
    name = next(k for k, v in given.items() if v is _MISSING)
    raise HookCallError(f"hook call {hook} must provide argument {name!r}")


def _compiled_caller(hook: str, argnames: tuple[str, ...],
                     order: list[tuple[Any, tuple[str, ...]]], firstresult: bool) -> Any:
    """A function taking the hook's arguments by keyword and calling each
    implementation (``order``: pluggy's call order) with its own arguments
    positionally — what pluggy's own hook call does, less its per-call
    bookkeeping.  It is generated once per hook as source text (like
    ``dataclasses`` builds ``__init__``) so a call builds no keyword dict
    and no argument lists (only the result list of a collecting hook): a
    hot hook is called a few hundred times a hand.

    A missing argument raises pluggy's ``HookCallError``; arguments the
    spec does not name are ignored, as pluggy ignores them.
    """
    for name in argnames:  # hookspec argument names: identifiers, never code
        if not name.isidentifier() or name.startswith("_qipai_"):  # pragma: no cover
            raise ValueError(f"hook {hook} has an argument named {name!r}")
    env: dict[str, Any] = {"_qipai_MISSING": _MISSING, "_qipai_missing": _missing}
    params = ", ".join(f"{a}=_qipai_MISSING" for a in argnames)
    lines = [f"def call(*, {params}, **_qipai_ignored):" if argnames
             else "def call(**_qipai_ignored):"]
    if argnames:
        lines.append("    if " + " or ".join(f"{a} is _qipai_MISSING" for a in argnames) + ":")
        lines.append(f"        _qipai_missing({hook!r}, "
                     + ", ".join(f"{a}={a}" for a in argnames) + ")")
    if not firstresult:  # locals named so that no argument name can shadow them
        lines.append("    _qipai_out = []")
    for i, (fn, names) in enumerate(order):
        env[f"_qipai_f{i}"] = fn
        lines.append(f"    _qipai_r = _qipai_f{i}({', '.join(names)})")
        lines.append("    if _qipai_r is not None:")
        lines.append("        return _qipai_r" if firstresult else "        _qipai_out.append(_qipai_r)")
    lines.append("    return None" if firstresult else "    return _qipai_out")
    exec("\n".join(lines), env)  # noqa: S102 - source built above from identifiers only
    call = env["call"]
    call.__name__ = call.__qualname__ = hook
    return call



def hook_plugins(relay: Any, hook: str) -> str:
    """The pluggy names of the plugins implementing ``hook`` on ``relay``
    (a plugin manager's ``hook``), in call order, comma-separated ("?": none)."""
    try:
        impls = getattr(relay, hook).get_hookimpls()
    except AttributeError:
        return "?"
    return ", ".join(i.plugin_name for i in reversed(impls)) or "?"


def culprit(relay: Any, hook: str, problem: Any, **kwargs: Any) -> str:
    """Which plugin gave a refused answer of ``hook`` (the failure path
    only: each plain implementation is asked again in pluggy's order with
    ``kwargs``; a caller that holds state rolls back whatever that changes).
    ``problem(answer)`` says whether an answer is refused.  Returns the
    pluggy name of the first implementation whose answer is refused; when
    the answers asked again are fine (for a ``firstresult`` hook: the first
    one), the wrappers changed it, and their names are returned; else every
    implementer's (:func:`hook_plugins`)."""
    try:
        caller = getattr(relay, hook)
        first = bool(caller.spec.opts.get("firstresult", False))
        impls = list(reversed(caller.get_hookimpls()))
        for impl in impls:
            if impl.hookwrapper or impl.wrapper:
                continue
            answer = impl.function(*[kwargs[a] for a in impl.argnames])
            if answer is not None:
                if problem(answer):
                    return impl.plugin_name
                if first:
                    break
        wrappers = [i.plugin_name for i in impls if i.hookwrapper or i.wrapper]
        if wrappers:
            return ", ".join(wrappers)
    except Exception:  # noqa: BLE001 - naming is best effort
        pass
    return hook_plugins(relay, hook)


def raiser(relay: Any, exc: BaseException) -> tuple[str, str]:
    """The hook and plugin whose implementation on ``relay`` (a plugin
    manager's ``hook``) is the innermost one on ``exc``'s traceback, or
    ``("?", "?")``."""
    codes: dict[Any, tuple[str, str]] = {}
    for name in dir(relay):
        if not name.startswith("qipai_"):
            continue
        for impl in getattr(relay, name).get_hookimpls():
            fn = getattr(impl.function, "__func__", impl.function)
            code = getattr(fn, "__code__", None)
            if code is not None:
                codes.setdefault(code, (name, impl.plugin_name))
    found = ("?", "?")
    tb = exc.__traceback__
    while tb is not None:
        found = codes.get(tb.tb_frame.f_code, found)
        tb = tb.tb_next
    return found



def implemented_only_by(relay: Any, hook: str, plugin: Any) -> bool:
    """Whether ``plugin`` (a registered plugin object) alone implements
    ``hook`` on ``relay`` (a plugin manager's ``hook``): no variant, house
    plugin or wrapper answers it beside it.  A family flow asks it before a
    shortcut that assumes its own answer; the answer holds for the plugins
    registered now (rulesets register theirs before making tables)."""
    return [i.plugin for i in getattr(relay, hook).get_hookimpls()] == [plugin]
