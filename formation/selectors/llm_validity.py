"""How the LLM's replies fared per step of the pipeline (the admin's usage page): formation's steps by their calls'
purpose, and a session's consolidation (its summary, reflections' job) as a step of its own."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from core.models import LLMCall
from reflections.selectors.consolidation_due import SUMMARY_STEP, session_summary_jobs


@dataclass(frozen=True)
class StepValidity:
    """How one formation step's replies fared: valid (parsed and passed validation, perhaps on the retry), malformed
    (each malformed reply counts, the retry's too), and valid replies that broke a rule of the prompt."""

    step: str
    replies: int
    valid: int
    with_violations: int
    violations: dict[str, int]

    @property
    def purpose(self) -> str:
        """The LLMCall purpose of the step's calls."""
        return "consolidate" if self.step == SUMMARY_STEP else self.step

    @property
    def valid_percent(self) -> float:
        return 100.0 * self.valid / self.replies if self.replies else 0.0

    @property
    def violating_percent(self) -> float:
        return 100.0 * self.with_violations / self.valid if self.valid else 0.0


def llm_reply_validity(*, since: datetime, agent_id: int | None = None) -> list[StepValidity]:
    """Per step (LLM call purpose; session consolidations apart, as summaries), the replies the model gave since
    `since`: calls without a reply (provider errors, 429s) do not count."""
    calls = LLMCall.objects.filter(created_at__gte=since, outcome__in=[LLMCall.Outcome.OK, LLMCall.Outcome.MALFORMED])
    if agent_id is not None:
        calls = calls.filter(agent_id=agent_id)
    # A session's consolidation is its summary: a step of its own.
    job_steps: dict[tuple[str, int | None], str] = {
        ("consolidation", job_id): step
        for job_id, step in session_summary_jobs(calls.filter(job_kind="consolidation").values("job_id")).items()
    }
    tallies: dict[str, dict] = {}
    for purpose, job_kind, job_id, outcome, violations in calls.values_list(
        "purpose", "job_kind", "job_id", "outcome", "rule_violations"
    ).iterator():
        step = job_steps.get((job_kind, job_id), purpose)
        tally = tallies.setdefault(step, {"replies": 0, "valid": 0, "with_violations": 0, "violations": {}})
        tally["replies"] += 1
        if outcome == LLMCall.Outcome.OK:
            tally["valid"] += 1
            tally["with_violations"] += bool(violations)
            for rule, count in violations.items():
                tally["violations"][rule] = tally["violations"].get(rule, 0) + count
    return [StepValidity(step=step, **tally) for step, tally in sorted(tallies.items())]
