"""Models and rules: what the copilot sees, decides and writes, with or without a model.

- :mod:`inference.llm`        the OpenAI-compatible client (one endpoint per role);
- :mod:`inference.llm_roles`  the four model-backed roles, each falling back to ``rules``;
- :mod:`inference.rules`      the rule-based decomposer, evaluator, risk and page-type checks;
- :mod:`inference.policies`   the navigation policy chain (route memory, skills, explorer, LLM);
- :mod:`inference.memory`     route memory; :mod:`inference.perception` hierarchy, OCR, blocks;
- :mod:`inference.prompts`    the prompt files; :mod:`inference.asr` speech to text.

Nothing is imported here: import from the subpackages.
"""

__all__: list[str] = []
