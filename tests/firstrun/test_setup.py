"""`acp-server setup` through a real pseudo-terminal, against a local server speaking the OpenAI
and Anthropic model-list and chat APIs (tests/support/fake_provider.py)."""

from __future__ import annotations

import os
import stat
import subprocess
import tomllib
from pathlib import Path

import pexpect
import pytest

from tests.firstrun.terminal import (
    CLEAR_LINE,
    CTRL_C,
    CTRL_D,
    ENTER,
    Tee,
    answer_text,
    clean_env,
    config_file,
    finish,
    pick,
    plain,
    shown,
    spawn,
)
from tests.support.agent_process import SERVER
from tests.support.fake_provider import KEY, MODELS, fake_provider

pytestmark = pytest.mark.skipif(
    not Path("/dev/ptmx").exists(), reason="needs pseudo-terminals (POSIX)"
)

ANTHROPIC, OPENAI, COMPATIBLE = 0, 1, 2
TYPED, FROM_ENV = 0, 1  # the key choices of a server that needs a key

OLD_CONFIG = "# mine\nmax_steps = 7\n\n[tools]\nmax_read_lines = 10\n"


def read_config(home: Path) -> dict[str, object]:
    return tomllib.loads(config_file(home).read_text())


def test_a_compatible_server_with_a_typed_key_is_written_0600_keeping_the_rest(
    tmp_path: Path,
) -> None:
    config_file(tmp_path).parent.mkdir(parents=True)
    config_file(tmp_path).write_text(OLD_CONFIG)
    with fake_provider() as server:
        child = spawn(tmp_path)
        pick(child, "Which provider?", COMPATIBLE)
        answer_text(child, "Base URL", server.url + "/v1")
        child.expect_exact("The server answers, and needs a key.")
        pick(child, "The API key:", TYPED)
        child.expect_exact("Key:")
        child.send(KEY + ENTER)
        pick(child, f"Model ({len(MODELS)} listed by the server):", 1)
        status, _ = finish(child)
    assert status == 0, shown(child)
    assert "openai:other-model answered: 'Hello! How can I help?'" in shown(child)
    assert KEY not in shown(child)  # hidden input: asterisks only
    assert ("POST", "/v1/chat/completions", "other-model") in server.seen
    written = read_config(tmp_path)
    assert written["default_model"] == "openai:other-model"
    assert written["providers"] == {"openai": {"base_url": server.url + "/v1", "api_key": KEY}}
    # The rest of the file, comments included, is kept.
    text = config_file(tmp_path).read_text()
    assert text.startswith("# mine\nmax_steps = 7\n") and "max_read_lines = 10" in text
    assert stat.S_IMODE(config_file(tmp_path).stat().st_mode) == 0o600
    assert [p.name for p in config_file(tmp_path).parent.iterdir()] == ["config.toml"]


def test_the_url_is_checked_before_the_key_and_each_failure_gets_a_message_and_another_try(
    tmp_path: Path,
) -> None:
    with fake_provider() as server:
        child = spawn(tmp_path)
        pick(child, "Which provider?", ANTHROPIC)
        answer_text(child, "Base URL", "not a url")
        child.expect_exact("Enter an http:// or https:// URL")
        child.send(CLEAR_LINE + "http://127.0.0.1:1" + ENTER)  # nothing listens on port 1
        child.expect_exact("cannot reach http://127.0.0.1:1/v1/models")
        answer_text(child, "Base URL", server.url)  # asked again before any key
        child.expect_exact("The server answers, and needs a key.")
        pick(child, "The API key:", TYPED)
        child.expect_exact("Key:")
        child.send("sk-wrong" + ENTER)
        child.expect_exact("the server rejected the key (HTTP 401): invalid api key")
        pick(child, "The API key:", TYPED)
        child.expect_exact("Key:")
        child.send(KEY + ENTER)
        pick(child, "Model (2 listed by the server):", len(MODELS))  # (type a model name)
        answer_text(child, "Model name:", "no-such-model")
        child.expect_exact("Unknown model 'no-such-model': the server lists tiny-model")
        child.send(CLEAR_LINE + "tiny-model" + ENTER)
        status, _ = finish(child)
    assert status == 0, shown(child)
    text = shown(child)
    assert "Traceback" not in text
    assert text.index("cannot reach") < text.index("The API key:")  # no key asked in vain
    assert "anthropic:tiny-model answered: 'Hello!'" in text
    assert read_config(tmp_path)["providers"] == {
        "anthropic": {"base_url": server.url, "api_key": KEY}
    }


