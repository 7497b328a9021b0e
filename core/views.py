from django.http import JsonResponse
from django.views.decorators.http import require_GET

from core.health import health_components


@require_GET
def health_view(request) -> JsonResponse:
    """200 when every component is up; 503 naming what is down. Unauthenticated, for load balancers."""
    components = health_components()
    down = sorted(name for name, result in components.items() if result["status"] != "up")
    body = {"status": "down" if down else "up", "down": down, "components": components}
    return JsonResponse(body, status=503 if down else 200)
