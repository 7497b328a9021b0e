"""Which category a statement is filed under, and the value it gives there, by lexicons of verbs and nouns
(docs/decisions/0053-category-lexicons-and-canonical-values.md): the offline extractor files what it forms with them,
formation falls back to them when the LLM names no category it knows, the filing command files older facts, and fact
search can read the same lexicons to recognise a question's topic.

A statement is read in three steps, the first that decides wins:
1. its subject: "The user's sister ..." is about a person in the user's life, "Tom's physiotherapist ..." about
   health, "The user's dog ..." about a possession;
2. the categories' lexicons in a fixed order, most specific first (health before activities: "injured his knee
   running" is health; plans before what is planned: "wants to visit Kyoto" is a plan);
3. past tense with a time said ("last week") is an event; anything else is `other`.

The value is the lexicon entry's canonical form ("pottery" for "a pottery class" and "making pots"), else the words
the statement gives after its verb, shortened. An agent's own categories extend the lexicons with the content words
of their examples (custom_lexicon), and are read before the defaults."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from agents.categories import OTHER

MAX_VALUE_WORDS = 4
MAX_VALUE_LENGTH = 200


@dataclass(frozen=True)
class Filing:
    category: str
    value: str


@dataclass(frozen=True)
class CustomCategory:
    """An agent's own category as the classifier reads it: its slug and the words its examples and name give."""

    slug: str
    words: frozenset[str]


def _words(text: str) -> list[str]:
    return text.split()


