"""`acp-server setup`: choose a provider, its URL, the key and a model, prove they answer, and
write the config file (docs/rfc/implemented/feature/2026-12-01-first-run-setup.md).

Questions are asked with questionary (on prompt_toolkit), imported only here. Every failure a
user can cause (an unreachable URL, a rejected key, an unknown model, a config file that is
not TOML) gets a sentence and another try; Ctrl-C and end of input (Ctrl-D) stop without
touching the config file. The file is written only after the model answered, atomically and
with mode 0600 (`configfile`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from acp_server.firstrun.config_access import ConfigAccess, Settings
from acp_server.firstrun.configfile import (
    KeySource,
    ProviderChoice,
    check_editable,
    edited_config,
)
from acp_server.firstrun.probe import ProbeFailure, list_models, model_answers
from acp_server.models.providers import PROVIDERS, Provider, Server

S = TypeVar("S", bound=Settings)

__all__ = ["PROBE_TIMEOUT", "kinds", "run_setup"]

PROBE_TIMEOUT = 60.0
"""Seconds the tiny request may take (a local server may load the model first)."""


@dataclass(frozen=True, slots=True)
class Kind:
    """One choice of the first question: a registry row and one of its servers."""

    row: Provider
    server: Server


def kinds() -> list[Kind]:
    """The first question's choices, from the provider registry: the hosted APIs by label,
    then the compatible servers (a local server) by label."""
    hosted = [Kind(row, row.hosted) for row in PROVIDERS.values()]
    compatible = [Kind(row, row.compatible) for row in PROVIDERS.values() if row.compatible]
    return [
        *sorted(hosted, key=lambda k: k.server.label),
        *sorted(compatible, key=lambda k: k.server.label),
    ]


TYPE_KEY = "Type the key (hidden; stored in the config file, mode 0600)"
ENV_KEY = "Read it from an environment variable"
NO_KEY = "No key (a local server that needs none)"
TYPE_MODEL = "(type a model name)"


def say(text: str = "") -> None:
    """Show `text` to the user. Setup talks to the terminal through stderr, its questions too
    (`run_setup`): stdout belongs to the protocol in every acp-server process, and a client
    that runs `setup` for terminal auth may not expect it to write there."""
    print(text, file=sys.stderr, flush=True)


class Cancelled(Exception):
    """The user pressed Ctrl-C or ended the input."""


def _ask(question: Any) -> Any:
    """Ask; Ctrl-C and Ctrl-D become Cancelled (questionary's `ask` would swallow them)."""
    try:
        answer = question.unsafe_ask()
    except (KeyboardInterrupt, EOFError):
        raise Cancelled from None
    if answer is None:
        raise Cancelled
    return answer


def run_setup(args: argparse.Namespace, config: ConfigAccess[S]) -> int:
    """The command; 0 when the config file was written, 1 when cancelled, 2 when it cannot
    run (no terminal, a config file setup cannot edit). `config` comes from the CLI (the only
    importer of `acp_server.config`)."""
    from acp_server import redaction

    path = config.path
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        say(
            "acp-server setup asks questions: run it in a terminal. Without one, write "
            f"{path} yourself (see docs/editors.md) or pass --model SPEC.",
        )
        return 2
    try:
        existing = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        existing = ""
    except (OSError, UnicodeDecodeError) as exc:
        say(f"acp-server setup: cannot read {path}: {exc}")
        return 2
    try:
        check_editable(existing)
    except ValueError as exc:
        say(
            f"acp-server setup: {path} is not valid TOML ({exc}). Fix or move it, then run "
            "setup again.",
        )
        return 2
    say(f"Set up the model acp-server uses. The answers go to {path}.")
    say("Ctrl-C stops at any time and leaves that file as it is.\n")
    try:
        with _questions_on_stderr():
            choice, answer = _choose(existing, config.read)
    except (Cancelled, KeyboardInterrupt, EOFError):  # Ctrl-C between two questions too
        say(f"\nSetup cancelled; {path} is unchanged.")
        return 1
    try:
        from acp_server.firstrun.configfile import write_atomically

        write_atomically(path, edited_config(existing, choice))
    except OSError as exc:
        say(f"acp-server setup: cannot write {path}: {exc}")
        return 2
    except KeyboardInterrupt:
        say(f"\nSetup cancelled; {path} is unchanged.")
        return 1
    shown = redaction.redact(answer.strip())[:80]
    say(f"\n{choice.spec} answered: {shown!r}")
    say(f"Wrote {path} (mode 0600): default_model = {choice.spec!r}.")
    if args.model:
        say(
            f"Note: this command line also names --model {args.model}, which wins over the "
            "config file; remove it from your client's agent settings to use the new model."
        )
    elif os.environ.get("ACP_SERVER_MODEL"):
        say("Note: ACP_SERVER_MODEL is set in this environment and wins over the config file.")
    base_url_env = PROVIDERS[choice.provider].base_url_variable
    if os.environ.get(base_url_env):
        say(
            f"Note: {base_url_env} is set in this environment and wins over the base_url just "
            "written; unset it where the agent runs to use the new one."
        )
    say("Check everything with: acp-server doctor")
    return 0


@contextlib.contextmanager
def _questions_on_stderr() -> Iterator[None]:
    """questionary asks through prompt_toolkit, which writes to stdout unless the app session
    says otherwise."""
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.output import create_output

    with create_app_session(output=create_output(stdout=sys.stderr)):
        yield


def _choose(existing: str, read: Callable[[Path | None], Settings]) -> tuple[ProviderChoice, str]:
    """Ask until a provider, URL, key and model answered the tiny request."""
    import questionary

    from acp_server import redaction

    kind = _ask(
        questionary.select(
            "Which provider?",
            choices=[questionary.Choice(k.server.label, value=k) for k in kinds()],
        )
    )
    provider = kind.row.name
    base_url = _ask_url(kind, kind.server.base_url)
    key = _ask_key(kind)
    while True:
        try:
            models = list_models(provider, base_url, _key_value(key))
        except ProbeFailure as failure:
            say(f"  {failure.message}")
            if failure.kind == "unreachable":
                base_url = _ask_url(kind, base_url)
                continue
            if failure.kind == "key":
                key = _ask_key(kind)
                continue
            models = []  # no list: the name is typed
        model = _ask_model(models)
        choice = ProviderChoice(provider, base_url, key, model)
        say(f"  Sending {choice.spec} one tiny request...")
        try:
            answer = _try(existing, choice, read)
        except ProbeFailure as failure:
            say(f"  {redaction.redact(failure.message)}")
            if failure.kind == "unreachable":
                base_url = _ask_url(kind, base_url)
            elif failure.kind == "key":
                key = _ask_key(kind)
            continue  # the model is asked again in every case
        return choice, answer


def _ask_url(kind: Kind, default: str) -> str:
    import questionary

    def valid(text: str) -> bool | str:
        text = text.strip()
        if text.startswith(("http://", "https://")) and len(text) > len("https://"):
            return True
        return "Enter an http:// or https:// URL"

    hint = f" ({kind.server.hint})" if kind.server.hint else ""
    answer = _ask(questionary.text(f"Base URL{hint}:", default=default, validate=valid))
    return str(answer).strip().rstrip("/")


def _ask_key(kind: Kind) -> KeySource:
    import questionary

    choices = [TYPE_KEY, ENV_KEY] if kind.server.key_needed else [NO_KEY, TYPE_KEY, ENV_KEY]
    how = _ask(questionary.select("The API key:", choices=choices))
    if how == NO_KEY:
        return KeySource()
    if how == TYPE_KEY:
        value = _ask(
            questionary.password(
                "Key:", validate=lambda t: bool(t.strip()) or "Enter the key, or press Ctrl-C"
            )
        )
        from acp_server import redaction

        redaction.remember([str(value).strip()])
        return KeySource(value=str(value).strip())

    def valid(text: str) -> bool | str:
        name = text.strip()
        if not name.replace("_", "").isalnum() or name[:1].isdigit():
            return "A variable name: letters, digits and _"
        return True

    default = kind.row.key_variable
    name = str(_ask(questionary.text("Variable name:", default=default, validate=valid)))
    name = name.strip()
    if not os.environ.get(name):
        say(
            f"  {name} is not set here, so the models cannot be listed with it; your editor "
            "must set it for the agent."
        )
    return KeySource(env=name)


def _key_value(key: KeySource) -> str | None:
    if key.value is not None:
        return key.value
    return os.environ.get(key.env) if key.env else None


def _ask_model(models: list[str]) -> str:
    import questionary

    if models:
        picked = _ask(
            questionary.select(
                f"Model ({len(models)} listed by the server):", choices=[*models, TYPE_MODEL]
            )
        )
        if picked != TYPE_MODEL:
            return str(picked)

    def valid(text: str) -> bool | str:
        name = text.strip()
        if not name:
            return "Enter a model name"
        if models and name not in models:
            return f"Unknown model {name!r}: the server lists {', '.join(models[:8])}"
        return True

    return str(_ask(questionary.text("Model name:", validate=valid))).strip()


def _try(existing: str, choice: ProviderChoice, read: Callable[[Path | None], Settings]) -> str:
    """The candidate config, read back by the server's own reader, then the tiny request."""
    from acp_server.models.base import ModelConfigError

    with tempfile.TemporaryDirectory(prefix="acp-server-setup-") as scratch:
        candidate = Path(scratch) / "config.toml"
        candidate.write_text(edited_config(existing, choice), encoding="utf-8")
        try:
            settings = read(candidate)
        except ModelConfigError as exc:
            raise ProbeFailure("other", str(exc)) from None
    # What is written is what is tried: the shell's base URL variables would override the file.
    overriding = {row.base_url_variable for row in PROVIDERS.values()}
    environ = {k: v for k, v in os.environ.items() if k not in overriding}
    return model_answers(choice.spec, settings.providers, environ, PROBE_TIMEOUT)
