"""The config file (`config.toml`), model-spec precedence, and `load_model` with settings."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import pytest

from acp_server.config import Config, choose_model_spec, config_path, load_config
from acp_server.models.anthropic import AnthropicProvider
from acp_server.models.base import ModelConfigError, ModelError
from acp_server.models.http import HttpOptions, close_provider
from acp_server.models.openai import OpenAIProvider
from acp_server.models.providers import ProviderSettings, ProviderTables
from acp_server.models.spec import check_spec, load_model
from tests.support.providers import collect
from tests.support.sse_server import free_port, recorded, serve

EXAMPLE = """\
default_model = "openai:gpt-4o-mini"
models = ["openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5", "openai:gpt-4o-mini"]

[providers.openai]
base_url = "http://127.0.0.1:8080/v1"
api_key_env = "LOCAL_KEY"
read_timeout = 120

[providers.anthropic]
api_key_env = "MY_ANTHROPIC_KEY"
connect_timeout = 5
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_full_example(tmp_path: Path) -> None:
    path = write(tmp_path, EXAMPLE)
    settings = load_config(path)
    assert settings == Config(
        default="openai:gpt-4o-mini",
        offered=["openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5"],  # duplicates dropped
        providers=ProviderTables(
            {
                "openai": ProviderSettings(
                    base_url="http://127.0.0.1:8080/v1",
                    api_key_env="LOCAL_KEY",
                    read_timeout=120.0,
                ),
                "anthropic": ProviderSettings(api_key_env="MY_ANTHROPIC_KEY", connect_timeout=5.0),
            },
            path,
        ),
        path=path,
    )
    assert settings.provider("openai").base_url == "http://127.0.0.1:8080/v1"


def test_config_path_follows_xdg_then_home(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    assert config_path({"XDG_CONFIG_HOME": str(xdg), "HOME": "/h"}) == (
        xdg / "acp-server" / "config.toml"
    )
    assert config_path({"HOME": "/h"}) == Path("/h/.config/acp-server/config.toml")
    # a relative XDG_CONFIG_HOME is ignored, as the XDG spec says
    assert config_path({"XDG_CONFIG_HOME": "rel", "HOME": "/h"}) == Path(
        "/h/.config/acp-server/config.toml"
    )


def test_default_location_is_read_and_missing_is_empty(tmp_path: Path) -> None:
    environ = {"XDG_CONFIG_HOME": str(tmp_path)}
    assert load_config(environ=environ) == Config()
    (tmp_path / "acp-server").mkdir()
    (tmp_path / "acp-server" / "config.toml").write_text('default_model = "echo"\n')
    assert load_config(environ=environ).default == "echo"


def test_an_explicit_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ModelConfigError, match=r"config file .*nope.toml: not found"):
        load_config(tmp_path / "nope.toml")


def test_invalid_toml_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, 'default_model = "echo"\nmodels = = ["echo"]\n')
    with pytest.raises(ModelConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"config file {path}: invalid TOML:")
    assert "line 2" in message


def test_a_100k_character_table_header_is_read_in_linear_time(tmp_path: Path) -> None:
    """The line finder once ran a regex that was quadratic in a header's run of spaces (100k
    spaces: about 40 s). The error still names the line; no clock is read: it finishes."""
    header = '[providers.openai.models."x' + " " * 100_000 + 'y"]'
    path = write(tmp_path, f"{header}\ncontext_window = 5\n[tools]\nmax_read_lines = 0\n")
    with pytest.raises(ModelConfigError, match=r", line 4: \[tools\] `max_read_lines` must be"):
        load_config(path)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("default_modle = 'echo'\n", r", line 1: unknown key `default_modle`"),
        ("\ndefault_model = 3\n", r", line 2: `default_model` must be a string"),
        ("models = 'openai:x'\n", r", line 1: `models` must be a list"),
        ("models = ['gemini:pro']\n", r", line 1: `models`: unknown model spec 'gemini:pro'"),
        ("default_model = 'openai:'\n", r", line 1: .* needs a model name: openai:MODEL"),
        (
            "[providers.gemini]\nbase_url = 'x'\n",
            r", line 1: unknown provider \[providers.gemini\]",
        ),
        (
            "[providers.openai]\n\nbase_ur = 'x'\n",
            r", line 3: unknown key `base_ur` in \[providers.openai\]",
        ),
        ("[providers.openai]\nbase_url = ''\n", r", line 2: .*`base_url` must be a non-empty"),
        (
            "[providers.openai]\nread_timeout = 0\n",
            r", line 2: .*`read_timeout` must be a positive",
        ),
        ("[providers.openai]\nread_timeout = true\n", r", line 2: .*`read_timeout` must be"),
        ("providers = 1\n", r", line 1: `providers` must be a table"),
        (
            "[providers.openai]\napi_key_env = 'K'\napi_key = 'x'\n",
            r", line 3: \[providers.openai\] sets both `api_key` and `api_key_env`; keep one",
        ),
    ],
)
def test_bad_values_are_clear_errors(tmp_path: Path, text: str, problem: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ModelConfigError, match="^config file " + re.escape(str(path)) + problem):
        load_config(path)


