"""What kind of page a screen is, from its elements alone (no model).

A results list is a repeated item structure: sibling items with the same class,
resource id, left edge and width, stacked at different heights (a bottom
navigation bar repeats too, but along one row). Either at least three of
similar heights (rows of a plain list: suggestions, settings entries), or cards
whose heights may differ (notes with images, ads, promoted items, answers of
different lengths) but whose structure repeats: each shows a title and at least
one more line (an excerpt, a price, a meta line of author and date), under the
same parent. Two such cards of the same shape are enough (a search that found
two notes); a minority of odd items among them (a banner, an ad without a meta
line) does not break the list. Heights alone never decide it. A
details page is what is left when it is rich in text or carries details cues
(add to cart, reviews, menu). A sign-in wall is a login page with or without a
password field (:func:`inference.rules.fields.find_login_wall`: an account or
code field with a way on, "Continue with ..."). Order of the checks: login and dialogs first
(they sit on top of anything), then search input, list, settings, details.

A dialog is recognised by its window (the permission controller's package),
by Android's alert layout (``android:id/parentPanel``, ``android:id/alertTitle``),
by the permission controller's own ids (``grant_dialog``, ``permission_allow_button``,
``permission_deny_button``) even when they are drawn inside the app's window,
and by ``Dialog`` classes.
"""

from __future__ import annotations

import re
from collections import defaultdict

from core.models import PageType, Screen, UIElement
from inference.rules.fields import find_login_wall
from inference.vocabulary import load_vocabulary

__all__ = [
    "count_text_lines", "detect_page_type", "find_list_items", "find_nothing_found", "find_truncated_items",
    "is_card", "shows_content",
]

_MIN_ITEMS = 3
_CARD_LINES = 2  # a card shows a title and at least one more line (excerpt, price, meta)
_CONTENT_LINES = 3  # a card of content (a post, a result) shows more than an entry's two lines
# Cues of one thing's details page (add to cart, reviews, the menu): inference/vocabulary/details_cues.yaml.
_DETAILS_CUES = re.compile(load_vocabulary("details_cues").alternation("details"), re.IGNORECASE)
# A preview cut short says so; its full text is one tap further (a question's answers, a long post).
_READ_MORE = re.compile(load_vocabulary("read_more").alternation("read_more"), re.IGNORECASE)
# A search that found nothing ("没有找到相关视频", "No results found"). Not "暂无场次" (no
# showtimes today): that empty list is itself an answer.
_DETAILS_CHARS = 200  # this much text on a page that lists nothing is content, not a notice
_CONTENT_ABOVE_CHARS = 60  # this much of a page's text above a "no results" line: the page's content
_NOTHING_FOUND = re.compile(load_vocabulary("nothing_found").alternation("nothing_found"), re.IGNORECASE)
_SEARCH_HINT = re.compile(load_vocabulary("search").alternation("search"), re.IGNORECASE)
_SETTINGS_TITLE = re.compile(rf"^(?:{load_vocabulary('settings_titles').alternation('settings_title')})$",
                             re.IGNORECASE)
_DIALOG_PACKAGES = ("permissioncontroller", "packageinstaller")
_ALERT_IDS = frozenset({"android:id/parentPanel", "android:id/alertTitle"})
_PERMISSION_CONTROLLERS = frozenset({
    "com.android.permissioncontroller", "com.google.android.permissioncontroller",
    "com.android.packageinstaller", "com.google.android.packageinstaller",  # before Android 10
})
_PERMISSION_IDS = frozenset({
    "grant_dialog", "permission_allow_button", "permission_deny_button", "permission_message",
    "permission_allow_foreground_only_button", "permission_allow_one_time_button",
    "permission_deny_and_dont_ask_again_button",
})


def find_list_items(screen: Screen) -> tuple[UIElement, ...]:
    """The largest group of repeated, vertically stacked items (empty when there is none).

    Uniform rows, else repeated cards; a settings page's entries ("Font size | Normal")
    are entries, not cards.
    """
    groups: dict[tuple[str, str, int, int], list[UIElement]] = defaultdict(list)
    for element in screen.elements:
        height = element.bounds.height
        if not (screen.height * 0.03 <= height <= screen.height * 0.45):
            continue
        if element.bounds.width < screen.width * 0.25:
            continue  # icons and badges repeat too, but are not result items
        key = (
            element.class_name,
            element.resource_id,
            round(element.bounds.left / 8),
            round(element.bounds.width / 8),
        )
        groups[key].append(element)
    best: list[UIElement] = []
    by_cards = False
    for members in groups.values():
        # Result items are tappable or hold other labels; equal-height paragraphs of
        # a details page are neither.
        items = [m for m in members if m.clickable or _holds_labels(m, screen)]
        rows = _uniform_rows(items)
        found = rows or _repeated_cards(items, screen)
        if len(found) > len(best):
            best, by_cards = found, not rows
    if by_cards and _is_settings(screen):
        return ()
    return tuple(sorted(best, key=lambda m: m.bounds.top))


def _is_settings(screen: Screen) -> bool:
    elements = screen.elements
    return any(_SETTINGS_TITLE.match(e.text.strip()) for e in elements) or sum(e.checkable for e in elements) >= 3


def _uniform_rows(items: list[UIElement]) -> list[UIElement]:
    """Rows of a plain list: at least three, stacked, of similar heights."""
    tops = {m.bounds.top for m in items}
    heights = [m.bounds.height for m in items]
    if len(tops) < _MIN_ITEMS or max(heights) > 1.8 * min(heights):
        return []
    return items


