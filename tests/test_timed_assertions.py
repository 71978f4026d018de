"""No test asserts how fast something happened (issue 25 item 6).

A loaded machine makes anything slow, so an upper bound on elapsed wall time fails for the
machine, not for the code; and a bound equal to a deadline of the server's own (the 2 s exit
watchdog, a 2 s close timeout) fails exactly when that safety net does its job. Tests wait for
the event they mean (a frame, a log line, a pid gone, a connection closed) under a hang guard
of at least `HANG_GUARD_FLOOR` seconds; a speed target is a benchmark (`docs/benchmarks.md`).

What this checks, in every test module (`tests/**/*.py`, the support code too):
- an `assert` that bounds a time from above: a comparison `<`/`<=` (or `>`/`>=` the other way
  round) between a number and an expression that reads a clock (`time.monotonic()`,
  `perf_counter()`, `time.time()`, `anyio.current_time()`) or names a duration (`elapsed`,
  `waited`, `duration`, `took`, `started`, `*_at`);
- a hang guard (`anyio.fail_after`, `anyio.move_on_after`, the `timeout=` of a process's
  `wait`/`communicate`, a thread's `join`, `subprocess.run`) shorter than `HANG_GUARD_FLOOR`,
  when given as a number.

A lower bound stays allowed: "at least the second the server asked for" cannot fail because
the machine is slow. A `timeout=` the code under test takes as its own setting (a tool's
`timeout_ms`, `run_bounded(timeout=...)`) is not a guard and is not read here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HANG_GUARD_FLOOR = 10.0
CLOCKS = frozenset({"monotonic", "perf_counter", "time", "current_time", "monotonic_ns"})
DURATION_NAME = re.compile(r"^(elapsed|waited|duration|took|started)$|_at$")
GUARDS = frozenset({"fail_after", "move_on_after"})
WAITS = frozenset({"wait", "communicate", "join"})
"""Calls whose `timeout=` is how long the test waits (`subprocess.run` too)."""
UPPER = (ast.Lt, ast.LtE)
LOWER = (ast.Gt, ast.GtE)


def _reads_time(node: ast.AST) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            func = sub.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in CLOCKS:
                return True
        if isinstance(sub, ast.Name) and DURATION_NAME.search(sub.id):
            return True
        if isinstance(sub, ast.Attribute) and DURATION_NAME.search(sub.attr):
            return True
    return False


def _number(node: ast.AST, constants: dict[str, float]) -> float | None:
    """The value of a number, of arithmetic on numbers, or of a module-level constant."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult):
        left, right = _number(node.left, constants), _number(node.right, constants)
        if left is None or right is None:
            return None
        if isinstance(node.op, ast.Add):
            return left + right
        return left - right if isinstance(node.op, ast.Sub) else left * right
    return None


def _constants(tree: ast.Module) -> dict[str, float]:
    """The module's numeric constants (`EXIT_S = 2.0 + 3.0`), so a bound behind a name counts."""
    constants: dict[str, float] = {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and value is not None:
            number = _number(value, constants)
            if number is not None:
                constants[target.id] = number
    return constants


def _upper_bounds_a_time(compare: ast.Compare, constants: dict[str, float]) -> bool:
    operands = [compare.left, *compare.comparators]
    for op, left, right in zip(compare.ops, operands, operands[1:], strict=False):
        if isinstance(op, UPPER) and _number(right, constants) is not None and _reads_time(left):
            return True
        if isinstance(op, LOWER) and _number(left, constants) is not None and _reads_time(right):
            return True
    return False


def _short_guard(call: ast.Call, constants: dict[str, float]) -> float | None:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name in GUARDS and call.args:
        seconds = _number(call.args[0], constants)
        if seconds is not None and seconds < HANG_GUARD_FLOOR:
            return seconds
    waits = name in WAITS or (
        name == "run"
        and isinstance(func, ast.Attribute)
        and getattr(func.value, "id", "") == "subprocess"
    )
    for keyword in call.keywords if waits else ():
        if keyword.arg == "timeout":
            seconds = _number(keyword.value, constants)
            if seconds is not None and seconds < HANG_GUARD_FLOOR:
                return seconds
    return None


def timed_assertions(root: Path) -> list[str]:
    """`path:line: what` of every timed assertion and short hang guard under `root/tests`."""
    found = []
    for path in sorted((root / "tests").rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        where = path.relative_to(root)
        constants = _constants(tree)
        hits: list[tuple[int, str]] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert):
                for sub in ast.walk(node.test):
                    if isinstance(sub, ast.Compare) and _upper_bounds_a_time(sub, constants):
                        hits.append((node.lineno, "an upper bound on a time"))
                        break
            elif (
                isinstance(node, ast.Call)
                and (seconds := _short_guard(node, constants)) is not None
            ):
                hits.append((node.lineno, f"a {seconds:g} s guard"))
        found += [f"{where}:{line}: {what}" for line, what in sorted(hits)]
    return found


def test_no_test_bounds_a_time_from_above() -> None:
    assert timed_assertions(REPO) == []


def test_the_checker_finds_each_kind(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(
        "import time, anyio\n"
        "EXIT_S = 2.0 + 3.0\n"
        "def test_a():\n"
        "    started = time.monotonic()\n"
        "    assert time.monotonic() - started < 2.0\n"  # 5
        "    assert 0.9 <= waited < 3.0\n"  # 6
        "    assert 5 > elapsed\n"  # 7
        "    assert seen.closed_at - aborted_at < 0.5\n"  # 8
        "    assert elapsed >= 1.5\n"  # a lower bound: allowed
        "    assert len(items) < 3\n"  # not a time: allowed
        "async def test_b():\n"
        "    with anyio.fail_after(2):\n"  # 12
        "        pass\n"
        "    with anyio.fail_after(30):\n"  # a hang guard: allowed
        "        pass\n"
        "    proc.wait(timeout=5)\n"  # 16
        "    proc.wait(timeout=60)\n"  # allowed
        "    with anyio.fail_after(EXIT_S):\n"  # 18
        "        pass\n"
    )
    assert timed_assertions(tmp_path) == [
        "tests/test_x.py:5: an upper bound on a time",
        "tests/test_x.py:6: an upper bound on a time",
        "tests/test_x.py:7: an upper bound on a time",
        "tests/test_x.py:8: an upper bound on a time",
        "tests/test_x.py:12: a 2 s guard",
        "tests/test_x.py:16: a 5 s guard",
        "tests/test_x.py:18: a 5 s guard",
    ]
