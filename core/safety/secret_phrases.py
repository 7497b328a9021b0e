"""Secrets said in words, in every language of core.safety.secret_lexicon at once: the rules built from its tables.

Three forms, each a rule per language and kind of secret:
- announced: a name, what it is for, a link, the value ("la clave del wifi es casa-azul-77", "PIN: 4471", "the gate
  code at my mum's place is 1987#", "das Kennwort vom Mailkonto auf Pfeffer#31 geändert");
- reversed: the value first ("tulip4ever is my Netflix password", "uso tortuga99 como contraseña", "my first car was
  a Fiat Panda — that's my security answer");
- in context: an opener (a card's name or number, "security question", "alarm", "online banking") makes weaker words
  announce a value in its sentence and up to CONTEXT_CHARS after it: "code 318" after a card number, "answer:
  Ravenna" and "..., Mieze." after a security question, "punch in 5520" after "alarm", "user 55120934" and
  "claire.m / Phare_1987" after a login.

What a value looks like is the kind's, in every language: one word for a password (with a digit or a symbol, or any
word that ends its clause after an explicit "is"), digits or digits said as words for a PIN, 3 or 4 digits for a
card's security code, a code with a digit for door, recovery and one-time codes, a few words to the end of the clause
for a passphrase or a security answer, a user id or "user / password" for a login. Words that say something about a
secret ("is too weak", "es muy débil", "est collé sous la box"), in any of the languages, are not values.

Each rule runs only on a text that holds one of the words it needs (core.safety.required_words), looked up by their
first letters in an index of every rule: ordinary text costs a word split and a few set lookups. In a long text a
rule reads only the windows around those words, each place once, every lookahead bounded by the longest value: the
cost grows with the text, not with its square (a 100,000-character message of secret words took minutes)."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from core.safety.required_words import STEM, RequiredWord, required_words
from core.safety.secret_lexicon import Language, Names, de, en, es, fr, it, pt

LANGUAGES: tuple[Language, ...] = (en.LANGUAGE, es.LANGUAGE, pt.LANGUAGE, fr.LANGUAGE, de.LANGUAGE, it.LANGUAGE)
CONTEXT_CHARS = 200
# A rule reads at most this many places in one text. Past them the rest is taken as a secret of its kind (so that
# redaction or withholding covers it): only a text made of hundreds of secret words gets there, and reading it
# whole would cost seconds.
MAX_READS = 250
# What replaces a redaction label while the rules run, so that no rule reads a label or takes it for a value.
MASK = "\ufffc"

# One word of a value: no space, quote, bracket, comma or semicolon; as short as its end allows.
_TOKEN_CHAR = r"[^\s\"'“”‘’«»,;()\[\]<>{}\ufffc]"
_TOKEN = rf"{_TOKEN_CHAR}{{1,128}}?"
# A character that makes a word a code rather than a word: a digit or a symbol.
_MARK = r"[\d_!@#$%^&*+=~|\\/<>-]"
# The end of a value: punctuation, then a space or the end of the text.
_END = r"(?=[.,;:!?)\]»\"'”’]*(?:\s|$))"
_DIGIT_CODE = r"\d(?:[ -]?\d){2,11}[#*]?"
_MIXED_CODE = r"(?=[A-Za-z0-9-]{0,60}\d)[A-Za-z0-9]{2,12}(?:-[A-Za-z0-9]{2,8}){0,5}[#*]?"
_CODE = rf"(?:{_DIGIT_CODE}|{_MIXED_CODE}){_END}"
# One word of a phrase (a passphrase, a security answer).
_PHRASE_WORD = r"[^\s.,;:!?()\"“”«»\ufffc]{1,128}"
_CAPITALISED = r"[A-ZÀ-ÖØ-Þ][\w'’-]*"
_OPEN_QUOTE = r"[\"'“‘«]?"
_HAS_MARK = re.compile(_MARK)
_HAS_DIGIT = re.compile(r"\d")
_HAS_LETTER = re.compile(r"[^\W\d_]")
_DOTTED = re.compile(r"\w\.\w")  # a user id like "marie.dupont"
_WORD = re.compile(r"[^\W\d_]+")
_KEYED_DIGITS = re.compile(r"(?<![\w.,/:-])(?P<value>\d(?: \d){3,7})(?![\w.,/:-]*\d)")
_LOGIN_PAIR = re.compile(rf"(?<![\w/])(?P<value>{_TOKEN}\s*/\s*{_TOKEN}){_END}")
# Letters and digits (and symbols, not an address's @), six or more: a password's shape.
_PASSWORD_SHAPED = re.compile(
    r"(?<![\w@./-])(?P<value>(?=[\w!#$%&*+=?~-]{0,63}[^\W\d_])(?=[\w!#$%&*+=?~-]{0,63}\d)[\w!#$%&*+=?~-]{6,64})(?![\w@/])"
)
_APPOSITIVE = re.compile(rf",\s*(?P<value>{_CAPITALISED}(?:\s+{_CAPITALISED}){{0,2}})(?=\s*(?:[.!;]|$|\n))")
# Kinds whose value is one word (for a PIN, unless said as words).
_WORD_KINDS = ("password", "login", "pin")


def _compact(pattern: str) -> str:
    """A table's expression without the whitespace it was laid out with (spaces in it are written \\s)."""
    return re.sub(r"\s+", "", pattern)


