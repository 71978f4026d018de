"""`acp-server setup`: choose a provider and its URL, check them, then the key and a model, prove
they answer, and write the config file (docs/rfc/implemented/feature/2026-12-01-first-run-setup.md).

What can be checked comes before what is asked: the URL must answer, and its model list, asked
without a key, says whether the server needs one, before a key is asked for. Suggested values
(the provider's URL, the usual key variable) are hints Enter accepts, not text to erase.
Questions are asked with questionary (on prompt_toolkit), imported only here. Every failure a
user can cause (an unreachable URL, a rejected key, an unknown model, a config file that is
not TOML) gets a sentence and another try; Ctrl-C and end of input (Ctrl-D) stop without
touching the config file. The file is written only after the model answered (or, when the key
is in a variable this shell does not have, after saying that it could not be tried),
atomically and with mode 0600 (`configfile`). The candidate file is read back from memory: a
typed key is written to no file but the config.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
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
ENTER_HINT = "Enter takes the one shown"

Parse = Callable[[str], Settings]
"""The server's config reader on the text setup is about to write."""


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
            choice, answer = _choose(existing, lambda text: config.parse(text, path))
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
    if answer is None:
        say(f"\nWrote {path} (mode 0600): default_model = {choice.spec!r}.")
        say(
            f"Not tried: {choice.key.env} is not set here. Set it where your editor starts "
            "the agent, and check with `acp-server doctor` in a shell that has it."
        )
    else:
        shown = redaction.redact(answer.strip())[:80]
        say(f"\n{choice.spec} answered: {shown!r}")
        say(f"Wrote {path} (mode 0600): default_model = {choice.spec!r}.")
    if args.model:
        say(
            f"Note: this command line also names --model {args.model}, which wins over the "
            "config file; remove it from your client's agent settings to use the new model."
        )
    elif os.environ.get(config.model_env):
        say(f"Note: {config.model_env} is set in this environment and wins over the config file.")
    base_url_env = PROVIDERS[choice.provider].base_url_variable
    if os.environ.get(base_url_env):
        say(
            f"Note: {base_url_env} is set in this environment and wins over the base_url just "
            "written; unset it where the agent runs to use the new one."
        )
    if answer is not None:
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


@dataclass(slots=True)
class _Answers:
    """What the questions found so far."""

    kind: Kind
    base_url: str
    key: KeySource = field(default_factory=KeySource)
    models: list[str] = field(default_factory=list)
    """The server's model list ([]: none to pick from, the name is typed)."""
    untried: bool = False
    """The model cannot be tried here: the key's variable is not set in this shell."""

    def choice(self, model: str) -> ProviderChoice:
        return ProviderChoice(self.kind.row.name, self.base_url, self.key, model)


def _choose(existing: str, parse: Parse) -> tuple[ProviderChoice, str | None]:
    """Ask until a provider, URL, key and model answered the tiny request; the answer's text,
    or None when the model could not be tried here (`_Answers.untried`, said to the user).

    The order checks what can be checked before the key is asked for: the URL must answer,
    and its model list, asked without a key, says whether the server needs one."""
    import questionary

    kind = _ask(
        questionary.select(
            "Which provider?",
            choices=[questionary.Choice(k.server.label, value=k) for k in kinds()],
        )
    )
    answers = _Answers(kind, _ask_url(kind))
    _check_url_then_key(answers)
    while True:
        model = _ask_model(answers.models)
        choice = answers.choice(model)
        if answers.untried:
            return choice, None
        say(f"  Sending {choice.spec} one tiny request...")
        try:
            return choice, _try(existing, choice, parse)
        except ProbeFailure as failure:
            from acp_server import redaction

            say(f"  {redaction.redact(failure.message)}")
            if failure.kind == "unreachable":
                answers.base_url = _ask_url(kind)
                _relist(answers)
            elif failure.kind == "key":
                _ask_key_until_listed(answers, needed=True)
            # the model is asked again in every case


