"""`uv run benchmarks MODE [options]`: one argparse subcommand per discovered mode."""

from __future__ import annotations

import argparse
import contextlib
import json

from benchmarks import __doc__ as package_doc
from benchmarks.mode import discover
from benchmarks.other_build import built
from benchmarks.report import update_docs_section


def main() -> int:
    modes = discover()
    parser = argparse.ArgumentParser(description=(package_doc or "").split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    for name, mode in modes.items():
        mode_parser = sub.add_parser(name, help=mode.help)
        mode.add_args(mode_parser)
        mode_parser.add_argument("--json", action="store_true", help="print raw results as JSON")
        mode_parser.add_argument(
            "--write-docs", action="store_true", help="rewrite this mode's docs section"
        )
    args = parser.parse_args()
    mode = modes[args.mode]
    with contextlib.ExitStack() as builds:
        # A mode that measures another build names its commit; it is built once, here, and
        # removed when the mode is done (benchmarks/other_build.py).
        commit = getattr(args, "baseline", None)
        args.baseline_build = builds.enter_context(built(commit)) if commit else None
        results = mode.run(args)
    report = mode.render(results)
    print(json.dumps(results, indent=2) if args.json else report)
    if args.write_docs:
        update_docs_section(mode.title, report)
    return 0