def test_enter_takes_the_suggested_url_and_typing_replaces_it_without_erasing(
    tmp_path: Path,
) -> None:
    # Issue 34: the base URL came prefilled, and replacing it took 26 backspaces.
    child = spawn(tmp_path)
    pick(child, "Which provider?", COMPATIBLE)
    child.expect_exact("Base URL (Enter takes the one shown; Ollama: http://127.0.0.1:11434/v1):")
    child.expect_exact("http://127.0.0.1:8080/v1")  # the hint, in the empty answer's place
    child.send(ENTER)
    child.expect_exact("Checking http://127.0.0.1:8080/v1 ...")
    # Ctrl-C at the question that follows, once it is shown, whether or not something answers
    # on port 8080 here. Sent at once, it raced the end of a refused check and was lost while
    # the URL was asked again, on a loaded machine.
    if child.expect_exact(["Base URL (", "The server answers"]) == 0:
        child.expect_exact("http://127.0.0.1:8080/v1")
    else:
        child.expect_exact(["Model", "The API key:"])
    child.send(CTRL_C)
    status, _ = finish(child)
    assert status == 1
    assert not config_file(tmp_path).exists()
    # Typed text replaces the suggestion (answer_text erases nothing): the whole path above.
    with fake_provider(needs_key=False) as server:
        child = spawn(tmp_path)
        pick(child, "Which provider?", COMPATIBLE)
        answer_text(child, "Base URL", server.url + "/v1")
        child.expect_exact(f"Checking {server.url}/v1 ...")
        child.expect_exact("(type a model name)")  # the next question, drawn whole
        child.send(CTRL_C)
        status, _ = finish(child)
    assert status == 1


def test_a_server_that_needs_no_key_is_not_asked_for_one(tmp_path: Path) -> None:
    with fake_provider(needs_key=False) as server:
        child = spawn(tmp_path)
        pick(child, "Which provider?", COMPATIBLE)
        answer_text(child, "Base URL", server.url + "/v1")
        child.expect_exact("The server answers without a key (2 models listed).")
        pick(child, "Model (2 listed by the server):", 0)
        status, _ = finish(child)
    assert status == 0, shown(child)
    assert "The API key:" not in shown(child)
    assert "openai:tiny-model answered" in shown(child)
    assert read_config(tmp_path)["providers"] == {"openai": {"base_url": server.url + "/v1"}}


WRITES_LOGGER = """
import os, sys

_log = os.open(os.environ["SETUP_WRITES_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
_WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def _target(event, args):
    if event == "open":
        path, mode, flags = args
        if (isinstance(mode, str) and set(mode) & set("wax+")) or (flags or 0) & _WRITING:
            return path
    elif event == "os.mkdir":
        return args[0]
    elif event in ("os.rename", "os.replace"):
        return args[1]
    return None


def _writes(event, args):
    path = _target(event, args)
    if isinstance(path, (str, bytes, os.PathLike)):
        os.write(_log, os.fsencode(os.fspath(path)) + b"\\n")


sys.addaudithook(_writes)
"""
"""A sitecustomize module: every path the process opens for writing, creates as a directory
or renames, one per line in $SETUP_WRITES_LOG (Python's audit events)."""


def test_the_typed_key_is_written_to_no_file_but_the_config(tmp_path: Path) -> None:
    # Issue 35: the candidate config with the typed key was written to a temporary folder
    # to be read back, which a SIGKILL or a closed terminal could leave on disk. Every file
    # setup writes, through any Python call, is logged here; only the config's own directory
    # (the atomic write's temporary file, then the config) may appear.
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(WRITES_LOGGER)
    log = tmp_path / "writes.log"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    with fake_provider() as server:
        child = spawn(
            tmp_path,
            PYTHONPATH=str(site),
            SETUP_WRITES_LOG=str(log),
            TMPDIR=str(scratch),
            PYTHONDONTWRITEBYTECODE="1",
        )
        pick(child, "Which provider?", COMPATIBLE)
        answer_text(child, "Base URL", server.url + "/v1")
        pick(child, "The API key:", TYPED)
        child.expect_exact("Key:")
        child.send(KEY + ENTER)
        pick(child, f"Model ({len(MODELS)} listed by the server):", 0)
        status, _ = finish(child)
    assert status == 0, shown(child)
    assert KEY in config_file(tmp_path).read_text()
    written = {Path(line) for line in log.read_text().splitlines()}
    assert written, "the audit hook saw nothing: the check would pass vacuously"
    config_dir = config_file(tmp_path).parent
    outside = sorted(
        str(path)
        for path in written
        # the config's directory, made with its parents, holds the only file written
        if not path.is_relative_to(config_dir)
        and path not in config_dir.parents
        and path != Path(os.devnull)  # keeps nothing
    )
    assert outside == []
    holding = [
        path
        for path in tmp_path.rglob("*")
        if path.is_file() and path != config_file(tmp_path) and KEY.encode() in path.read_bytes()
    ]
    assert holding == []


