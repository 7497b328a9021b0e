"""Secrets that must not become long-lived, searchable, agent-readable memory: passwords and PINs, API keys and
tokens, payment card numbers and their security codes, bank account numbers, government ids, one-time and recovery
codes, security-question answers and account logins. Detected by deterministic, offline rules (no model, nothing
downloaded), in what formation reads and is about to store and in what memory hands back; docs/security.md lists the
rules and what they deliberately leave alone.

Two families of rules. Shapes: a card number must pass the Luhn check and start like a card, an IBAN its mod-97 check
and its country's length and structure (both checks from python-stdnum), a key its provider's format, a passport
number a word like "passport" and a value with a digit. Words: a secret said the way people say it, in English,
Spanish, Portuguese, French, German and Italian (core.safety.secret_phrases, from the tables of
core.safety.secret_lexicon), with context carried across the clauses of one message ("card 4111 ..., code 318").
A finding's span is the value alone, so that a redacted statement keeps its meaning: "The user's passport number
is [redacted government id]"."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from django.db import models
from stdnum import iban, luhn

from core.safety.secret_phrases import MASK, phrase_findings


class SensitiveKind(models.TextChoices):
    PASSWORD = "password", "password or PIN"
    API_KEY = "api_key", "API key or token"
    CARD_NUMBER = "card_number", "card number"
    CARD_SECURITY_CODE = "card_security_code", "card security code"
    BANK_ACCOUNT = "bank_account", "bank account number"
    GOVERNMENT_ID = "government_id", "government id"
    ONE_TIME_CODE = "one_time_code", "one-time code"
    SECURITY_ANSWER = "security_answer", "security answer"
    ACCOUNT_LOGIN = "account_login", "account login"


# The kind of each table of core.safety.secret_lexicon: door codes and PINs are passwords by another name.
_PHRASE_KINDS = {
    "password": SensitiveKind.PASSWORD,
    "pin": SensitiveKind.PASSWORD,
    "door_code": SensitiveKind.PASSWORD,
    "card_security_code": SensitiveKind.CARD_SECURITY_CODE,
    "security_answer": SensitiveKind.SECURITY_ANSWER,
    "one_time_code": SensitiveKind.ONE_TIME_CODE,
    "login": SensitiveKind.ACCOUNT_LOGIN,
}


class SensitiveDataPolicy(models.TextChoices):
    WITHHOLD = "withhold", "withhold: store nothing that holds a secret"
    REDACT = "redact", "redact: store it with the secret replaced by [redacted …]"


@dataclass(frozen=True)
class Finding:
    kind: str
    start: int
    end: int


# --- rules ------------------------------------------------------------------------------------------------------------

_SEPARATOR = r"(?:\s*(?::|=|\bis\b|\bwas\b|\bwill\s+be\b|\bis\s+now\b|\bto\b)\s*|\s+)"
# One token, quotes around it dropped, up to trailing punctuation.
_TOKEN = r"[^\s\"'”’»,;\ufffc]{1,128}?"
# A number written in groups ("485 777 3456", "QQ 12 34 56 C"): groups after the first hold a digit, or are the
# one check letter some ids end with.
_NUMBER = (
    r"[A-Za-z0-9][A-Za-z0-9./-]{0,40}?(?:\s(?=[A-Za-z./-]*\d)[A-Za-z0-9][A-Za-z0-9./-]{0,11}(?<![./-])){0,5}"
    r"(?:\s[A-Za-z](?!\w))?"
)
# "is 12 characters long", "is 4 digits": a value's size, not the value.
_NOT_A_SIZE = r"(?!\s+(?:characters?|chars|letters|digits|numbers|symbols|words|long|days|weeks|months|years)\b)"


def _keyword_values(
    text: str,
    *,
    keywords: str,
    kind: str,
    accept: Callable[[str, bool], bool],
    qualifier: str = "",
    value: str = _TOKEN,
) -> Iterator[Finding]:
    """Values following a keyword ("my wifi password is X", "PIN: X", "passport number QX-4471"). `accept` decides
    on the value and whether an explicit separator (is, :, =) came before it."""
    pattern = re.compile(
        rf"\b(?:{keywords})\b{qualifier}(?P<separator>{_SEPARATOR})[\"'“‘«]?(?!\[redacted\s)(?P<value>{value})[\"'”’»]?"
        rf"(?=[.,;:!?)]*(?:\s|$)){_NOT_A_SIZE}",
        re.IGNORECASE,
    )
    for match in pattern.finditer(text):
        explicit = bool(match.group("separator").strip())
        value = match.group("value")
        if accept(value, explicit):
            yield Finding(kind=kind, start=match.start("value"), end=match.end("value"))


def _has_digit(value: str) -> bool:
    return any(char.isdigit() for char in value)


def _url_credentials(text: str) -> Iterator[Finding]:
    """scheme://user:password@host: the password."""
    for match in re.finditer(r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:(?P<value>[^\s@/\ufffc]+)@", text, re.IGNORECASE):
        yield Finding(kind=SensitiveKind.PASSWORD, start=match.start("value"), end=match.end("value"))


_TOKEN_FORMATS = re.compile(
    r"""
    \bsk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_-]{20,}           # OpenAI, Anthropic
    | \b[spr]k_(?:live|test)_[A-Za-z0-9]{16,}                     # Stripe
    | \bgh[pousr]_[A-Za-z0-9]{30,}                                # GitHub
    | \bgithub_pat_[A-Za-z0-9_]{22,}
    | \bglpat-[A-Za-z0-9_-]{20,}                                  # GitLab
    | \bxox[abprs]-[A-Za-z0-9-]{10,}                              # Slack
    | \b(?:AKIA|ASIA)[0-9A-Z]{16}\b                               # AWS access key id
    | \bAIza[0-9A-Za-z_-]{35}                                     # Google
    | \bmem_[A-Za-z0-9_-]{30,}                                    # this service's own keys
    | \beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}   # JWT
    | -----BEGIN[A-Z ]*PRIVATE\ KEY-----[\s\S]*?(?:-----END[A-Z ]*PRIVATE\ KEY-----|$)
    """,
    re.VERBOSE,
)
_TOKEN_WORDS = (
    r"api[\s_-]?key|apikey|secret[\s_-]?key|client[\s_-]?secret|secret|access[\s_-]?token|auth[\s_-]?token"
    r"|bearer[\s_-]?token|refresh[\s_-]?token|token|private[\s_-]?key|access[\s_-]?key|signing[\s_-]?key"
)


def _token_value(value: str, explicit: bool) -> bool:
    """A long, mixed value: letters and digits (or symbols), not a word."""
    classes = sum(bool(re.search(pattern, value)) for pattern in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[_\-./+=]"))
    return len(value) >= 16 and classes >= 2 and _has_digit(value)


def _api_keys(text: str) -> Iterator[Finding]:
    for match in _TOKEN_FORMATS.finditer(text):
        yield Finding(kind=SensitiveKind.API_KEY, start=match.start(), end=match.end())
    for match in re.finditer(r"\bBearer\s+(?P<value>[A-Za-z0-9._~+/-]{20,}=*)", text):
        yield Finding(kind=SensitiveKind.API_KEY, start=match.start("value"), end=match.end("value"))
    yield from _keyword_values(text, keywords=_TOKEN_WORDS, kind=SensitiveKind.API_KEY, accept=_token_value)


def luhn_valid(digits: str) -> bool:
    return luhn.is_valid(digits)


# Issuer prefixes of the major networks (Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay, Maestro).
_CARD_PREFIX = re.compile(r"^(?:4|5[1-5]|2[2-7]|3[0456789]|6|50|5[6-8])")
_CARD_NUMBER = re.compile(r"(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d-])")


def _cards(text: str) -> Iterator[Finding]:
    for match in _CARD_NUMBER.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and _CARD_PREFIX.match(digits) and luhn_valid(digits):
            yield Finding(kind=SensitiveKind.CARD_NUMBER, start=match.start(), end=match.end())


_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?:[ -]?[A-Z0-9]){11,30}\b")


def iban_valid(candidate: str) -> bool:
    """The mod-97 check and the country's length and structure (ISO 13616 registry, as python-stdnum ships it);
    not the national check digits inside some countries' account numbers, which a typo-free IBAN passes anyway."""
    return iban.is_valid(candidate.upper(), check_country=False)


def _longest_valid_iban(candidate: str) -> str | None:
    """The regex may run on into the next word ("DE89 3704 0044 0532 0130 00 today"): try the prefixes it allows."""
    for end in range(len(candidate), 14, -1):
        prefix = candidate[:end].rstrip(" -")
        if iban_valid(prefix):
            return prefix
    return None


_ACCOUNT_WORDS = (
    r"(?:bank\s+|checking\s+|savings\s+|current\s+)?account\s+(?:number|no\.?|#)|acct\.?\s*(?:number|no\.?|#)?"
    r"|routing\s+(?:number|no\.?)|aba\s+(?:number|routing)|sort\s+code|bsb(?:\s+number)?|iban"
)


def _bank_accounts(text: str) -> Iterator[Finding]:
    for match in _IBAN.finditer(text):
        iban = _longest_valid_iban(match.group())
        if iban is not None:
            yield Finding(kind=SensitiveKind.BANK_ACCOUNT, start=match.start(), end=match.start() + len(iban))
    yield from _keyword_values(
        text,
        keywords=_ACCOUNT_WORDS,
        kind=SensitiveKind.BANK_ACCOUNT,
        accept=lambda value, _: sum(char.isdigit() for char in value) >= 6,
        value=_NUMBER,
    )


_ID_WORDS = (
    r"passport|national\s+(?:id|identity|insurance|registration)|id\s+card|identity\s+card|identity\s+document"
    r"|driver'?s'?\s+licen[cs]e|driving\s+licen[cs]e|licen[cs]e\s+number|tax\s+(?:id|number|identification)"
    r"|tin|ssn|social\s+security|social\s+insurance|sin|nino?|personal\s+(?:id|identification)"
    r"|aadhaa?r|pan\s+card|dni|nie|nif|cpf|bsn|codice\s+fiscale|steuer-?id|personalausweis|medicare|nhs"
)
_ID_QUALIFIER = r"(?:\s+(?:number|no\.?|#|id|card|code))?"
# The SSA's area, group and serial rules. Not python-stdnum's us.ssn: it also refuses the numbers once published as
# examples (078-05-1120), which people still type as their own, and a secret-shaped number is withheld all the same.
_SSN = re.compile(r"\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b")
_UK_NATIONAL_INSURANCE = re.compile(
    r"\b(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]\s?\d{2}\s?\d{2}\s?\d{2}\s?[A-D]\b"
)


def _id_value(value: str, explicit: bool) -> bool:
    # Without "is" or ":", the keyword may be an English word ("a tin 400g"): a longer value is needed.
    return (4 if explicit else 6) <= len(value) <= 40 and _has_digit(value)


def _government_ids(text: str) -> Iterator[Finding]:
    for pattern in (_SSN, _UK_NATIONAL_INSURANCE):
        for match in pattern.finditer(text):
            yield Finding(kind=SensitiveKind.GOVERNMENT_ID, start=match.start(), end=match.end())
    yield from _keyword_values(
        text,
        keywords=_ID_WORDS,
        kind=SensitiveKind.GOVERNMENT_ID,
        accept=_id_value,
        qualifier=_ID_QUALIFIER,
        value=_NUMBER,
    )


# The rules of shapes. Each needs a digit, a key's prefix or a URL: text without any is not read by them.
_SHAPE_RULES: tuple[Callable[[str], Iterator[Finding]], ...] = (
    _api_keys,
    _cards,
    _bank_accounts,
    _government_ids,
    _url_credentials,
)
_SHAPE_GATE = re.compile(
    r"\d|://|-----BEGIN|\b(?:sk-|[spr]k_|gh[pousr]_|github_pat_|glpat-|xox[abprs]-|AKIA|ASIA|AIza|mem_|eyJ|Bearer\s)"
)
# What a redaction left in a text ("[redacted password or PIN]"): masked while the rules run, so that none reads a
# label's words or takes it for a value.
_LABEL = re.compile(r"\[redacted [^\]\n]{1,40}\]")


def _masked(text: str) -> str:
    if "[redacted " not in text:
        return text
    return _LABEL.sub(lambda match: MASK * len(match.group()), text)


def sensitive_findings(text: str) -> list[Finding]:
    """The secrets in text, in order, overlapping findings merged (the first rule's kind wins: shapes before words).
    Redaction labels are never found."""
    masked = _masked(text)
    found = [finding for rule in _SHAPE_RULES for finding in rule(masked)] if _SHAPE_GATE.search(masked) else []
    cards = [(finding.start, finding.end) for finding in found if finding.kind == SensitiveKind.CARD_NUMBER]
    found += [
        Finding(kind=_PHRASE_KINDS[said.kind], start=said.start, end=said.end)
        for said in phrase_findings(masked, card_numbers=cards)
    ]
    findings = sorted(found, key=lambda f: (f.start, -f.end))
    merged: list[Finding] = []
    for finding in findings:
        if merged and finding.start < merged[-1].end:
            last = merged[-1]
            merged[-1] = Finding(kind=last.kind, start=last.start, end=max(last.end, finding.end))
            continue
        merged.append(finding)
    return merged


def redaction_label(kind: str) -> str:
    return f"[redacted {SensitiveKind(kind).label}]"


_LABEL_KINDS = {redaction_label(kind): kind for kind in SensitiveKind.values}


def redaction_labels(text: str) -> list[Finding]:
    """The redaction labels in text, as findings of their kind: a secret an earlier screen took out. Formation's
    models read conversations with their secrets already replaced, so what they write may carry a label instead."""
    return [
        Finding(kind=_LABEL_KINDS[match.group()], start=match.start(), end=match.end())
        for match in _LABEL.finditer(text)
        if match.group() in _LABEL_KINDS
    ]


def _replaced(text: str, findings: list[Finding]) -> str:
    parts, position = [], 0
    for finding in findings:
        parts += [text[position : finding.start], redaction_label(finding.kind)]
        position = finding.end
    return "".join([*parts, text[position:]])


def text_redacted(*, text: str, findings: list[Finding]) -> str:
    """text with each finding's value replaced by its label, until no rule finds anything: a replacement changes a
    value's surroundings, which can bring out another one (labels themselves are never found)."""
    while findings:
        redacted = _replaced(text, findings)
        if redacted == text:
            break
        text, findings = redacted, sensitive_findings(redacted)
    return text


# A sentence or line with the whitespace after it, so that what is kept joins as it was written.
_SENTENCE = re.compile(r"[^\n.!?]*[.!?]*\s*")


def text_without_secret_sentences(*, text: str, findings: list[Finding]) -> str:
    """text without the sentences (or lines) that hold a finding, until no rule finds anything: a long text such as
    a blob keeps the rest."""
    while findings:
        text = "".join(
            match.group()
            for match in _SENTENCE.finditer(text)
            if match.group() and not any(f.start < match.end() and f.end > match.start() for f in findings)
        ).strip()
        findings = sensitive_findings(text)
    return text