def test_check_spec() -> None:
    assert check_spec("echo") is None
    assert check_spec("script:/x.json") is None
    assert check_spec("openai:gpt-4o") is None
    assert check_spec("anthropic:claude") is None
    assert check_spec("anthropic:") == "model spec 'anthropic:' needs a model name: anthropic:MODEL"
    assert check_spec("x") is not None


def test_precedence_cli_then_env_then_file() -> None:
    settings = Config(default="openai:from-file")
    env = {"ACP_SERVER_MODEL": "openai:from-env"}
    assert choose_model_spec("openai:from-cli", settings, env) == "openai:from-cli"
    assert choose_model_spec(None, settings, env) == "openai:from-env"
    assert choose_model_spec(None, settings, {"ACP_SERVER_MODEL": ""}) == "openai:from-file"
    assert choose_model_spec("", settings, {}) == "openai:from-file"
    assert choose_model_spec(None, Config(), {}) is None
    assert choose_model_spec(None, None, {}) is None


def test_load_model_uses_provider_settings(tmp_path: Path) -> None:
    settings = load_config(write(tmp_path, EXAMPLE))
    p = load_model("openai:llama", settings.providers, environ={"LOCAL_KEY": "k"})
    assert isinstance(p, OpenAIProvider)
    assert p.endpoint.base_url == "http://127.0.0.1:8080/v1"
    assert p.endpoint.key_env == "LOCAL_KEY"
    # the fix names the file's setting, since that is where the URL came from
    assert p.endpoint.base_url_env == f"base_url in [providers.openai] of {settings.path}"
    # the environment variable wins over the file
    p = load_model(
        "openai:llama", settings.providers, environ={"OPENAI_BASE_URL": "http://10.0.0.1:1/v1"}
    )
    assert isinstance(p, OpenAIProvider)
    assert p.endpoint.base_url == "http://10.0.0.1:1/v1"
    assert p.endpoint.base_url_env == "OPENAI_BASE_URL"
    a = load_model("anthropic:claude", settings.providers, environ={})
    assert isinstance(a, AnthropicProvider)
    assert a.endpoint.key_env == "MY_ANTHROPIC_KEY"
    assert a.endpoint.base_url == "https://api.anthropic.com"


def test_a_key_in_the_file_wins_and_is_named_as_the_fix(tmp_path: Path) -> None:
    path = write(tmp_path, '[providers.anthropic]\napi_key = "sk-in-file"\n')
    settings = load_config(path)
    assert "sk-in-file" not in repr(settings)
    a = load_model("anthropic:claude", settings.providers, environ={"ANTHROPIC_API_KEY": "sk-env"})
    assert isinstance(a, AnthropicProvider)
    assert a.endpoint.key_env == f"api_key in [providers.anthropic] of {path}"
    assert settings.providers.file_keys() == ["sk-in-file"]


def test_load_model_rejects_bad_specs() -> None:
    with pytest.raises(ModelConfigError, match="needs a model name: openai:MODEL"):
        load_model("openai:")
    with pytest.raises(ModelConfigError, match="unknown model spec 'gemini:pro'"):
        load_model("gemini:pro")


def test_configured_key_variable_and_base_url_are_used_on_the_wire(tmp_path: Path) -> None:
    async def main() -> None:
        async with serve(recorded("openai_text")) as server:
            text = f'[providers.openai]\nbase_url = "{server.url}/v1"\napi_key_env = "LOCAL_KEY"\n'
            settings = load_config(write(tmp_path, text))
            p = load_model("openai:llama", settings.providers, environ={"LOCAL_KEY": "sk-local"})
            await collect(p)
            await close_provider(p)
        assert server.requests[0].headers["authorization"] == "Bearer sk-local"

    anyio.run(main)


