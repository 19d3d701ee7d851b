"""The decomposer without a model: names, noun phrases and cue words.

What it does, and says in ``Plan.notes``: apps are the installed apps the
question names (fuzzy, English and Chinese names); when none is named, apps are
picked by topic words (food delivery, shopping, maps, trains, school, mail,
...): the apps people know for the topic, then installed apps whose names say it
("... Maps", "...校园"). Search terms are quoted text, else the question's noun phrases with
app names, question words and attribute words (price, cheaper, reviews)
removed. The page mode comes from cue words. It does not understand the
question: it cannot infer an app from an unusual topic, split a question into
dependent steps, or tell which phrase a person would actually search for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from droidretriever.models import InstalledApp, PageMode, Plan, Query
from droidretriever.text import has_cjk
from inference.rules.apps import (
    find_mentioned_apps,
    names_for,
    resolve_app,
    strip_app_names,
)
from inference.rules.asks import strip_answer_shape
from inference.rules.lexicon import find_goal_concepts, load_lexicon, setting_change
from inference.rules.plan import MAX_TERMS, build_plan
from inference.rules.segment import is_function_word, split_words

__all__ = ["choose_page_mode", "decompose_by_rules", "extract_search_terms"]

_QUOTED_RE = re.compile(r'"([^"]{2,80})"|“([^”]{2,80})”|「([^」]{1,80})」|『([^』]{1,80})』|《([^》]{1,80})》')
_LATIN_TOKEN_RE = re.compile(r"[A-Za-z0-9][\w'’&+.\-:]*|[,;?!()/]|\s+")
_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")

# Words that are never part of a search term: question words, grammar, and the
# attribute being asked about (the app shows the price; we search for the thing).
_STOP_TEXT = """
    a an the is are was were be been being am do does did done have has had can could
    should would will shall may might must i me my we our you your he she it its they them
    their this that these those there here what which who whom whose when where why how
    and or but if then than so as at on in of for to from by with about into over under
    using use via through within
    between among vs versus versu per any some all more most less least much many few
    please tell show find search look check see get give know want need let us me
    compare comparison cheaper cheapest cheap expensive price prices cost costs costing
    better best worse worst good bad difference different same between
    review reviews opinion opinions say says said think thinks comment comments fans
    people users user customers rating ratings rated recommend recommended recommendation
    list all available options option many much number count
    app apps application on-line online today now currently current latest new
    granted grant allowed allow near nearby me
    order ordering ordered buy buying bought purchase purchasing purchased advise advice
    suggest suggestion suggestions summarize summarise summary translate translation explain
    describe identify decide deciding whether respectively gauge retrieve calculate help
    just only one ones also each every next usual number numbers across
    average total sum monthly daily weekly yearly day days week weeks month months year years
    specs spec specifications features feature name names title titles item items
    s
