"""The notice of a rewind, as `/rewind` answers it and `session/load` replays it."""

from __future__ import annotations

import os

from acp_server.printable import one_line
from acp_server.session import records as rec


def _shown(path: str, cwd: str) -> str:
    try:
        relative = os.path.relpath(path, cwd)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative


def rewind_text(record: rec.Rewind, number: int | None, cwd: str) -> str:
    """The notice of one rewind."""
    which = f"turn {number}" if number is not None else "a turn"
    lines = [f"Rewound the conversation to before {which}."]
    if record.restored:
        lines.append("Restored: " + ", ".join(_shown(p, cwd) for p in record.restored) + ".")
    elif not record.kept:
        lines.append("No file needed restoring.")
    for kept in record.kept:
        where = f" (its content before is kept at {kept.kept_at})" if kept.kept_at else ""
        lines.append(f"Not restored: {_shown(kept.path, cwd)}: {kept.reason}{where}.")
    if record.commands:
        shown = "; ".join(f"`{one_line(c)[:120]}`" for c in record.commands[:20])
        more = f" and {len(record.commands) - 20} more" if len(record.commands) > 20 else ""
        lines.append(
            "Not restored: whatever these bash commands of the rewound turns changed "
            f"(acp-server does not track a command's writes): {shown}{more}."
        )
    if record.tasks:
        shown = "; ".join(one_line(t)[:80] for t in record.tasks[:20])
        lines.append(f"Not restored: what the subagents of the rewound turns changed: {shown}.")
    return "\n".join(lines)
