"""One piece of logic for a sync and an async entry point, as the framework adapters need (LangGraph's batch and
abatch, LangChain's invoke and ainvoke): the logic is a generator that yields the client calls it needs (`Use`)
and receives their results; `Clients.run` drives it with MemoryClient, `Clients.arun` with AsyncMemoryClient."""

from __future__ import annotations

import asyncio
import itertools
import weakref
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from memory_client.client import MemoryAPIError, MemoryClient

if TYPE_CHECKING:
    from memory_client.async_client import AsyncMemoryClient

T = TypeVar("T")


@dataclass(frozen=True)
class Use:
    """A call of a client method by name. With `take`, the method lists (facts_list, messages_list): its first
    `take` items, as a list."""

    method: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    take: int | None = None


Steps = Generator[Use, Any, T]


class Clients:
    """The sync and the async client of one adapter: given, or made from base_url and api_key on first use. An
    async client made here belongs to the event loop it was made in (httpx's connections do), so each loop gets
    its own: a store used from two asyncio.run calls keeps working."""

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: MemoryClient | None = None,
        async_client: AsyncMemoryClient | None = None,
        timeout: float = 30.0,
    ) -> None:
        if client is None and async_client is None and not (base_url and api_key):
            raise TypeError("give base_url and api_key, or a MemoryClient / AsyncMemoryClient")
        self._base_url, self._api_key, self._timeout = base_url, api_key, timeout
        self._client = client
        self._async_client = async_client
        self._async_per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncMemoryClient] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def sync(self) -> MemoryClient:
        if self._client is None:
            if not (self._base_url and self._api_key):
                raise RuntimeError("only an AsyncMemoryClient was given: use the async methods")
            self._client = MemoryClient(self._base_url, self._api_key, timeout=self._timeout)
        return self._client

    @property
    def asynchronous(self) -> AsyncMemoryClient:
        if self._async_client is not None:
            return self._async_client
        if not (self._base_url and self._api_key):
            raise RuntimeError("only a MemoryClient was given: use the sync methods")
        loop = asyncio.get_running_loop()
        client = self._async_per_loop.get(loop)
        if client is None:
            # Imported here: httpx is needed only by the async path.
            from memory_client.async_client import AsyncMemoryClient

            client = AsyncMemoryClient(self._base_url, self._api_key, timeout=self._timeout)
            self._async_per_loop[loop] = client
        return client

    async def aclose(self) -> None:
        """Close the async clients made here (one given is its owner's to close)."""
        made, self._async_per_loop = list(self._async_per_loop.values()), weakref.WeakKeyDictionary()
        for client in made:
            await client.aclose()

    def run(self, steps: Steps[T]) -> T:
        client, feed = self.sync, _Feed(steps)
        while (use := feed.next_use()) is not None:
            try:
                result = getattr(client, use.method)(**use.kwargs)
                feed.give(result if use.take is None else list(itertools.islice(result, use.take)))
            except MemoryAPIError as error:
                feed.fail(error)
        return feed.value

    async def arun(self, steps: Steps[T]) -> T:
        client, feed = self.asynchronous, _Feed(steps)
        while (use := feed.next_use()) is not None:
            try:
                result = getattr(client, use.method)(**use.kwargs)
                feed.give(await result if use.take is None else await _first(result, use.take))
            except MemoryAPIError as error:
                feed.fail(error)
        return feed.value


class _Feed:
    """Steps a generator of client calls: what the last call returned (or the API error it raised) goes in, the next
    call comes out, until the generator returns its value."""

    def __init__(self, steps: Steps[Any]) -> None:
        self._steps = steps
        self._outcome: tuple[bool, Any] = (True, None)
        self.value: Any = None

    def give(self, result: Any) -> None:
        self._outcome = (True, result)

    def fail(self, error: MemoryAPIError) -> None:
        self._outcome = (False, error)

    def next_use(self) -> Use | None:
        succeeded, outcome = self._outcome
        try:
            return self._steps.send(outcome) if succeeded else self._steps.throw(outcome)
        except StopIteration as done:
            self.value = done.value
            return None


async def _first(items: Any, count: int) -> list[Any]:
    taken: list[Any] = []
    if count <= 0:
        return taken
    async for item in items:
        taken.append(item)
        if len(taken) >= count:
            break
    await items.aclose()  # an async generator left early is closed here, not by the garbage collector
    return taken
