"""A file tool's change as v2 diff content: the change list (authoritative) and its Git patch.

v2's `git_patch` is Git's `--patch` text with absolute paths, no `a/`/`b/` prefixes and no
commit metadata (the migration page's example: `diff --git /p /p`, `--- /p`, `+++ /p`). A new
file is `new file mode 100644` from `/dev/null`. The patch is made with difflib's unified diff
(three lines of context, as Git's default); a file that does not end with a newline gets Git's
`\\ No newline at end of file` marker, so the patch applies exactly.
"""

from __future__ import annotations

import difflib

from acp_protocol.v2.tool_call import Diff, DiffChange, DiffPatch

__all__ = ["diff_content", "git_patch"]

NO_NEWLINE = "\\ No newline at end of file\n"


def diff_content(path: str, old_text: str | None, new_text: str) -> Diff:
    """The diff of one file a tool wrote (`old_text` None: it created the file)."""
    operation = "add" if old_text is None else "modify"
    return Diff(
        changes=[DiffChange(operation=operation, path=path, file_type="text")],
        patch=DiffPatch(format="git_patch", text=git_patch(path, old_text, new_text)),
    )


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def git_patch(path: str, old_text: str | None, new_text: str) -> str:
    """Git `--patch` text for `path` going from `old_text` (None: absent) to `new_text`."""
    header = [f"diff --git {path} {path}\n"]
    source = path
    if old_text is None:
        header.append("new file mode 100644\n")
        source = "/dev/null"
    old_lines = _lines(old_text or "")
    new_lines = _lines(new_text)
    hunks = list(difflib.unified_diff(old_lines, new_lines, n=3))[2:]  # without ---/+++
    if not hunks:
        return "".join(header)  # no text change (an empty new file, or the same text)
    body: list[str] = []
    for line in hunks:
        if line.endswith("\n"):
            body.append(line)
        else:  # the last line of a text without a final newline
            body.append(line + "\n" + NO_NEWLINE)
    return "".join([*header, f"--- {source}\n", f"+++ {path}\n", *body])