"""
_STOP = frozenset(_STOP_TEXT.split())
# Chinese words that are never part of a search term, dropped as whole words (segmented by
# jieba), so "上" (on) goes and "上海" stays.
_CJK_STOP_TEXT = """上 的 和 与 跟 及 在 里 中 哪个 哪家 哪里 更 最 便宜 贵 多少钱 多少 钱 价格 价钱 比较
对比 怎么样 如何 评价 评论 口碑 有哪些 哪些 什么 是 吗 呢 吧 啊 了 我 我的 想 要 想要 看看 看 查 查询
一下 搜索 搜 帮 帮我 请 所有 全部 列表 推荐 大家 网友 说 买 购买 几个 个 还是 或 有 有没有 给 用 能 可以
告诉 列出 一共 分别 哪 谁 怎么 为什么 多 多久 多长时间 多长 多大 多远 几 只要 只 就 都 也 还 把 被 让 这 那 这个 那个 这些 那些
东西 信息 情况 内容 名字 名称 从 到 去 来 开车 进去 加进去 出来
评分 票房 歌名 配送费 过路费 续航 费用 时间 日期 距离 销量 月售 重量 播放量 表 名
出发 到达 发来 看看 换 花 坐 考 占 剩 还有 还剩 会 对 离 就行 行
今天 明天 后天 昨天 上午 下午 晚上 早上 中午 今晚 最近 本周 这周 上周 一周 上个月 本月 这个月 今年 去年
公里 千米 米 分钟 小时 元 块"""
_CJK_STOP = frozenset(_CJK_STOP_TEXT.split())
_QUANTITY = re.compile(r"(?:[$¥￥€£]\s*)?\d[\d.,]*\s*(?:%|[A-Za-z]{1,7}|[\u4e00-\u9fff]{1,2})?(?:以下|以上|以内|之内|左右)?")
# "各是", "每期", "哪趟", "那家": a question word or determiner and one more character.
_ASKING = re.compile(r"[各每几哪那这][\u4e00-\u9fff]{1,2}")
_CJK_BREAK = re.compile(r"[\s，。？！、；：,.?!;:（）()“”\"'《》「」]+")

_MULTI_PAGE_CUES = (
    r"\breviews?\b", r"\bopinions?\b", r"\bwhat do .{0,40}\bsay\b", r"\bcomments?\b",
    r"\bexperiences?\b", r"\bposts?\b", r"\banswers\b", r"\bfeedback\b", r"\bimpressions?\b",
    "评价", "评论", "口碑", "笔记", "怎么样", "经验", "心得", "리뷰", "후기", "レビュー", "口コミ",
)
_LIST_VIEW_CUES = (
    r"\blist\b", r"\ball\b", r"\boptions\b", r"\bhow many\b", r"\bwhich\b.{0,60}\bavailable\b",
    r"\bflights\b", r"\branking\b", r"\btop \d+\b", r"\bevery\b", r"\bwhich (?:\w+ ){0,2}\w+s (?:have|are|were|did)\b(?! (?:in|on|of|from)\b)",
    r"\bfind (?:all |my )?(?!\w*ss\b)[a-z]{3,}s (?:scheduled|booked|saved|sent|ordered|from|by|with|in|on)\b",
    "列表", "所有", "全部", "有哪些", "多少个", "几个", "排行", "목록", "一覧",
    # Each of them, or a table of them: several records asked for ("评分各是多少", "做成表格").
    r"\beach of (?:them|these|those)\b", r"\b(?:as|in) a table\b", "各是", "各自", "分别", "表格", "列个表", "각각", "それぞれ",
)

@dataclass(frozen=True)
class _Topic:
    """A kind of question, the words that show it, and the apps that answer it: apps people
    know for it (alias groups, in order) and words in any installed app's name ("Maps",
    "校园") for apps the list does not know."""

    name: str
    cues: tuple[str, ...]
    apps: tuple[str, ...]
    name_words: tuple[str, ...] = ()


# Used only when the question names no app. The first topic whose cue matches and that has an
# installed app wins, so narrower topics come first ("taxi trips" before travel, "delivered
# packages" before food delivery); apps are taken in the group's order.
_TOPICS: tuple[_Topic, ...] = (
    _Topic("settings", (r"\bpermission", r"\bsetting", r"\bstorage\b", "权限", "设置"), ("Settings",)),
    _Topic("parcel", (r"\bpackages?\b", r"\bparcels?\b", r"\bexpress\b", "快递", "包裹", "驿站"),
           ("Cainiao",), (r"\bparcels?\b", r"\bexpress\b", "快递", "物流")),
    _Topic("ride", (r"\btaxis?\b", r"\brides?\b", r"\bcabs?\b", "打车", "出租车", "网约车"),
           ("DiDi", "Amap", "Uber")),
    _Topic("phone bill", (r"\bphone (?:credit|bill|plan|balance)", r"\btop.?up\b", "话费", "流量套餐"),
           ("China Mobile", "China Unicom", "China Telecom")),
    _Topic("meeting", (r"\bmeetings?\b", "会议", "开会", "(?:哪些|几个|几场)会(?![员计])"),
           ("Tencent Meeting", "Zoom", "Teams"), (r"\bmeetings?\b", "会议")),
    _Topic("mail", (r"\bemails?\b", r"\bmail\b", r"\binbox\b", "邮件", "邮箱"),
           ("Gmail", "NetEase Mail", "Outlook"), (r"\bmail\b", "邮")),
    _Topic("school", (r"\bgpa\b", r"\bgrades?\b", r"\bexams?\b", r"\bcourses?\b", r"\btimetable\b",
                      r"\bsemester\b", r"\btuition\b", "绩点", "成绩", "考试", "课表", "学期", "选课", "学费"),
           (), (r"\bcampus\b", r"\bschool\b", r"\buniversity\b", r"\bcollege\b", r"\bstudents?\b",
                "校园", "教务", "大学")),
    _Topic("fan community", (r"\bfans?\b", r"\bvideos?\b", "粉丝", "视频", "弹幕"), ("Zhihu", "Weibo", "Bilibili")),
    _Topic("social post", (r"\bposts?\b", r"\btweets?\b", "微博", "帖子"), ("Weibo", "Zhihu", "Rednote")),
    _Topic("reviews", (r"\breview", r"\bopinion", r"\bsay\b", "评价", "口碑", "笔记"),
           ("Rednote", "Zhihu", "Douban", "Quora", "Weibo", "Dianping")),
    _Topic("charts", (r"\branking", r"\bcharts?\b", r"\btop \d+", r"\bbest.rated\b", "排行", "榜单"), ("Douban",)),
    _Topic("movie tickets", (r"\bshowtimes?\b", r"\bmovies?\b", r"\bfilms?\b", r"\bcinemas?\b", "电影", "影院",
                             "场次"), ("Maoyan", "Taopiaopiao", "Douban")),
    _Topic("train", (r"\btrains?\b", "火车", "高铁", "动车", "车票", "车次", "[一二]等座", "卧铺"), ("12306",),
           (r"\brail", "铁路")),
    _Topic("maps", (r"\bdriv(?:e|ing)\b", r"\bdirections?\b", r"\bhow far\b", r"\bnavigat", r"\bkilomet",
                    r"\bnearby\b", r"\bnearest\b", "开车", "驾车", "导航", "路线", "多远", "公里", "附近", "怎么去",
                    "过路费"),
           ("Amap", "Baidu Maps", "Google Maps"), (r"\bmaps?\b", "地图")),
    _Topic("food delivery", (r"\bfood\b", r"\bdeliver", r"\bburger", r"\bmeal", r"\brestaurant", "外卖", "餐",
                             "汉堡"), ("Meituan", "Meituan Waimai", "Ele.me", "Dianping", "McDonald's", "KFC")),
    _Topic("shopping", (r"\bbuy\b", r"\bprice", r"\bcheap", r"\bshop", r"\bphones?\b", r"\bspecs\b",
                        r"\bspecifications?\b", r"\bproducts?\b", r"\bingredients?\b", "价格", "购买", "便宜",
                        "手机", "商品", "成分", "配料"),
           ("Taobao", "JD", "Pinduoduo", "Amazon", "Etsy", "Wish"), (r"\bshop", r"\bmall\b", "商城")),
    _Topic("travel", (r"\bhotels?\b", r"\bflights?\b", r"\btrips?\b", r"\btravel", "酒店", "机票", "旅游"),
           ("Ctrip", "Booking", "Expedia", "Qunar"), (r"\btravel", r"\btrip\b", "旅行")),
    _Topic("music", (r"\bsongs?\b", r"\bmusic\b", r"\balbums?\b", r"\bplaylists?\b", "歌", "音乐"),
           ("QQ Music", "NetEase Cloud Music", "Spotify", "Apple Music"), (r"\bmusic\b", "音乐")),
)

# A possessive right before a noun: "my", "our", "我的" / "我" ("我购物车里"), "내", "나의", "私の", "自分の".
_INSIDE = ("里", "中", "内", "裡")
_POSSESSIVE = re.compile(r"(?:\bmy|\bour) $|我的?$|我们的$|(?:^|\s)(?:내|나의|우리) ?$|(?:私|自分|僕)の$")
_PERMISSION_CUE = r"\bpermissions?\b|权限|권한|権限"
# What an app itself takes on the phone (its storage, its cache): the app's info page in
# Settings says it, not the app. "How much space does Taobao take up?", "淘宝占了多少存储空间",
# not "a phone with 512 GB of storage on JD" (no taking or using).
_FOOTPRINT_CUE = (
    r"\b(?:storage|space|cache)\b(?: \S+){0,4} (?:take|takes|taking|took|use|uses|using|used|occupy|"
    r"occupies)\b|\b(?:take|takes|taking|took|uses?|using|occupy|occupies)(?: up)? (?:\w+ ){0,3}"
    r"(?:storage|space)\b|"
    r"占(?:了|用)?[^，。？！,.?!]{0,6}(?:存储|空间|内存)|(?:存储|空间|内存)占用|缓存[^，。？！,.?!]{0,3}多大|"
    r"(?:저장\s?공간|용량)[을를]?\s?(?:얼마나\s?)?(?:차지|사용)|(?:ストレージ|容量)を?(?:どれくらい|どのくらい)?(?:使|占)"
)

_HONESTY = (
    "rule-based decomposition ({because}): apps by name matching, "
    "search terms from quoted text and noun phrases, page mode from cue words; check the "
    "apps and search terms before relying on the report"
)


def decompose_by_rules(query: Query, installed: Sequence[InstalledApp],
                       *, because: str = "no decomposer model configured") -> Plan:
    """A plan from names and cue words alone, with its limits (and why rules) in ``notes``."""
    notes = [_HONESTY.format(because=because)]
    apps = list(find_mentioned_apps(query.text, installed))
    if not apps and query.apps:
        apps = [a for a in (resolve_app(name, installed) for name in query.apps) if a is not None]
    if not apps:
        topic, apps = _apps_by_topic(query.text, installed)
        if apps:
            notes.append(
                f"no installed app is named in the question; picked {', '.join(a.label for a in apps)} "
                f"because it reads like a {topic} question"
            )
    terms = extract_search_terms(query.text, installed)
    settings_app = _settings_app(installed)
    lowered = query.text.lower()
    about_app = ("permissions" if re.search(_PERMISSION_CUE, lowered)
                 else "storage" if re.search(_FOOTPRINT_CUE, lowered) and any(a != settings_app for a in apps)
                 else None)
    if settings_app is not None and about_app is not None:
        # "Which permissions has Meituan been granted?", "How much storage does Taobao take?" are
        # answered on the app's info page in Settings, by searching for the app there, not
        # inside the app itself.
        named = [a.label for a in apps if a != settings_app]
        terms = tuple(named) or terms
        apps = [settings_app]
        notes.append(f"a question about an app's {about_app}: answered in Settings, searching for the app")
    if terms and about_app is None and not _quoted(query.text) and setting_change(query.text):
        # "How do I turn off private messages?": a setting, on the app's settings pages, which
        # its search (of posts, products) does not reach.
        terms = ()
        notes.append("asks how to switch a setting of the app: navigating to its settings rather than searching")
    elif terms and about_app is None and not _quoted(query.text) and _is_about_a_place(query.text, apps):
        # "my ride expenses", "default currency units": pages reached through Me or
        # Settings, which an app's search box (for products, posts) does not find.
        terms = ()
        notes.append("asks for a page of the app (an account or settings page): navigating to "
                     "it rather than searching")
    if not terms:
        notes.append("found no search term: each app's task starts from its home screen")
    mode, cue = choose_page_mode(query.text)
    notes.append(f"page mode {mode.value} " + (f"from the cue {cue!r}" if cue else "by default"))
    return build_plan(query, apps, terms, mode, decomposer="rules", notes=notes)


def choose_page_mode(text: str) -> tuple[PageMode, str]:
    """The page mode the question's cue words suggest, and the cue (empty = default)."""
    lowered = text.lower()
    for mode, cues in ((PageMode.MULTI_PAGE, _MULTI_PAGE_CUES), (PageMode.LIST_VIEW, _LIST_VIEW_CUES)):
        for cue in cues:
            match = re.search(cue, lowered)
            if match:
                return mode, match.group(0)
    return PageMode.FOCUSED, ""


