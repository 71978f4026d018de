"""First contact: the `acp-server setup` and `acp-server doctor` commands.

Both run in a terminal, never as the server. `setup` talks to the terminal through stderr, its
questions too, and writes nothing to stdout (a client may run it for terminal auth); `doctor`
writes its report to stderr too. They are imported only
when their subcommand is given, so the server's start-up never pays for them (nor for the
terminal-prompt library setup uses).
"""
