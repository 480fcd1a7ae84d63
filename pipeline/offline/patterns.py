"""Phrase patterns for the person's goals, beliefs, projects, events, tensions and habits.

English first, with a few cheap patterns for Spanish, French, German and Portuguese. Each
pattern captures ``obj`` (the phrase the title is made from) and, for "X but I also Y"
tensions, ``left``. Confidence reflects how explicit the phrasing is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ontology import ConceptType

__all__ = ["PATTERNS", "Pattern", "patterns_for"]

_OBJ = r"[^.!?\n]{2,200}"
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_MONTHS = (
    "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    "|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_DATE = (
    rf"(?:{_WEEKDAYS}|(?:{_MONTHS})\.? \d{{1,2}}(?:st|nd|rd|th)?(?:,? \d{{4}})?"
    rf"|\d{{1,2}}(?:st|nd|rd|th)? (?:of )?(?:{_MONTHS})(?:,? \d{{4}})?|\d{{4}}-\d{{2}}-\d{{2}})"
)
_PERIOD = rf"week|weekend|month|year|night|summer|winter|spring|fall|autumn|{_WEEKDAYS}"
_AM = r"I(?:'m| am)"


@dataclass(frozen=True)
class Pattern:
    family: ConceptType
    lang: str
    confidence: float
    regex: re.Pattern[str]
    strip_leading: bool = False


def _p(
    family: ConceptType,
    lang: str,
    confidence: float,
    trigger: str,
    *,
    keep: str = "",
    strip: bool = False,
    left: bool = False,
) -> Pattern:
    """``trigger`` then the captured phrase; ``keep`` is matched inside the capture."""
    trigger = trigger.replace("'", "['’]")
    head = r"(?P<left>[^.!?\n,;]{3,120}?),?\s+" if left else r"(?<!\w)"
    rest = r"[^.!?\n]{0,200}" if keep else _OBJ
    source = rf"{head}(?:{trigger})(?!\w),?\s*(?P<obj>{keep}{rest})"
    return Pattern(family, lang, confidence, re.compile(source, re.I), strip)


PATTERNS: tuple[Pattern, ...] = (
    # -- English --------------------------------------------------------------------------
    _p("goal", "en", 0.85, r"my (?:main |big |long-term |ultimate |real )?goal is(?: to)?"),
    _p("goal", "en", 0.75, rf"I plan to|{_AM} planning to|I intend to|I aim to|{_AM} aiming to"),
    _p("goal", "en", 0.7, rf"{_AM} trying to|I want to|I wanna|I really want to"),
    _p("goal", "en", 0.6, r"I(?:'d| would) (?:really )?(?:like|love) to|I(?: really)? hope to"),
    _p("goal", "en", 0.45, r"I need to"),
    _p(
        "belief",
        "en",
        0.75,
        r"I (?:strongly |really |firmly )?believe(?! in\b| you\b| me\b| it\b)(?: that)?"
        rf"|{_AM} convinced(?: that)?",
    ),
    _p("belief", "en", 0.7, r"in my (?:honest )?opinion,?|I (?:strongly )?feel that"),
    _p("belief", "en", 0.65, r"I think that|I(?:'ve| have) come to (?:believe|think) that"),
    _p(
        "project",
        "en",
        0.75,
        rf"{_AM} (?:currently |now |still )?(?:building|developing|designing"
        r"|creating|writing|making)",
        strip=True,
    ),
    _p(
        "project",
        "en",
        0.7,
        rf"{_AM} (?:currently |still )?working on|I(?:'ve| have) been working"
        r" on",
        strip=True,
    ),
    _p(
        "project",
        "en",
        0.65,
        r"(?:my|our) (?:side |new |current |pet |little )?project(?: is|"
        r" called|:|,)?",
        strip=True,
    ),
    _p(
        "event",
        "en",
        0.75,
        r"(?:I|we)",
        keep=r"(?:just |recently |finally )?(?:moved|relocated)"
        r" (?:to|back to) ",
    ),
    _p(
        "event",
        "en",
        0.7,
        rf"(?:last|this past) (?:{_PERIOD}),? (?:I|we)|on {_DATE},? (?:I|we)"
        r"|in (?:19|20)\d\d,? (?:I|we)|yesterday,? (?:I|we)",
    ),
    _p(
        "event",
        "en",
        0.65,
        r"(?:I|we)",
        keep=r"(?:just |recently |finally )?(?:started|graduated"
        r"|got married|got engaged|got promoted|got a new job"
        r"|quit my|lost my|broke up|signed up|had surgery"
        r"|had a baby|retired)",
    ),
    _p("tension", "en", 0.8, rf"(?:{_AM} )?torn between|(?:{_AM} )?struggling to balance"),
    _p("tension", "en", 0.7, r"(?:conflict|tension|struggle|trade-?off) between"),
    _p("tension", "en", 0.6, r"but I also", left=True),
    _p(
        "behavioral_pattern",
        "en",
        0.7,
        r"I tend to|I have a (?:bad )?habit of|"
        rf"{_AM} in the habit of",
    ),
    _p("behavioral_pattern", "en", 0.65, r"every (?:single )?time I|whenever I|each time I"),
    _p(
        "behavioral_pattern",
        "en",
        0.6,
        r"I",
        keep=r"(?:always|usually|often|constantly|keep"
        r"|never) ",
    ),
    # -- Spanish --------------------------------------------------------------------------
    _p("goal", "es", 0.8, r"mi (?:gran |principal )?(?:objetivo|meta) es"),
    _p("goal", "es", 0.65, r"estoy (?:intentando|tratando de)|planeo|quiero|me gustar[ií]a"),
    _p("belief", "es", 0.7, r"en mi opini[oó]n,?|estoy convencid[oa] de que"),
    _p("belief", "es", 0.6, r"creo que|pienso que"),
    _p(
        "project",
        "es",
        0.7,
        r"estoy (?:construyendo|desarrollando|creando|escribiendo|trabajando"
        r" en)|mi proyecto(?: es|,)?",
        strip=True,
    ),
    _p("event", "es", 0.7, r"me", keep=r"mud[ée] (?:a|de) "),
    _p("event", "es", 0.65, r"(?:la semana|el mes|el año) pasad[oa],?|ayer,?"),
    _p("tension", "es", 0.7, r"(?:estoy )?dividid[oa] entre|conflicto entre"),
    _p("behavioral_pattern", "es", 0.6, r"tiendo a|suelo|cada vez que|siempre"),
    # -- French ---------------------------------------------------------------------------
    _p("goal", "fr", 0.8, r"mon (?:objectif|but) (?:principal )?est(?: de)?"),
    _p("goal", "fr", 0.65, r"je veux|j'essaie de|je compte|je pr[ée]vois de|j'aimerais"),
    _p("belief", "fr", 0.7, r"[àa] mon avis,?|je suis convaincue? que"),
    _p("belief", "fr", 0.6, r"je pense que|je crois que"),
    _p(
        "project",
        "fr",
        0.7,
        r"je (?:construis|d[ée]veloppe|cr[ée]e|[ée]cris|travaille sur)|mon"
        r" projet(?: est|,)?",
        strip=True,
    ),
    _p("event", "fr", 0.7, r"j'ai|nous avons", keep=r"d[ée]m[ée]nag[ée] "),
    _p("event", "fr", 0.65, r"(?:la semaine|le mois|l'ann[ée]e) derni[èe]re?,?|hier,?"),
    _p("tension", "fr", 0.7, r"(?:je suis )?tiraill[ée]e? entre|conflit entre"),
    _p("behavioral_pattern", "fr", 0.6, r"j'ai tendance [àa]|(?:[àa] )?chaque fois que"),
    # -- German ---------------------------------------------------------------------------
    _p("goal", "de", 0.8, r"mein Ziel ist(?: es)?"),
    _p("goal", "de", 0.65, r"ich m[öo]chte|ich will|ich versuche|ich plane"),
    _p("belief", "de", 0.7, r"meiner Meinung nach,?|ich bin [üu]berzeugt,? dass"),
    _p("belief", "de", 0.6, r"ich glaube,? dass|ich denke,? dass"),
    _p(
        "project",
        "de",
        0.7,
        r"ich arbeite (?:gerade )?an|ich (?:baue|entwickle|schreibe)|mein"
        r" Projekt(?: ist|,)?",
        strip=True,
    ),
    _p("event", "de", 0.65, r"ich bin|wir sind", keep=r"(?:nach|in) \w+ (?:gezogen|umgezogen)"),
    _p("event", "de", 0.6, r"letzte Woche|letzten Monat|letztes Jahr|gestern,?"),
    _p("tension", "de", 0.75, r"hin- und hergerissen zwischen|Konflikt zwischen"),
    _p(
        "behavioral_pattern",
        "de",
        0.6,
        r"ich neige dazu|jedes Mal,? wenn|ich habe die"
        r" Angewohnheit",
    ),
    # -- Portuguese -----------------------------------------------------------------------
    _p("goal", "pt", 0.8, r"meu (?:grande |principal )?objetivo [ée]"),
    _p("goal", "pt", 0.65, r"estou tentando|pretendo|planejo|(?:eu )?quero"),
    _p("belief", "pt", 0.7, r"na minha opini[ãa]o,?"),
    _p("belief", "pt", 0.6, r"(?:eu )?acho que|acredito que"),
    _p(
        "project",
        "pt",
        0.7,
        r"estou (?:construindo|desenvolvendo|criando|escrevendo|trabalhando"
        r" (?:em|no|na))|meu projeto(?: [ée]|,)?",
        strip=True,
    ),
    _p("event", "pt", 0.7, r"(?:eu )?me", keep=r"mudei (?:para|de) "),
    _p("event", "pt", 0.65, r"(?:semana|m[êe]s|ano) passad[oa],?|ontem,?"),
    _p("tension", "pt", 0.7, r"dividid[oa] entre|conflito entre"),
    _p("behavioral_pattern", "pt", 0.6, r"tenho tend[êe]ncia a|costumo|toda vez que|eu sempre"),
)


def patterns_for(lang: str) -> tuple[Pattern, ...]:
    """English patterns plus those of ``lang`` (in a fixed order)."""
    return tuple(p for p in PATTERNS if p.lang in ("en", lang))
