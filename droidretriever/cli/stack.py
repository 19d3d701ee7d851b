"""``droidretriever up | down | status``: the embedded local stack."""
