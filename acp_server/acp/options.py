"""What the command line decided: one options value for the process and every session.

Each config section arrives as the type its owner takes (`TurnLimits`, `InstructionSettings`,
`ToolSettings`, ...): the CLI translated the file once (`acp_server/config.py`); the bridge
passes these values on as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from acp_server.agent import InstructionSettings, TurnLimits
from acp_server.rpc.framing import DEFAULT_MAX_LINE_BYTES
from acp_server.tools.toolbox import ToolSettings

if TYPE_CHECKING:
    from acp_server.ids import SequentialIds
    from acp_server.models.base import ModelProvider
    from acp_server.tools.toolbox import Mode


@dataclass(frozen=True)
class ServerOptions:
    """Everything the CLI decides; the server reads the framing limit, the bridge the rest."""

    data_dir: Path
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    model: ModelProvider | None = None
    model_spec: str | None = None
    offered_models: tuple[str, ...] = ()
    """Model specs offered as the `model` config option (the current one included)."""
    load_model: Callable[[str], ModelProvider] | None = None
    """Loads another offered model when a session switches to it."""
    config_path: Path | None = None
    """The config file the CLI read (or would have), which the no-model how-to names."""
    forget_keys: Callable[[], tuple[str, ...]] | None = None
    """Logout: removes the provider keys `acp-server setup` stored in that file (the names of
    the providers whose key went); None: nothing to forget on disk."""
    mode: Mode = "default"
    ids: SequentialIds | None = None
    """Deterministic mode's id factory for sessions, turns and messages (acp_server/ids.py);
    None: random ids."""
    tools: ToolSettings = field(default_factory=ToolSettings)
    """`[tools]`, `[sandbox]`, `[web_fetch]` and `[skills] dirs` of the config file: what a
    session's toolbox is built from."""
    turn_limits: TurnLimits = field(default_factory=TurnLimits)
    """The config file's step, compaction, repeated-call, failed-call and subagent limits."""
    instructions: InstructionSettings = field(default_factory=InstructionSettings)
    """`[instructions]` of the config file, the user's own AGENTS.md (None: not read), the
    `[skills]` places the prompt lists skills from, and the date the model is told (fixed
    under --deterministic)."""
    deterministic: bool = False
    """--deterministic: nothing machine-dependent may reach a transcript (so the command
    sandbox, which depends on bubblewrap being installed, is not offered)."""
    child_environment: Mapping[str, str] | None = None
    """What child processes inherit (the CLI's: ours without the provider keys); None: ours."""
