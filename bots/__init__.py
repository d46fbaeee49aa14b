"""Reference bots and the command line."""
