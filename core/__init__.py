"""The bottom floor: shared pydantic models, settings, errors, safe text, secrets, private files,
the Redis client and recorded real-app data. It imports no other package of ours."""