def extract_search_terms(text: str, installed: Sequence[InstalledApp] = ()) -> tuple[str, ...]:
    """Up to 3 search terms: quoted strings first, else noun phrases (Latin or CJK)."""
    quoted = [next(g for g in m.groups() if g) for m in _QUOTED_RE.finditer(text)]
    if quoted:
        return tuple(dict.fromkeys(q.strip() for q in quoted))[:MAX_TERMS]
    # With its possessive: "Bilibili's community guidelines" searches "community guidelines".
    stripped = strip_answer_shape(strip_app_names(text, installed))
    phrases = _mixed_phrases(stripped) if _CJK_RE.search(stripped) else _latin_phrases(stripped)
    # A product's name (capitals, digits) is what a shop searches; the question's other
    # Chinese words are then what it asks about (重量, 价格), shown on that product's page.
    # A quantity ("1 km", "$10", "500元") is a filter of the answer, never a thing to search for.
    phrases = [p for p in phrases if not _QUANTITY.fullmatch(p) and len(p) > 1]
    named = [p for p in phrases if re.search(r"[A-Z0-9]", p)] or [p for p in phrases if _is_named(p)]
    chosen = named or sorted(phrases, key=len, reverse=True)[:1]
    return tuple(dict.fromkeys(chosen))[:MAX_TERMS]


