"""The agent runtime: turns, steps, the inbox, and explicit turn cancellation."""
