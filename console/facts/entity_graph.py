"""An entity's relations drawn as an SVG on the server (no JavaScript, nothing fetched): the entity in the centre, the
entities and values it relates to on a circle around it, one arrow per relation from subject to object labelled
with the predicate; ended relations dashed and grey; relations between two neighbours drawn lighter. Every label
goes through format_html, so a name an extractor or an end user chose is text in the picture, never markup."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from console.utils import text_shorten
from facts.models import Entity, EntityType, Relation

WIDTH, HEIGHT = 760, 560
RING_RADIUS = 200
CENTRE_RADIUS, NODE_RADIUS = 32, 20
MAX_NEIGHBOURS = 24
LABEL_CHARS = 26
LABEL_SPACING = 13
TYPE_COLOURS: dict[str, str] = {
    EntityType.PERSON: "#4e79a7",
    EntityType.PLACE: "#59a14f",
    EntityType.ORGANISATION: "#f28e2b",
    EntityType.THING: "#79706e",
    EntityType.EVENT: "#b07aa1",
}
VALUE_COLOUR = "#edc948"
CURRENT_STROKE, ENDED_STROKE, TIE_STROKE = "#264b5d", "#a0a0a0", "#8fb0bf"


@dataclass
class _Node:
    key: tuple[str, object]
    label: str
    colour: str
    url: str | None
    x: float = WIDTH / 2
    y: float = HEIGHT / 2
    radius: int = NODE_RADIUS
    is_value: bool = False


@dataclass(frozen=True)
class EntityGraph:
    svg: SafeString
    neighbours_shown: int
    relations_left_out: int


def _coordinate(value: float) -> str:
    return f"{value:.1f}"


def _neighbour_key(relation: Relation, entity: Entity) -> tuple[str, object]:
    if relation.subject_id != entity.pk:
        return ("entity", relation.subject_id)
    if relation.object_entity_id is not None:
        return ("entity", relation.object_entity_id)
    return ("value", relation.object_value)


def _neighbour_node(relation: Relation, entity: Entity, entity_url: Callable[[Entity], str]) -> _Node:
    key = _neighbour_key(relation, entity)
    other = relation.subject if relation.subject_id != entity.pk else relation.object_entity
    if key[0] == "value" or other is None:
        return _Node(key=key, label=relation.object_value, colour=VALUE_COLOUR, url=None, is_value=True)
    return _Node(
        key=key, label=other.name, colour=TYPE_COLOURS.get(other.entity_type, "#79706e"), url=entity_url(other)
    )


def _unit(dx: float, dy: float) -> tuple[float, float]:
    length = math.hypot(dx, dy) or 1.0
    return dx / length, dy / length


def _edge(start: _Node, end: _Node, relation: Relation, offset: float) -> SafeString:
    """A relation of the centre entity: a straight arrow."""
    ux, uy = _unit(end.x - start.x, end.y - start.y)
    x1, y1 = start.x + ux * start.radius, start.y + uy * start.radius
    x2, y2 = end.x - ux * (end.radius + 4), end.y - uy * (end.radius + 4)
    # Several relations between one pair: their labels stack across the edge instead of on top of each other.
    label_x, label_y = (start.x + end.x) / 2 - uy * offset, (start.y + end.y) / 2 + ux * offset
    ended = relation.valid_to is not None
    title = f"{relation} ({'ended ' + relation.valid_to.date().isoformat() if relation.valid_to else 'current'})"
    return format_html(
        '<g class="edge {}" data-relation-id="{}" data-predicate="{}"><title>{}</title>'
        '<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="{}"{} marker-end="url(#{})"/>'
        '<text x="{}" y="{}" text-anchor="middle" font-size="11" fill="{}" stroke="#fff" stroke-width="3" '
        'paint-order="stroke">{}</text></g>',
        "ended" if ended else "current",
        relation.pk,
        relation.predicate,
        title,
        _coordinate(x1),
        _coordinate(y1),
        _coordinate(x2),
        _coordinate(y2),
        ENDED_STROKE if ended else CURRENT_STROKE,
        1.2 if ended else 1.8,
        format_html(' stroke-dasharray="{}"', "6 4") if ended else "",
        "arrow-ended" if ended else "arrow-current",
        _coordinate(label_x),
        _coordinate(label_y),
        "#888" if ended else "#1b2f3a",
        text_shorten(relation.predicate, LABEL_CHARS),
    )


def _tie(start: _Node, end: _Node, relation: Relation) -> SafeString:
    """A current relation between two neighbours: a lighter arrow that bows away from the centre, so that one
    between opposite neighbours does not run through the centre's own edges."""
    mid_x, mid_y = (start.x + end.x) / 2, (start.y + end.y) / 2
    away_x, away_y = mid_x - WIDTH / 2, mid_y - HEIGHT / 2
    if math.hypot(away_x, away_y) < RING_RADIUS / 4:  # nearly opposite: bow to one side
        away_x, away_y = -(end.y - start.y), end.x - start.x
    ux, uy = _unit(away_x, away_y)
    # The curve's middle (half way from the chord's middle to the control point) well clear of the centre.
    from_centre = math.hypot(mid_x - WIDTH / 2, mid_y - HEIGHT / 2)
    curve_middle = max(from_centre + 0.3 * math.hypot(end.x - start.x, end.y - start.y) / 2, 0.8 * RING_RADIUS)
    bow = 2 * (curve_middle - from_centre)
    control_x, control_y = mid_x + ux * bow, mid_y + uy * bow
    sx, sy = _unit(control_x - start.x, control_y - start.y)
    ex, ey = _unit(end.x - control_x, end.y - control_y)
    x1, y1 = start.x + sx * start.radius, start.y + sy * start.radius
    x2, y2 = end.x - ex * (end.radius + 4), end.y - ey * (end.radius + 4)
    label_x, label_y = 0.25 * start.x + 0.5 * control_x + 0.25 * end.x, 0.25 * start.y + 0.5 * control_y + 0.25 * end.y
    return format_html(
        '<g class="tie current" data-relation-id="{}" data-predicate="{}"><title>{}</title>'
        '<path d="M {} {} Q {} {} {} {}" fill="none" stroke="{}" stroke-width="1.2" marker-end="url(#arrow-tie)"/>'
        '<text x="{}" y="{}" text-anchor="middle" font-size="11" fill="#4f6b78" stroke="#fff" stroke-width="3" '
        'paint-order="stroke">{}</text></g>',
        relation.pk,
        relation.predicate,
        f"{relation} (current)",
        _coordinate(x1),
        _coordinate(y1),
        _coordinate(control_x),
        _coordinate(control_y),
        _coordinate(x2),
        _coordinate(y2),
        TIE_STROKE,
        _coordinate(label_x),
        _coordinate(label_y),
        text_shorten(relation.predicate, LABEL_CHARS),
    )


