"""The ACP bridge: ACP methods -> the runtime; runtime events -> `session/update`."""