def _repeated_cards(items: list[UIElement], screen: Screen) -> list[UIElement]:
    """Cards of one parent whose shape repeats (a title and more lines), whatever their heights.

    Returns the parent's items, odd ones included (an ad or banner among the
    cards is still part of the list; the skills rank ads last), or nothing.
    """
    by_parent: dict[str | None, list[UIElement]] = defaultdict(list)
    for item in items:
        by_parent[item.parent_id].append(item)
    best: list[UIElement] = []
    for siblings in by_parent.values():
        lines = {m.id: count_text_lines(m, screen) for m in siblings}
        # A card opens what it shows: it is tappable (a profile's sections are not).
        cards = [m for m in siblings if m.clickable and lines[m.id] >= _CARD_LINES]
        if len({m.bounds.top for m in cards}) < 2 or len(cards) * 3 < len(siblings) * 2:
            continue  # not stacked, or most items are not cards (a minority of odd ones is fine)
        if len(cards) == 2 and abs(lines[cards[0].id] - lines[cards[1].id]) > 1:
            continue  # two are a list only when they have the same shape (give or take a badge line)
        if len(siblings) > len(best):
            best = siblings
    return best


def is_card(element: UIElement, screen: Screen) -> bool:
    """Whether ``element`` is a card of content: tappable, showing a title and at least one more line."""
    return element.clickable and count_text_lines(element, screen) >= _CARD_LINES


def shows_content(element: UIElement, screen: Screen) -> bool:
    """Whether ``element`` shows content, three lines or more (a post, a video with its uploader
    and views), rather than an entry's two (an app found in Settings, its kind below)."""
    return count_text_lines(element, screen) >= _CONTENT_LINES


def count_text_lines(member: UIElement, screen: Screen) -> int:
    """How many lines of text ``member`` shows: its own (merged) texts and the texts inside it.

    Buttons inside it (a history entry's "Remove") are actions, not lines.
    """
    own = sum(1 for part in member.label.split(" | ") if part.strip())
    inner = sum(
        1 for e in screen.elements
        if e is not member and e.label and not e.clickable
        and member.bounds.encloses(e.bounds)
    )
    return own + inner


def find_truncated_items(screen: Screen) -> tuple[UIElement, ...]:
    """Tappable cards whose text is cut short ("…展开阅读全文", "Read more"): the rest is behind them.

    A page of such previews (a question with its answers) is an overview, not
    the details: the full text is on the page each card opens.
    """
    cues = [e for e in screen.elements if e.label and _READ_MORE.search(e.label)]
    return tuple(
        card for card in screen.elements
        if card.clickable and count_text_lines(card, screen) >= _CARD_LINES
        and any(card.bounds.encloses(cue.bounds) for cue in cues)
    )


def find_nothing_found(screen: Screen) -> UIElement | None:
    """The text saying a search found nothing, on a page that lists nothing and is no details page;
    else None. A details page's empty section (no reviews yet, no questions), long page or short,
    says nothing of the page."""
    said = next((e for e in screen.elements
                 if e.label and not e.clickable and len(e.label) <= 60 and _NOTHING_FOUND.search(e.label)),
                None)
    if said is None or find_list_items(screen):
        return None
    others = [e.label for e in screen.elements if e.label.strip() and e is not said]
    # The page's own text above the notice (not its search box, tabs or buttons) makes the notice
    # an empty section under the content: a product's "宝贝详情" with nothing in it.
    above = sum(len(e.label.strip()) for e in screen.elements
                if e is not said and not e.editable and not e.clickable and e.bounds.bottom <= said.bounds.top)
    if any(_DETAILS_CUES.search(t) for t in others) and (
            sum(len(t) for t in others) >= _DETAILS_CHARS or above >= _CONTENT_ABOVE_CHARS):
        return None
    return said


def detect_page_type(screen: Screen) -> PageType:
    """The page type of ``screen`` by structure and cue words."""
    elements = screen.elements
    if find_login_wall(screen) is not None:
        return PageType.LOGIN  # a password field, or an account / code field with a way on
    if any(p in screen.package for p in _DIALOG_PACKAGES) or any(_is_dialog_part(e) for e in elements):
        return PageType.DIALOG
    items = find_list_items(screen)
    focused_search = any(
        e.editable and (e.focused or _SEARCH_HINT.search(f"{e.text} {e.resource_id} {e.content_desc}"))
        for e in elements
    )
    if focused_search and not items:
        return PageType.SEARCH_INPUT
    if items:
        return PageType.RESULTS_LIST
    if _is_settings(screen):
        return PageType.SETTINGS
    texts = [e.label for e in elements if e.label.strip()]
    if any(_DETAILS_CUES.search(t) for t in texts) or sum(len(t) for t in texts) >= _DETAILS_CHARS:
        return PageType.DETAILS
    return PageType.OTHER


def _is_dialog_part(element: UIElement) -> bool:
    """Whether ``element`` belongs to an alert or permission dialog (by its class or id)."""
    rid = element.resource_id
    if rid in _ALERT_IDS or "dialog" in element.class_name.lower() or "alertdialog" in rid.lower():
        return True
    package, _, name = rid.partition(":id/")
    return package in _PERMISSION_CONTROLLERS and name in _PERMISSION_IDS


def _holds_labels(member: UIElement, screen: Screen) -> bool:
    """Whether another labelled element lies inside ``member`` (it is a container)."""
    return any(
        e is not member and e.label and member.bounds.encloses(e.bounds)
        for e in screen.elements
    )
