from collections.abc import Callable
from functools import cached_property
from operator import attrgetter

from django.conf import settings
from rest_framework import serializers

from api.facts.world_time import WorldTimeField, WorldTimeInputSerializer
from core.api.fields import (
    HoldsAtField,
    MetadataField,
    StrictCharField,
    StrictDurationField,
    StrictFloatField,
    StrictIntegerField,
    StrictRegexField,
    TimeRangeInputSerializer,
)
from facts.models import Fact, FactScope, FeedbackOutcome, FeedbackRating
from facts.selectors.search import TOP_K_MAX, SearchMode


def _attribute_path(source: str) -> Callable[[object], object]:
    """Reads a dotted source; None as soon as a link of it is None (DRF's `default=None` for a missing relation)."""
    names = source.split(".")

    def read(instance: object) -> object:
        for name in names:
            instance = getattr(instance, name)
            if instance is None:
                return None
        return instance

    return read


class FactOutputSerializer(serializers.ModelSerializer):
    user = serializers.CharField(source="user.external_id", allow_null=True, default=None)
    source_session = serializers.CharField(source="source_session.external_id", allow_null=True, default=None)
    is_current = serializers.BooleanField()
    world_time = WorldTimeField()

    @cached_property
    def _readers(self) -> list[tuple[str, Callable[[object], object], Callable[[object], object]]]:
        readers: list[tuple[str, Callable[[object], object], Callable[[object], object]]] = []
        for field in self._readable_fields:
            assert field.field_name is not None and field.source is not None  # bound fields have both
            if isinstance(field, serializers.PrimaryKeyRelatedField):
                readers.append((field.field_name, attrgetter(f"{field.source}_id"), lambda pk: pk))
            elif field.source == "*":  # a method field: it reads the instance itself
                readers.append((field.field_name, lambda instance: instance, field.to_representation))
            else:
                readers.append((field.field_name, _attribute_path(field.source), field.to_representation))
        return readers

    def to_representation(self, instance: Fact) -> dict:
        # DRF's own output, read without its per-field machinery (get_attribute, SkipField checks): a search renders
        # twenty fields of every hit. tests/api/test_facts.py compares both on every kind of fact.
        return {
            name: None if (value := read(instance)) is None else represent(value)
            for name, read, represent in self._readers
        }

    class Meta:
        model = Fact
        fields = [
            "id",
            "content",
            "scopes",
            "user",
            "key",
            "category",
            "category_value",
            "pinned",
            "tags",
            "metadata",
            "lineage",
            "version",
            "is_current",
            "formed_at",
            "valid_from",
            "valid_to",
            "world_time",
            "change_reason",
            "closed_reason",
            "superseded_by",
            "source_session",
            "access_count",
            "last_accessed_at",
            "expires_at",
        ]


class FactVersionOutputSerializer(FactOutputSerializer):
    source_message_ids = serializers.SerializerMethodField(help_text="Messages this version was formed from.")
    closed_by_message_ids = serializers.SerializerMethodField(help_text="Messages that closed this version.")

    class Meta(FactOutputSerializer.Meta):
        fields = [*FactOutputSerializer.Meta.fields, "source_message_ids", "closed_by_message_ids"]

    def get_source_message_ids(self, fact: Fact) -> list[int]:
        return [message.pk for message in fact.source_messages.all()]

    def get_closed_by_message_ids(self, fact: Fact) -> list[int]:
        return [message.pk for message in fact.closed_by_messages.all()]


class FactHistoryOutputSerializer(serializers.Serializer):
    lineage = serializers.UUIDField()
    versions = FactVersionOutputSerializer(many=True, help_text="Every version, oldest first.")


_TAGS = serializers.ListField(child=StrictCharField(max_length=100), max_length=50, required=False)
_CONTENT_HELP = (
    f"One atomic statement, at most {settings.FACT_MAX_WORDS} words and {settings.FACT_MAX_CHARS} characters."
)


