"""The timeline on the console's user and entity pages (facts.selectors.timeline): one page of what changed, in
world-time order, with a form for the days shown and a link to the page after. Read from the page's own query
string (timeline_from, timeline_to, timeline_after), so the rest of the page is unchanged by it."""

from __future__ import annotations

from datetime import date
from typing import Any

from django import forms
from django.http import HttpRequest, QueryDict

from facts.selectors.timeline import (
    TIMELINE_CURSOR_MAX_LENGTH,
    TimelinePosition,
    TimelineScope,
    timeline_position_parse,
    timeline_read,
)
from facts.world_time import TimePrecision, WorldTime, world_time_format

CONSOLE_TIMELINE_PAGE = 100


class TimelineFilterForm(forms.Form):
    timeline_from = forms.DateField(required=False, label="from", widget=forms.DateInput(attrs={"type": "date"}))
    timeline_to = forms.DateField(required=False, label="to", widget=forms.DateInput(attrs={"type": "date"}))
    timeline_after = forms.CharField(required=False, max_length=TIMELINE_CURSOR_MAX_LENGTH, widget=forms.HiddenInput)

    def clean_timeline_after(self) -> TimelinePosition | None:
        token = self.cleaned_data.get("timeline_after") or ""
        if not token:
            return None
        try:
            return timeline_position_parse(token)
        except ValueError as error:
            raise forms.ValidationError("not a page of this timeline") from error

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        start, end = cleaned.get("timeline_from"), cleaned.get("timeline_to")
        if start and end and end < start:
            self.add_error("timeline_to", "is before the start.")
        return cleaned


def world_time_text(world_time: WorldTime) -> str:
    """A statement's time in the world in a few characters: "2019 → 2023-05", "~2019 →", "→ ended", "unknown"."""
    if not world_time.known:
        return "unknown"
    start = world_time_format(world_time.start, world_time.start_precision) or "?"
    if world_time.end_precision == TimePrecision.UNKNOWN:
        return f"{start} → ended"
    end = world_time_format(world_time.end, world_time.end_precision)
    return f"{start} → {end}" if end else f"{start} →"


def timeline_context(request: HttpRequest, *, scope: TimelineScope, today: date) -> dict[str, Any]:
    """What the timeline include (admin/facts/timeline.html) shows: the form, the page's entries with their world
    time as text and whether it holds today, and the query string of the next page (None after the last)."""
    form = TimelineFilterForm(request.GET or None)
    options: dict[str, Any] = {}
    if form.is_bound and form.is_valid():
        options = form.cleaned_data
    page = timeline_read(
        scope=scope,
        time_from=options.get("timeline_from"),
        time_to=options.get("timeline_to"),
        after=options.get("timeline_after"),
        limit=CONSOLE_TIMELINE_PAGE,
    )
    next_query = None
    if page.next_after is not None:
        query = QueryDict(request.GET.urlencode(), mutable=True)
        query["timeline_after"] = page.next_after.token()
        next_query = query.urlencode()
    return {
        "timeline_form": form,
        "timeline_entries": [
            {
                "entry": entry,
                "world_time": world_time_text(entry.fact.world_time),
                "holds_now": entry.fact.world_time.holds_on(today),
            }
            for entry in page.entries
        ],
        "timeline_next_query": next_query,
    }
