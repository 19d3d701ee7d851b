"""Perception: view hierarchy, OCR where it is blind, UI detector, description, grounding.

Entry point: :class:`Perceiver` turns a device's :class:`Observation` into a
:class:`Perception` (a ``core.models.Screen`` plus the view tree and
layout blocks). :func:`describe_screen` writes the text a model reads,
:func:`ground_text` maps words back to boxes, and
:class:`Redactor` decides what may leave the device. See docs/perception.md.
"""

from inference.perception.blocks import (
    BlockPartition,
    Exposure,
    LayoutBlock,
    count_exposure,
    partition_blocks,
)
from inference.perception.describe import ScreenDescription, describe_screen, element_role
from inference.perception.detector import (
    DETECTOR_LABELS,
    Detection,
    Detector,
    OnnxDetector,
    UltralyticsDetector,
    create_detector,
)
from inference.perception.droidbot import (
    DroidbotState,
    DroidbotView,
    convert_droidbot_state,
    list_droidbot_states,
    load_droidbot_state,
    observe_droidbot_state,
)
from inference.perception.fingerprint import fingerprint_screen
from inference.perception.grounding import (
    Grounding,
    ground_element,
    ground_instruction,
    ground_text,
)
from inference.perception.hierarchy import ParsedHierarchy, ViewNode, ViewTree, parse_hierarchy
from inference.perception.observation import Observation
from inference.perception.ocr import (
    CachedOcrEngine,
    OcrEngine,
    OcrLine,
    PaddleOcrEngine,
    RapidOcrEngine,
    release_freed_memory,
)
from inference.perception.ocr_backends import create_ocr_engine
from inference.perception.ocr_client import OcrServiceClient, check_ocr_service
from inference.perception.ocr_regions import (
    find_blind_regions,
    merge_ocr_elements,
    ocr_lines_to_elements,
    read_blind_regions,
    read_capture,
    read_regions,
)
from inference.perception.pipeline import Perceiver, Perception, PerceptionTimings
from inference.perception.redact import Redaction, Redactor, redactor_for
from inference.perception.tokens import count_tokens

__all__ = [
    "DETECTOR_LABELS",
    "BlockPartition",
    "CachedOcrEngine",
    "Detection",
    "Detector",
    "DroidbotState",
    "DroidbotView",
    "Exposure",
    "Grounding",
    "LayoutBlock",
    "Observation",
    "OcrEngine",
    "OcrLine",
    "OcrServiceClient",
    "OnnxDetector",
    "PaddleOcrEngine",
    "ParsedHierarchy",
    "Perceiver",
    "Perception",
    "PerceptionTimings",
    "RapidOcrEngine",
    "Redaction",
    "Redactor",
    "ScreenDescription",
    "UltralyticsDetector",
    "ViewNode",
    "ViewTree",
    "check_ocr_service",
    "convert_droidbot_state",
    "count_exposure",
    "count_tokens",
    "create_detector",
    "create_ocr_engine",
    "describe_screen",
    "element_role",
    "find_blind_regions",
    "fingerprint_screen",
    "ground_element",
    "ground_instruction",
    "ground_text",
    "list_droidbot_states",
    "load_droidbot_state",
    "merge_ocr_elements",
    "observe_droidbot_state",
    "ocr_lines_to_elements",
    "parse_hierarchy",
    "partition_blocks",
    "read_blind_regions",
    "read_capture",
    "read_regions",
    "redactor_for",
    "release_freed_memory",
]