def _starts(alternation: str) -> re.Pattern[str]:
    """Every place one of the alternation's words starts, also inside another's match ("code pin" and "pin"): where a
    rule that begins with them can match."""
    return re.compile(rf"(?={_words(alternation)})", re.IGNORECASE)


def _words(alternation: str) -> str:
    """An alternation matched as whole words: no letter right before a word-initial letter, nor right after a
    word-final one (a link like ":" or "'s" may touch the word before it)."""
    return rf"(?:(?<!\w)|(?!\w))(?:{_compact(alternation)})(?:(?<!\w)|(?!\w))"


# Words that say something about a secret rather than give it, in any of the languages: a text may mix them, and
# "password" is a word of several ("I forgot my password again" is not an Italian password "again").
_NOT_VALUES = "|".join(_compact(language.grammar.not_values) for language in LANGUAGES)
_NOT_A_VALUE = re.compile(rf"(?:{_NOT_VALUES})", re.IGNORECASE)


def _tables(language: Language) -> list[tuple[str, Names]]:
    # Card codes before one-time codes: "security code" names both, and a finding keeps its first rule's kind.
    return [
        ("card_security_code", language.card_security_code),
        ("one_time_code", language.one_time_code),
        ("door_code", language.door_code),
        ("pin", language.pin),
        ("password", language.password),
        ("security_answer", language.security_answer),
        ("login", language.login),
    ]


@dataclass(frozen=True)
class PhraseFinding:
    """A value, and the table that announced it (password, pin, card_security_code, security_answer, one_time_code,
    door_code, login)."""

    kind: str
    start: int
    end: int


