"""Themes (R8), model families and noise (R9) of a change, from an editable taxonomy.

The taxonomy is data (``service/data/themes.toml``; ``DIGEST_THEMES_FILE`` points at an
editor's copy); model families come from ``service/data/models.toml``. Matching uses GitHub
labels, the tags a title starts with in all their real forms (``[Kernel]``,
``[Bugfix][ROCm]``, ``[CuTe,Sm100]``, ``feat(moe):``, ``fix(test)!:``, ``Docs: ...``),
keywords on word boundaries, and the project's category.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from service.errors import InvalidInput

OTHER = "other"
# Tags that say what kind of change it is rather than what it is about.
GENERIC_TAGS = frozenset(
    {
        "feat",
        "feature",
        "features",
        "core",
        "engine",
        "misc",
        "refactor",
        "enhancement",
        "improvement",
        "chore",
        "config",
        "v1",
        "dev",
        "wip",
        "rfc",
        "new feature",
        "frontend/api",
    }
)
# Themes that come first whatever else matches: a fix or a break is what an item is.
LEADING_THEMES = ("breaking", "bugfix")
_BRACKET_TAGS = re.compile(r"^\s*((?:\[[^\]]{1,60}\]\s*)+)")
_CONVENTIONAL = re.compile(
    r"^\s*(?P<type>[A-Za-z][\w-]{0,20})(?:\((?P<scope>[^)]{1,60})\))?(?P<bang>!)?:\s+"
)
_AREA_PREFIX = re.compile(r"^\s*(?P<area>[A-Za-z][\w./ -]{0,24}?):\s+")
_TAG_SPLIT = re.compile(r"\s*[,/|+&]\s*")
_LEADING_SYMBOLS = re.compile(r"^[^\w`'\"]+")
_DEPENDENCY_UPGRADE = re.compile(
    r"^(?:upgrade|update|bump|rebase)\b.{0,40}?\b(?:to|from)\s+v?\d+(?:\.\d+)+|"
    r"^(?:upgrade|update|bump)\s+\S+\s+version\b",
    re.IGNORECASE,
)


def _keyword_pattern(words: Iterable[str]) -> re.Pattern[str] | None:
    """Words on boundaries; ``_``, ``-`` and ``.`` count as boundaries, so ``routed_experts``
    and ``Qwen2.5-VL`` match ``experts`` and ``vl``."""
    ordered = sorted({w.lower() for w in words if w}, key=len, reverse=True)
    if not ordered:
        return None
    alternatives = "|".join(re.escape(w).replace(r"\ ", r"[\s_-]+") for w in ordered)
    return re.compile(rf"(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z0-9])", re.IGNORECASE)


@dataclass(frozen=True)
class Theme:
    key: str
    title_en: str
    title_zh: str
    description: str
    labels: frozenset[str]
    prefixes: frozenset[str]
    keywords: re.Pattern[str] | None
    categories: frozenset[str]
    starts: tuple[str, ...] = ()
    yields_to: frozenset[str] = frozenset()


@dataclass(frozen=True)
class NoiseRule:
    kind: str
    labels: frozenset[str]
    prefixes: frozenset[str]
    starts: tuple[str, ...]
    keywords: re.Pattern[str] | None
    ends: tuple[str, ...] = ()
    upgrades: bool = False  # "Upgrade aiter to 0.1.5", "Update FlashInfer version"


@dataclass(frozen=True)
class ModelFamily:
    key: str
    name: str
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class Taxonomy:
    themes: tuple[Theme, ...]
    noise: tuple[NoiseRule, ...]
    families: tuple[ModelFamily, ...]
    version: str = ""  # a digest of the files it was read from

    def theme(self, key: str) -> Theme | None:
        return next((t for t in self.themes if t.key == key), None)

    def title(self, key: str, lang: str) -> str:
        theme = self.theme(key)
        if theme is None:
            return "其他" if lang == "zh" else "Other"
        return theme.title_zh if lang == "zh" else theme.title_en

    def family(self, key: str) -> ModelFamily | None:
        return next((f for f in self.families if f.key == key.lower()), None)


@dataclass(frozen=True)
class Classification:
    themes: tuple[str, ...]  # primary first
    models: tuple[str, ...]
    noise: str | None
    tags: tuple[str, ...]

    @property
    def primary(self) -> str:
        return self.themes[0] if self.themes else OTHER


@dataclass(frozen=True)
class TitleParts:
    tags: tuple[str, ...]  # lower-cased, e.g. ("bugfix", "rocm") or ("feat", "moe")
    rest: str  # the title after its tags
    bang: bool  # conventional-commit "!" (breaking)


def split_title(title: str) -> TitleParts:
    """Separate the tags a title starts with from its text."""
    tags: list[str] = []
    rest = title.strip()
    bang = False
    for _ in range(3):
        brackets = _BRACKET_TAGS.match(rest)
        if brackets:
            for group in re.findall(r"\[([^\]]+)\]", brackets.group(1)):
                tags.append(group.strip().lower())
                tags.extend(part.lower() for part in _TAG_SPLIT.split(group.strip()) if part)
            rest = rest[brackets.end() :]
            continue
        conventional = _CONVENTIONAL.match(rest)
        if conventional:
            tags.append(conventional.group("type").lower())
            if conventional.group("scope"):
                scope = conventional.group("scope").strip()
                tags.append(scope.lower())
                tags.extend(part.lower() for part in _TAG_SPLIT.split(scope) if part)
            bang = bang or bool(conventional.group("bang"))
            rest = rest[conventional.end() :]
            continue
        area = _AREA_PREFIX.match(rest)
        if area and len(area.group("area").split()) <= 3:
            tags.append(area.group("area").strip().lower())
            rest = rest[area.end() :]
            continue
        break
    return TitleParts(tuple(dict.fromkeys(t for t in tags if t)), rest.strip(), bang)


def _starts_with(text: str, phrases: Sequence[str]) -> bool:
    lowered = _LEADING_SYMBOLS.sub("", text.lower()).lstrip("`'\" ")
    for phrase in phrases:
        if lowered.startswith(phrase) and (
            len(lowered) == len(phrase) or not lowered[len(phrase)].isalnum() or phrase[-1] in ":. "
        ):
            return True
    return False


def noise_kind(parts: TitleParts, labels: Sequence[str], taxonomy: Taxonomy) -> str | None:
    lowered_labels = {label.lower() for label in labels}
    for rule in taxonomy.noise:
        if rule.labels & lowered_labels or rule.prefixes & set(parts.tags):
            return rule.kind
    rest = _LEADING_SYMBOLS.sub("", parts.rest)
    words = re.findall(r"[a-z0-9]+", rest.lower())
    for rule in taxonomy.noise:
        if _starts_with(rest, rule.starts) or (rule.upgrades and _DEPENDENCY_UPGRADE.search(rest)):
            return rule.kind
    for rule in taxonomy.noise:
        if rule.keywords is not None and rule.keywords.search(rest):
            return rule.kind
        # "Remove V0 Samplers test" is test work; "Add FP8 MoE kernel and tests" is not
        if words and words[-1] in rule.ends and not {"and", "with", "plus"} & set(words):
            return rule.kind
    return None


_SUPPORT_VERB = re.compile(
    r"\b(?:add|adds|added|adding|support|supports|supported|supporting|enable|enables|"
    r"enabling|introduce|introduces|initial|new)\b",
    re.IGNORECASE,
)


def model_families(text: str, taxonomy: Taxonomy) -> tuple[str, ...]:
    return tuple(f.key for f in taxonomy.families if f.pattern.search(text))


def adds_model_support(text: str, taxonomy: Taxonomy) -> bool:
    """ "Add Kimi K3", "Support DeepSeek-V4.1-Flash", "Qwen3-Next support": a verb of support
    within two words before a model name, or "support" right after one."""
    for family in taxonomy.families:
        for match in family.pattern.finditer(text):
            before = text[: match.start()].split()[-3:]
            after = text[match.end() :].split()[:3]
            if any(_SUPPORT_VERB.fullmatch(w.strip("[](),:")) for w in before):
                return True
            if any(w.lower().strip("[](),:.") == "support" for w in after):
                return True
    return False


def classify(
    title: str,
    labels: Sequence[str] = (),
    category: str | None = None,
    *,
    breaking: bool = False,
    taxonomy: Taxonomy | None = None,
) -> Classification:
    taxonomy = taxonomy or default_taxonomy()
    parts = split_title(title)
    lowered_labels = {label.lower() for label in labels}
    tags = set(parts.tags)
    matched: list[str] = []
    for theme in taxonomy.themes:
        if (
            theme.labels & lowered_labels
            or theme.prefixes & tags
            or (theme.keywords is not None and theme.keywords.search(parts.rest))
            or _starts_with(parts.rest, theme.starts)
            or (theme.key == "breaking" and (breaking or parts.bang))
            or (theme.key == "model_support" and adds_model_support(parts.rest, taxonomy))
        ):
            matched.append(theme.key)
    if category and set(matched) <= {"bugfix", "performance", "breaking"}:
        # the project's category is the weakest evidence: it only names the topic of an
        # item nothing topical matched
        matched.extend(
            t.key
            for t in taxonomy.themes
            if category.lower() in t.categories and t.key not in matched
        )
    order = {theme.key: index for index, theme in enumerate(taxonomy.themes)}
    themes = sorted(dict.fromkeys(matched), key=order.__getitem__)
    first = taxonomy.theme(themes[0]) if themes else None
    if first is not None and first.yields_to & set(themes[1:]):
        themes = [*themes[1:], themes[0]]
    return Classification(
        themes=tuple(themes) or (OTHER,),
        models=model_families(title, taxonomy),
        noise=noise_kind(parts, labels, taxonomy),
        tags=parts.tags,
    )


def load_taxonomy(themes_text: str, models_text: str, source: str = "taxonomy") -> Taxonomy:
    try:
        data = tomllib.loads(themes_text)
        models = tomllib.loads(models_text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"{source}: not valid TOML: {exc}") from exc
    themes: list[Theme] = []
    for entry in data.get("themes", []):
        try:
            themes.append(
                Theme(
                    key=str(entry["key"]),
                    title_en=str(entry["title_en"]),
                    title_zh=str(entry.get("title_zh") or entry["title_en"]),
                    description=str(entry.get("description", "")),
                    labels=frozenset(x.lower() for x in entry.get("labels", [])),
                    prefixes=frozenset(x.lower() for x in entry.get("prefixes", [])),
                    keywords=_keyword_pattern(entry.get("keywords", [])),
                    categories=frozenset(x.lower() for x in entry.get("categories", [])),
                    starts=tuple(x.lower() for x in entry.get("starts", [])),
                    yields_to=frozenset(entry.get("yields_to", [])),
                )
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise InvalidInput(f"{source}: theme entry {entry!r} is incomplete: {exc}") from exc
    if not themes:
        raise InvalidInput(f"{source}: no [[themes]]")
    noise = tuple(
        NoiseRule(
            kind=kind,
            labels=frozenset(x.lower() for x in rule.get("labels", [])),
            prefixes=frozenset(x.lower() for x in rule.get("prefixes", [])),
            starts=tuple(x.lower() for x in rule.get("starts", [])),
            keywords=_keyword_pattern(rule.get("keywords", [])),
            ends=tuple(x.lower() for x in rule.get("ends", [])),
            upgrades=bool(rule.get("upgrades", False)),
        )
        for kind, rule in data.get("noise", {}).items()
    )
    families = tuple(
        ModelFamily(
            key=str(f["key"]),
            name=str(f["name"]),
            pattern=re.compile(
                r"(?<![\w])(?:" + "|".join(f["patterns"]) + r")(?![\w])", re.IGNORECASE
            ),
        )
        for f in models.get("families", [])
    )
    digest = hashlib.sha256(f"{themes_text}\0{models_text}".encode()).hexdigest()[:16]
    return Taxonomy(tuple(themes), noise, families, version=digest)


def _packaged(name: str) -> str:
    return resources.files("service.data").joinpath(name).read_text(encoding="utf-8")


@lru_cache(maxsize=8)
def taxonomy_from(themes_file: Path | None = None, models_file: Path | None = None) -> Taxonomy:
    themes_text = (
        themes_file.read_text(encoding="utf-8") if themes_file else _packaged("themes.toml")
    )
    models_text = (
        models_file.read_text(encoding="utf-8") if models_file else _packaged("models.toml")
    )
    return load_taxonomy(themes_text, models_text, str(themes_file or "themes.toml"))


def default_taxonomy() -> Taxonomy:
    return taxonomy_from(None, None)
