"""Entities in the admin: a list searched by any name and filtered by type, agent and user; an entity's page with its
relations drawn as a graph, the current ones, the history of each, the facts that stated them and its timeline;
rename (a form on the page) and merge (an action on two selected entities). Every write goes through
facts.services.graph."""

from __future__ import annotations

from django.contrib import admin, messages
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone

from console.facts.entity_graph import entity_graph_svg
from console.facts.forms import EntityMergeForm, EntityRenameForm
from console.facts.timeline import timeline_context
from console.utils import FastActionCheckboxMixin, TextInputFilter, admin_change_url, text_shorten
from core.exceptions import ApplicationError
from facts.models import Entity
from facts.selectors.graph import (
    entities_named,
    entities_with_current_relation_counts,
    entity_facts,
    entity_relation_histories,
    entity_relations,
    relations_among,
)
from facts.selectors.timeline import timeline_scope_of_entity
from facts.services.graph import entity_merge, entity_rename


class EntityUserFilter(TextInputFilter):
    title = "user (external id)"
    parameter_name = "user"
    lookup = "user__external_id"


class EntityStatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return [("current", "current"), ("merged", "merged into another")]

    def queryset(self, request, queryset):
        if self.value() == "current":
            return queryset.filter(merged_into__isnull=True)
        if self.value() == "merged":
            return queryset.filter(merged_into__isnull=False)
        return queryset


@admin.register(Entity)
class EntityAdmin(FastActionCheckboxMixin, admin.ModelAdmin):
    list_display = ["id", "name", "entity_type", "agent", "user", "other_names", "current_relations", "merged_into"]
    list_display_links = ["id", "name"]
    list_select_related = ["agent", "user", "merged_into"]
    list_filter = [EntityStatusFilter, "entity_type", "agent", EntityUserFilter, "is_user"]
    search_fields = ["name"]
    search_help_text = "Any name or alias containing the text (any case)."
    show_full_result_count = False
    ordering = ["-pk"]
    actions = ["merge_selected"]

    def get_queryset(self, request):
        return entities_with_current_relation_counts(queryset=super().get_queryset(request))

    def get_search_results(self, request, queryset, search_term):
        return entities_named(queryset=queryset, query=search_term), False

    @admin.display(description="aliases")
    def other_names(self, entity: Entity) -> str:
        others = [alias for alias in entity.aliases if alias != entity.name.lower()]
        return text_shorten(", ".join(others), 80) or "-"

    @admin.display(description="current relations", ordering="current_relations")
    def current_relations(self, entity: Entity) -> int:
        return entity.current_relations  # type: ignore[attr-defined]  # annotated by get_queryset

    def has_add_permission(self, request) -> bool:
        return False  # entities are formed with the facts that name them

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # relations are history; erasing the facts or the user removes them

    def get_actions(self, request):
        actions = super().get_actions(request)
        if not self.has_change_permission(request):
            actions.pop("merge_selected", None)
        return actions

    # --- the entity's page ----------------------------------------------------------------------------------------

    def get_urls(self):
        return [
            path("<int:entity_id>/rename/", self.admin_site.admin_view(self.rename_view), name="facts_entity_rename"),
            *super().get_urls(),
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        entity = get_object_or_404(Entity.objects.select_related("agent", "user", "merged_into"), pk=object_id)
        if not self.has_view_or_change_permission(request, entity):
            return HttpResponseRedirect(reverse("admin:index"))
        relations = list(entity_relations(entity=entity))
        neighbour_ids = {relation.subject_id for relation in relations} | {
            relation.object_entity_id for relation in relations if relation.object_entity_id is not None
        }
        graph = entity_graph_svg(
            entity=entity,
            relations=relations,
            ties=relations_among(entity_ids=neighbour_ids - {entity.pk}),
            entity_url=admin_change_url,
        )
        context = {
            **self.admin_site.each_context(request),
            "title": f"{entity.name} ({entity.get_entity_type_display()})",
            "subtitle": None,
            "opts": self.opts,
            "original": entity,
            "graph": graph,
            "current_relations": [relation for relation in relations if relation.valid_to is None],
            "histories": entity_relation_histories(relations=relations),
            "facts": entity_facts(entity=entity)[:100],
            "merged_entities": entity.merged_entities.order_by("pk"),
            "rename_form": EntityRenameForm(initial={"name": entity.name}),
            "can_change": self.has_change_permission(request, entity) and entity.merged_into_id is None,
            **timeline_context(request, scope=timeline_scope_of_entity(entity=entity), today=timezone.now().date()),
            **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/facts/entity/entity.html", context)

    def rename_view(self, request, entity_id: int):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        entity = get_object_or_404(Entity, pk=entity_id)
        if not self.has_change_permission(request, entity):
            return HttpResponseRedirect(reverse("admin:index"))
        form = EntityRenameForm(request.POST)
        if not form.is_valid():
            self.message_user(request, f"Not renamed: {form.errors.as_text()}", messages.ERROR)
            return HttpResponseRedirect(admin_change_url(entity))
        old_name = entity.name
        try:
            entity = entity_rename(entity=entity, name=form.cleaned_data["name"])
        except ApplicationError as error:
            self.message_user(request, f"Not renamed: {error.message}", messages.ERROR)
            return HttpResponseRedirect(admin_change_url(entity))
        self.log_change(request, entity, f"Renamed from {old_name!r} to {entity.name!r}.")
        self.message_user(request, f"Renamed {old_name!r} to {entity.name!r}; the old name stays an alias.")
        return HttpResponseRedirect(admin_change_url(entity))

    # --- merge ----------------------------------------------------------------------------------------------------

    @admin.action(description="Merge the two selected entities…")
    def merge_selected(self, request, queryset):
        entities = list(queryset.order_by("pk")[:3])
        if len(entities) != 2:
            self.message_user(request, "Select exactly two entities to merge.", messages.WARNING)
            return None
        form = EntityMergeForm(
            request.POST if "apply" in request.POST else None, entities=entities, initial={"kept": entities[0].pk}
        )
        if form.is_valid():
            kept = next(entity for entity in entities if entity.pk == form.cleaned_data["kept"])
            merged = next(entity for entity in entities if entity.pk != kept.pk)
            try:
                entity_merge(kept=kept, merged=merged)
            except ApplicationError as error:
                self.message_user(request, f"Not merged: {error.message}", messages.ERROR)
                return None
            self.log_change(request, kept, f"Merged #{merged.pk} {merged.name!r} into it.")
            self.message_user(
                request, f"Merged #{merged.pk} {merged.name!r} into #{kept.pk} {kept.name!r}.", messages.SUCCESS
            )
            return HttpResponseRedirect(admin_change_url(kept))
        return TemplateResponse(
            request,
            "admin/facts/entity/merge_confirmation.html",
            {
                **self.admin_site.each_context(request),
                "title": "Merge two entities?",
                "subtitle": None,
                "opts": self.opts,
                "form": form,
                "entities": entities_with_current_relation_counts(
                    queryset=Entity.objects.filter(pk__in=[entity.pk for entity in entities]).select_related("user")
                ).order_by("pk"),
                "selected_ids": [str(entity.pk) for entity in entities],
                "select_across": "0",
                "action": "merge_selected",
            },
        )