class _Grammar:
    """One language's grammar, compiled: the links, the ends of clauses, the shapes of values."""

    def __init__(self, language: Language) -> None:
        self.grammar = g = language.grammar
        credentials = "|".join(
            _compact(field) for field in (language.password.names, language.pin.names, language.login.markers) if field
        )
        # Another credential next: "username grossi and password ...", "usuario mgarcia y contraseña ...".
        self.credential_follows = re.compile(
            rf"\s*(?:,\s*|\s+{_words(g.and_)}\s+)(?:(?:{_compact(g.mine)}|{_compact(g.article)})\s+)?"
            rf"{_words(credentials)}",
            re.IGNORECASE,
        )
        self.clause_end_pattern = rf"[ \t]*(?:[.!?,;:)\]»\"'”’—–→]|\n|$)|\s+{_words(g.and_ + '|' + g.now)}|\s+-+\s"
        self.clause_end = re.compile(self.clause_end_pattern, re.IGNORECASE)
        self.leading_article = re.compile(rf"^{_words(g.article)}\s+", re.IGNORECASE)
        self.size_follows = re.compile(rf"\s*{_words(g.units)}", re.IGNORECASE)
        self.spelled = rf"(?:{_compact(g.digits)})(?:[\s,-]+(?:{_compact(g.digits)})){{2,11}}(?!\w)"

    def shape(self, kind: str, *, phrase: bool) -> str:
        """A value of this kind (group `value`)."""
        if phrase:
            words = 8 if kind == "password" else 4
            return rf"(?P<value>{_PHRASE_WORD}(?:\s+{_PHRASE_WORD}){{0,{words - 1}}})(?={self.clause_end_pattern})"
        if kind == "password":
            return rf"(?P<value>{_TOKEN}{_END})"
        if kind == "login":
            # The second of a pair is a code: "marie.k und Linde_77", not "grossi and password".
            joined = rf"(?:\s*[/+]\s*|\s+{_words(self.grammar.and_)}\s+)"
            pair = rf"{_TOKEN}{joined}(?={_TOKEN_CHAR}{{0,127}}?{_MARK}){_TOKEN}{_END}"
            return rf"(?P<value>{pair}|{_TOKEN}{_END})"
        if kind == "pin":
            return rf"(?P<value>{self.spelled}|{_DIGIT_CODE}{_END}|{_TOKEN}{_END})"
        if kind == "card_security_code":
            return rf"(?P<value>\d{{3,4}}){_END}"
        if kind == "one_time_code":
            joined = rf"\s*(?:,|{_words(self.grammar.and_)})\s*"
            return rf"(?P<value>{self.spelled}|{_CODE}(?:{joined}{_CODE}){{0,9}})"
        return rf"(?P<value>{self.spelled}|{_CODE})"  # door codes

    def announced(self, names: str, kind: str, *, phrase: bool, in_context: bool = False) -> re.Pattern[str]:
        """A name, then what it is for ("for the router", "del wifi", "vom Mailkonto"), an aside between commas, a
        link and the value. The link is group `strong` (is, :), `weak` (to), `colon` (a colon a few words on) or none
        (the value follows the name directly); each admits its own values, so that the expression backtracks to the
        reading that has one: after "is" any word that is not a word about a secret, after "to" or a late colon a
        word with a digit or a symbol, directly after the name a word with a digit (in a context, any word)."""
        g = self.grammar
        word = r"[\w'’-]+"
        qualifier = rf"(?P<qualifier>(?:\s+{_words(g.of)}(?:\s+|(?<=['’])){word}(?:\s+{word}){{0,4}}?){{0,2}})"
        aside = r"(?:\s*,[^,.;:!?\n]{1,40},)?"
        now = rf"(?:\s+{_words(g.now)})?"  # before or after what it is for: "a senha nova do wi-fi é ..."
        article = "" if phrase else rf"(?:{_words(g.article)}\s*)?"
        a_value = rf"(?!{_OPEN_QUOTE}(?:{_NOT_VALUES})(?![\w'’-]))"
        if phrase:  # a passphrase may be a sentence: "é o gato subiu no telhado"
            a_value = rf"(?:(?={_words(g.article)}\s)|{a_value})"
        marked = rf"(?={_OPEN_QUOTE}{_TOKEN_CHAR}{{0,127}}?(?:{_MARK}|\w\.\w))"
        digit = rf"(?={_OPEN_QUOTE}{_TOKEN_CHAR}{{0,127}}?\d)"
        never = "(?!)"
        if phrase:
            weak, bare = never, (a_value if in_context else never)
        elif kind in _WORD_KINDS:
            weak, bare = marked, (a_value if in_context else digit)
        else:
            weak = bare = ""  # the shape of a code holds a digit already
        link = (
            rf"(?:\s*,?\s*(?P<strong>{_words(g.is_)})\s*(?:{_words(g.now)}\s+)?{article}{a_value}"
            rf"|\s+(?P<weak>{_words(g.to)})\s+{article}{weak}"
            rf"|(?:\s+{word}){{1,5}}\s*(?P<colon>:)\s*{weak}"
            rf"|\s+{article}{bare})"
        )
        return re.compile(
            rf"{_words(names)}{now}{qualifier}{aside}{now}{link}{_OPEN_QUOTE}{self.shape(kind, phrase=phrase)}",
            re.IGNORECASE,
        )

    def accepts(self, text: str, match: re.Match[str], kind: str, *, phrase: bool, in_context: bool) -> bool:
        """Whether a matched value is one: not a word about a secret, not a size ("12 characters"), and for a word
        with neither digit nor symbol, only after an explicit link and at the end of its clause."""
        value = match.group("value")
        if phrase:
            first = self.leading_article.sub("", value, count=1).split()
            return bool(first) and not _NOT_A_VALUE.fullmatch(first[0].lower())
        if _NOT_A_VALUE.fullmatch(value.lower()) or self.size_follows.match(text, match.end("value")):
            return False
        if kind == "one_time_code" and in_context and match.group("qualifier"):
            return False  # "o código de rastreio BR123456789BR": a code, but of a parcel
        if kind not in _WORD_KINDS or (kind == "pin" and " " in value):
            return True  # a code's shape holds a digit; digits said as words
        if kind == "login" and re.search(r"[\s/+]", value):  # a user and a password: one of them a code
            return any(_HAS_MARK.search(part) or _DOTTED.search(part) for part in re.split(r"\s*[/+]\s*|\s+", value))
        if kind == "password" and in_context:
            # Announced only by what it opens ("the wifi in the studio is 'Pottery2Go'"): a password's shape, letters
            # with digits or symbols, not "is 5G" or "is slow".
            return len(value) >= 6 and _HAS_LETTER.search(value) is not None and _HAS_MARK.search(value) is not None
        if kind == "login" and not (_HAS_MARK.search(value) or _DOTTED.search(value)):
            # A user id that is a plain word is one only beside another credential ("the login was slow" is not).
            return len(value) >= 3 and self.credential_follows.match(text, match.end("value")) is not None
        # In a context a value may follow its marker directly ("username grossi and ..."), if nothing comes between.
        strong = match.group("strong") is not None or (
            in_context and not match.group("qualifier") and match.group("weak") is None and match.group("colon") is None
        )
        if strong:
            ends_clause = self.clause_end.match(text, match.end("value")) is not None
            return len(value) >= 3 and (_HAS_MARK.search(value) is not None or ends_clause)
        if match.group("weak") is not None or match.group("colon") is not None:
            return len(value) >= 4 and _HAS_MARK.search(value) is not None
        return len(value) >= 4 and _HAS_DIGIT.search(value) is not None

    def reversed_value(self) -> re.Pattern[str]:
        """The value before a password's or PIN's name: "tulip4ever is my Netflix password", "X como contraseña"."""
        g = self.grammar
        return re.compile(
            rf"(?P<value>{_TOKEN})[\"'”’»]?\s*(?:{_words(g.is_)}|\s{_words(g.as_)})\s+"
            rf"(?:(?:{_compact(g.mine)}|{_compact(g.article)})\s+)?(?:[\w'’-]+\s+){{0,2}}$",
            re.IGNORECASE,
        )

    def reversed_answer(self) -> re.Pattern[str]:
        """A security answer before its name: "my first car was a Fiat Panda — that's my security answer"."""
        g = self.grammar
        return re.compile(
            rf"{_words(g.is_)}\s+(?:{_words(g.article)}\s+)?(?P<value>{_PHRASE_WORD}(?:\s+{_PHRASE_WORD}){{0,3}})"
            rf"\s*[—–-]+\s*{_words(g.it_is)}\s+(?:{_compact(g.mine)}\s+)?$",
            re.IGNORECASE,
        )


