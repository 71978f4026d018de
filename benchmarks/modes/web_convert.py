"""web-convert: web_fetch on 2 MiB pages whose conversion to Markdown is slow or grows without
bound (issue 35): the agent's added peak RSS, the prompt's time, and how long a cancel sent
while the page converts takes to be answered. The baseline (`--baseline`, an older build's
acp-server) converted in a worker thread of the agent; this build converts in a child process.
"""

from __future__ import annotations

import argparse
import http.server
import json
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmarks.client import AgentProcess, text_prompt
from benchmarks.measure import SUBJECT, Result, Target, evaluate, require_positive, versions
from benchmarks.mode import Mode
from benchmarks.modes.read_file import vm_hwm_mib
from benchmarks.other_build import add_baseline_args, agents_to_measure
from benchmarks.report import render_header, render_verdicts, run_context
from benchmarks.sampling import cancel_stats, spread_cells

MiB = 1 << 20
PAGE_BYTES = 2 * MiB  # the default [web_fetch] max_bytes
ADDED_MIB_LIMIT = 16.0  # 8 times the cap
CANCEL_P99_MS_LIMIT = 50.0  # the tool-cancel mode's bound
CANCEL_AFTER_S = 0.1  # after the server wrote the last byte of the page
RESPONSE_TIMEOUT_S = 120.0
ENV = {"ACP_SERVER_SANDBOXED": "1"}  # lets root run --mode bypass: no permission asked


