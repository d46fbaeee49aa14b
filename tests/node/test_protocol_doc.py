"""docs/protocol.md's table of rule ids stays complete: every rule id the server source can
send (the ErrorInfo ``reason``, the ``ActionError.rule`` on a stream) has a row.

The rule ids are found in the server's syntax tree, not by running it:

* the rule argument of every construction of an error class: an ``AppError`` or
  ``EngineError`` subclass (second positional argument or ``rule=``; left out: the class's
  ``default_rule``, inherited as Python would), ``Refusal(code, message, rule)``,
  ``status_for(code, message, rule)`` and ``abort(context, code, message, rule)``;
* any ``rule=`` keyword (e.g. ``ActionError(rule=...)``);
* the third item of a returned ``(code, message, rule)`` tuple (``classify``,
  ``internal_error``).

A rule argument may be a string, a conditional of strings, or a name bound to those (in the
module or the function); a name the tree cannot resolve (a parameter passed through) is
skipped, as its callers name the rule.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "server"
DOC = ROOT / "docs" / "protocol.md"
ERROR_BASES = {"AppError", "EngineError"}
# Callables whose rule is a positional argument, by index.
RULE_POSITION = {"Refusal": 2, "status_for": 2, "abort": 3}


def _sources() -> dict[Path, ast.Module]:
    return {
        path: ast.parse(path.read_text(), filename=str(path))
        for path in sorted(SERVER.rglob("*.py"))
    }


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _error_classes(trees: dict[Path, ast.Module]) -> dict[str, str | None]:
    """Every error class (by name) with its default rule, inherited through its bases."""
    bases: dict[str, list[str]] = {}
    own: dict[str, str] = {}
    for tree in trees.values():
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            bases[node.name] = [_name(b) for b in node.bases]
            for item in node.body:
                if (
                    isinstance(item, ast.Assign)
                    and any(_name(t) == "default_rule" for t in item.targets)
                    and isinstance(item.value, ast.Constant)
                    and isinstance(item.value.value, str)
                ):
                    own[node.name] = item.value.value

    def is_error(name: str, seen: frozenset[str] = frozenset()) -> bool:
        if name in ERROR_BASES:
            return True
        return name not in seen and any(is_error(b, seen | {name}) for b in bases.get(name, []))

    def default(name: str) -> str | None:
        if name in own:
            return own[name]
        for base in bases.get(name, []):
            found = default(base)
            if found is not None:
                return found
        return None

    return {name: default(name) for name in bases if is_error(name)}


def _bindings(scope: ast.AST) -> dict[str, list[ast.expr]]:
    """Names assigned in ``scope`` (a module or function) and the values they get."""
    found: dict[str, list[ast.expr]] = {}
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found.setdefault(target.id, []).append(node.value)
        elif (
            isinstance(node, ast.AnnAssign)
            and node.value is not None
            and isinstance(node.target, ast.Name)
        ):
            found.setdefault(node.target.id, []).append(node.value)
    return found


def _strings(node: ast.expr, names: dict[str, list[ast.expr]], depth: int = 0) -> set[str]:
    """The strings an expression can be (empty when the tree cannot tell)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.IfExp):
        return _strings(node.body, names, depth) | _strings(node.orelse, names, depth)
    if isinstance(node, ast.Name) and depth < 5:
        return {s for value in names.get(node.id, []) for s in _strings(value, names, depth + 1)}
    return set()


def _rule_args(call: ast.Call, classes: dict[str, str | None]) -> Iterator[ast.expr | str]:
    """The rule expressions of one call (a plain string for an inherited default)."""
    callee = _name(call.func)
    keyword = [k.value for k in call.keywords if k.arg == "rule"]
    yield from keyword
    if callee in classes:
        if len(call.args) > 1:
            yield call.args[1]
        elif not keyword and classes[callee] is not None:
            yield str(classes[callee])
    elif callee in RULE_POSITION and len(call.args) > RULE_POSITION[callee]:
        yield call.args[RULE_POSITION[callee]]


def server_rule_ids() -> dict[str, set[str]]:
    """Every rule id the server source can send, with the files that send it."""
    trees = _sources()
    classes = _error_classes(trees)
    rules: dict[str, set[str]] = {}
    for path, tree in trees.items():
        module_names = _bindings(tree)
        scopes: list[ast.AST] = [tree]
        functions = (ast.FunctionDef, ast.AsyncFunctionDef)
        scopes += [n for n in ast.walk(tree) if isinstance(n, functions)]
        for scope in scopes:
            names = {**module_names, **_bindings(scope)} if scope is not tree else module_names
            for node in ast.walk(scope):
                found: set[str] = set()
                if isinstance(node, ast.Call):
                    for arg in _rule_args(node, classes):
                        found |= {arg} if isinstance(arg, str) else _strings(arg, names)
                elif (
                    isinstance(node, ast.Return)
                    and isinstance(node.value, ast.Tuple)
                    and len(node.value.elts) == 3
                ):
                    found |= _strings(node.value.elts[2], names)
                for rule in found:
                    rules.setdefault(rule, set()).add(str(path.relative_to(ROOT)))
    return rules


def documented_rule_ids() -> set[str]:
    """The rule ids in the first column of docs/protocol.md's rule table (the table under
    the heading "Rule ids"), each written as `code`."""
    text = DOC.read_text()
    section = text.split("## Rule ids", 1)
    assert len(section) == 2, "docs/protocol.md has no '## Rule ids' section"
    body = section[1].split("\n## ", 1)[0]
    rows = [line for line in body.splitlines() if line.startswith("| `")]
    return {m.group(1) for line in rows if (m := re.match(r"\| `([^`]+)`", line))}


def test_every_rule_id_the_server_sends_is_documented() -> None:
    found = server_rule_ids()
    assert len(found) > 20, f"the source scan found too few rule ids: {sorted(found)}"
    missing = found.keys() - documented_rule_ids()
    assert not missing, "rule ids missing from docs/protocol.md's table: " + ", ".join(
        f"{rule} (in {', '.join(sorted(found[rule]))})" for rule in sorted(missing)
    )


def test_every_documented_rule_id_is_sent_by_the_server() -> None:
    stale = documented_rule_ids() - server_rule_ids().keys()
    assert not stale, f"docs/protocol.md lists rule ids the server no longer sends: {sorted(stale)}"
