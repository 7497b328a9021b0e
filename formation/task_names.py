"""The names of the formation app's Celery tasks (formation/tasks.py), for code that queues them without importing the
tasks module, which imports the services that queue them."""

FORM_SESSION_MEMORIES = "formation.form_session_memories"
RESUME_FORMATION = "formation.resume_formation"
SWEEP_FORMATION = "formation.sweep_formation"
ENFORCE_RETENTION = "formation.enforce_retention"

# The names these tasks had before they moved here from conversations/ (issue 22): what an older release queued, or
# an older beat still sends during an upgrade, runs the task under its new name. Nothing queues them any more.
LEGACY_NAMES = {
    "conversations.form_session_memories": FORM_SESSION_MEMORIES,
    "conversations.resume_formation": RESUME_FORMATION,
    "conversations.sweep_formation": SWEEP_FORMATION,
    "conversations.enforce_retention": ENFORCE_RETENTION,
}