def _fill(unit: bytes, head: bytes = b"", tail: bytes = b"") -> bytes:
    return head + unit * ((PAGE_BYTES - len(head) - len(tail)) // len(unit)) + tail


def documentation() -> bytes:
    section = (
        b"<h2>Section</h2><p>Some <b>text</b> with a <a href='/x'>link</a> and <code>code"
        b"</code>.</p><ul><li>one</li><li>two</li></ul><table><tr><td>a</td><td>b</td></tr>"
        b"</table>\n"
    )
    return _fill(section, b"<html><body>", b"</body></html>")


def nested_blockquotes() -> bytes:
    depth = PAGE_BYTES // 2 // len(b"<blockquote>t ")
    return b"<blockquote>t " * depth + b"x" + b"</blockquote>" * depth


def colspan_table() -> bytes:
    return _fill(b"<tr>" + b"<td colspan=1000>x</td>" * 20 + b"</tr>\n", b"<table>", b"</table>")


def unclosed_blockquotes() -> bytes:
    return _fill(b"<blockquote>line of text\n")


SMALL = 99  # the index of the warm-up page
PAGES: dict[str, Callable[[], bytes]] = {
    "documentation page": documentation,
    "nested blockquotes": nested_blockquotes,
    "colspan=1000 table": colspan_table,
    "unclosed blockquotes": unclosed_blockquotes,
}


class _Pages:
    """The pages on 127.0.0.1, and an event set when a page's last byte was written."""

    def __init__(self) -> None:
        self.bodies = {f"/{index}": build() for index, build in enumerate(PAGES.values())}
        self.bodies[f"/{SMALL}"] = b"<h1>Small</h1><p>a page to warm up with</p>"
        self.sent = threading.Event()
        pages = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                body = pages.bodies.get(self.path, b"")
                self.send_response(200 if body else 404)
                self.send_header("content-type", "text/html; charset=utf-8")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                    self.wfile.flush()
                except OSError:
                    return
                if self.path != f"/{SMALL}":
                    pages.sent.set()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True

    def url(self, index: int) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/{index}"


@contextmanager
def _serving() -> Iterator[_Pages]:
    pages = _Pages()
    thread = threading.Thread(target=pages.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield pages
    finally:
        pages.server.shutdown()
        pages.server.server_close()


def _agent(name: str, exe: Path, tmp: Path, responses: list[object], tag: str) -> AgentProcess:
    script = tmp / f"script-{tag}.json"
    script.write_text(json.dumps({"responses": responses}))
    argv = [str(exe), "--model", f"script:{script}", "--mode", "bypass"]
    argv += ["--data-dir", str(tmp / f"data-{tag}")]
    env = {**ENV, "XDG_CONFIG_HOME": str(tmp / "config")}
    return AgentProcess(name, argv, env=env, response_timeout=RESPONSE_TIMEOUT_S)


def _fetch_call(url: str) -> list[object]:
    return [{"tool_call": {"name": "web_fetch", "arguments": {"url": url}}}]


def memory_run(name: str, exe: Path, tmp: Path, pages: _Pages, index: int, tag: str) -> Result:
    """Fresh agent: a first prompt fetches a small page (what a first fetch imports), then
    peak RSS, a second prompt that fetches the page, peak RSS again."""
    responses = [_fetch_call(pages.url(SMALL)), [{"text": "warm"}]]
    responses += [_fetch_call(pages.url(index)), [{"text": "done"}]]
    with _agent(name, exe, tmp, responses, tag) as agent:
        agent.initialize()
        session_id = agent.new_session(str(tmp))
        agent.call("session/prompt", text_prompt(session_id, "warm up"))
        before = vm_hwm_mib(agent.proc.pid)
        request_id, t0 = agent.request("session/prompt", text_prompt(session_id, "fetch"))
        t1, result = agent.wait_response(request_id)
        after = vm_hwm_mib(agent.proc.pid)
        statuses = [s for s in agent.tool_statuses if s in ("completed", "failed")]
        agent.close()
    return {
        "added_mib": after - before,
        "prompt_s": t1 - t0,
        "stop_reason": (result or {}).get("stopReason"),
        "tool_statuses": statuses[1:],
    }


def cancel_runs(
    name: str, exe: Path, tmp: Path, pages: _Pages, url: str, tag: str, samples: int
) -> list[Result]:
    """One agent whose every model request fetches the page; per sample: prompt, wait until
    the server wrote the page's last byte, CANCEL_AFTER_S, cancel; time cancel -> response."""
    runs = []
    with _agent(name, exe, tmp, [_fetch_call(url)], tag) as agent:
        agent.initialize()
        session_id = agent.new_session(str(tmp))
        for _ in range(samples):
            pages.sent.clear()
            request_id, _ = agent.request("session/prompt", text_prompt(session_id, "fetch"))
            if not pages.sent.wait(RESPONSE_TIMEOUT_S):
                raise RuntimeError(f"{name}: the page was never fetched")
            time.sleep(CANCEL_AFTER_S)
            t_cancel = agent.notify("session/cancel", {"sessionId": session_id})
            t_response, result = agent.wait_response(request_id)
            runs.append(
                {
                    "ms": (t_response - t_cancel) * 1000,
                    "stop_reason": (result or {}).get("stopReason"),
                }
            )
        agent.close()
    return runs


def add_web_convert_args(parser: argparse.ArgumentParser) -> None:
    add_baseline_args(parser)
    parser.add_argument(
        "--samples", type=int, default=5, help="timed cancels per agent and page (default 5)"
    )


def mode_web_convert(args: argparse.Namespace) -> Result:
    require_positive(samples=args.samples)
    agents = agents_to_measure(args)
    rows: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="acp-bench-") as tmp_name, _serving() as pages:
        tmp = Path(tmp_name)
        (tmp / "config" / "acp-server").mkdir(parents=True)
        (tmp / "config" / "acp-server" / "config.toml").write_text(
            "[web_fetch]\nallow_private_addresses = true\n"
        )
        for index, page in enumerate(PAGES):
            for number, (name, exe) in enumerate(agents.items()):  # alternated per page
                tag = f"{index}-{number}"
                url = pages.url(index)
                memory = memory_run(name, exe, tmp, pages, index, f"m{tag}")
                cancels = cancel_runs(name, exe, tmp, pages, url, f"c{tag}", args.samples)
                rows.append(
                    {"agent": name, "page": page, **memory, "cancel": cancel_stats(cancels)}
                )
    subject = [row for row in rows if row["agent"] == SUBJECT]
    metrics = {
        "added_mib": max(row["added_mib"] for row in subject),
        "cancel_p99_ms": max(row["cancel"]["p99_ms"] for row in subject),
    }
    targets: tuple[Target, ...] = (
        (
            f"acp-server: every page adds <= {ADDED_MIB_LIMIT:g} MiB (8 times the 2 MiB cap) to"
            " the agent's peak RSS (the largest)",
            "added_mib",
            "<=",
            ADDED_MIB_LIMIT,
        ),
        (
            f"acp-server: a cancel during the conversion is answered within"
            f" {CANCEL_P99_MS_LIMIT:g} ms, p99 (the worst page)",
            "cancel_p99_ms",
            "<=",
            CANCEL_P99_MS_LIMIT,
        ),
    )
    return {
        "mode": "web-convert",
        **run_context(),
        "samples": args.samples,
        "versions": versions(),
        "rows": rows,
        "verdicts": evaluate(targets, metrics),
    }


def render_web_convert(results: Result) -> str:
    method = (
        f"A local HTTP server serves four pages of {PAGE_BYTES // MiB} MiB (the default"
        " `[web_fetch] max_bytes`): a documentation-like page (headings, paragraphs, links,"
        " lists, small tables), `<blockquote>t ` nested to the middle of the page and closed,"
        " a table of `<td colspan=1000>x</td>` cells, and `<blockquote>line of text` lines"
        " never closed. Per page, agent after agent (acp-server first, then the baseline):"
        " (1) a fresh process (`--mode bypass`, `[web_fetch] allow_private_addresses`) whose"
        " first prompt fetches a small page (what a first fetch imports) and second prompt the"
        " page; peak RSS = VmHWM of the agent process (not its children) before and after the"
        " second prompt; added = the difference; prompt s = the second `session/prompt`"
        " written to its response read. (2) a second"
        f" process whose every model request fetches the page; {results['samples']} samples:"
        " send `session/prompt`, wait until the server wrote the page's last byte, pause"
        f" {CANCEL_AFTER_S * 1000:.0f} ms (the conversion has begun), then time from right"
        " before writing `session/cancel` to reading the prompt's response. Raw-pipe client."
        " The baseline is another build's acp-server run the same way."
    )
    lines = [
        *render_header(results, method),
        "",
        "| page | agent | added peak RSS MiB | prompt s | tool | cancel p50 ms | p90 ms"
        " | p99 ms | max ms | min ms | cancelled |",
        "|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in results["rows"]:
        cancel = row["cancel"]
        lines.append(
            f"| {row['page']} | {row['agent']} | {row['added_mib']:.1f} | {row['prompt_s']:.2f}"
            f" | {', '.join(row['tool_statuses'])} | {spread_cells(cancel)}"
            f" | {cancel['cancelled']}/{results['samples']} |"
        )
    lines += render_verdicts(results)
    return "\n".join(lines) + "\n"


MODE = Mode(
    "web-convert",
    "web_fetch conversion",
    "web_fetch on hostile 2 MiB pages: the agent's added peak RSS, time, cancel latency",
    add_web_convert_args,
    mode_web_convert,
    render_web_convert,
)