def _terms(*entries: tuple[str, str]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """(canonical value, pattern) pairs: the pattern is a regex fragment matched on word boundaries, lowercase."""
    return tuple((value, re.compile(rf"\b(?:{pattern})\b")) for value, pattern in entries)


# Activities and hobbies: what a person does for its own sake. The canonical value names the activity, whatever
# form it was mentioned in ("ran a half marathon", "runs", "jogging": running).
ACTIVITY_TERMS = _terms(
    ("pottery", r"pottery|ceramics?|clay|pots|mugs?|bowls?|throwing on the wheel|potter's wheel"),
    ("woodcarving", r"carv(?:e|es|ed|ing)|whittl\w+|woodwork\w*|wood ?carving"),
    ("painting", r"paint(?:s|ed|ing|ings)?|watercolou?rs?|acrylics|oil paint\w*|murals?"),
    ("drawing", r"draw(?:s|ing|ings)?|drew|sketch(?:es|ed|ing)?|illustrat\w+|comics"),
    ("photography", r"photograph(?:y|s|ing)|photos|camera"),
    ("running", r"run|runs|running|ran|jog\w*|marathons?|half marathon|5k|10k|races?|track meet"),
    ("cycling", r"cycl(?:e|es|ed|ing)|bik(?:es|ed|ing)|rode|rides|riding|\d+ ?km"),
    ("swimming", r"swim\w*|swam"),
    ("hiking", r"hik(?:e|es|ed|ing)|trek\w*|trails?"),
    ("climbing", r"climb\w*|boulder\w*"),
    ("camping", r"camp(?:s|ed|ing)?"),
    ("fitness", r"gym|work(?:s|ed)? out|workouts?|train(?:s|ed|ing)|exercis\w+|lift(?:s|ed|ing)? weights|pilates"),
    ("yoga", r"yoga"),
    ("meditation", r"meditat\w+|mindfulness"),
    ("dancing", r"danc\w+|ballet|salsa|tango"),
    ("guitar", r"guitars?"),
    ("bass", r"bass(?: guitar)?"),
    ("piano", r"pianos?|keyboard"),
    ("violin", r"violins?|fiddle"),
    ("cello", r"cellos?"),
    ("saxophone", r"saxophones?|sax"),
    ("drums", r"drums?|drumming"),
    ("singing", r"sing(?:s|ing)?|sang|choir|karaoke"),
    ("music", r"band|music lessons|compos\w+|songs?|instruments?"),
    ("reading", r"read(?:s|ing)?|books?|novels?|book club|sequel"),
    ("writing", r"writ(?:e|es|ing)|wrote|poems?|poetry|short stor(?:y|ies)|journal\w*|blog\w*"),
    ("baking", r"bak(?:e|es|ed|ing)|bread|sourdough|loa(?:f|ves)|cakes?|pastr(?:y|ies)|cookies"),
    ("cooking", r"cook(?:s|ed|ing)?|recipes?|from scratch|ferment\w*|kimchi|meal prep\w*"),
    ("gardening", r"garden\w*|plant(?:s|ed|ing)|vegetable patch|allotment"),
    ("knitting", r"knit\w*|crochet\w*|sew(?:s|ed|ing)?|quilt\w*|embroider\w*"),
    ("chess", r"chess"),
    ("puzzles", r"crosswords?|sudoku|jigsaws?"),
    ("card games", r"bridge|poker|card games|cards"),
    ("ball games", r"pickleball|badminton|volleyball|rugby|cricket|hockey|baseball|softball|squash|table tennis"),
    ("games", r"video games?|gaming|board games?|games?|puzzles?"),
    ("volunteering", r"volunteer\w*|charity work"),
    ("coaching", r"coach(?:es|ed|ing)?"),
    ("football", r"soccer|football"),
    ("basketball", r"basketball"),
    ("tennis", r"tennis"),
    ("golf", r"golf\w*"),
    ("skiing", r"ski(?:s|ed|ing)?|snowboard\w*"),
    ("surfing", r"surf\w*"),
    ("skateboarding", r"skateboard\w*|skat(?:e|es|ed|ing)"),
    ("fishing", r"fish(?:es|ed|ing)"),
    ("birdwatching", r"bird ?watch\w*|birds|herons?"),
    ("crafts", r"restor(?:e|es|ed|ing)|tinker\w*|model trains?|crafts?|scrapbook\w*|jewell?ery making"),
    ("theatre", r"theatre|theater|acting|improv"),
    ("sailing", r"paddleboard\w*|sail(?:s|ed|ing)|kayak\w*|canoe\w*|rowing"),
    ("horse riding", r"horse ?riding|equestrian"),
    ("martial arts", r"karate|judo|taekwondo|martial arts|boxing"),
    (
        "languages",
        r"duolingo|(?:learn|stud(?:y|ies|ied|ying)|practis|practic)\w* (?:english|german|french|spanish|italian|"
        r"portuguese|japanese|chinese|mandarin|korean|arabic|russian|dutch|swedish|norwegian|polish|hindi|a language)",
    ),
)
HEALTH_TERMS = _terms(
    ("allergy", r"allerg\w+"),
    ("asthma", r"asthma"),
    ("diabetes", r"diabet\w+"),
    (
        "injury",
        r"injur\w+|broken (?:\w+ )?(?:ankle|arm|leg|wrist|foot)|broke (?:\w+ )?(?:ankle|arm|leg|wrist)|sprain\w*|"
        r"bad (?:back|knee|hip)|rash|dermatolog\w+|exhausted|fatigue|smok(?:e|es|ed|ing)|sober|fractur\w+|torn|"
        r"tore (?:a|her|his|their)|ligament|fell off|thyroid|condition|replacement",
    ),
    ("therapy", r"therap\w+|counsell?ing sessions|counsell?or|physio\w*"),
    ("medication", r"medication|meds|pills?|prescri\w+|antibiotics|insulin"),
    ("mental health", r"anxiety|anxious|depress\w+|panic attacks?|burn(?:ed|t)? ?out|mental health|ptsd|adhd"),
    (
        "illness",
        r"sick|ill|illness|flu|cold|covid|cancer|migraines?|headaches?|diagnos\w+|disease|chronic|surgery|"
        r"hospital\w*|symptoms?|recover\w*|pain|blood pressure|cholesterol|pregnan\w+",
    ),
    ("sleep", r"insomnia|sleep\w*"),
    ("diet", r"lactose|gluten|intoleran\w+|on a diet|lose weight|lost (?:\d+ )?(?:pounds|kilos|kg)"),
    ("doctor", r"doctor's appointment|check-?up|dentist|doctor appointment"),
)
DISLIKE_TERMS = _terms(
    ("", r"hat(?:e|es|ed)|dislik(?:e|es|ed)|can't stand|cannot stand|avoid(?:s|ed)?|detest\w*|loath\w*"),
    ("", r"not (?:a )?fan of|does(?:n't| not) (?:like|eat|drink|enjoy)|never (?:eats|drinks)|won't eat"),
    ("vegetarian", r"vegetarian"),
    ("vegan", r"vegan"),
    (
        "",
        r"afraid of|scared of|terrified of|fear(?:s|ful)? of|phobia|nervous about|annoy(?:s|ed|ing)|"
        r"not happy about|bothers?|gets on \w+ nerves|is sick of|tired of",
    ),
)
IDENTITY_TERMS = _terms(
    ("name", r"name is|is called|goes by|nickname"),
    ("age", r"^(?:is|turned) \d{1,3}$|years old|\d+ years of age|turned \d+|age is"),
    ("birthday", r"birthday|born"),
    (
        "origin",
        r"is (?:originally )?from|comes from|grew up|native of|raised in|hometown|heritage|immigra\w+|nationality|"
        r"citizen",
    ),
    (
        "gender",
        r"transgender|trans (?:woman|man)|non-binary|nonbinary|identif(?:y|ies) as|pronouns|gender|"
        r"came out|queer|gay|lesbian|bisexual",
    ),
    ("language", r"speaks|native language|mother tongue|bilingual|fluent in"),
    (
        "appearance",
        r"left-handed|right-handed|tall|short hair|long hair|tattoos?|wears glasses|eye colou?r|hair colou?r",
    ),
    ("introvert", r"introvert\w*|extrovert\w*|personality"),
)
PLAN_TERMS = _terms(
    (
        "",
        r"plans? to|planning(?: to| on)?|wants? to|hopes? to|hoping to|intends? to|aims? to|going to|gonna|"
        r"would like to|'d like to|wishes to|dreams? of|goals?|ambition|is saving (?:up )?for|saving up|"
        r"thinking (?:about|of)|considering|looking forward to|will|next (?:week|month|year|summer|spring|autumn|fall|"
        r"winter|weekend)|upcoming|is about to|bucket list|is trying to|tries to|is moving|is getting|are getting|"
        r"is organi[sz]ing|is preparing|is applying|on (?:her|his|their) list",
    ),
)
RELATIONSHIP_TERMS = _terms(
    (
        "partner",
        r"married|wife|husband|partner|boyfriend|girlfriend|fianc\w+|spouse|dating|divorc\w+|engaged|"
        r"wedding anniversary|broke up|relationship",
    ),
    ("children", r"kids?|children|child|sons?|daughters?|babies|baby|toddler|grandchild\w*|stepson|stepdaughter"),
    (
        "family",
        r"sisters?|brothers?|siblings?|mother|mom|mum|father|dad|parents?|famil(?:y|ies)|cousins?|aunts?|"
        r"uncles?|grand(?:ma|pa|mother|father|parents?)|nieces?|nephews?|in-laws?|twins?|stepmom|stepdad",
    ),
    ("friends", r"friends?|friendship|best friend|bff|roommates?|flatmates?|neighbou?rs?|mentor"),
    ("colleagues", r"colleagues?|co-?workers?"),
)
WORK_TERMS = _terms(
    (
        "",
        r"runs? (?:a|an|the|her|his|their) (?:small |family |local )?(?:\w+ )?(?:\w+ )?(?:shop|store|business|"
        r"company|restaurant|cafe|bakery|hotel|firm|clinic|salon)",
    ),
    (
        "",
        r"works?(?: as| at| for| in| on|ing)|worked|job|jobs|career|employ\w+|hired|promot\w+|fired|laid off|"
        r"(?<!before )(?<!after )(?<!to )(?<!from )work(?:s|ed|ing)?(?! out)|resign\w*|co-?founded|co-?runs|"
        r"quit (?:her|his|their) job|shifts?|salary|raise|office|boss|manager|"
        r"interns?|internship|"
        r"company|firm|startup|business|clients?|customers?|meetings?|deadlines?|projects?|freelanc\w+|"
        r"self-employed|retired|retirement|profession\w*|bank teller|teller|cafe|restaurant job",
    ),
    (
        "studies",
        r"school|university|college|campus|degree|master's|masters|phd|bachelor's|studies|studying|study|"
        r"student|bootcamp|web development|graduat\w+|class(?:es)?|course|courses|program(?:me)?|semester|exams?|"
        r"thesis|lectures?|"
        r"info session|scholarship|enrolled|accepted into|major(?:s|ing)? in|homework|tutor\w*",
    ),
    (
        "",
        r"nurse|nursing|teacher|engineer|developer|programmer|designer|architect\w*|lawyer|accountant|"
        r"librarian|pharmacist|chef|cashier|waiter|waitress|barista|mechanic|electrician|plumber|carpenter|"
        r"scientist|researcher|consultant|counsellor|counselor|social worker|paramedic|firefighter|police|"
        r"sells|insurance|teach(?:es|ing)?|journalist|writer by trade|physician|surgeon|dentist|vet|veterinarian|"
        r"pilot|driver|receptionist|postman|mailman|farmer|soldier|clerk|secretary|mba|captain|tech lead|team lead|"
        r"head of|head coach|analyst|postdoc|lecturer|professor|co-?founder|founder|ceo|cto|director|in-house|"
        r"legal team|(?:starts?|started|first day|last day) at|opened (?:a|an|her|his|their) (?:\w+ )?(?:shop|store|"
        r"business|restaurant|cafe|café|bakery|p[aâ]tisserie|bar|studio|practice|clinic|salon)",
    ),
)
POSSESSION_TERMS = _terms(
    ("dog", r"dogs?|pupp(?:y|ies)|golden retriever|labrador|poodle"),
    ("cat", r"cats?|kittens?"),
    (
        "pet",
        r"pets?|hamsters?|rabbits?|bunn(?:y|ies)|parrots?|birds? named|fish tank|guinea pigs?|turtles?|"
        r"snakes?|horses?|starter",
    ),
    ("car", r"cars?|truck|van|minivan|motorbike|motorcycle|honda|toyota|fiat|tesla|ford"),
    (
        "",
        r"owns|owned|own (?:a|an|two|three|\d+)|bought|buys|purchased|has a collection|collects|collection|got a new|"
        r"new (?:phone|laptop|computer)|shelf full",
    ),
)
HOME_TERMS = _terms(
    (
        "home",
        r"lives?|lived|living in|moved|moves|relocat\w+|apartment|flat|house|housing|neighbou?rhood|landlord|"
        r"rent(?:s|ed|ing)?|room in",
    ),
)
TRAVEL_TERMS = _terms(
    (
        "travel",
        r"visit(?:s|ed|ing)?|travel\w*|trips?|vacation\w*|holidays?|abroad|flew|flies to|"
        r"been to|road trip|tour(?:ed|ing)?|beach|backpack\w*|cruise|getaway|got back from|weekend away|"
        r"sightseeing|countries|seaside|countryside|explored|old town|went back to|"
        r"spent (?:the|a|two|three|\w+) (?:summer|winter|week|weeks|month|months|year|years|holidays?) (?:in|at)",
    ),
)
PLACE_TERMS = HOME_TERMS + TRAVEL_TERMS
LIKE_TERMS = _terms(
    (
        "",
        r"lik(?:e|es|ed)|lov(?:e|es|ed)|enjoy(?:s|ed)?|prefer(?:s|red)?|adores?|favou?rites?|fan of|is into|"
        r"obsessed with|passionate about|can't get enough|crav\w+|dreams about|big on|keen on|fond of|appreciat\w+",
    ),
    (
        "",
        r"jazz|rock music|pop music|hip-hop|classical music|podcasts?|movies?|films?|tv shows?|series|anime|"
        r"coffee|tea|chocolate|pizza|sushi|ramen|food|cuisine|restaurants?|snacks?|wine|beer",
    ),
)
BELIEF_TERMS = _terms(
    (
        "faith",
        r"believ\w+|faith|religio\w+|church|god|pray\w*|spiritual\w*|christian|muslim|buddhis\w+|"
        r"jewish|hindu|atheist|agnostic|mosque|temple|synagogue|catholic|protestant|sikh|devout|"
        r"ramadan|fasts|fasting|passover|diwali|eid|sabbath",
    ),
    (
        "causes",
        r"supports|supported|supporter of|rights|activis\w+|activist|advocat\w+|equality|justice|climate change|"
        r"environment\w*|"
        r"sustainab\w+|politic\w+|vot(?:e|es|ed|ing)|protest\w*|lgbtq\+?|feminis\w+|charity|cause",
    ),
    (
        "values",
        r"is against|opposes|is opposed to|values?|cares? (?:deeply |a lot )?about|important to|principles?|thinks|"
        r"believes that|"
        r"convinced|opinion|kindness|honesty|family comes first",
    ),
)
# Happenings that are nobody's hobby: read before the topics they touch ("was in a car accident" is an event, not a
# possession; "celebrated his 80th birthday" not an identity).
MILESTONE_TERMS = _terms(
    ("wedding", r"wedding|got married|maid of honou?r|best man|bachelorette|bachelor party|engagement party"),
    (
        "party",
        r"birthday party|party|parties|celebrat\w+|anniversary|housewarming|reunion|hosted|dinner party|"
        r"baby shower|bridal shower",
    ),
    ("graduation", r"graduation|ceremony|awards?|won|prize|raffle|book signing"),
    (
        "concert",
        r"gave a (?:talk|speech|presentation)|in the audience|ted talk|concerts?|festivals?|gigs?|exhibitions?|"
        r"parade|conference|retreat",
    ),
    (
        "incident",
        r"accident|broke down|stolen|lost (?:her|his|their) (?:keys|wallet|phone)|flooded|burglar\w*|"
        r"crash\w*|passed away|died|funeral|emergency|speeding ticket|fined|cancell?ed|missed (?:her|his|their) flight|"
        r"ran into|bumped into|fire|broken into|break-in|robbed|gave birth|had a baby",
    ),
)
EVENT_TERMS = MILESTONE_TERMS + _terms(
    (
        "concert",
        r"events?|shows?|museum|fair|market",
    ),
    (
        "",
        r"attended|took part in|participated in|went to (?:a|an|the)|had a \w+ (?:day|time|weekend|night)|"
        r"surprise|met (?:a|an|the|some)|ran into|for the first time|got (?:a|an) (?:tattoo|award|haircut)",
    ),
)
# The order the lexicons are read in, most specific first (module docstring).
LEXICON_ORDER: tuple[tuple[str, tuple[tuple[str, re.Pattern[str]], ...]], ...] = (
    ("health", HEALTH_TERMS),
    ("dislikes", DISLIKE_TERMS),
    ("plans", PLAN_TERMS),
    ("events", MILESTONE_TERMS),
    ("places", TRAVEL_TERMS),  # "took the kids to the seaside" is a trip, not the kids; "went back to her hometown"
    ("identity", IDENTITY_TERMS),
    ("beliefs", BELIEF_TERMS[-1:]),  # an opinion ("thinks kids should ...") is about what it holds, not the kids
    ("relationships", RELATIONSHIP_TERMS),
    ("places", HOME_TERMS),
    ("work", WORK_TERMS),
    ("possessions", POSSESSION_TERMS),
    ("activities", ACTIVITY_TERMS),
    ("beliefs", BELIEF_TERMS),
    ("likes", LIKE_TERMS),
    ("events", EVENT_TERMS),
)
LEXICONS: dict[str, tuple[tuple[str, re.Pattern[str]], ...]] = {
    "identity": IDENTITY_TERMS,
    "relationships": RELATIONSHIP_TERMS,
    "work": WORK_TERMS,
    "places": PLACE_TERMS,
    "activities": ACTIVITY_TERMS,
    "likes": LIKE_TERMS,
    "dislikes": DISLIKE_TERMS,
    "health": HEALTH_TERMS,
    "possessions": POSSESSION_TERMS,
    "plans": PLAN_TERMS,
    "events": EVENT_TERMS,
    "beliefs": BELIEF_TERMS,
}

# The subject a formed statement starts with: "The user", "The user's sister Ana", "Oskar's brother", "Talia".
_SUBJECT = re.compile(
    r"^(?:[Tt]he user|[Tt]he assistant|[A-Z][\w-]*(?:'[A-Z][\w-]+)?(?: [A-Z][\w-]*(?:'[A-Z][\w-]+)?)?)"
    r"(?P<owned>'s?(?: (?:best |younger |older |little |"
    r"big |new |old |late |ex-)?(?P<noun>[a-z][a-z-]*?)(?:-in-law)?)?(?: [A-Z][\w'-]+)?)?\s+",
)
_PEOPLE_NOUNS = frozenset(
    _words(
        """sister brother mother mom mum father dad parents parent wife husband partner boyfriend girlfriend
    son daughter kids kid children child friend friends boss colleague coworker neighbour neighbor
    cousin aunt uncle grandmother grandma grandfather grandpa grandparents roommate flatmate family
    sisters brothers sons daughters twin niece nephew fiance fiancee stepmom stepdad mentor baby
    landlady"""
    )
)
_POSSESSIVE_NOUNS = {
    **dict.fromkeys(_PEOPLE_NOUNS, "relationships"),
    **dict.fromkeys(_words("""name age birthday nickname nationality pronouns gender"""), "identity"),
    **dict.fromkeys(
        _words("""dog cat puppy kitten pet pets car bike house starter horse rabbit parrot"""), "possessions"
    ),
    **dict.fromkeys(_words("""favourite favorite"""), "likes"),
    **dict.fromkeys(_words("""goal goals dream plan plans ambition"""), "plans"),
    **dict.fromkeys(_words("""boss job employer company career office shift manager team degree"""), "work"),
    **dict.fromkeys(_words("""home apartment flat neighbourhood neighborhood hometown landlord city"""), "places"),
    **dict.fromkeys(_words("""physiotherapist therapist doctor physio health knee back allergy diagnosis"""), "health"),
    **dict.fromkeys(_words("""hobby hobbies"""), "activities"),
}
# A once-off in the past with its time said: what no lexicon claimed is an event.
_PAST_WITH_TIME = re.compile(
    r"\b(?:yesterday|last (?:week|month|year|weekend|night|summer|winter|spring|autumn|fall|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday)|on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"ago|in (?:19|20)\d\d|once|recently|for the first time)\b"
)
_DETERMINERS = re.compile(
    r"^(?:(?:a|an|the|their|her|his|its|my|our|your|some|of|to|in|at|for|with|on|about|new|first|own|"
    r"up|into|out|really|very|also|still|now|just)\s+)+"
)
_TRAILING_TIME = re.compile(
    r"\s+(?:yesterday|today|now|again|too|already|last \w+|this \w+|next \w+|on \w+day|in \w+ \d{4}|in (?:19|20)\d\d|"
    r"in (?:january|february|march|april|may|june|july|august|september|october|november|december)|"
    r"every \w+|\w+ (?:days|weeks|months|years) ago|once|for \w+ \w+)\b.*$"
)
# Who a statement is with or for is not what it is about: "went hiking with her kids" is an activity.
_COMPANY = re.compile(r"\b(?:with|for|to|from|and)\b.*$|\b\w+'(?:s\b)?")
# What a person believes or thinks is a belief, whatever it is about ("believes good flooring avoids injuries").
_OPINION = re.compile(r"^(?:strongly |firmly )?(?:believes|thinks|feels strongly|is convinced|is of the opinion)\b")
# Someone of the person's named as the object of another verb ("took her kids to ..."): company, read last.
_ACCOMPANIED = re.compile(r"^(?!(?:has|have|had|is|are|was|were|misses|loves|lost)\b)\w+(?: \w+)? (?:her|his|their) $")
# A named place after a preposition or a verb of going ("spent a summer in Dublin", "went to Halifax"): read on the
# statement as written, capitals kept.
_NAMED_PLACE = re.compile(
    r"\b(?:in|to|from|around|across|at) (?:the )?(?!(?:January|February|March|April|May|June|July|August|September"
    r"|October|November|December|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b)[A-Z][a-z]+"
)
# Something the person has, when nothing more specific claimed the statement ("has a Garmin watch").
_HAS = re.compile(r"^(?:has|have|had|got) (?:a|an|two|three|four|five|\d+|several|some|many) ")
# "plays the oud": an instrument the lexicon does not list is still an activity.
_PLAYS_THE = re.compile(r"\bplay(?:s|ed|ing)? the ([a-z]+)")
_FIRST_WORD = re.compile(r"^\S+\s+")
_VALUE_TRIM = re.compile(r"[^\w' -]+")
_STOP_WORDS = frozenset(
    _words(
        """a an the and or but of in on at to for with from by as is are was were be been being has have had do
    does did it its this that these those they them their he she his her him we our you your i me my
    user user's assistant not no also very about into over after before than then there here who what
    when where which likes like loves love enjoys enjoy wants want goes went gets got makes made really
    often always every some much many more most"""
    )
)


