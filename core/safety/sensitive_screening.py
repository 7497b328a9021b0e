"""What memory may keep of a text under its agent's sensitive-data policy (Agent.sensitive_data): the text itself
when it holds no secret; otherwise nothing (withhold) or the text with each secret replaced (redact). Every secret
kept out is recorded as a SensitiveDataFinding, without the secret. Detection is core.safety.sensitive's.

Formation's models read conversations with their secrets replaced by labels ("[redacted password or PIN]"), so what
they write may hold a label where the secret was: a label counts as that secret here (withheld, or kept as it is
under redact, and recorded), unless it was already in the stored memory the model was given."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Protocol, TypeVar

from core.exceptions import ApplicationError
from core.models import SensitiveDataFinding
from core.safety.sensitive import (
    Finding,
    SensitiveDataPolicy,
    SensitiveKind,
    redaction_labels,
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


def holds_a_secret(text: str) -> bool:
    """Whether a text formation produced holds a secret, or the label of one it was shown."""
    return bool(sensitive_findings(text) or redaction_labels(text))


def _new_labels(labels: list[Finding], *, given: str) -> list[Finding]:
    """The labels of a text that were not already in `given` (per kind, as many as `given` held fewer)."""
    known = Counter(label.kind for label in redaction_labels(given)) if given else Counter[str]()
    new = []
    for label in labels:
        if known[label.kind]:
            known[label.kind] -= 1
        else:
            new.append(label)
    return new


def _screened(
    *,
    agent: ScreenedAgent,
    text: str,
    target: str,
    job_kind: str,
    job_id: int | None,
    withheld: Callable[[str, list[Finding]], Withheld],
    given: str = "",
) -> str | Withheld:
    findings, labels = sensitive_findings(text), redaction_labels(text)
    if not findings and not labels:
        return text
    redact = agent.sensitive_data == SensitiveDataPolicy.REDACT
    sensitive_findings_record(
        agent=agent,
        findings=findings + _new_labels(labels, given=given),
        action=Action.REDACTED if redact else Action.WITHHELD,
        target=target,
        job_kind=job_kind,
        job_id=job_id,
    )
    if redact:
        return text_redacted(text=text, findings=findings)
    return withheld(text, sorted(findings + labels, key=lambda finding: finding.start))


def statement_screen(
    *, agent: ScreenedAgent, text: str, target: str, job_kind: str = "", job_id: int | None = None
) -> str | None:
    """A fact or reflection as it may be stored: unchanged, redacted, or None when it must not be stored at all."""
    return _screened(
        agent=agent, text=text, target=target, job_kind=job_kind, job_id=job_id, withheld=lambda text, findings: None
    )


def long_text_screen(
    *, agent: ScreenedAgent, text: str, job_kind: str = "", job_id: int | None = None, given: str = ""
) -> str:
    """A blob as it may be stored. A long text keeps what holds no secret: withholding drops the sentences (or
    lines) that hold one. `given`: the stored memory the model rewrote (the current blob, the reflections it absorbs),
    whose labels are not counted again."""
    return _screened(
        agent=agent,
        text=text,
        target=SensitiveDataFinding.Target.BLOB,
        job_kind=job_kind,
        job_id=job_id,
        withheld=lambda text, findings: text_without_secret_sentences(text=text, findings=findings),
        given=given,
    )


def written_statement_screen(*, agent: ScreenedAgent, text: str, field: str) -> str:
    """A fact a client or an operator writes through the API, as the agent's policy lets memory keep it: unchanged;
    redacted (and recorded) under redact; under withhold refused with a 400 that names the field and the kinds of
    secret, never the value. A refused write stores nothing and records nothing: the request failed."""
    findings = sensitive_findings(text)
    if not findings:
        return text
    if agent.sensitive_data == SensitiveDataPolicy.REDACT:
        sensitive_findings_record(
            agent=agent, findings=findings, action=Action.REDACTED, target=SensitiveDataFinding.Target.FACT
        )
        return text_redacted(text=text, findings=findings)
    kinds = ", ".join(dict.fromkeys(SensitiveKind(finding.kind).label for finding in findings))
    raise ApplicationError(
        f"{field} holds a secret ({kinds}): this agent's memory keeps no passwords, PINs, codes, keys, card or "
        "account numbers, government ids, security answers or logins. Leave the value out, or set the agent's "
        "sensitive-data policy to redact to store the statement with the value replaced.",
        fields={field: [f"holds a secret ({kinds}); memory does not keep it."]},
        code="sensitive_data",
    )
