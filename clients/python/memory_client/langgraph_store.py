"""A LangGraph store (langgraph.store.base.BaseStore) whose items are the service's facts, so that a LangGraph
agent's long-term memory lives in the service: searched with its hybrid search, formed from conversations too,
curated in its admin, isolated per API key. `pip install agent-memory-client[langgraph]`.

Namespaces name a scope of the service, then an optional collection path of your own:
    ("agent", *collection)            the agent's memory, shared by all its users (scope 'agent')
    ("users", user_id, *collection)   one end user's memory (scope 'user')
An item is one fact: its statement is the value's first text field among TEXT_FIELDS, the whole value is kept in
the fact's metadata. docs/integrations.md ("LangGraph") says what maps to what and what is not supported."""

from __future__ import annotations

import hashlib
import operator
import re
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

try:
    from langgraph.store.base import validate_op_namespace
except ImportError:  # langgraph-checkpoint before 4.3
    validate_op_namespace = None

from memory_client._bridge import Clients, Steps, Use
from memory_client.client import MemoryAPIError, MemoryClient
from memory_client.types import Fact

if TYPE_CHECKING:
    from memory_client.async_client import AsyncMemoryClient

__all__ = ["TEXT_FIELDS", "AgentMemoryStore"]

TEXT_FIELDS = ("content", "text", "memory", "data")
STORE_TAG = "langgraph"
METADATA_KEY = "langgraph"
SEARCH_TOP_K_MAX = 100  # the service's top_k limit
TAG_MAX_CHARS = 100
_FORMED_KEY = re.compile(r"^fact-(\d+)$")
_COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": operator.eq,
    "$ne": operator.ne,
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}


@dataclass(frozen=True)
class _Place:
    """Where a namespace points: a scope of the service (one user's, or the agent's) and a collection path."""

    user: str | None
    collection: tuple[str, ...]

    @property
    def scope(self) -> str:
        return "agent" if self.user is None else "user"

    @property
    def root(self) -> tuple[str, ...]:
        return ("agent",) if self.user is None else ("users", self.user)

    def holds(self, fact: Fact) -> bool:
        return self.scope in fact["scopes"] and (self.user is None or fact["user"] == self.user)


def _place(namespace: tuple[str, ...]) -> _Place:
    if namespace[:1] == ("agent",):
        return _Place(user=None, collection=tuple(namespace[1:]))
    if len(namespace) >= 2 and namespace[0] == "users":
        return _Place(user=namespace[1], collection=tuple(namespace[2:]))
    raise InvalidNamespaceError(
        f"namespace {namespace!r}: this store's namespaces begin with ('agent',) for the agent's memory or "
        "('users', <user id>) for one end user's"
    )


def _tag(kind: str, labels: tuple[str, ...]) -> str:
    text = "/".join(urllib.parse.quote(label, safe="") for label in labels)
    tag = f"lg-{kind}:{text}"
    return tag if len(tag) <= TAG_MAX_CHARS else f"lg-{kind}#{hashlib.sha256(text.encode()).hexdigest()}"


def _key_tag(place: _Place, key: str) -> str:
    return _tag("key", (*place.collection, key))


def _collection_tags(place: _Place) -> list[str]:
    """One tag per level of the collection path, so that a search of any prefix finds the items below it."""
    return [_tag("ns", place.collection[:depth]) for depth in range(1, len(place.collection) + 1)]


def _formed_fact_id(place: _Place, key: str) -> int | None:
    """A fact the service formed itself (not put through this store) has the key 'fact-<id>' at its scope's root."""
    match = _FORMED_KEY.match(key)
    return int(match.group(1)) if match and not place.collection else None


def _statement(value: Mapping[str, Any]) -> tuple[str, str]:
    for name in TEXT_FIELDS:
        text = value.get(name)
        if isinstance(text, str) and text.strip():
            return name, text
    raise ValueError(
        f"an item of this store is one memory, a statement: give its text in one of the value's fields "
        f"{', '.join(TEXT_FIELDS)} (the rest of the value is kept with it)"
    )


