from django.contrib.auth import get_user_model
from django.db import transaction


@transaction.atomic
def admin_user_ensure(*, username: str, password: str) -> bool:
    """Create a superuser unless one with that name exists (an existing password is left as the operator set it)."""
    user_model = get_user_model()
    if user_model.objects.filter(username=username).exists():
        return False
    user_model.objects.create_superuser(username=username, password=password, email="")
    return True
