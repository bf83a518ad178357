"""Replay and audit: runs, decision receipts, derived memories, perspectives, knowledge diffs.

It imports the search, core and time layers.
"""