_EXPIRES_AT_HELP = (
    "When the fact expires: from then on it leaves search, the context block and the bundle (then retention closes "
    "it, kept as history). Must be in the future."
)
_EXPIRES_IN_HELP = 'Or a duration from now: "P7D" (ISO 8601) or "7 days" for "remember this for a week".'


class FactListFilterSerializer(serializers.Serializer):
    user = serializers.CharField(max_length=200, required=False, help_text="Facts this end user owns.")
    scope = serializers.ChoiceField(choices=FactScope.choices, required=False)
    tag = serializers.CharField(max_length=100, required=False)
    status = serializers.ChoiceField(
        choices=[("current", "current versions"), ("all", "every version, closed ones too")],
        default="current",
    )


class FactCreateInputSerializer(serializers.Serializer):
    content = StrictCharField(max_length=settings.FACT_MAX_CHARS, help_text=_CONTENT_HELP)
    user = StrictCharField(max_length=200, required=False, help_text="The end user's id; required with scope 'user'.")
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=FactScope.choices),
        min_length=1,
        max_length=2,
        required=False,
        help_text="Default ['user'] when a user is given, else ['agent'].",
    )
    tags = _TAGS
    metadata = MetadataField(required=False)
    key = StrictRegexField(
        r"^[a-z][a-z0-9_]{0,99}$",
        required=False,
        help_text="A profile attribute (home_city, employer, ...): a new value supersedes the user's previous one.",
        error_messages={"invalid": "a profile key is lowercase letters, digits and underscores, like home_city."},
    )
    world_time = WorldTimeInputSerializer(required=False, help_text="When the statement held in the world, if known.")
    expires_at = serializers.DateTimeField(required=False, help_text=_EXPIRES_AT_HELP)
    expires_in = StrictDurationField(required=False, help_text=_EXPIRES_IN_HELP)


class FactUpdateInputSerializer(serializers.Serializer):
    content = StrictCharField(max_length=settings.FACT_MAX_CHARS, required=False, help_text=_CONTENT_HELP)
    user = StrictCharField(max_length=200, required=False, help_text="Needed to add scope 'user'.")
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=FactScope.choices), min_length=1, max_length=2, required=False
    )
    tags = _TAGS
    metadata = MetadataField(required=False)
    reason = StrictCharField(max_length=300, required=False, default="edited through the API")
    world_time = WorldTimeInputSerializer(
        required=False, help_text="When the statement held in the world: a new version says so (an end, a start)."
    )
    expires_at = serializers.DateTimeField(
        required=False, allow_null=True, help_text=_EXPIRES_AT_HELP + " null: never. Alone, no new version is written."
    )
    expires_in = StrictDurationField(required=False, help_text=_EXPIRES_IN_HELP)

    def validate(self, data: dict) -> dict:
        if not {"content", "scopes", "tags", "metadata", "world_time", "expires_at", "expires_in"} & set(data):
            raise serializers.ValidationError(
                "give at least one of content, scopes, tags, metadata, world_time, expires_at, expires_in."
            )
        return data


class FactDeleteFilterSerializer(serializers.Serializer):
    hard = serializers.BooleanField(
        default=False, help_text="Erase every version of the fact's lineage for real instead of closing it."
    )
    reason = serializers.CharField(max_length=300, required=False, default="deleted through the API")


