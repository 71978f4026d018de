"""Six tiny repositories, each with a one-line bug that makes a pytest test fail: the tasks of
the `small-model` mode (benchmarks/modes/small_model.py).

Each has one module and its test file; the bugs differ in kind (off by one, wrong operator,
wrong name, wrong constant, a missed case, wrong comparison) and every module holds correct
functions beside the wrong one, whose tests pass. They were written for this benchmark and
are not tuned to any agent: the prompt is the same for every task and names neither the file
nor the bug.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

PROMPT = "The tests fail. Fix the bug in the code so that they pass. Do not change the tests."
TEST_COMMAND = "python -m pytest -q"


@dataclass(frozen=True)
class FixTask:
    """One repository: `files` by relative path; the test files are those named `test_*`."""

    name: str
    kind: str
    """The kind of bug, as the docs table names it."""
    files: dict[str, str]

    @property
    def test_files(self) -> list[str]:
        return [path for path in self.files if Path(path).name.startswith("test_")]

    @property
    def code_files(self) -> list[str]:
        return [path for path in self.files if path not in self.test_files]

    def make(self, root: Path) -> Path:
        """The repository at `root` (created), committed to git as one initial commit."""
        root.mkdir(parents=True)
        for path, text in self.files.items():
            (root / path).write_text(text)
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "bench",
            "GIT_AUTHOR_EMAIL": "bench@example.invalid",
            "GIT_COMMITTER_NAME": "bench",
            "GIT_COMMITTER_EMAIL": "bench@example.invalid",
        }
        for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "initial"]):
            subprocess.run(["git", *command], cwd=root, env=env, check=True, timeout=60)
        return root

    def outcome(self, root: Path) -> tuple[bool, bool, str]:
        """Whether the tests pass now (run here, never trusting an agent's word), whether
        every test file is as it was, and pytest's last line. Bytecode goes to a fresh
        directory: a `.pyc` left by the agent's own run in the same second as a same-size fix
        would be taken for the fixed source."""
        with tempfile.TemporaryDirectory(prefix="bench-pyc-") as pycache:
            result = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                cwd=root, capture_output=True, text=True, timeout=120, check=False,
                env={**os.environ, "PYTHONPYCACHEPREFIX": pycache},
            )  # fmt: skip
        unchanged = all(
            (root / path).is_file() and (root / path).read_text() == self.files[path]
            for path in self.test_files
        )
        last = (result.stdout.strip().splitlines() or [""])[-1]
        return result.returncode == 0, unchanged, last


TASKS = (
    FixTask(
        "series",
        "off by one",
        {
            "series.py": '''"""Sums of simple number series."""


def triangular(n):
    """The n-th triangular number: 1 + 2 + ... + n."""
    return sum(range(1, n))


def squares(n):
    """The sum of the first n squares: 1 + 4 + ... + n * n."""
    return sum(k * k for k in range(1, n + 1))
''',
            "test_series.py": """from series import squares, triangular


def test_triangular():
    assert triangular(1) == 1
    assert triangular(4) == 10


def test_squares():
    assert squares(3) == 14
""",
        },
    ),
    FixTask(
        "temperature",
        "wrong operator",
        {
            "temperature.py": '''"""Temperature conversions."""


def to_fahrenheit(celsius):
    """Degrees Celsius in degrees Fahrenheit."""
    return celsius * 9 / 5 - 32


def to_celsius(fahrenheit):
    """Degrees Fahrenheit in degrees Celsius."""
    return (fahrenheit - 32) * 5 / 9
''',
            "test_temperature.py": """from temperature import to_celsius, to_fahrenheit


def test_to_fahrenheit():
    assert to_fahrenheit(100) == 212
    assert to_fahrenheit(0) == 32


def test_to_celsius():
    assert to_celsius(212) == 100
""",
        },
    ),
    FixTask(
        "names",
        "wrong name",
        {
            "names.py": '''"""Formatting people's names."""


def full_name(first, last, middle=""):
    """The name as it is written: first, middle (if any) and last."""
    if middle:
        return f"{first} {middle} {last}"
    return f"{first} {first}"


def initials(first, last):
    """The initials, each followed by a dot."""
    return f"{first[0]}.{last[0]}."
''',
            "test_names.py": """from names import full_name, initials


def test_full_name():
    assert full_name("Ada", "Lovelace") == "Ada Lovelace"
    assert full_name("Grace", "Hopper", "Brewster") == "Grace Brewster Hopper"


def test_initials():
    assert initials("Alan", "Turing") == "A.T."
""",
        },
    ),
    FixTask(
        "durations",
        "wrong constant",
        {
            "durations.py": '''"""Durations in seconds."""

SECONDS_PER_MINUTE = 60
SECONDS_PER_HOUR = 360


def to_seconds(hours, minutes=0):
    """A duration given in hours and minutes, in seconds."""
    return hours * SECONDS_PER_HOUR + minutes * SECONDS_PER_MINUTE


def to_minutes(seconds):
    """A duration in seconds, in whole minutes."""
    return seconds // SECONDS_PER_MINUTE
''',
            "test_durations.py": """from durations import to_minutes, to_seconds


def test_to_seconds():
    assert to_seconds(0, 5) == 300
    assert to_seconds(2) == 7200


def test_to_minutes():
    assert to_minutes(150) == 2
""",
        },
    ),
    FixTask(
        "leap_years",
        "missed case",
        {
            "leap_years.py": '''"""Leap years of the Gregorian calendar."""


def is_leap(year):
    """Whether `year` has a 29th of February."""
    return year % 4 == 0 and year % 100 != 0


def days_in_year(year):
    """How many days `year` has."""
    return 366 if is_leap(year) else 365
''',
            "test_leap_years.py": """from leap_years import days_in_year, is_leap


def test_is_leap():
    assert is_leap(2024)
    assert not is_leap(2023)
    assert not is_leap(1900)
    assert is_leap(2000)


def test_days_in_year():
    assert days_in_year(2023) == 365
""",
        },
    ),
    FixTask(
        "grades",
        "wrong comparison",
        {
            "grades.py": '''"""Exam results."""

PASS_MARK = 50


def passed(score):
    """Whether a score reaches the pass mark."""
    return score > PASS_MARK


def best(scores):
    """The highest score, or None when there are none."""
    return max(scores) if scores else None
''',
            "test_grades.py": """from grades import best, passed


def test_passed():
    assert passed(75)
    assert passed(50)
    assert not passed(49)


def test_best():
    assert best([40, 90, 65]) == 90
    assert best([]) is None
""",
        },
    ),
)
"""The tasks, in the order every run goes through them."""
