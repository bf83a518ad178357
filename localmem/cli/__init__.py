"""The ``localmem`` command line: parse, call one library function, print.

An interface: it uses the library through its public names.
"""

from .app import main

__all__ = ["main"]
