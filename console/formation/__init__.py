"""The formation pipeline in the admin, one module per concern: jobs (formation, retention) and held memory (the
review queue)."""

from console.formation.held_memory import HeldMemoryAdmin
from console.formation.jobs import FormationJobAdmin, RetentionRunAdmin

__all__ = ["FormationJobAdmin", "HeldMemoryAdmin", "RetentionRunAdmin"]
