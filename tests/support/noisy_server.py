"""The real server, with an `initialize` that writes to fd 1 in three ways before answering."""

import os
import subprocess
import tempfile
from pathlib import Path

from acp_server import server
from acp_server.acp.methods.handshake import Handshake
from acp_server.acp.options import ServerOptions

quiet_initialize = Handshake.initialize


async def noisy_initialize(self, request, params):  # type: ignore[no-untyped-def]
    print("stray print", flush=True)
    os.write(1, b"raw fd 1 write\n")
    subprocess.run(["sh", "-c", "echo child output"], check=True)  # noqa: ASYNC221
    return await quiet_initialize(self, request, params)


Handshake.initialize = noisy_initialize  # type: ignore[method-assign]
server.run(ServerOptions(data_dir=Path(tempfile.mkdtemp())))
