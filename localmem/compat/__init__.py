"""Doors for agents written against other memory libraries: change one import, keep the agent.

* :mod:`localmem.compat.mem0`: ``Memory``, mem0's method names, arguments and return shapes.
* :mod:`localmem.compat.langgraph`: ``LocalmemStore``, a LangGraph ``BaseStore``
  (``pip install 'localmem[langgraph]'``).

Each is imported by name only: this package imports neither, so ``import localmem``
never loads a framework.
"""
