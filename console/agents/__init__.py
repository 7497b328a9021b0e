"""The tenant in the console, one module per model: agents (with the memory inspector and the formation page), API
keys, end users (export, erasure) and erasure records."""

from console.agents.agents import AgentAdmin
from console.agents.api_keys import AgentAPIKeyAdmin
from console.agents.end_users import EndUserAdmin
from console.agents.erasure_records import ErasureRecordAdmin

__all__ = ["AgentAPIKeyAdmin", "AgentAdmin", "EndUserAdmin", "ErasureRecordAdmin"]
