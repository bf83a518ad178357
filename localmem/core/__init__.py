"""The core layer: the connection and schema, the write core (ledger) and the as-of reads.

It imports the time layer and nothing above it.
"""
