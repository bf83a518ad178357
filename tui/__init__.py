"""The localmem terminal UI: browse memories at any point in time (Textual).

Start it with ``localmem tui`` (or ``localmem demo``), or from Python::

    from tui import LocalmemApp
    LocalmemApp(path="memories.db", user="sam").run()

It imports only localmem's public names; the library never imports it.
"""

from .app import LocalmemApp

__all__ = ["LocalmemApp"]