def test_an_unreachable_configured_url_names_the_setting(tmp_path: Path) -> None:
    async def main() -> None:
        port = await free_port()
        text = f'[providers.openai]\nbase_url = "http://127.0.0.1:{port}/v1"\n'
        settings = load_config(write(tmp_path, text))
        p = load_model("openai:m", settings.providers, environ={})
        assert isinstance(p, OpenAIProvider)
        p._http.options = HttpOptions(max_attempts=1)  # production backoff would take 3.5 s
        with pytest.raises(ModelError, match=r"Check base_url in \[providers.openai\] of "):
            await collect(p)
        await close_provider(p)

    anyio.run(main)


def test_context_window_reaches_the_provider_for_usage_updates(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[providers.openai]\ncontext_window = 32768\n")
    settings = load_config(config)
    assert settings.provider("openai").defaults.context_window == 32768
    provider = load_model("openai:local", settings.providers, environ={})
    assert isinstance(provider, OpenAIProvider)
    assert provider._http.options.context_window == 32768


def test_context_window_must_be_a_positive_integer(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[providers.anthropic]\ncontext_window = 1.5\n")
    with pytest.raises(ModelConfigError, match="context_window"):
        load_config(config)


def test_max_output_tokens_per_provider_and_model(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        "[providers.anthropic]\nmax_output_tokens = 3000\n"
        '[providers.anthropic.models."claude-small"]\nmax_output_tokens = 500\n'
    )
    settings = load_config(config)
    small = load_model("anthropic:claude-small", settings.providers, environ={})
    other = load_model("anthropic:claude-big", settings.providers, environ={})
    plain = load_model("openai:local", settings.providers, environ={})
    assert isinstance(small, AnthropicProvider) and isinstance(other, AnthropicProvider)
    assert (small.max_output_tokens, other.max_output_tokens) == (500, 3000)
    assert isinstance(plain, OpenAIProvider) and plain.max_output_tokens == 8192


@pytest.mark.parametrize("value", ["0", "1.5", '"many"'])
def test_max_output_tokens_must_be_a_positive_integer(tmp_path: Path, value: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[providers.openai.models."m"]\nmax_output_tokens = {value}\n')
    with pytest.raises(ModelConfigError, match="max_output_tokens"):
        load_config(config)


@pytest.mark.anyio
async def test_images_per_provider_and_model_reach_the_providers(tmp_path: Path) -> None:
    from acp_server.cancellation import TurnCancellation

    config = tmp_path / "config.toml"
    config.write_text(
        "[providers.openai]\nimages = true\n"
        '[providers.openai.models."text-only"]\nimages = false\n'
        "[providers.anthropic]\nimages = false\n"
    )
    settings = load_config(config)
    signal = TurnCancellation().signal
    seeing = load_model("openai:llava", settings.providers, environ={})
    blind = load_model("openai:text-only", settings.providers, environ={})
    claude = load_model("anthropic:claude-x", settings.providers, environ={})
    assert isinstance(seeing, OpenAIProvider) and await seeing.takes_images(signal)
    assert isinstance(blind, OpenAIProvider) and not await blind.takes_images(signal)
    assert isinstance(claude, AnthropicProvider) and not await claude.takes_images(signal)
    for provider in (seeing, blind, claude):
        await close_provider(provider)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[providers.openai]\nimages = 1\n", "`images` must be true or false"),
        ('[providers.openai.models."m"]\nimages = "yes"\n', "`images` must be true or false"),
        ("[tools]\nmax_image_bytes = 10\n", "`max_image_bytes` must be an integer of at least"),
        ("[skills]\ndirs = '.agents/skills'\n", "`dirs` must be a list of directory paths"),
        ("[skills]\ndirs = ['../elsewhere']\n", "climbs out with `..`"),
        ("[skills]\nplaces = []\n", "unknown key `places` in \\[skills\\]"),
    ],
)
def test_image_and_skill_keys_are_checked(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(ModelConfigError, match=problem):
        load_config(write(tmp_path, text))


def test_skill_dirs_split_into_the_repositorys_and_the_users(tmp_path: Path) -> None:
    from acp_server.tools.skill_places import SkillPlaces

    assert load_config(write(tmp_path, "")).skills == SkillPlaces()
    settings = load_config(write(tmp_path, f'[skills]\ndirs = ["team", "{tmp_path}", "~/s"]\n'))
    assert settings.skills == SkillPlaces((Path("team"),), (tmp_path, Path("~/s").expanduser()))
    assert settings.tools.max_image_bytes == 3_932_160
