"""Installed apps and the names people call them, in English and Chinese.

``find_mentioned_apps`` finds the installed apps a question names (fuzzy, with
rapidfuzz, so "McDonald" finds "McDonald's" and "xiaohongshu" finds Rednote);
``resolve_app`` maps a name a model wrote back to one installed app. Both are
shared by the rule-based and the model decomposer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rapidfuzz import fuzz

from droidretriever.models import InstalledApp

__all__ = [
    "APP_ALIASES",
    "find_mentioned_apps",
    "names_for",
    "resolve_app",
    "strip_app_names",
]


# Alias groups: every name in a group is the same app. Matched against an installed
# app's label and package, so a phone labelling Meituan "美团" still matches "Meituan".
APP_ALIASES: tuple[tuple[str, ...], ...] = (
    ("Meituan", "美团", "com.sankuai.meituan"),
    ("Meituan Waimai", "美团外卖", "com.sankuai.meituan.takeoutnew"),
    ("Ele.me", "Eleme", "饿了么", "me.ele"),
    ("Rednote", "Xiaohongshu", "Little Red Book", "RED", "小红书", "com.xingin.xhs"),
    ("Taobao", "淘宝", "com.taobao.taobao"),
    ("JD", "JD.com", "Jingdong", "京东", "com.jingdong.app.mall"),
    ("Pinduoduo", "拼多多", "com.xunmeng.pinduoduo"),
    ("McDonald's", "McDonalds", "麦当劳", "com.mcdonalds.gma.cn", "com.mcdonalds.app"),
    ("KFC", "肯德基", "com.yek.android.kfc.activitys"),
    ("Dianping", "Dazhong Dianping", "大众点评", "com.dianping.v1"),
    ("WeChat", "Weixin", "微信", "com.tencent.mm"),
    ("Alipay", "支付宝", "com.eg.android.AlipayGphone"),
    ("Douyin", "TikTok", "抖音", "com.ss.android.ugc.aweme"),
    ("Bilibili", "哔哩哔哩", "B站", "tv.danmaku.bili"),
    ("Zhihu", "知乎", "com.zhihu.android"),
    ("Weibo", "微博", "com.sina.weibo"),
    ("Douban", "豆瓣", "com.douban.frodo"),
    ("Amap", "Gaode Maps", "高德地图", "com.autonavi.minimap"),
    ("Baidu Maps", "百度地图", "com.baidu.BaiduMap"),
    ("Ctrip", "Trip.com", "携程", "ctrip.android.view"),
    ("Qunar", "去哪儿", "com.Qunar"),
    ("12306", "铁路12306", "com.MobileTicket"),
    ("QQ Music", "QQ音乐", "com.tencent.qqmusic"),
    ("NetEase Cloud Music", "网易云音乐", "com.netease.cloudmusic"),
    ("Settings", "设置", "com.android.settings"),
    ("Google Maps", "Maps", "com.google.android.apps.maps"),
    ("YouTube", "com.google.android.youtube"),
    ("Quora", "com.quora.android"),
    ("Booking", "Booking.com", "com.booking"),
    ("Expedia", "com.expedia.bookings"),
    ("Amazon", "Amazon Shopping", "com.amazon.mshop.android.shopping"),
    ("Etsy", "com.etsy.android"),
    ("Wish", "com.contextlogic.wish"),
    ("Reuters", "com.thomsonreuters.reuters"),
    ("SmartNews", "jp.gocro.smartnews.android"),
    ("BuzzFeed", "com.buzzfeed.android"),
)

_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_FUZZY_MIN = 6  # shorter names ("JD", "KFC", "Wish") must match exactly, as whole words


def names_for(app: InstalledApp) -> tuple[str, ...]:
    """Every name ``app`` goes by: its label, and its alias group when one matches."""
    names = [app.label]
    label_key = _key(app.label)
    for group in APP_ALIASES:
        if app.package in group or any(_key(name) == label_key for name in group):
            names += [name for name in group if "." not in name or _looks_like_name(name)]
    return tuple(dict.fromkeys(n for n in names if n))


def find_mentioned_apps(text: str, installed: Sequence[InstalledApp]) -> tuple[InstalledApp, ...]:
    """Installed apps named in ``text``, in the order they are first mentioned."""
    found: list[tuple[int, InstalledApp]] = []
    for app in installed:
        positions = [p for p in (_position(name, text) for name in names_for(app)) if p >= 0]
        if positions:
            found.append((min(positions), app))
    found.sort(key=lambda pair: pair[0])
    return tuple(dict.fromkeys(app for _, app in found))


def resolve_app(name: str, installed: Sequence[InstalledApp]) -> InstalledApp | None:
    """The installed app a model meant by ``name`` (label, alias or package), or None."""
    wanted = _key(name)
    if not wanted or wanted in {"none", "null", "n/a"}:
        return None
    best: tuple[float, InstalledApp] | None = None
    for app in installed:
        if wanted == _key(app.package):
            return app
        for candidate in names_for(app):
            score = fuzz.ratio(wanted, _key(candidate))
            if best is None or score > best[0]:
                best = (score, app)
    return best[1] if best is not None and best[0] >= 85 else None


def strip_app_names(text: str, installed: Sequence[InstalledApp], mark: str = " , ") -> str:
    """``text`` with every installed app's names (and their possessive) replaced by ``mark``.

    Names are matched as :func:`find_mentioned_apps` matches them: whole words, short
    names in their exact case ("RED" is Rednote, "redemption" is not).
    """
    for app in installed:
        for name in sorted(names_for(app), key=len, reverse=True):
            if _CJK_RE.search(name):
                text = text.replace(name, mark)
                continue
            flags = 0 if len(_key(name)) < _FUZZY_MIN else re.IGNORECASE
            text = re.sub(rf"(?<![\w.]){re.escape(name)}(?:['’]s\b)?(?![\w])", mark, text, flags=flags)
    return text


def _position(name: str, text: str) -> int:
    """Where ``name`` is mentioned in ``text`` (-1 when it is not)."""
    if _CJK_RE.search(name):
        return text.find(name)  # CJK has no word breaks; substrings are how names appear
    short = len(_key(name)) < _FUZZY_MIN
    # Short names are often words too ("Wish", "RED", "Maps"): exact case, whole words.
    flags = 0 if short else re.IGNORECASE
    exact = re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", text, flags=flags)
    if exact is not None:
        return exact.start()
    if short:
        return -1
    # Fuzzy: "McDonald" for "McDonald's", "Elema" for "Ele.me"; aligned so we know where.
    alignment = fuzz.partial_ratio_alignment(_key(name), text.lower(), score_cutoff=88)
    return -1 if alignment is None else alignment.dest_start


def _key(name: str) -> str:
    return re.sub(r"[\s'’.\-_]+", "", name.strip().lower())


def _looks_like_name(name: str) -> bool:
    # "Ele.me" and "JD.com" are names; "com.tencent.mm" is a package.
    return name.count(".") == 1 and not name.startswith(("com.", "me.", "tv.", "jp."))
