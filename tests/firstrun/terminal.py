"""Driving `acp-server setup` through a real pseudo-terminal (pexpect), for tests/firstrun/."""

from __future__ import annotations

import io
import os
import re
import sys
from pathlib import Path

import pexpect

from tests.support.agent_process import SERVER

DOWN = "\x1b[B"
ENTER = "\r"
CLEAR_LINE = "\x15"  # Ctrl-U: prompt_toolkit deletes the default text
CTRL_C = "\x03"
CTRL_D = "\x04"


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """An environment with no model, no key, no config: a first run."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith(("_API_KEY", "_BASE_URL")) and k not in ("ACP_SERVER_MODEL",)
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        TERM="xterm",
        PROMPT_TOOLKIT_NO_CPR="1",  # the pty answers no cursor-position requests
        NO_COLOR="1",
    )
    env.update(extra)
    return env


def spawn(home: Path, *args: str, **extra: str) -> pexpect.spawn:
    """`acp-server ARGS` on a fresh pseudo-terminal; everything it shows is kept in
    `shown(child)`."""
    child = pexpect.spawn(
        SERVER,
        list(args) or ["setup"],
        env=clean_env(home, **extra),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 160),
    )
    child.logfile_read = Tee()
    return child


class Tee(io.StringIO):
    def write(self, text: str) -> int:
        if os.environ.get("SETUP_TEST_LOG"):
            sys.stderr.write(text)
        return super().write(text)


def shown(child: pexpect.spawn) -> str:
    """Everything the program wrote to the terminal so far."""
    log = child.logfile_read
    assert isinstance(log, Tee)
    return log.getvalue()


def plain(child: pexpect.spawn) -> str:
    """`shown(child)` without the terminal's control sequences (colours, cursor moves)."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown(child))


def answer_text(child: pexpect.spawn, prompt: str, text: str) -> None:
    """At the text prompt `prompt`, type `text` and press Enter. Nothing is erased first: a
    default is a hint shown in the empty answer's place, not text in it."""
    child.expect_exact(prompt)
    child.send(text + ENTER)


def pick(child: pexpect.spawn, prompt: str, downs: int) -> None:
    """At the select prompt `prompt`, move down `downs` times and press Enter."""
    child.expect_exact(prompt)
    child.send(DOWN * downs + ENTER)


def finish(child: pexpect.spawn) -> tuple[int, str]:
    """Wait for the end; (exit status, everything printed since the last expect)."""
    child.expect(pexpect.EOF)
    rest = child.before or ""
    child.close()
    assert child.exitstatus is not None, f"killed by signal {child.signalstatus}"
    return child.exitstatus, rest


def config_file(home: Path) -> Path:
    return home / "config" / "acp-server" / "config.toml"