def test_setup_writes_nothing_to_stdout(tmp_path: Path) -> None:
    # stdout belongs to the protocol in every acp-server process: the questions and messages
    # go to the terminal through stderr, so a redirected stdout stays empty.
    out = tmp_path / "stdout"
    with fake_provider() as server:
        child = pexpect.spawn(
            "/bin/sh",
            ["-c", 'exec "$0" setup > "$1"', SERVER, str(out)],
            env=clean_env(tmp_path),
            encoding="utf-8",
            timeout=60,
            dimensions=(40, 160),
        )
        child.logfile_read = Tee()
        pick(child, "Which provider?", COMPATIBLE)
        answer_text(child, "Base URL", server.url + "/v1")
        pick(child, "The API key:", TYPED)
        child.expect_exact("Key:")
        child.send(KEY + ENTER)
        pick(child, f"Model ({len(MODELS)} listed by the server):", 1)
        status, _ = finish(child)
    assert status == 0, shown(child)
    assert "Wrote " in shown(child)
    assert out.read_bytes() == b""


def test_a_key_in_a_variable_is_named_not_written(tmp_path: Path) -> None:
    with fake_provider() as server:
        # A stale OPENAI_BASE_URL in the shell: what is written is what is tried, and the
        # user is told that the variable would win.
        child = spawn(
            tmp_path, "setup", MY_PROVIDER_KEY=KEY, OPENAI_BASE_URL="http://127.0.0.1:1/v1"
        )
        pick(child, "Which provider?", OPENAI)
        answer_text(child, "Base URL", server.url + "/v1")
        pick(child, "The API key:", FROM_ENV)
        child.expect_exact("Variable name (Enter takes the one shown):")
        answer_text(child, "OPENAI_API_KEY", "MY_PROVIDER_KEY")
        pick(child, "Model (2 listed by the server):", 0)
        status, _ = finish(child)
    assert status == 0, shown(child)
    assert read_config(tmp_path)["providers"] == {
        "openai": {"base_url": server.url + "/v1", "api_key_env": "MY_PROVIDER_KEY"}
    }
    assert KEY not in config_file(tmp_path).read_text()
    assert "Note: OPENAI_BASE_URL is set in this environment and wins" in shown(child)


def test_enter_takes_the_suggested_variable(tmp_path: Path) -> None:
    with fake_provider() as server:
        child = spawn(tmp_path, "setup", ANTHROPIC_API_KEY=KEY)
        pick(child, "Which provider?", ANTHROPIC)
        answer_text(child, "Base URL", server.url)
        pick(child, "The API key:", FROM_ENV)
        answer_text(child, "Variable name", "")
        pick(child, "Model (2 listed by the server):", 0)
        status, _ = finish(child)
    assert status == 0, shown(child)
    assert read_config(tmp_path)["providers"] == {
        "anthropic": {"base_url": server.url, "api_key_env": "ANTHROPIC_API_KEY"}
    }


