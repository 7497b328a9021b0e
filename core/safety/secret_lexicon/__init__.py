"""How people say a secret, one module per language: what announces each kind of secret value (a password, a PIN, a
card's security code, the answer to a security question, a recovery or one-time code, a door or alarm code, a bank
or account login) and the grammar around the value ("is", "es", "c'est", "lautet"; "for the router", "del wifi").

The tables are data: every field is a regular expression (an alternation of words and phrases, matched
case-insensitively on word boundaries), read by core.safety.secret_phrases, which builds the rules from them. What a
value looks like (one word, digits, a phrase, a pair of user and password) depends on the kind, not on the language,
and is the engine's. docs/security.md says where the line between a secret and a benign look-alike runs."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Grammar:
    """The words of one language around a secret's value."""

    # Between a name and its value: "is", "was", ":" ("my PIN is 4471", "la clave es ...").
    is_: str
    # A weaker link ("changed the password to ..."): only a value with a digit or a symbol may follow it.
    to: str
    # A value given in a clause of its own ("..., c'est 339201", "der ist 339201", "it's 339201").
    it_is: str
    # An article before a value ("es el 0412", "è il 214").
    article: str
    # What a secret is for: "the password for the router", "la clave del wifi", "das Passwort fürs WLAN".
    of: str
    # Adverbs beside "is": "my pin is now 8812", "ahora es", "ist jetzt".
    now: str
    # "I use X as my password", "uso X como contraseña".
    as_: str
    # Possessives in "X is my password".
    mine: str
    # Words that end a clause after a value ("... is sunflower and ...").
    and_: str
    # Words after "is" that say something about a secret rather than give it ("is too weak", "es muy débil").
    not_values: str
    # "is 12 characters long": a size, not a value.
    units: str
    # The digits as words, for a code said in words ("seven two five nine").
    digits: str


@dataclass(frozen=True)
class Names:
    """What announces a value of one kind.

    `names`: a value follows the name, after the grammar's "is" or directly ("PIN: 4471", "la clave del wifi es X").
    `phrases`: the same, for a value that runs to the end of its clause (a passphrase, a security answer).
    `openers`: open a context for the rest of the message ("security question", "online banking", a card's name),
    in which `markers` announce a value ("answer", "I put", "user", "punch in")."""

    names: str = ""
    phrases: str = ""
    openers: str = ""
    markers: str = ""


@dataclass(frozen=True)
class Language:
    """One language's tables: its grammar, and one table per kind of secret."""

    code: str
    grammar: Grammar
    password: Names  # passwords and passphrases
    pin: Names
    card_security_code: Names
    security_answer: Names
    one_time_code: Names  # recovery and one-time codes
    door_code: Names  # door, gate, alarm and lock codes
    login: Names  # bank and account logins: user ids, and a user and password together