def _node(node: _Node, *, centre: bool) -> SafeString:
    if node.is_value:
        shape = format_html(
            '<rect x="{}" y="{}" width="{}" height="{}" rx="6" fill="{}" stroke="#8a7a2a"/>',
            _coordinate(node.x - node.radius),
            _coordinate(node.y - node.radius * 0.7),
            node.radius * 2,
            round(node.radius * 1.4),
            node.colour,
        )
    else:
        shape = format_html(
            '<circle cx="{}" cy="{}" r="{}" fill="{}" stroke="#fff" stroke-width="2"/>',
            _coordinate(node.x),
            _coordinate(node.y),
            node.radius,
            node.colour,
        )
    label = format_html(
        '<text x="{}" y="{}" text-anchor="middle" font-size="{}" font-weight="{}" fill="#222" stroke="#fff" '
        'stroke-width="3" paint-order="stroke">{}</text>',
        _coordinate(node.x),
        _coordinate(node.y + node.radius + 14),
        13 if centre else 12,
        "bold" if centre else "normal",
        text_shorten(node.label, LABEL_CHARS),
    )
    group = format_html(
        '<g class="node {}{}" data-key="{}"><title>{}</title>{}{}</g>',
        "value" if node.is_value else "entity",
        " centre" if centre else "",
        f"{node.key[0]}:{node.key[1]}",
        node.label,
        shape,
        label,
    )
    if node.url and not centre:
        return format_html('<a href="{}">{}</a>', node.url, group)
    return group