def _latin_phrases(text: str) -> list[str]:
    phrases: list[str] = []
    run: list[str] = []
    tokens = [t for t in _LATIN_TOKEN_RE.findall(_CJK_RE.sub(",", text)) if not t.isspace()]
    for index, token in enumerate(tokens):
        word = token.strip(".:'’-")
        bare = re.sub(r"['’]s$", "", word.lower())  # "what's" is "what"; "McDonald's" stays
        following = tokens[index + 1] if index + 1 < len(tokens) else ""
        if run and word[:1].isupper() and _is_name_word(run[-1]) and _is_name_word(following):
            run.append(word)  # a capitalised word inside a name: "OPPO Find X7 Ultra"
            continue
        if not word or not re.match(r"\w", token) or word.lower() in _STOP or bare in _STOP:
            if run:
                phrases.append(" ".join(run))
            run = []
            continue
        owner = re.fullmatch(r"(.+)['’]s", word)
        if owner and not _is_brand(word):
            # A possessive ends a name: "Interstellar's rating", "aespa's next live".
            phrases.append(" ".join([*run, owner.group(1)]))
            run = []
            continue
        run.append(word)
    if run:
        phrases.append(" ".join(run))
    return phrases


def _is_name_word(token: str) -> bool:
    """A word that belongs to a name: capitalised or with a digit ("Find", "X7", "14")."""
    return bool(re.match(r"[A-Z0-9]", token) and re.search(r"\w", token))


