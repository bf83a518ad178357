"""Search: full-text relevance with temporal reranking and usage, read as of a time.

It imports the core and time layers.
"""