def _timestamp(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _mine(fact: Fact) -> dict[str, Any] | None:
    metadata = fact.get("metadata")
    mine = metadata.get(METADATA_KEY) if isinstance(metadata, dict) else None
    return mine if isinstance(mine, dict) and isinstance(mine.get("value"), dict) else None


def _item(fact: Fact, place: _Place, *, key: str | None = None, score: float | None = None) -> SearchItem:
    mine = _mine(fact)
    if mine is None:  # formed by the service from conversations, or written through the API
        namespace, item_key, value, created = place.root, f"fact-{fact['id']}", {"content": fact["content"]}, None
    else:
        namespace, item_key, created = (
            tuple(mine.get("namespace") or place.root),
            mine.get("key"),
            mine.get("created_at"),
        )
        # The statement is the fact's: an operator may have edited it in the admin since it was put.
        value = {**mine["value"], mine.get("text_field") or "content": fact["content"]}
    return SearchItem(
        namespace=namespace,
        key=key or str(item_key),
        value=value,
        created_at=_timestamp(created or fact["valid_from"]),
        updated_at=_timestamp(fact["valid_from"]),
        score=score,
    )


def _matches(value: Mapping[str, Any], conditions: Mapping[str, Any]) -> bool:
    for name, wanted in conditions.items():
        actual = value.get(name)
        if isinstance(wanted, Mapping) and wanted and set(wanted) <= set(_COMPARISONS):
            try:
                if not all(_COMPARISONS[test](actual, operand) for test, operand in wanted.items()):
                    return False
            except TypeError:  # None or another type than the operand's: no match, as in LangGraph's own stores
                return False
        elif actual != wanted:
            return False
    return True


def _namespace_matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path) :]
    return all(wanted in ("*", label) for wanted, label in zip(path, part, strict=True))


