"""Progress of a long build on stderr, read from the build's own log as it grows.

A compile of llama.cpp takes 4 to 15 minutes on 2 cores; a script that prints only a log path
for that long looks hung. Ninja prints `[12/212] Building ...` and CMake's Makefiles print
`[ 42%] Building ...`: the newest counter in the log is the progress. A step without a counter
(pip resolving and downloading) still gets the elapsed time and the log's size, so that every
line says that something is moving.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

NINJA_STEP = re.compile(rb"^\[(\d+)/(\d+)\] ")
CMAKE_PERCENT = re.compile(rb"^\[\s*(\d{1,3})%\] ")
REPORT_EVERY_S = 10.0


@dataclass
class LogProgress:
    """Reads a log from where the last `poll` stopped and keeps its newest step counter.

    Only complete lines are parsed: a line still being written is read again, whole, by the
    next poll. The log may not exist yet (the build has not opened it)."""

    path: Path
    offset: int = 0
    done: int | None = None
    total: int | None = None
    percent: int | None = None

    def poll(self) -> None:
        try:
            with self.path.open("rb") as log:
                log.seek(self.offset)
                data = log.read()
        except FileNotFoundError:
            return
        end = data.rfind(b"\n") + 1
        self.offset += end
        for line in data[:end].splitlines():
            self._parse(line.lstrip())  # pip -v indents, a tty build uses \r

    def _parse(self, line: bytes) -> None:
        if step := NINJA_STEP.match(line):
            self.done, self.total = int(step[1]), int(step[2])
        elif percent := CMAKE_PERCENT.match(line):
            self.percent = int(percent[1])

    def describe(self) -> str:
        """The newest counter: `[57/212] 27%`, `[ 42%]`, or "" when the log has none yet."""
        if self.done is not None and self.total:
            return f"[{self.done}/{self.total}] {100 * self.done // self.total}%"
        if self.percent is not None:
            return f"[{self.percent:3d}%]"
        return ""


def elapsed(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def log_size(path: Path) -> str:
    try:
        return f"log {path.stat().st_size / 1024:.0f} KiB"
    except OSError:
        return "no log yet"


def run_logged(
    command: list[str],
    log: Path,
    label: str,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    every: float = REPORT_EVERY_S,
    out: TextIO | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[int, float]:
    """Run `command` with its output appended to `log`, printing `label`'s progress to `out`
    (stderr) every `every` seconds and once at the end; returns (exit status, seconds)."""
    stream = out if out is not None else sys.stderr
    progress = LogProgress(log, offset=log.stat().st_size if log.exists() else 0)
    started = clock()
    with log.open("ab") as sink:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=dict(env) if env is not None else None,
            cwd=cwd,
        )
        try:
            while True:
                try:
                    status = process.wait(timeout=every)
                    break
                except subprocess.TimeoutExpired:
                    report(stream, label, progress, log, clock() - started)
        finally:
            if process.poll() is None:  # interrupted: never leave the build running
                process.kill()
                process.wait()
    took = clock() - started
    report(stream, label, progress, log, took, finished=status)
    return status, took


def report(
    stream: TextIO,
    label: str,
    progress: LogProgress,
    log: Path,
    seconds: float,
    finished: int | None = None,
) -> None:
    progress.poll()
    counter = progress.describe() or log_size(log)
    state = "running" if finished is None else f"exit {finished}"
    print(f"    {label}: {counter}, {elapsed(seconds)} elapsed ({state})", file=stream, flush=True)