def _is_brand(word: str) -> bool:
    """A name spelt with its "'s" (McDonald's): an entity of the lexicon."""
    folded = word.casefold().replace("’", "'")
    return any(folded == label.casefold() for concept in load_lexicon().concepts.values()
               if concept.entity for label in concept.labels)


def _mixed_phrases(text: str) -> list[str]:
    """Runs of words between stop words and punctuation, in text with Chinese (never cut inside a
    word): "小米14", "OPPO Find X7 Ultra" and "上海迪士尼" stay whole. Grammar, counts and times
    (jieba's tags: "哪天", "几次", "现在") end a run like stop words."""
    phrases: list[str] = []
    run: list[str] = []
    start = True  # at the start of a sentence: "Which" is the question word "which"
    for word in split_words(text):
        if word.isspace() and run:
            run.append(" ")  # between Latin words: part of a name
        elif (word in _CJK_STOP or (word.lower() in _STOP and (word.islower() or start))
              or _CJK_BREAK.fullmatch(word) or is_function_word(word, text)):
            # An English word among Chinese is a name unless written as a plain word ("Find"
            # in "OPPO Find X7" stays).
            phrases.append("".join(run).strip())
            run = []
        elif not word.isspace():
            run.append(word)
        if not word.isspace():
            start = bool(re.fullmatch(r"[.?!。？！]+", word.strip()))
    phrases.append("".join(run).strip())
    return [p for p in phrases if len(p) >= 2 and re.search(r"\w", p) and not _ASKING.fullmatch(p)]