class AgentMemoryStore(BaseStore):
    """`AgentMemoryStore(base_url, api_key)`, or with clients of your own (`client=MemoryClient(...)` for the sync
    methods, `async_client=AsyncMemoryClient(...)` for the async ones). `hard_delete=True` makes delete erase a
    fact's whole history instead of closing it (kept as history, the service's default)."""

    supports_ttl = False

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        client: MemoryClient | None = None,
        async_client: AsyncMemoryClient | None = None,
        timeout: float = 30.0,
        hard_delete: bool = False,
        scan_limit: int = 1000,
    ) -> None:
        """`scan_limit`: how many facts a filtered listing or list_namespaces reads at most."""
        self.clients = Clients(
            base_url=base_url, api_key=api_key, client=client, async_client=async_client, timeout=timeout
        )
        self.hard_delete = hard_delete
        self.scan_limit = scan_limit

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self.clients.run(self._operation(op)) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return [await self.clients.arun(self._operation(op)) for op in ops]

    async def aclose(self) -> None:
        await self.clients.aclose()

    # --- the operations, each written once for batch and abatch (memory_client._bridge) --------------------------

    def _operation(self, op: Op) -> Steps[Result]:
        if validate_op_namespace is not None:  # ops given to batch directly skip BaseStore's own checks
            validate_op_namespace(op)
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, PutOp):
            return self._put(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise TypeError(f"unknown store operation {type(op).__name__}")

    def _find(self, place: _Place, key: str) -> Steps[Fact | None]:
        fact_id = _formed_fact_id(place, key)
        if fact_id is not None:
            try:
                fact = yield Use("fact_get", {"fact_id": fact_id})
            except MemoryAPIError as error:
                if error.status == 404:
                    return None
                raise
            return fact if fact["is_current"] and place.holds(fact) else None
        query = {"user": place.user, "scope": place.scope, "tag": _key_tag(place, key), "page_size": 1}
        found = yield Use("facts_list", query, take=1)
        return found[0] if found and place.holds(found[0]) else None

    def _get(self, op: GetOp) -> Steps[Item | None]:
        place = _place(op.namespace)
        fact = yield from self._find(place, op.key)
        if fact is None:
            return None
        found = _item(fact, place, key=op.key)
        return Item(
            value=found.value,
            key=op.key,
            namespace=op.namespace,
            created_at=found.created_at,
            updated_at=found.updated_at,
        )

    def _put(self, op: PutOp) -> Steps[None]:
        place = _place(op.namespace)
        existing = yield from self._find(place, op.key)
        if op.value is None:
            if existing is not None:
                reason = "deleted through the LangGraph store"
                yield Use("fact_delete", {"fact_id": existing["id"], "hard": self.hard_delete, "reason": reason})
            return None
        text_field, content = _statement(op.value)
        reason = "updated through the LangGraph store"
        if _formed_fact_id(place, op.key) is not None:
            if existing is None:
                raise KeyError(f"{op.namespace!r} holds no current fact {op.key!r}")
            if content != existing["content"]:
                yield Use("fact_update", {"fact_id": existing["id"], "content": content, "reason": reason})
            return None
        mine = {"namespace": list(op.namespace), "key": op.key, "value": dict(op.value), "text_field": text_field}
        if existing is not None:
            before = _mine(existing) or {}
            if before.get("value") == mine["value"] and existing["content"] == content:
                return None  # nothing changed: no new version
            mine["created_at"] = before.get("created_at") or existing["valid_from"]
            changes: dict[str, Any] = {"metadata": {**existing["metadata"], METADATA_KEY: mine}}
            if content != existing["content"]:
                changes["content"] = content
            yield Use("fact_update", {"fact_id": existing["id"], "reason": reason, **changes})
            return None
        mine["created_at"] = datetime.now(timezone.utc).isoformat()  # noqa: UP017 (Python 3.10 has no UTC)
        tags = [STORE_TAG, *_collection_tags(place), _key_tag(place, op.key)]
        fact = yield Use(
            "fact_create",
            {
                "content": content,
                "user": place.user,
                "scopes": [place.scope],
                "tags": tags,
                "metadata": {METADATA_KEY: mine},
            },
        )
        if not set(tags) <= set(fact["tags"]):
            # The scope already held this statement (one current fact per statement): this key becomes its alias.
            merged = sorted(set(fact["tags"]) | set(tags))
            yield Use(
                "fact_update", {"fact_id": fact["id"], "tags": merged, "reason": "another key for the same memory"}
            )
        return None

    def _search(self, op: SearchOp) -> Steps[list[SearchItem]]:
        place = _place(op.namespace_prefix)
        tag = _collection_tags(place)[-1] if place.collection else None
        wanted = op.offset + op.limit
        if op.query:
            top_k = min(SEARCH_TOP_K_MAX, SEARCH_TOP_K_MAX if op.filter else wanted)
            options: dict[str, Any] = {"scopes": [place.scope]} | ({"tags": [tag]} if tag else {})
            found = yield Use("search", {"query": op.query, "user": place.user, "top_k": top_k, **options})
            items = [
                _item(hit["fact"], place, score=hit["score"]) for hit in found["results"] if place.holds(hit["fact"])
            ]
        else:
            query = {"user": place.user, "scope": place.scope, "tag": tag, "page_size": 100}
            facts = yield Use("facts_list", query, take=self.scan_limit if op.filter else wanted)
            items = [_item(fact, place) for fact in facts if place.holds(fact)]
        if op.filter:
            items = [item for item in items if _matches(item.value, op.filter)]
        return items[op.offset : op.offset + op.limit]

    def _list_namespaces(self, op: ListNamespacesOp) -> Steps[list[tuple[str, ...]]]:
        facts = yield Use("facts_list", {"tag": STORE_TAG, "page_size": 100}, take=self.scan_limit)
        namespaces = {tuple(mine["namespace"]) for fact in facts if (mine := _mine(fact)) and mine.get("namespace")}
        conditions = op.match_conditions or ()
        matched = {namespace for namespace in namespaces if all(_namespace_matches(namespace, c) for c in conditions)}
        if op.max_depth is not None:
            matched = {namespace[: op.max_depth] for namespace in matched}
        return sorted(matched)[op.offset : op.offset + op.limit]
