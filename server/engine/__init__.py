"""The pure rules engine: standard library only (see core.py)."""