Spans = list[tuple[int, int]]
# How a rule reads a text: the text, the windows around the words it needs (its names and openers can only start
# there), and the card numbers found by their shape (each opens a card context).
Reading = Callable[[str, Spans, Spans], Iterator[PhraseFinding]]


@dataclass(frozen=True)
class Rule:
    """One rule of one language: it runs on a text that holds one of its `words`."""

    language: str
    kind: str
    form: str  # announced, context or reversed
    read: Reading
    words: frozenset[RequiredWord] | None = field(default=None)  # None: read every text


def _announced_rule(grammar: _Grammar, kind: str, names: str, *, phrase: bool) -> Reading:
    names_pattern = _starts(names)
    pattern = grammar.announced(names, kind, phrase=phrase)

    def read(text: str, windows: Spans, card_numbers: Spans) -> Iterator[PhraseFinding]:
        for match in _matches_at_names(names_pattern, pattern, text, windows, kind, match_high=len(text)):
            if isinstance(match, PhraseFinding):
                yield match
            elif grammar.accepts(text, match, kind, phrase=phrase, in_context=False):
                yield PhraseFinding(kind=kind, start=match.start("value"), end=match.end("value"))

    return read


def _matches_at_names(
    names: re.Pattern[str],
    pattern: re.Pattern[str],
    text: str,
    windows: Spans,
    kind: str,
    *,
    match_high: int,
) -> Iterator[re.Match[str] | PhraseFinding]:
    """The rule's match at each place one of its names starts in the windows (a match refused later does not hide one
    that starts inside it: "login: customer" hides no "customer number 4410092231"), running on up to `match_high`;
    at most MAX_READS places, past them the rest up to `match_high` as one finding of the kind."""
    read = 0
    for low, high in windows:
        for name in names.finditer(text, low, high):
            if read == MAX_READS:
                yield PhraseFinding(kind=kind, start=name.start(), end=match_high)
                return
            read += 1
            match = pattern.match(text, name.start(), match_high)
            if match is not None:
                yield match