def _predicate(content: str) -> tuple[str, str]:
    """(the statement after its subject, lowercase; the owned noun of a possessive subject, or "")."""
    text = content.strip().rstrip(".!")
    match = _SUBJECT.match(text)
    if match is None:
        return text.lower(), ""
    return text[match.end() :].lower(), (match.group("noun") or "")


def _tail_value(predicate: str, *, after: int = 0) -> str:
    """What a statement gives after its verb, shortened: the value when no lexicon entry names one."""
    text = predicate[after:] if after else _FIRST_WORD.sub("", predicate, count=1)
    text = _TRAILING_TIME.sub("", text)
    text = _DETERMINERS.sub("", _VALUE_TRIM.sub(" ", text).strip())
    return " ".join(text.split()[:MAX_VALUE_WORDS])[:MAX_VALUE_LENGTH]


def _lexicon_match(predicate: str, terms: tuple[tuple[str, re.Pattern[str]], ...]) -> tuple[str, re.Match[str]] | None:
    for value, pattern in terms:
        found = pattern.search(predicate)
        if found is not None:
            return value, found
    return None


def _activity_value(predicate: str) -> str:
    found = _lexicon_match(predicate, ACTIVITY_TERMS)
    return found[0] if found else ""


def custom_lexicon(*, slug: str, name: str, description: str, examples: Iterable[str]) -> CustomCategory:
    """An agent's own category as the classifier reads it: the content words of its name and examples (the
    description is prose about the category, its words too general to file by)."""
    del description
    words: set[str] = set()
    for text in (name, *examples):
        predicate, _ = _predicate(text) if text[:1].isupper() and " " in text else (text.lower(), "")
        words |= {
            word
            for word in re.findall(r"[a-z][a-z'-]+", predicate)
            if len(word) > 2 and word not in _STOP_WORDS and word not in _PEOPLE_NOUNS
        }
    return CustomCategory(slug=slug, words=frozenset(words))


