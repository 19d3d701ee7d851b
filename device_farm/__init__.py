"""device_farm."""
