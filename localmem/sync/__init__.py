"""Offline sync: export files, their verified import, and a shared folder.

It imports the core and time layers.
"""
