"""keeper: what the keeper (acp_server/process/keeper.py) costs a command: the time from the
start of `run_process` to its result for `bash -c true`, with and without the keeper,
alternated in one run, and the keeper's resident memory while a command runs under it. The
measurement of the background-work RFC.
"""

from __future__ import annotations

import argparse
import time

import anyio

from acp_server.process import run_process, spawn
from benchmarks.measure import Result, require_positive, versions, vm_rss_mib
from benchmarks.mode import Mode
from benchmarks.report import render_header, run_context
from benchmarks.sampling import alternate, spread, spread_cells

SERIES = {"without the keeper": False, "with the keeper": True}


def one_start(keeper: bool) -> Result:
    """One `bash -c true` through `run_process`, from the call to its result."""

    async def run() -> float:
        started = time.perf_counter()
        result = await run_process(
            ["bash", "-c", "true"], signal=None, registry=None, cwd="/", keeper=keeper
        )
        assert result.exit_code == 0, result
        return (time.perf_counter() - started) * 1000

    return {"ms": anyio.run(run)}


def keeper_rss() -> float:
    """VmRSS (MiB) of a keeper whose command sleeps, once it waits for it."""

    async def measure() -> float:
        async with spawn(["sleep", "30"], registry=None, cwd="/", keeper=True) as child:
            await anyio.sleep(0.5)  # the keeper forked and waits
            return vm_rss_mib(child.process.pid)

    return anyio.run(measure)


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--samples", type=int, default=50, help="timed starts per series (50)")


def run(args: argparse.Namespace) -> Result:
    require_positive(samples=args.samples)
    samplers = {name: (lambda keeper=keeper: one_start(keeper)) for name, keeper in SERIES.items()}
    runs = alternate(samplers, args.samples)
    return {
        **run_context(),
        "versions": versions(),
        "samples": args.samples,
        "series": {name: spread([r["ms"] for r in results]) for name, results in runs.items()},
        "keeper_rss_mib": keeper_rss(),
        "verdicts": [],
    }


def render(results: Result) -> str:
    method = (
        f"{results['samples']} timed starts per series after 5 uncounted ones, alternated "
        "(A B A B ...), in this process: from calling `run_process(['bash', '-c', 'true'])` to its "
        "result (spawned, exited, joined), with `keeper=False` and `keeper=True`. The keeper's "
        "memory: VmRSS of the keeper process 0.5 s after it started `sleep 30`. No target: the "
        "figures are what the promise that nothing outlives an agent killed with SIGKILL costs."
    )
    lines = render_header(results, method)
    lines += [
        "",
        "| series | p50 ms | p90 ms | p99 ms | max ms | min ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, figures in results["series"].items():
        lines.append(f"| {name} | {spread_cells(figures)} |")
    lines += ["", f"The keeper's resident memory: {results['keeper_rss_mib']:.1f} MiB."]
    return "\n".join(lines)


MODE = Mode(
    "keeper",
    "The keeper: what a command pays so that it dies with the agent",
    "a command's start with and without the keeper, and the keeper's memory",
    add_args,
    run,
    render,
)