def _context(text: str, start: int, end: int, *, looks_back: bool) -> tuple[int, int]:
    """The context an opener at [start, end) gives: what follows it in its paragraph, up to CONTEXT_CHARS, and, where
    `looks_back`, its sentence before it too, up to CONTEXT_CHARS ("username grossi and password ...": the password
    opens it)."""
    low = start
    if looks_back:
        sentence_start = max(
            text.rfind(stop, max(0, start - CONTEXT_CHARS), start) for stop in (". ", "! ", "? ", "\n")
        )
        low = max(sentence_start + 1, start - CONTEXT_CHARS)
    paragraph_end = text.find("\n", end, end + CONTEXT_CHARS)
    return low, min(len(text), end + CONTEXT_CHARS) if paragraph_end < 0 else paragraph_end


def _merged(windows: Spans) -> Spans:
    """Windows that overlap, as one: each part of the text is read once, however many openers it follows."""
    merged: Spans = []
    for low, high in sorted(windows):
        if merged and low <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged


def _context_rule(grammar: _Grammar, kind: str, table: Names) -> Reading:
    opener = re.compile(_words(table.openers), re.IGNORECASE)
    # In a context a link alone may announce the value: a colon after a lock or a card ("para abrir el candado de la
    # taquilla: 24-11-08"), "it's" after a code's delivery ("un código de 6 cifras, es el 339201"), "is" after a wifi
    # (in a password's shape). Not "is" after a lock: "my locker number at the gym is 214" is memory.
    g = grammar.grammar
    links = {
        "door_code": [":"],
        "card_security_code": [":"],
        "one_time_code": [g.it_is, ":"],
        "password": [g.is_],
        # "security question → 'best friend' → Dani"; "is" right after a question quoted by name ("the answer I set
        # for 'childhood best friend' was Danny Ruiz").
        "security_answer": ["→|->|:", rf"(?<=['\"’”»“]\s)(?:{g.is_})"],
    }
    markers = "|".join(part for part in (table.markers, *links.get(kind, [])) if part)
    phrase = kind == "security_answer"
    marker = grammar.announced(markers, kind, phrase=phrase, in_context=True)
    marker_names = _starts(markers)

    def read(text: str, windows: Spans, card_numbers: Spans) -> Iterator[PhraseFinding]:
        spans = [(match.start(), match.end()) for low, high in windows for match in opener.finditer(text, low, high)]
        if kind == "card_security_code":
            spans += card_numbers
        looks_back = kind in ("login", "one_time_code")  # "type 882 019 when the bank asks for the code they SMS you"
        for low, high in _merged([_context(text, start, end, looks_back=looks_back) for start, end in spans]):
            for match in _matches_at_names(marker_names, marker, text, [(low, high)], kind, match_high=high):
                if isinstance(match, PhraseFinding):
                    yield match
                elif grammar.accepts(text, match, kind, phrase=phrase, in_context=True):
                    yield PhraseFinding(kind=kind, start=match.start("value"), end=match.end("value"))
            if kind == "login":
                for match in _LOGIN_PAIR.finditer(text, low, high):
                    left, _, right = (part.strip() for part in match.group("value").partition("/"))
                    if min(len(left), len(right)) >= 2 and _HAS_MARK.search(left + right):
                        yield PhraseFinding(kind=kind, start=match.start("value"), end=match.end("value"))
                # A token in a password's shape, letters with digits ("... con mi email y Nube_Rosa9").
                for match in _PASSWORD_SHAPED.finditer(text, low, high):
                    yield PhraseFinding(kind=kind, start=match.start("value"), end=match.end("value"))
            if kind == "door_code":  # "the lockbox is on the porch, 4 9 1 7": keyed digit by digit
                for match in _KEYED_DIGITS.finditer(text, low, high):
                    yield PhraseFinding(kind=kind, start=match.start("value"), end=match.end("value"))
            if kind == "security_answer":
                for match in _APPOSITIVE.finditer(text, low, high):
                    yield PhraseFinding(kind=kind, start=match.start("value"), end=match.end("value"))

    return read


