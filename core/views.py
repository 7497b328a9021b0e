from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from core.runtime.health import health_components


@require_GET
def health_view(request: HttpRequest) -> JsonResponse:
    """200 when every component is up, or up but degraded (status "degraded", naming the components in `degraded`:
    the service works, some of its background work waits); 503 naming what is down. Unauthenticated, for load
    balancers."""
    components = health_components()
    down = sorted(name for name, result in components.items() if result["status"] == "down")
    degraded = sorted(name for name, result in components.items() if result["status"] == "degraded")
    status = "down" if down else "degraded" if degraded else "up"
    body = {"status": status, "down": down, "degraded": degraded, "components": components}
    return JsonResponse(body, status=503 if down else 200)
