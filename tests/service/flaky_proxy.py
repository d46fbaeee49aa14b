"""A TCP proxy in the test process that cuts connections at random: a flaky network.

:class:`FlakyProxy` listens on 127.0.0.1 (port 0: any free port) and forwards every
connection to an upstream server, byte for byte. While it is cutting (bounded in time by
``cut_for_s`` and in count by ``max_cuts``), each new connection is chosen for a cut with
probability ``cut_probability``, and then ends abruptly (both sockets reset, mid-frame
if need be) either

* after a random number of bytes (log-uniform between ``min_bytes`` and ``max_bytes``,
  counted in both directions: a cut can land in the HTTP/2 preface, a request, a view), or
* after a random time between ``min_delay_s`` and ``max_delay_s`` (20-300 ms by default),

whichever the connection was given. After the window closes (or ``stop_cutting()``), or
once ``max_cuts`` connections were cut, it forwards faithfully, so that everything behind
it can finish. ``stats`` counts connections and cuts of each kind.

The random choices come from one ``random.Random(seed)``; the timing of a real network
stack still varies from run to run, so a run is reproducible in kind, not byte for byte.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import time
from dataclasses import dataclass, field

CHUNK = 16 * 1024


@dataclass
class ProxyStats:
    """What the proxy did."""

    connections: int = 0
    cut_by_bytes: int = 0
    cut_by_time: int = 0
    bytes_forwarded: int = 0
    cut_after_bytes: list[int] = field(default_factory=list)

    @property
    def cuts(self) -> int:
        """Connections cut, of either kind."""
        return self.cut_by_bytes + self.cut_by_time


class _Connection:
    """One proxied connection: two pumps and an optional cut."""

    def __init__(
        self,
        proxy: FlakyProxy,
        client: tuple[asyncio.StreamReader, asyncio.StreamWriter],
        upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter],
        byte_budget: int | None,
    ) -> None:
        self.proxy = proxy
        self.client = client
        self.upstream = upstream
        self.byte_budget = byte_budget  # None: never cut by bytes
        self.forwarded = 0
        self.cut = False

    def abort(self) -> None:
        """Reset both sockets at once (no orderly close: the peers see a dead connection)."""
        for _, writer in (self.client, self.upstream):
            writer.transport.abort()

    def cut_now(self, by_bytes: bool) -> None:
        if self.cut:
            return
        self.cut = True
        stats = self.proxy.stats
        if by_bytes:
            stats.cut_by_bytes += 1
            stats.cut_after_bytes.append(self.forwarded)
        else:
            stats.cut_by_time += 1
        self.abort()

    async def pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while not self.cut:
                data = await reader.read(CHUNK)
                if not data:
                    break
                if self.byte_budget is not None:
                    room = self.byte_budget - self.forwarded
                    if len(data) >= room:
                        # Forward up to the budget (possibly half a frame), then cut.
                        if room > 0:
                            writer.write(data[:room])
                            self.forwarded += room
                            self.proxy.stats.bytes_forwarded += room
                            with contextlib.suppress(ConnectionError):
                                await writer.drain()
                        self.cut_now(by_bytes=True)
                        return
                writer.write(data)
                self.forwarded += len(data)
                self.proxy.stats.bytes_forwarded += len(data)
                await writer.drain()
            # An orderly end on one side: pass the half-close on.
            if not self.cut and writer.can_write_eof():
                with contextlib.suppress(OSError):
                    writer.write_eof()
        except (ConnectionError, OSError):
            self.abort()


class FlakyProxy:
    """A TCP proxy to ``upstream_port`` that cuts connections at random (see the module)."""

    def __init__(
        self,
        upstream_port: int,
        *,
        upstream_host: str = "127.0.0.1",
        seed: int = 0,
        cut_probability: float = 0.5,
        max_cuts: int = 200,
        cut_for_s: float = 10.0,
        byte_cut_share: float = 0.5,
        min_bytes: int = 40,
        max_bytes: int = 60_000,
        min_delay_s: float = 0.02,
        max_delay_s: float = 0.3,
    ) -> None:
        self.upstream_host = upstream_host
        self.upstream_port = upstream_port
        self.random = random.Random(seed)
        self.cut_probability = cut_probability
        self.max_cuts = max_cuts
        self.cut_for_s = cut_for_s
        self.byte_cut_share = byte_cut_share
        self.min_bytes = min_bytes
        self.max_bytes = max_bytes
        self.min_delay_s = min_delay_s
        self.max_delay_s = max_delay_s
        self.stats = ProxyStats()
        self._server: asyncio.Server | None = None
        self._cut_until = 0.0
        self._planned = 0  # connections chosen for a cut (bounded by max_cuts)
        self._connections: set[_Connection] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def target(self) -> str:
        """host:port for a client."""
        return f"127.0.0.1:{self.port}"

    @property
    def cutting(self) -> bool:
        """Whether new connections may still be chosen for a cut."""
        return time.monotonic() < self._cut_until and self._planned < self.max_cuts

    async def start(self) -> FlakyProxy:
        """Listen on a free port; the cutting window starts now."""
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        self._cut_until = time.monotonic() + self.cut_for_s
        return self

    def stop_cutting(self) -> None:
        """Forward faithfully from now on (connections already doomed still end)."""
        self._cut_until = 0.0

    def cut_all(self) -> int:
        """Cut every open connection now (counted as cuts by time); returns how many."""
        count = 0
        for connection in list(self._connections):
            if not connection.cut:
                connection.cut_now(by_bytes=False)
                count += 1
        return count

    async def close(self) -> None:
        """Stop listening and reset every open connection."""
        self.stop_cutting()
        if self._server is not None:
            self._server.close()
        for connection in list(self._connections):
            connection.abort()
        # Reset sockets end their pumps; the connection tasks then finish by themselves
        # (cancelling them would make asyncio's stream server log their cancellation).
        if self._tasks:
            _, stuck = await asyncio.wait(list(self._tasks), timeout=2.0)
            for task in stuck:
                task.cancel()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1.0)

    async def __aenter__(self) -> FlakyProxy:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _plan(self) -> tuple[int | None, float | None]:
        """(byte budget, delay) for a new connection; both None: never cut."""
        if not self.cutting or self.random.random() >= self.cut_probability:
            return None, None
        self._planned += 1
        if self.random.random() < self.byte_cut_share:
            low, high = math.log(self.min_bytes), math.log(self.max_bytes)
            return int(math.exp(self.random.uniform(low, high))), None
        return None, self.random.uniform(self.min_delay_s, self.max_delay_s)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.stats.connections += 1
        budget, delay = self._plan()
        try:
            upstream = await asyncio.open_connection(self.upstream_host, self.upstream_port)
        except OSError:
            writer.transport.abort()
            self._tasks.discard(task)
            return
        connection = _Connection(self, (reader, writer), upstream, budget)
        self._connections.add(connection)
        timer: asyncio.TimerHandle | None = None
        if delay is not None:
            timer = asyncio.get_running_loop().call_later(delay, connection.cut_now, False)
        try:
            await asyncio.gather(
                connection.pump(reader, upstream[1]), connection.pump(upstream[0], writer)
            )
        finally:
            if timer is not None:
                timer.cancel()
            self._connections.discard(connection)
            for w in (writer, upstream[1]):
                w.close()
            self._tasks.discard(task)