def _reversed_rule(grammar: _Grammar, names: str, kind: str, value: re.Pattern[str]) -> Reading:
    name_pattern = re.compile(_words(names), re.IGNORECASE)

    def read(text: str, windows: Spans, card_numbers: Spans) -> Iterator[PhraseFinding]:
        names = (name for low, high in windows for name in name_pattern.finditer(text, low, high))
        for number, name in enumerate(names):
            if number == MAX_READS:  # the rest, and what may come before its first name
                yield PhraseFinding(kind=kind, start=max(0, name.start() - 80), end=len(text))
                return
            match = _ending_at(value, text, name.start())
            if match is None:
                continue
            found = match.group("value")
            if kind == "password" and (len(found) < 4 or not _HAS_MARK.search(found)):
                continue
            yield PhraseFinding(kind=kind, start=match.start("value"), end=match.end("value"))

    return read


_TOKEN_START = re.compile(rf"(?<!{_TOKEN_CHAR}){_TOKEN_CHAR}")


def _ending_at(pattern: re.Pattern[str], text: str, end: int) -> re.Match[str] | None:
    """The leftmost match of the pattern in the 80 characters before a name (it ends where the name starts), tried
    anchored where a value can start (where a word starts after a space or a quote, or where the 80 characters do):
    the same match as a search, at a cost a long run of names does not multiply."""
    window = max(0, end - 80)
    starts = [window, *(match.start() for match in _TOKEN_START.finditer(text, window + 1, end))]
    for start in starts:
        match = pattern.match(text, start, end)
        if match is not None:
            return match
    return None


def _words_of(*patterns: str) -> frozenset[RequiredWord] | None:
    words: set[RequiredWord] = set()
    for pattern in patterns:
        required = required_words(_compact(pattern))
        if required is None:
            return None
        words |= required
    return frozenset(words)


def _language_rules(language: Language) -> list[Rule]:
    grammar = _Grammar(language)
    rules = []
    for kind, table in _tables(language):
        if table.names:
            read = _announced_rule(grammar, kind, table.names, phrase=False)
            rules.append(Rule(language.code, kind, "announced", read, _words_of(table.names)))
        if table.phrases:
            read = _announced_rule(grammar, kind, table.phrases, phrase=True)
            rules.append(Rule(language.code, kind, "announced", read, _words_of(table.phrases)))
            if kind == "password":  # a passphrase may be one word too: "changed my passphrase to blue-otter-lamp"
                read = _announced_rule(grammar, kind, table.phrases, phrase=False)
                rules.append(Rule(language.code, kind, "announced", read, _words_of(table.phrases)))
        if table.openers:
            read = _context_rule(grammar, kind, table)
            rules.append(Rule(language.code, kind, "context", read, _words_of(table.openers)))
    passwords = "|".join(_compact(table.names) for table in (language.password, language.pin) if table.names)
    read = _reversed_rule(grammar, passwords, "password", grammar.reversed_value())
    rules.append(Rule(language.code, "password", "reversed", read, _words_of(passwords)))
    answers = language.security_answer.phrases
    read = _reversed_rule(grammar, answers, "security_answer", grammar.reversed_answer())
    rules.append(Rule(language.code, "security_answer", "reversed", read, _words_of(answers)))
    return rules


# Announced values first: of two findings of one span, the first keeps its kind ("le code de ma carte, c'est 4827"
# is a PIN, though "code" after "carte" would read as a card's security code).
_FORMS = ("announced", "reversed", "context")


