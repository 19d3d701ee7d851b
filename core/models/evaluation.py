"""The evaluator's verdict on a screen: done?, risky (and why)?, what kind of page."""

from __future__ import annotations

from enum import StrEnum
from typing import Self

from pydantic import model_validator

from core.models.base import Frozen
from core.models.screens import PageType

__all__ = ["Evaluation", "RiskCategory"]


class RiskCategory(StrEnum):
    """The seven risk criteria of DroidRetriever's evaluator prompt (Appendix B.3), and sending.

    ``sending`` (issue 13): sending, replying, posting, sharing, following, liking or
    subscribing acts in the person's name; the agent never does it either.
    """

    LOGIN = "login"
    PAYMENT = "payment"
    PERSONAL_INFO = "personal_info"
    PRIVACY_SETTINGS = "privacy_settings"
    DELETION = "deletion"
    CONSENT = "consent"
    SENSITIVE_APP = "sensitive_app"
    SENDING = "sending"


class Evaluation(Frozen):
    complete: bool
    risk: bool = False
    risk_category: RiskCategory | None = None
    page_type: PageType = PageType.OTHER
    reason: str = ""
    evaluator: str = ""  # "rules" or "llm:<model>"
    # A model's "complete" the rules' page type contradicts (a results list for a focused
    # sub-task): not accepted, and recorded here. Empty when they agree or no model judged.
    disagreement: str = ""

    @model_validator(mode="after")
    def _risk_has_category(self) -> Self:
        if self.risk and self.risk_category is None:
            raise ValueError("a risky evaluation must name its risk category")
        return self