def _is_named(phrase: str) -> bool:
    """A phrase with a capital, a digit or CJK: a product, title or place, worth searching."""
    return bool(_CJK_RE.search(phrase) or re.search(r"[A-Z0-9]", phrase))


def _quoted(text: str) -> bool:
    return _QUOTED_RE.search(text) is not None


def _is_about_a_place(text: str, apps: Sequence[InstalledApp]) -> bool:
    """The question asks for pages reached through hubs (Me, Settings), naming no entity, or for
    what is in the person's own page ("the RAM in my cart", "我的购物车里"): the app's search looks
    through its catalogue, not through what is the person's. The apps' names name no concept
    ("中国移动" names no country's page)."""
    app = apps[0].label if apps else ""
    stripped = strip_app_names(text, apps)
    named = find_goal_concepts(stripped, None, app).targets
    concepts = load_lexicon().concepts
    if any(_owned(stripped, concepts[c].labels) for c in named):
        return True
    return not find_goal_concepts(text, None, app).entities and any(concepts[c].via for c in named)


def _owned(text: str, labels: Sequence[str]) -> bool:
    """Whether a label of a concept follows a possessive in ``text`` ("my cart", "我的购物车", "내
    장바구니", "私のカート"): the person's own page of it."""
    # An app's name stripped out leaves " , " ("my Taobao cart" -> "my , cart"): still my cart.
    folded = " ".join(text.casefold().replace(" , ", " ").split())
    for label in labels:
        wanted = label.casefold()
        for match in re.finditer(re.escape(wanted), folded):
            before, after = folded[:match.start()], folded[match.end():]
            whole = has_cjk(wanted) or not (before[-1:].isalpha() or after[:1].isalpha())
            # A bare "我" is a possessive only before a place one is in ("我购物车里"): "离我最近"
            # is "nearest to me", "我手机话费" is "my phone's credit" only by its 的-less grammar.
            bare = before.endswith("我") and not before.endswith(("我的", "我们的")) and not after.startswith(_INSIDE)
            if whole and _POSSESSIVE.search(before) and not bare:
                return True
    return False


def _settings_app(installed: Sequence[InstalledApp]) -> InstalledApp | None:
    return next((a for a in installed if "Settings" in names_for(a)), None)


def _apps_by_topic(text: str, installed: Sequence[InstalledApp]) -> tuple[str, list[InstalledApp]]:
    lowered = text.lower()
    for topic in _TOPICS:
        if not any(re.search(cue, lowered) for cue in topic.cues):
            continue
        known = [app for name in topic.apps for app in installed if name in names_for(app)]
        named = [app for app in installed
                 if any(re.search(word, name.lower()) for word in topic.name_words for name in names_for(app))]
        picked = list(dict.fromkeys(known + named))
        if picked:
            return topic.name, picked
    return "", []
