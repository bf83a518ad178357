"""The time layer: the clock, valid-time intervals and the time-phrase resolver.

It imports nothing of localmem but the errors.
"""
