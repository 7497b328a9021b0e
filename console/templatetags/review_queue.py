from django import template

from formation.selectors.memory_review import review_queue_by_agent

register = template.Library()


@register.inclusion_tag("admin/formation/heldmemory/queue_summary.html")
def review_queue_summary() -> dict:
    return {"queues": review_queue_by_agent()}
