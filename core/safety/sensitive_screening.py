"""What memory may keep of a text under its agent's sensitive-data policy (Agent.sensitive_data): the text itself
when it holds no secret; otherwise nothing (withhold) or the text with each secret replaced (redact). Every secret
kept out is recorded as a SensitiveDataFinding, without the secret. Detection is core.safety.sensitive's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from core.models import SensitiveDataFinding
from core.safety.sensitive import (
    Finding,
    SensitiveDataPolicy,
    sensitive_findings,
    text_redacted,
    text_without_secret_sentences,
)


class ScreenedAgent(Protocol):
    """What screening needs of an agent (agents.Agent): its id, for the findings, and its policy."""

    pk: int
    sensitive_data: str


Action = SensitiveDataFinding.Action
Withheld = TypeVar("Withheld", str, str | None)


def sensitive_findings_record(
    *,
    agent: ScreenedAgent,
    findings: list[Finding],
    action: str,
    target: str,
    job_kind: str = "",
    job_id: int | None = None,
) -> None:
    SensitiveDataFinding.objects.bulk_create(
        SensitiveDataFinding(
            agent_id=agent.pk, kind=finding.kind, action=action, target=target, job_kind=job_kind, job_id=job_id
        )
        for finding in findings
    )


def _screened(
    *,
    agent: ScreenedAgent,
    text: str,
    target: str,
    job_kind: str,
    job_id: int | None,
    withheld: Callable[[str, list[Finding]], Withheld],
) -> str | Withheld:
    findings = sensitive_findings(text)
    if not findings:
        return text
    redact = agent.sensitive_data == SensitiveDataPolicy.REDACT
    sensitive_findings_record(
        agent=agent,
        findings=findings,
        action=Action.REDACTED if redact else Action.WITHHELD,
        target=target,
        job_kind=job_kind,
        job_id=job_id,
    )
    return text_redacted(text=text, findings=findings) if redact else withheld(text, findings)


def statement_screen(
    *, agent: ScreenedAgent, text: str, target: str, job_kind: str = "", job_id: int | None = None
) -> str | None:
    """A fact or reflection as it may be stored: unchanged, redacted, or None when it must not be stored at all."""
    return _screened(
        agent=agent, text=text, target=target, job_kind=job_kind, job_id=job_id, withheld=lambda text, findings: None
    )


def long_text_screen(*, agent: ScreenedAgent, text: str, job_kind: str = "", job_id: int | None = None) -> str:
    """A blob as it may be stored. A long text keeps what holds no secret: withholding drops the sentences (or
    lines) that hold one."""
    return _screened(
        agent=agent,
        text=text,
        target=SensitiveDataFinding.Target.BLOB,
        job_kind=job_kind,
        job_id=job_id,
        withheld=lambda text, findings: text_without_secret_sentences(text=text, findings=findings),
    )
