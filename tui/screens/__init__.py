"""The TUI's screens: one module per thing shown."""
