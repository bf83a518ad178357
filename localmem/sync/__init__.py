"""Offline sync: export files that carry a store's rows to another device, and their import.

The layer imports the core and time layers. Its modules: :mod:`~localmem.sync.files` (the
format, reading and verifying a file), :mod:`~localmem.sync.export` (writing one, the digest,
the plain CSV/JSON export), :mod:`~localmem.sync.apply` (importing one),
:mod:`~localmem.sync.folder` (a shared folder) and :mod:`~localmem.sync.sql` (their statements).

Revisions are immutable and globally identified (ULIDs), so replicas converge by
union: an import adds the rows it does not have and skips the ones it has. What
travels: memories, revisions with their content, tombstones (erasures) and the
provenance of derived memories. What stays on its device: the usage log (a
device's own retrievals, which its replays must rank by exactly), runs, run
events, decision receipts and artifacts (a device's own audit trail; a receipt's
watermark is a local revision number that means nothing elsewhere), embeddings
(derived from the text: the receiving store embeds with its own model, see
``Store.embed_missing``) and the import log itself.

Order and visibility:

* A memory's current revision is the one with the greatest hybrid logical clock
  (``hlc``; ties: greater origin device id, then greater rev_id). Two devices that
  corrected one memory while apart both keep both corrections (a fork: two
  revisions with the same ``prev_rev``, both in ``history``); the rule picks one.
* An imported revision keeps its origin's recorded_at, device and clock. Its
  ``arrived_at`` is the later of that recorded_at and its arrival here (and never
  earlier than the row before it, so revision numbers stay in visibility order):
  a read known at K on this device sees it only if it had arrived by K.
* Tombstones always travel whole (they are few): an incremental export carries
  every tombstone, so a skipped file never loses an erase. A revision that arrives
  for an erased memory is stored without its content.
"""

