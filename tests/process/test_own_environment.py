"""`scrub`: the named variables leave this process's /proc/<pid>/environ (the initial block
`execve` copied, which `os.environ` changes do not rewrite), while `os.environ` keeps them.
Run in a fresh interpreter, so the block is that process's own."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux only")

PROGRAM = """
import json, os
from pathlib import Path
from acp_server.process.own_environment import scrub
before = Path("/proc/self/environ").read_bytes()
os.environ.pop("KEEP_ME_KEY", None)  # what os.environ does is not what /proc shows
popped = Path("/proc/self/environ").read_bytes()
scrubbed = scrub(["SECRET_ONE", "SECRET_TWO", "ABSENT"])
after = Path("/proc/self/environ").read_bytes()
print(json.dumps({
    "before": before.decode(), "popped": popped.decode(), "after": after.decode(),
    "scrubbed": scrubbed, "still": os.environ.get("SECRET_ONE"),
}))
"""


def test_scrubbed_values_leave_proc_environ_and_stay_in_os_environ() -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "SECRET_ONE": "first-secret-value",
        "OTHER": "stays",
        "SECRET_TWO": "second=secret=value",
        "KEEP_ME_KEY": "popped-but-still-shown",
    }
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], env=env, capture_output=True, check=True, text=True
    )
    seen = json.loads(done.stdout)
    assert "first-secret-value" in seen["before"]
    assert "popped-but-still-shown" in seen["popped"]  # why scrub exists
    assert sorted(seen["scrubbed"]) == ["SECRET_ONE", "SECRET_TWO"]
    for value in ("first-secret-value", "second=secret=value", "SECRET_ONE", "SECRET_TWO"):
        assert value not in seen["after"]
    assert "OTHER=stays" in seen["after"] and "PATH=/usr/bin:/bin" in seen["after"]
    assert seen["still"] == "first-secret-value"  # the providers still read it
