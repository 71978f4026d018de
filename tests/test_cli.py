"""The command line (acp_server/cli.py), parsed in process: the options and their defaults, a
command before or after them, repeatable `--pass-env`, and clear refusals of a bad value. What
`main` does with them needs a process of its own (it sets up logging, scrubs the environment
and serves stdio): tests/e2e/test_main.py, tests/e2e/test_secrets.py (`--pass-env`, keys kept
from children) and tests/e2e/test_modes.py (`--mode`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_server import __version__
from acp_server.cli import build_parser
from acp_server.models.providers import PROVIDERS, default_key_variables


def test_without_options_it_serves_with_the_documented_defaults() -> None:
    args = build_parser().parse_args([])
    assert args.command is None
    assert (args.model, args.data_dir, args.mode, args.log_level) == (
        None,
        None,
        "default",
        "warning",
    )
    assert (args.max_line_bytes, args.deterministic, args.pass_env) == (64 * 1024 * 1024, False, [])


def test_a_command_may_come_before_or_after_the_options() -> None:
    before = build_parser().parse_args(["doctor", "--model", "echo", "--data-dir", "/d"])
    after = build_parser().parse_args(["--model", "echo", "--data-dir", "/d", "doctor"])
    assert vars(before) == vars(after)
    assert (after.command, after.model, after.data_dir) == ("doctor", "echo", Path("/d"))


def test_pass_env_repeats_and_the_help_names_every_provider_and_key_variable() -> None:
    args = build_parser().parse_args(["--pass-env", "OPENAI_API_KEY", "--pass-env", "OTHER"])
    assert args.pass_env == ["OPENAI_API_KEY", "OTHER"]
    text = build_parser().format_help()
    for name in PROVIDERS:
        assert f"{name}:MODEL" in text
    for variable in default_key_variables():
        assert variable in " ".join(text.split())


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["--max-line-bytes", "0"], "argument --max-line-bytes: must be a positive integer"),
        (["--max-line-bytes", "many"], "argument --max-line-bytes: invalid _positive_int value"),
        (["--mode", "yolo"], "argument --mode: invalid choice: 'yolo'"),
        (["--log-level", "loud"], "argument --log-level: invalid choice: 'loud'"),
        (["serve"], "argument command: invalid choice: 'serve'"),
    ],
)
def test_a_bad_value_is_refused_naming_the_option(
    argv: list[str], problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(argv)
    assert exited.value.code == 2
    assert problem in capsys.readouterr().err


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"acp-server {__version__}\n"