def _custom_filing(predicate: str, custom: Sequence[CustomCategory]) -> Filing | None:
    words = re.findall(r"[a-z][a-z'-]+", predicate)
    for category in custom:
        for position, word in enumerate(words):
            if word in category.words or (len(word) > 4 and word.rstrip("s") in category.words):
                return Filing(category.slug, _tail_value(" ".join(words[position:]), after=0) or word)
    return None


def statement_file(content: str, *, custom: Sequence[CustomCategory] = ()) -> Filing:
    """The category a statement is filed under and its value there (module docstring); custom categories first."""
    predicate, owned = _predicate(content)
    if custom:
        filed = _custom_filing(predicate, custom)
        if filed is not None:
            return filed
    if owned:
        filed = _owned_filing(predicate, owned)
        if filed is not None:
            return filed
    if _OPINION.match(predicate):
        return Filing("beliefs", _tail_value(predicate))
    company: Filing | None = None
    for category, terms in LEXICON_ORDER:
        found = _lexicon_match(_COMPANY.sub("", predicate) if category == "relationships" else predicate, terms)
        if found is None:
            continue
        value, match = found
        if category == "relationships" and _ACCOMPANIED.search(predicate[: match.start()]):
            # "took her kids to a pottery workshop": the kids are company, not the topic, unless nothing else is.
            company = company or Filing(category, value)
            continue
        # Liking a hobby, or a class in one, is the hobby: "loves hiking", "a pottery course".
        if (category == "likes" or value == "studies") and (activity := _activity_value(predicate)):
            return Filing("activities", activity)
        if category == "plans" or (category in ("likes", "dislikes", "places") and not value) or value == "home":
            return Filing(category, _tail_value(predicate, after=match.end()) or value or match.group(0))
        return Filing(category, value or _tail_value(predicate, after=match.end()) or match.group(0))
    if company is not None:
        return company
    instrument = _PLAYS_THE.search(predicate)
    if instrument is not None:
        return Filing("activities", instrument.group(1))
    place = _NAMED_PLACE.search(content)
    if place is not None:
        return Filing("places", _tail_value(content[place.start() :].lower()))
    if _HAS.match(predicate):
        return Filing("possessions", _tail_value(predicate))
    if _PAST_WITH_TIME.search(predicate):
        return Filing("events", _tail_value(predicate))
    return Filing(OTHER, "")


