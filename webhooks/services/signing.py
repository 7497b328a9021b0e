"""Standard Webhooks signatures (https://www.standardwebhooks.com): HMAC-SHA256 with the endpoint's secret over
`<webhook-id>.<webhook-timestamp>.<body>`, sent as `webhook-signature: v1,<base64>`."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32


def webhook_secret_new() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def webhook_secret_key(secret: str) -> bytes:
    """The signing key a secret encodes; ValueError when it is not `whsec_` and base64 of 24 to 64 bytes."""
    try:
        key = base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)
    except (ValueError, TypeError) as error:
        raise ValueError("a secret is whsec_ followed by base64") from error
    if not secret.startswith(SECRET_PREFIX) or not 24 <= len(key) <= 64:
        raise ValueError("a secret is whsec_ followed by the base64 of 24 to 64 random bytes")
    return key


def webhook_signature(*, secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(webhook_secret_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()
