"""Another acp-server build measured beside this one (`--baseline PATH`), for modes whose
point is a before-and-after: the executable of an older commit's worktree shows the figures a
change removed, in the same run on the same machine."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.measure import SUBJECT, subject_exe


def add_baseline_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another build's acp-server executable to run the same way (e.g. the .venv of a"
        " worktree at an earlier commit)",
    )
    parser.add_argument(
        "--baseline-label", default="baseline", help="how the baseline is named in the table"
    )


def agents_to_measure(args: argparse.Namespace) -> dict[str, Path]:
    """This checkout's acp-server first, then the baseline build if one was named."""
    agents = {SUBJECT: subject_exe()}
    if args.baseline is not None:
        agents[args.baseline_label] = args.baseline
    return agents
