"""The tenant in the console, one module per model: agents (with the memory inspector and the formation page), API
keys, end users (export, erasure), erasure records and operator keys."""

from console.agents.agents import AgentAdmin
from console.agents.api_keys import AgentAPIKeyAdmin
from console.agents.end_users import EndUserAdmin
from console.agents.erasure_records import ErasureRecordAdmin
from console.agents.operator_keys import OperatorKeyAdmin

__all__ = ["AgentAPIKeyAdmin", "AgentAdmin", "EndUserAdmin", "ErasureRecordAdmin", "OperatorKeyAdmin"]
