"""The formation pipeline in the admin, one module per concern: jobs (formation, retention) and held memory (the
review queue)."""

from formation.admin.held_memory import HeldMemoryAdmin
from formation.admin.jobs import FormationJobAdmin, RetentionRunAdmin

__all__ = ["FormationJobAdmin", "HeldMemoryAdmin", "RetentionRunAdmin"]