def _owned_filing(predicate: str, owned: str) -> Filing | None:
    """A statement whose subject is something of someone's ("The user's sister ...", "Tom's physiotherapist ..."):
    filed by what is owned, but for an incident that befell it ("Sofia's car was stolen": an event)."""
    category = _POSSESSIVE_NOUNS.get(owned)
    if category == "relationships":
        # A person's health is health whoever's it is: "The user's daughter has a peanut allergy."
        health = _lexicon_match(predicate, HEALTH_TERMS)
        return Filing("health", health[0]) if health is not None else Filing(category, owned)
    if category is None:
        return None
    milestone = _lexicon_match(predicate, MILESTONE_TERMS)
    if milestone is not None:
        return Filing("events", milestone[0])
    if category == "likes":
        return Filing(category, _tail_value(predicate, after=0).removeprefix("is ").strip() or owned)
    found = _lexicon_match(predicate, LEXICONS[category])
    return Filing(category, (found[0] if found and found[0] else "") or owned)


def value_normalize(value: str) -> str:
    """A value as the LLM or an operator wrote it, in the form values are compared in: lowercase, no determiners or
    punctuation, at most a few words."""
    text = _DETERMINERS.sub("", _VALUE_TRIM.sub(" ", value.lower()).strip())
    return " ".join(text.split()[: MAX_VALUE_WORDS * 2])[:MAX_VALUE_LENGTH]


