"""`acp-server doctor` as a real process: one line per check with the fix on stderr and nothing
on stdout, exit 1 only when a first prompt would fail, never a traceback; the model through a
local provider server."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.firstrun.terminal import clean_env, config_file
from tests.support.agent_process import SERVER
from tests.support.fake_provider import KEY, fake_provider


def doctor(home: Path, *args: str, own_stdout: str = "", **env: str) -> tuple[int, str]:
    done = subprocess.run(
        [SERVER, *(args or ("doctor",))],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=clean_env(home, **env),
        cwd=home,
        timeout=180,
        check=False,
    )
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    # stdout is the protocol's in every acp-server process: the report goes to stderr, and
    # doctor's fd 1 holds only what the environment itself wrote there (`own_stdout`).
    assert done.stdout == own_stdout
    return done.returncode, done.stderr


def line(report: str, name: str) -> str:
    (found,) = [x for x in report.splitlines() if x[6:].startswith(f"{name}:")]
    return found


def configure(home: Path, text: str) -> None:
    config_file(home).parent.mkdir(parents=True, exist_ok=True)
    config_file(home).write_text(text)


def test_no_model_fails_with_the_fix_and_leaves_nothing_behind(tmp_path: Path) -> None:
    status, report = doctor(tmp_path)
    assert status == 1
    assert line(report, "config").startswith("ok    config: no config file at")
    assert line(report, "model") == (
        "FAIL  model: no model is configured Fix: run `acp-server setup`, or give --model SPEC "
        "or ACP_SERVER_MODEL=SPEC"
    )
    assert line(report, "data dir").startswith(f"ok    data dir: {tmp_path}/data/acp-server can")
    assert line(report, "stdout").startswith("ok    stdout: the server wrote only JSON-RPC")
    assert report.rstrip().endswith("1 problem(s) stop a first prompt: model.")
    assert not (tmp_path / "data").exists()  # checked, not created


@pytest.mark.parametrize(
    "args", [["--model", "echo", "doctor"], ["doctor", "--model", "echo"]], ids=["before", "after"]
)
def test_options_before_or_after_doctor(tmp_path: Path, args: list[str]) -> None:
    status, report = doctor(tmp_path, *args)
    assert status == 0, report
    assert line(report, "model").startswith("ok    model: echo (from --model) answered")
    assert report.rstrip().endswith("Ready for a first prompt.")


def test_a_configured_provider_answers(tmp_path: Path) -> None:
    with fake_provider() as server:
        configure(
            tmp_path,
            f'default_model = "openai:tiny-model"\n\n[providers.openai]\n'
            f'base_url = "{server.url}/v1"\napi_key = "{KEY}"\n',
        )
        status, report = doctor(tmp_path)
    assert status == 0, report
    assert line(report, "config") == f"ok    config: {config_file(tmp_path)} parses"
    assert line(report, "model") == (
        "ok    model: openai:tiny-model (from default_model in the config file) answered a "
        "tiny request: 'Hello! How can I help?'"
    )
    assert KEY not in report


def test_offline_says_model_unreachable(tmp_path: Path) -> None:
    configure(
        tmp_path, '[providers.anthropic]\nbase_url = "http://127.0.0.1:1"\napi_key = "sk-x"\n'
    )
    status, report = doctor(tmp_path, "doctor", "--model", "anthropic:claude")
    assert status == 1
    model = line(report, "model")
    assert model.startswith("FAIL  model: anthropic:claude (from --model): model unreachable: ")
    assert "Fix: start the server or correct the base URL" in model


def test_a_rejected_key_names_the_fix(tmp_path: Path) -> None:
    with fake_provider() as server:
        status, report = doctor(
            tmp_path,
            "doctor",
            ACP_SERVER_MODEL="openai:tiny-model",
            OPENAI_BASE_URL=server.url + "/v1",
            OPENAI_API_KEY="sk-wrong-key-123456",
        )
    assert status == 1
    model = line(report, "model")
    assert "(from ACP_SERVER_MODEL)" in model and "HTTP 401" in model
    assert model.endswith("Fix: set a valid key (`acp-server setup`)")
    assert "sk-wrong-key-123456" not in report


def test_an_invalid_config_file_fails_with_its_line(tmp_path: Path) -> None:
    configure(tmp_path, "default_model = [\n")
    status, report = doctor(tmp_path)
    assert status == 1
    config = line(report, "config")
    assert config.startswith(f"FAIL  config: config file {config_file(tmp_path)}: invalid TOML")
    assert "Fix: correct" in config
    assert line(report, "model").startswith("FAIL  model: no model is configured")


def test_a_data_dir_that_cannot_be_made_fails(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    status, report = doctor(tmp_path, "--model", "echo", "doctor", "--data-dir", str(blocker / "x"))
    assert status == 1
    assert line(report, "data dir").startswith(f"FAIL  data dir: {blocker} is not a directory")


def test_without_bubblewrap_the_sandbox_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    status, report = doctor(tmp_path, "--model", "echo", "doctor", PATH=str(empty))
    assert status == 0, report
    assert line(report, "sandbox").startswith(
        "warn  sandbox: sandboxed mode is off: bwrap (bubblewrap) is not installed"
    )


def test_a_server_that_writes_to_stdout_fails_the_stdout_check(tmp_path: Path) -> None:
    # Something in the environment (here a sitecustomize module) printing to fd 1 before the
    # server protects it: the protocol stream would be corrupt, and doctor says so. Flushed,
    # so that it reaches fd 1 whether or not PYTHONUNBUFFERED is set where the tests run.
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("print('hello from sitecustomize', flush=True)\n")
    status, report = doctor(
        tmp_path,
        "--model",
        "echo",
        "doctor",
        own_stdout="hello from sitecustomize\n",  # doctor's own start runs it too
        PYTHONPATH=str(site),
    )
    assert status == 1
    stdout = line(report, "stdout")
    assert stdout.startswith(
        "FAIL  stdout: line 1 of stdout is not JSON-RPC: 'hello from sitecustomize'"
    )