def _check_url_then_key(answers: _Answers) -> None:
    """Ask for the URL until it answers; then for a key only if the server needs one (or
    cannot say), and list the models with it."""
    while True:
        say(f"  Checking {answers.base_url} ...")
        try:
            answers.models = list_models(answers.kind.row.name, answers.base_url, None)
        except ProbeFailure as failure:
            if failure.kind == "unreachable":
                say(f"  {failure.message}")
                answers.base_url = _ask_url(answers.kind)
                continue
            if failure.kind == "key":
                say("  The server answers, and needs a key.")
                _ask_key_until_listed(answers, needed=True)
                return
            say(f"  {failure.message}")  # no list: whether a key is needed is not known
            _ask_key_until_listed(answers, needed=answers.kind.server.key_needed, listed=False)
            return
        say(f"  The server answers without a key ({len(answers.models)} models listed).")
        return


def _ask_key_until_listed(answers: _Answers, *, needed: bool, listed: bool = True) -> None:
    """Ask for the key until the server lists its models with it (`listed`: it has a list).
    A key in a variable this shell does not have cannot be checked: that is said, and setup
    goes on without listing or trying (the editor must set it for the agent)."""
    while True:
        answers.key = _ask_key(answers.kind, offer_none=not needed)
        value = _key_value(answers.key)
        answers.untried = answers.key.env is not None and value is None
        if answers.untried:
            say(
                f"  {answers.key.env} is not set in this shell, so setup cannot list or try "
                "the models with it; the file will name it, and your editor must set it for "
                "the agent. Type the model name."
            )
            answers.models = []
            return
        if not listed:
            return
        try:
            answers.models = list_models(answers.kind.row.name, answers.base_url, value)
            return
        except ProbeFailure as failure:
            say(f"  {failure.message}")
            if failure.kind != "key":
                answers.models = []  # no list: the name is typed, the tiny request decides
                return


def _ask_url(kind: Kind) -> str:
    """The base URL; the provider's default is shown as a hint that Enter accepts."""
    import questionary

    default = kind.server.base_url

    def valid(text: str) -> bool | str:
        text = text.strip()
        if not text or (text.startswith(("http://", "https://")) and len(text) > len("https://")):
            return True
        return "Enter an http:// or https:// URL (or nothing for the one shown)"

    hint = f"; {kind.server.hint}" if kind.server.hint else ""
    question = questionary.text(
        f"Base URL ({ENTER_HINT}{hint}):", validate=valid, placeholder=_hint(default)
    )
    answer = str(_ask(question)).strip() or default
    return answer.rstrip("/")


def _ask_key(kind: Kind, *, offer_none: bool) -> KeySource:
    import questionary

    choices = [NO_KEY, TYPE_KEY, ENV_KEY] if offer_none else [TYPE_KEY, ENV_KEY]
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
        if name and (not name.replace("_", "").isalnum() or name[:1].isdigit()):
            return "A variable name: letters, digits and _"
        return True

    default = kind.row.key_variable
    question = questionary.text(
        f"Variable name ({ENTER_HINT}):", validate=valid, placeholder=_hint(default)
    )
    return KeySource(env=str(_ask(question)).strip() or default)


def _hint(default: str) -> Any:
    """A default shown in the answer's place, dimmed, until something is typed."""
    from prompt_toolkit.formatted_text import FormattedText

    return FormattedText([("class:instruction", default)])


def _key_value(key: KeySource) -> str | None:
    """The key itself: typed, or the variable's value in this shell (None: no key here)."""
    if key.value is not None:
        return key.value
    if key.env is not None:
        return os.environ.get(key.env) or None
    return None


def _relist(answers: _Answers) -> None:
    """The model list at a new URL, with the key already chosen ([] when there is none)."""
    try:
        answers.models = list_models(
            answers.kind.row.name, answers.base_url, _key_value(answers.key)
        )
    except ProbeFailure as failure:
        say(f"  {failure.message}")
        answers.models = []


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


def _try(existing: str, choice: ProviderChoice, parse: Parse) -> str:
    """The candidate config, read by the server's own reader from memory (the typed key is
    never written anywhere but the config file), then the tiny request."""
    from acp_server.models.base import ModelConfigError

    try:
        settings = parse(edited_config(existing, choice))
    except ModelConfigError as exc:
        raise ProbeFailure("other", str(exc)) from None
    # What is written is what is tried: the shell's base URL variables would override the file.
    overriding = {row.base_url_variable for row in PROVIDERS.values()}
    environ = {k: v for k, v in os.environ.items() if k not in overriding}
    return model_answers(choice.spec, settings.providers, environ, PROBE_TIMEOUT)
