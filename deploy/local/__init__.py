"""deploy/local."""
