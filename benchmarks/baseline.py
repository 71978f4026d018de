"""The ACP SDK's echo example agent, the baseline of several modes, fetched at run time."""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from benchmarks.measure import SDK_DIST


def add_cache_dir_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=Path.home() / ".cache" / "acp-server-bench",
        help="where the baseline sdist is fetched (default ~/.cache/acp-server-bench)",
    )


def pip_commands() -> list[list[str]]:
    """pip runners to try: this venv's, then a python3 on PATH outside this venv."""
    commands = [[sys.executable, "-m", "pip"]]
    venv_bin = Path(sys.executable).parent
    path = os.pathsep.join(
        p for p in os.environ.get("PATH", "").split(os.pathsep) if p and Path(p) != venv_bin
    )
    system_python = shutil.which("python3", path=path)
    if system_python:
        commands.append([system_python, "-m", "pip"])
    return commands


def fetch_echo_agent(cache_dir: Path) -> Path:
    """The SDK's examples/echo_agent.py for the installed SDK version, cached outside the repo."""
    version = importlib.metadata.version(SDK_DIST)
    target = cache_dir / f"{SDK_DIST}-{version}" / "echo_agent.py"
    if target.exists():
        return target
    download_dir = target.parent / "sdist"
    download_dir.mkdir(parents=True, exist_ok=True)
    spec = f"{SDK_DIST}=={version}"
    args = ["download", "--no-deps", "--no-binary", ":all:", spec, "-d", str(download_dir)]
    for pip in pip_commands():
        probe = subprocess.run([*pip, "--version"], capture_output=True)
        if probe.returncode != 0:
            continue
        print(f"fetching {spec} sdist with: {shlex.join(pip)}", file=sys.stderr)
        subprocess.run([*pip, *args], check=True, stdout=subprocess.DEVNULL)
        break
    else:
        sys.exit("bench: no pip found (tried this venv's python and python3 on PATH)")
    sdists = sorted(download_dir.glob("*.tar.gz"))
    if not sdists:
        sys.exit(f"bench: pip left no sdist in {download_dir}")
    with tarfile.open(sdists[-1]) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("/examples/echo_agent.py"))
        source = tar.extractfile(member)
        assert source is not None
        target.write_bytes(source.read())
    return target