@lru_cache(maxsize=4096)
def _stems(value: str) -> frozenset[str]:
    return frozenset(word[:5] for word in value.split() if word not in _STOP_WORDS)


def value_canonical(*, category: str, value: str, known: Iterable[str] = ()) -> str:
    """The canonical form of a value within its category and its person: the lexicon's form when one of its entries
    names it ("making pots" -> "pottery"), else a value the person already has in that category that names the same
    thing (same words up to their endings, or one's words within the other's: "pottery class" -> "pottery"), else
    the value normalised."""
    normal = value_normalize(value)
    if not normal:
        return ""
    terms = LEXICONS.get(category, ())
    found = _lexicon_match(normal, terms)
    if found is not None and found[0] and category in ("activities", "health", "possessions", "events"):
        return found[0]
    stems = _stems(normal)
    if stems:
        for existing in known:
            other = _stems(existing)
            if other and (other <= stems or stems <= other):
                return existing
    return normal


def reply_facts_file(facts: list[dict], *, categories: Sequence[dict] = ()) -> None:
    """Files each fact of an extractor's reply in place ("category", "category_value"), as the offline extractor
    answers; `categories` are the agent's own (slug, name, description, examples), read before the defaults."""
    custom = [
        custom_lexicon(
            slug=item["slug"],
            name=item.get("name", ""),
            description=item.get("description", ""),
            examples=item.get("examples", ()),
        )
        for item in categories
    ]
    for fact in facts:
        filing = statement_file(fact["content"], custom=custom)
        fact["category"], fact["category_value"] = filing.category, filing.value
