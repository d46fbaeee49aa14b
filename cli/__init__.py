"""The ``speeltafel`` command: the composition root of the server, the SDK and the bots.

It imports the server only for ``serve`` (and lazily there); ``play``, ``games`` and
``run`` reach a server through gRPC, ``run`` one of its own in a subprocess.
"""