@dataclass(frozen=True)
class _Index:
    """Every rule, by the first two letters of the words it needs (then the stem, checked on the word)."""

    rules: tuple[Rule, ...]
    by_initials: dict[str, tuple[tuple[str, tuple[int, ...]], ...]]
    tails: tuple[tuple[str, int], ...]  # pieces that may sit inside a word, and their rule
    always: tuple[int, ...]
    card_contexts: tuple[Rule, ...]


_index_lock = threading.Lock()
_built: list[_Index] = []


def _index() -> _Index:
    """Built once per process (~1.4 s of CPU, hundreds of patterns compiled), under a lock: the hundred threads of a
    formation worker that start together wait for the one build instead of each compiling it."""
    if not _built:
        with _index_lock:
            if not _built:
                _built.append(_index_build())
    return _built[0]


def _index_build() -> _Index:
    rules = tuple(
        sorted(
            (rule for language in LANGUAGES for rule in _language_rules(language)),
            key=lambda rule: _FORMS.index(rule.form),
        )
    )
    by_stem: dict[str, set[int]] = {}
    tails: list[tuple[str, int]] = []
    always = []
    for number, rule in enumerate(rules):
        if rule.words is None:
            always.append(number)
            continue
        for word, at_start in rule.words:
            if at_start:
                by_stem.setdefault(word[:STEM], set()).add(number)
            else:
                tails.append((word, number))
    by_initials: dict[str, list[tuple[str, tuple[int, ...]]]] = {}
    for stem, numbers in by_stem.items():
        by_initials.setdefault(stem[:2], []).append((stem, tuple(sorted(numbers))))
    return _Index(
        rules=rules,
        by_initials={initials: tuple(stems) for initials, stems in by_initials.items()},
        tails=tuple(tails),
        always=tuple(always),
        card_contexts=tuple(rule for rule in rules if rule.kind == "card_security_code" and rule.form == "context"),
    )


# How far from the word a rule needs its name or opener may start or end ("código de la puerta" needs "puerta").
NAME_REACH = 120
# A text shorter than this is read whole by each rule it wakes: finding the windows would cost more than it saves.
WINDOWS_FROM = 4 * NAME_REACH


def _rules_for(text: str) -> list[tuple[Rule, Spans]]:
    """The rules whose words the text holds, with where each reads it (for a long text, the windows around those
    words, where its names can be), announced values first, then in the order of the tables."""
    index = _index()
    lowered = text.lower()
    whole = [(0, len(text))]
    # Lowering may change a text's length (a rare letter): such a text is read whole too.
    if len(text) < WINDOWS_FROM or len(lowered) != len(text):
        selected = set(index.always)
        for word in set(_WORD.findall(lowered)):
            for stem, numbers in index.by_initials.get(word[:2], ()):
                if word.startswith(stem):
                    selected.update(numbers)
        selected.update(number for tail, number in index.tails if tail in lowered)
        return [(index.rules[number], whole) for number in sorted(selected)]
    places: dict[int, list[int]] = {number: [] for number in index.always}
    for word in _WORD.finditer(lowered):
        for stem, numbers in index.by_initials.get(word.group()[:2], ()):
            if word.group().startswith(stem):
                for number in numbers:
                    places.setdefault(number, []).append(word.start())
    for tail, number in index.tails:
        position = lowered.find(tail)
        while position >= 0:
            places.setdefault(number, []).append(position)
            position = lowered.find(tail, position + 1)
    return [
        (
            index.rules[number],
            _merged([(max(0, p - NAME_REACH), min(len(text), p + NAME_REACH)) for p in at]) if at else whole,
        )
        for number, at in sorted(places.items())
    ]


def phrase_findings(text: str, *, card_numbers: Spans | None = None) -> list[PhraseFinding]:
    """The secrets said in words in text (its redaction labels masked with MASK), in any order, possibly
    overlapping. `card_numbers`, the spans of card numbers found by their shape, each open a card context."""
    rules = _rules_for(text)
    if card_numbers:  # a card number opens a card context in every language
        woken = {id(rule) for rule, _ in rules}
        rules += [(rule, []) for rule in _index().card_contexts if id(rule) not in woken]
    cards = card_numbers or []
    return [finding for rule, windows in rules for finding in rule.read(text, windows, cards)]