def entity_graph_svg(
    *,
    entity: Entity,
    relations: Sequence[Relation],
    ties: Iterable[Relation],
    entity_url: Callable[[Entity], str],
) -> EntityGraph:
    """The picture of `entity` and `relations` (those it is the subject or object of, most recent first; with
    subject and object_entity loaded). At most MAX_NEIGHBOURS neighbours, those with a current relation first; the
    relations to the others are counted in `relations_left_out`. `ties`, current relations between neighbours
    ("Globex based_in Lyon" beside "Maria works_at Globex"), are drawn lighter where both ends are shown."""
    centre = _Node(
        key=("entity", entity.pk),
        label=entity.name,
        colour=TYPE_COLOURS.get(entity.entity_type, "#79706e"),
        url=None,
        radius=CENTRE_RADIUS,
    )
    neighbours: dict[tuple[str, object], _Node] = {}
    ordered = sorted(relations, key=lambda relation: relation.valid_to is not None)  # stable: current ones first
    for relation in ordered:
        key = _neighbour_key(relation, entity)
        if key not in neighbours and len(neighbours) < MAX_NEIGHBOURS:
            neighbours[key] = _neighbour_node(relation, entity, entity_url)
    for index, node in enumerate(neighbours.values()):
        angle = -math.pi / 2 + 2 * math.pi * index / len(neighbours)
        node.x = WIDTH / 2 + RING_RADIUS * math.cos(angle)
        node.y = HEIGHT / 2 + RING_RADIUS * 0.85 * math.sin(angle)

    by_pair: dict[tuple[str, object], list[Relation]] = {}
    left_out = 0
    for relation in ordered:
        key = _neighbour_key(relation, entity)
        if key in neighbours:
            by_pair.setdefault(key, []).append(relation)
        else:
            left_out += 1
    edges = []
    for key, pair_relations in by_pair.items():
        for position, relation in enumerate(pair_relations):
            offset = (position - (len(pair_relations) - 1) / 2) * LABEL_SPACING
            outward = relation.subject_id == entity.pk
            start, end = (centre, neighbours[key]) if outward else (neighbours[key], centre)
            edges.append(_edge(start, end, relation, offset))

    for relation in ties:
        subject_node = neighbours.get(("entity", relation.subject_id))
        object_node = neighbours.get(("entity", relation.object_entity_id))
        if subject_node is not None and object_node is not None:
            edges.append(_tie(subject_node, object_node, relation))

    markers = format_html_join(
        "",
        '<marker id="{}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="{}"/></marker>',
        [("arrow-current", CURRENT_STROKE), ("arrow-ended", ENDED_STROKE), ("arrow-tie", TIE_STROKE)],
    )
    svg = format_html(
        '<svg xmlns="http://www.w3.org/2000/svg" id="entity-graph" viewBox="0 0 {} {}" width="{}" height="{}" '
        'role="img" aria-label="{}" font-family="sans-serif"><defs>{}</defs>{}{}{}</svg>',
        WIDTH,
        HEIGHT,
        WIDTH,
        HEIGHT,
        f"Relations of {entity.name}",
        markers,
        format_html_join("", "{}", ((edge,) for edge in edges)),
        format_html_join("", "{}", ((_node(node, centre=False),) for node in neighbours.values())),
        _node(centre, centre=True),
    )
    return EntityGraph(svg=svg, neighbours_shown=len(neighbours), relations_left_out=left_out)