class MemorySearchInputSerializer(TimeRangeInputSerializer):
    query = StrictCharField(max_length=2000)
    user = StrictCharField(
        max_length=200,
        required=False,
        help_text="The end user's id: adds their own facts to the agent-wide ones. An id never seen has none.",
    )
    top_k = StrictIntegerField(min_value=1, max_value=TOP_K_MAX, default=10)
    mode = serializers.ChoiceField(choices=SearchMode.choices, default=SearchMode.HYBRID)
    min_similarity = StrictFloatField(
        min_value=-1.0,
        max_value=1.0,
        required=False,
        help_text="Vector candidates less similar are dropped; full-text matches stay.",
    )
    recency_weight = StrictFloatField(
        min_value=0.0, max_value=1.0, default=0.0, help_text="Blend of exp(-age_days/30) into the score."
    )
    mmr_lambda = StrictFloatField(
        min_value=0.0, max_value=1.0, required=False, help_text="MMR diversity: 1 = pure relevance (0.7 is typical)."
    )
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=FactScope.choices), min_length=1, max_length=2, required=False
    )
    tags = _TAGS
    as_of = serializers.DateTimeField(
        required=False, help_text="What memory held at this time (the versions valid then): the record's clock."
    )
    holds_at = HoldsAtField(
        required=False,
        help_text="What held in the world at this moment (a date or a date-time): facts whose statement held then "
        "first, then those that may have (an unknown start or end); facts known not to hold then are left out.",
    )
    include_history = serializers.BooleanField(default=False, help_text="Closed versions too.")
    fallback_to_recent = serializers.BooleanField(
        default=False, help_text="When nothing matches, return the most recent facts (score 0)."
    )


class FactHitOutputSerializer(serializers.Serializer):
    fact = FactOutputSerializer()
    score = serializers.FloatField(help_text="Fused relevance; 1.0 = first in every signal used.")
    similarity = serializers.FloatField(allow_null=True, help_text="Cosine similarity to the query.")
    vector_rank = serializers.IntegerField(allow_null=True)
    text_rank = serializers.IntegerField(allow_null=True)
    text_score = serializers.FloatField(allow_null=True, help_text="ts_rank_cd of the full-text match.")
    time_rank = serializers.IntegerField(
        allow_null=True, help_text="Rank in the time signal: the query asks when, or is about a period."
    )
    graph_rank = serializers.IntegerField(
        allow_null=True,
        help_text="Rank in the graph signal: a fact about an entity the query names, or one or two relations from it "
        "(hybrid mode).",
    )
    rerank_rank = serializers.IntegerField(
        allow_null=True,
        help_text="Place in the reranker's order, when the agent's reranker reordered the top of the fused list "
        "(hybrid mode); null otherwise, or when the reranker failed and the fused order was kept.",
    )
    rerank_score = serializers.FloatField(
        allow_null=True, help_text="The rerank server's relevance score (null from the LLM, which orders, not scores)."
    )
    reasons = serializers.ListField(
        child=serializers.CharField(),
        help_text='Why it was returned: "list:<category>" when it is an entry of the list the question asks for '
        '(ranked by the list signal, hybrid mode), "topic:<name>" when it answers the topic a question about the '
        'user asks for (ranked first), then each signal that ranked it: "vector", "text", "graph", '
        '"time", "rerank"; "recent" when none did (a small store, or the fallback to recent facts).',
    )


class MemorySearchOutputSerializer(serializers.Serializer):
    results = FactHitOutputSerializer(many=True)


class FactFeedbackInputSerializer(serializers.Serializer):
    rating = serializers.ChoiceField(
        choices=FeedbackRating.choices,
        help_text="useful; wrong (never was true); outdated (no longer true); harmful (should not be remembered).",
    )
    note = StrictCharField(max_length=1000, required=False, default="", help_text="What was wrong, in a few words.")
    user = StrictCharField(
        max_length=200,
        required=False,
        help_text="The end user it is given on behalf of (who must be able to see the fact); leave out for the "
        "agent's own.",
    )


class FactFeedbackOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    fact = serializers.IntegerField(source="fact_id", help_text="The fact version rated.")
    rating = serializers.CharField()
    note = serializers.CharField()
    user = serializers.CharField(source="user.external_id", allow_null=True, default=None)
    outcome = serializers.ChoiceField(
        choices=FeedbackOutcome.choices,
        help_text="recorded; closed (the user's own fact was closed, kept as history); pending_review (an operator "
        "decides: agent-wide or curated memory, or harmful).",
    )
    created_at = serializers.DateTimeField()
