"""The localmem terminal UI (Textual). It arrives with its own issue."""