def test_a_variable_not_set_here_is_named_with_a_note_and_setup_goes_on(tmp_path: Path) -> None:
    # Issue 34: this choice looped back to the key menu, although the message said that the
    # editor must set the variable.
    with fake_provider() as server:
        child = spawn(tmp_path)
        pick(child, "Which provider?", OPENAI)
        answer_text(child, "Base URL", server.url + "/v1")
        pick(child, "The API key:", FROM_ENV)
        answer_text(child, "Variable name", "KEY_OF_MY_EDITOR")
        child.expect_exact("KEY_OF_MY_EDITOR is not set in this shell")
        answer_text(child, "Model name:", "tiny-model")
        status, _ = finish(child)
    assert status == 0, shown(child)
    assert plain(child).count("The API key: (Use arrow keys)") == 1  # asked once: no loop
    assert "Not tried: KEY_OF_MY_EDITOR is not set here" in shown(child)
    assert read_config(tmp_path) == {
        "default_model": "openai:tiny-model",
        "providers": {
            "openai": {"base_url": server.url + "/v1", "api_key_env": "KEY_OF_MY_EDITOR"}
        },
    }
    assert not [seen for seen in server.seen if seen[0] == "POST"]  # nothing was tried


def test_a_model_the_server_refuses_is_asked_again(tmp_path: Path) -> None:
    # A server whose list is missing (404) leaves the name to the user; the tiny request
    # then finds out that the model is unknown.
    with fake_provider() as server:
        child = spawn(tmp_path)
        pick(child, "Which provider?", COMPATIBLE)
        answer_text(child, "Base URL", server.url + "/v1/missing")
        child.expect_exact("no model list at")  # so whether a key is needed is not known
        pick(child, "The API key:", 1)  # (no key, type it, a variable)
        child.expect_exact("Key:")
        child.send(KEY + ENTER)
        answer_text(child, "Model name:", "ghost")
        child.expect_exact("Sending openai:ghost one tiny request")
        child.expect_exact("not found (HTTP 404)")
        child.expect_exact("Model name:")  # asked again
        child.send(CTRL_C)
        status, _ = finish(child)
    assert status == 1
    assert "Traceback" not in shown(child)
    assert not config_file(tmp_path).exists()


@pytest.mark.parametrize("key", [CTRL_C, CTRL_D], ids=["ctrl-c", "eof"])
def test_ctrl_c_or_eof_leaves_the_old_config_as_it_was(tmp_path: Path, key: str) -> None:
    path = config_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(OLD_CONFIG)
    before = path.stat()
    with fake_provider() as server:
        child = spawn(tmp_path)
        pick(child, "Which provider?", COMPATIBLE)
        answer_text(child, "Base URL", server.url + "/v1")
        pick(child, "The API key:", TYPED)
        child.expect_exact("Key:")
        child.send(key)
        status, _ = finish(child)
    assert status == 1
    assert f"Setup cancelled; {path} is unchanged." in shown(child)
    assert "Traceback" not in shown(child)
    assert path.read_text() == OLD_CONFIG
    assert path.stat().st_mtime_ns == before.st_mtime_ns
    assert [p.name for p in path.parent.iterdir()] == ["config.toml"]


@pytest.mark.parametrize(
    "args",
    [["--model", "echo", "setup"], ["setup", "--model", "echo"]],
    ids=["appended", "alone-then-options"],
)
def test_setup_runs_with_options_before_or_after_it(tmp_path: Path, args: list[str]) -> None:
    # A client runs the terminal auth method's args appended to the agent's configured
    # command (`acp-server --model echo setup`) or with the binary alone.
    child = spawn(tmp_path, *args)
    child.expect_exact("Which provider?")
    child.send(CTRL_C)
    status, _ = finish(child)
    assert status == 1


def test_an_invalid_config_file_is_named_not_overwritten(tmp_path: Path) -> None:
    path = config_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("default_model = [oops\n")
    child = spawn(tmp_path)
    status, _ = finish(child)
    assert status == 2
    assert f"{path} is not valid TOML" in shown(child) and "Traceback" not in shown(child)
    assert path.read_text() == "default_model = [oops\n"


def test_without_a_terminal_setup_says_so(tmp_path: Path) -> None:
    done = subprocess.run(
        [SERVER, "setup"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=clean_env(tmp_path),
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "run it in a terminal" in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""
    assert not config_file(tmp_path).exists()


def test_serving_never_imports_the_prompt_library(tmp_path: Path) -> None:
    import json
    import sys

    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/new",
            "params": {"cwd": str(tmp_path), "mcpServers": []},
        },
    ]
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "acp_server", "--model", "echo"],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        env=clean_env(tmp_path),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a.get("id") for a in answers if "id" in a] == [0, 1]
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()}
    assert "acp_server.acp.connection" in imported  # the measure sees the server's imports
    for name in ("questionary", "prompt_toolkit", "tomlkit", "acp_server.firstrun"):
        assert name not in imported
