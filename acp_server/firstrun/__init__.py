"""First contact: the `acp-server setup` and `acp-server doctor` commands.

Both run in a terminal, never as the server: they may print to stdout. They are imported only
when their subcommand is given, so the server's start-up never pays for them (nor for the
terminal-prompt library setup uses).
"""
