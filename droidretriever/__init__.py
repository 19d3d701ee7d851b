"""DroidRetriever: find information that lives inside phone apps, with cited evidence."""

__all__ = ["__version__"]
__version__ = "0.1.0"
