"""Forms of the fact admin (the change form, the scope change and the semantic search) and of the entity admin
(rename, merge)."""

from __future__ import annotations

from django import forms

from agents.models import Agent
from core.exceptions import ApplicationError
from facts.models import Fact, FactScope
from facts.selectors import SearchMode
from facts.selectors.facts import fact_current_same_content
from facts.services.facts import (
    fact_content_normalize,
    fact_scopes_validate,
)
from facts.world_time import UNKNOWN_WORLD_TIME, WorldTimeInvalid, world_time_format, world_time_parse


def _tags_parse(text: str) -> list[str]:
    return [tag.strip() for tag in text.split(",") if tag.strip()]


class FactForm(forms.ModelForm):
    """The fields an operator may change. Saving writes a new version through fact_supersede (or fact_create when
    adding); the model's own constraints (one current fact per content and scope) are checked here first. When the
    statement held in the world is written as extraction writes it (facts.world_time.world_time_parse): an end given
    is a change in the world, recorded as the new version."""

    scopes = forms.MultipleChoiceField(
        choices=FactScope.choices,
        widget=forms.CheckboxSelectMultiple,
        help_text="agent: visible in every conversation of the agent; user: only with the user.",
    )
    tags = forms.CharField(required=False, help_text="Comma-separated.")
    reason = forms.CharField(
        max_length=300,
        initial="corrected by an operator",
        help_text="Recorded as why the old version was closed and the new one written.",
    )
    # Not named after the model's columns: the admin would copy a form field of that name onto the instance.
    world_start = forms.CharField(
        required=False,
        max_length=11,
        label="held from",
        help_text="When the statement began to hold in the world: 2019, 2023-05 or 2023-05-07; ~2019 for a rough "
        "date. Empty: not known.",
    )
    world_end = forms.CharField(
        required=False,
        max_length=11,
        label="held until",
        help_text="When it stopped holding (the day the next began), written the same way, or 'ended' (it ended, "
        "when is not known). Empty: it holds as far as memory knows.",
    )

    class Meta:
        model = Fact
        fields = ["agent", "user", "scopes", "content", "tags"]
        widgets = {"content": forms.Textarea(attrs={"rows": 3, "cols": 80})}

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.initial["tags"] = ", ".join(self.instance.tags)
            world = self.instance.world_time
            self.initial["world_start"] = world_time_format(world.start, world.start_precision) or ""
            self.initial["world_end"] = world_time_format(world.end, world.end_precision) or ""

    def clean_tags(self) -> list[str]:
        return _tags_parse(self.cleaned_data.get("tags") or "")

    def clean(self) -> dict:
        super().clean()
        cleaned = self.cleaned_data
        try:
            cleaned["world_time"] = world_time_parse(
                held_from=cleaned.get("world_start") or None, held_until=cleaned.get("world_end") or None
            )
        except WorldTimeInvalid as error:
            self.add_error("world_start" if error.field.startswith("start") else "world_end", str(error))
            cleaned["world_time"] = UNKNOWN_WORLD_TIME
        scopes, user = cleaned.get("scopes") or [], cleaned.get("user")
        agent = cleaned.get("agent") or (self.instance.agent if self.instance.pk else None)
        try:
            fact_scopes_validate(scopes=scopes, user=user)
        except ApplicationError as error:
            raise forms.ValidationError(error.message) from error
        if user is not None and agent is not None and user.agent_id != agent.pk:
            self.add_error("user", "This user belongs to another agent.")
        # The user column is set exactly when the fact is user-scoped (a check constraint); the services decide it.
        if FactScope.USER not in scopes:
            cleaned["user"] = None
        content = fact_content_normalize(cleaned.get("content") or "")
        cleaned["content"] = content
        if agent is not None and content:
            duplicate = fact_current_same_content(
                agent=agent,
                user=cleaned.get("user"),
                content=content,
                other_than_lineage=self.instance.lineage if self.instance.pk else None,
            )
            if duplicate is not None:
                self.add_error("content", f"Fact #{duplicate.pk} already says this in the same scope.")
        return cleaned

    def has_real_change(self) -> bool:
        return bool({"user", "scopes", "content", "tags", "world_start", "world_end"} & set(self.changed_data))


class FactScopeChangeForm(forms.Form):
    scopes = forms.MultipleChoiceField(choices=FactScope.choices, widget=forms.CheckboxSelectMultiple)


class FactSearchForm(forms.Form):
    agent = forms.ModelChoiceField(queryset=Agent.objects.order_by("external_id"))
    user = forms.CharField(
        required=False,
        label="user (external id)",
        help_text="Empty: only the facts visible in every conversation of the agent.",
    )
    query = forms.CharField(
        label="question", widget=forms.TextInput(attrs={"size": 80, "placeholder": "Where does the user live?"})
    )
    mode = forms.ChoiceField(choices=SearchMode.choices, initial=SearchMode.HYBRID)
    top_k = forms.IntegerField(min_value=1, max_value=100, initial=10, label="results")
    include_history = forms.BooleanField(required=False, help_text="Also closed versions.")


class EntityRenameForm(forms.Form):
    name = forms.CharField(
        max_length=200, help_text="The new canonical name; the old one stays an alias, so earlier mentions still match."
    )


class EntityMergeForm(forms.Form):
    """Which of the two selected entities stays: the other's names and relations move to it."""

    kept = forms.TypedChoiceField(coerce=int, widget=forms.RadioSelect, label="Keep")

    def __init__(self, *args, entities, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        kept = self.fields["kept"]
        assert isinstance(kept, forms.TypedChoiceField)
        kept.choices = [(entity.pk, f"#{entity.pk} {entity.name}") for entity in entities]
