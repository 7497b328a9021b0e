"""The memory tools over REST: their OpenAI-format definitions and the execution of one call (formation/tools/)."""
