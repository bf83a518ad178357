"""The hub: many devices' export files in PostgreSQL, read with the device's as-of rule.

An interface-level layer above sync (the ``hub`` extra: psycopg 3). Its modules:
:mod:`~localmem.hub.db` (connecting, ``init``), :mod:`~localmem.hub.ingest` (export files in,
validated by the device's own import code), :mod:`~localmem.hub.reads` (read, search,
snapshot, history, knew: the device's semantics in PostgreSQL SQL, :mod:`~localmem.hub.sql`)
and :mod:`~localmem.hub.relay` (a device-readable export of what the hub holds). The schema
is :file:`localmem/hub/schema.sql`; see the README's "The hub".

``import localmem`` never imports this package (nor psycopg).
"""
