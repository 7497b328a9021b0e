"""POST /api/v1/messages/search: turn-level retrieval over a user's past messages."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.authentication import request_agent
from api.conversations import examples
from api.conversations.serializers import MessageOutputSerializer
from conversations.selectors.memory_scope import memory_scope_resolve
from conversations.selectors.message_search import SEARCH_MODES, TOP_K_MAX, messages_search
from core.api.fields import StrictCharField, StrictFloatField, StrictIntegerField, TimeRangeInputSerializer
from core.api.hot_path import input_validate, output_represent
from core.runtime.timing import stage_timed
from facts.selectors.graph_search import messages_graph_ranking
from facts.selectors.list_questions import messages_list_ranking


class MessageSearchInputSerializer(TimeRangeInputSerializer):
    query = StrictCharField(max_length=2000)
    user = StrictCharField(
        max_length=200, required=False, help_text="Whose messages: required unless `session` is given."
    )
    session = StrictCharField(max_length=200, required=False, help_text="Search this session's messages only.")
    top_k = StrictIntegerField(min_value=1, max_value=TOP_K_MAX, default=10)
    mode = serializers.ChoiceField(choices=SEARCH_MODES, default="hybrid")
    min_similarity = StrictFloatField(
        min_value=-1.0, max_value=1.0, required=False, help_text="Vector candidates less similar are dropped."
    )

    def validate(self, data: dict) -> dict:
        if "user" not in data and "session" not in data:
            raise serializers.ValidationError({"user": ["give a user or a session: messages belong to one user."]})
        return data


class MessageHitOutputSerializer(serializers.Serializer):
    message = MessageOutputSerializer()
    session = serializers.CharField(source="session_external_id")
    score = serializers.FloatField(help_text="Fused relevance; 1.0 is first place in every signal used.")
    similarity = serializers.FloatField(allow_null=True)
    vector_rank = serializers.IntegerField(allow_null=True)
    text_rank = serializers.IntegerField(allow_null=True)
    time_rank = serializers.IntegerField(
        allow_null=True, help_text="Rank in the time signal: the query asks when, or is about a period."
    )
    neighbour_rank = serializers.IntegerField(
        allow_null=True, help_text="Rank among the turns just before and after the best hits (hybrid mode)."
    )
    speaker_rank = serializers.IntegerField(
        allow_null=True, help_text="Rank among the turns said by the one speaker the query names (hybrid mode)."
    )
    graph_rank = serializers.IntegerField(
        allow_null=True,
        help_text="Rank among the turns the entity graph's relations about the entities the query names, or a "
        "relation or two from them, were formed from (hybrid mode).",
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
        help_text='Why it was returned: "list:<category>" when it is a turn of an entry of the list the question asks '
        'for (ranked by the list signal, hybrid mode), then each signal that ranked it: "vector", "text", "graph", '
        '"time", "neighbour", "speaker", "rerank".',
    )


class MessageSearchOutputSerializer(serializers.Serializer):
    results = MessageHitOutputSerializer(many=True)


class MessageSearchView(APIView):
    @extend_schema(
        request=MessageSearchInputSerializer,
        responses=MessageSearchOutputSerializer,
        summary="Search a user's past messages (vector + BM25 full-text, reciprocal rank fusion)",
        description="Each message is indexed with its speaker (metadata `speaker` or `name`, else the role) after "
        "the message before it in its session. Full text matches any query word, ranked by BM25. A user the agent "
        'has never seen has no messages: 200 with no results. A query that asks when ("When did ...") or names a '
        'period ("in May 2023", "last week") adds a time signal; `time_from`/`time_to` give the period '
        "explicitly, and `time_filter` `restrict` searches only it. In hybrid mode the turns next to the best hits, "
        "those said by the one speaker the query names, and those the entity graph links to the entities the query "
        "names are fused too. A question asking for a list within a category ('What activities does Melanie do?') gets "
        "the turns of that list's entries first, then the usual hits. Each hit gives its rank in every signal and "
        "why it was returned (`reasons`).",
        examples=[examples.MESSAGE_SEARCH_A_PAST_TURN],
    )
    def post(self, request: Request) -> Response:
        options = input_validate(serializer_class=MessageSearchInputSerializer, data=request.data)
        agent = request_agent(request)
        target = memory_scope_resolve(
            agent=agent, user_external_id=options.pop("user", None), session_external_id=options.pop("session", None)
        )
        hits = messages_search(
            agent=agent,
            user=target.user,
            session=target.session,
            graph_ranking=messages_graph_ranking,
            list_ranking=messages_list_ranking,
            **options,
        )
        with stage_timed("serialize"):
            return Response({"results": output_represent(serializer_class=MessageHitOutputSerializer, instances=hits)})
